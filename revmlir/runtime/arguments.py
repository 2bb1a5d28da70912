"""Python arguments of reversible functions, checked against the function's
signature and brought into the canonical representation every backend uses
(``revmlir.runtime.values``); and results brought back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ComplexType, IndexType, IntegerType, MemRefType
from xdsl.ir import Attribute

from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FixedType, LogType, TropicalType
from revmlir.runtime.numbers import FixedPoint, fixed_format, fixed_raw
from revmlir.runtime.values import normalize, numpy_dtype


def type_name(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype}"
    return type(value).__name__


def to_runtime(type: Attribute, value: Any, func: str, index: int) -> Any:
    """Check one argument of ``@func`` and convert it; raises ``TypeError``."""
    return converter(type, func, index)(value)


def converter(type: Attribute, func: str, index: int) -> Callable[[Any], Any]:
    """``to_runtime`` for one argument position, with everything that depends
    only on the type worked out once (calls are often small)."""

    def mismatch(value: Any, expected: str) -> TypeError:
        return TypeError(f"argument #{index} of @{func} must be {expected} ({type}), got {type_name(value)}")

    if isinstance(type, MemRefType):
        dtype = numpy_dtype(type.element_type)
        shape = type.get_shape()
        static = [(i, d) for i, d in enumerate(shape) if d >= 0]

        def array(value: Any) -> Any:
            if not isinstance(value, np.ndarray):
                raise mismatch(value, "a numpy array")
            if value.dtype != dtype or value.ndim != len(shape) or any(value.shape[i] != d for i, d in static):
                raise TypeError(
                    f"argument #{index} of @{func} must be an array of {dtype} with "
                    f"shape {['?' if d < 0 else d for d in shape]}, got {value.dtype} "
                    f"{list(value.shape)}"
                )
            return value

        return array
    if isinstance(type, StackType):

        def stack(value: Any) -> Any:
            if not isinstance(value, list):
                raise mismatch(value, "a list")
            return value

        return stack

    def scalar(value: Any) -> Any:
        if isinstance(value, np.ndarray | list | tuple | str | bytes) or value is None:
            raise mismatch(value, "a scalar")
        if isinstance(type, IntegerType | IndexType):
            if isinstance(value, float | complex | np.floating):
                raise mismatch(value, "an integer")
            return normalize(type, int(value))
        if isinstance(type, LogType):
            if isinstance(value, complex) or not value > 0:
                raise mismatch(value, "a positive real number")
            return normalize(type, np.log(float(value)))
        if isinstance(type, FixedType):
            raw = fixed_raw(type, value)
            if raw is None:
                raise mismatch(value, f"a {fixed_format(type)!r} or a real number within its range")
            return raw
        if isinstance(type, TropicalType):
            if isinstance(value, complex) or not np.isfinite(value):
                raise mismatch(value, "a finite real number (-inf, the tropical zero, has no inverse)")
            return normalize(type, float(value))
        if isinstance(type, ComplexType):
            return normalize(type, complex(value))
        if isinstance(value, complex):
            raise mismatch(value, "a real number")
        return normalize(type, float(value))

    return scalar


def from_runtime(type: Attribute, value: Any) -> Any:
    if isinstance(type, LogType):
        return float(np.exp(value))
    if isinstance(type, FixedType):
        return FixedPoint(int(value), fixed_format(type))
    return value
