"""The Python frontend: ``@rv.reversible`` and the reversible-Python vocabulary."""

from revmlir.frontend.api import (
    InverseFunction,
    NativeCompilationError,
    ReversibleFunction,
    Specialization,
    reversible,
)
from revmlir.frontend.errors import ReversibleSyntaxError
from revmlir.frontend.gradient import gradient
from revmlir.frontend.markers import (
    ancilla,
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
    push,
    rot,
    routine,
    safe,
    stack,
    swap,
    ulog,
)
from revmlir.frontend.types import ULog

__all__ = [
    "InverseFunction", "NativeCompilationError", "ReversibleFunction", "ReversibleSyntaxError", "Specialization",
    "ULog", "ancilla", "cond", "copy_pop", "copy_push", "dec", "free", "gradient", "inc", "inverse",
    "irot", "neg", "nocheck", "pop", "push", "reversible", "rot", "routine", "safe",
    "stack", "swap", "ulog",
]
