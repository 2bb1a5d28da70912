"""Lumps: inverse accumulation for code that is not constant-width
(Pearlmutter and Siskind, "Inverse Accumulation Mode", section 3).

A computation ``ℝⁿ → ℝⁿ`` whose control flow is resolved is a data-flow
graph of float values (``Graph``).  Ordered topologically, it has after each
op a set of *live* active values: the inputs and results still read later,
and the outputs.  A constant-width computation has exactly ``n`` live after
every op.  Ordinary code does not (a temporary is one more live value), but
wherever exactly ``n`` are live the computation can be cut, and each piece, a
*lump*, maps ``n`` values to ``n`` values: the ``l`` it overwrites (the
*dying* ones) to ``l`` new ones, passing the other ``n − l`` through.  Its
Jacobian is the seed's (2.6g), ``[[A, B], [0, I]]`` with ``A`` ``l × l``,
and its inverse ``[[A⁻¹, −A⁻¹B], [0, I]]`` costs one dense LU of ``A``: the
lump's *width* ``l`` is what inverse accumulation pays for it.  Fewer than
``n`` live values anywhere make ``J`` singular (its rank is at most that
count), whatever the order.

Which order is taken decides the lumps (the seed's Fig. 4).  ``greedy``
always schedules next the ready op that leaves the fewest values live (the
seed conjectures greedy cutting optimal); ``exhaustive`` searches every
order of a small graph for the least total LU cost ``Σ l³``.

``A`` and ``B`` come from the tangent of the lump: the local partials of its
ops (``Node.partials``) pushed forward from its ``n`` live-in values, never
from finite differences.  ``inverse_tangent`` solves ``J ẋ = ẏ`` lump by lump
from the last; ``inverse_adjoint`` solves ``Jᵀ ȳ = x̄`` from the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from revmlir.checkpoint.schedule import count
from revmlir.errors import describe_op

EXHAUSTIVE_LIMIT = 12
"""The most ops ``exhaustive`` searches the orders of, by default."""

EXHAUSTIVE_MAX = 16
"""The most ops ``exhaustive`` may be asked to search: its states are the
sets of ops scheduled, ``2^k`` for ``k`` ops that may run in any order, so
one more op doubles the time (16 independent ops take seconds, 18 a
quarter of a minute, 20 a minute and most of a gigabyte)."""


def exhaustive_limit(who: str, value: Any) -> int:
    """``value``, given for ``who``'s ``exhaustive_limit``, as a count of
    ops from 0 to ``EXHAUSTIVE_MAX`` (an integer, as a schedule's counts
    are): a ``TypeError`` or ``ValueError`` naming ``who``, the parameter
    and the value."""
    limit = count(who, "exhaustive_limit", value, 0)
    if limit > EXHAUSTIVE_MAX:
        raise ValueError(
            f"{who}: exhaustive_limit must be <= {EXHAUSTIVE_MAX}, got {limit}: the exhaustive search "
            "takes time and memory exponential in the number of ops that may run in any order"
        )
    return limit


class LumpError(PassFailedException):
    """A function whose inverse products cannot be built lump by lump: not
    square, control flow not resolvable, structurally singular; reported at
    an op or the function."""

    def __init__(self, where: Operation | None, message: str):
        super().__init__(message if where is None else f"{describe_op(where)}: {message}")


class SingularLumpError(LumpError):
    """A lump whose Jacobian block ``A`` is singular: ``J`` is singular."""


class IllConditionedLumpError(SingularLumpError):
    """A lump whose Jacobian block ``A``, equilibrated, has a condition
    number past ``1/ε``: ``J`` is singular to working precision (a
    ``SingularLumpError`` to code that catches those), though it may not
    be singular."""


@dataclass(frozen=True)
class Node:
    """An active value: an input (``op`` is ``None``) or an op's float
    result, with its active operands and the partial derivatives of the
    result with respect to them (``None`` where not known: statically, or
    for an input), and why its derivative is not defined at the point
    (``undefined``: a logarithm of a non-positive value), which the
    inverse products refuse at the op that computes it, ``undefined_at``:
    ``op``, or the logarithm of a constant whose value ``op`` reads."""

    op: Operation | None
    operands: tuple[int, ...] = ()
    partials: tuple[float | None, ...] = ()
    value: float | None = None
    label: str = ""
    undefined: str | None = None
    undefined_at: Operation | None = None


@dataclass(frozen=True)
class Graph:
    """The data flow of a function at a point: ``nodes[:n]`` are its active
    inputs in argument layout, ``outputs`` its active outputs (distinct
    nodes, read after the last op), ``n`` of each."""

    function: Operation
    nodes: tuple[Node, ...]
    n: int
    outputs: tuple[int, ...]

    @property
    def computed(self) -> range:
        return range(self.n, len(self.nodes))


@dataclass(frozen=True)
class Lump:
    """Ops ``nodes`` (in order), which overwrite the live values ``dying``
    with ``new`` and read the live values ``reads`` that pass through them
    (the others pass through unread: the columns of ``B`` that are zero are
    never formed); ``width`` is ``l``, ``peak`` the most values live inside
    it."""

    nodes: tuple[int, ...]
    dying: tuple[int, ...]
    new: tuple[int, ...]
    reads: tuple[int, ...]
    peak: int

    @property
    def width(self) -> int:
        return len(self.new)


@dataclass(frozen=True)
class Lumping:
    """A topological order of a graph's ops and the lumps it cuts into."""

    order: tuple[int, ...]
    lumps: tuple[Lump, ...]

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(lump.width for lump in self.lumps)

    @property
    def cost(self) -> int:
        """The dense LU work, ``Σ l³``: what an order is judged by."""
        return sum(width**3 for width in self.widths)


