"""``rev-invert``: build inverse functions.

Out of place (the default) it adds ``@f.inv`` next to each selected ``@f``;
``@f.inv`` inverts back to ``@f``, so existing inverses are kept, not
duplicated.  In place it replaces each body with its inverse, so running it
twice gives the original program back.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from revmlir.dialects.rev import FuncOp
from revmlir.inversion import invert_function, inverse_name
from revmlir.passes.selection import selected_functions


@dataclass(frozen=True)
class RevInvertPass(ModulePass):
    """Add @f.inv for each rev.func @f (or invert bodies in place)."""

    name = "rev-invert"

    in_place: bool = False
    """Replace each function's body with its inverse instead of adding @f.inv."""

    functions: tuple[str, ...] = ()
    """Only these functions (default: all)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        existing = {f.sym_name.data for f in op.ops if isinstance(f, FuncOp)}
        for func in list(selected_functions(op, self.functions)):
            if self.in_place:
                inverse = invert_function(func, func.sym_name.data)
                func.body.detach_block(0).erase()
                func.body.add_block(inverse.body.detach_block(0))
                continue
            if inverse_name(func.sym_name.data) in existing:
                continue
            inverse = invert_function(func)
            Rewriter.insert_op(inverse, InsertPoint.after(func))
            existing.add(inverse.sym_name.data)

