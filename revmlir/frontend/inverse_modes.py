"""Inverse accumulation from Python: ``rv.inverse_jvp`` (``J⁻¹·v``),
``rv.inverse_vjp`` (``J⁻ᵀ·w``) and ``rv.newton_step`` (``−J⁻¹F(x)``).

A reversible function is constant-width, so the inverse products cost what
``rv.jvp`` and ``rv.vjp`` cost, without forming or factoring ``J``
(``revmlir.ad.inverse_modes``): ``rv.inverse_jvp`` runs ``f`` forward, then
``@f.itan`` backward from its outputs; ``rv.inverse_vjp`` runs ``@f.iadj``,
``f`` forward carrying the cotangents along.  Both run natively when ``f``'s
specialization does, otherwise on the interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from revmlir.ad.inverse_modes import (
    generate_inverse_adjoints,
    generate_inverse_tangents,
    inverse_adjoint_name,
    inverse_tangent_name,
)
from revmlir.frontend.api import InverseFunction, ReversibleFunction, Specialization
from revmlir.frontend.forward import _run_tangent, check_count, per_argument
from revmlir.frontend.gradient import _input_cotangents, _seed, _specialization, derived_backend


def inverse_jvp(
    f: ReversibleFunction | InverseFunction, args: Sequence[Any], output_tangents: Sequence[Any]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Inverse forward mode (Pearlmutter and Siskind's 1.2b): run ``f`` on
    (copies of) ``args`` and return ``(outputs, input_tangents)`` with
    ``J · input_tangents = output_tangents``, ``J`` the Jacobian of ``f`` at
    ``args`` over its float scalars and arrays.  ``output_tangents`` has one
    entry per argument, shaped like it (``None`` for zero); the results are
    laid out as ``rv.jvp``'s.  The arguments are not modified."""
    args, output_tangents = tuple(args), tuple(output_tangents)
    spec = _specialization(f, args, "inverse_jvp")
    check_count(spec.function, args, output_tangents, "output tangents")
    outputs = _run(spec, args)
    return outputs, _inverse_tangents(spec, args, outputs, output_tangents)


def _run(spec: Specialization, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``f``'s outputs, run on copies of ``args``."""
    forward = spec.native if spec.native is not None else spec.interpreter
    return tuple(forward.call(spec.name, *spec.private_copies(args)))


def _inverse_tangents(
    spec: Specialization, args: tuple[Any, ...], outputs: tuple[Any, ...], output_tangents: Sequence[Any]
) -> tuple[Any, ...]:
    """``J⁻¹ · output_tangents`` per argument: ``@f.itan`` run backwards
    from ``outputs``, ``f``'s outputs for ``args``."""
    _, backend = derived_backend(spec, "inverse tangent", generate_inverse_tangents)
    _, found = _run_tangent(spec, backend, outputs, output_tangents, inverse_tangent_name(spec.name))
    return per_argument(spec, args, found)


def inverse_vjp(
    f: ReversibleFunction | InverseFunction, args: Sequence[Any], input_cotangents: Sequence[Any]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Inverse reverse mode (Pearlmutter and Siskind's 1.2a): run ``f`` on
    (copies of) ``args`` and return ``(outputs, output_cotangents)`` with
    ``Jᵀ · output_cotangents = input_cotangents``.  One forward run of
    ``@f.iadj``: the cotangents travel with the program, first step first.
    ``input_cotangents`` has one entry per argument, shaped like it
    (``None`` for zero); the results are laid out as ``rv.vjp``'s
    pullback's.  The arguments are not modified."""
    args, input_cotangents = tuple(args), tuple(input_cotangents)
    spec = _specialization(f, args, "inverse_vjp")
    check_count(spec.function, args, input_cotangents, "input cotangents")
    _, backend = derived_backend(spec, "inverse adjoint", generate_inverse_adjoints)
    name = spec.function.__name__
    seeds = [
        _seed(spec.types[i], args[i], input_cotangents[i], f"cotangent #{i} of {name}")
        for i in spec.carrying
    ]
    results = backend.call(inverse_adjoint_name(spec.name), *spec.private_copies(args), *seeds)
    outputs = tuple(results[: len(args)])
    return outputs, _input_cotangents(spec, outputs, results)


def newton_step(
    F: ReversibleFunction | InverseFunction, args: Sequence[Any], wrt: Sequence[int] | None = None
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """One Newton step for ``F(x) = 0``, ``F`` a reversible function that
    maps the arguments ``wrt`` (``x``; default every float argument) to
    ``F(x)`` in place: returns ``(outputs, step)``, ``F``'s outputs (the
    residual at ``wrt``) and ``δ = −J_F(x)⁻¹ F(x)`` laid out as
    ``rv.jvp``'s tangents, computed by the inverse tangent (``J`` is never
    formed).  The other arguments are parameters: they must come back
    unchanged, and their entries of ``δ`` are zero.  ``x + δ`` is the next
    iterate."""
    args = tuple(args)
    spec = _specialization(F, args, "newton_step")
    chosen = tuple(spec.carrying if wrt is None else wrt)
    for i in chosen:
        if i not in spec.carrying:
            raise TypeError(
                f"rv.newton_step: argument #{i} of {spec.function.__name__} is not a float "
                "scalar or an array of floats"
            )
    outputs = _run(spec, args)
    changed = [i for i in range(len(args)) if i not in chosen and not _same(args[i], outputs[i])]
    if changed:
        raise ValueError(
            f"rv.newton_step: {spec.function.__name__} changes argument(s) "
            f"{', '.join(f'#{i}' for i in changed)}, which are not in wrt={list(chosen)}; "
            "parameters must come back unchanged"
        )
    residual = [outputs[i] if i in chosen else None for i in range(len(args))]
    step = _inverse_tangents(spec, args, outputs, residual)
    return outputs, tuple(_negated(d) for d in step)


def _negated(value: Any) -> Any:
    if value is None:
        return None
    return [-v for v in value] if isinstance(value, list) else -value


def _same(before: Any, after: Any) -> bool:
    return bool(np.array_equal(before, after)) if isinstance(before, np.ndarray) else before == after
