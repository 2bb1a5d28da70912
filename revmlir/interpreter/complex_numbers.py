"""The interpreter's complex functions: ``lowering.complex_functions`` run
on Python floats.

``Floats`` is the real arithmetic native code performs, value for value:
IEEE double operations (a division by zero is an infinity or NaN, never
``ZeroDivisionError``), the C math library's functions for libm calls and
for the ``llvm.*`` intrinsics that become them on the CPU (``sqrt``,
``fabs``, ``copysign`` and ``floor`` are exact, so the library's are the
instructions' values), and ``fptosi.sat`` for the integer of a power.  The
complex ops therefore give native code's bits and never raise: an overflow
is an infinity, an invalid operation a NaN.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable
from typing import Any

from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import ComplexType, Float32Type
from xdsl.ir import Operation

from revmlir.lowering import complex_functions
from revmlir.runtime import libm
from revmlir.runtime.values import saturated


@functools.cache
def _function(name: str, arity: int, single: bool = False) -> Callable[..., float]:
    return libm.function(name, arity, single)


def single_precision(op: Operation) -> bool:
    """Whether ``op`` computes in single precision, as native code does for
    an f32 operand or result (a complex<f32> one: its parts)."""
    types = [t.element_type if isinstance(t, ComplexType) else t for t in (*op.operand_types, *op.result_types)]
    return any(isinstance(t, Float32Type) for t in types)


class Floats:
    """``complex_functions.Real`` on Python floats."""

    OEQ, OGT, OGE, OLT = 1, 2, 3, 4

    def c(self, value: float) -> float:
        return value

    def add(self, a: float, b: float) -> float:
        return a + b

    def sub(self, a: float, b: float) -> float:
        return a - b

    def mul(self, a: float, b: float) -> float:
        return a * b

    def div(self, a: float, b: float) -> float:
        """IEEE division: x/±0 is ±∞ by the signs, 0/0 and NaN/0 NaN."""
        if b != 0.0:
            return a / b
        if a != a or a == 0.0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)

    def neg(self, a: float) -> float:
        return -a

    def cmp(self, predicate: int, a: float, b: float) -> bool:
        """The ordered predicates (false where an operand is NaN, as
        Python's comparisons are)."""
        if predicate == self.OEQ:
            return a == b
        if predicate == self.OGT:
            return a > b
        if predicate == self.OGE:
            return a >= b
        assert predicate == self.OLT
        return a < b

    def both(self, first: bool, second: bool) -> bool:
        return first and second

    def select(self, condition: bool, a: float, b: float) -> float:
        return a if condition else b

    def intrinsic(self, name: str, *args: float) -> float:
        return self.libm(name, *args)

    def libm(self, name: str, *args: float) -> float:
        return _function(name, len(args))(*args)

    def integer(self, value: float) -> int:
        """``fptosi.sat`` to i64: NaN is 0, values beyond the range its ends."""
        return saturated(value, -(1 << 63), (1 << 63) - 1)

    def has_bit(self, integer: int, bit: int) -> bool:
        return bool(integer >> bit & 1)


def _round(value: float) -> float:
    """``value`` rounded to the nearest f32: ±∞ where that overflows (the
    packing raises only then)."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


class Singles(Floats):
    """``complex_functions.Real`` on f32 values (as Python floats), as
    native code computes the parts of a complex<f32>: each operation
    rounded to single precision (exact for + − × ÷, whose double results
    round to the correctly rounded f32 ones) and the C library's
    single-precision functions (``expf``, ``hypotf`` …)."""

    def c(self, value: float) -> float:
        return _round(value)

    def add(self, a: float, b: float) -> float:
        return _round(a + b)

    def sub(self, a: float, b: float) -> float:
        return _round(a - b)

    def mul(self, a: float, b: float) -> float:
        return _round(a * b)

    def div(self, a: float, b: float) -> float:
        return _round(super().div(a, b))

    def libm(self, name: str, *args: float) -> float:
        return _function(name, len(args), True)(*args)


_FLOATS, _SINGLES = Floats(), Singles()


def _real(op: Operation) -> Floats:
    """The arithmetic ``op`` computes in."""
    return _SINGLES if single_precision(op) else _FLOATS


def _unary(function: Callable[[Floats, float, float], tuple[float, float]]) -> Callable[[Operation, complex], complex]:
    return lambda op, z: complex(*function(_real(op), z.real, z.imag))


def _to_real(function: Callable[[Floats, float, float], float]) -> Callable[[Operation, complex], float]:
    return lambda op, z: function(_real(op), z.real, z.imag)


def multiply(op: Operation, a: complex, b: complex) -> complex:
    return complex(*complex_functions.multiply(_real(op), (a.real, a.imag), (b.real, b.imag)))


def divide(op: Operation, a: complex, b: complex) -> complex:
    return complex(*complex_functions.divide(_real(op), a.real, a.imag, b.real, b.imag))


def power(op: Operation, a: complex, b: complex) -> complex:
    return complex(*complex_functions.power(_real(op), a.real, a.imag, b.real, b.imag))


def close(a: complex, b: complex, tolerance: float) -> bool:
    """A check's equality of complex numbers, as native code decides it
    (``rev_to_std``'s ``same``): with the parts that are NaN in both taken
    as 0, equal parts (``nan+∞j`` is itself, though the difference of the
    infinite parts is NaN), or a finite ``|a − b|`` within ``tol``,
    ``tol·|a|`` or ``tol·|b|``.  ``cmath.isclose`` differs where the
    difference overflows (an infinite gap is close to an infinite ``|b|``
    there) and at NaN."""
    if math.isnan(a.real) and math.isnan(b.real):
        a, b = complex(0.0, a.imag), complex(0.0, b.imag)
    if math.isnan(a.imag) and math.isnan(b.imag):
        a, b = complex(a.real, 0.0), complex(b.real, 0.0)
    if a == b:
        return True
    size = functools.partial(complex_functions.absolute, _FLOATS)
    gap = size((a - b).real, (a - b).imag)
    return gap < math.inf and (
        gap <= tolerance or gap <= size(a.real, a.imag) * tolerance or gap <= size(b.real, b.imag) * tolerance
    )


COMPLEX_SEMANTICS: dict[type[Operation], Callable[..., Any]] = {
    **{kind: _unary(function) for kind, function in complex_functions.UNARY.items()},
    **{kind: _to_real(function) for kind, function in complex_functions.TO_REAL.items()},
    complexd.MulOp: multiply,
    complexd.DivOp: divide,
    complexd.PowOp: power,
}
"""The complex ops native code translates with ``complex_functions``, by
the same algorithms."""
