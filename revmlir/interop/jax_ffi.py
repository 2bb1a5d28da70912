"""``rv.to_jax``'s primitives as XLA FFI custom calls of native code.

Under ``jax.jit`` on the CPU, each primitive of a function that runs
natively becomes custom calls whose handlers (``revmlir.interop.xla_ffi``)
call the compiled entry points on XLA's buffers, with no Python and no
copies but those XLA makes for aliased results:

* ``revmlir_call``: ``@f`` on the arguments (for an ordinary function its
  plain code ``@f.plain``, with zero result slots); an array ``f`` writes
  runs in its result buffer (aliased to its argument), one it only reads
  is returned as the argument itself;
* ``revmlir_tangent``: ``@f.tan`` on copies of the arguments, its tangents
  running in the tangent results;
* ``revmlir_cotangent``: ``@f`` as above, then ``@f.adj`` on its outputs,
  the cotangents running in the gradient results: two custom calls.

An ordinary function's derivatives run the derived programs of its Bennett
form (``Run``), except the checkpointed gradient, which takes the callback.

``jax.vmap``'s leading batch axis becomes one custom call of a batched
handler, which loops over the rows in native code (``Target.rows``): the
mapped operands give a row each, the others the same value to every row.
A cotangent at one point (``jax.jacrev``) runs ``f`` once, then the batched
``@f.adj`` from a copy of its outputs per row.
Where the handler does not apply (``unsupported`` says why) the binding
calls back into Python instead (``revmlir.interop.jax``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any
from weakref import WeakKeyDictionary

import jax
import jax.numpy as jnp
from xdsl.dialects.builtin import MemRefType, ModuleOp, f32, f64, i1, i32, i64
from xdsl.ir import Attribute

from revmlir.ad.adjoint import adjoint_name, generate_adjoints
from revmlir.ad.tangent import generate_tangents, tangent_name
from revmlir.frontend.base.derived import derived_backend
from revmlir.frontend.base.specialization import Specialization
from revmlir.frontend.base.types import describe_type
from revmlir.frontend.ordinary_code.functions import OrdinarySpecialization
from revmlir.interop.program import Signature, Value
from revmlir.interop.xla_ffi import Entry, Parameter, compile_handler
from revmlir.lowering.std_to_llvm import CIFACE_SUFFIX
from revmlir.runtime.native import NativeModule
from revmlir.runtime.values import numpy_dtype
from revmlir.runtime_checks import check_error_slot

LOWERINGS = ("auto", "ffi", "callback")
"""``rv.to_jax(f, lowering=…)``: the custom call where it applies (else
the callback), the custom call or an error, or always the callback."""


def unsupported(signature: Signature) -> str | None:
    """Why ``signature``'s call cannot be a custom call, or None."""
    spec = signature.specialization
    if isinstance(spec, OrdinarySpecialization):
        if spec.plain_code is None:
            return "it runs on the interpreter"
        types = spec.types
        if reason := _unpassed(
            [Value((), numpy_dtype(t)) if t in SCALARS else None for t in spec.result_types],
            spec.result_types,
            [f"result #{k}" for k in range(len(spec.result_types))],
        ):
            return reason
    else:
        if spec.native is None:
            return "it runs on the interpreter"
        if spec.carrying != signature.differentiable_inputs:
            return "its derivatives do not follow the float arguments"
        types = spec.types
    names = [f"argument '{name}'" for name in signature.program.function.parameters]
    return _unpassed(signature.inputs, types, names)


SCALARS = (f64, f32, i64, i32, i1)
"""The scalar types of the values a custom call passes (``Value``'s dtypes)."""


def _unpassed(values: Sequence[Value | None], types: Sequence[Attribute], names: Sequence[str]) -> str | None:
    """Why a value of revmlir's ``types`` is not what the buffer of the
    value of the same position holds, or None when each is."""
    for value, type, name in zip(values, types, names, strict=True):
        element, shape = (type.element_type, type.get_shape()) if isinstance(type, MemRefType) else (type, ())
        if (
            value is None
            or element not in SCALARS
            or numpy_dtype(element) != value.dtype
            or len(shape) != len(value.shape)
            or any(d >= 0 for d in shape)
        ):
            return f"{name} is {describe_type(type)} in revmlir, which the custom call does not pass"
    return None


