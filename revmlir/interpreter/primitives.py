"""User primitives on the interpreter: ``rev.apply`` of a ``rev.extern``
calls the Python callable registered for its name, of a ``func.func`` runs
that function.

Native code calls a primitive's C symbol; the interpreter cannot, so a
primitive runs here only with a Python implementation of the same function
(``register_python``, which ``rv.primitive(python=…)`` calls).  A run
without one fails at the call with an ``ExecutionError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import ComplexType, IndexType, IntegerType
from xdsl.interpreter import InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from revmlir.dialects.primitives import ApplyOp, ExternOp
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
        # derived code (an uncall's inverse) is not in the module: look up there
        target = SymbolTable.lookup_symbol(interpreter.module, op.callee.string_value())
        if not isinstance(target, ExternOp):
            return interpreter.call_op(op.callee.string_value(), args)
        name = target.sym_name.data
        implementation = _PYTHON.get(name)
        if implementation is None:
            frames = interpreter.runtime.frames
            raise ExecutionError.at(
                op,
                f"primitive @{name} has no Python implementation to run on the interpreter "
                "(rv.primitive(python=...) registers one)",
                str(frames[-1]) if frames else None,
            )
        return (_converted(implementation(*args), op.res.types[0]),)
