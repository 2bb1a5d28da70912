"""``make-resumable``: ordinary functions become one loop of primitive steps
(``revmlir.reversibilize.resumable``), marked with a checkpoint schedule, so
that ``reversibilize{mode=tape}`` and ``ad-checkpoint`` checkpoint them
anywhere, with no annotation in the source."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from revmlir.checkpoint.cursor import MAX_COUNT
from revmlir.dialects.ad import ScheduleAttr
from revmlir.reversibilize.resumable import make_resumable


@dataclass(frozen=True)
class MakeResumablePass(ModulePass):
    """Rewrite each named func.func into a state machine (one scf.while
    whose iterations are its basic steps, callees inlined) marked with the
    schedule ``policy`` (``bisection``, ``binomial`` with ``snapshots``,
    ``store_all``)."""

    name = "make-resumable"

    functions: tuple[str, ...] = ()
    policy: str = "bisection"
    snapshots: int = 0
    """Stored states for ``binomial`` (the initial one included)."""
    base: int = 1
    """Segments per checkpointed step: the base case, reversed on one tape."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.functions:
            raise PassFailedException(f"{self.name}: name the functions to rewrite, e.g. {self.name}{{functions=f}}")
        schedule = checked_schedule(self.name, self.policy, self.snapshots, self.base)
        make_resumable(op, self.functions, schedule, self.base)


def checked_schedule(pass_name: str, policy: str, snapshots: int, base: int) -> ScheduleAttr:
    """The schedule a pass's ``policy``/``snapshots``/``base`` options ask
    for, or a diagnostic naming the pass and the bad option."""
    try:
        schedule = ScheduleAttr(policy, snapshots)
        schedule.verify()
    except VerifyException as error:
        raise PassFailedException(f"{pass_name}: {error}") from None
    if not 1 <= base <= MAX_COUNT:
        raise PassFailedException(f"{pass_name}: base must be at least 1 and at most {MAX_COUNT}, not {base}")
    return schedule