def check_square(graph: Graph) -> None:
    """Every input must reach an output, and outputs must be distinct
    values: else ``J`` has a zero column or two equal rows."""
    reached = set(graph.outputs)
    for index in reversed(graph.computed):
        if index in reached:
            reached.update(graph.nodes[index].operands)
    for index in range(graph.n):
        if index not in reached:
            raise SingularLumpError(
                graph.function,
                f"active input {graph.nodes[index].label} does not reach an output: "
                "J has a zero column, so it is singular",
            )


class _Liveness:
    """Live values as ops are scheduled: a value is live while an op that
    reads it is unscheduled, or for good when it is an output.  Only ops that
    reach an output count (the others do not change ``J``)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        reached = set(graph.outputs)
        for index in reversed(graph.computed):
            if index in reached:
                reached.update(graph.nodes[index].operands)
        self.ops = [i for i in graph.computed if i in reached]
        self.readers: dict[int, int] = {i: 0 for i in range(len(graph.nodes))}
        for i in self.ops:
            for operand in set(graph.nodes[i].operands):
                self.readers[operand] += 1
        self.output_set = set(graph.outputs)
        self.live = {i for i in range(graph.n) if self.readers[i] or i in self.output_set}
        self.waiting = {i: len({v for v in graph.nodes[i].operands if v >= graph.n}) for i in self.ops}
        self.ready = {i for i in self.ops if self.waiting[i] == 0}
        self.users: dict[int, list[int]] = {i: [] for i in range(len(graph.nodes))}
        for i in self.ops:
            for operand in set(graph.nodes[i].operands):
                self.users[operand].append(i)

    def change(self, op: int) -> int:
        """How many more values are live after scheduling ``op``."""
        freed = sum(1 for v in set(self.graph.nodes[op].operands) if self.readers[v] == 1 and v not in self.output_set)
        return 1 - freed

    def schedule(self, op: int) -> list[int]:
        """Schedule ``op``; the values it frees."""
        self.ready.discard(op)
        self.live.add(op)
        freed = []
        for v in set(self.graph.nodes[op].operands):
            self.readers[v] -= 1
            if self.readers[v] == 0 and v not in self.output_set:
                self.live.discard(v)
                freed.append(v)
        for user in self.users[op]:
            self.waiting[user] -= 1
            if self.waiting[user] == 0:
                self.ready.add(user)
        return freed


def _too_few(graph: Graph, after: int | None, live: int) -> SingularLumpError:
    where = "before the first op" if after is None else f"after {_describe(graph, after)}"
    return SingularLumpError(
        graph.function,
        f"only {live} active values are live {where}, fewer than n = {graph.n}: "
        "J factors through them, so it is singular",
    )


def _describe(graph: Graph, index: int) -> str:
    node = graph.nodes[index]
    return describe_op(node.op) if node.op is not None else node.label


def lumps_of(graph: Graph, order: Sequence[int]) -> Lumping:
    """Cut ``order`` (a topological order of the ops that reach an output)
    wherever exactly ``n`` values are live."""
    check_square(graph)
    state = _Liveness(graph)
    if len(state.live) < graph.n:
        raise _too_few(graph, None, len(state.live))
    lumps: list[Lump] = []
    current: list[int] = []
    dying: list[int] = []
    peak = graph.n
    for op in order:
        current.append(op)
        dying += state.schedule(op)
        live = len(state.live)
        if live < graph.n:
            raise _too_few(graph, op, live)
        peak = max(peak, live)
        if live == graph.n:
            created = set(current)
            old = [v for v in dying if v not in created]
            new = tuple(v for v in current if v in state.live)
            skip = created | set(old)
            reads = {v for i in current for v in graph.nodes[i].operands if v not in skip}
            lumps.append(Lump(tuple(current), tuple(old), new, tuple(sorted(reads)), peak))
            current, dying, peak = [], [], graph.n
    return Lumping(tuple(order), tuple(lumps))


def program_order(graph: Graph) -> tuple[int, ...]:
    """The ops that reach an output, in the order the program runs them."""
    return tuple(_Liveness(graph).ops)


def greedy(graph: Graph) -> Lumping:
    """Schedule next the ready op that leaves the fewest values live (the
    first in program order among equals), cutting wherever ``n`` are."""
    check_square(graph)
    state = _Liveness(graph)
    order: list[int] = []
    while state.ready:
        op = min(state.ready, key=lambda i: (state.change(i), i))
        order.append(op)
        state.schedule(op)
    return lumps_of(graph, order)


def exhaustive(graph: Graph, limit: int = EXHAUSTIVE_LIMIT) -> Lumping | None:
    """The order of least ``Σ l³`` over every topological order, by dynamic
    programming over the sets of scheduled ops (the live values depend on
    the set alone); ``None`` for graphs of more than ``limit`` ops."""
    check_square(graph)
    base = _Liveness(graph)
    ops = base.ops
    if len(ops) > limit:
        return None
    bit = {op: 1 << k for k, op in enumerate(ops)}
    needs = [sum(bit.get(v, 0) for v in graph.nodes[op].operands) for op in ops]
    readers = {v: sum(bit[op] for op in ops if v in graph.nodes[op].operands) for v in [*range(graph.n), *ops]}
    outputs = set(graph.outputs)
    full = (1 << len(ops)) - 1

    def live(done: int) -> frozenset[int]:
        return frozenset(v for v in readers if (v < graph.n or done & bit[v]) and (v in outputs or readers[v] & ~done))

    best: dict[int, tuple[int, tuple[int, ...]]] = {full: (0, ())}

    def solve(cut: int) -> tuple[int, tuple[int, ...]]:
        """The least cost and its order from the cut state ``cut`` on."""
        if cut in best:
            return best[cut]
        start = live(cut)
        paths: dict[int, tuple[int, ...]] = {cut: ()}
        frontier = [cut]
        choice: tuple[int, tuple[int, ...]] | None = None
        while frontier:
            done = frontier.pop()
            for k, op in enumerate(ops):
                if done & (1 << k) or needs[k] & ~done:
                    continue
                after = done | (1 << k)
                if after in paths:
                    continue
                path = (*paths[done], op)
                paths[after] = path
                now = live(after)
                if len(now) < graph.n:
                    raise _too_few(graph, op, len(now))
                if len(now) > graph.n:
                    frontier.append(after)
                    continue
                rest_cost, rest = solve(after)
                cost = len(now - start) ** 3 + rest_cost
                if choice is None or cost < choice[0]:
                    choice = (cost, path + rest)
        assert choice is not None, "a cut state before the end has a next cut"
        best[cut] = choice
        return choice

    if len(live(0)) < graph.n:
        raise _too_few(graph, None, len(live(0)))
    return lumps_of(graph, solve(0)[1])


# -- the lumps' Jacobians and the inverse products ---------------------------


def _tangents(graph: Graph, lump: Lump) -> dict[int, dict[int, float | None]]:
    """The tangent of each value the lump computes, as coefficients of its
    live-in values (``None`` where a partial is not known)."""
    found: dict[int, dict[int, float | None]] = {v: {v: 1.0} for v in (*lump.dying, *lump.reads)}
    for index in lump.nodes:
        node = graph.nodes[index]
        total: dict[int, float | None] = {}
        for operand, partial in zip(node.operands, node.partials):
            for v, c in found[operand].items():
                term = _times(partial, c)
                total[v] = term if v not in total else _plus(total[v], term)
        found[index] = total
    return found


def _times(a: float | None, b: float | None) -> float | None:
    if a == 0.0 or b == 0.0:
        return 0.0
    return None if a is None or b is None else a * b


def _plus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def blocks(graph: Graph, lump: Lump) -> tuple[list[list[float | None]], list[list[float | None]]]:
    """The lump's ``A = ∂new/∂dying`` and ``B = ∂new/∂reads``."""
    found = _tangents(graph, lump)
    rows = [found[v] for v in lump.new]
    A = [[row.get(d, 0.0) for d in lump.dying] for row in rows]
    B = [[row.get(p, 0.0) for p in lump.reads] for row in rows]
    return A, B


