"""Derivative arithmetic at the singular points of the rules, shared by both
modes' rules, for floats and complex numbers.

A rule multiplies the tangent or gradient it receives (the *factor*) by a
partial derivative, or divides it by the partial's reciprocal, and at a
singular point of the op that partial is infinite (``sqrt``, ``log``,
``asin`` at their edges, ``atan2`` at the origin, a division by 0) or
``NaN`` (``log`` of a negative number).  A factor of 0 there made
``0·∞ = NaN`` (or ``0/0``), which reached every derivative through the op,
even those of outputs that do not depend on it: a Jacobian's column along
another argument, a vjp whose cotangent leaves the op out.  A zero factor
contributes exactly 0 instead (docs/design.md, decisions 147 and 149).

The partial is masked, not the product: a Hessian runs forward mode over
the gradient program, where a select's tangent is its chosen branch's, and
``factor · masked`` keeps ``ḟactor · partial`` where the partial is finite
(a product chosen to be a constant 0 would have lost it).  Where the
partial is not finite, the masked partial is 0 (a denominator taken as
``∞``), so the tangent of a masked contribution is 0 as well.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import ComplexType
from xdsl.ir import SSAValue

from revmlir.interfaces import DerivativeBuilder


def is_zero(b: DerivativeBuilder, value: SSAValue) -> SSAValue:
    """Whether ``value`` is 0 (both parts, for a complex)."""
    zero = b.const(0.0, value.type)
    if isinstance(value.type, ComplexType):
        return b.emit(complexd.EqualOp(value, zero))
    return b.emit(arith.CmpfOp(value, zero, "oeq"))


def _modulus(b: DerivativeBuilder, value: SSAValue) -> SSAValue:
    return b.emit(complexd.AbsOp(value) if isinstance(value.type, ComplexType) else math.AbsFOp(value))


def _vanishes(b: DerivativeBuilder, value: SSAValue) -> SSAValue:
    """Whether ``value`` is 0 or ``NaN`` (its modulus, for a complex)."""
    size = _modulus(b, value) if isinstance(value.type, ComplexType) else value
    return b.emit(arith.CmpfOp(size, b.const(0.0, size.type), "ueq"))


def zero_where(b: DerivativeBuilder, where: SSAValue, value: SSAValue) -> SSAValue:
    """``value``, 0 where ``where`` holds."""
    return b.emit(arith.SelectOp(where, b.const(0.0, value.type), value))


def times(b: DerivativeBuilder, factor: SSAValue, partial: SSAValue) -> SSAValue:
    """``factor · partial``, exactly 0 where the tangent or gradient
    ``factor`` is 0 and ``partial`` is infinite or ``NaN`` (its modulus,
    for a complex); a finite partial is left as it is."""
    modulus = _modulus(b, partial)
    not_finite = b.emit(arith.CmpfOp(modulus, b.const(float("inf"), modulus.type), "uge"))
    masked = zero_where(b, b.emit(arith.AndIOp(is_zero(b, factor), not_finite)), partial)
    return b.mul(factor, masked)


def over(b: DerivativeBuilder, factor: SSAValue, denominator: SSAValue) -> SSAValue:
    """``factor / denominator``, exactly 0 where the tangent or gradient
    ``factor`` is 0 and the denominator is 0 or ``NaN`` (the partial
    ``1/denominator`` is not finite): the denominator is taken as ``∞``
    there, which keeps the division exact everywhere else."""
    masked = b.emit(arith.AndIOp(is_zero(b, factor), _vanishes(b, denominator)))
    infinite = b.const(float("inf"), denominator.type)
    return b.div(factor, b.emit(arith.SelectOp(masked, infinite, denominator)))


def nonzero(b: DerivativeBuilder, value: SSAValue) -> SSAValue:
    """``value``, 1 where it is 0: the modulus of a complex number divides
    its parts in the partials of ``abs``, which JAX takes as 0 at 0 (its
    ``_replace_zero``), as the subgradient of ``abs`` of a real is finite."""
    return b.emit(arith.SelectOp(is_zero(b, value), b.const(1.0, value.type), value))
