"""``reversibilize``: ordinary ``func.func`` code becomes ``rev.func``s.

The translation is in ``revmlir.reversibilize``; the calling convention it
produces (result slots, output arrays, tapes) is documented in
docs/design.md, section "Reversibilize".
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from revmlir.reversibilize import MODES, reversibilize


@dataclass(frozen=True)
class ReversibilizePass(ModulePass):
    """Replace every func.func by a reversible rev.func (plus @f.tape in
    bennett mode)."""

    name = "reversibilize"

    mode: str = "bennett"
    """``bennett``: ``@f`` computes, copies its results out and uncomputes, so
    it leaves no tape (and ``@f.tape`` is the taped computation it wraps);
    ``tape``: ``@f`` is the taped computation, its tapes are arguments."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mode not in MODES:
            raise PassFailedException(f"reversibilize: mode must be one of {', '.join(MODES)}, not '{self.mode}'")
        reversibilize(op, self.mode)
