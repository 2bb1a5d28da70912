"""``rv.jacobian``: whole Jacobians from forward or reverse mode.

A reversible function returns every argument, so its Jacobian maps the float
entries of its arguments before the call to those after it.  ``wrt`` and
``of`` select argument positions on each side; the mode follows the shape
(columns by ``rv.jvp`` when there are fewer inputs than outputs, rows by the
pullback of ``rv.vjp`` otherwise), as JAX's ``jacfwd``/``jacrev`` would be
chosen by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from revmlir.ad.matrices import JACOBIAN_SUFFIX, generate_jacobians
from revmlir.frontend.base.derived import derived_backend
from revmlir.frontend.base.float_layout import FloatLayout, all_f64, selected, zeroed_workspaces
from revmlir.frontend.base.specialization import Specialization
from revmlir.frontend.base.structs import argument_tuple
from revmlir.frontend.derivatives.blocks import Side, blocks
from revmlir.frontend.derivatives.forward import differentiated_call, spec_jvp, whole_call
from revmlir.frontend.derivatives.gradient import run_call, state_after, struct_call
from revmlir.frontend.ordinary_code.functions import OrdinaryFunction
from revmlir.frontend.reversible_code.functions import InverseFunction, ReversibleFunction

JACOBIAN_LANES = 4
"""Columns ``@f.jacobian`` computes per run of ``@f.tanL`` (vector mode:
the function's own computation is shared between them, each lane adds only
its tangent updates); see ``benchmarks/RESULTS.md`` for how it was chosen."""


REVERSE_JACOBIAN_LANES = 4
"""Rows per backward run of reverse-mode ``rv.jacobian`` (``@f.adjL``:
the uncomputation of ``f`` is shared between them)."""


def _whole_forward(spec: Specialization, args: tuple[Any, ...], whole: FloatLayout) -> np.ndarray:
    """Every column in one native call of ``@f.jacobian`` (``ad-jacobian``),
    as the rows of the matrix returned."""
    lanes = min(JACOBIAN_LANES, whole.size)
    _, backend = derived_backend(spec, f"jacobian, {lanes} lanes", partial(generate_jacobians, lanes=lanes))
    matrix = np.zeros((whole.size, whole.size))
    arrays = [args[i] for i in whole.positions if isinstance(args[i], np.ndarray)]
    workspaces = zeroed_workspaces(arrays, lanes)
    backend.call(spec.name + JACOBIAN_SUFFIX, *spec.private_copies(args), matrix, *workspaces)
    return matrix


def jacobian(
    f: ReversibleFunction | InverseFunction | OrdinaryFunction,
    args: Sequence[Any],
    wrt: Sequence[int] | None = None,
    of: Sequence[int] | None = None,
    mode: str = "auto",
) -> np.ndarray | tuple[Any, ...]:
    """``∂(float entries of outputs `of`) / ∂(those of arguments `wrt`)``,
    an ``m × n`` array in ``FloatLayout`` order (both default to every
    float one).  A reversible function's outputs are its arguments after
    the call; an ordinary function's are what it returns, then every
    argument as it left it (``rv.vjp``'s).  ``mode`` is ``"forward"`` (one
    tangent per column; for a reversible function with every argument as
    ``wrt``, all columns in one native call of ``@f.jacobian``),
    ``"reverse"`` (pullbacks, ``REVERSE_JACOBIAN_LANES`` rows per backward
    run) or ``"auto"`` (the fewer runs).  The arguments are not modified.

    With struct arguments the matrix comes in blocks, as ``jax.jacfwd``
    gives a pytree's (``revmlir.frontend.derivatives.blocks``): one entry
    per output ``of``, each a tuple with one entry per argument ``wrt``
    (both default to every one), a struct's an instance of its class with
    one entry per field, a block shaped as the output's field followed by
    the argument's (``None`` where either carries no derivative)."""
    args = argument_tuple(args, "rv.jacobian")
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"rv.jacobian: mode must be 'auto', 'forward' or 'reverse', got {mode!r}")
    if (structs := struct_call(f, args)) is not None:
        flat_args = structs.layout.flatten(args)
        # only a layout: the call of the flat function below checks its arguments wrt
        call = differentiated_call(structs.function, flat_args, "jacobian", wrt=())
        parameters = structs.parameters
        by_argument = Side.of(structs.layout, args, wrt, call, call.inputs, parameters, "wrt", "rv.jacobian")
        values = structs.output_values(args)
        by_output = Side.of(structs.outputs, values, of, call, call.outputs, parameters, "of", "rv.jacobian")
        matrix = jacobian(structs.function, flat_args, by_argument.flat, by_output.flat, mode)
        return blocks(matrix, by_output, by_argument)
    call = differentiated_call(f, args, "jacobian", wrt=wrt)
    spec, state = call.spec, call.arguments
    inputs = FloatLayout.of(spec, state, selected(call, call.inputs, wrt, "wrt", "rv.jacobian"), "rv.jacobian")
    outputs = FloatLayout.of(spec, state, selected(call, call.outputs, of, "of", "rv.jacobian"), "rv.jacobian")
    if not inputs.size or not outputs.size:
        # no column or row to compute (empty arrays), but f runs once, as
        # for any matrix: its arguments refused and its errors raised alike
        state_after(whole_call(spec, state))
        return np.zeros((outputs.size, inputs.size))
    if mode == "auto":
        mode = "forward" if inputs.size <= outputs.size else "reverse"
    whole = FloatLayout.of(spec, state, None, "rv.jacobian")
    if mode == "forward" and inputs.positions == whole.positions and all_f64(spec):
        # @f.jacobian's matrix holds the columns as rows
        return np.ascontiguousarray(_whole_forward(spec, state, whole)[:, outputs.entries_within(whole)].T)
    matrix = np.zeros((outputs.size, inputs.size))
    if mode == "forward":
        for j in range(inputs.size):
            _, tangents = spec_jvp(spec, state, inputs.unit(j))
            matrix[:, j] = outputs.gather(tangents)
    else:
        _, pullback = run_call(whole_call(spec, state))
        lanes = min(REVERSE_JACOBIAN_LANES, outputs.size)
        for start in range(0, outputs.size, lanes):
            # a short last run repeats its first row rather than compile @f.adj with fewer lanes
            rows = [min(start + lane, outputs.size - 1) for lane in range(lanes)]
            for i, cotangents in zip(rows, pullback.batch([outputs.unit(i) for i in rows])):
                matrix[i, :] = inputs.gather(cotangents)
    return matrix
