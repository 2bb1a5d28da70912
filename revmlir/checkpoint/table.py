"""Schedules as entry streams: what a checkpointed loop carries out.

A table is a flat list of ``(kind, step)`` pairs, one per step execution or
snapshot operation (``ADVANCE(n)`` becomes ``n`` ``PLAIN`` entries), so one
loop with one copy of the step body can carry out any schedule.  The
generated code gets its entries one at a time from a run-time cursor
(``revmlir.checkpoint.cursor``); ``encode`` gives the same stream from an
offline schedule, as the reference the cursor is tested against.  Snapshots
live on stacks in the generated code, so a table is accepted only when every
``RESTORE`` and ``FREE_SNAPSHOT`` names the latest snapshot still held:
store-all, bisection and binomial schedules are nested that way; the online
schedule's thinning is not.

``replay`` turns a stream back into actions and simulates them
(``revmlir.checkpoint.simulate``), so the tests judge a cursor's entries with
the same machine that judges schedules.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

from revmlir.checkpoint.actions import (
    Action,
    Advance,
    FreeSnapshot,
    Objective,
    Restore,
    ReverseStep,
    TakeSnapshot,
)
from revmlir.checkpoint.schedule import Schedule, ScheduleError, Stats, simulate


class Entry(IntEnum):
    """The kind of a table entry; ``step`` is the step run (``PLAIN``,
    ``REVERSE``) or the state snapshotted (the others)."""

    PLAIN = 0
    TAKE = 1
    RESTORE = 2
    FREE = 3
    REVERSE = 4
    END = 5
    """Only from a run-time cursor: the schedule is over."""


Table = list[tuple[Entry, int]]


def encode(schedule: Schedule) -> Table:
    """The table of a valid adjoint ``schedule``; ``ScheduleError`` if it
    is not one or is not last-in-first-out."""
    if schedule.objective is not Objective.ADJOINT:
        raise ScheduleError(None, None, f"a {schedule.objective.value} schedule has no adjoint action table")
    simulate(schedule.objective, schedule.actions, schedule.steps)
    table: Table = []
    position = 0
    for action in schedule.actions:
        if isinstance(action, Advance):
            table += [(Entry.PLAIN, position + j) for j in range(action.n)]
            position += action.n
        elif isinstance(action, TakeSnapshot):
            table.append((Entry.TAKE, action.step))
        elif isinstance(action, Restore):
            table.append((Entry.RESTORE, action.step))
            position = action.step
        elif isinstance(action, FreeSnapshot):
            table.append((Entry.FREE, action.step))
        elif isinstance(action, ReverseStep):
            table.append((Entry.REVERSE, action.step))
    _check_nested(table)
    return table


def replay(table: Sequence[tuple[int, int]]) -> Stats:
    """Simulate ``table`` as a schedule for as many steps as it reverses;
    ``ScheduleError`` names the first bad action."""
    actions: list[Action] = []
    for kind, step in table:
        if kind == Entry.PLAIN:
            if actions and isinstance(last := actions[-1], Advance):
                actions[-1] = Advance(last.n + 1)
            else:
                actions.append(Advance(1))
        elif kind == Entry.TAKE:
            actions.append(TakeSnapshot(step))
        elif kind == Entry.RESTORE:
            actions.append(Restore(step))
        elif kind == Entry.FREE:
            actions.append(FreeSnapshot(step))
        elif kind == Entry.REVERSE:
            actions.append(ReverseStep(step))
        else:
            raise ScheduleError(len(actions), None, f"unknown table entry kind {kind}")
    steps = sum(1 for kind, _ in table if kind == Entry.REVERSE)
    stats = simulate(Objective.ADJOINT, tuple(actions), steps)
    _check_nested([(Entry(k), s) for k, s in table])
    return stats


def _check_nested(table: Table) -> None:
    held: list[int] = []
    for index, (kind, step) in enumerate(table):
        if kind == Entry.TAKE:
            held.append(step)
        elif kind in (Entry.RESTORE, Entry.FREE):
            if not held or held[-1] != step:
                raise ScheduleError(
                    index,
                    None,
                    f"{kind.name} of s_{step}, which is not the latest snapshot held (snapshots are a stack)",
                )
            if kind == Entry.FREE:
                held.pop()
