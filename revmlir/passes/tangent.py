"""``ad-tangent`` and ``ad-hessian``: forward mode, and forward over reverse.

``ad-tangent`` expands ``ad.tangent @f`` into ``rev.func @f.tan``, built by
the ``Tangenter`` (``revmlir.ad.tangent``): ``@f``'s body runs forward, each
op followed by the updates of the tangents of what it wrote.  ``ad-hessian``
expands ``ad.hessian @f`` into ``@f.tan``, ``@f.adj`` and ``@f.adj.tan``, the
tangent of the adjoint: Hessian-vector products.  Functions the derived
functions call get their own derived functions (recursion included);
existing ones are kept, so both passes are idempotent.

``lanes=L`` (L ≥ 2) asks for vector mode: ``@f.tanL`` carries ``L`` tangents
per value, ``L`` directional derivatives in one run that share the primal
computation (``ad-hessian`` then adds ``@f.tanL`` and ``@f.adj.tanL``,
``ad-jacobian`` a ``@f.jacobian`` that computes ``L`` columns per run).
"""

from dataclasses import dataclass
from functools import partial

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from revmlir.ad.matrices import generate_jacobians
from revmlir.ad.tangent import generate_hessians, generate_tangents
from revmlir.dialects.ad import HessianOp, JacobianOp, TangentOp
from revmlir.passes.selection import expand_requests


@dataclass(frozen=True)
class AdTangentPass(ModulePass):
    """Add @f.tan (forward-mode tangent program) for each ad.tangent @f."""

    name = "ad-tangent"

    functions: tuple[str, ...] = ()
    """Also differentiate these functions (no ad.tangent op needed)."""

    lanes: int = 1
    """Tangents per value (``@f.tanL`` for L ≥ 2)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expand_requests(op, TangentOp, self.functions, partial(generate_tangents, lanes=self.lanes))


@dataclass(frozen=True)
class AdJacobianPass(ModulePass):
    """Add @f.tan and @f.jacobian (the whole Jacobian, one tangent per
    column, in one function) for each ad.jacobian @f."""

    name = "ad-jacobian"

    functions: tuple[str, ...] = ()
    """Also differentiate these functions (no ad.jacobian op needed)."""

    lanes: int = 1
    """Columns per run of the tangent program (``@f.tanL`` for L ≥ 2)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expand_requests(op, JacobianOp, self.functions, partial(generate_jacobians, lanes=self.lanes))


@dataclass(frozen=True)
class AdHessianPass(ModulePass):
    """Add @f.tan, @f.adj and @f.adj.tan (Hessian-vector products, forward
    over reverse) for each ad.hessian @f."""

    name = "ad-hessian"

    functions: tuple[str, ...] = ()
    """Also differentiate these functions (no ad.hessian op needed)."""

    lanes: int = 1
    """Hessian-vector products per run (``@f.tanL``, ``@f.adj.tanL``)."""

    loss: int | None = None
    """Differentiate the loss-seeded adjoint ``@f.adj.lossK`` (the Hessian
    of argument K): ``@f.adj.lossK.tan``."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        generate = partial(generate_hessians, lanes=self.lanes, loss=self.loss)
        expand_requests(op, HessianOp, self.functions, generate)
