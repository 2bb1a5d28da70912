"""The ``ad`` dialect: differentiation as IR.

Ops at module level name a ``rev.func`` and request a derived function; the
``ad-*`` passes expand them into ordinary ``rev.func``s with deterministic
names, so the result can be printed, inspected and lowered like any other
reversible code.

    rev.func @f(%y: f64, %x: f64) { … }
    ad.adjoint @f                  // ad-adjoint adds rev.func @f.adj
    ad.tangent @f                  // ad-tangent adds rev.func @f.tan
    ad.hessian @f                  // ad-hessian adds @f.tan, @f.adj, @f.adj.tan
"""

from __future__ import annotations

from xdsl.dialects.builtin import FlatSymbolRefAttr, ModuleOp
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, traits_def
from xdsl.traits import HasParent, SymbolTable
from xdsl.utils.exceptions import VerifyException


class FunctionRequestOp(IRDLOperation):
    """An op that names a ``rev.func`` of its module and requests a function
    derived from it; an ``ad-*`` pass replaces it by that function."""

    function = prop_def(FlatSymbolRefAttr)

    traits = traits_def(HasParent(ModuleOp))
    assembly_format = "$function attr-dict"

    def __init__(self, function: str | FlatSymbolRefAttr):
        if isinstance(function, str):
            function = FlatSymbolRefAttr(function)
        super().__init__(properties={"function": function})

    @property
    def function_name(self) -> str:
        return self.function.string_value()

    def verify_(self) -> None:
        from revmlir.dialects.rev import FuncOp

        target = SymbolTable.lookup_symbol(self, self.function)
        if not isinstance(target, FuncOp):
            raise VerifyException(
                f"'{self.name}' names @{self.function_name}, which is not a "
                "rev.func of the module"
            )


@irdl_op_definition
class AdjointOp(FunctionRequestOp):
    """Request the adjoint (gradient program) of ``rev.func @f``.

    ``ad-adjoint`` replaces it with ``rev.func @f.adj``, which takes ``f``'s
    arguments holding ``f``'s outputs, then one gradient per float scalar
    argument (the output adjoints), and returns ``f``'s inputs followed by the
    input adjoints (reverse mode by reverse computing, NiLang's GVar
    semantics).
    """

    name = "ad.adjoint"


@irdl_op_definition
class TangentOp(FunctionRequestOp):
    """Request the tangent program (forward mode) of ``rev.func @f``.

    ``ad-tangent`` replaces it with ``rev.func @f.tan``, which takes ``f``'s
    arguments, then one tangent per argument carrying a derivative (a value
    per float scalar, a shadow tangent array per float memref, read as input
    tangents and overwritten with output tangents), and returns ``f``'s
    results followed by the tangents of its scalar results.
    """

    name = "ad.tangent"


@irdl_op_definition
class HessianOp(FunctionRequestOp):
    """Request Hessian-vector products of ``rev.func @f``, forward over
    reverse.

    ``ad-hessian`` replaces it with ``@f.tan``, ``@f.adj`` and ``@f.adj.tan``:
    the tangent of the adjoint, whose input-gradient tangents are ``H·v`` when
    it runs on ``f``'s outputs and their tangents (from ``@f.tan``) with
    constant output gradients.
    """

    name = "ad.hessian"


Ad = Dialect("ad", [AdjointOp, TangentOp, HessianOp], [])
