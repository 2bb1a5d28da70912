"""Forward mode from Python: ``rv.jvp``; forward over reverse: ``rv.hvp`` and
``rv.hessian``.

``rv.jvp`` runs ``@f.tan`` (built by ``ad-tangent``) on copies of the
arguments and their tangents.  Hessian-vector products differentiate the
gradient in forward mode: ``@f.grad.lossK`` runs ``f`` and then its adjoint
seeded at the loss (the unit seed, whose tangent is zero), and its tangent
``@f.grad.lossK.tan`` along ``v`` gives the tangents of the input gradients,
``H·v``, in one native call.  The derived functions run natively when
``f``'s specialization does, otherwise on the interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
from xdsl.ir import Attribute

from revmlir.frontend.api import InverseFunction, ReversibleFunction, Specialization
from revmlir.frontend.gradient import (
    _is_log,
    _seed,
    _specialization,
    derived_backend,
    loss_index,
)
from revmlir.runtime.backend import Backend


def _carrying(spec: Specialization) -> list[int]:
    from revmlir.ad.tangent import tangent_type

    return [i for i, t in enumerate(spec.types) if tangent_type(t) is not None]


def check_count(f: ReversibleFunction | InverseFunction, args: Sequence[Any], given: Sequence[Any], what: str) -> None:
    if len(given) != len(args):
        raise TypeError(
            f"{f.__name__} takes {len(args)} argument(s), so {len(args)} {what} "
            f"(one per argument, None for zero), got {len(given)}"
        )


def _input_tangent(type: Attribute, arg: Any, tangent: Any, what: str) -> Any:
    """What ``@f.tan`` takes for one argument: a float, or a fresh shadow
    array (list) for an array (stack).  A log number's tangent is taken with
    respect to its logarithm: ``ẋ / x``."""
    from revmlir.ad.tangent import tangent_type

    dot = _seed(tangent_type(type), arg, tangent, what)  # type: ignore[arg-type]
    return dot / float(arg) if _is_log(type) else dot


def _run_tangent(
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
    from revmlir.ad.tangent import tangent_name

    name = spec.function.__name__
    carrying = _carrying(spec)
    dots = [
        _input_tangent(spec.types[i], args[i], tangents[i], f"tangent #{i} of {name}")
        for i in carrying
    ]
    results = backend.call(function or tangent_name(spec.name), *spec.private_copies(args), *dots)
    return results[: len(args)], dict(zip(carrying, results[len(args) :], strict=True))


def per_argument(spec: Specialization, outputs: Sequence[Any], found: dict[int, Any]) -> tuple[Any, ...]:
    """One tangent per argument out of ``_run_tangent``'s: a float per float
    scalar (log numbers: with respect to their real value), an array (list)
    per array (stack) of floats, ``0.0`` for other scalars and ``None`` for
    other arrays."""
    results: list[Any] = []
    for i, type in enumerate(spec.types):
        if i not in found:
            results.append(None if isinstance(outputs[i], np.ndarray | list) else 0.0)
        elif _is_log(type):
            results.append(found[i] * float(outputs[i]))  # ẏ = y · d(log y)
        else:
            results.append(found[i])
    return tuple(results)


def jvp(
    f: ReversibleFunction | InverseFunction, args: Sequence[Any], tangents: Sequence[Any]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Forward mode, like ``jax.jvp``: run ``f`` on (copies of) ``args`` and
    push ``tangents`` (one per argument, shaped like it; ``None`` for zero)
    through it.  Returns ``(outputs, output_tangents)``: every argument after
    ``f`` (as a call returns them), and one tangent per argument — a float per
    float scalar (log numbers: with respect to their real value), an array
    (list) per array (stack) of floats, ``0.0`` for other scalars and
    ``None`` for other arrays.  The arguments are not modified."""
    args, tangents = tuple(args), tuple(tangents)
    spec = _specialization(f, args, "jvp")
    check_count(spec.function, args, tangents, "tangents")
    from revmlir.ad.tangent import generate_tangents

    _, backend = derived_backend(spec, "tangent", generate_tangents)
    outputs, found = _run_tangent(spec, backend, args, tangents)
    return outputs, per_argument(spec, outputs, found)


def _no_log_numbers(spec: Specialization, api: str) -> None:
    for i, type in enumerate(spec.types):
        if _is_log(type):
            raise TypeError(
                f"rv.{api}: argument #{i} of {spec.function.__name__} is a log "
                "number; second derivatives of log numbers are not supported yet"
            )


