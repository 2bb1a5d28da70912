"""Python values and annotations → MLIR types of reversible functions.

float → f64, int → i64, complex → complex<f64>, bool → i1, numpy scalars keep
their width, numpy arrays become memrefs with dynamic sizes (so one compiled
function serves every shape of the same rank and dtype), ``rv.ULog`` is the
log-number type, ``rv.Fixed[fraction]`` a fixed-point type, ``rv.Tropical``
the tropical one; a ``FixedPoint`` argument specialises to its format;
``rv.Stack(float)`` is a list that says its element type.
"""

from __future__ import annotations

import math
import typing
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, TypeGuard

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
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

from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FixedType, LogType, TropicalType
from revmlir.runtime.arguments import out_of_range, value_range
from revmlir.runtime.numbers import Fixed, FixedPoint


class ULog:
    """Annotation for a log-number argument (NiLang's ``ULogarithmic``): the
    caller passes and receives a positive float, the function stores its log."""


class Tropical:
    """Annotation for a tropical (max-plus) argument: the caller passes and
    receives a finite float, whose products are sums and sums maxima."""


_NUMPY_SCALARS: dict[str, Attribute] = {
    "float64": f64,
    "float32": f32,
    "int64": i64,
    "int32": i32,
    "bool_": i1,
    "complex128": ComplexType(f64),
    "complex64": ComplexType(f32),
}
"""numpy's scalar classes that are types, by the names every supported
numpy has: numpy 1.26 has ``np.bool_`` but no ``np.bool``."""

_DTYPES: dict[np.dtype, Attribute] = {np.dtype(getattr(np, name)): type for name, type in _NUMPY_SCALARS.items()}

_ANNOTATIONS: dict[Any, Attribute] = {
    float: f64,
    int: i64,
    complex: ComplexType(f64),
    bool: i1,
    ULog: LogType(f64),
    Tropical: TropicalType(f64),
}


class Stack(list[Any]):
    """``rv.Stack(float)`` (or ``rv.Stack(float, [1.0, 2.0])``): a list of
    ``float``, ``int``, ``complex``, ``bool`` or ``rv.ULog`` values, the top
    last.  A reversible function it is passed to updates it in place.

    A reversible function takes a stack argument as a list whose elements it
    pushes and pops in place (``anc.stack`` values, docs/design.md decision
    14), but a Python list does not say what its elements are, and an empty
    one cannot: ``rv.Stack(float)`` is a list that does, so that the
    function is specialised to ``!anc.stack<f64>`` whatever it holds."""

    def __init__(self, dtype: Any, values: Iterable[Any] = ()):
        """numpy's scalar types are refused as element types: a stack's
        elements are the caller's Python numbers, which native code would
        round to ``np.float32`` (or wrap to ``np.int32``) and the
        interpreter would not, so the engines would disagree."""
        if _is_numpy_class(dtype):
            raise TypeError(
                f"rv.Stack({dtype!r}): numpy scalar types are not stack element types, since a stack holds "
                "Python numbers, which are not converted to their width: use float, int, complex, bool or rv.ULog"
            )
        if type_of_annotation(dtype) is None:
            raise TypeError(f"rv.Stack({dtype!r}): the element type must be float, int, complex, bool or rv.ULog")
        super().__init__(values)
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"rv.Stack({getattr(self.dtype, '__name__', self.dtype)}, {list.__repr__(self)})"


def type_of_value(value: Any) -> Attribute | None:
    """The MLIR type a Python argument specialises to, or None."""
    if isinstance(value, np.ndarray):
        element = _DTYPES.get(value.dtype)
        if element is None:
            return None
        return MemRefType(element, [DYNAMIC_INDEX] * value.ndim)
    if isinstance(value, Stack):
        element = type_of_annotation(value.dtype)
        return None if element is None else StackType(element)
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
    if isinstance(value, FixedPoint):
        return value.format.type
    return None


# The scalar types only a numpy scalar argument gives (Python's float, int,
# complex and bool give the others), with that scalar's class.
_NUMPY_ONLY_SCALARS: dict[Attribute, type[np.generic]] = {
    type: dtype.type for dtype, type in _DTYPES.items() if type not in _ANNOTATIONS.values()
}


def numpy_scalar_positions(types: Sequence[Attribute]) -> tuple[tuple[int, type[np.generic]], ...]:
    """The parameters of ``types`` that only a numpy scalar passes
    (``np.float32``, ``np.int32``, ``np.complex64``), with its class: their
    results are returned as that class, so that ``f``'s results passed back
    to ``~f`` (or to ``f`` again) select the same specialisation, where a
    Python number would select the 64-bit one."""
    return tuple((i, _NUMPY_ONLY_SCALARS[t]) for i, t in enumerate(types) if t in _NUMPY_ONLY_SCALARS)


