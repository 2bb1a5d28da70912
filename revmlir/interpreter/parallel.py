"""Parallel loops at the std level: ``scf.parallel`` and ``memref.atomic_rmw``.

The interpreter runs one iteration after another, in ascending order (the
order native code on the CPU uses; any order is valid, since iterations of a
parallel loop are independent), so an atomic update is an ordinary one.
"""

from __future__ import annotations

from xdsl.dialects import memref, scf
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.utils.exceptions import InterpretationError

from revmlir.dialects.upstream_forms import KINDS, AtomicRMWOp, ParallelOp
from revmlir.interpreter.loops import positive_step
from revmlir.interpreter.memref import checked_index
from revmlir.runtime.values import normalize


@register_impls
class ParallelFunctions(InterpreterFunctions):
    def run_parallel(self, interpreter: Interpreter, op: scf.ParallelOp, args: PythonValues) -> PythonValues:
        if len(op.lowerBound) != 1 or op.initVals:
            raise InterpretationError(
                "only one-dimensional scf.parallel loops without reductions run (a parallel rev.for lowers to one)"
            )
        lb, ub, step = args
        for index in range(lb, ub, positive_step(step)):
            interpreter.run_ssacfg_region(op.body, (index,), "parallel")
        return ()

    @impl_terminator(scf.ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: scf.ReduceOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    def run_atomic_rmw(self, interpreter: Interpreter, op: memref.AtomicRMWOp, args: PythonValues) -> PythonValues:
        value, array, *indices = args
        kind = op.kind.value.data
        if kind not in (KINDS.index("addf"), KINDS.index("addi")):
            raise InterpretationError(f"memref.atomic_rmw of kind {kind} does not run; only addf and addi")
        index = checked_index(array, tuple(indices))
        old = normalize(op.result.type, array[index].item())
        array[index] = normalize(op.result.type, old + value)
        return (old,)

    run_xdsl_parallel = impl(scf.ParallelOp)(run_parallel)
    run_upstream_parallel = impl(ParallelOp)(run_parallel)
    run_xdsl_atomic_rmw = impl(memref.AtomicRMWOp)(run_atomic_rmw)
    run_upstream_atomic_rmw = impl(AtomicRMWOp)(run_atomic_rmw)
