"""Schedules whose trip count is known before the reverse sweep starts.

They are generated eagerly into a ``Schedule``, so they can be inspected and
validated, serve as the reference for the run-time cursors that checkpointed
loops run (``revmlir.checkpoint.cursor``), and tests can compare cost and
memory with the known optima: store-all (no recomputation), binary bisection (Siskind & Pearlmutter's
divide and conquer: logarithmic memory and logarithmic recomputation factor),
binomial checkpointing (Griewank & Walther's Revolve: the fewest recomputed
steps possible for a fixed number of snapshots), and Bennett's k-ary pebble
game (reverse computing with no erasure: time (2k-1)^n, space n(k-1)+2 for
k^n steps).
"""

from __future__ import annotations

from math import comb
from typing import TypeAlias

from revmlir.checkpoint.actions import Compute, Objective, Uncompute
from revmlir.checkpoint.schedule import Schedule, ScheduleBuilder, count

Pebble: TypeAlias = Compute | Uncompute
"""An action of Bennett's pebble game: every step is run or unrun."""


def _beta(s: int, t: int) -> int:
    """Griewank's beta(s, t) = C(s + t, s): the longest chain s snapshots can
    reverse when no step is advanced more than t times."""
    return comb(s + t, s) if s >= 0 and t >= 0 else 0


def repetition_number(steps: int, snapshots: int) -> int:
    """The least t with beta(snapshots, t) >= steps."""
    steps = count("repetition_number", "steps", steps, 0)
    snapshots = count("repetition_number", "snapshots", snapshots, 1)
    t = 0
    while _beta(snapshots, t) < steps:
        t += 1
    return t


def binomial_optimum(steps: int, snapshots: int) -> int:
    """Griewank and Walther's minimal number of plain forward steps to reverse
    ``steps`` steps with ``snapshots`` stored states (the initial one included):
    t * steps - beta(snapshots + 1, t - 1)."""
    steps = count("binomial_optimum", "steps", steps, 0)
    snapshots = count("binomial_optimum", "snapshots", snapshots, 1)
    if steps == 0:
        return 0
    t = repetition_number(steps, snapshots)
    return t * steps - _beta(snapshots + 1, t - 1)


def store_all(steps: int) -> Schedule:
    """Snapshot every state on one forward sweep; no step is advanced twice."""
    steps = count("store_all", "steps", steps, 0)
    b = ScheduleBuilder()
    for i in range(steps):
        b.advance(1 if i else 0)
        b.take()
    for i in reversed(range(steps)):
        b.reverse(i)
        b.free(i)
    return Schedule("store_all", steps, Objective.ADJOINT, tuple(b.actions))


def bisection(steps: int) -> Schedule:
    """Binary bisection: split off the first floor(l/2) steps, reverse the rest
    first.  Peak = ceil(log2 steps) + 1 stored states for steps >= 1."""
    steps = count("bisection", "steps", steps, 0)
    b = ScheduleBuilder()

    def rec(a: int, end: int) -> None:  # s_a is stored
        length = end - a
        if length == 1:
            b.reverse(a)
            return
        m = a + length // 2
        b.goto(a)
        b.advance(m - a)
        b.take()
        rec(m, end)
        b.free(m)
        rec(a, m)

    if steps:
        b.take()
        rec(0, steps)
        b.free(0)
    return Schedule("bisection", steps, Objective.ADJOINT, tuple(b.actions))


def binomial_split(length: int, snapshots: int) -> int:
    """An optimal first split for binomial checkpointing (``length >= 2``,
    ``snapshots >= 2``): the least j with j + F(length - j, snapshots - 1) +
    F(j, snapshots) = F(length, snapshots), which is
    max(length - beta(snapshots - 1, t), beta(snapshots, t - 2), 1) for the
    repetition number t.  A closed form, so the run-time scheduler
    (``revmlir.checkpoint.cursor``) needs no search; the tests check its
    optimality against the search over every split."""
    length = count("binomial_split", "length", length, 2)
    snapshots = count("binomial_split", "snapshots", snapshots, 2)
    t = repetition_number(length, snapshots)
    return max(length - _beta(snapshots - 1, t), _beta(snapshots, t - 2), 1)


def binomial(steps: int, snapshots: int) -> Schedule:
    """Revolve: reverse ``steps`` steps holding at most ``snapshots`` states (the
    initial one included) with the provably minimal number of plain forward
    steps, ``binomial_optimum(steps, snapshots)``."""
    steps = count("binomial", "steps", steps, 0)
    snapshots = count("binomial", "snapshots", snapshots, 1)
    b = ScheduleBuilder()
    if steps:
        b.take()
        binomial_into(b, 0, steps, snapshots)
        b.free(0)
    return Schedule("binomial", steps, Objective.ADJOINT, tuple(b.actions), (("snapshots", snapshots),))


def binomial_into(b: ScheduleBuilder, a: int, end: int, snapshots: int) -> None:
    """Reverse steps [a, end) given s_a stored, using at most ``snapshots``
    stored states including s_a.  Leaves s_a stored."""
    while end - a > 1 and snapshots > 1:
        j = binomial_split(end - a, snapshots)
        b.goto(a)
        b.advance(j)
        b.take()
        binomial_into(b, a + j, end, snapshots - 1)
        b.free(a + j)
        end = a + j
    for i in reversed(range(a, end)):  # one snapshot (or one step): restart from s_a
        b.goto(a)
        b.advance(i - a)
        b.reverse(i)


def bennett(steps: int, k: int) -> Schedule:
    """Bennett's k-ary pebble game: compute s_steps from s_0 reversibly, erasing
    nothing, by computing k segments, then uncomputing the k - 1 intermediate
    states.  For steps = k^n: (2k-1)^n step executions, peak n(k-1)+2 states."""
    steps = count("bennett", "steps", steps, 0)
    k = count("bennett", "k", k, 2)
    cache: dict[int, tuple[Pebble, ...]] = {}

    def pebble(length: int) -> tuple[Pebble, ...]:  # actions for [0, length)
        if length in cache:
            return cache[length]
        if length == 1:
            out: tuple[Pebble, ...] = (Compute(0),)
        else:
            parts = min(k, length)
            cuts = [length * p // parts for p in range(parts + 1)]
            acts: list[Pebble] = []
            for p in range(parts):
                acts += _shift(pebble(cuts[p + 1] - cuts[p]), cuts[p])
            for p in reversed(range(parts - 1)):
                acts += _shift(_inverse(pebble(cuts[p + 1] - cuts[p])), cuts[p])
            out = tuple(acts)
        cache[length] = out
        return out

    actions = pebble(steps) if steps else ()
    return Schedule("bennett", steps, Objective.REVERSIBLE, actions, (("k", k),))


def _shift(actions: tuple[Pebble, ...], by: int) -> list[Pebble]:
    return [Compute(a.step + by) if isinstance(a, Compute) else Uncompute(a.step + by) for a in actions]


def _inverse(actions: tuple[Pebble, ...]) -> tuple[Pebble, ...]:
    return tuple(Uncompute(a.step) if isinstance(a, Compute) else Compute(a.step) for a in reversed(actions))