def hvp(
    f: ReversibleFunction | InverseFunction, args: Sequence[Any], vectors: Sequence[Any], iloss: int = 0
) -> tuple[Any, ...]:
    """The Hessian-vector product ``H·v`` of output ``iloss`` (a float
    scalar) with respect to the float arguments, forward over reverse.
    ``vectors`` gives ``v`` per argument, shaped like it (``None`` for zero);
    the result has one entry per argument, like ``rv.gradient``'s: a float
    per float scalar, an array per float array, ``0.0`` for other scalars and
    ``None`` for other arrays.  The arguments are not modified."""
    from revmlir.ad.tangent import generate_hvps, hvp_name

    args, vectors = tuple(args), tuple(vectors)
    spec = _specialization(f, args, "hvp")
    check_count(spec.function, args, vectors, "vectors")
    iloss = loss_index(spec, args, iloss, "hvp")
    _no_log_numbers(spec, "hvp")
    _, backend = derived_backend(spec, f"hvp of #{iloss}", partial(generate_hvps, loss=iloss))
    carrying = _carrying(spec)
    name = spec.function.__name__
    seeds = [_seed(spec.types[i], args[i], 1.0 if i == iloss else None, "") for i in carrying]
    dots = [_input_tangent(spec.types[i], args[i], vectors[i], f"vector #{i} of {name}") for i in carrying]
    seed_tangents = [_seed(spec.types[i], args[i], None, "") for i in carrying]
    results = backend.call(
        hvp_name(spec.name, loss=iloss), *spec.private_copies(args), *seeds, *dots, *seed_tangents
    )
    products = dict(zip(carrying, results[len(args) + 2 * len(carrying) :], strict=True))
    return tuple(
        products[i]
        if i in products
        else (None if isinstance(args[i], np.ndarray | list) else 0.0)
        for i in range(len(args))
    )


def hessian(
    f: ReversibleFunction | InverseFunction, args: Sequence[Any], iloss: int = 0, wrt: Sequence[int] | None = None
) -> np.ndarray:
    """The Hessian of output ``iloss`` (a float scalar) with respect to the
    float inputs ``wrt`` (default: all of them), as an ``n × n`` array.  The
    inputs are flattened in argument order (``rv.jacobian``'s layout): a
    float scalar is one entry, a float array its elements in C order.
    Column ``j`` is the Hessian-vector product along the ``j``-th unit
    vector; when every float argument is f64 all columns come from one
    native call (``@f.hessian``), otherwise from one ``rv.hvp`` each.  The
    arguments are not modified."""
    from revmlir.frontend.jacobian import FloatLayout, all_f64

    args = tuple(args)
    spec = _specialization(f, args, "hessian")
    iloss = loss_index(spec, args, iloss, "hessian")
    layout = FloatLayout.of(spec, args, wrt, "rv.hessian")
    if all_f64(spec):
        whole = FloatLayout.of(spec, args, None, "rv.hessian")
        entries = layout.entries_within(whole)
        if isinstance(entries, slice):
            columns = range(entries.start, entries.stop)
            rows = _whole_hessian(spec, args, iloss, whole, columns)[entries, entries]
        else:
            columns = range(entries.min(), entries.max() + 1) if entries.size else range(0)
            rows = _whole_hessian(spec, args, iloss, whole, columns)[np.ix_(entries, entries)]
        return np.ascontiguousarray(rows.T)  # the rows of @f.hessian's matrix are the columns
    matrix = np.zeros((layout.size, layout.size))
    for j in range(layout.size):
        column = hvp(spec.function, args, layout.unit(j), iloss)
        matrix[:, j] = layout.gather(column)
    return matrix


HESSIAN_LANES = 4
"""Columns ``rv.hessian`` computes per run of the derived program (vector
mode, sharing the function's own computation between them); see
``benchmarks/RESULTS.md`` for how the count was chosen."""


def _whole_hessian(
    spec: Specialization, args: tuple[Any, ...], iloss: int, whole: Any, columns: range
) -> np.ndarray:
    """The Hessian's ``columns`` in one native call of ``@f.hessian`` (see
    ``revmlir.ad.matrices``), as the rows of the matrix returned: the
    scalars' gradient slots get the seeds, each array zeroed workspaces."""
    from revmlir.ad.matrices import HESSIAN_SUFFIX, generate_hessian_matrices
    from revmlir.frontend.jacobian import zeroed_workspaces

    lanes = max(1, min(HESSIAN_LANES, len(columns)))
    _, backend = derived_backend(
        spec, f"hessian of #{iloss}, {lanes} lanes", partial(generate_hessian_matrices, loss=iloss, lanes=lanes)
    )
    matrix = np.zeros((whole.size, whole.size))
    arrays = [args[i] for i in whole.positions if isinstance(args[i], np.ndarray)]
    seeds = [1.0 if i == iloss else 0.0 for i in whole.positions if not isinstance(args[i], np.ndarray)]
    workspaces = zeroed_workspaces(arrays, 2 + 2 * lanes)
    backend.call(
        spec.name + HESSIAN_SUFFIX, *spec.private_copies(args), matrix, columns.start, columns.stop,
        *seeds, *workspaces,
    )
    return matrix
