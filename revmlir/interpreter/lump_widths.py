"""``rev-lump-widths``: a remark per function saying whether it is
constant-width (and why not) and the widths of its lumps.

A ``rev.func`` is constant-width by the verifier.  A ``func.func`` is
evaluated statically into its data-flow graph (``dataflow_graph``: loops
with constant trip counts unrolled, static shapes), cut greedily and, when
it has at most ``exhaustive_limit`` ops, by exhaustive search
(``revmlir.ad.constant_width``).  What cannot be lumped is a located error:
not square, a loop or a branch not known statically, a structurally
singular function, a step singular for sure.  The analysis evaluates the
IR, so it lives with the interpreter; the module is left unchanged.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from revmlir.ad.constant_width import ordinary_width, reversible_width
from revmlir.ad.lumps import EXHAUSTIVE_LIMIT, exhaustive_limit
from revmlir.dialects import rev
from revmlir.interpreter.dataflow import dataflow_graph
from revmlir.remarks import remark


@dataclass(frozen=True)
class RevLumpWidthsPass(ModulePass):
    """Remark per function: constant-width or why not, and its lump widths."""

    name = "rev-lump-widths"

    exhaustive_limit: int = EXHAUSTIVE_LIMIT
    """Search every order of graphs with at most this many ops (at most
    ``EXHAUSTIVE_MAX``)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            limit = exhaustive_limit(self.name, self.exhaustive_limit)
        except (TypeError, ValueError) as error:
            raise PassFailedException(str(error)) from None
        for function in op.body.block.ops:
            if isinstance(function, rev.FuncOp):
                report = reversible_width(function)
            elif isinstance(function, func.FuncOp) and function.body.blocks:
                graph = dataflow_graph(op, function)
                report = ordinary_width(graph, limit)
            else:
                continue
            remark(function, report.message())