def unsigned_hint(value: Any, name: str) -> str | None:
    """What to pass for parameter ``name`` instead of a numpy array or
    scalar of an unsigned type, which compiled functions refuse: native
    code, where they run by default, has signless integers only, and a
    Python int has no unsigned type to meet them in arithmetic.  A signed
    type that holds every value where there is one; for ``uint64``, the
    same bits as ``int64``, whose wrapping addition, subtraction and
    multiplication leave the bits ``uint64``'s would.  Any array with a
    numpy dtype is advised (a JAX array too: its ``astype`` is numpy's);
    another object's ``dtype`` (a string, a ``torch.dtype``) is not
    numpy's, and gets no advice."""
    dtype = getattr(value, "dtype", None)
    if not isinstance(dtype, np.dtype) or dtype.kind != "u":
        return None
    bits = 8 * dtype.itemsize
    if bits == 64:
        return (
            f"unsigned integers are not supported: pass {name}.view(np.int64), the same bits, which wrapping "
            "addition, subtraction and multiplication change as uint64's (comparisons, division and shifts "
            "read them signed), and view the results as np.uint64"
        )
    signed = f"{name}.astype(np.{'int32' if bits < 32 else 'int64'})" if np.ndim(value) > 0 else f"int({name})"
    return (
        f"unsigned integers are not supported: pass {signed}, which holds every {dtype} value, and convert "
        f"the results back with .astype(np.{dtype}) where they should wrap modulo 2**{bits}"
    )


def type_of_annotation(annotation: Any) -> Attribute | None:
    """The type a parameter annotated ``annotation`` has, or None where the
    annotation fixes none.  numpy's scalar types mean their own
    (``np.float32`` is ``f32``, ``np.complex64`` a complex of ``f32``,
    ``np.int32`` is ``i32``) as ``float`` means ``f64``: an annotation that
    names a width and is compiled at another is a wrong program, not a
    comment."""
    if isinstance(annotation, Fixed):
        return annotation.type
    if _is_numpy_class(annotation):
        return _numpy_class_type(annotation)
    try:
        return _ANNOTATIONS.get(annotation)
    except TypeError:  # unhashable, such as a list: no type's annotation
        return None


def _is_numpy_class(annotation: Any) -> TypeGuard[type[np.generic]]:
    """Whether ``annotation`` is a numpy scalar class, abstract or not."""
    return isinstance(annotation, type) and issubclass(annotation, np.generic)


