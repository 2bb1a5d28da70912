"""``cf.assert`` in a ``rev.safe`` region: an assertion of the program
(``assert`` in a safe block of reversible Python) that stops the run with
an ``ExecutionError`` at the op, its message, as native code's check does
(``revmlir.lowering.rev_to_std``)."""

from __future__ import annotations

from xdsl.dialects import cf
from xdsl.interpreter import InterpreterFunctions, PythonValues, impl, register_impls

from revmlir.errors import ExecutionError
from revmlir.interpreter.state import RuntimeInterpreter


@register_impls
class AssertFunctions(InterpreterFunctions):
    @impl(cf.AssertOp)
    def run_assert(self, interpreter: RuntimeInterpreter, op: cf.AssertOp, args: PythonValues) -> PythonValues:
        if not args[0]:
            frames = interpreter.runtime.frames
            raise ExecutionError.at(op, op.msg.data, str(frames[-1]) if frames else None)
        return ()
