"""The partial derivatives of ``r = x^y``, shared by both modes' rules, for
floats (``math.powf``) and complex numbers (``complex.pow``).

The textbook partials ``y·x^(y−1)`` and ``r·log x`` are ``0·∞`` at ``x = 0``
for some ``y``, and that ``NaN`` reached every derivative through the power,
even one whose direction does not move the exponent.  The rules follow
JAX's conventions instead (docs/design.md, decision 147): ``∂r/∂x = 0``
where ``y = 0`` (``x^0`` is 1 everywhere) and ``∂r/∂y = 0`` where ``x = 0``;
the rules multiply them with ``revmlir.ad.singular.times``, so that a zero
tangent or gradient contributes exactly 0 (the partial may be infinite, or
``NaN`` as ``log x`` of a negative ``x``)."""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import ComplexType
from xdsl.ir import SSAValue

from revmlir.ad.singular import is_zero, zero_where
from revmlir.interfaces import DerivativeBuilder


def by_base(b: DerivativeBuilder, x: SSAValue, y: SSAValue) -> SSAValue:
    """``∂r/∂x = y·x^(y−1)``, 0 where ``y = 0`` and ``x = 0`` (no division
    by ``x``).  Only there: elsewhere at ``y = 0`` the product is 0 itself,
    and its own derivative (``x^(−1)`` along ``y``) is what a Hessian needs,
    where a constant 0 chosen by a select would have none."""
    lowered = b.sub(y, b.const(1.0, y.type))
    power = complexd.PowOp(x, lowered) if isinstance(x.type, ComplexType) else math.PowFOp(x, lowered)
    both = b.emit(arith.AndIOp(is_zero(b, y), is_zero(b, x)))
    return zero_where(b, both, b.mul(y, b.emit(power)))


def by_exponent(b: DerivativeBuilder, x: SSAValue, r: SSAValue) -> SSAValue:
    """``∂r/∂y = r·log x``, 0 where ``x = 0``."""
    log = complexd.LogOp(x) if isinstance(x.type, ComplexType) else math.LogOp(x)
    return zero_where(b, is_zero(b, x), b.mul(r, b.emit(log)))
