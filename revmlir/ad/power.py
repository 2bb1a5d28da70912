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


def _is_zero(b: DerivativeBuilder, value: SSAValue) -> SSAValue:
    zero = b.const(0.0, value.type)
    if isinstance(value.type, ComplexType):
        return b.emit(complexd.EqualOp(value, zero))
    return b.emit(arith.CmpfOp(value, zero, "oeq"))


def _not_finite(b: DerivativeBuilder, value: SSAValue) -> SSAValue:
    """Whether ``value`` is infinite or ``NaN`` (its modulus, for a complex)."""
    modulus = b.emit(complexd.AbsOp(value) if isinstance(value.type, ComplexType) else math.AbsFOp(value))
    return b.emit(arith.CmpfOp(modulus, b.const(float("inf"), modulus.type), "uge"))


def _zero_where(b: DerivativeBuilder, where: SSAValue, value: SSAValue) -> SSAValue:
    return b.emit(arith.SelectOp(where, b.const(0.0, value.type), value))


def by_base(b: DerivativeBuilder, x: SSAValue, y: SSAValue) -> SSAValue:
    """``∂r/∂x = y·x^(y−1)``, 0 where ``y = 0`` and ``x = 0`` (no division
    by ``x``).  Only there: elsewhere at ``y = 0`` the product is 0 itself,
    and its own derivative (``x^(−1)`` along ``y``) is what a Hessian needs,
    where a constant 0 chosen by a select would have none."""
    lowered = b.sub(y, b.const(1.0, y.type))
    power = complexd.PowOp(x, lowered) if isinstance(x.type, ComplexType) else math.PowFOp(x, lowered)
    both = b.emit(arith.AndIOp(_is_zero(b, y), _is_zero(b, x)))
    return _zero_where(b, both, b.mul(y, b.emit(power)))


def by_exponent(b: DerivativeBuilder, x: SSAValue, r: SSAValue) -> SSAValue:
    """``∂r/∂y = r·log x``, 0 where ``x = 0``."""
    log = complexd.LogOp(x) if isinstance(x.type, ComplexType) else math.LogOp(x)
    return _zero_where(b, _is_zero(b, x), b.mul(r, b.emit(log)))


def times(b: DerivativeBuilder, factor: SSAValue, partial: SSAValue) -> SSAValue:
    """``factor · partial``, exactly 0 where the tangent or gradient
    ``factor`` is 0 and ``partial`` is not finite.  The partial is masked,
    not the product: the product keeps ``factor``'s own derivative
    (``ḟactor · partial``, which a Hessian's forward pass over the gradient
    needs where ``factor`` is 0), and a finite partial is left as it is."""
    masked = _zero_where(b, b.emit(arith.AndIOp(_is_zero(b, factor), _not_finite(b, partial))), partial)
    return b.mul(factor, masked)