def singular_block(A: Sequence[Sequence[float | None]]) -> bool:
    """Whether ``A`` is singular for sure: a row or column of zeros, or
    every entry known and a zero determinant (or a failed LU)."""
    if any(all(x == 0.0 for x in row) for row in A):
        return True
    if any(all(row[j] == 0.0 for row in A) for j in range(len(A))):
        return True
    if any(x is None for row in A for x in row):
        return False
    return _factor_fails(np.array(A, dtype=float))


def _factor_fails(A: np.ndarray) -> bool:
    try:
        np.linalg.solve(A, np.eye(len(A)))
    except np.linalg.LinAlgError:
        return True
    return False


def describe_lump(graph: Graph, lumping: Lumping, index: int) -> str:
    lump = lumping.lumps[index]
    ops = ", ".join(_describe(graph, op) for op in lump.nodes)
    return f"lump #{index} of width {lump.width} ({ops})"


def check_steps(graph: Graph, lumping: Lumping) -> None:
    """Raise at the first lump whose step is singular for sure."""
    for index, lump in enumerate(lumping.lumps):
        if singular_block(blocks(graph, lump)[0]):
            raise SingularLumpError(
                graph.function,
                f"singular step: {describe_lump(graph, lumping, index)} has a singular "
                "Jacobian block, so J is singular",
            )


