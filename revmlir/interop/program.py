"""A revmlir function as maps between numpy arrays, which the JAX and
PyTorch bindings wrap.

Array frameworks see every value as an array of a shape and dtype: a scalar
is a 0-d array.  ``Program.signature`` works out, from the inputs' shapes and
dtypes alone (what a tracer knows), what ``f`` returns and which values carry
derivatives, compiling ``f``'s specialization on the way so that wrong
dtypes and ranks are reported when the framework traces, not when it runs.
A ``Signature`` then runs ``f``, its tangent program (``rv.jvp``) and its
pullback (``rv.vjp``) on numpy arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType

from revmlir.frontend.base.checkpoint_policy import CheckpointOptions, CheckpointPolicy
from revmlir.frontend.base.specialization import Specialization, bound_by_position
from revmlir.frontend.base.structs import is_struct
from revmlir.frontend.base.types import Stack
from revmlir.frontend.derivatives.forward import jvp
from revmlir.frontend.derivatives.gradient import require_resumable, vjp
from revmlir.frontend.derivatives.jacobian import REVERSE_JACOBIAN_LANES
from revmlir.frontend.ordinary_code.functions import OrdinaryFunction, OrdinarySpecialization
from revmlir.frontend.reversible_code.functions import ReversibleFunction

DTYPES = tuple(np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.bool_))
"""The dtypes arrays and scalars may have: revmlir's real ones."""


@dataclass(frozen=True)
class Value:
    """One input or output as the framework sees it."""

    shape: tuple[int, ...]
    dtype: np.dtype
    differentiable: bool = field(init=False, compare=False)
    """Whether it carries a derivative: floats do, integers and booleans
    do not."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "differentiable", self.dtype.kind == "f")

    def to_revmlir(self, array: np.ndarray) -> Any:
        """The argument revmlir takes for ``array``: a number for a 0-d
        array, the array itself otherwise.  A float keeps its precision (a
        numpy scalar of its dtype: a ``float32`` is ``f32`` in revmlir, as
        in JAX without its 64-bit mode); an integer is a Python ``int``."""
        if self.shape:
            return array
        if self.dtype == np.bool_:
            return bool(array)
        return array[()] if self.differentiable else int(array)

    def from_revmlir(self, value: Any) -> np.ndarray:
        """``value`` (a number or an array) as this value's array."""
        return np.asarray(value, dtype=self.dtype)


