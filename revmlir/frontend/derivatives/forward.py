"""Forward mode from Python: ``rv.jvp``; forward over reverse: ``rv.hvp`` and
``rv.hessian``.

``rv.jvp`` runs ``@f.tan`` (built by ``ad-tangent``) on copies of the
arguments and their tangents.  Hessian-vector products differentiate the
gradient in forward mode: ``@f.grad.lossK`` runs ``f`` and then its adjoint
seeded at the loss (the unit seed, whose tangent is zero), and its tangent
``@f.grad.lossK.tan`` along ``v`` gives the tangents of the input gradients,
``H·v``, in one native call.  The derived functions run natively when
``f``'s specialization does, otherwise on the interpreter.

An ``@rv.ordinary`` function is differentiated through its reversible form,
as ``rv.gradient`` does (``ReversibleCall``: its inputs and outputs among
the form's arguments): forward mode through the Bennett form, Hessians
through the gradient program, the checkpointed one where a loop is marked
(docs/design.md, decision 40).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Unpack
from weakref import WeakKeyDictionary

import numpy as np
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from revmlir.ad.adjoint import gradient_name
from revmlir.ad.matrices import HESSIAN_SUFFIX, generate_hessian_matrices
from revmlir.ad.tangent import generate_hvps, generate_tangents, hvp_name, tangent_name, tangent_type
from revmlir.dialects.rev import LogType
from revmlir.frontend.base.checkpoint_policy import CheckpointOptions, CheckpointPolicy
from revmlir.frontend.base.derived import ReversibleCall, argument_labels, argument_name, derived_backend
from revmlir.frontend.base.float_layout import FloatLayout, all_f64, selected, zeroed_workspaces
from revmlir.frontend.base.specialization import Compiled, Specialization
from revmlir.frontend.base.structs import argument_tuple
from revmlir.frontend.derivatives.blocks import Side, blocks
from revmlir.frontend.derivatives.gradient import (
    checkpointed_call,
    differentiated_specialization,
    loss_position,
    seed_for,
    state_after,
    struct_call,
    takes_stack,
)
from revmlir.frontend.ordinary_code.functions import OrdinaryFunction
from revmlir.frontend.reversible_code.functions import InverseFunction, ReversibleFunction
from revmlir.runtime.backend import Backend

Function = ReversibleFunction | InverseFunction | OrdinaryFunction


@dataclass(frozen=True)
class _Tangents:
    """How a specialization takes tangents, worked out on its first
    derivative call (as ``rv.gradient``'s plan): for small programs the
    Python around a derivative costs more than the derivative."""

    carrying: tuple[int, ...]
    """The arguments that carry a tangent."""
    types: tuple[Attribute, ...]
    """Per argument that carries one, the type of its tangent."""
    logs: frozenset[int]
    """The log numbers, whose tangents ``@f.tan`` takes of their logarithm."""

    @staticmethod
    def of(spec: Specialization) -> _Tangents:
        if (found := _tangents.get(spec)) is None:
            types = [(i, tangent_type(t)) for i, t in enumerate(spec.types)]
            found = _tangents[spec] = _Tangents(
                tuple(i for i, t in types if t is not None),
                tuple(t for _, t in types if t is not None),
                frozenset(i for i, t in enumerate(spec.types) if isinstance(t, LogType)),
            )
        return found

    def inputs(self, spec: Specialization, args: Sequence[Any], tangents: Sequence[Any], what: str) -> list[Any]:
        """What ``@f.tan`` takes per argument that carries a tangent: a
        float, or a fresh shadow array (list) for an array (stack); a log
        number's is taken with respect to its logarithm, ``ẋ / x``.
        ``what`` names them in errors (``the tangent``)."""
        labels = argument_labels(spec, what)
        dots = []
        for i, type in zip(self.carrying, self.types, strict=True):
            dot = seed_for(type, args[i], tangents[i], labels[i])
            dots.append(dot / float(args[i]) if i in self.logs else dot)
        return dots


_tangents: WeakKeyDictionary[Specialization, _Tangents] = WeakKeyDictionary()


def check_count(f: Compiled, args: Sequence[Any], given: Sequence[Any], what: str) -> None:
    if len(given) != len(args):
        raise TypeError(
            f"{f.__name__} takes {len(args)} argument(s), so {len(args)} {what} "
            f"(one per argument, None for zero), got {len(given)}"
        )


def run_tangent(
    spec: Specialization,
    backend: Backend,
    args: Sequence[Any],
    tangents: Sequence[Any],
    function: str | None = None,
) -> tuple[tuple[Any, ...], dict[int, Any]]:
    """Run the tangent program ``@function`` (default ``@f.tan``; the
    inverse tangent ``@f.itan`` takes the same arguments) on copies of
    ``args`` and their tangents; returns the outputs and the output tangents
    by argument index (log numbers: of the logarithm)."""
    plan = _Tangents.of(spec)
    dots = plan.inputs(spec, args, tangents, "the tangent")
    results = backend.call(function or tangent_name(spec.name), *spec.private_copies(args), *dots)
    return results[: len(args)], dict(zip(plan.carrying, results[len(args) :], strict=True))


def per_argument(spec: Specialization, outputs: Sequence[Any], found: dict[int, Any]) -> tuple[Any, ...]:
    """One tangent per argument out of ``run_tangent``'s: a float per float
    scalar (log numbers: with respect to their real value), an array (list)
    per array (stack) of floats, ``0.0`` for other scalars and ``None`` for
    other arrays."""
    results: list[Any] = []
    for i, type in enumerate(spec.types):
        if i not in found:
            results.append(None if isinstance(outputs[i], np.ndarray | list) else 0.0)
        elif isinstance(type, LogType):
            results.append(found[i] * float(outputs[i]))  # ẏ = y · d(log y)
        else:
            results.append(found[i])
    return tuple(results)


def whole_call(spec: Specialization, args: Sequence[Any]) -> ReversibleCall:
    """A reversible specialization's own run: every argument is an input
    and, after the call, an output."""
    every = tuple(range(len(args)))
    return ReversibleCall(spec, tuple(args), every, every)


def differentiated_call(
    f: Any,
    args: Sequence[Any],
    api: str,
    gradient: bool = False,
    policy: CheckpointPolicy | None = None,
    wrt: Collection[int] | None = None,
) -> ReversibleCall:
    """The run of a reversible specialization ``rv.{api}`` differentiates:
    a reversible function's own; an ordinary function's Bennett form in
    forward mode, or with ``gradient`` (Hessians: forward over the gradient
    program) the form ``rv.gradient`` runs, which is the tape-mode form
    with the checkpointed gradient where a loop is marked (docs/design.md,
    decision 40), or its resumable form under a ``checkpoint=`` policy.
    ``wrt``: the arguments differentiated with respect to (default: every
    one), the only ones an ordinary function refuses an int used as a
    float for."""
    if policy is not None:
        return checkpointed_call(f, args, api, policy, wrt)
    if isinstance(f, OrdinaryFunction):
        return f.reversible_call(args, wrt) if gradient else f.forward_call(args, wrt)
    if not isinstance(f, ReversibleFunction | InverseFunction):
        raise TypeError(
            f"rv.{api} expects an @rv.ordinary function, a @rv.reversible function or its inverse, got {f!r}"
        )
    return whole_call(differentiated_specialization(f, args, api), args)


def spread(call: ReversibleCall, values: Sequence[Any]) -> list[Any]:
    """Per argument of ``call.spec``: ``values`` (one per input of ``f``) at
    the arguments receiving the inputs, ``None`` (zero) elsewhere."""
    placed: list[Any] = [None] * len(call.arguments)
    for position, value in zip(call.inputs, values, strict=True):
        placed[position] = value
    return placed


def jvp(f: Function, args: Sequence[Any], tangents: Sequence[Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Forward mode, like ``jax.jvp``: run ``f`` on (copies of) ``args`` and
    push ``tangents`` (one per argument, shaped like it; ``None`` for zero)
    through it.  Returns ``(outputs, output_tangents)``: ``f``'s outputs (a
    reversible function's: every argument after ``f``, as a call returns
    them; an ordinary function's: the values it returns, then every
    argument as it left it) and one tangent per output — a float per float
    scalar (log numbers: with respect to their real value), an array (list)
    per array (stack) of floats, ``0.0`` for other scalars and ``None`` for
    other arrays.  A struct's tangent is an instance of its class holding
    one tangent per field (or ``None``, a zero), and so are the tangents of
    its outputs.  The arguments are not modified."""
    args = argument_tuple(args, "rv.jvp")
    tangents = argument_tuple(tangents, "rv.jvp", "tangents", "the tuple of the arguments' tangents")
    if (structs := struct_call(f, args)) is not None:
        check_count(f, args, tangents, "tangents")
        flat_tangents = structs.layout.flatten_cotangents(tangents, "tangent")
        outputs, dots = jvp(structs.function, structs.layout.flatten(args), flat_tangents)
        return structs.rebuild_outputs(args, outputs), structs.rebuild_outputs(args, dots)
    call = differentiated_call(f, args, "jvp", wrt=_nonzero(tangents))
    check_count(call.spec.function, args, tangents, "tangents")
    outputs, found = spec_jvp(call.spec, call.arguments, spread(call, tangents))
    return tuple(outputs[i] for i in call.outputs), tuple(found[i] for i in call.outputs)


def _nonzero(tangents: Sequence[Any]) -> list[int]:
    """The arguments a tangent is given for: ``None`` is zero, and a
    ``jvp`` differentiates with respect to the others only."""
    return [i for i, tangent in enumerate(tangents) if tangent is not None]


def spec_jvp(
    spec: Specialization, args: Sequence[Any], tangents: Sequence[Any]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``rv.jvp`` of a reversible specialization, a tangent per argument."""
    _, backend = derived_backend(spec, "tangent", generate_tangents)
    outputs, found = run_tangent(spec, backend, args, tangents)
    return outputs, per_argument(spec, outputs, found)


def _no_log_numbers(spec: Specialization, api: str) -> None:
    for i, type in enumerate(spec.types):
        if isinstance(type, LogType):
            raise TypeError(
                f"rv.{api}: {argument_name(spec.function, i)} is a log "
                "number; second derivatives of log numbers are not supported yet"
            )


def hvp(
    f: Function,
    args: Sequence[Any],
    vectors: Sequence[Any],
    iloss: int = 0,
    **checkpointing: Unpack[CheckpointOptions],
) -> tuple[Any, ...]:
    """The Hessian-vector product ``H·v`` of output ``iloss`` (a float
    scalar; outputs as ``rv.gradient`` numbers them) with respect to the
    float arguments, forward over reverse.  ``vectors`` gives ``v`` per
    argument, shaped like it (``None`` for zero); the result has one entry
    per argument, like ``rv.gradient``'s: a float per float scalar, an array
    per float array, ``0.0`` for other scalars and ``None`` for other
    arrays.  ``checkpoint=`` (and its options, as for ``rv.gradient``)
    differentiates the gradient checkpointed under that policy.  The
    arguments are not modified.  A struct's vector is an instance of its
    class holding one per field (or ``None``, a zero), and so is its
    product, as ``rv.gradient`` gives a struct's gradient."""
    args = argument_tuple(args, "rv.hvp")
    vectors = argument_tuple(vectors, "rv.hvp", "vectors", "the tuple of the arguments' vectors")
    if (structs := struct_call(f, args)) is not None:
        check_count(f, args, vectors, "vectors")
        flat_vectors = structs.layout.flatten_cotangents(vectors, "vector")
        flat_args, loss = structs.layout.flatten(args), structs.loss(args, iloss, "hvp")
        return structs.layout.rebuild(args, hvp(structs.function, flat_args, flat_vectors, loss, **checkpointing))
    policy = CheckpointPolicy.of_options(checkpointing, "hvp")
    # every argument is checked: H·v has a row per argument, and the row of
    # one whose vector is None, ∂/∂a (∇f·v), is not zero
    call = differentiated_call(f, args, "hvp", gradient=True, policy=policy)
    check_count(call.spec.function, args, vectors, "vectors")
    loss = loss_position(call, iloss, "hvp")
    products = spec_hvp(call.spec, call.arguments, spread(call, vectors), loss, seeds_like(call))
    return tuple(products[i] for i in call.inputs)


def seeds_like(call: ReversibleCall) -> tuple[Any, ...]:
    """What the seeds of the gradient program (and their tangents) are
    shaped like: the arguments as ``f`` leaves them.  ``f`` keeps the
    shapes of its arguments except a stack's length, so only a call taking
    a stack runs ``f`` first to learn it."""
    return state_after(call) if takes_stack(call) else call.arguments


def own_gradient(spec: Specialization) -> bool:
    """Whether the specialization's module brings its gradient ``@f.grad``
    (a checkpointed one), which takes any seeds, instead of the
    loss-seeded ``@f.grad.lossK`` built on demand."""
    return SymbolTable.lookup_symbol(spec.module, gradient_name(spec.name)) is not None


def spec_hvp(
    spec: Specialization, args: Sequence[Any], vectors: Sequence[Any], loss: int, after: Sequence[Any]
) -> tuple[Any, ...]:
    """``H·v`` of argument ``loss`` after the call, per argument of a
    reversible specialization: the tangent of its gradient program along
    ``vectors``, the seeds' tangents zero, the seeds shaped like ``after``
    (``seeds_like``)."""
    _no_log_numbers(spec, "hvp")
    seeded = None if own_gradient(spec) else loss
    what = "hvp" if seeded is None else f"hvp of #{loss}"
    _, backend = derived_backend(spec, what, partial(generate_hvps, loss=seeded))
    name = hvp_name(spec.name, loss=seeded)
    plan = _Tangents.of(spec)
    carrying = plan.carrying
    seeds = [seed_for(spec.types[i], after[i], 1.0 if i == loss else None, "") for i in carrying]
    dots = plan.inputs(spec, args, vectors, "the vector")
    seed_tangents = [seed_for(spec.types[i], after[i], None, "") for i in carrying]
    results = backend.call(name, *spec.private_copies(args), *seeds, *dots, *seed_tangents)
    products = dict(zip(carrying, results[len(args) + 2 * len(carrying) :], strict=True))
    return tuple(
        products[i] if i in products else (None if isinstance(args[i], np.ndarray | list) else 0.0)
        for i in range(len(args))
    )


def hessian(
    f: Function,
    args: Sequence[Any],
    iloss: int = 0,
    wrt: Sequence[int] | None = None,
    **checkpointing: Unpack[CheckpointOptions],
) -> np.ndarray | tuple[Any, ...]:
    """The Hessian of output ``iloss`` (a float scalar; outputs as
    ``rv.gradient`` numbers them) with respect to the float arguments
    ``wrt`` (default: all of them), as an ``n × n`` array.  The arguments
    are flattened in order (``rv.jacobian``'s layout): a float scalar is one
    entry, a float array its elements in C order, a float stack its
    elements bottom first.  Column ``j`` is the
    Hessian-vector product along the ``j``-th unit vector; when every float
    argument is f64 all columns come from one native call (``@f.hessian``),
    otherwise (and for a checkpointed gradient, marked or under
    ``checkpoint=``, as for ``rv.hvp``) from one ``rv.hvp`` each.  The
    arguments are not modified.

    With struct arguments the Hessian comes in blocks, as ``jax.hessian``
    gives a pytree's (``revmlir.frontend.derivatives.blocks``): one entry
    per argument ``wrt`` (default: every one), each a tuple with one entry
    per argument ``wrt``, a struct's an instance of its class with one
    entry per field, a block shaped as the two fields one after the other
    (``None`` where either carries no derivative)."""
    args = argument_tuple(args, "rv.hessian")
    if (structs := struct_call(f, args)) is not None:
        flat_args = structs.layout.flatten(args)
        # only a layout: the call of the flat function below checks its arguments wrt
        call = differentiated_call(structs.function, flat_args, "hessian", wrt=())
        side = Side.of(structs.layout, args, wrt, call, call.inputs, structs.parameters, "wrt", "rv.hessian")
        loss = structs.loss(args, iloss, "hessian")
        return blocks(hessian(structs.function, flat_args, loss, side.flat, **checkpointing), side, side)
    policy = CheckpointPolicy.of_options(checkpointing, "hessian")
    call = differentiated_call(f, args, "hessian", gradient=True, policy=policy, wrt=wrt)
    spec, state = call.spec, call.arguments
    loss = loss_position(call, iloss, "hessian")
    layout = FloatLayout.of(spec, state, selected(call, call.inputs, wrt, "wrt", "rv.hessian"), "rv.hessian")
    if not layout.size:
        # no column to compute (empty arrays, wrt=()), but f runs once, as
        # for any matrix (rv.jacobian's): its errors raised alike
        state_after(whole_call(spec, state))
        return np.zeros((0, 0))
    if all_f64(spec) and not own_gradient(spec):
        whole = FloatLayout.of(spec, state, None, "rv.hessian")
        entries = layout.entries_within(whole)
        if isinstance(entries, slice):
            columns = range(entries.start, entries.stop)
            rows = _whole_hessian(spec, state, loss, whole, columns)[entries, entries]
        else:
            columns = range(entries.min(), entries.max() + 1)
            rows = _whole_hessian(spec, state, loss, whole, columns)[np.ix_(entries, entries)]
        return np.ascontiguousarray(rows.T)  # the rows of @f.hessian's matrix are the columns
    matrix = np.zeros((layout.size, layout.size))
    after = seeds_like(call)
    for j in range(layout.size):
        matrix[:, j] = layout.gather(spec_hvp(spec, state, layout.unit(j), loss, after))
    return matrix


HESSIAN_LANES = 4
"""Columns ``rv.hessian`` computes per run of the derived program (vector
mode, sharing the function's own computation between them); see
``benchmarks/RESULTS.md`` for how the count was chosen."""


def _whole_hessian(spec: Specialization, args: tuple[Any, ...], iloss: int, whole: Any, columns: range) -> np.ndarray:
    """The Hessian's ``columns`` in one native call of ``@f.hessian`` (see
    ``revmlir.ad.matrices``), as the rows of the matrix returned: each
    array gets zeroed workspaces."""
    lanes = max(1, min(HESSIAN_LANES, len(columns)))
    _, backend = derived_backend(
        spec, f"hessian of #{iloss}, {lanes} lanes", partial(generate_hessian_matrices, loss=iloss, lanes=lanes)
    )
    matrix = np.zeros((whole.size, whole.size))
    arrays = [args[i] for i in whole.positions if isinstance(args[i], np.ndarray)]
    workspaces = zeroed_workspaces(arrays, 1 + 2 * lanes)
    backend.call(
        spec.name + HESSIAN_SUFFIX, *spec.private_copies(args), matrix, columns.start, columns.stop, *workspaces
    )
    return matrix
