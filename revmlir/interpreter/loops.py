"""``scf.for`` on the interpreter: xDSL's semantics, with a step that must be
positive.

MLIR gives a loop with a step that is not positive no meaning, and
Python's ``range`` gives it one of its own (no iteration, iterations
downwards, or a ``ValueError`` for a zero step), which native code, reading
the step unsigned, does not share.  So every loop form (``rev.for``,
``scf.for``, ``scf.parallel``) refuses such a step where the run reaches
it, with the message native code's check raises (``NONPOSITIVE_STEP``).
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.scf import ScfFunctions
from xdsl.utils.exceptions import InterpretationError

from revmlir.safety import NONPOSITIVE_STEP


def positive_step(step: int) -> int:
    """``step``, or the ``InterpretationError`` the run stops with at the
    loop (the interpreter locates it at the op running)."""
    if step <= 0:
        raise InterpretationError(NONPOSITIVE_STEP.format(step))
    return step


@register_impls
class LoopFunctions(ScfFunctions):
    """xDSL's ``scf`` semantics, ``scf.for`` with its step checked."""

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues) -> PythonValues:
        lb, ub, step, *carried = args
        state = tuple(carried)
        for index in range(lb, ub, positive_step(step)):
            state = interpreter.run_ssacfg_region(op.body, (index, *state), "for_loop")
        return state
