"""User primitives on the interpreter: ``rev.apply`` and ``rev.invoke`` of
a ``rev.extern`` call the Python callable registered for its name (a
backward ``rev.invoke``, its inverse rule), of a ``func.func`` run that
function.  Arrays are passed as the numpy arrays the interpreter holds, so
a callable that updates one in place updates the program's array.

Native code calls a primitive's C symbol; the interpreter cannot, so a
primitive runs here only with a Python implementation of the same function
(``register_python``, which ``rv.primitive(python=…)`` calls).  A run
without one fails at the call with an ``ExecutionError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ComplexType, IndexType, IntegerType
from xdsl.interpreter import InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from revmlir.dialects.primitives import DIFFERENT_LENGTHS, ApplyOp, ExternOp, InvokeOp
from revmlir.errors import ExecutionError
from revmlir.interpreter.state import RuntimeInterpreter

_PYTHON: dict[str, Callable[..., Any]] = {}


def register_python(name: str, implementation: Callable[..., Any]) -> None:
    """Run primitive ``@name`` as ``implementation`` on the interpreter (a
    later registration of the same name replaces it)."""
    _PYTHON[name] = implementation


def _converted(value: Any, type: Attribute) -> Any:
    if isinstance(type, IntegerType | IndexType):
        return int(value)
    if isinstance(type, ComplexType):
        return complex(value)
    return float(value)


@register_impls
class PrimitiveFunctions(InterpreterFunctions):
    @impl(ApplyOp)
    def run_apply(self, interpreter: RuntimeInterpreter, op: ApplyOp, args: PythonValues) -> PythonValues:
        return _call(interpreter, op, op.callee.string_value(), args)

    @impl(InvokeOp)
    def run_invoke(self, interpreter: RuntimeInterpreter, op: InvokeOp, args: PythonValues) -> PythonValues:
        callee = op.callee.string_value()
        if op.backward is not None:
            primitive = SymbolTable.lookup_symbol(interpreter.module, callee)
            assert isinstance(primitive, ExternOp), "the verifier requires an inverse rule"
            callee = primitive.rule("inverse") or callee
        return _call(interpreter, op, callee, args)


def _call(interpreter: RuntimeInterpreter, op: ApplyOp | InvokeOp, callee: str, args: PythonValues) -> PythonValues:
    # derived code (an uncall's inverse) is not in the module: look up there
    target = SymbolTable.lookup_symbol(interpreter.module, callee)
    if not isinstance(target, ExternOp):
        return interpreter.call_op(callee, args)
    name = target.sym_name.data
    implementation = _PYTHON.get(name)
    if implementation is None:
        raise _error(
            interpreter,
            op,
            f"primitive @{name} has no Python implementation to run on the interpreter "
            "(rv.primitive(python=...) registers one)",
        )
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if target.array_convention() != "pointer_length" and len({len(a) for a in arrays}) > 1:
        raise _error(interpreter, op, DIFFERENT_LENGTHS)
    results = implementation(*args)
    types = op.res.types
    if not types:
        return ()
    try:
        values = (results,) if len(types) == 1 else tuple(results)
        return tuple(_converted(value, type) for value, type in zip(values, types, strict=True))
    except (TypeError, ValueError):
        expected = ", ".join(map(str, types))
        message = f"the Python implementation of primitive @{name} returned {results!r}, not {expected}"
        raise _error(interpreter, op, message) from None


def _error(interpreter: RuntimeInterpreter, op: ApplyOp | InvokeOp, message: str) -> ExecutionError:
    """An error at the call, in the frame running it."""
    frames = interpreter.runtime.frames
    return ExecutionError.at(op, message, str(frames[-1]) if frames else None)
