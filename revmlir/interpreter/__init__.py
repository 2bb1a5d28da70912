"""The reference interpreter: exact semantics for rev/anc and the upstream ops
reversible programs use, on xDSL's interpreter framework.

    interp = RevInterpreter(module)
    interp.call("multiplier", 2.0, 3.0, 5.0)      # (17.0, 3.0, 5.0)
    interp.uncall("multiplier", 17.0, 3.0, 5.0)   # (2.0, 3.0, 5.0)
    interp.counters["multiplier"].instructions

Calls return every argument, updated: scalars by value, arrays (numpy,
updated in place) as the same objects.

An interpreter may be shared between threads: it runs one call at a time
(a lock per interpreter), since xDSL's interpreter keeps one scope of SSA
values and the runtime one stack of frames, borrowed elements and counters
per module.  A reference interpreter is not where parallel speed comes from;
several threads that need it in parallel use one interpreter each.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, impl_external, register_impls
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.printf import PrintfFunctions
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from revmlir.call_graph import recursive_calls
from revmlir.dialects.rev import FuncOp
from revmlir.errors import ExecutionError, LocatedError
from revmlir.interpreter.anc import AncFunctions
from revmlir.interpreter.assertions import AssertFunctions
from revmlir.interpreter.loops import LoopFunctions
from revmlir.interpreter.memref import MemRefFunctions
from revmlir.interpreter.parallel import ParallelFunctions
from revmlir.interpreter.primitives import PrimitiveFunctions
from revmlir.interpreter.pure import PureFunctions
from revmlir.interpreter.recursion import room_for_calls, too_deep
from revmlir.interpreter.rev import RevFunctions, invoke
from revmlir.interpreter.snapshots import SnapshotFunctions
from revmlir.interpreter.state import FunctionCounters, Runtime, RuntimeInterpreter, std_function
from revmlir.lowering.checked_code import ABORT
from revmlir.runtime.backend import Backend, verify_given
from revmlir.runtime_checks import DEFAULT_TOLERANCE, ERROR_SLOT, FAIL, check_error_slot
from revmlir.safety import MAX_CALL_DEPTH

__all__ = ["RevInterpreter", "FunctionCounters", "DEFAULT_TOLERANCE"]


class _Failed(Exception):
    """``revmlir.fail`` was called: the error slot says why."""


@register_impls
class _LoweredRuntime(InterpreterFunctions):
    """``revmlir.fail``, which lowered code calls when a check fails: like
    native code, the run stops there.  Std IR defines it as a call of the C
    library's ``abort`` (``revmlir.lowering.rev_to_std.define_fail``), the
    one ``llvm.call`` lowered code makes outside the stack runtime."""

    @impl_external(FAIL)
    def run_fail(self, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        raise _Failed()

    def __init__(self) -> None:
        self._recursive: set[func.CallOp] = set()
        self._seen: set[func.CallOp] = set()

    @impl(func.CallOp)
    def run_call(self, interpreter: RuntimeInterpreter, op: func.CallOp, args: PythonValues) -> PythonValues:
        """A call of lowered code.  One that may recurse, between functions
        with an error slot in one cycle of their calls (``recursive_calls``,
        the calls ``rev-host-safety`` checks natively), is counted with the
        reversible calls running: the (``MAX_CALL_DEPTH`` + 1)-th nested
        one, or one Python's frames cannot hold, stops with native code's
        error at the call."""
        if op not in self._seen:  # a module's calls, worked out again where one is new
            functions = [f for f in interpreter.module.ops if isinstance(f, func.FuncOp) and _has_error_slot(f)]
            self._recursive = recursive_calls(functions)
            self._seen = {call for f in interpreter.module.ops for call in f.walk() if isinstance(call, func.CallOp)}
        if op not in self._recursive:
            return interpreter.call_op(op.callee, args)
        runtime = interpreter.runtime
        if runtime.recursive_calls >= MAX_CALL_DEPTH:
            raise too_deep(op, std_function(op))
        runtime.recursive_calls += 1
        try:
            return interpreter.call_op(op.callee, args)
        except RecursionError:
            raise too_deep(op, std_function(op)) from None
        finally:
            runtime.recursive_calls -= 1

    @impl(llvm.CallOp)
    def run_llvm_call(self, interpreter: Interpreter, op: llvm.CallOp, args: PythonValues) -> PythonValues:
        if op.callee is None or op.callee.string_value() != ABORT:
            raise InterpretationError(f"cannot run a call of the C function {op.callee} on the interpreter")
        raise _Failed()


def _has_error_slot(function: func.FuncOp) -> bool:
    """Whether ``function`` is lowered code's, which takes the error slot
    last (the functions native code checks the recursion of)."""
    inputs = function.function_type.inputs.data
    return bool(inputs) and inputs[-1] == ERROR_SLOT


class RevInterpreter(Backend):
    """Runs the functions of a verified module: ``module``, verified here
    unless the caller says it ``verified`` it (``verify_given``)."""

    def __init__(self, module: ModuleOp, *, tolerance: float = DEFAULT_TOLERANCE, verified: bool = False):
        verify_given(module, verified)
        self.module = module
        self.runtime = Runtime(tolerance=tolerance)
        self._lock = threading.RLock()
        self._interpreter = RuntimeInterpreter(module, self.runtime)
        for functions in (
            RevFunctions(),
            AncFunctions(),
            SnapshotFunctions(),
            PureFunctions(),
            MemRefFunctions(),
            LoopFunctions(),
            ParallelFunctions(),
            PrimitiveFunctions(),
            FuncFunctions(),
            PrintfFunctions(),
            AssertFunctions(),
        ):
            self._interpreter.register_implementations(functions)
        # lowered code's calls are counted as native code counts them
        self._interpreter.register_implementations(_LoweredRuntime(), override=True)

    # -- public API -----------------------------------------------------------

    @property
    def counters(self) -> dict[str, FunctionCounters]:
        return self.runtime.counters

    @property
    def peak_live_ancillas(self) -> int:
        return self.runtime.peak_live_ancillas

    @property
    def peak_snapshots(self) -> int:
        """The most snapshot records held at once (``anc.snapshot``)."""
        return self.runtime.peak_snapshots

    @property
    def peak_snapshot_bytes(self) -> int:
        """The most bytes of snapshot records held at once."""
        return self.runtime.peak_snapshot_bytes

    @property
    def live_ancillas(self) -> int:
        return self.runtime.live_ancillas

    def reset_counters(self) -> None:
        with self._lock:
            self.runtime.counters.clear()
            self.runtime.peak_live_ancillas = self.runtime.live_ancillas
            self.runtime.peak_snapshots = self.runtime.live_snapshots
            self.runtime.peak_snapshot_bytes = self.runtime.live_snapshot_bytes

    def call_lowered(self, name: str, *args: Any) -> tuple[Any, ...]:
        """Run a ``func.func`` produced by ``rev-lower-to-std``: the error slot
        is supplied here and a failed check raises its error, as native code
        does.  An unknown name and a wrong count of arguments are said as
        such, before the run: xDSL's own errors for them would be located
        at whatever op an earlier run stopped at."""
        function = self._lowered_function(name)
        if len(args) + 1 != len(inputs := function.function_type.inputs):
            raise TypeError(
                f"@{name} takes {len(inputs) - 1} argument(s) (and the error slot, supplied here), got {len(args)}"
            )
        slot = np.zeros(ERROR_SLOT.get_shape()[0], dtype=np.int64)
        with self._lock, room_for_calls():
            self.runtime.current_op = None  # an error before the first op is no earlier run's
            scope = self._interpreter._ctx
            try:
                with np.errstate(all="ignore"), self._located():
                    results = self._interpreter.call_op(name, (*args, slot))
            except _Failed:
                check_error_slot(self.module, slot.tolist())
                raise
            finally:
                self._interpreter._ctx = scope
        return tuple(results)

    def _lowered_function(self, name: str) -> func.FuncOp:
        functions = [op for op in self.module.ops if isinstance(op, func.FuncOp)]
        for function in functions:
            if function.sym_name.data == name:
                return function
        known = ", ".join("@" + function.sym_name.data for function in functions)
        raise ExecutionError(f"no func.func named @{name} (module has: {known or 'none'})")

    @contextmanager
    def _located(self) -> Iterator[None]:
        """An error the ops raise (an index out of bounds, a loop's step
        that is not positive, …) as an ``ExecutionError`` at the op that
        raised it.  xDSL attaches a dump of the whole module per interpreted
        op on the way up; the error already names the op and its location."""
        try:
            yield
        except (LocatedError, _Failed) as error:
            error.__notes__ = []
            raise
        except Exception as error:
            error.__notes__ = []
            raise self.runtime.failed_execution(error) from error

    # -- implementation -------------------------------------------------------

    def _execute(self, func: FuncOp, values: list[Any], backward: bool) -> Sequence[Any]:
        with self._lock, room_for_calls():
            return self._execute_alone(func, values, backward)

    def _execute_alone(self, func: FuncOp, values: list[Any], backward: bool) -> Sequence[Any]:
        name = func.sym_name.data
        body = self.runtime.inverse_function(func) if backward else func
        scope = self._interpreter._ctx
        try:
            with np.errstate(all="ignore"), self._located():
                return invoke(self._interpreter, body, values, name, backward)
        finally:
            self._interpreter._ctx = scope
            self.runtime.frames.clear()
            self.runtime.borrowed.clear()
