"""``ad-tangent`` and ``ad-hessian``: forward mode, and forward over reverse.

``ad-tangent`` expands ``ad.tangent @f`` into ``rev.func @f.tan``, built by
the ``Tangenter`` (``revmlir.ad.tangent``): ``@f``'s body runs forward, each
op followed by the updates of the tangents of what it wrote.  ``ad-hessian``
expands ``ad.hessian @f`` into ``@f.tan``, ``@f.adj`` and ``@f.adj.tan``, the
tangent of the adjoint: Hessian-vector products.  Functions the derived
functions call get their own derived functions (recursion included);
existing ones are kept, so both passes are idempotent.
"""

from dataclasses import dataclass

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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expand_requests(op, TangentOp, self.functions, generate_tangents)


@dataclass(frozen=True)
class AdJacobianPass(ModulePass):
    """Add @f.tan and @f.jacobian (the whole Jacobian, one tangent per
    column, in one function) for each ad.jacobian @f."""

    name = "ad-jacobian"

    functions: tuple[str, ...] = ()
    """Also differentiate these functions (no ad.jacobian op needed)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expand_requests(op, JacobianOp, self.functions, generate_jacobians)


@dataclass(frozen=True)
class AdHessianPass(ModulePass):
    """Add @f.tan, @f.adj and @f.adj.tan (Hessian-vector products, forward
    over reverse) for each ad.hessian @f."""

    name = "ad-hessian"

    functions: tuple[str, ...] = ()
    """Also differentiate these functions (no ad.hessian op needed)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expand_requests(op, HessianOp, self.functions, generate_hessians)
