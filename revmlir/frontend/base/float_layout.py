"""The float entries of a function's arguments as one vector: the layout
of ``rv.jacobian``'s and ``rv.hessian``'s rows and columns, which both
build from a ``ReversibleCall``, and the workspaces of the whole-matrix
programs (``revmlir.ad.matrices``) they call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ComplexType, MemRefType, f64

from revmlir.frontend.base.derived import ReversibleCall, argument_name
from revmlir.frontend.base.specialization import Specialization


@dataclass(frozen=True)
class FloatLayout:
    """How the float entries of some arguments are laid out in one vector:
    argument by argument, a scalar as one entry, an array's elements in C
    order."""

    args: tuple[Any, ...]
    positions: tuple[int, ...]

    @staticmethod
    def of(spec: Specialization, args: Sequence[Any], positions: Sequence[int] | None, what: str) -> FloatLayout:
        """The layout of ``positions`` (default: every argument carrying a
        derivative), checked against the specialization."""
        carrying = spec.carrying
        chosen = tuple(carrying if positions is None else positions)
        for i in chosen:
            if i not in carrying:
                raise TypeError(
                    f"{what}: {argument_name(spec.function, i)} is not a float scalar or an array of floats"
                )
            if isinstance(spec.types[i], ComplexType) or (isinstance(args[i], np.ndarray) and np.iscomplexobj(args[i])):
                raise TypeError(
                    f"{what}: {argument_name(spec.function, i)} is complex; "
                    "Jacobians of complex arguments are not supported yet "
                    "(use rv.vjp/rv.jvp)"
                )
        return FloatLayout(tuple(args), chosen)

    @property
    def sizes(self) -> list[int]:
        return [int(np.size(self.args[i])) for i in self.positions]

    @property
    def size(self) -> int:
        return sum(self.sizes)

    def unit(self, k: int) -> list[Any]:
        """One entry per argument: the ``k``-th unit vector of the layout
        shaped like the arguments, ``None`` elsewhere."""
        parts: list[Any] = [None] * len(self.args)
        start = 0
        for i, size in zip(self.positions, self.sizes, strict=True):
            if start <= k < start + size:
                arg = self.args[i]
                if isinstance(arg, np.ndarray):
                    part = np.zeros(arg.shape)
                    part.flat[k - start] = 1.0
                    parts[i] = part
                elif isinstance(arg, list):  # a stack
                    parts[i] = [float(e == k - start) for e in range(size)]
                else:
                    parts[i] = 1.0
            start += size
        return parts

    def entries_within(self, whole: FloatLayout) -> slice | np.ndarray:
        """Where this layout's entries sit in ``whole``'s (a superset): a
        slice when they are contiguous (indexing with it is a view, which
        matters next to a derivative that takes microseconds), else their
        indices."""
        starts, start = {}, 0
        for i, size in zip(whole.positions, whole.sizes, strict=True):
            starts[i] = start
            start += size
        ranges = [range(starts[i], starts[i] + size) for i, size in zip(self.positions, self.sizes, strict=True)]
        if all(a.stop == b.start for a, b in zip(ranges, ranges[1:])):
            return slice(ranges[0].start, ranges[-1].stop) if ranges else slice(0, 0)
        return np.concatenate([np.arange(r.start, r.stop) for r in ranges])

    def gather(self, values: Sequence[Any]) -> np.ndarray:
        """The layout's entries of per-argument ``values``."""
        return (
            np.concatenate([np.ravel(np.asarray(values[i], dtype=np.float64)) for i in self.positions])
            if self.positions
            else np.zeros(0)
        )


def checked_position(value: object, parameter: str, count: int | None, owner: str, api: str) -> int:
    """``value`` as a position among ``owner`` (``"the 3 outputs of f"``),
    ``count`` of them (``None``: not known yet): an ``int`` from 0.  A
    ``bool`` or a negative number is refused (docs/design.md, decision 147),
    where one was read as 1 and the other counted from the end."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(
            f"{api}: {parameter} must be an int (a position among {owner}), got {type(value).__name__} {value!r}"
        )
    if value < 0:
        raise ValueError(f"{api}: {parameter}={value} is negative; it is a position among {owner}, from 0")
    if count is not None and value >= count:
        raise IndexError(f"{api}: {parameter}={value} is out of range for {owner} (positions from 0)")
    return int(value)


def sequence_of_positions(chosen: Any, parameter: str, what: str) -> Sequence[Any]:
    """``chosen``, given for ``what``'s ``parameter``, checked to be a
    sequence (of positions, checked one by one where they are read): a
    number or a string is a ``TypeError`` naming both."""
    if isinstance(chosen, int | np.integer | str) or not isinstance(chosen, Sequence | np.ndarray):
        example = f" ({parameter}=({chosen},))" if isinstance(chosen, int | np.integer) else ""
        raise TypeError(f"{what}: {parameter} must be a sequence of positions{example}, got {type(chosen).__name__}")
    return chosen


def selected(
    call: ReversibleCall, side: Sequence[int], chosen: Sequence[int] | None, parameter: str, what: str
) -> tuple[int, ...]:
    """The arguments of ``call.spec`` holding ``f``'s inputs or outputs
    (``side``: ``call.inputs`` or ``call.outputs``) numbered ``chosen`` (the
    parameter ``parameter``: ``wrt`` or ``of``), checked to be positions
    that carry a derivative, each once; by default every one that does."""
    spec = call.spec
    if chosen is None:
        return tuple(p for p in side if p in spec.carrying)
    chosen = sequence_of_positions(chosen, parameter, what)
    outputs = side is call.outputs and call.outputs != call.inputs
    owner = f"the {len(side)} {'outputs' if outputs else 'arguments'} of {spec.function.__name__}"
    positions = [checked_position(k, parameter, len(side), owner, what) for k in chosen]
    for k in positions:
        if side[k] not in spec.carrying:
            which = call.output_name(k) if outputs else argument_name(spec.function, k)
            raise TypeError(f"{what}: {which} is not a float scalar or an array of floats")
    if len(set(positions)) < len(positions):
        raise ValueError(f"{what}: {parameter}={tuple(positions)} names a position twice")
    return tuple(side[k] for k in positions)


def zeroed_workspaces(arrays: Sequence[np.ndarray], groups: int) -> list[np.ndarray]:
    """``groups`` zeroed f64 copies of each of ``arrays``, group by group, as
    the matrix functions take them: views into one buffer per array (a
    tenth of the time of separate ``np.zeros_like`` calls, which dominate a
    small Hessian)."""
    buffers = [np.zeros((groups, *np.shape(a))) for a in arrays]
    return [buffer[group] for group in range(groups) for buffer in buffers]


def all_f64(spec: Specialization) -> bool:
    """Whether every argument carrying a derivative is f64 (or an f64 array):
    what the whole-matrix functions of ``revmlir.ad.matrices`` take."""
    return all(
        (t.element_type if isinstance(t, MemRefType) else t) == f64 for t in (spec.types[i] for i in spec.carrying)
    )