def _describe(native: NativeModule) -> Callable[[list[int]], str]:
    """The message of the error a failed check left in an error slot."""

    def describe(slot: list[int]) -> str:
        try:
            check_error_slot(native.check_table, slot)
        except Exception as error:  # noqa: BLE001 - the message is what crosses XLA
            return f"{type(error).__name__}: {error}"
        return "revmlir: the run failed without a check"

    return describe


@dataclass(frozen=True)
class Target:
    """A registered custom call of one native entry point."""

    name: str
    entry: Entry
    native: NativeModule
    """The module owning the entry point's machine code."""
    function: str
    """The entry point's name in it."""
    _batched: dict[tuple[bool, ...], Target] = field(default_factory=dict, compare=False, repr=False)
    """Its batched custom calls, by the operands they map."""

    @staticmethod
    def of(native: NativeModule, function: str, parameters: Sequence[Parameter], label: str) -> Target:
        address = native.machine_code.address(function + CIFACE_SUFFIX)
        return Target.register(Entry(address, tuple(parameters), _describe(native), label), native, function)

    @staticmethod
    def register(entry: Entry, native: NativeModule, function: str) -> Target:
        handler = compile_handler(entry, native)
        name = f"revmlir_{function}_{handler.address:x}"
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(handler.address), platform="cpu")
        return Target(name, entry, native, function)

    def __call__(self, *operands: Any, size: int = 0) -> list[Any]:
        """The custom call; a batched one's results have ``size`` rows."""
        batch = (size,) if self.entry.batched else ()
        shapes: dict[int, jax.ShapeDtypeStruct] = {}
        aliases = {}
        for p in self.entry.parameters:
            if p.result is None:
                continue
            shapes[p.result] = jax.ShapeDtypeStruct((*batch, *(p.shape or ())), p.dtype)
            # a row's result runs in the row of the argument it starts from
            if p.shape is not None and p.source is not None and p.mapped == self.entry.batched:
                aliases[p.source] = p.result
        results = [shapes[r] for r in range(len(shapes))]
        return list(jax.ffi.ffi_call(self.name, results, input_output_aliases=aliases)(*operands))

    def rows(self, arrays: Sequence[Any], lead: Sequence[bool], size: int) -> list[Any]:
        """Its results for ``arrays``, a row per index of the leading batch
        axis of those that have one (``lead``) when ``size``: one custom
        call of a handler that loops over the rows."""
        if not size:
            return self(*arrays)
        if not any(lead):
            return [_rows(r, False, size) for r in self(*arrays)]
        lead = tuple(lead)
        if (batched := self._batched.get(lead)) is None:
            parameters = tuple(
                replace(p, mapped=p.source is not None and lead[p.source]) for p in self.entry.parameters
            )
            entry = replace(self.entry, parameters=parameters, batched=True)
            batched = self._batched[lead] = Target.register(entry, self.native, self.function)
        return batched(*arrays, size=size)


def _rows(array: Any, mapped: bool, size: int) -> Any:
    """``array`` with ``size`` rows: itself when it has them, else repeated."""
    return array if mapped or not size else jnp.broadcast_to(array, (size, *array.shape))


@dataclass(frozen=True)
class Run:
    """``f``'s call as a run of a reversible specialization, laid out as
    ``ReversibleCall`` lays it out: what the derivative programs take.  A
    reversible function is its own run; an ordinary one runs its Bennett
    form, which also takes zero result slots and zero output arrays."""

    spec: Specialization
    values: tuple[Value, ...]
    """Per argument of the run: its dtype and shape."""
    initial: tuple[int | None, ...]
    """Per argument: the input of ``f`` it starts as, or None for zero."""
    outputs: tuple[int, ...]
    """Per output of ``f``: the argument holding it after the run."""
    gradients: bool
    """Whether ``@f.adj`` of this run is ``f``'s reverse mode (not for an
    ordinary function with a checkpointed loop or a ``checkpoint=`` policy,
    whose gradient reruns it)."""

    @staticmethod
    def of(signature: Signature) -> Run:
        spec, inputs = signature.specialization, signature.inputs
        n = len(inputs)
        if isinstance(spec, Specialization):
            return Run(spec, inputs, tuple(range(n)), tuple(range(n)), True)
        count, written = len(spec.result_types), spec.written
        slots = tuple(Value((), numpy_dtype(t)) for t in spec.result_types)
        out = {i: n + count + k for k, i in enumerate(written)}
        return Run(
            spec.reversible,
            (*inputs, *slots, *(inputs[i] for i in written)),
            (*range(n), *[None] * (count + len(written))),
            (*range(n, n + count), *(out.get(i, i) for i in range(n))),
            not spec.checkpointed and not signature.program.checkpointing,
        )