class Program:
    """``f`` (``@rv.reversible`` or ``@rv.ordinary``) as ``api`` exposes it;
    its signatures are built once per input shapes and dtypes."""

    def __init__(self, function: Any, api: str, checkpointing: CheckpointOptions):
        if not isinstance(function, ReversibleFunction | OrdinaryFunction):
            raise TypeError(f"{api} expects a @rv.reversible or @rv.ordinary function, got {function!r}")
        name = api.removeprefix("rv.")
        policy = CheckpointPolicy.of_options(checkpointing, name)
        if policy is not None:
            require_resumable(function, name)
        self.function = function
        self.api = api
        self.checkpointing: CheckpointOptions = checkpointing if policy is not None else {}
        """``checkpoint=`` and its options, checked, for every pullback
        (``rv.vjp``): the gradient programs follow the policy ``rv.gradient``
        would."""
        self._signatures: dict[tuple[Any, ...], Signature] = {}

    def positional(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """The arguments of a call by position, those given by name put in
        their parameter's place, as a call of ``f`` itself takes them.  A
        struct or a stack is refused: the frameworks pass arrays and
        numbers only."""
        names, name = self.function.parameters, self.function.__name__
        bound = list(bound_by_position(f"{self.api}({name})", names, tuple(args), kwargs))
        for parameter, value in zip(names, bound):
            if isinstance(value, Stack):
                what = "an rv.Stack, which has no array form"
            elif is_struct(value):
                what = f"a struct ({type(value).__name__}): write a function that takes its fields as arguments"
            else:
                continue
            raise TypeError(
                f"{self.api}({name}): the framework passes arrays and numbers only, and argument '{parameter}' is {what}"
            )
        return bound

    def signature(self, shapes: Sequence[tuple[int, ...]], dtypes: Sequence[np.dtype]) -> Signature:
        """The signature for inputs of these shapes and dtypes (cached: it
        is looked up on every call from a framework)."""
        key = (*shapes, *dtypes)
        if (found := self._signatures.get(key)) is None:
            inputs = tuple(Value(tuple(s), np.dtype(d)) for s, d in zip(shapes, dtypes, strict=True))
            found = self._signatures[key] = Signature.of(self, inputs)
        return found


@dataclass(frozen=True, eq=False)
class Signature:
    """``f`` for one list of input shapes and dtypes: what it returns and
    how it runs on numpy arrays.  Compared by identity, so that frameworks
    can key their caches on it."""

    program: Program
    inputs: tuple[Value, ...]
    outputs: tuple[Value, ...]
    """For a reversible function every argument updated; for an ordinary
    one its results, then its arguments as it left them."""
    written: tuple[int, ...]
    """The array arguments a call of ``f`` writes (and so runs on copies of)."""
    specialization: Specialization | OrdinarySpecialization
    """What runs ``f`` for these inputs (native bindings call its code)."""

    @staticmethod
    def of(program: Program, inputs: tuple[Value, ...]) -> Signature:
        function, api = program.function, program.api
        parameters = function.parameters
        if len(inputs) != len(parameters):
            raise TypeError(
                f"{api}({function.__name__}) takes {len(parameters)} argument(s) "
                f"({', '.join(parameters)}), got {len(inputs)}"
            )
        for name, value in zip(parameters, inputs):
            if value.dtype not in DTYPES:
                raise TypeError(
                    f"{api}({function.__name__}): argument '{name}' has dtype {value.dtype}; "
                    f"supported: {', '.join(str(d) for d in DTYPES)}"
                )
        examples = _examples(inputs)
        if isinstance(function, OrdinaryFunction):
            ordinary = function.specialization_for(*examples)
            results = tuple(Value((), _dtype(t)) for t in ordinary.result_types)
            return Signature(program, inputs, (*results, *inputs), ordinary.written, ordinary)
        spec = function.specialization_for(*examples)
        written = tuple(i for i, changed in enumerate(spec.written) if changed)
        return Signature(program, inputs, inputs, written, spec)

    @property
    def name(self) -> str:
        return self.program.function.__name__

    @property
    def examples(self) -> list[Any]:
        """Arguments of its inputs' types (what selects a specialization)."""
        return _examples(self.inputs)

    def second_derivatives(self) -> NotImplementedError:
        """The error for derivatives of the derivative programs."""
        return NotImplementedError(
            f"{self.program.api}({self.name}): second derivatives are not supported yet "
            "(use rv.hessian or rv.hvp on the revmlir function)"
        )

    @property
    def differentiable_inputs(self) -> tuple[int, ...]:
        return tuple(i for i, v in enumerate(self.inputs) if v.differentiable)

    @property
    def differentiable_outputs(self) -> tuple[int, ...]:
        return tuple(i for i, v in enumerate(self.outputs) if v.differentiable)

    def returned(self, host: NumpyMap) -> list[Value]:
        """What ``host`` (``call``, ``tangent`` or ``cotangent``) returns
        for one call."""
        if host is Signature.call:
            return list(self.outputs)
        if host is Signature.tangent:
            return [self.outputs[i] for i in self.differentiable_outputs]
        return [self.inputs[i] for i in self.differentiable_inputs]

    def _arguments(self, arrays: Sequence[np.ndarray]) -> list[Any]:
        """``f``'s arguments for these inputs, which are left alone: the
        arrays ``f`` writes are copies, the others the inputs as they are.
        A framework's arrays are values, which it may hand over as one
        buffer twice (JAX does under ``checkpoint``): so every run, a call
        or a derivative, is given the copies, and none finds an array it
        writes passed twice."""
        args = [v.to_revmlir(np.asarray(a)) for v, a in zip(self.inputs, arrays, strict=True)]
        for i in self.written:
            args[i] = np.array(args[i])
        return args

    def call(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """``f``'s outputs for these inputs (``_arguments``)."""
        args = self._arguments(arrays)
        returned = self.program.function(*args)
        if isinstance(self.program.function, OrdinaryFunction):
            count = len(self.outputs) - len(self.inputs)
            results = [] if count == 0 else [returned] if count == 1 else list(returned)
            values = [*results, *args]
        else:
            values = [returned] if len(args) == 1 else list(returned)
        return [v.from_revmlir(x) for v, x in zip(self.outputs, values, strict=True)]

    def tangent(self, operands: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The tangents of the differentiable outputs (``rv.jvp``);
        ``operands`` are the inputs, then the tangents of the differentiable
        inputs."""
        arrays, dots = operands[: len(self.inputs)], operands[len(self.inputs) :]
        tangents: list[Any] = [None] * len(self.inputs)
        for i, dot in zip(self.differentiable_inputs, dots, strict=True):
            tangents[i] = self.inputs[i].to_revmlir(np.asarray(dot))
        _, found = jvp(self.program.function, self._arguments(arrays), tangents)
        return [self.outputs[i].from_revmlir(found[i]) for i in self.differentiable_outputs]

    def cotangent(self, operands: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The cotangents of the differentiable inputs (``rv.vjp``);
        ``operands`` are the inputs, then the cotangents of the
        differentiable outputs."""
        n = len(self.inputs)
        return self.cotangent_rows(operands[:n], [operands[n:]])[0]

    def cotangent_rows(
        self, arrays: Sequence[np.ndarray], rows: Sequence[Sequence[np.ndarray]]
    ) -> list[list[np.ndarray]]:
        """``cotangent`` for several sets of output cotangents at one
        point (the rows of a Jacobian): one run of ``f`` and one backward
        run per ``REVERSE_JACOBIAN_LANES`` sets (``pullback.batch``)."""
        _, pullback = vjp(self.program.function, *self._arguments(arrays), **self.program.checkpointing)
        lanes = []
        for cts in rows:
            cotangents: list[Any] = [None] * len(self.outputs)
            for i, ct in zip(self.differentiable_outputs, cts, strict=True):
                cotangents[i] = self.outputs[i].to_revmlir(np.asarray(ct))
            lanes.append(cotangents)
        found = []
        for start in range(0, len(lanes), REVERSE_JACOBIAN_LANES):
            found += pullback.batch(lanes[start : start + REVERSE_JACOBIAN_LANES])
        return [[self.inputs[i].from_revmlir(g[i]) for i in self.differentiable_inputs] for g in found]


NumpyMap = Callable[[Signature, Sequence[np.ndarray]], list[np.ndarray]]
"""``Signature.call``, ``Signature.tangent`` or ``Signature.cotangent``: what
the bindings run on their arrays."""


def _examples(inputs: Sequence[Value]) -> list[Any]:
    # a specialization depends on ranks and dtypes, not on sizes
    return [v.to_revmlir(np.zeros((1,) * len(v.shape), v.dtype)) for v in inputs]


def _dtype(type: Any) -> np.dtype:
    """The dtype of an ordinary function's result type."""
    if isinstance(type, Float64Type):
        return np.dtype(np.float64)
    if isinstance(type, Float32Type):
        return np.dtype(np.float32)
    assert isinstance(type, IntegerType)
    return np.dtype(np.bool_) if type.width.data == 1 else np.dtype(f"int{type.width.data}")
