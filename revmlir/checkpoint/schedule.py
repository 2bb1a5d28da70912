"""Schedules as immutable values, checked by simulation.

Every claim a schedule makes (how many steps it recomputes, how many states it
keeps) is measured here by replaying its actions on an abstract machine that
knows only which states exist, never taken from the generator's arithmetic.
The same machine is the validator, so a wrong generator cannot report good
numbers: stats and validity come from one place.

Conventions (shared by all schedules):

* ``peak`` counts stored states, and the initial state counts: an adjoint
  schedule snapshots ``s_0`` first, the pebble game holds ``s_0`` from the start.
  The working state of an adjoint schedule is not counted (Revolve's convention),
  so ``binomial(steps, s)`` validates with ``memory = s``.
* ``plain`` counts untaped forward step executions (``ADVANCE`` and, for the
  pebble game, ``COMPUTE``); ``taped`` counts ``REVERSE_STEP``; ``uncompute``
  counts ``UNCOMPUTE``.
* An adjoint schedule must end with no snapshot left; a reversible schedule
  must end holding exactly ``s_0`` and ``s_steps``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from revmlir.checkpoint.actions import (
    ADJOINT_KINDS,
    REVERSIBLE_KINDS,
    Action,
    Advance,
    Compute,
    FreeSnapshot,
    Objective,
    Restore,
    ReverseStep,
    TakeSnapshot,
    Uncompute,
)


class ScheduleError(ValueError):
    """A schedule that does not do what it must; ``index`` is the first bad action
    (``None`` when the schedule is only wrong at its end)."""

    def __init__(self, index: int | None, action: Action | None, reason: str):
        self.index = index
        self.action = action
        self.reason = reason
        where = "at end of schedule" if index is None else f"action #{index} {action}"
        super().__init__(f"invalid checkpoint schedule, {where}: {reason}")


def count(who: str, name: str, value: Any, least: int) -> int:
    """``value``, given for the parameter ``name`` of ``who``, as a count
    of steps or states: an integer (Python's or numpy's) of at least
    ``least``, as a Python ``int``.  A float is refused even where it is
    integral, and so is a bool, an ``int`` to Python: either is a mistake
    in the call (``binomial(10, True)`` for five snapshots, ``online(1.5)``)
    that the arithmetic would otherwise round, loop on or fail in with a
    message of its own.  A ``TypeError`` or ``ValueError`` naming the
    parameter and the value."""
    number = None
    if not isinstance(value, bool):
        try:
            number = operator.index(value)
        except TypeError:
            pass
    if number is None:
        raise TypeError(f"{who}: {name} must be an integer, got {value!r} ({type(value).__name__})")
    if number < least:
        raise ValueError(f"{who}: {name} must be >= {least}, got {number}")
    return number


@dataclass(frozen=True)
class Stats:
    plain: int = 0
    taped: int = 0
    uncompute: int = 0
    peak: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"plain": self.plain, "taped": self.taped, "uncompute": self.uncompute, "peak": self.peak}


def simulate(objective: Objective, actions: tuple[Action, ...], steps: int, memory: int | None = None) -> Stats:
    """Replay ``actions`` on a chain of ``steps`` steps; raise ``ScheduleError``
    at the first illegal action.  ``memory=None`` means unbounded."""
    steps = count("simulate", "steps", steps, 0)
    if memory is not None:
        memory = count("simulate", "memory", memory, 0)
    allowed = ADJOINT_KINDS if objective is Objective.ADJOINT else REVERSIBLE_KINDS
    stored: set[int] = {0} if objective is Objective.REVERSIBLE else set()
    pos: int | None = 0 if objective is Objective.ADJOINT else None
    next_rev = steps - 1  # the next step an adjoint schedule must reverse
    plain = taped = uncompute = 0
    peak = len(stored)

    def check_memory(i: int, a: Action) -> None:
        if memory is not None and len(stored) > memory:
            raise ScheduleError(i, a, f"{len(stored)} stored states exceed memory {memory}")

    for i, a in enumerate(actions):
        if a.kind not in allowed:
            raise ScheduleError(i, a, f"not an action of a {objective.value} schedule")
        if isinstance(a, Advance):
            if a.n < 1:
                raise ScheduleError(i, a, "must advance at least one step")
            if pos is None:
                raise ScheduleError(i, a, "no working state (restore a snapshot first)")
            if pos + a.n > next_rev + 1:
                raise ScheduleError(
                    i, a, f"advances from s_{pos} past s_{next_rev + 1}, the state after the next step to reverse"
                )
            pos += a.n
            plain += a.n
        elif isinstance(a, TakeSnapshot):
            if pos != a.step:
                raise ScheduleError(i, a, f"working state is {_state(pos)}, not s_{a.step}")
            if a.step in stored:
                raise ScheduleError(i, a, f"s_{a.step} is already stored")
            stored.add(a.step)
            check_memory(i, a)
        elif isinstance(a, Restore):
            if a.step not in stored:
                raise ScheduleError(i, a, f"s_{a.step} is not stored")
            pos = a.step
        elif isinstance(a, FreeSnapshot):
            if a.step not in stored:
                raise ScheduleError(i, a, f"s_{a.step} is not stored")
            stored.remove(a.step)
        elif isinstance(a, ReverseStep):
            if a.step != next_rev:
                expected = f"step {next_rev}" if next_rev >= 0 else "nothing (all reversed)"
                raise ScheduleError(i, a, f"steps must be reversed once, last first; expected {expected}")
            if pos != a.step:
                raise ScheduleError(i, a, f"working state is {_state(pos)}, not s_{a.step}")
            next_rev -= 1
            taped += 1
            pos = None
        elif isinstance(a, Compute):
            if not 0 <= a.step < steps:
                raise ScheduleError(i, a, f"no step {a.step} in a chain of {steps}")
            if a.step not in stored:
                raise ScheduleError(i, a, f"s_{a.step} is not stored")
            if a.step + 1 in stored:
                raise ScheduleError(i, a, f"s_{a.step + 1} is already stored")
            stored.add(a.step + 1)
            plain += 1
            check_memory(i, a)
        elif isinstance(a, Uncompute):
            if not 0 <= a.step < steps:
                raise ScheduleError(i, a, f"no step {a.step} in a chain of {steps}")
            if a.step not in stored or a.step + 1 not in stored:
                raise ScheduleError(i, a, f"needs s_{a.step} and s_{a.step + 1} stored")
            stored.remove(a.step + 1)
            uncompute += 1
        peak = max(peak, len(stored))

    if objective is Objective.ADJOINT:
        if next_rev >= 0:
            raise ScheduleError(None, None, f"step {next_rev} was never reversed")
        if stored:
            raise ScheduleError(None, None, f"snapshots left stored: {sorted(stored)}")
    elif stored != {0, steps}:
        raise ScheduleError(None, None, f"must end holding s_0 and s_{steps}, holds {sorted(stored)}")
    return Stats(plain, taped, uncompute, peak)


def _state(pos: int | None) -> str:
    return "none" if pos is None else f"s_{pos}"


@dataclass(frozen=True)
class Schedule:
    """An immutable action sequence for a chain of ``steps`` steps.

    ``name`` and ``params`` say which generator made it (for reports and for the
    checkpoint pass to print as an attribute)."""

    name: str
    steps: int
    objective: Objective
    actions: tuple[Action, ...]
    params: tuple[tuple[str, int], ...] = field(default=())

    def __iter__(self) -> Iterator[Action]:
        return iter(self.actions)

    def __len__(self) -> int:
        return len(self.actions)

    def stats(self) -> dict[str, int]:
        """``plain``, ``taped``, ``uncompute`` and ``peak``, measured by simulation."""
        return simulate(self.objective, self.actions, self.steps).as_dict()


def validate(schedule: Schedule, steps: int, memory: int | None) -> dict[str, int]:
    """Check ``schedule`` on a chain of ``steps`` steps with at most ``memory``
    stored states (``None``: unbounded); return its stats.  Raises
    ``ScheduleError`` naming the first bad action."""
    steps = count("validate", "steps", steps, 0)
    if memory is not None:
        memory = count("validate", "memory", memory, 0)
    if schedule.steps != steps:
        raise ScheduleError(None, None, f"schedule is for {schedule.steps} steps, not {steps}")
    return simulate(schedule.objective, schedule.actions, steps, memory).as_dict()


class ScheduleBuilder:
    """Emits adjoint actions while tracking the working state, so generators can
    ask for a state and get a ``RESTORE`` only when one is needed."""

    def __init__(self) -> None:
        self.actions: list[Action] = []
        self.pos: int | None = 0

    def goto(self, step: int) -> None:
        if self.pos != step:
            self.actions.append(Restore(step))
            self.pos = step

    def advance(self, n: int) -> None:
        assert self.pos is not None
        if n:
            self.actions.append(Advance(n))
            self.pos += n

    def take(self) -> None:
        assert self.pos is not None
        self.actions.append(TakeSnapshot(self.pos))

    def free(self, step: int) -> None:
        self.actions.append(FreeSnapshot(step))

    def reverse(self, step: int) -> None:
        self.goto(step)
        self.actions.append(ReverseStep(step))
        self.pos = None