class _Results:
    """Numbers result buffers: those JAX reads come first, the ones taken
    after (scratch, or a call's written arrays) follow."""

    def __init__(self, first: int):
        self.count = first

    def take(self) -> int:
        self.count += 1
        return self.count - 1


class NativeTargets:
    """The custom calls of one signature: ``f``'s call, and the tangent
    and adjoint programs of its run when a derivative is first lowered
    (None where they do not run natively)."""

    def __init__(self, signature: Signature):
        self.signature, self.spec = signature, signature.specialization
        self.label = f"{signature.program.api}({signature.name})"
        self.run = Run.of(signature)
        if isinstance(self.spec, OrdinarySpecialization):
            self.call, self.outputs_from = self._plain(self.spec)
        else:
            self.call, self.outputs_from = self._forward()

    def _plain(self, spec: OrdinarySpecialization) -> tuple[Target, list[tuple[bool, int]]]:
        """An ordinary function's call: ``@f.plain`` on its arguments and
        zero result slots; it leaves its scalar arguments alone."""
        assert spec.plain_code is not None
        native, function = spec.plain_code
        written = set(spec.written) | native.writes[function]
        results = _Results(len(spec.result_types))
        parameters = []
        outputs_from = [(True, k) for k in range(len(spec.result_types))]
        for i, value in enumerate(self.signature.inputs):
            result = results.take() if value.shape and i in written else None
            outputs_from.append((True, result) if result is not None else (False, i))
            parameters.append(Parameter(value.dtype, _shape(value), i, result))
        slots = [Parameter(numpy_dtype(t), None, None, k) for k, t in enumerate(spec.result_types)]
        return Target.of(native, function, [*parameters, *slots], self.label), outputs_from

    def _forward(self) -> tuple[Target, list[tuple[bool, int]]]:
        """The run itself: per argument, (True, result) for what it leaves
        in a result buffer, or (False, input) for an array it only reads,
        which is the input as it was passed."""
        spec, run = self.run.spec, self.run
        assert spec.native is not None
        written = spec.native.writes[spec.name]
        results, parameters = _Results(0), []
        state: list[tuple[bool, int]] = []
        for p, (value, start) in enumerate(zip(run.values, run.initial, strict=True)):
            result = None
            if value.shape and start is not None and p not in written:
                state.append((False, start))
            else:
                result = results.take()
                state.append((True, result))
            parameters.append(Parameter(value.dtype, _shape(value), start, result))
        return Target.of(spec.native, spec.name, parameters, self.label), state

    def outputs(self, arrays: Sequence[Any], lead: Sequence[bool], size: int) -> list[Any]:
        """``f``'s outputs (``size`` rows of them when ``size``): a
        reversible function's arguments, updated; an ordinary one's
        results, then its arguments as it left them."""
        found = self.call.rows(arrays, lead, size)
        return [found[k] if result else _rows(arrays[k], lead[k], size) for result, k in self.outputs_from]

    def state(self, arrays: Sequence[Any], lead: Sequence[bool], size: int) -> list[tuple[Any, bool]]:
        """The run's arguments after it (``forward``'s), each with whether
        it has ``size`` rows: an array the run only reads is its input."""
        assert self.forward is not None
        target, state = self.forward
        found = target.rows(arrays, lead, size)
        return [(found[k], bool(size)) if result else (arrays[k], lead[k]) for result, k in state]

    @cached_property
    def forward(self) -> tuple[Target, list[tuple[bool, int]]] | None:
        """The run for the adjoint: ``f``'s call for a reversible function,
        the Bennett form for an ordinary one (None on the interpreter)."""
        if self.run.spec is self.spec:
            return self.call, self.outputs_from
        return self._forward() if self.run.spec.native is not None else None

    @property
    def underived(self) -> str:
        """Why ``tangent`` or ``adjoint`` is None."""
        if not self.run.gradients:
            return "the gradient of a checkpointed @rv.ordinary function reruns it through Python"
        return "its derivative program runs on the interpreter"

    @cached_property
    def tangent(self) -> Target | None:
        return self._derived("tangent", generate_tangents, tangent_name, forward=True)

    @cached_property
    def adjoint(self) -> Target | None:
        if not self.run.gradients or self.forward is None:
            return None
        return self._derived("adjoint", generate_adjoints, adjoint_name, forward=False)

    def _derived(
        self,
        what: str,
        generate: Callable[[ModuleOp, list[str]], object],
        name: Callable[[str], str],
        forward: bool,
    ) -> Target | None:
        """``@f.tan`` or ``@f.adj`` of the run (``what`` and how
        ``derived_backend`` makes it): its arguments, on copies (scratch
        results for the arrays it writes or starts from zero), then one
        tangent or gradient per float argument.  The tangent program starts
        from the inputs and the tangents of the float ones, and leaves the
        output tangents in the results JAX reads; the adjoint starts from
        the run's arguments after it and the cotangents of the float
        outputs, and leaves the input gradients there.  None where it runs
        on the interpreter."""
        run, signature = self.run, self.signature
        _, backend = derived_backend(run.spec, what, generate)
        if not isinstance(backend, NativeModule):
            return None
        function = name(run.spec.name)
        writes = backend.writes[function]
        count = len(run.values)
        inputs = list(signature.differentiable_inputs)
        outputs = [run.outputs[o] for o in signature.differentiable_outputs]
        # a tangent starts at an input and ends at an output; a gradient
        # starts at an output and ends at an input
        given, wanted = (inputs, outputs) if forward else (outputs, inputs)
        operands = len(signature.inputs) if forward else count
        results = _Results(len(wanted))
        parameters = []
        for p, value in enumerate(run.values):
            start = run.initial[p] if forward else p
            result = results.take() if value.shape and (start is None or p in writes) else None
            parameters.append(Parameter(value.dtype, _shape(value), start, result))
        for k, c in enumerate(run.spec.carrying):
            value, at_input = run.values[c], run.initial[c]
            starts, ends = (at_input, c) if forward else (c, at_input)
            source = operands + given.index(starts) if starts in given else None
            into = None
            if ends in wanted:
                into = wanted.index(ends)
            elif value.shape and (source is None or count + k in writes):
                into = results.take()
            parameters.append(Parameter(value.dtype, _shape(value), source, into))
        return Target.of(backend, function, parameters, self.label)


