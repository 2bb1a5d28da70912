"""``rev-expand-routines``: replace ``rev.routine`` by compute, body and the
inverse of compute, inline (``revmlir.expansion``)."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from revmlir.expansion import expand_routines


@dataclass(frozen=True)
class RevExpandRoutinesPass(ModulePass):
    """Inline every rev.routine as compute; body; ~compute."""

    name = "rev-expand-routines"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if errors := expand_routines(op):
            raise errors[0]
