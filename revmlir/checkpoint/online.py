"""Checkpointing a loop whose trip count is known only when it ends.

A while-loop cannot be given a Revolve table up front, so the forward sweep is
driven by a run-time policy that must decide, step by step, which states to
keep without knowing how many follow.  This module uses a *doubling (thinning)*
scheme rather than Stumm and Walther's online-optimal one, because it is short
enough to verify and its guarantees are easy to state:

* Forward sweep: snapshots sit at the multiples of a stride ``d`` (initially 1),
  at most ``c = ceil(snapshots / 2)`` of them.  When one more would be needed,
  ``d`` doubles and every snapshot that is not a multiple of the new stride is
  freed.  So after ``N`` steps the kept snapshots are evenly spaced and every
  segment between two of them has length ``d <= max(1, 2N / c)``; the forward
  sweep itself is ``N`` plain steps, as without checkpointing.
* Reverse sweep (``N`` now known): segment ``j`` (counted from ``s_0``) is
  reversed by the optimal binomial schedule with ``snapshots - j`` states, since
  the ``j`` snapshots before it are still held; every segment gets at least
  ``snapshots - c + 1`` states.
* Memory: never more than ``snapshots`` stored states (the initial state
  included), for every trip count; tests check this by simulation.

Recomputation is within a small factor of the offline optimum for the same
memory but not minimal; the checkpoint pass should prefer ``binomial`` whenever
the trip count is static.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from revmlir.checkpoint.actions import (
    Action,
    Advance,
    FreeSnapshot,
    Objective,
    TakeSnapshot,
)
from revmlir.checkpoint.offline import binomial_into
from revmlir.checkpoint.schedule import Schedule, ScheduleBuilder, count


@dataclass(frozen=True)
class OnlineSchedule:
    """The policy; ``start()`` gives a fresh run-time cursor for one loop execution."""

    snapshots: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "snapshots", count("OnlineSchedule", "snapshots", self.snapshots, 1))

    @property
    def forward_capacity(self) -> int:
        return (self.snapshots + 1) // 2

    def start(self) -> OnlineRun:
        return OnlineRun(self)

    def realize(self, trip_count: int) -> Schedule:
        """The complete schedule the cursor produces when the loop runs
        ``trip_count`` times (for validation, stats and tests)."""
        trip_count = count("OnlineSchedule.realize", "trip_count", trip_count, 0)
        run = self.start()
        actions: list[Action] = []
        for _ in range(trip_count):
            actions += run.step()
        actions += run.finish()
        return Schedule("online", trip_count, Objective.ADJOINT, tuple(actions), (("snapshots", self.snapshots),))


@dataclass
class OnlineRun:
    """Mutable cursor for one execution of the loop: call ``step()`` each time
    the loop condition holds (it returns the actions to perform, ending with the
    ``ADVANCE(1)`` of the iteration), then ``finish()`` once it fails."""

    policy: OnlineSchedule
    position: int = 0
    stride: int = 1
    kept: list[int] = field(default_factory=list)
    finished: bool = False

    def step(self) -> list[Action]:
        if self.finished:
            raise RuntimeError("online schedule already finished")
        out: list[Action] = []
        p = self.position
        if p % self.stride == 0:
            if len(self.kept) == self.policy.forward_capacity:
                self.stride *= 2
                out += [FreeSnapshot(q) for q in self.kept if q % self.stride]
                self.kept = [q for q in self.kept if q % self.stride == 0]
            if p % self.stride == 0:
                self.kept.append(p)
                out.append(TakeSnapshot(p))
        out.append(Advance(1))
        self.position += 1
        return out

    def finish(self) -> list[Action]:
        """The reverse sweep, now that the trip count ``position`` is known."""
        if self.finished:
            raise RuntimeError("online schedule already finished")
        self.finished = True
        b = ScheduleBuilder()
        b.pos = self.position
        ends = self.kept[1:] + [self.position]
        for j in reversed(range(len(self.kept))):
            binomial_into(b, self.kept[j], ends[j], self.policy.snapshots - j)
            b.free(self.kept[j])
        return b.actions


def online(snapshots: int) -> OnlineSchedule:
    """Doubling online checkpointing with at most ``snapshots`` stored states."""
    return OnlineSchedule(count("online", "snapshots", snapshots, 1))
