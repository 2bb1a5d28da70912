"""Generated kernels (``program_generator``'s ``parallel`` extension) run
thread by thread on the CPU (``gpu_emulation``) as on both engines:
forward, inverse and adjoint, results and errors, the failing element
included (``fuzz.kernels``, the differential fuzzer's GPU engine)."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz import kernels
from fuzz.differential import Case, run_case
from fuzz.kernels import GRIDS, KernelRun, first_failure
from program_generator import I64, Extensions, FuncInfo, Kernel, Param, Program, arguments, programs

PARALLEL = Extensions(parallel=True, out_of_bounds=True, failing_checks=True)


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(extensions=PARALLEL, max_functions=2, budget=6), st.data())
def test_generated_kernels_agree_with_both_engines_thread_by_thread(program: Program, data: st.DataObject):
    assert program.kernel is not None
    grid = data.draw(st.sampled_from(GRIDS), label="grid")
    case = Case(
        program.text,
        program.entry.name,
        data.draw(arguments(program.entry), label="args"),
        "f64" not in program.text,
        KernelRun(program.kernel, program.entry, grid, ptx=False),
    )
    assert run_case(case).problems == []


# Iteration i frees an ancilla holding x[i] against 0: elements 1 and 2 fail.
FAILING = """rev.func @k(%y: memref<4xi64>, %x: memref<4xi64>) {
  %plb = arith.constant 0 : index
  %pub = arith.constant 4 : index
  %pstep = arith.constant 1 : index
  rev.for parallel %plb to %pub step %pstep : index () {
  ^bb0(%i: index):
    %e = rev.take %y[%i] : memref<4xi64>
    %v = memref.load %x[%i] : memref<4xi64>
    %a = anc.alloc %v : i64
    %c = arith.constant 0 : i64
    anc.free %a, %c : i64
    rev.put %e, %y[%i] : memref<4xi64>
    rev.yield
  }
  rev.return
}
"""
KERNEL = Kernel("k", 0, 4, 1)
FUNC = FuncInfo("k", [Param("memref", I64), Param("memref", I64)])


def test_the_first_failing_thread_reports_its_first_failing_element():
    failures = {1: "E: one", 2: "E: two", 3: "E: three"}
    assert first_failure(KERNEL, failures, (1, 1)) == "E: one (element 1)"
    assert first_failure(KERNEL, failures, (1, 2)) == "E: two (element 2)"  # thread 0 runs 0, then 2
    assert first_failure(KERNEL, failures, (2, 3)) == "E: one (element 1)"
    assert first_failure(Kernel("k", 1, 4, 2), {3: "E: three"}, (1, 2)) == "E: three (element 3)"
    assert first_failure(KERNEL, {}, (1, 2)) is None


def test_one_iteration_runs_the_loop_over_one_element():
    alone = KERNEL.one_iteration(FAILING, 2)
    assert "%plb = arith.constant 2 : index" in alone and "%pub = arith.constant 3 : index" in alone


def _failing_case(grid: tuple[int, int]) -> Case:
    args = (np.zeros(4, dtype=np.int64), np.array([0, 5, 7, 0], dtype=np.int64))
    return Case(FAILING, "k", args, True, KernelRun(KERNEL, FUNC, grid, ptx=True))


def test_a_failing_kernel_reports_the_element_of_the_first_failing_thread():
    """The CPU fails at element 1 (holding 5); two threads run 0, 2 and 1, 3
    in turn, so the emulation fails at element 2 (holding 7): both are
    what the iterations alone say.  The kernels also go through ptxas."""
    assert run_case(_failing_case((1, 2))).problems == []


def test_the_element_oracle_sees_a_wrong_element():
    """Predicting the CPU's order for two threads disagrees with the
    emulation: the oracle can fail."""
    in_order = lambda kernel, failures, grid: first_failure(kernel, failures, (1, 1))  # noqa: E731
    with patch.object(kernels, "first_failure", in_order):
        problems = run_case(_failing_case((1, 2))).problems
    assert {(kind, stage, summary) for kind, stage, summary, _ in problems} == {
        ("engines", "emulated kernel", "the engines fail differently"),
        ("engines", "emulated inverse kernel", "the engines fail differently"),
        ("engines", "emulated adjoint kernel", "the engines fail differently"),
    }


def test_the_result_oracle_sees_a_wrong_element():
    """An emulated launch that changes an element the CPU does not is a
    difference, in every direction."""
    launch = kernels._launch

    def off_by_one(*args: Any) -> tuple[Any, ...]:
        values = launch(*args)
        values[0][3] += 1
        return values

    args = (np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64))
    with patch.object(kernels, "_launch", off_by_one):
        problems = run_case(Case(FAILING, "k", args, True, KernelRun(KERNEL, FUNC, (1, 2), ptx=False))).problems
    assert {(stage, summary) for _, stage, summary, _ in problems} == {
        (f"emulated {direction}", "the engines compute different results")
        for direction in ("kernel", "inverse kernel", "adjoint kernel")
    }
