"""Reverse mode from Python: ``rv.gradient`` (NiLang's ``gradient(f, args;
iloss)``) and ``rv.vjp``, both by reverse computing.

They run ``f`` forward on copies of the arguments, then ``@f.adj`` (built by
``ad-adjoint``) on the outputs with the output cotangents: it uncomputes the
outputs back to the inputs while the cotangents flow backwards.  Arrays and
stacks of floats get shadow arrays (lists) of the same shape, which ``@f.adj``
updates in place.  ``@f.adj`` runs natively when ``f``'s specialization does,
otherwise on the interpreter.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, runtime_checkable
from weakref import WeakKeyDictionary

import numpy as np
from xdsl.dialects.builtin import ComplexType, MemRefType
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from revmlir.ad.adjoint import adjoint_name, generate_gradients, gradient_name
from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import LogType
from revmlir.frontend.base.checkpoint_policy import CheckpointPolicy
from revmlir.frontend.base.derived import ReversibleCall, adjoint_backend, derived_backend, own_gradient
from revmlir.frontend.base.float_layout import checked_position
from revmlir.frontend.base.specialization import Specialization
from revmlir.frontend.base.structs import Layout, argument_tuple, is_struct
from revmlir.frontend.ordinary_code.functions import OrdinaryFunction
from revmlir.frontend.reversible_code.functions import InverseFunction, ReversibleFunction
from revmlir.runtime.arguments import type_name
from revmlir.runtime.backend import Caller


def differentiated_specialization(f: Any, args: Sequence[Any], api: str) -> Specialization:
    """The specialization ``rv.{api}`` differentiates: ``f``'s, or for
    ``~f`` the one of ``@f.inv`` (its arguments are ``f``'s outputs)."""
    if not isinstance(f, ReversibleFunction | InverseFunction):
        raise TypeError(f"rv.{api} expects a @rv.reversible function or its inverse, got {f!r}")
    return f.specialization_for(*args)


@runtime_checkable
class Differentiable(Protocol):
    """What a function that is not ``@rv.reversible`` implements to be
    differentiated by ``rv.gradient`` and ``rv.vjp``."""

    def reversible_call(self, args: Sequence[Any]) -> ReversibleCall: ...


def checkpointed_call(
    f: Any, args: Sequence[Any], api: str, policy: CheckpointPolicy, wrt: Collection[int] | None = None
) -> ReversibleCall:
    """``f``'s call as a run of its resumable form, whose gradient
    ``checkpoint=`` checkpoints under ``policy`` over primitive steps, with
    respect to the arguments ``wrt`` (default: every one)."""
    require_resumable(f, api)
    return f.resumable_call(args, policy, wrt)


def require_resumable(f: Any, api: str) -> None:
    """A ``TypeError`` unless ``checkpoint=`` applies to ``f``: only an
    ``@rv.ordinary`` function has a resumable form to checkpoint."""
    if getattr(f, "resumable_call", None) is None:
        raise TypeError(
            f"rv.{api}: checkpoint= applies to @rv.ordinary functions, not "
            f"{f!r} (mark a loop of a reversible function with a schedule "
            "and use ad-checkpoint)"
        )


def _reversible_call(f: Any, args: Sequence[Any], api: str, policy: CheckpointPolicy | None = None) -> ReversibleCall:
    if policy is not None:
        return checkpointed_call(f, args, api, policy)
    # checking a protocol costs more than many calls it guards
    if not isinstance(f, ReversibleFunction) and isinstance(f, Differentiable):
        return f.reversible_call(args)
    every = tuple(range(len(args)))
    return ReversibleCall(differentiated_specialization(f, args, api), tuple(args), every, every)


@dataclass(frozen=True)
class Pullback:
    """The cotangent map of one run of ``f`` (``rv.vjp``'s second result).

    Each call starts from its own copy of the state after the run
    (``@f.adj`` restores it to the inputs), so it can be called any number
    of times.
    """

    call: ReversibleCall
    state: tuple[Any, ...]
    """The specialization's arguments after the run."""

    def __call__(self, *cotangents: Any) -> tuple[Any, ...]:
        """One cotangent per output of ``f`` (``None`` for zero), shaped
        like the output (a reversible function's outputs are its
        arguments); returns one cotangent per input: a float for a
        float or log-number scalar (log numbers: with respect to their real
        value), ``∂/∂Re z + i ∂/∂Im z`` for a complex ``z`` (a complex
        cotangent ``c`` weighs the output ``w`` as ``Re(conj(c)·w)``), an array
        (list) for an array (stack) of floats, ``0.0`` for other scalars and
        ``None`` for other arrays and stacks."""
        return self.batch([cotangents])[0]

    def batch(self, lanes: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
        """The pullbacks of several sets of cotangents (each as ``__call__``
        takes them) in one backward run: ``@f.adjL`` with one lane per set,
        which uncomputes ``f`` once for all of them (rows of a Jacobian)."""
        call, state = self.call, self.state
        spec, name = call.spec, call.spec.function.__name__
        if not lanes:
            raise TypeError(f"the pullback of {name} needs at least one set of cotangents")
        outputs, labels = frozenset(call.outputs), call.cotangent_labels()
        seeds = []
        for cotangents in lanes:
            if len(cotangents) != len(call.outputs):
                raise TypeError(
                    f"the pullback of {name} takes {len(call.outputs)} cotangent(s), one "
                    f"per output, got {len(cotangents)}"
                )
            cotangent = dict(zip(call.outputs, cotangents, strict=True))
            # a recomputing gradient starts from the inputs: its tapes are empty
            before = call.arguments if call.recompute else state
            seeds += [
                seed_for(spec.types[i], state[i] if i in outputs else before[i], cotangent.get(i), labels[i])
                for i in spec.carrying
            ]
        n, c = len(state), len(spec.carrying)
        if call.recompute:
            # @f.grad reruns f from its inputs under its schedule, one lane at a time
            run = own_gradient(spec).caller(gradient_name(spec.name), backward=False)
            gradients = [
                _input_cotangents(
                    spec, call.arguments, run([*spec.private_copies(call.arguments), *seeds[k * c : (k + 1) * c]])
                )
                for k in range(len(lanes))
            ]
        else:
            _, backend = adjoint_backend(spec, len(lanes))
            results = backend.call(adjoint_name(spec.name, len(lanes)), *spec.private_copies(state), *seeds)
            gradients = [
                _input_cotangents(spec, state, [*results[:n], *results[n + k * c : n + (k + 1) * c]])
                for k in range(len(lanes))
            ]
        return [tuple([g[i] for i in call.inputs]) for g in gradients]


def _input_cotangents(spec: Specialization, args: Sequence[Any], results: Sequence[Any]) -> tuple[Any, ...]:
    """The per-argument gradients out of what ``@f.adj`` (or ``@f.grad``)
    returned: its inputs (``results[:len(args)]``), then the gradients of the
    arguments that carry one."""
    if (layout := _layouts.get(spec)) is None:
        layout = _layouts[spec] = _GradientLayout(
            tuple(None if isinstance(t, MemRefType | StackType) else 0.0 for t in spec.types),
            tuple(i for i in spec.carrying if isinstance(spec.types[i], LogType)),
        )
    gradients = list(layout.absent)
    for i, found in zip(spec.carrying, results[len(args) :], strict=True):
        gradients[i] = found
    for i in layout.logs:
        gradients[i] /= float(results[i])  # d/dx = d/dlog x / x
    return tuple(gradients)


@dataclass(frozen=True)
class _GradientLayout:
    """Where a specialization's gradients go, worked out once: for small
    programs the Python around a derivative costs more than the derivative."""

    absent: tuple[Any, ...]
    """Per argument, its gradient when it carries none: ``None`` for arrays
    and stacks, ``0.0`` for scalars."""
    logs: tuple[int, ...]
    """The log numbers, whose gradients ``@f.adj`` gives with respect to
    their logarithm."""


_layouts: WeakKeyDictionary[Specialization, _GradientLayout] = WeakKeyDictionary()


def seed_for(type: Attribute | None, output: Any, cotangent: Any, what: str) -> Any:
    """The output gradient ``@f.adj`` takes for one argument: a float, or a
    fresh shadow array (list) for an array (stack).  Every derivative API's
    seeds, tangents and cotangents come through here, so that one that is
    not a number of the argument's kind is one ``TypeError`` naming it
    (``what``): numpy and ``float`` would take ``"1.5"`` and an array of
    strings as numbers, and drop a complex number's imaginary part."""
    if isinstance(output, np.ndarray):
        if cotangent is None:
            return np.zeros(output.shape, output.dtype)
        kinds = "biufc" if output.dtype.kind == "c" else "biuf"
        try:
            given = np.asarray(cotangent)
        except ValueError:  # a ragged nest of lists
            given = None
        if given is None or given.dtype.kind not in kinds:
            numbers = "numbers" if output.dtype.kind == "c" else "real numbers"
            raise TypeError(f"{what} must be an array of {numbers}, got {type_name(cotangent)}")
        if given.shape != output.shape:
            raise TypeError(f"{what} must have the argument's shape {output.shape}, got {given.shape}")
        return np.array(given, dtype=output.dtype, order="C")  # a copy: @f.adj updates it in place
    if isinstance(output, list):
        if cotangent is None:
            return [0.0] * len(output)
        if not isinstance(cotangent, Sequence | np.ndarray) or isinstance(cotangent, str | bytes):
            raise TypeError(f"{what} must be a list of {len(output)} real number(s), got {type_name(cotangent)}")
        if len(cotangent) != len(output):
            raise TypeError(f"{what} must have {len(output)} element(s), got {len(cotangent)}")
        return [_real(c, what) for c in cotangent]
    if cotangent is None:
        return 0.0
    if isinstance(type, ComplexType):
        if not isinstance(cotangent, _NUMBERS):
            raise TypeError(f"{what} must be a number, got {type_name(cotangent)}")
        if isinstance(cotangent, complex | np.complexfloating):
            return complex(cotangent)
    seed = _real(cotangent, what)
    if isinstance(type, LogType):
        seed *= float(output)  # d/dlog x = x · d/dx
    return seed


_NUMBERS = (int, float, complex, np.number, np.bool_)
"""What a seed may be: Python's and numpy's numbers (``bool`` is an
``int``), as arguments may."""


def _real(value: Any, what: str) -> float:
    """``value`` as a float: a real number, anything else (a string, a
    complex number, an array) an error naming ``what``."""
    if not isinstance(value, _NUMBERS) or isinstance(value, complex | np.complexfloating):
        raise TypeError(f"{what} must be a real number, got {type_name(value)}")
    return float(value)


def vjp(
    f: ReversibleFunction | InverseFunction | Differentiable,
    *args: Any,
    checkpoint: str | None = None,
    snapshots: int | None = None,
    memory: int | str | None = None,
    base: int | str | None = None,
) -> tuple[tuple[Any, ...], Pullback | StructPullback]:
    """Run ``f`` on (copies of) ``args``; return its outputs (for a
    reversible function every argument, as a call returns them; for an
    ordinary one what it returns, then every argument as it left it) and the
    pullback mapping output cotangents to input cotangents, like
    ``jax.vjp``.  The arguments are not modified.  ``checkpoint=`` (an
    ``@rv.ordinary`` ``f``) checkpoints the pullback as for ``rv.gradient``:
    it reruns ``f`` from its inputs under the schedule.  Struct arguments
    come back as structs, and so do their cotangents (``StructPullback``)."""
    policy = CheckpointPolicy.of(checkpoint, snapshots, memory, base, api="vjp")
    if (structs := struct_call(f, args)) is not None:
        outputs, pullback = run_call(_reversible_call(structs.function, structs.layout.flatten(args), "vjp", policy))
        return structs.rebuild_outputs(args, outputs), StructPullback(pullback, structs, tuple(args))
    return run_call(_reversible_call(f, args, "vjp", policy))


@dataclass(frozen=True)
class StructCall:
    """A call with struct arguments, as the call of the function taking
    their fields (``revmlir.frontend.base.structs``)."""

    function: ReversibleFunction | InverseFunction | OrdinaryFunction
    """The function taking the fields (``~`` of it for ``~f``)."""
    layout: Layout
    """Which arguments are structs."""
    returned: int
    """How many values ``f`` returns, which lead its outputs (an ordinary
    function's: then its arguments as it left them; a reversible
    function's outputs are its arguments)."""
    parameters: tuple[str, ...]
    """The names of ``f``'s parameters (not of their fields), which
    messages name its arguments by."""

    @property
    def outputs(self) -> Layout:
        return self.layout.after(self.returned)

    def output_values(self, args: Sequence[Any]) -> tuple[Any, ...]:
        """The outputs of the call with ``args`` as far as their structs
        go: a struct output is the argument it was (a new instance of its
        class holds it after the call); a returned value is not known."""
        return (None,) * self.returned + tuple(args)

    def rebuild_outputs(self, args: Sequence[Any], flat: Sequence[Any]) -> tuple[Any, ...]:
        """The outputs (or their tangents) of the call with ``args`` out of
        the flattened call's: each struct a new instance of its class."""
        return self.outputs.rebuild(self.output_values(args), flat)

    def loss(self, args: Sequence[Any], iloss: int, api: str) -> int:
        """Output ``iloss`` among the flattened call's outputs."""
        checked_position(iloss, "iloss", None, f"the outputs of {self.function.__name__}", f"rv.{api}")
        return self.outputs.flat_output(self.output_values(args), iloss)


@dataclass(frozen=True)
class StructPullback:
    """The pullback of a function called with structs: it takes and
    returns cotangents shaped like the outputs and the arguments, a
    struct's as an instance of its class holding one cotangent per field
    (or ``None``, a zero), as JAX's pullbacks take and give pytrees."""

    pullback: Pullback
    """The pullback of the function taking the structs' fields."""
    call: StructCall
    args: tuple[Any, ...]

    def __call__(self, *cotangents: Any) -> tuple[Any, ...]:
        return self.batch([cotangents])[0]

    def batch(self, lanes: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
        outputs = self.call.outputs
        for cotangents in lanes:
            if len(cotangents) != len(outputs.structs):
                raise TypeError(
                    f"the pullback of {self.call.function.__name__} takes {len(outputs.structs)} cotangent(s), "
                    f"one per output, got {len(cotangents)}"
                )
        flat = [outputs.flatten_cotangents(c) for c in lanes]
        return [self.call.layout.rebuild(self.args, g) for g in self.pullback.batch(flat)]


def struct_call(f: Any, args: Sequence[Any]) -> StructCall | None:
    """A call of ``f`` (a compiled function or ``~f``) with struct
    arguments, or None without them."""
    function = f.function if isinstance(f, InverseFunction) else f
    if not isinstance(function, ReversibleFunction | OrdinaryFunction):
        return None
    if not (function.struct_parameters or any(is_struct(a) for a in args)):
        return None
    if (layout := function.layout_of(args)) is None:
        return None
    flat = function.flattened(layout)
    if isinstance(flat, OrdinaryFunction):
        returned = len(flat.specialization_for(*layout.flatten(args)).result_types)
        return StructCall(flat, layout, returned, tuple(function.parameters))
    return StructCall(~flat if isinstance(f, InverseFunction) else flat, layout, 0, tuple(function.parameters))


def run_call(call: ReversibleCall) -> tuple[tuple[Any, ...], Pullback]:
    """``rv.vjp`` of one run of a reversible specialization."""
    state = state_after(call)
    return tuple(state[i] for i in call.outputs), Pullback(call, state)


def state_after(call: ReversibleCall) -> tuple[Any, ...]:
    """The specialization's arguments after running it on copies of
    ``call.arguments``."""
    spec = call.spec
    forward = spec.native if spec.native is not None else spec.interpreter
    return tuple(forward.call(spec.name, *spec.private_copies(call.arguments)))


def takes_stack(call: ReversibleCall) -> bool:
    """Whether ``f`` takes a stack, whose shadow (a seed of the gradient
    program) has the length of the stack ``f`` leaves, known only after
    running ``f``.  A tape of an ordinary function's reversible form is no
    such stack: ``f`` leaves it as it found it."""
    return any(isinstance(call.spec.types[i], StackType) for i in call.inputs)


def loss_position(call: ReversibleCall, iloss: int, api: str) -> int:
    """The argument of ``call.spec`` holding output ``iloss`` of ``f``,
    checked to be a float scalar."""
    outputs = call.outputs
    owner = f"the {len(outputs)} outputs of {call.spec.function.__name__}"
    position = outputs[checked_position(iloss, "iloss", len(outputs), owner, f"rv.{api}")]
    if position not in call.spec.carrying or isinstance(call.arguments[position], (np.ndarray, list)):
        raise TypeError(
            f"rv.{api}: {call.output_name(iloss)} is not a float scalar; only float scalar outputs "
            "can be the loss (use rv.vjp for arrays)"
        )
    return position


def gradient(
    f: ReversibleFunction | InverseFunction | Differentiable,
    args: Sequence[Any],
    iloss: int = 0,
    *,
    checkpoint: str | None = None,
    snapshots: int | None = None,
    memory: int | str | None = None,
    base: int | str | None = None,
) -> tuple[Any, ...]:
    """``∂(output iloss of f) / ∂(each input)``, as a tuple with one entry
    per argument: a float per float scalar (log numbers: with respect to
    their real value), ``∂/∂Re z + i ∂/∂Im z`` per complex ``z`` (NiLang's
    convention), an array per array of floats, ``0.0`` for other scalars and
    ``None`` for integer arrays (an int that an ``@rv.ordinary`` function
    uses as a float is refused unless its parameter is annotated ``int``).  A reversible function's outputs are its
    arguments after the call; an ordinary function's are the values it
    returns, then its arguments.  The loss must be a scalar (of a complex
    loss, its real part is differentiated); for array outputs use
    ``rv.vjp``.  The arguments are not modified.  A struct argument gets
    its gradient as an instance of its class holding one gradient per
    field, like JAX's pytrees.

    For an ``@rv.ordinary`` ``f``, ``checkpoint=`` checkpoints the gradient
    over ``f``'s primitive steps, with no annotation (docs/checkpointing.md,
    "Checkpointing anywhere"): ``"bisection"``, ``"binomial"`` with
    ``snapshots=k``, ``"store_all"``, or ``"auto"`` with a ``memory=``
    budget (bytes or ``"64MB"``); ``base=b`` steps per checkpointed step
    (``"auto"``, the default: from the size of one snapshot)."""
    args = argument_tuple(args, "rv.gradient")
    if (structs := struct_call(f, args)) is not None:
        flat_args, loss = structs.layout.flatten(args), structs.loss(args, iloss, "gradient")
        flat = gradient(
            structs.function, flat_args, loss, checkpoint=checkpoint, snapshots=snapshots, memory=memory, base=base
        )
        return structs.layout.rebuild(args, flat)
    call = _reversible_call(
        f, args, "gradient", CheckpointPolicy.of(checkpoint, snapshots, memory, base, api="gradient")
    )
    plans = _gradient_plans.setdefault(call.spec, {})
    if (plan := plans.get((iloss, call.inputs, call.outputs))) is None:
        plan = plans[(iloss, call.inputs, call.outputs)] = _GradientPlan.of(call, iloss)
    if plan.run is None:
        # the seed of a log number's logarithm is its value after f, and a
        # stack's shadow has the length of the stack f leaves
        _, pullback = vjp(f, *args)
        cotangents: list[Any] = [None] * len(call.outputs)
        cotangents[iloss] = 1.0
        return pullback(*cotangents)
    arguments = call.arguments
    seeds = [_zeros(arguments[i]) if seed is None else seed for i, seed in plan.seeds]
    gradients = _input_cotangents(call.spec, arguments, plan.run([*call.spec.private_copies(arguments), *seeds]))
    return tuple([gradients[i] for i in call.inputs])


@dataclass(frozen=True)
class _GradientPlan:
    """What ``rv.gradient`` does for one specialization and loss, worked out
    on the first call: for small programs the Python around a gradient
    costs more than the gradient."""

    run: Caller | None
    """``@f.grad``'s caller; ``None`` for a log-number loss or a stack
    argument (the pullback seeds the loss with its value, and the stack's
    shadow with one zero per element of the stack ``f`` leaves)."""
    seeds: tuple[tuple[int, Any], ...]
    """Per argument carrying a gradient: its position and its seed (1.0 for
    the loss, 0.0 for other scalars), ``None`` for a fresh zero shadow."""

    @staticmethod
    def of(call: ReversibleCall, iloss: int) -> _GradientPlan:
        spec = call.spec
        position = loss_position(call, iloss, "gradient")
        if isinstance(spec.types[position], LogType) or takes_stack(call):
            return _GradientPlan(None, ())
        if SymbolTable.lookup_symbol(spec.module, gradient_name(spec.name)) is not None:
            # a gradient of its own (checkpointed loops), taking any seeds
            backend, name = own_gradient(spec), gradient_name(spec.name)
        else:
            generate = partial(generate_gradients, loss=position)
            _, backend = derived_backend(spec, f"gradient of #{position}", generate)
            name = gradient_name(spec.name, position)
        seeds = tuple(
            (i, None if isinstance(spec.types[i], MemRefType | StackType) else float(i == position))
            for i in spec.carrying
        )
        return _GradientPlan(backend.caller(name, backward=False), seeds)


_gradient_plans: WeakKeyDictionary[Specialization, dict[tuple[Any, ...], _GradientPlan]] = WeakKeyDictionary()


def _zeros(value: Any) -> Any:
    """A zero shadow for an array (a list for a stack)."""
    return np.zeros(value.shape, value.dtype) if isinstance(value, np.ndarray) else [0.0] * len(value)
