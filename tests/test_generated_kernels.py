"""Generated kernels (``program_generator``'s ``parallel`` extension) run
thread by thread on the CPU (``gpu_emulation``) as on both engines:
forward, inverse and adjoint, results and errors, the failing element
included (``fuzz.kernels``, the differential fuzzer's GPU engine)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from unittest.mock import patch

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from xdsl.dialects import scf

from fuzz import kernels
from fuzz.differential import Case, run_case
from fuzz.kernels import GRIDS, KernelRun, check_kernel, first_failure
from fuzz.outcomes import Outcome, equal
from gpu_emulation import EmulatedKernel
from program_generator import F64, I64, Extensions, FuncInfo, Kernel, Param, Program, arguments, programs
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.loop_versioning import version_loops
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

PARALLEL = Extensions(parallel=True, out_of_bounds=True, failing_checks=True)
KERNELS = programs(extensions=PARALLEL, max_functions=2, budget=6)
VERSIONED = programs(extensions=replace(PARALLEL, versioned_loops=True), max_functions=2, budget=6)


def _case(program: Program, data: st.DataObject) -> Case:
    assert program.kernel is not None
    grid = data.draw(st.sampled_from(GRIDS), label="grid")
    return Case(
        program.text,
        program.entry.name,
        data.draw(arguments(program.entry), label="args"),
        "f64" not in program.text,
        KernelRun(program.kernel, program.entry, grid, ptx=False),
    )


@seed(17)  # a shared accumulation, a local array of a dynamic size, several elements a thread, a failing kernel
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(KERNELS, st.data())
def test_generated_kernels_agree_with_both_engines_thread_by_thread(program: Program, data: st.DataObject):
    assert run_case(_case(program, data)).problems == []


@seed(5)  # inner loops, reversed and of steps 2 and 3, loads out of range at some element, calls in loops
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(VERSIONED, st.data())
def test_generated_versioned_loops_agree_with_both_engines_thread_by_thread(program: Program, data: st.DataObject):
    assert run_case(_case(program, data)).problems == []


def _versioned(text: str) -> int:
    """How many loops native code's versioning copies in ``text``."""
    module = parse_module(text)
    lower_to_std(module, check_ops=True)
    loops = lambda: sum(isinstance(op, scf.ForOp) for op in module.walk())  # noqa: E731
    before = loops()
    version_loops(module)
    return loops() - before


