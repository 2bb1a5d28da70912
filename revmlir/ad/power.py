"""The partial derivatives of ``r = x^y``, shared by both modes' rules, for
floats (``math.powf``) and complex numbers (``complex.pow``).

The textbook partials ``y·x^(y−1)`` and ``r·log x`` are ``0·∞`` at ``x = 0``
for some ``y``, and that ``NaN`` reached every derivative through the power,
even one whose direction does not move the exponent.  The rules follow
JAX's conventions instead (docs/design.md, decision 147): ``∂r/∂x = 0``
where ``y = 0`` (``x^0`` is 1 everywhere), ``∂r/∂y = 0`` where ``x = 0``, and
a zero tangent or gradient times a partial is exactly 0 (the partial may be
infinite, or ``NaN`` as ``log x`` of a negative ``x``)."""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import ComplexType
from xdsl.ir import SSAValue

from revmlir.interfaces import DerivativeBuilder


def _zero_where_zero(b: DerivativeBuilder, test: SSAValue, value: SSAValue) -> SSAValue:
    """``value``, or exactly 0 where ``test`` is 0."""
    zero = b.const(0.0, test.type)
    if isinstance(test.type, ComplexType):
        is_zero = b.emit(complexd.EqualOp(test, zero))
    else:
        is_zero = b.emit(arith.CmpfOp(test, zero, "oeq"))
    return b.emit(arith.SelectOp(is_zero, b.const(0.0, value.type), value))


def by_base(b: DerivativeBuilder, x: SSAValue, y: SSAValue) -> SSAValue:
    """``∂r/∂x = y·x^(y−1)``, 0 where ``y = 0`` (no division by ``x``, so
    ``x = 0`` works)."""
    lowered = b.sub(y, b.const(1.0, y.type))
    power = complexd.PowOp(x, lowered) if isinstance(x.type, ComplexType) else math.PowFOp(x, lowered)
    return _zero_where_zero(b, y, b.mul(y, b.emit(power)))


def by_exponent(b: DerivativeBuilder, x: SSAValue, r: SSAValue) -> SSAValue:
    """``∂r/∂y = r·log x``, 0 where ``x = 0``."""
    log = complexd.LogOp(x) if isinstance(x.type, ComplexType) else math.LogOp(x)
    return _zero_where_zero(b, x, b.mul(r, b.emit(log)))


def times(b: DerivativeBuilder, factor: SSAValue, partial: SSAValue) -> SSAValue:
    """``factor · partial``, exactly 0 where the tangent or gradient
    ``factor`` is 0."""
    return _zero_where_zero(b, factor, b.mul(factor, partial))
