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

The derivatives of ordinary functions take the callback.

``jax.vmap``'s leading batch axis becomes a ``lax.map`` over the mapped
operands (a cotangent at one point runs ``f`` once for all the rows).
Where the handler does not apply (``unsupported`` says why) the binding
calls back into Python (``jax.pure_callback``) instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from weakref import WeakKeyDictionary

import jax
import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp, f32, f64, i1, i32, i64
from xdsl.ir import Attribute

from revmlir.ad.adjoint import adjoint_name, generate_adjoints
from revmlir.ad.tangent import generate_tangents, tangent_name
from revmlir.frontend.derived import derived_backend
from revmlir.frontend.ordinary import OrdinarySpecialization
from revmlir.frontend.specialization import Specialization
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
        if reason := _unpassed([Value((), numpy_dtype(t)) if t in SCALARS else None for t in spec.result_types],
                               spec.result_types, [f"result #{k}" for k in range(len(spec.result_types))]):
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
            return f"{name} is {type} in revmlir, which the custom call does not pass"
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

    @staticmethod
    def of(native: NativeModule, function: str, parameters: Sequence[Parameter], label: str) -> Target:
        entry = Entry(
            native.machine_code.address(function + CIFACE_SUFFIX), tuple(parameters), _describe(native), label
        )
        handler = compile_handler(entry, native)
        name = f"revmlir_{function}_{handler.address:x}"
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(handler.address), platform="cpu")
        return Target(name, entry)

    def __call__(self, *operands: Any) -> list[Any]:
        shapes: dict[int, jax.ShapeDtypeStruct] = {}
        aliases = {}
        for p in self.entry.parameters:
            if p.result is None:
                continue
            if p.rank is None:
                shapes[p.result] = jax.ShapeDtypeStruct((), p.dtype)
            else:
                assert p.source is not None  # an array's seed comes from a cotangent
                shapes[p.result] = jax.ShapeDtypeStruct(np.shape(operands[p.source]), p.dtype)
                aliases[p.source] = p.result
        results = [shapes[r] for r in range(len(shapes))]
        return list(jax.ffi.ffi_call(self.name, results, input_output_aliases=aliases)(*operands))


