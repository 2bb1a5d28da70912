"""``ad-inverse-tangent`` and ``ad-inverse-adjoint``: inverse accumulation.

``ad-inverse-tangent`` expands ``ad.inverse_tangent @f`` into
``rev.func @f.itan`` (``J⁻¹·v``, the tangent program of ``~f``, run from
``f``'s outputs); ``ad-inverse-adjoint`` expands ``ad.inverse_adjoint @f``
into ``rev.func @f.iadj`` (``J⁻ᵀ·w``, the adjoint of ``~f``, run from
``f``'s inputs).  ``@f.inv`` and the derived functions of callees are added
when missing, existing ones kept, so both passes are idempotent
(``revmlir.ad.inverse_modes``).
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from revmlir.ad.inverse_modes import generate_inverse_adjoints, generate_inverse_tangents
from revmlir.dialects.ad import InverseAdjointOp, InverseTangentOp
from revmlir.passes.selection import expand_requests


@dataclass(frozen=True)
class AdInverseTangentPass(ModulePass):
    """Add @f.itan (J⁻¹·v, inverse forward mode) for each ad.inverse_tangent @f."""

    name = "ad-inverse-tangent"

    functions: tuple[str, ...] = ()
    """Also build these functions' inverse tangents (no request op needed)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expand_requests(op, InverseTangentOp, self.functions, generate_inverse_tangents)


@dataclass(frozen=True)
class AdInverseAdjointPass(ModulePass):
    """Add @f.iadj (J⁻ᵀ·w, inverse reverse mode) for each ad.inverse_adjoint @f."""

    name = "ad-inverse-adjoint"

    functions: tuple[str, ...] = ()
    """Also build these functions' inverse adjoints (no request op needed)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expand_requests(op, InverseAdjointOp, self.functions, generate_inverse_adjoints)
