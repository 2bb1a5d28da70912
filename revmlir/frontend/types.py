"""Python values and annotations → MLIR types of reversible functions.

float → f64, int → i64, complex → complex<f64>, bool → i1, numpy scalars keep
their width, numpy arrays become memrefs with dynamic sizes (so one compiled
function serves every shape of the same rank and dtype), ``rv.ULog`` is the
log-number type.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ComplexType,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute

from revmlir.dialects.rev import LogType


class ULog:
    """Annotation for a log-number argument (NiLang's ``ULogarithmic``): the
    caller passes and receives a positive float, the function stores its log."""


_DTYPES: dict[np.dtype, Attribute] = {
    np.dtype(np.float64): f64,
    np.dtype(np.float32): f32,
    np.dtype(np.int64): i64,
    np.dtype(np.int32): i32,
    np.dtype(np.bool_): i1,
    np.dtype(np.complex128): ComplexType(f64),
    np.dtype(np.complex64): ComplexType(f32),
}

_ANNOTATIONS: dict[Any, Attribute] = {
    float: f64,
    int: i64,
    complex: ComplexType(f64),
    bool: i1,
    ULog: LogType(f64),
}


def type_of_value(value: Any) -> Attribute | None:
    """The MLIR type a Python argument specialises to, or None."""
    if isinstance(value, np.ndarray):
        element = _DTYPES.get(value.dtype)
        if element is None:
            return None
        return MemRefType(element, [DYNAMIC_INDEX] * value.ndim)
    if isinstance(value, bool | np.bool_):
        return i1
    if isinstance(value, np.generic):
        return _DTYPES.get(value.dtype)
    if isinstance(value, int):
        return i64
    if isinstance(value, float):
        return f64
    if isinstance(value, complex):
        return ComplexType(f64)
    return None


def type_of_annotation(annotation: Any) -> Attribute | None:
    return _ANNOTATIONS.get(annotation)


def describe_type(type: Attribute) -> str:
    """How a Python user would call the type."""
    if isinstance(type, MemRefType):
        return f"a {len(type.get_shape())}-d array of {describe_type(type.element_type)}"
    if isinstance(type, ComplexType):
        return "complex"
    if isinstance(type, Float64Type):
        return "float"
    if isinstance(type, Float32Type):
        return "float32"
    if isinstance(type, IntegerType):
        return "bool" if type.width.data == 1 else f"int{type.width.data}"
    if isinstance(type, IndexType):
        return "index"
    if isinstance(type, LogType):
        return "ULog"
    return str(type)
