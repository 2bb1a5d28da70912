"""A loop's step must be positive, as MLIR requires: every loop form
(``rev.for``, forwards, backwards and parallel; ``scf.for`` and
``scf.parallel`` written by hand) reached with a step that is not
positive stops the run at the loop with the same ``ExecutionError`` on the
interpreter, in native code and in a GPU kernel run thread by thread.
Before, the interpreter ran no iteration (or failed inside Python's
``range`` for a zero step) where native code ran one or never ended."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func

from gpu_emulation import EmulatedKernel
from revmlir.errors import ExecutionError
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.parsing import make_context, parse_module
from revmlir.passes.flatten import FlattenSplitLoopsPass
from revmlir.passes.resumable import MakeResumablePass
from revmlir.passes.reversibilize import ReversibilizePass
from revmlir.runtime.native import NativeModule
from revmlir.tools.rev_run import main as rev_run
from test_loop_limits import SPREAD


def _walk(width: int) -> str:
    """``@walk(h, lb, ub, s)``: h counts the iterations of a loop over
    ``i{width}``."""
    type = f"i{width}"
    return f"""rev.func @walk(%h: i64, %lb: {type}, %ub: {type}, %s: {type}) {{
  %r = rev.for %lb to %ub step %s : {type} (%h) : i64 {{
  ^bb0(%i: {type}, %a: i64):
    %a1 = rev.inc %a : i64
    rev.yield %a1 : i64
  }}
  rev.return %r, %lb, %ub, %s : i64, {type}, {type}, {type}
}}
"""


def _both(module_text: str, name: str, args: list[Any], backward: bool = False) -> tuple[str, str]:
    """The messages the interpreter and native code stop with."""
    messages = []
    for engine in (RevInterpreter, NativeModule.compile):
        program = engine(parse_module(module_text, "steps.mlir"))
        with pytest.raises(ExecutionError) as error:
            (program.uncall if backward else program.call)(name, *args)
        messages.append(str(error.value))
    return messages[0], messages[1]


@pytest.mark.parametrize("width, step", [(8, 0), (8, -128), (64, -1), (64, -(2**63))])
@pytest.mark.parametrize("backward", [False, True], ids=["forwards", "backwards"])
def test_a_rev_for_with_a_step_that_is_not_positive_stops_at_the_loop(width: int, step: int, backward: bool) -> None:
    """Forwards and run backwards (a reversed loop), at the narrowest and
    widest types: the same error at the loop, with the step."""
    interpreted, native = _both(_walk(width), "walk", [0, 0, 10, step], backward)
    function = "~walk" if backward else "walk"
    assert interpreted == native == f"steps.mlir:2:3: 'rev.for' in @{function}: step must be positive, got {step}"


@pytest.mark.parametrize("step", [0, -3])
def test_a_parallel_rev_for_with_a_step_that_is_not_positive_stops_on_every_engine(step: int) -> None:
    """The interpreter, native code, and the kernel of the same loop run
    thread by thread (the grid-stride loop would divide by the step), whose
    first failing thread reports the error the CPU raises."""
    interpreted, native = _both(SPREAD, "spread", [np.zeros(2, np.int64), 0, 10, step])
    expected = f"steps.mlir:4:3: 'rev.for' in @spread: step must be positive, got {step}"
    assert interpreted == native == expected
    kernel = EmulatedKernel(parse_module(SPREAD, "steps.mlir"), "spread")
    counts = np.zeros(2, np.int64)
    slot = kernel.launch([counts, 0, 10, step], 2, 3)
    with pytest.raises(ExecutionError) as gpu:
        raise_gpu_error(kernel.check_table, slot)
    assert str(gpu.value).startswith(expected) and not counts.any()


ORDINARY = """func.func @count(%h: i64, %lb: index, %ub: index, %s: index) -> (i64, index, index, index) {
  %r = scf.for %i = %lb to %ub step %s iter_args(%a = %h) -> (i64) {
    %one = arith.constant 1 : i64
    %a1 = arith.addi %a, %one : i64
    scf.yield %a1 : i64
  }
  func.return %r, %lb, %ub, %s : i64, index, index, index
}
func.func @mark(%t: memref<?xi64>, %lb: index, %ub: index, %s: index) -> (index, index, index) {
  %one = arith.constant 1 : i64
  scf.parallel (%i) = (%lb) to (%ub) step (%s) {
    memref.store %one, %t[%i] : memref<?xi64>
    scf.reduce
  }
  func.return %lb, %ub, %s : index, index, index
}
"""
"""Ordinary code written by hand, run as it is: a loop counting its
iterations and a parallel loop marking the elements it visits."""


@pytest.mark.parametrize("step", [2, 0, -1])
@pytest.mark.parametrize("name", ["count", "mark"])
def test_hand_written_scf_loops_check_their_step_on_both_engines(name: str, step: int) -> None:
    """Native code (the function as it is, with its checks), the
    interpreter running the same lowered function and, for the parallel
    loop, its GPU kernel run thread by thread agree: the results for a
    positive step, the error at the loop for any other."""
    module = parse_module(ORDINARY, "ordinary.mlir")
    function = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
    native = NativeModule.compile(module).std_caller(function)
    lowered = parse_module(ORDINARY, "ordinary.mlir")
    RevLowerToStdPass().apply(make_context(), lowered)
    interpreter = RevInterpreter(lowered)
    first = [0] if name == "count" else [np.zeros(10, np.int64)]
    outcomes = []
    for run in (lambda args: native(args), lambda args: interpreter.call_lowered(name, *args)):
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in first] + [0, 10, step]
        try:
            scalars = tuple(v for v in run(args) if not isinstance(v, np.ndarray))
            outcomes.append((scalars, args[0].tolist() if name == "mark" else None))
        except ExecutionError as error:
            outcomes.append((str(error), None))
    assert outcomes[0] == outcomes[1]
    line = 2 if name == "count" else 11
    op = "scf.for" if name == "count" else "scf.parallel"
    if step > 0:
        assert outcomes[0][0] == ((5, 0, 10, 2) if name == "count" else (0, 10, 2))
        assert name == "count" or outcomes[0][1] == [1, 0] * 5
    else:
        assert outcomes[0][0] == f"ordinary.mlir:{line}:3: '{op}' in @{name}: step must be positive, got {step}"
    if name == "mark":  # as a GPU kernel, thread by thread: its grid-stride loop divides by the step
        kernel = EmulatedKernel(parse_module(ORDINARY, "ordinary.mlir"), name)
        marks = np.zeros(10, np.int64)
        slot = kernel.launch([marks, 0, 10, step], 2, 3)
        assert marks.tolist() == (outcomes[0][1] or [0] * 10)
        if step > 0:
            assert not slot.any()
        else:
            with pytest.raises(ExecutionError) as gpu:
                raise_gpu_error(kernel.check_table, slot)
            assert str(gpu.value) == outcomes[0][0]


def test_the_interpreter_refuses_such_a_step_in_std_code_that_has_no_check() -> None:
    """Std code run on the interpreter without ``rev-lower-to-std``'s
    checks: the loop's own semantics refuse the step (Python's ``range``
    ran no iteration, or raised its own ``ValueError`` for 0), located at
    the loop, in the function that holds it, as native code names it."""
    text = ORDINARY.replace("%s: index) -> (i64", "%s: index, %err: memref<6xi64>) -> (i64")
    program = RevInterpreter(parse_module(text, "std.mlir"))
    assert program.call_lowered("count", 0, 0, 10, 3) == (4, 0, 10, 3)
    for step in (0, -2):
        with pytest.raises(
            ExecutionError, match=rf"^std.mlir:2:3: 'scf.for' in @count: step must be positive, got {step}$"
        ):
            program.call_lowered("count", 0, 0, 10, step)


def test_call_lowered_says_a_callers_mistake_as_such_after_a_failed_run() -> None:
    """After a run stopped at the loop, a wrong count of arguments and an
    unknown name are said as such, not located at that loop."""
    text = ORDINARY.replace("%s: index) -> (i64", "%s: index, %err: memref<6xi64>) -> (i64")
    program = RevInterpreter(parse_module(text, "std.mlir"))
    with pytest.raises(ExecutionError, match="step must be positive"):
        program.call_lowered("count", 0, 0, 10, 0)
    with pytest.raises(TypeError, match=r"^@count takes 4 argument\(s\) \(and the error slot, supplied here\), got 2$"):
        program.call_lowered("count", 0, 0)
    with pytest.raises(ExecutionError, match=r"^no func.func named @nosuch \(module has: @count, @mark\)$"):
        program.call_lowered("nosuch")


CALLS_A_DECLARATION = """func.func private @external(%err: memref<6xi64>) -> ()
func.func @calls(%err: memref<6xi64>) {
  func.call @external(%err) : (memref<6xi64>) -> ()
  func.return
}
"""
"""A function the module only declares, called directly and from a body."""


def test_call_lowered_locates_no_error_before_the_first_op_at_an_earlier_runs_op() -> None:
    """A declaration fails before any op of it runs: after a run stopped at
    the loop, its error is not located at that loop, and it says that the
    function is only declared, not xDSL's words for a missing external."""
    text = ORDINARY.replace("%s: index) -> (i64", "%s: index, %err: memref<6xi64>) -> (i64")
    program = RevInterpreter(parse_module(text + CALLS_A_DECLARATION, "std.mlir"))
    with pytest.raises(ExecutionError, match="step must be positive"):
        program.call_lowered("count", 0, 0, 10, 0)
    declared = r"@external is only declared: the interpreter runs functions defined in the module$"
    with pytest.raises(ExecutionError, match="^" + declared):
        program.call_lowered("external")
    with pytest.raises(ExecutionError, match=r"^std.mlir:\d+:3: 'func.call' in @calls: " + declared):
        program.call_lowered("calls")


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_rev_run_reports_the_loop_and_the_step(backend: str, tmp_path, capsys) -> None:
    path = tmp_path / "walk.mlir"
    path.write_text(_walk(64))
    assert rev_run([str(path), "-e", "walk", "--backend", backend, "--args", "0", "0", "10", "0"]) == 1
    assert f"{path}:2:3: error: 'rev.for' in @walk: step must be positive, got 0" in capsys.readouterr().err


