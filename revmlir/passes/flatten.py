"""``flatten-split-loops``: checkpointed loops marked ``checkpoint_split =
"work"`` become one loop of primitive steps (``revmlir.reversibilize.flatten``),
so that ``ad-checkpoint`` can split them anywhere between inner iterations."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from revmlir.reversibilize.flatten import flatten_marked_loops


@dataclass(frozen=True)
class FlattenSplitLoopsPass(ModulePass):
    """Flatten each ordinary ``scf.for`` marked ``checkpoint_split = "work"``
    into an ``scf.while`` whose iterations are its primitive steps."""

    name = "flatten-split-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        flatten_marked_loops(op)
