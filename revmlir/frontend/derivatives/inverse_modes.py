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
from itertools import accumulate
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import AnyFloat, MemRefType
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from revmlir.ad import lumps
from revmlir.ad.constant_width import WidthReport, ordinary_width, reversible_width
from revmlir.ad.inverse_modes import (
    generate_inverse_adjoints,
    generate_inverse_tangents,
    inverse_adjoint_name,
    inverse_tangent_name,
)
from revmlir.dialects import rev
from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import LogType
from revmlir.frontend.base.derived import argument_labels, argument_name, derived_backend
from revmlir.frontend.base.float_layout import selected, sequence_of_positions
from revmlir.frontend.base.specialization import Specialization
from revmlir.frontend.base.structs import argument_tuple
from revmlir.frontend.derivatives.blocks import Side
from revmlir.frontend.derivatives.forward import check_count, per_argument, run_tangent, whole_call
from revmlir.frontend.derivatives.gradient import (
    StructCall,
    _input_cotangents,
    differentiated_specialization,
    seed_for,
    struct_call,
)
from revmlir.frontend.ordinary_code.functions import OrdinaryFunction
from revmlir.frontend.reversible_code.functions import InverseFunction, ReversibleFunction
from revmlir.interpreter.dataflow import dataflow_graph
from revmlir.runtime.arguments import from_runtime, to_runtime
from revmlir.runtime.numbers import FixedPoint