RESUMABLE = """func.func @g(%x: memref<4xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf64>
  %w = arith.mulf %v, %a : f64
  memref.store %w, %x[%c0] : memref<4xf64>
  func.return %w : f64
}
func.func @f(%x: memref<4xf64>, %l: index, %s: index, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %l step %s iter_args(%acc = %zero) -> (f64) {
    %m = math.sin %acc : f64
    %t = func.call @g(%x, %a) : (memref<4xf64>, f64) -> f64
    %u = arith.addf %m, %t : f64
    scf.yield %u : f64
  }
  func.return %r : f64
}
"""
"""A loop the resumable form steps as a variable (``make-resumable``)."""

SPLIT = """func.func @f(%x: memref<4xf64>, %l: index, %s: index, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %l step %c1 iter_args(%acc = %zero) -> (f64) {
    %w = memref.load %x[%c0] : memref<4xf64>
    %q = scf.for %j = %c0 to %l step %s iter_args(%t = %acc) -> (f64) {
      %p = arith.mulf %w, %a : f64
      %t1 = arith.addf %t, %p : f64
      memref.store %t1, %x[%c1] : memref<4xf64>
      scf.yield %t1 : f64
    }
    scf.yield %q : f64
  } {checkpoint = #ad.schedule<binomial, snapshots = 2>, checkpoint_split = "work"}
  func.return %r : f64
}
"""
"""An inner loop the flattening of split loops steps as a variable."""


