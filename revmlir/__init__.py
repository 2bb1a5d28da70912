"""revmlir: reversible programs as MLIR dialects on xDSL, inverted and
differentiated by reverse computing.

    import revmlir as rv

    @rv.reversible
    def multiplier(y, a, b):
        y += a * b

    multiplier(2.0, 3.0, 5.0)       # (17.0, 3.0, 5.0)
    (~multiplier)(17.0, 3.0, 5.0)   # (2.0, 3.0, 5.0)
"""

from revmlir.errors import ExecutionError, InvertibilityError, ReversibilityViolation
from revmlir.frontend import (
    InverseFunction,
    NativeCompilationError,
    ReversibleFunction,
    ReversibleSyntaxError,
    Specialization,
    ULog,
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
    reversible,
    rot,
    routine,
    safe,
    stack,
    swap,
    ulog,
)

__all__ = [
    "ExecutionError", "InverseFunction", "NativeCompilationError", "InvertibilityError", "ReversibilityViolation",
    "ReversibleFunction", "ReversibleSyntaxError", "Specialization", "ULog", "ancilla",
    "cond", "copy_pop", "copy_push", "dec", "free", "inc", "inverse", "irot", "neg",
    "nocheck", "pop", "push", "reversible", "rot", "routine", "safe", "stack", "swap",
    "ulog",
]