def _numpy_class_type(annotation: type[np.generic]) -> Attribute | None:
    """The type of numpy scalar class ``annotation``, by its dtype: aliases
    of one dtype (``np.longlong`` of ``np.int64``'s, a distinct class) mean
    one type.  An abstract class (``np.floating``) has no dtype of its own:
    numpy 2 refuses to make one, numpy 1.26 makes another class's
    (``float64``'s, with a ``DeprecationWarning``), so a class is taken
    only where its dtype's class is itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            dtype = np.dtype(annotation)
        except TypeError:
            return None
    return _DTYPES.get(dtype) if dtype.type is annotation else None


def is_known_annotation(annotation: Any) -> bool:
    """Whether a parameter annotation means something here: a type that
    fixes the parameter's (``_ANNOTATIONS``, numpy's scalar types of
    ``_DTYPES``), or one that only documents it — ``numpy.ndarray``, whose
    dtype the argument gives.  Anything else (``Fixed43``, ``list``,
    ``np.uint8``) would be silently ignored, so it is refused."""
    if type_of_annotation(annotation) is not None or annotation is np.ndarray:
        return True
    return typing.get_origin(annotation) is np.ndarray  # numpy.typing.NDArray[dtype]


def type_of_vector_annotation(annotation: Any) -> Attribute | None:
    """The vector type ``numpy.typing.NDArray[dtype]`` stands for where the
    annotation fixes the type (a primitive's signature), or None."""
    if typing.get_origin(annotation) is not np.ndarray:
        return None
    scalars = typing.get_args(typing.get_args(annotation)[-1])
    if len(scalars) != 1 or not isinstance(scalars[0], type) or not issubclass(scalars[0], np.generic):
        return None
    return type_of_value(np.empty(0, dtype=scalars[0]))


NUMPY_SCALAR_ANNOTATIONS = ", ".join(f"np.{name}" for name in _NUMPY_SCALARS)
"""The numpy scalar classes that annotate a type (and their aliases)."""

KNOWN_ANNOTATIONS = (
    "float, int, complex, bool, rv.ULog, rv.Fixed[fraction], rv.Tropical, numpy.ndarray, "
    f"numpy.typing.NDArray[dtype] or a numpy scalar type ({NUMPY_SCALAR_ANNOTATIONS})"
)


def describe_type(type: Attribute) -> str:
    """How a Python user would call the type."""
    if isinstance(type, MemRefType):
        return f"a {len(type.get_shape())}-d array of {describe_type(type.element_type)}"
    if isinstance(type, ComplexType):  # numpy's complex64 is Python's complex of float32s
        return "complex64" if isinstance(type.element_type, Float32Type) else "complex"
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
    if isinstance(type, StackType):
        return f"a stack of {describe_type(type.element_type)}"
    if isinstance(type, FixedType):
        return f"rv.{type.describe()}"
    if isinstance(type, TropicalType):
        return "Tropical"
    return str(type)


RangeChecks = tuple[tuple[int, int, int], ...]
"""Per argument whose Python type holds numbers its parameter's type does
not: its position and the bounds of its parameter's type."""


def range_checks(types: Sequence[Attribute], python_types: Sequence[Any]) -> RangeChecks:
    """The checks a call whose arguments have ``python_types`` needs (none
    for calls whose numbers all fit, so they cost nothing): a Python int
    for any number, a numpy integer for a narrower integer (an
    ``np.int64`` for ``n: np.int32``), a float or complex number for a
    narrower one (``x: np.float32``), so that a number is never wrapped or
    made infinite by its conversion, whether Python's or numpy's."""
    return tuple(
        (i, *bounds)
        for i, (type, found) in enumerate(zip(types, python_types))
        if (bounds := value_range(type)) is not None and _holds_more(found, type, bounds)
    )


def _holds_more(found: Any, declared: Attribute, bounds: tuple[int, int]) -> bool:
    """Whether numbers of Python type ``found`` may be beyond ``bounds``, the
    range of ``declared``."""
    if found is int:
        return True
    if not isinstance(found, type):  # an array's or a stack's key
        return False
    if issubclass(found, np.integer):
        info = np.iinfo(found)
        return int(info.min) < bounds[0] or int(info.max) > bounds[1]
    if not isinstance(declared, AnyFloat | ComplexType):
        return False  # a float for an integer is refused, for a fixed-point number range-checked as it converts
    if found is float or found is complex:
        return float(np.finfo(np.float64).max) > bounds[1]
    return issubclass(found, np.inexact) and float(np.finfo(found).max) > bounds[1]


def _beyond(value: Any, low: int, high: int) -> bool:
    """Whether number ``value`` is outside ``low`` to ``high``: for a float,
    one the conversion to the float of largest number ``high`` makes
    infinite although it is finite (an infinity or NaN is a float of every
    width)."""
    if isinstance(value, complex | np.complexfloating):
        return _beyond(value.real, low, high) or _beyond(value.imag, low, high)
    if isinstance(value, float | np.floating):
        return math.isfinite(value) and abs(float(value)) >= _rounded_to_infinity(high)
    return not low <= int(value) <= high


def _rounded_to_infinity(largest: int) -> int:
    """The magnitude from which a float rounds to infinity in the binary
    format whose largest finite number is ``largest`` (``2**e - 2**(e-p)``):
    halfway to ``2**e``, where a tie rounds to ``2**e``, whose significand
    is even.  Below it the conversion is finite: numpy takes 3.4028235e38,
    above float32's largest, to float32's largest."""
    return (largest + 2 ** largest.bit_length()) // 2


def check_ranges(
    function: str, parameters: Sequence[str], types: Sequence[Attribute], checks: RangeChecks, args: Sequence[Any]
) -> None:
    """An ``OverflowError`` naming the first argument its parameter's type
    cannot hold: an int beyond its range, a finite float or complex part
    beyond the largest float of its width (infinities and NaN are
    floats of every width)."""
    for i, low, high in checks:
        if _beyond(value := args[i], low, high):
            number = value.item() if isinstance(value, np.generic) else value  # as Python prints it
            raise OverflowError(
                f"{function}(): argument '{parameters[i]}': "
                + out_of_range(number, describe_type(types[i]), (low, high))
            )


def is_struct_class(cls: object) -> TypeGuard[type]:
    """A dataclass or a named tuple class."""
    return isinstance(cls, type) and (
        hasattr(cls, "__dataclass_fields__") or (issubclass(cls, tuple) and hasattr(cls, "_fields"))
    )