PASSES = {
    "resumable": (RESUMABLE, [MakeResumablePass(functions=("f",), policy="binomial", snapshots=3)], 11),
    "flattened": (SPLIT, [FlattenSplitLoopsPass()], 7),
}


@pytest.mark.parametrize("form", list(PASSES))
@pytest.mark.parametrize("step", [0, -1])
def test_loops_stepped_as_variables_refuse_the_step_before_the_first_iteration(form: str, step: int) -> None:
    """The step is checked where the loop starts, not taken for one whose
    ``i + step`` overflowed after an iteration: the same error at the loop
    on both engines, and no element of ``x`` written."""
    text, passes, line = PASSES[form]
    module = parse_module(text, "stepped.mlir")
    for module_pass in [*passes, ReversibilizePass()]:
        module_pass.apply(make_context(), module)
    messages = []
    for engine in (RevInterpreter, NativeModule.compile):
        x = np.arange(1.0, 5.0)
        with pytest.raises(ExecutionError) as error:
            engine(module.clone()).call("f", x, 3, step, 0.5, 0.0, np.zeros(4))
        assert x.tolist() == [1.0, 2.0, 3.0, 4.0]
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert re.match(rf"stepped.mlir:{line}:\d+: 'cf.assert' in @f: step must be positive$", messages[0])
