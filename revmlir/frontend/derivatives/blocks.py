"""Jacobians and Hessians of calls with struct arguments, in blocks laid out
as JAX lays out a pytree's.

``rv.jacobian`` and ``rv.hessian`` of a call without structs give one
matrix over the float entries (``FloatLayout``).  With structs, a matrix
over the flattened call's entries would leave the user to find each
field's rows, so the matrix is cut into one block per pair of fields, as
``jax.jacfwd`` and ``jax.hessian`` give them for pytrees: a tuple with one
entry per output (argument) of the rows, each of them a tuple with one
entry per argument of the columns, a struct as an instance of its class
holding one such entry per field (nested structs nested so).  A block has
the shape of its row field followed by that of its column field (a float
for two scalars); a field that carries no derivative (an integer) has
``None``.  The matrix itself comes from the flattened call, so the blocks
are those of the derived programs that compute it without structs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import numpy as np

from revmlir.frontend.base.derived import ReversibleCall
from revmlir.frontend.base.float_layout import checked_position
from revmlir.frontend.base.structs import Layout


@dataclass(frozen=True)
class Span:
    """Where one field's entries sit along a side of the matrix."""

    entries: slice
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Side:
    """The rows or the columns of a struct call's matrix: the entries
    (outputs or arguments) chosen, and per field of each its span (``None``:
    it carries no derivative)."""

    layout: Layout
    """Per output (argument), its struct's shape or None."""
    values: tuple[Any, ...]
    """Per output (argument), the instance its blocks are laid out as (a
    struct's; others are not read)."""
    chosen: tuple[tuple[int, tuple[Span | None, ...]], ...]
    """The entries chosen, in order, with the spans of their fields."""
    flat: tuple[int, ...]
    """The flattened call's outputs (arguments) the matrix covers: the
    fields that carry a derivative, entry after entry."""

    @staticmethod
    def of(
        layout: Layout,
        values: Sequence[Any],
        chosen: Sequence[int] | None,
        call: ReversibleCall,
        side: Sequence[int],
        parameters: Sequence[str],
        parameter: str,
        what: str,
    ) -> Side:
        """The side of ``call`` (the flattened call) whose fields are
        ``side`` (``call.inputs`` or ``call.outputs``), choosing entries
        ``chosen`` (the parameter ``parameter``; default: every one) of
        ``layout``; ``parameters``: the names of the function's parameters
        (not of their fields), which messages name the entries by."""
        count, name = len(layout.structs), call.spec.function.__name__
        outputs = side is call.outputs and call.outputs != call.inputs
        returned = count - len(parameters)  # an ordinary function's outputs start with what it returns
        starts = list(accumulate(layout.sizes, initial=0))
        owner = f"the {'outputs' if outputs else 'arguments'} of {name}"
        for k in chosen or ():
            checked_position(k, parameter, None, owner, what)
            if k >= count:
                names = ", ".join(repr(p) for p in parameters)
                if outputs:
                    listed = f"has {count} output(s): {returned} returned, then {names} as the call leaves them"
                else:
                    listed = f"takes {count} argument(s): {names}"
                noun = "output" if outputs else "argument"
                raise IndexError(f"{what}: {noun} #{k} of {name} does not exist ({name} {listed})")
            if layout.structs[k] is None and side[starts[k]] not in call.spec.carrying:
                if k < returned:
                    which = f"output #{k} of {name}"
                else:
                    which = f"{'output' if outputs else 'argument'} '{parameters[k - returned]}' of {name}"
                raise TypeError(f"{what}: {which} is not a float scalar, an array of floats or a struct")
        if chosen is not None and len(set(chosen)) < len(chosen):
            raise ValueError(f"{what}: {parameter}={tuple(chosen)} names a position twice")
        entries, flat, position = [], [], 0
        for k in range(count) if chosen is None else chosen:
            spans: list[Span | None] = []
            for leaf in range(starts[k], starts[k + 1]):
                if side[leaf] not in call.spec.carrying:
                    spans.append(None)
                    continue
                shape = np.shape(call.arguments[side[leaf]])
                size = int(np.prod(shape))
                spans.append(Span(slice(position, position + size), shape))
                flat.append(leaf)
                position += size
            entries.append((k, tuple(spans)))
        return Side(layout, tuple(values), tuple(entries), tuple(flat))

    def laid_out(self, block: Callable[[Span], Any]) -> tuple[Any, ...]:
        """Per chosen entry, ``block`` of each field that carries a
        derivative (``None`` for the others), a struct's as an instance of
        its class."""
        laid: list[Any] = []
        for k, spans in self.chosen:
            parts = [None if span is None else block(span) for span in spans]
            shape = self.layout.structs[k]
            laid.append(parts[0] if shape is None else shape.rebuild(self.values[k], iter(parts)))
        return tuple(laid)


def blocks(matrix: np.ndarray, rows: Side, columns: Side) -> tuple[Any, ...]:
    """``matrix`` (over ``rows.flat`` × ``columns.flat``) cut into blocks,
    rows outside, columns inside, as ``jax.jacfwd`` lays out pytrees."""

    def block(row: Span, column: Span) -> Any:
        part = matrix[row.entries, column.entries].reshape(row.shape + column.shape)
        return float(part) if part.ndim == 0 else part

    return rows.laid_out(lambda row: columns.laid_out(lambda column: block(row, column)))