def _solve(graph: Graph, lumping: Lumping, index: int, A: np.ndarray, b: np.ndarray, transpose: bool) -> np.ndarray:
    """``A⁻¹b`` (``A⁻ᵀb``) by LU of ``A`` equilibrated (``_equilibrated``),
    so that a value in other units (``1e16·x``) does not make a regular
    ``A`` look singular: conditioning is judged on the scaled block, which
    is what the solve's accuracy depends on.  A zero pivot is a singular
    ``A``; a scaled condition number past ``1/ε`` one too ill-conditioned
    for float64, said with its estimate; a solution past float64's range an
    overflow: three errors naming the lump (described only then: the
    description formats every op of the lump)."""
    row_exponents, column_exponents, scaled = _equilibrated(A)
    try:
        with np.errstate(over="ignore"):  # an overflow is said below
            x = _scaled_solve(scaled, b, row_exponents, column_exponents, transpose)
    except np.linalg.LinAlgError:
        raise SingularLumpError(
            graph.function,
            f"singular step: {describe_lump(graph, lumping, index)} has a singular Jacobian block at these arguments, so J is singular",
        ) from None
    condition = float(np.linalg.cond(scaled))
    if not condition * np.finfo(float).eps <= 1.0:  # NaN too
        raise IllConditionedLumpError(
            graph.function,
            f"ill-conditioned step: {describe_lump(graph, lumping, index)} has a Jacobian block whose condition number is about "
            f"{condition:.1e} (rows and columns scaled), past 1/ε ≈ {1 / np.finfo(float).eps:.1e} at these "
            "arguments: float64 cannot solve it, so J's inverse products would be noise",
        )
    if not np.all(np.isfinite(x)) and np.all(np.isfinite(b)):
        raise LumpError(
            graph.function,
            f"overflow: the inverse product through {describe_lump(graph, lumping, index)} has entries past float64's range at these arguments",
        )
    return x