def inverse_jvp(
    f: ReversibleFunction | InverseFunction | OrdinaryFunction,
    args: Sequence[Any],
    output_tangents: Sequence[Any],
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Inverse forward mode (Pearlmutter and Siskind's 1.2b): run ``f`` on
    (copies of) ``args`` and return ``(outputs, input_tangents)`` with
    ``J · input_tangents = output_tangents``, ``J`` the Jacobian of ``f`` at
    ``args`` over its float scalars and arrays.  ``output_tangents`` has one
    entry per argument, shaped like it (``None`` for zero); the results are
    laid out as ``rv.jvp``'s.  For an ``@rv.ordinary`` function the outputs
    and ``output_tangents`` are laid out as ``rv.vjp``'s outputs (see
    ``_Lumped``).  The arguments are not modified."""
    args = argument_tuple(args, "rv.inverse_jvp")
    output_tangents = argument_tuple(
        output_tangents, "rv.inverse_jvp", "output_tangents", "the tuple of the outputs' tangents"
    )
    if (structs := struct_call(f, args)) is not None:
        _check_output_count(structs, args, output_tangents, "output tangents")
        flat = structs.outputs.flatten_cotangents(output_tangents, "output tangent")
        outputs, dots = inverse_jvp(structs.function, structs.layout.flatten(args), flat)
        return structs.rebuild_outputs(args, outputs), structs.layout.rebuild(args, dots)
    if isinstance(f, OrdinaryFunction):
        lumped = _Lumped(f, args)
        dots = lumps.inverse_tangent(lumped.graph, lumped.lumping, lumped.output_vector(output_tangents))
        return lumped.outputs, lumped.per_input(dots)
    spec = differentiated_specialization(f, args, "inverse_jvp")
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
    _, found = run_tangent(spec, backend, outputs, output_tangents, inverse_tangent_name(spec.name))
    return per_argument(spec, args, found)


def inverse_vjp(
    f: ReversibleFunction | InverseFunction | OrdinaryFunction,
    args: Sequence[Any],
    input_cotangents: Sequence[Any],
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Inverse reverse mode (Pearlmutter and Siskind's 1.2a): run ``f`` on
    (copies of) ``args`` and return ``(outputs, output_cotangents)`` with
    ``Jᵀ · output_cotangents = input_cotangents``.  One forward run of
    ``@f.iadj``: the cotangents travel with the program, first step first.
    ``input_cotangents`` has one entry per argument, shaped like it
    (``None`` for zero); the results are laid out as ``rv.vjp``'s
    pullback's.  For an ``@rv.ordinary`` function ``output_cotangents``
    are laid out as ``rv.vjp``'s outputs (see ``_Lumped``).  The arguments
    are not modified."""
    args = argument_tuple(args, "rv.inverse_vjp")
    input_cotangents = argument_tuple(
        input_cotangents, "rv.inverse_vjp", "input_cotangents", "the tuple of the inputs' cotangents"
    )
    if (structs := struct_call(f, args)) is not None:
        check_count(f, args, input_cotangents, "input cotangents")
        flat = structs.layout.flatten_cotangents(input_cotangents, "cotangent")
        outputs, bars = inverse_vjp(structs.function, structs.layout.flatten(args), flat)
        return structs.rebuild_outputs(args, outputs), structs.rebuild_outputs(args, bars)
    if isinstance(f, OrdinaryFunction):
        lumped = _Lumped(f, args)
        bars = lumps.inverse_adjoint(lumped.graph, lumped.lumping, lumped.input_vector(input_cotangents))
        return lumped.outputs, lumped.per_output(bars)
    spec = differentiated_specialization(f, args, "inverse_vjp")
    check_count(spec.function, args, input_cotangents, "input cotangents")
    _, backend = derived_backend(spec, "inverse adjoint", generate_inverse_adjoints)
    labels = argument_labels(spec, "the cotangent")
    seeds = [seed_for(spec.types[i], args[i], input_cotangents[i], labels[i]) for i in spec.carrying]
    results = backend.call(inverse_adjoint_name(spec.name), *spec.private_copies(args), *seeds)
    outputs = tuple(results[: len(args)])
    return outputs, _input_cotangents(spec, outputs, results)


def newton_step(
    F: ReversibleFunction | InverseFunction, args: Sequence[Any], wrt: Sequence[int] | None = None
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """One Newton step for ``F(x) = 0``, ``F`` a reversible function that
    maps the arguments ``wrt`` (``x``; default every float argument but
    log numbers) to
    ``F(x)`` in place: returns ``(outputs, step)``, ``F``'s outputs (the
    residual at ``wrt``) and ``δ = −J_F(x)⁻¹ F(x)`` laid out as
    ``rv.jvp``'s tangents, computed by the inverse tangent (``J`` is never
    formed).  The residual of a number type is its real value, as its
    tangents are; a log number is never 0, so it cannot be an unknown: one
    named in ``wrt`` is an error, one defaulted or in a struct a parameter.
    The other arguments are parameters: they must come back bit-identical
    (a NaN that stays NaN is unchanged), and their entries of ``δ`` are
    zero.  ``x + δ`` is the next iterate."""
    args = argument_tuple(args, "rv.newton_step")
    if (structs := struct_call(F, args)) is not None:
        flat_args = tuple(structs.layout.flatten(args))
        spec = differentiated_specialization(structs.function, flat_args, "newton_step")
        chosen = _but_logs(spec, spec.carrying) if wrt is None else _flat_wrt(structs, args, spec, flat_args, wrt)
        outputs, step = _newton_step(spec, flat_args, chosen, wrt)
        return structs.rebuild_outputs(args, outputs), structs.layout.rebuild(args, step)
    spec = differentiated_specialization(F, args, "newton_step")
    chosen = selected(whole_call(spec, args), tuple(range(len(args))), wrt, "wrt", "rv.newton_step")
    return _newton_step(spec, args, _but_logs(spec, chosen) if wrt is None else chosen, wrt)


def _but_logs(spec: Specialization, positions: Sequence[int]) -> tuple[int, ...]:
    """``positions`` but the log numbers: unknowns the user did not name
    one by one (``wrt`` defaulted, a struct's fields) leave them as
    parameters, which is all they can be."""
    return tuple(i for i in positions if not isinstance(spec.types[i], LogType))


def _newton_step(
    spec: Specialization, args: tuple[Any, ...], chosen: Sequence[int], wrt: Sequence[int] | None
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``rv.newton_step`` of a specialization taking no structs, for the
    unknowns ``chosen`` (``wrt`` as the user gave it, for messages)."""
    for i in chosen:
        if isinstance(spec.types[i], LogType):
            raise TypeError(
                f"rv.newton_step: {argument_name(spec.function, i)} is a log number, which is never 0, "
                "so F(x) = 0 has no root in it; leave it out of wrt (a parameter)"
            )
    outputs = _run(spec, args)
    changed = [i for i in range(len(args)) if i not in chosen and not _same(spec.types[i], args[i], outputs[i])]
    if changed:
        unknowns = (
            "wrt (by default every float argument but log numbers)" if wrt is None else f"wrt={[int(k) for k in wrt]}"
        )
        raise ValueError(
            f"rv.newton_step: {spec.function.__name__} changes argument(s) "
            f"{', '.join(repr(spec.function.parameters[i]) for i in changed)}, which are not in {unknowns}; "
            "parameters must come back bit-identical"
        )
    residual = [_real_value(outputs[i]) if i in chosen else None for i in range(len(args))]
    step = _inverse_tangents(spec, args, outputs, residual)
    return outputs, tuple(_negated(d) if i in chosen else d for i, d in enumerate(step))


def _flat_wrt(
    structs: StructCall, args: tuple[Any, ...], spec: Specialization, flat_args: tuple[Any, ...], wrt: Any
) -> tuple[int, ...]:
    """``wrt``, positions among the parameters of a function taking
    structs, as positions among its fields (``spec``'s arguments): a struct
    chosen is its fields that carry a tangent but its log numbers; a log
    number named itself stays, to be refused."""
    chosen = sequence_of_positions(wrt, "wrt", "rv.newton_step")
    every = tuple(range(len(flat_args)))
    call = whole_call(spec, flat_args)
    side = Side.of(structs.layout, args, chosen, call, every, structs.parameters, "wrt", "rv.newton_step")
    starts = list(accumulate(structs.layout.sizes, initial=0))
    named = {starts[k] for k in chosen if structs.layout.structs[k] is None}
    fields = _but_logs(spec, side.flat)
    return tuple(i for i in side.flat if i in named or i in fields)


def _check_output_count(structs: StructCall, args: tuple[Any, ...], given: tuple[Any, ...], what: str) -> None:
    """One entry of ``given`` per output of the call with structs, counted
    before the structs are flattened into fields: a reversible function's
    outputs are its arguments."""
    if isinstance(structs.function, OrdinaryFunction):
        _output_count(structs.function.__name__, structs.returned + len(args), structs.returned, len(given), what)
    else:
        check_count(structs.function, args, given, what)


def _output_count(name: str, count: int, returned: int, given: int, what: str) -> None:
    if given != count:
        raise TypeError(
            f"{name} has {count} output(s) ({returned} returned, then its arguments), "
            f"so {count} {what} (None for zero), got {given}"
        )


def _real_value(value: Any) -> Any:
    """A residual as a tangent: a fixed-point number's real value (the
    tangents of number types are of their real values)."""
    return float(value) if isinstance(value, FixedPoint) else value


def _negated(value: Any) -> Any:
    """An unknown's step from its inverse tangent (a parameter's zero is
    left alone: negated, it would be ``-0.0``)."""
    if value is None:
        return None
    return [-v for v in value] if isinstance(value, list) else -value


def _same(type: Attribute, before: Any, after: Any) -> bool:
    """Whether a parameter of ``type`` came back bit-identical to what the
    call made of it (a real given for a fixed-point or log number is the
    number nearest it): a NaN (a masked entry) is unchanged, ``0.0`` for
    ``-0.0`` is a change.  ``==`` would call every NaN changed.  A stack's
    elements come back as they were given (no engine converts them), so
    they are compared as given: through a log number ``3.7`` would be
    ``3.7000000000000006`` on one side only."""
    if isinstance(type, StackType):
        return (
            isinstance(after, list)
            and len(before) == len(after)
            and all(_identical(b, a) for b, a in zip(before, after))
        )
    if not isinstance(before, np.ndarray):
        before = from_runtime(type, to_runtime(type, before, "", 0))
    return _identical(before, after)


def _identical(before: Any, after: Any) -> bool:
    """Whether ``after`` has ``before``'s bits (a fixed-point number its raw
    integer)."""
    if isinstance(before, FixedPoint):
        return before == after
    old = np.asarray(before)
    new = np.asarray(after, dtype=old.dtype)
    return old.shape == new.shape and old.tobytes() == new.tobytes()


class _Lumped:
    """An ``@rv.ordinary`` function's inverse products at ``args``, lump by
    lump.  ``J`` maps its active inputs (float scalar arguments, entries of
    float array arguments) to its active outputs (returned floats, then the
    entries of the float arrays as it leaves them).  Inputs are laid out one
    entry per argument, outputs as ``rv.vjp``'s outputs are: one entry per
    returned value, then one per argument; entries outside ``J`` (integers,
    and scalar arguments as outputs: Python passes them by value) are
    ``None``, or ``0.0`` for a scalar input, as in ``rv.jvp``."""

    def __init__(self, f: OrdinaryFunction, args: tuple[Any, ...]):
        spec = f.specialization_for(*args)
        self.graph = _graph(f, args)
        self.lumping = lumps.greedy(self.graph)
        copies = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        values = f(*copies)
        returned = () if spec.returns == "none" else (values,) if spec.returns == "one" else tuple(values)
        self.name, self.args, self.outputs = f.__name__, args, (*returned, *copies)
        self.input_active = [_is_float(t) for t in spec.types]
        self.output_active = [
            *(isinstance(t, AnyFloat) for t in spec.result_types),
            *(isinstance(t, MemRefType) and _is_float(t) for t in spec.types),
        ]

    def _vector(self, given: tuple[Any, ...], like: tuple[Any, ...], active: list[bool], what: str) -> np.ndarray:
        """One vector in ``J``'s layout from one entry per value of ``like``."""
        parts: list[np.ndarray] = [np.zeros(0)]
        for k, (value, model, is_active) in enumerate(zip(given, like, active)):
            if is_active:
                parts.append(np.ravel(seed_for(None, model, value, f"{what} #{k} of {self.name}")))
            elif value is not None:
                raise TypeError(
                    f"{what} #{k} of {self.name} is not part of J (an integer, or a scalar "
                    "argument as an output: Python passes it by value): pass None"
                )
        return np.concatenate(parts)

    def output_vector(self, output_tangents: tuple[Any, ...]) -> np.ndarray:
        count = len(self.outputs)
        _output_count(self.name, count, count - len(self.args), len(output_tangents), "output tangents")
        return self._vector(output_tangents, self.outputs, self.output_active, "output tangent")

    def input_vector(self, input_cotangents: tuple[Any, ...]) -> np.ndarray:
        if len(input_cotangents) != len(self.args):
            raise TypeError(
                f"{self.name} takes {len(self.args)} argument(s), so {len(self.args)} input "
                f"cotangents (one per argument, None for zero), got {len(input_cotangents)}"
            )
        return self._vector(input_cotangents, self.args, self.input_active, "cotangent")

    def per_input(self, vector: np.ndarray) -> tuple[Any, ...]:
        absent = [None if isinstance(a, np.ndarray) else 0.0 for a in self.args]
        return _split(vector, self.args, self.input_active, absent)

    def per_output(self, vector: np.ndarray) -> tuple[Any, ...]:
        return _split(vector, self.outputs, self.output_active, [None] * len(self.outputs))


def _graph(f: OrdinaryFunction, args: Sequence[Any]) -> lumps.Graph:
    """``f``'s data-flow graph at ``args``."""
    spec = f.specialization_for(*args)
    function = SymbolTable.lookup_symbol(spec.ordinary, spec.reversible.name)
    assert isinstance(function, func.FuncOp)
    return dataflow_graph(spec.ordinary, function, args)


def constant_width(
    f: ReversibleFunction | OrdinaryFunction,
    args: Sequence[Any],
    exhaustive_limit: int = lumps.EXHAUSTIVE_LIMIT,
) -> WidthReport:
    """Whether ``f`` is constant-width at ``args``, and why not: the
    analysis of ``rev-lump-widths`` from Python.  A reversible function is,
    by the verifier.  For an ``@rv.ordinary`` function the report has the
    lumps of its data-flow graph at ``args`` in program order, by greedy
    cutting and (up to ``exhaustive_limit`` ops, at most
    ``lumps.EXHAUSTIVE_MAX``) by exhaustive search;
    ``report.message()`` says it in one line.  A struct argument is its
    fields, as in a call (the report names them ``d.x``).  Errors as for
    ``rv.inverse_jvp``."""
    args = argument_tuple(args, "rv.constant_width")
    limit = lumps.exhaustive_limit("rv.constant_width", exhaustive_limit)
    analysed: ReversibleFunction | InverseFunction | OrdinaryFunction = f
    if (structs := struct_call(f, args)) is not None:
        analysed, args = structs.function, tuple(structs.layout.flatten(args))
    if isinstance(analysed, OrdinaryFunction):
        return ordinary_width(_graph(analysed, args), limit)
    spec = differentiated_specialization(analysed, args, "constant_width")
    function = SymbolTable.lookup_symbol(spec.module, spec.name)
    assert isinstance(function, rev.FuncOp)
    return reversible_width(function)


def _is_float(type: Any) -> bool:
    return isinstance(type.element_type if isinstance(type, MemRefType) else type, AnyFloat)


def _split(vector: np.ndarray, like: Sequence[Any], active: Sequence[bool], absent: Sequence[Any]) -> tuple[Any, ...]:
    """``vector`` cut into one entry per value of ``like``: an array shaped
    like an active array and of its dtype (as ``rv.jvp``'s tangents are;
    the lumps solve in float64), a float for an active scalar, ``absent``
    else."""
    found: list[Any] = []
    start = 0
    for value, is_active, missing in zip(like, active, absent):
        if not is_active:
            found.append(missing)
            continue
        size = int(np.size(value))
        chunk = vector[start : start + size]
        start += size
        found.append(
            chunk.reshape(value.shape).astype(value.dtype) if isinstance(value, np.ndarray) else float(chunk[0])
        )
    return tuple(found)