def test_the_versioned_loops_extension_makes_what_versioning_acts_on():
    """Among ten programs drawn (a kernel and a device function), loops
    native code versions on their index checks are in several; without
    the extension, in few."""
    counts: dict[bool, list[int]] = {}
    for versioned in (True, False):
        found: list[int] = []

        @seed(0)
        @settings(
            max_examples=10,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(programs(extensions=replace(PARALLEL, versioned_loops=versioned), max_functions=2, budget=6))
        def collect(program: Program) -> None:
            found.append(_versioned(program.text))

        collect()
        counts[versioned] = found
    assert sum(counts[True]) >= 4 and sum(map(bool, counts[True])) >= 3
    assert sum(counts[True]) >= 2 * sum(counts[False])


def _pinned_cases(count: int) -> list[Case]:
    """The first ``count`` cases the generator draws from a fixed seed."""
    cases: list[Case] = []

    @seed(3)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(KERNELS, st.data())
    def collect(program: Program, data: st.DataObject) -> None:
        cases.append(_case(program, data))

    collect()
    return cases


def _last_thread_matters(case: Case) -> bool:
    """Whether a launch that skips the grid's last thread must give another
    outcome: each element's, the loop run over it alone (iterations are
    independent), is a failure or the arrays it changes; the launch reports
    its first failing thread's failure, so a failure of the last thread's
    is seen only if no other thread fails."""
    assert case.gpu is not None
    kernel, threads = case.gpu.kernel, case.gpu.grid[0] * case.gpu.grid[1]
    last = list(kernel.elements)[threads - 1 :: threads]
    fails, changes = set(), set()
    for element in kernel.elements:
        alone = RevInterpreter(parse_module(kernel.one_iteration(case.text, element)))
        try:
            results = alone.call(case.function, *copy.deepcopy(case.args))
        except Exception:
            fails.add(element)
            continue
        arrays = [(a, b) for a, b in zip(case.args, results) if isinstance(a, np.ndarray)]
        if not all(np.array_equal(a, b, equal_nan=True) for a, b in arrays):
            changes.add(element)
    if fails:
        return fails <= set(last)
    return bool(changes & set(last))


def test_the_engine_catches_a_launch_that_skips_its_last_thread():
    """A planted bug in the emulation: the grid's last thread does nothing.
    Every pinned case whose last thread's work shows reports it, and half
    of them have such work (the generated kernels write their elements and
    run several on a thread)."""
    launch = EmulatedKernel.launch

    def skipping(self: EmulatedKernel, args: Sequence[Any], blocks: int, threads: int, arena: int = 4096) -> Any:
        entry, calls = self.entry, iter(range(1, blocks * threads + 1))
        self.entry = lambda pointers: None if next(calls) == blocks * threads else entry(pointers)
        return launch(self, args, blocks, threads, arena)

    relevant = [case for case in _pinned_cases(6) if _last_thread_matters(case)]
    assert len(relevant) >= 3
    with patch.object(EmulatedKernel, "launch", skipping):
        missed = [case for case in relevant if not run_case(case).problems]
    assert missed == []


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


# Every iteration adds x[i] into g[0]: two threads add x[0], x[2], x[1], x[3].
ACCUMULATING = """rev.func @k(%g: memref<4xf64>, %x: memref<4xf64>) {
  %plb = arith.constant 0 : index
  %pub = arith.constant 4 : index
  %pstep = arith.constant 1 : index
  rev.for parallel %plb to %pub step %pstep : index () {
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<4xf64>
    %k = arith.constant 0 : index
    %e = rev.take %g[%k] : memref<4xf64>
    %y = rev.add %e, %v : f64
    rev.put %y, %g[%k] : memref<4xf64>
    rev.yield
  }
  rev.return
}
"""


def test_a_shared_float_sum_may_round_by_the_order_of_its_threads():
    """1e20 + 1 - 1e20 + 3 is 3 in order and 4 in the threads' order: within
    what adding 2e20 in another order may round, not within 1e-9."""
    args = (np.zeros(4), np.array([1e20, 1.0, -1e20, 3.0]))  # no inverse restores this g: not a run_case
    func = FuncInfo("k", [Param("memref", F64), Param("memref", F64)])
    outcome = Outcome()
    module = parse_module(ACCUMULATING)
    run = KernelRun(KERNEL, func, (1, 2), ptx=False)
    check_kernel(ACCUMULATING, args, False, run, RevInterpreter(module), NativeModule.compile(module), outcome)
    assert outcome.problems == []
    in_order, threads = (np.array([3.0, 0, 0, 0]),), (np.array([4.0, 0, 0, 0]),)
    assert not equal(in_order, threads, False)
    assert equal(in_order, threads, False, (np.array([2e20, 0, 0, 0]),))
    assert not equal(in_order, threads, False, (np.array([1e6, 0, 0, 0]),))


def test_a_one_element_run_that_raises_is_a_traceback():
    """The single-iteration runs are engine runs too: an unexpected
    exception in one is reported, not read as the element passing."""

    def broken(self: Kernel, text: str, element: int) -> str:
        raise RuntimeError("a bug")

    with patch.object(Kernel, "one_iteration", broken):
        problems = run_case(_failing_case((1, 2))).problems
    tracebacks = {stage for kind, stage, _, _ in problems if kind == "traceback"}
    assert {f"emulated kernel, element {e} alone" for e in range(4)} <= tracebacks
