"""``ad-adjoint``: expand ``ad.adjoint @f`` into ``rev.func @f.adj``.

The adjoint is built by reverse computing (``revmlir.ad.adjoint``): ``@f``'s
body is walked backwards, each op emits its inverse plus gradient updates.
Functions the adjoint calls get their own ``@g.adj`` (recursion included);
existing adjoints are kept, so the pass is idempotent.

``lanes=L`` (L ≥ 2) asks for vector mode: ``@f.adjL`` carries ``L``
gradients per value, ``L`` vector-Jacobian products in one backward run that
uncomputes the primal values once for all of them.

``loss=K`` asks for the loss-seeded adjoint ``@f.adj.lossK``: the gradient
of argument K alone, every other output gradient zero (checked on entry), so
the updates those zeros would feed are left out.
"""

from dataclasses import dataclass
from functools import partial

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from revmlir.ad.adjoint import generate_adjoints
from revmlir.dialects.ad import AdjointOp
from revmlir.passes.selection import expand_requests


@dataclass(frozen=True)
class AdAdjointPass(ModulePass):
    """Add @f.adj (reverse-mode gradient program) for each ad.adjoint @f."""

    name = "ad-adjoint"

    functions: tuple[str, ...] = ()
    """Also differentiate these functions (no ad.adjoint op needed)."""

    lanes: int = 1
    """Gradients per value (``@f.adjL`` for L ≥ 2)."""

    loss: int | None = None
    """Seed the gradient of this argument only (``@f.adj.lossK``)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        generate = partial(generate_adjoints, lanes=self.lanes, loss=self.loss)
        expand_requests(op, AdjointOp, self.functions, generate)