def _scaled_solve(
    scaled: np.ndarray, b: np.ndarray, row_exponents: np.ndarray, column_exponents: np.ndarray, transpose: bool
) -> np.ndarray:
    """``A⁻¹b`` (``A⁻ᵀb``) from ``S = RAC``: ``S(C⁻¹x) = Rb`` (``Sᵀ(R⁻¹x) = Cb``).

    ``Rb`` is formed by exponents, divided by ``2^k`` for its largest entry's
    exponent ``k`` (multiplied back into the solution): multiplying ``b`` by
    ``R`` itself would flush a tiny ``b_i`` in a row of huge entries to zero
    (``R_i = 2^-997``), and the solve would silently return 0 where the
    answer is representable.  Scaled so, ``Rb`` loses only entries negligible
    next to its own largest one."""
    first, second = (column_exponents, row_exponents) if transpose else (row_exponents, column_exponents)
    mantissas, exponents = np.frexp(b)
    exponents = exponents + first
    nonzero = mantissas != 0
    k = int(np.max(exponents[nonzero])) if np.any(nonzero) else 0
    y = np.linalg.solve(scaled.T if transpose else scaled, np.ldexp(mantissas, exponents - k))
    return np.ldexp(y, second + k)


def _equilibrated(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``A``'s rows and columns scaled by powers of 2 (exactly, as
    LAPACK's ``dgeequ``) so that each has largest entry in ``[0.5, 1)``:
    the exponents of ``R`` and ``C`` and ``S = RAC``.  A row or column of
    zeros keeps exponent 0 (LU then meets the zero pivot)."""
    row_exponents = -_exponents(np.max(np.abs(A), axis=1, initial=0.0))
    rows_scaled = np.ldexp(A, row_exponents[:, None])
    column_exponents = -_exponents(np.max(np.abs(rows_scaled), axis=0, initial=0.0))
    return row_exponents, column_exponents, np.ldexp(rows_scaled, column_exponents[None, :])


def _exponents(largest: np.ndarray) -> np.ndarray:
    """``e`` with ``largest = m·2^e``, ``m`` in ``[0.5, 1)``; 0 for 0."""
    return np.frexp(largest)[1]


def _dense(graph: Graph, lumping: Lumping, index: int) -> tuple[np.ndarray, np.ndarray]:
    """The Jacobian blocks ``A`` and ``B`` of lump ``index`` at the
    arguments.  An infinite or NaN partial derivative (``sqrt`` at 0, at a
    negative number) is an error naming the lump: LAPACK fails on it with
    an error that names nothing, or the solve carries the NaN on."""
    lump = lumping.lumps[index]
    for node in (graph.nodes[i] for i in lump.nodes):
        if node.undefined is not None:
            raise LumpError(node.undefined_at, f"{node.undefined}, so the Jacobian J is not defined at these arguments")
    A, B = blocks(graph, lump)
    width = lump.width
    dense = np.array(A, dtype=float).reshape(width, width), np.array(B, dtype=float).reshape(width, len(lump.reads))
    if not all(np.isfinite(block).all() for block in dense):
        raise LumpError(
            graph.function,
            f"non-finite step: {describe_lump(graph, lumping, index)} has an infinite or NaN partial "
            "derivative at these arguments, so the Jacobian J has non-finite entries there",
        )
    return dense


def inverse_tangent(graph: Graph, lumping: Lumping, output_tangents: np.ndarray) -> np.ndarray:
    """``ẋ = J⁻¹ẏ``: from the outputs back, each lump solves
    ``A ḋ = ẇ − B ṗ`` for its dying values."""
    dots = dict(zip(graph.outputs, np.asarray(output_tangents, dtype=float)))
    for index in reversed(range(len(lumping.lumps))):
        lump = lumping.lumps[index]
        A, B = _dense(graph, lumping, index)
        passing = np.array([dots[p] for p in lump.reads], dtype=float)
        new = np.array([dots.pop(w) for w in lump.new])
        for d, value in zip(lump.dying, _solve(graph, lumping, index, A, new - B @ passing, False)):
            dots[d] = value
    return np.array([dots[i] for i in range(graph.n)])


def inverse_adjoint(graph: Graph, lumping: Lumping, input_cotangents: np.ndarray) -> np.ndarray:
    """``ȳ = J⁻ᵀx̄``: from the inputs on, each lump sets ``w̄ = A⁻ᵀd̄`` and
    takes ``Bᵀw̄`` off the values it passes through."""
    bars = dict(zip(range(graph.n), np.asarray(input_cotangents, dtype=float)))
    for index, lump in enumerate(lumping.lumps):
        A, B = _dense(graph, lumping, index)
        dying = np.array([bars.pop(d) for d in lump.dying])
        new = _solve(graph, lumping, index, A, dying, True)
        for k, p in enumerate(lump.reads):
            bars[p] -= float(B[:, k] @ new)
        bars.update(zip(lump.new, new))
    return np.array([bars[o] for o in graph.outputs])
