"""The Python frontend: ``@rv.reversible`` and the reversible-Python vocabulary."""

from revmlir.frontend.base.derived import AdjointFunction, InverseAdjoint, adjoint
from revmlir.frontend.base.errors import ReversibleSyntaxError
from revmlir.frontend.base.markers import (
    ancilla,
    checkpointed,
    cond,
    copy_pop,
    copy_push,
    dec,
    free,
    inc,
    inverse,
    irot,
    neg,
    nocheck,
    pop,
    prange,
    push,
    rot,
    routine,
    safe,
    stack,
    swap,
    tropical,
    ulog,
    view,
    zeros,
)
from revmlir.frontend.base.specialization import InterpreterFallbackWarning, NativeCompilationError, Specialization
from revmlir.frontend.base.types import Stack, Tropical, ULog
from revmlir.frontend.derivatives.forward import hessian, hvp, jvp
from revmlir.frontend.derivatives.gradient import gradient, vjp
from revmlir.frontend.derivatives.inverse_modes import constant_width, inverse_jvp, inverse_vjp, newton_step
from revmlir.frontend.derivatives.jacobian import jacobian
from revmlir.frontend.ordinary_code.functions import OrdinaryFunction, ordinary
from revmlir.frontend.ordinary_code.primitives import Primitive, primitive
from revmlir.frontend.reversible_code.functions import InverseFunction, ReversibleFunction, reversible
from revmlir.runtime.numbers import Fixed, FixedPoint

__all__ = [
    "AdjointFunction",
    "InterpreterFallbackWarning",
    "InverseAdjoint",
    "InverseFunction",
    "NativeCompilationError",
    "ReversibleFunction",
    "ReversibleSyntaxError",
    "Specialization",
    "Stack",
    "ULog",
    "adjoint",
    "ancilla",
    "checkpointed",
    "cond",
    "constant_width",
    "copy_pop",
    "copy_push",
    "dec",
    "free",
    "gradient",
    "hessian",
    "hvp",
    "inc",
    "inverse",
    "inverse_jvp",
    "inverse_vjp",
    "jacobian",
    "jvp",
    "OrdinaryFunction",
    "ordinary",
    "irot",
    "Primitive",
    "primitive",
    "neg",
    "newton_step",
    "nocheck",
    "pop",
    "prange",
    "push",
    "reversible",
    "rot",
    "routine",
    "safe",
    "stack",
    "swap",
    "ulog",
    "view",
    "vjp",
    "zeros",
    "Fixed",
    "FixedPoint",
    "Tropical",
    "tropical",
]
