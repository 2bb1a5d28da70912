"""Checkpointing schedules as data.

The checkpoint pass, the interpreter and the tests all consume the same
immutable action sequences, so a schedule's recomputation and memory can be
checked by simulation (``validate``, ``Schedule.stats``) and compared with the
known optima independently of the code that will execute it.

    from revmlir.checkpoint import binomial, validate
    validate(binomial(100, 5), steps=100, memory=5)
"""

from revmlir.checkpoint.actions import (
    Action,
    ActionKind,
    Advance,
    Compute,
    FreeSnapshot,
    Objective,
    Restore,
    ReverseStep,
    TakeSnapshot,
    Uncompute,
)
from revmlir.checkpoint.offline import (
    bennett,
    binomial,
    binomial_optimum,
    bisection,
    repetition_number,
    store_all,
)
from revmlir.checkpoint.online import OnlineRun, OnlineSchedule, online
from revmlir.checkpoint.schedule import (
    Schedule,
    ScheduleError,
    Stats,
    simulate,
    validate,
)

__all__ = [
    "Action",
    "ActionKind",
    "Advance",
    "Compute",
    "FreeSnapshot",
    "Objective",
    "OnlineRun",
    "OnlineSchedule",
    "Restore",
    "ReverseStep",
    "Schedule",
    "ScheduleError",
    "Stats",
    "TakeSnapshot",
    "Uncompute",
    "bennett",
    "binomial",
    "binomial_optimum",
    "bisection",
    "online",
    "repetition_number",
    "simulate",
    "store_all",
    "validate",
]
