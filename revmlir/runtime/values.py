"""How the engines represent values of each type in Python: the
interpreter computes on them, and native code's arguments and results are
converted to and from them (``revmlir.runtime.arguments``).

Integers are Python ints wrapped to their width, so integer programs are
bit-exact and reversible: signless and signed ones in two's complement
(``-128`` to ``127`` for ``i8``), unsigned ones from zero (``0`` to ``255``
for ``ui8``), the numbers those types mean; ``i1`` is ``bool``; floats are Python
floats rounded to their precision; complex numbers are Python complex; log
numbers hold their logarithm; fixed-point numbers the integer they store,
never outside their type; tropical numbers the real they are; memrefs are numpy arrays (updated in place);
stacks are lists.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import InterpretationError

from revmlir.dialects.rev import FixedType, LogType, TropicalType
from revmlir.safety import fixed_overflow

INDEX_WIDTH = 64


def wrap_int(value: int, width: int) -> int:
    mask = (1 << width) - 1
    value = int(value) & mask
    return value - (1 << width) if value >> (width - 1) else value


def to_unsigned(value: int, width: int) -> int:
    return int(value) & ((1 << width) - 1)


def saturated(value: float, low: int, high: int) -> int:
    """``value`` toward zero as an integer of ``[low, high]``, as LLVM's
    ``llvm.fptosi.sat`` and ``llvm.fptoui.sat`` convert a float, which
    native code and GPU kernels run: NaN gives 0, a value beyond the range
    (an infinity too) its nearest end.  Python's ``int`` raises for NaN and
    the infinities, and a wrap of its result would be a third answer."""
    if math.isnan(value):
        return 0
    if value >= high:
        return high
    if value <= low:
        return low
    return int(value)


def wrap_to(type: IntegerType, value: int) -> int:
    """``value`` wrapped to ``type``'s width and read with its signedness:
    the same bits as two's complement gives, so the engines agree on every
    result, but an unsigned type's number, which is what a user who wrote
    ``ui8`` reads and writes."""
    width = type.width.data
    if type.signedness.data == Signedness.UNSIGNED:
        return to_unsigned(value, width)
    return wrap_int(value, width)


def int_width(type: Attribute) -> int:
    if isinstance(type, IntegerType):
        return type.width.data
    assert isinstance(type, IndexType)
    return INDEX_WIDTH


def _round_float(type: Attribute, value: Any) -> float:
    """``value`` rounded to ``type`` as C converts a double: to nearest,
    beyond the type's largest finite number to an infinity, silently (NumPy
    would warn of the overflow: an argument of 1e300 for an f32 or a
    complex<f32> is inf on both engines, not an error)."""
    if isinstance(type, Float32Type | Float16Type):
        narrow = np.float32 if isinstance(type, Float32Type) else np.float16
        if abs(value) <= _LARGEST[narrow]:
            return float(narrow(value))
        with np.errstate(over="ignore"):
            return float(narrow(value))
    return float(value)


_LARGEST = {narrow: float(np.finfo(narrow).max) for narrow in (np.float32, np.float16)}


def normalize(type: Attribute, value: Any) -> Any:
    """Bring a Python value into the canonical representation of ``type``."""
    if isinstance(type, IntegerType):
        if type.width.data == 1:
            return bool(value)
        return wrap_to(type, value)
    if isinstance(type, IndexType):
        return wrap_int(value, INDEX_WIDTH)
    if isinstance(type, AnyFloat):
        return _round_float(type, value)
    if isinstance(type, ComplexType):
        element = type.element_type
        value = complex(value)
        return complex(_round_float(element, value.real), _round_float(element, value.imag))
    if isinstance(type, LogType | TropicalType):
        return _round_float(type.element_type, value)
    if isinstance(type, FixedType):
        # checked here, where every fixed-point result is formed: native
        # code checks the same results before truncating them
        if not type.holds(value):
            raise InterpretationError(fixed_overflow(type.describe()))
        return int(value)
    return value


def numpy_dtype(element: Attribute) -> np.dtype:
    if isinstance(element, Float64Type):
        return np.dtype(np.float64)
    if isinstance(element, Float32Type):
        return np.dtype(np.float32)
    if isinstance(element, Float16Type):
        return np.dtype(np.float16)
    if isinstance(element, IndexType):
        return np.dtype(np.int64)
    if isinstance(element, IntegerType):
        width = element.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if element.signedness.data == Signedness.UNSIGNED:
            return np.dtype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[width])
        return np.dtype({8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[width])
    if isinstance(element, ComplexType):
        inner = element.element_type
        return np.dtype(np.complex64 if isinstance(inner, Float32Type) else np.complex128)
    raise TypeError(f"no numpy dtype for memref element type {element}")
