"""The action vocabulary that checkpointing schedules are written in.

A schedule is data so that one generator (or one run-time scheduler) can drive
the interpreter, the native backend and the checkpoint pass alike, and so that
tests can check a schedule's cost and memory by simulation instead of trusting
the code path that produced it.  Two objectives share the vocabulary:

* ``Objective.ADJOINT``: reverse a chain ``s_{i+1} = f_i(s_i)`` for reverse-mode
  AD; snapshots are taken, restored and freed, plain steps are advanced, and each
  step is reversed once by ``ReverseStep`` (recompute it taped, run its adjoint).
* ``Objective.REVERSIBLE``: Bennett's pebble game for reverse computing; states
  are computed into fresh memory and uncomputed, nothing is ever erased.

Actions name states by the index of the step they precede (``s_i`` is the
state before step ``i``), so a snapshot is identified by its step index.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar


class Objective(Enum):
    """What a schedule achieves."""

    ADJOINT = "adjoint"
    REVERSIBLE = "reversible"


class ActionKind(Enum):
    ADVANCE = "ADVANCE"
    TAKE_SNAPSHOT = "TAKE_SNAPSHOT"
    RESTORE = "RESTORE"
    FREE_SNAPSHOT = "FREE_SNAPSHOT"
    REVERSE_STEP = "REVERSE_STEP"
    COMPUTE = "COMPUTE"
    UNCOMPUTE = "UNCOMPUTE"


@dataclass(frozen=True, slots=True)
class Advance:
    """Run ``n`` plain (untaped) forward steps on the working state."""

    n: int
    kind: ClassVar[ActionKind] = ActionKind.ADVANCE

    def __str__(self) -> str:
        return f"ADVANCE({self.n})"


@dataclass(frozen=True, slots=True)
class TakeSnapshot:
    """Copy the working state ``s_step`` into snapshot memory."""

    step: int
    kind: ClassVar[ActionKind] = ActionKind.TAKE_SNAPSHOT

    def __str__(self) -> str:
        return f"TAKE_SNAPSHOT({self.step})"


@dataclass(frozen=True, slots=True)
class Restore:
    """Make the stored ``s_step`` the working state (the snapshot stays stored)."""

    step: int
    kind: ClassVar[ActionKind] = ActionKind.RESTORE

    def __str__(self) -> str:
        return f"RESTORE({self.step})"


@dataclass(frozen=True, slots=True)
class FreeSnapshot:
    """Release the snapshot of ``s_step``."""

    step: int
    kind: ClassVar[ActionKind] = ActionKind.FREE_SNAPSHOT

    def __str__(self) -> str:
        return f"FREE_SNAPSHOT({self.step})"


@dataclass(frozen=True, slots=True)
class ReverseStep:
    """From working state ``s_step``: run step ``step`` taped, then its adjoint.

    The working state is consumed; the next action must restore one.
    """

    step: int
    kind: ClassVar[ActionKind] = ActionKind.REVERSE_STEP

    def __str__(self) -> str:
        return f"REVERSE_STEP({self.step})"


@dataclass(frozen=True, slots=True)
class Compute:
    """Pebble game: from stored ``s_step`` compute ``s_{step+1}`` into fresh memory."""

    step: int
    kind: ClassVar[ActionKind] = ActionKind.COMPUTE

    def __str__(self) -> str:
        return f"COMPUTE({self.step})"


@dataclass(frozen=True, slots=True)
class Uncompute:
    """Pebble game: run step ``step`` backwards, clearing ``s_{step+1}``."""

    step: int
    kind: ClassVar[ActionKind] = ActionKind.UNCOMPUTE

    def __str__(self) -> str:
        return f"UNCOMPUTE({self.step})"


Action = Advance | TakeSnapshot | Restore | FreeSnapshot | ReverseStep | Compute | Uncompute

ADJOINT_KINDS = frozenset(
    {
        ActionKind.ADVANCE,
        ActionKind.TAKE_SNAPSHOT,
        ActionKind.RESTORE,
        ActionKind.FREE_SNAPSHOT,
        ActionKind.REVERSE_STEP,
    }
)
REVERSIBLE_KINDS = frozenset({ActionKind.COMPUTE, ActionKind.UNCOMPUTE})
