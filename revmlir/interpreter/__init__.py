"""The reference interpreter: exact semantics for rev/anc and the upstream ops
reversible programs use, on xDSL's interpreter framework.

    interp = RevInterpreter(module)
    interp.call("multiplier", 2.0, 3.0, 5.0)      # (17.0, 3.0, 5.0)
    interp.uncall("multiplier", 17.0, 3.0, 5.0)   # (2.0, 3.0, 5.0)
    interp.counters["multiplier"].instructions

Calls return every argument, updated: scalars by value, arrays (numpy,
updated in place) as the same objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    ComplexType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.printf import PrintfFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Attribute

from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import FuncOp, LogType
from revmlir.errors import ExecutionError, InvertibilityError, describe_op
from revmlir.interpreter.anc import AncFunctions
from revmlir.interpreter.memref import MemRefFunctions, numpy_dtype
from revmlir.interpreter.pure import PureFunctions
from revmlir.interpreter.rev import RevFunctions, invoke
from revmlir.interpreter.runtime import (
    DEFAULT_TOLERANCE,
    FunctionCounters,
    Runtime,
    RuntimeInterpreter,
)
from revmlir.interpreter.values import normalize

__all__ = ["RevInterpreter", "FunctionCounters", "DEFAULT_TOLERANCE"]


class RevInterpreter:
    """Runs the functions of a verified module."""

    def __init__(self, module: ModuleOp, *, tolerance: float = DEFAULT_TOLERANCE):
        self.module = module
        self.runtime = Runtime(tolerance=tolerance)
        self._interpreter = RuntimeInterpreter(module, self.runtime)
        for functions in (
            RevFunctions(),
            AncFunctions(),
            PureFunctions(),
            MemRefFunctions(),
            ScfFunctions(),
            FuncFunctions(),
            PrintfFunctions(),
        ):
            self._interpreter.register_implementations(functions)

    # -- public API -----------------------------------------------------------

    @property
    def counters(self) -> dict[str, FunctionCounters]:
        return self.runtime.counters

    @property
    def peak_live_ancillas(self) -> int:
        return self.runtime.peak_live_ancillas

    @property
    def live_ancillas(self) -> int:
        return self.runtime.live_ancillas

    def reset_counters(self) -> None:
        self.runtime.counters.clear()
        self.runtime.peak_live_ancillas = self.runtime.live_ancillas

    def function(self, name: str) -> FuncOp:
        for op in self.module.ops:
            if isinstance(op, FuncOp) and op.sym_name.data == name:
                return op
        known = ", ".join(
            "@" + op.sym_name.data for op in self.module.ops if isinstance(op, FuncOp)
        )
        raise ExecutionError(f"no rev.func named @{name} (module has: {known or 'none'})")

    def call_lowered(self, name: str, *args: Any) -> tuple[Any, ...]:
        """Run a ``func.func`` produced by ``rev-lower-to-std``: the error slot
        is supplied here and a reported check becomes ``InvertibilityError``."""
        from revmlir.lowering.rev_to_std import check_error_slot

        slot = np.zeros(1, dtype=np.int64)
        scope = self._interpreter._ctx
        try:
            with np.errstate(all="ignore"):
                results = self._interpreter.call_op(name, (*args, slot))
        finally:
            self._interpreter._ctx = scope
        check_error_slot(self.module, int(slot[0]), name)
        return tuple(results)

    def call(self, name: str, *args: Any) -> tuple[Any, ...]:
        """Run ``@name`` forward; returns every argument, updated."""
        return self._run(name, args, backward=False)

    def uncall(self, name: str, *args: Any) -> tuple[Any, ...]:
        """Run ``@name`` backward (its inverse); returns every argument."""
        return self._run(name, args, backward=True)

    # -- implementation -------------------------------------------------------

    def _run(self, name: str, args: Sequence[Any], backward: bool) -> tuple[Any, ...]:
        func = self.function(name)
        types = list(func.function_type.inputs.data)
        if len(args) != len(types):
            raise TypeError(
                f"@{name} takes {len(types)} argument(s), got {len(args)}"
            )
        values = [_to_runtime(t, a, name, i) for i, (t, a) in enumerate(zip(types, args))]
        body = self.runtime.inverse_function(func) if backward else func
        scope = self._interpreter._ctx
        try:
            with np.errstate(all="ignore"):
                outputs = iter(invoke(self._interpreter, body, values, name, backward))
        except InvertibilityError as error:
            # xDSL attaches a dump of the whole module per interpreted op on the
            # way up; the error already names the op and its location.
            error.__notes__ = []
            raise
        except Exception as error:
            where = (
                describe_op(self.runtime.current_op)
                if self.runtime.current_op is not None
                else f"@{name}"
            )
            error.__notes__ = []
            raise ExecutionError(f"{where}: {error}") from error
        finally:
            self._interpreter._ctx = scope
            self.runtime.frames.clear()
            self.runtime.borrowed.clear()
        return tuple(
            _from_runtime(t, next(outputs)) if _is_scalar(t) else value
            for t, value in zip(types, values)
        )


def _is_scalar(type: Attribute) -> bool:
    from revmlir.semantics import is_state_type

    return is_state_type(type)


def _to_runtime(type: Attribute, value: Any, func: str, index: int) -> Any:
    def mismatch(expected: str) -> TypeError:
        return TypeError(
            f"argument #{index} of @{func} must be {expected} ({type}), "
            f"got {type_name(value)}"
        )

    if isinstance(type, MemRefType):
        if not isinstance(value, np.ndarray):
            raise mismatch("a numpy array")
        dtype = numpy_dtype(type.element_type)
        shape = type.get_shape()
        if value.dtype != dtype or value.ndim != len(shape) or any(
            d >= 0 and d != n for d, n in zip(shape, value.shape)
        ):
            raise TypeError(
                f"argument #{index} of @{func} must be an array of {dtype} with shape "
                f"{['?' if d < 0 else d for d in shape]}, got {value.dtype} "
                f"{list(value.shape)}"
            )
        return value
    if isinstance(type, StackType):
        if not isinstance(value, list):
            raise mismatch("a list")
        return value
    if isinstance(value, np.ndarray | list | tuple | str | bytes) or value is None:
        raise mismatch("a scalar")
    if isinstance(type, IntegerType | IndexType):
        if isinstance(value, float | complex | np.floating):
            raise mismatch("an integer")
        return normalize(type, int(value))
    if isinstance(type, LogType):
        if isinstance(value, complex) or not value > 0:
            raise mismatch("a positive real number")
        return normalize(type, np.log(float(value)))
    if isinstance(type, ComplexType):
        return normalize(type, complex(value))
    if isinstance(value, complex):
        raise mismatch("a real number")
    return normalize(type, float(value))


def _from_runtime(type: Attribute, value: Any) -> Any:
    if isinstance(type, LogType):
        return float(np.exp(value))
    return value


def type_name(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype}"
    return type(value).__name__
