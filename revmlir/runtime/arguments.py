"""Python arguments of reversible functions, checked against the function's
signature and brought into the canonical representation every backend uses
(``revmlir.runtime.values``); and results brought back."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    ComplexType,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
)
from xdsl.ir import Attribute

from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FixedType, LogType, TropicalType
from revmlir.runtime.numbers import FixedPoint, fixed_format, fixed_raw
from revmlir.runtime.values import normalize, numpy_dtype


def type_name(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype}"
    return type(value).__name__


class ArgumentProblem(Exception):
    """An error about arguments of a call, which names them by position
    and the function by its symbol, as tools that run IR know them; a
    frontend says it again (``say``) with the names its users gave them."""

    def __init__(
        self,
        template: str,
        func: str,
        indices: tuple[int, ...],
        detail: str = "",
        labels: Sequence[str] | None = None,
        texts: Mapping[str, str] | None = None,
    ):
        """``template`` has ``{function}``, ``{0}``, ``{1}``… for the
        arguments at ``indices``, which the IR's message calls ``labels``
        (default ``#i``), and may have ``{detail}`` (the IR's type) and a
        ``{key}`` per entry of ``texts``.  Text that comes from the call (a
        class's name, a dtype) goes in ``texts``, never in ``template``:
        only the template is read as a format string, so braces in a name
        are shown as they are."""
        self.template, self.indices, self.texts = template, indices, dict(texts or {})
        super().__init__(self.say(f"@{func}", labels or [f"#{i}" for i in indices], detail))

    def say(self, function: str, arguments: Sequence[str], detail: str = "") -> str:
        """The message with ``function`` and ``arguments`` (one per index)
        in place of the symbol and the positions, and ``detail``."""
        return self.template.format(*arguments, function=function, detail=detail, **self.texts)


class ArgumentTypeError(ArgumentProblem, TypeError):
    """An argument that its parameter's type does not take."""


class ArgumentValueError(ArgumentProblem, ValueError):
    """Arguments of the right types that a call still cannot take (a
    read-only array it writes, arrays sharing memory)."""


def to_runtime(type: Attribute, value: Any, func: str, index: int) -> Any:
    """Check one argument of ``@func`` and convert it; raises ``TypeError``."""
    return converter(type, func, index)(value)


def converter(type: Attribute, func: str, index: int) -> Callable[[Any], Any]:
    """``to_runtime`` for one argument position, with everything that depends
    only on the type worked out once (calls are often small)."""

    def mismatch(value: Any, expected: str) -> TypeError:
        return ArgumentTypeError(
            "argument {0} of {function} must be {expected}{detail}, got {got}",
            func,
            (index,),
            f" ({type})",
            texts={"expected": expected, "got": type_name(value)},
        )

    if isinstance(type, MemRefType):
        dtype = numpy_dtype(type.element_type)
        shape = type.get_shape()
        static = [(i, d) for i, d in enumerate(shape) if d >= 0]
        shown_shape = str(["?" if d < 0 else d for d in shape])

        def array(value: Any) -> Any:
            if not isinstance(value, np.ndarray):
                raise mismatch(value, "a numpy array")
            if value.dtype != dtype or value.ndim != len(shape) or any(value.shape[i] != d for i, d in static):
                raise ArgumentTypeError(
                    "argument {0} of {function} must be an array of {dtype} with shape {shape}, got {got}",
                    func,
                    (index,),
                    texts={"dtype": str(dtype), "shape": shown_shape, "got": f"{value.dtype} {list(value.shape)}"},
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
            # infinity too: its logarithm has no inverse (``ly /= l`` is inf - inf)
            if isinstance(value, complex) or not 0 < value < np.inf:
                raise mismatch(value, "a positive, finite real number")
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


def value_range(type: Attribute) -> tuple[int, int] | None:
    """The Python ints a scalar of ``type`` holds as the same number, or
    None where ints do not convert to it.  Integers are read back with
    their type's signedness (``ui8`` from 0 to 255, ``i8`` and ``si8``
    from -128 to 127), so a bigger int would come back as another number
    (wrapped), and an int beyond the largest float has no float at all."""
    if isinstance(type, IntegerType):
        width = type.width.data
        if width == 1:
            return 0, 1
        if type.signedness.data == Signedness.UNSIGNED:
            return 0, 2**width - 1
        return -(2 ** (width - 1)), 2 ** (width - 1) - 1
    if isinstance(type, IndexType):
        return -(2**63), 2**63 - 1
    if isinstance(type, FixedType):
        return -(2 ** (type.width.data - 1 - type.fraction.data)), 2 ** (type.width.data - 1 - type.fraction.data) - 1
    element = type.element_type if isinstance(type, ComplexType | LogType | TropicalType) else type
    if isinstance(element, Float64Type | Float32Type):
        largest = int(np.finfo(numpy_dtype(element)).max)
        return -largest, largest
    return None


_LARGEST_FLOATS = {int(info.max): str(info.max) for info in map(np.finfo, (np.float32, np.float64))}
"""The largest float of each width as numpy prints it, the shortest decimal
that converts to it (float32's is 3.4028235e+38, where Python's float of it
prints as 3.4028234663852886e+38)."""


def out_of_range(value: complex, type_name: str, bounds: tuple[int, int]) -> str:
    """Says that ``value`` (a Python number) is outside ``bounds`` (from
    ``value_range``), without printing thousands of digits."""
    low, high = bounds
    shown = str(value)
    if isinstance(value, int) and value.bit_length() > 128:
        shown = f"an integer of {value.bit_length()} bits"
    exact = isinstance(value, int) and high.bit_length() <= 128
    limits = f"{low} to {high}" if exact else f"magnitude at most {_LARGEST_FLOATS.get(high, f'{float(high):.6g}')}"
    return f"{shown} is out of range for {type_name} ({limits})"