def _shape(value: Value) -> tuple[int, ...] | None:
    """A parameter's shape: None for a scalar."""
    return value.shape if value.shape else None


_targets: WeakKeyDictionary[Signature, NativeTargets] = WeakKeyDictionary()


def native_targets(signature: Signature) -> NativeTargets:
    if (found := _targets.get(signature)) is None:
        found = _targets[signature] = NativeTargets(signature)
    return found


def call(targets: NativeTargets, arrays: Sequence[Any], lead: Sequence[bool], size: int) -> list[Any]:
    return targets.outputs(arrays, lead, size)


def tangent(target: Target, carried: int, arrays: Sequence[Any], lead: Sequence[bool], size: int) -> list[Any]:
    return target.rows(arrays, lead, size)[:carried]


def cotangent(
    targets: NativeTargets, target: Target, arrays: Sequence[Any], lead: Sequence[bool], size: int
) -> list[Any]:
    """``f`` on the inputs (once for all the rows when they are not
    batched, as in ``jacrev``), then ``@f.adj`` on its outputs and the
    cotangents: each row of the batched adjoint starts from a copy of the
    one state."""
    n, carried = len(targets.signature.inputs), len(targets.signature.differentiable_inputs)
    state = targets.state(arrays[:n], lead[:n], size if any(lead[:n]) else 0)
    return target.rows([*(a for a, _ in state), *arrays[n:]], [*(m for _, m in state), *lead[n:]], size)[:carried]