class NativeTargets:
    """The custom calls of one signature: ``@f``, and ``@f.tan`` and
    ``@f.adj`` when a derivative is first lowered (None where the derived
    program does not run natively)."""

    def __init__(self, signature: Signature):
        self.signature, spec = signature, signature.specialization
        self.label = f"{signature.program.api}({signature.name})"
        parameters: list[Parameter] = []
        self.outputs_from: list[tuple[bool, int]] = []
        """Per output of ``f``: (True, result) or (False, argument), for an
        argument the call does not change, returned as it is."""
        if isinstance(spec, OrdinarySpecialization):
            assert spec.plain_code is not None
            native, function = spec.plain_code
            written = set(spec.written) | native.writes[function]
            results = [Parameter(numpy_dtype(t), None, None, k) for k, t in enumerate(spec.result_types)]
            self.outputs_from = [(True, k) for k in range(len(results))]
        else:
            assert spec.native is not None
            native, function = spec.native, spec.name
            written = set(native.writes[function])
            results = []
        count = len(results)
        for i, value in enumerate(signature.inputs):
            rank = len(value.shape) if value.shape else None
            result = None
            # an ordinary function leaves its scalar arguments alone
            if i in written or rank is None and not isinstance(spec, OrdinarySpecialization):
                result, count = count, count + 1
            self.outputs_from.append((True, result) if result is not None else (False, i))
            parameters.append(Parameter(value.dtype, rank, i, result))
        self.spec = spec
        self.call = Target.of(native, function, [*parameters, *results], self.label)

    def outputs(self, arrays: Sequence[Any]) -> list[Any]:
        """``f``'s outputs: a reversible function's arguments, updated; an
        ordinary one's results, then its arguments as it left them."""
        found = self.call(*arrays)
        return [found[k] if result else arrays[k] for result, k in self.outputs_from]

    @property
    def underived(self) -> str:
        """Why ``tangent`` or ``adjoint`` is None."""
        if isinstance(self.spec, OrdinarySpecialization):
            return "the derivatives of @rv.ordinary functions run through Python"
        return "its derivative program runs on the interpreter"

    @cached_property
    def tangent(self) -> Target | None:
        return self._derived("tangent", generate_tangents, tangent_name)

    @cached_property
    def adjoint(self) -> Target | None:
        return self._derived("adjoint", generate_adjoints, adjoint_name)

    def _derived(
        self, what: str, generate: Callable[[ModuleOp, list[str]], object], name: Callable[[str], str]
    ) -> Target | None:
        """``@f.tan`` or ``@f.adj`` of a reversible function (``what`` and
        how ``derived_backend`` makes it): copies of the arguments (scratch
        results for the arrays it writes), then one tangent or gradient per
        float argument, running in its result.  None where it runs on the
        interpreter (or for an ordinary function, whose derivatives run
        through Python)."""
        spec = self.spec
        if not isinstance(spec, Specialization):
            return None
        _, backend = derived_backend(spec, what, generate)
        if not isinstance(backend, NativeModule):
            return None
        function = name(spec.name)
        inputs, carrying = self.signature.inputs, spec.carrying
        writes = backend.writes[function]
        parameters, scratch = [], len(carrying)
        for i, value in enumerate(inputs):
            rank = len(value.shape) if value.shape else None
            result = None
            if rank is not None and i in writes:
                result, scratch = scratch, scratch + 1
            parameters.append(Parameter(value.dtype, rank, i, result))
        for k, i in enumerate(carrying):
            rank = len(inputs[i].shape) if inputs[i].shape else None
            parameters.append(Parameter(inputs[i].dtype, rank, len(inputs) + k, k))
        return Target.of(backend, function, parameters, self.label)


_targets: WeakKeyDictionary[Signature, NativeTargets] = WeakKeyDictionary()


def native_targets(signature: Signature) -> NativeTargets:
    if (found := _targets.get(signature)) is None:
        found = _targets[signature] = NativeTargets(signature)
    return found


def mapped(run: Callable[..., list[Any]], arrays: Sequence[Any], lead: Sequence[bool], size: int) -> list[Any]:
    """``run`` on ``arrays``, once per index of the leading batch axis of
    those that have one (``lead``) when ``size``."""
    if not size:
        return run(*arrays)

    def one(rows: list[Any]) -> list[Any]:
        found = iter(rows)
        return run(*[next(found) if m else a for a, m in zip(arrays, lead, strict=True)])

    return list(jax.lax.map(one, [a for a, m in zip(arrays, lead, strict=True) if m]))


def call(targets: NativeTargets, arrays: Sequence[Any], lead: Sequence[bool], size: int) -> list[Any]:
    return mapped(lambda *a: targets.outputs(a), arrays, lead, size)


def tangent(target: Target, carried: int, arrays: Sequence[Any], lead: Sequence[bool], size: int) -> list[Any]:
    return mapped(lambda *a: target(*a)[:carried], arrays, lead, size)


def cotangent(
    targets: NativeTargets, target: Target, arrays: Sequence[Any], lead: Sequence[bool], size: int
) -> list[Any]:
    """``f`` on the inputs (once for every row when they are not batched),
    then ``@f.adj`` on its outputs and the cotangents."""
    n, carried = len(targets.signature.inputs), len(targets.signature.differentiable_inputs)
    batched = size and any(lead[:n])
    state = call(targets, arrays[:n], lead[:n], size if batched else 0)
    return mapped(
        lambda *a: target(*a)[:carried], [*state, *arrays[n:]], [bool(batched)] * n + list(lead[n:]), size
    )
