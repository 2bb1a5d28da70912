"""revmlir: reversible programs as MLIR dialects on xDSL, inverted and
differentiated by reverse computing."""

from revmlir.errors import InvertibilityError, ReversibilityViolation

__all__ = ["InvertibilityError", "ReversibilityViolation"]
