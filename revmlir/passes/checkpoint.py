"""``ad-checkpoint``: checkpointed gradients; ``anc-check-snapshots``: the
legality check of snapshots before lowering.

The design (outlined step, action tables, snapshot stores, what is forgotten
and why the gradient stays exact) is in ``revmlir.ad.checkpointed`` and
docs/checkpointing.md.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from revmlir.ad.checkpointed import generate_checkpointed
from revmlir.verifier import check_snapshots
from revmlir.dialects.ad import CheckpointOp
from revmlir.passes.selection import expand_requests


@dataclass(frozen=True)
class AdCheckpointPass(ModulePass):
    """Add @f.ckpt (a whole gradient whose loops marked {checkpoint =
    #ad.schedule<…>} recompute from snapshots) for each ad.checkpoint @f."""

    name = "ad-checkpoint"

    functions: tuple[str, ...] = ()
    """Also build these functions' checkpointed gradients (no ad.checkpoint op needed)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expand_requests(op, CheckpointOp, self.functions, generate_checkpointed)
        check_snapshots(op)


@dataclass(frozen=True)
class AncCheckSnapshotsPass(ModulePass):
    """Check that snapshots stay in their function and are balanced
    (rev-lower-to-std runs the same check first)."""

    name = "anc-check-snapshots"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_snapshots(op)
