"""``ad-checkpoint``: checkpointed gradients; ``anc-check-snapshots``: the
legality check of snapshots before lowering.

The design (outlined step, action tables, snapshot stores, what is forgotten
and why the gradient stays exact) is in ``revmlir.ad.checkpointed`` and
docs/checkpointing.md.
"""

from dataclasses import dataclass
from functools import partial

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from revmlir.ad.checkpointed import (
    CHECKPOINT_SUFFIX,
    Plan,
    generate_checkpointed,
    is_checkpointed_gradient,
    name_clash,
    plan_checkpointed,
)
from revmlir.dialects.ad import CheckpointOp, ScheduleAttr
from revmlir.errors import describe_op
from revmlir.passes.resumable import checked_schedule
from revmlir.passes.rollback import rolled_back_on_failure
from revmlir.passes.selection import expand_requests, requested
from revmlir.reachability import rule_functions
from revmlir.reversibilize import reversibilize
from revmlir.reversibilize.resumable import MACHINE_LOOPS, make_resumable, rewritten_functions
from revmlir.verifier import check_snapshots


@dataclass(frozen=True)
class AdCheckpointPass(ModulePass):
    """Add @f.ckpt (a whole gradient whose loops marked {checkpoint =
    #ad.schedule<…>} recompute from snapshots) for each ad.checkpoint @f."""

    name = "ad-checkpoint"

    functions: tuple[str, ...] = ()
    """Also build these functions' checkpointed gradients (no ad.checkpoint op needed)."""
    policy: str = ""
    """With a schedule (``bisection``, ``binomial``, ``store_all``), the
    named functions are ordinary ``func.func``s with no mark: they are made
    resumable (``make-resumable``) and reversibilized in tape mode first, so
    the schedule runs over their primitive steps."""
    snapshots: int = 0
    base: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        schedule, planned = self._checked_policy(op) if self.policy else (None, [])
        # a failure after the module changed (while building a machine, a
        # gradient, or in the snapshots' check) leaves it as it was: what
        # was built is removed, the ordinary functions policy= rewrote are
        # put back
        rewritten = rewritten_functions(op, self.functions) if self.policy else []
        with rolled_back_on_failure(op, rewritten):
            if schedule is not None:
                # the other functions stay ordinary, calling copies of the
                # named ones as written (make_resumable): a later run may name them
                make_resumable(op, self.functions, schedule, self.base)
                reversibilize(op, "tape", self.functions)
            expand_requests(op, CheckpointOp, self.functions, partial(generate_checkpointed, planned=planned))
            check_snapshots(op)

    def _checked_policy(self, module: ModuleOp) -> tuple[ScheduleAttr, list[Plan]]:
        """What ``policy=`` checks before it rewrites the module: its
        options (the schedule they ask for), the named functions and their
        names, and the module's requests, planned so that their errors find
        the module as it was.  The rewrite changes no ``rev.func``, so
        building reuses the plans."""
        if not self.functions:
            raise PassFailedException(
                f"{self.name}: policy= checkpoints the functions it names, e.g. "
                f"{self.name}{{functions=f policy={self.policy}}}"
            )
        schedule = checked_schedule(self.name, self.policy, self.snapshots, self.base)
        rules = rule_functions(module)
        for name in self.functions:
            self._check_ordinary(module, name, rules)
        return schedule, plan_checkpointed(module, requested(module, CheckpointOp))

    def _check_ordinary(self, module: ModuleOp, name: str, rules: set[str]) -> None:
        """``@name`` is an ordinary function, not one an earlier run
        checkpointed (its machine was made for that run's schedule, and
        ``@name.ckpt`` is its gradient), nor a primitive's rule or a
        function a rule calls (``rules``: the derivative passes call them
        as the ordinary code they are, so they are never reversibilized
        and have no gradient), and the names of what this run builds for
        it are free: its machine is one checkpointed loop."""
        function = SymbolTable.lookup_symbol(module, name)
        if isinstance(function, func.FuncOp) and name in rules:
            raise PassFailedException(
                f"{self.name}: {describe_op(function)}: @{name} is a primitive's rule (rev.extern) or called "
                "by one, which the derivative passes call as the ordinary code it is: policy= cannot rewrite it"
            )
        if isinstance(function, func.FuncOp):
            if (clash := name_clash(module, name, MACHINE_LOOPS)) is not None:
                raise PassFailedException(f"{self.name}: {clash}")
            return
        where = f"{describe_op(function)}: " if function is not None else ""
        if function is not None and is_checkpointed_gradient(
            SymbolTable.lookup_symbol(module, name + CHECKPOINT_SUFFIX)
        ):
            raise PassFailedException(
                f"{self.name}: {where}@{name} was checkpointed by an earlier run, whose "
                f"gradient is @{name}{CHECKPOINT_SUFFIX}; a function is checkpointed under one policy, once"
            )
        raise PassFailedException(
            f"{self.name}: {where}policy= checkpoints an ordinary func.func, and @{name} is not one "
            "(mark a loop of a rev.func with a schedule instead)"
        )


@dataclass(frozen=True)
class AncCheckSnapshotsPass(ModulePass):
    """Check that snapshots stay in their function and are balanced
    (rev-lower-to-std runs the same check first)."""

    name = "anc-check-snapshots"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_snapshots(op)
