"""revmlir: reversible programs as MLIR dialects on xDSL, inverted and
differentiated by reverse computing.

    import revmlir as rv

    @rv.reversible
    def multiplier(y, a, b):
        y += a * b

    multiplier(2.0, 3.0, 5.0)       # (17.0, 3.0, 5.0)
    (~multiplier)(17.0, 3.0, 5.0)   # (2.0, 3.0, 5.0)
"""

from typing import TYPE_CHECKING, Any

from revmlir.errors import ExecutionError, InvertibilityError, ReversibilityViolation

# The frontend pulls in the interpreter and the native backend; tools that only
# transform IR (rev-opt) should not pay for them, so they load on first use.
_FRONTEND_NAMES = (
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
    "irot",
    "jacobian",
    "jvp",
    "neg",
    "newton_step",
    "OrdinaryFunction",
    "ordinary",
    "Primitive",
    "primitive",
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
)

# The framework bindings import JAX or PyTorch only when they are used.
_INTEROP_NAMES = ("to_jax", "to_torch")

__all__ = [
    "ExecutionError",
    "InvertibilityError",
    "ReversibilityViolation",
    "checkpoint",
    "cuda",
    *_FRONTEND_NAMES,
    *_INTEROP_NAMES,
]

if TYPE_CHECKING:
    from revmlir.frontend import *  # noqa: F403
    from revmlir.interop import to_jax, to_torch


def __getattr__(name: str) -> Any:
    if name == "checkpoint":
        import revmlir.checkpoint

        return revmlir.checkpoint
    if name == "cuda":
        # GPU kernels; the CUDA packages themselves load at the first launch
        import revmlir.gpu.api

        return revmlir.gpu.api
    if name in _FRONTEND_NAMES:
        import revmlir.frontend

        # kept as an attribute: rv.gradient(...) in a loop looks it up each time
        value = globals()[name] = getattr(revmlir.frontend, name)
        return value
    if name in _INTEROP_NAMES:
        import revmlir.interop

        value = globals()[name] = getattr(revmlir.interop, name)
        return value
    raise AttributeError(f"module 'revmlir' has no attribute {name!r}")
