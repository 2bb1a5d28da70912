"""Lowering of fixed-point, tropical and log numbers to std (``rev-lower-to-std``).

A fixed-point number becomes the integer it stores.  Its sums, differences
and products are computed at twice the width (the product of two 64-bit
integers fits i128), shifted back for a product (an arithmetic shift: the
product rounds down), and checked against the type before they are
truncated, so native code refuses an overflow where the interpreter does
(``revmlir.runtime.values.normalize``), with the same message.  A tropical
number becomes the real it is, checked to be finite when it is made; a
log number the logarithm of a real checked to be positive and finite.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerType, f64
from xdsl.ir import Operation, SSAValue

from revmlir.dialects import rev
from revmlir.errors import ExecutionError
from revmlir.lowering.emitter import Emitter
from revmlir.safety import NOT_LOG, NOT_TROPICAL, fixed_overflow, not_fixed

_WIDE = {
    rev.AddOp: arith.AddiOp,
    rev.FixedAddOp: arith.AddiOp,
    rev.SubOp: arith.SubiOp,
    rev.FixedSubOp: arith.SubiOp,
    rev.FixedMulOp: arith.MuliOp,
}


def checked_fixed(lowering: Emitter, op: Operation) -> None:
    """``rev.add``/``rev.sub`` on a fixed-point target and the fixed-point
    expression ops: the operation at twice the width, checked, truncated."""
    fixed = op.results[0].type
    assert isinstance(fixed, rev.FixedType)
    width = fixed.width.data
    wide = IntegerType(2 * width)
    a, b = (lowering.emit(arith.ExtSIOp(lowering.get(v), wide), op).results[0] for v in op.operands)
    result = lowering.emit(_WIDE[type(op)](a, b), op).results[0]
    if isinstance(op, rev.FixedMulOp):
        shift = lowering.const(fixed.fraction.data, wide, op)
        result = lowering.emit(arith.ShRSIOp(result, shift), op).results[0]
    low, high = fixed.bounds
    above = lowering.emit(arith.CmpiOp(result, lowering.const(low, wide, op), "sge"), op).results[0]
    below = lowering.emit(arith.CmpiOp(result, lowering.const(high, wide, op), "sle"), op).results[0]
    fits = lowering.emit(arith.AndIOp(above, below), op).results[0]
    lowering.check(fits, op, fixed_overflow(fixed.describe()), (), ExecutionError)
    narrow = lowering.emit(arith.TruncIOp(result, IntegerType(width)), op).results[0]
    lowering.set(op.results[0], narrow)


def to_fixed(lowering: Emitter, op: Operation) -> None:
    """The nearest stored integer: ``x · 2^fraction`` (exact, or infinite)
    rounded to even, checked against the type's range (a NaN fails both
    ordered comparisons), then converted."""
    assert isinstance(op, rev.ToFixedOp)
    type = op.result.type
    assert isinstance(type, rev.FixedType)
    x = lowering.get(op.value)
    scaled = lowering.emit(arith.MulfOp(x, lowering.const(2.0**type.fraction.data, f64, op)), op).results[0]
    rounded = lowering.emit(math.RoundEvenOp(scaled), op).results[0]
    half = 2.0 ** (type.width.data - 1)
    above = lowering.emit(arith.CmpfOp(rounded, lowering.const(-half, f64, op), "oge"), op).results[0]
    below = lowering.emit(arith.CmpfOp(rounded, lowering.const(half, f64, op), "olt"), op).results[0]
    fits = lowering.emit(arith.AndIOp(above, below), op).results[0]
    lowering.check(fits, op, not_fixed(type.describe()), [x], ExecutionError)
    raw = lowering.emit(arith.FPToSIOp(rounded, IntegerType(type.width.data)), op).results[0]
    lowering.set(op.result, raw)


def from_fixed(lowering: Emitter, op: Operation) -> None:
    """The stored integer as the nearest f64, scaled by ``2^-fraction``
    (exact: a power of two within f64's normal range)."""
    assert isinstance(op, rev.FromFixedOp)
    type = op.value.type
    assert isinstance(type, rev.FixedType)
    real = lowering.emit(arith.SIToFPOp(lowering.get(op.value), f64), op).results[0]
    scale = lowering.const(2.0**-type.fraction.data, f64, op)
    lowering.set(op.result, lowering.emit(arith.MulfOp(real, scale), op).results[0])


def to_tropical(lowering: Emitter, op: Operation) -> None:
    """A tropical number is stored as the real it is, which must be finite
    (``|x| < inf`` is false for a NaN too)."""
    x = lowering.get(op.operands[0])
    magnitude = lowering.emit(math.AbsFOp(x), op).results[0]
    finite = lowering.emit(arith.CmpfOp(magnitude, lowering.const(float("inf"), x.type, op), "olt"), op).results[0]
    lowering.check(finite, op, NOT_TROPICAL, [x], ExecutionError)
    lowering.set(op.results[0], x)


def to_log(lowering: Emitter, op: Operation) -> None:
    """A log number stores the logarithm of a real that must be positive
    and finite (``0 < x < inf`` is false for a NaN too)."""
    x = lowering.get(op.operands[0])
    above = lowering.emit(arith.CmpfOp(x, lowering.const(0.0, x.type, op), "ogt"), op).results[0]
    below = lowering.emit(arith.CmpfOp(x, lowering.const(float("inf"), x.type, op), "olt"), op).results[0]
    positive = lowering.emit(arith.AndIOp(above, below), op).results[0]
    lowering.check(positive, op, NOT_LOG, [x], ExecutionError)
    lowering.set(op.results[0], lowering.emit(math.LogOp(x), op).results[0])


def from_tropical(lowering: Emitter, op: Operation) -> None:
    lowering.set(op.results[0], lowering.get(op.operands[0]))


def is_fixed(value: SSAValue) -> bool:
    return isinstance(value.type, rev.FixedType)
