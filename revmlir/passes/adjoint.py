"""``ad-adjoint``: expand ``ad.adjoint @f`` into ``rev.func @f.adj``.

The adjoint is built by reverse computing (``revmlir.ad.adjoint``): ``@f``'s
body is walked backwards, each op emits its inverse plus gradient updates.
Functions the adjoint calls get their own ``@g.adj`` (recursion included);
existing adjoints are kept, so the pass is idempotent.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from revmlir.ad.adjoint import generate_adjoints
from revmlir.dialects.ad import AdjointOp
from revmlir.passes.selection import selected_functions


@dataclass(frozen=True)
class AdAdjointPass(ModulePass):
    """Add @f.adj (reverse-mode gradient program) for each ad.adjoint @f."""

    name = "ad-adjoint"

    functions: tuple[str, ...] = ()
    """Also differentiate these functions (no ad.adjoint op needed)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        requests = [r for r in op.ops if isinstance(r, AdjointOp)]
        names = [r.function_name for r in requests]
        if self.functions:
            names += [f.sym_name.data for f in selected_functions(op, self.functions)]
        generate_adjoints(op, list(dict.fromkeys(names)))
        for request in requests:
            request.detach()
            request.erase()
