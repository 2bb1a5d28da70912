"""The partial derivative of ``r = fmod(a, b)`` along ``b``, shared by both
modes' rules.

``r = a − n·b`` for ``n`` the truncated quotient, which is piecewise
constant, so ``∂r/∂b = −n``.  ``r`` is exact, ``(r − a)/b`` is not: it is
``−n`` within a few ulps, and a gradient of ``x % d`` along ``d`` that should
be the integer ``−(x // d)`` was ``672363.9999999999``.  Rounded to the
nearest integer it is ``−n`` exactly while those ulps are below ½ (``|n|``
well below 2⁵²; beyond, every float is an integer and rounding changes
nothing)."""

from __future__ import annotations

from xdsl.dialects import math
from xdsl.ir import SSAValue

from revmlir.interfaces import DerivativeBuilder


def minus_quotient(b: DerivativeBuilder, a: SSAValue, divisor: SSAValue, r: SSAValue) -> SSAValue:
    """``∂r/∂b = −n``: ``(r − a)/b`` rounded to the nearest integer (NaN
    and ±∞ stay as they are)."""
    return b.emit(math.RoundEvenOp(b.div(b.sub(r, a), divisor)))
