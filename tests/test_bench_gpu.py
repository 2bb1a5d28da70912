"""benchmarks/bench_gpu.py's parts that need no GPU: the cases ``--cases``
selects, and the bytes a kernel call must move, which its bandwidth
figures divide by; and benchmarks/ptx_path.py's and ptx_run.py's counts of
the PTX instructions a kernel runs per element."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import revmlir as rv
from python_examples import load_benchmark

ROOT = Path(__file__).resolve().parents[1]

bench_gpu, ptx_path, ptx_run = load_benchmark("bench_gpu"), load_benchmark("ptx_path"), load_benchmark("ptx_run")


def test_cases_are_named_in_any_case_and_unknown_ones_are_refused() -> None:
    assert bench_gpu.parse_cases("ba, PTX") == ["BA", "ptx"]
    assert bench_gpu.parse_cases(",".join(bench_gpu.CASES)) == list(bench_gpu.CASES)
    for wrong, named in (("BA,gpu", "gpu"), ("", r"\(none given\)")):
        with pytest.raises(argparse.ArgumentTypeError, match=rf"unknown case\(s\) {named}; known: elementwise"):
            bench_gpu.parse_cases(wrong)


def test_traffic_counts_an_array_written_and_restored_as_read_only() -> None:
    """The complex log's routine form writes ``x`` and restores it: ``y``
    is read and written, ``x`` read (three arrays' bytes, not four); its
    gradient changes ``y`` (uncomputed) and ``g_x``, not ``x`` or ``g_y``."""
    import gpu_elementwise as ex
    import revmlir as rv

    n = 64
    x = np.exp(1j * np.linspace(-3.0, 3.0, n)) * 2.0
    assert bench_gpu.traffic([np.zeros(n, complex), x], ex.complex_log) == 3 * 16 * n
    y = np.zeros(n)
    ex.log_sin(y, x.real + 3.0)
    arrays = [y, x.real + 3.0, np.ones(n), np.zeros(n)]
    assert bench_gpu.traffic(arrays, rv.adjoint(ex.log_sin)) == 6 * 8 * n


def test_the_ptx_walk_counts_an_iteration_of_either_loop_of_a_versioned_kernel() -> None:
    """filecheck/gpu/versioned_loop.mlir's kernel (``y[i] += a·x[i]``):
    its unchecked loop is the eleven instructions that file pins; its
    checked loop five more, the two bounds' compares and branches (their
    failure reports not taken) and the element's offset computed again."""
    from revmlir.gpu.program import module_ptx
    from revmlir.parsing import parse_module

    source = ROOT / "tests" / "filecheck" / "gpu" / "versioned_loop.mlir"
    lines = ptx_path.entry_lines(module_ptx(parse_module(source.read_text(), str(source))), "axpy")
    unchecked_loop, checked_loop = ptx_path.loop_headers(lines)
    fast = ptx_path.opcodes(ptx_path.Walk(lines).iteration(unchecked_loop))
    assert sum(fast.values()) == 11 and fast["bra"] == 1 and "setp.lt.u64" not in fast
    assert fast["ld.global.nc.b64"] == fast["ld.global.b64"] == fast["st.global.b64"] == 1
    checked = ptx_path.opcodes(ptx_path.Walk(lines).iteration(checked_loop))
    assert sum(checked.values()) == 16 and checked["setp.lt.u64"] == 2 and checked["bra"] == 3


def test_a_symbolic_run_counts_what_the_walk_counts_and_stops_at_a_failed_check() -> None:
    """``ptx_run`` runs the same kernel's thread over all its elements:
    in range, each element costs the unchecked loop's eleven instructions
    that ``ptx_path`` walks; with ``x`` too short, the thread reaches the
    failure report, which a count of the common path refuses."""
    from revmlir.gpu.program import module_ptx
    from revmlir.parsing import parse_module

    source = ROOT / "tests" / "filecheck" / "gpu" / "versioned_loop.mlir"
    ptx = module_ptx(parse_module(source.read_text(), str(source)))
    few, many = (ptx_run.instructions(ptx, "axpy", [np.zeros(n), np.zeros(n), 0.5]) for n in (4, 12))
    assert many.total() - few.total() == 8 * 11 and many["ld.global.nc.b64"] - few["ld.global.nc.b64"] == 8
    with pytest.raises(RuntimeError, match=r"calls revmlir_\$_report on the common path"):
        ptx_run.instructions(ptx, "axpy", [np.zeros(12), np.zeros(11), 0.5])


@rv.reversible
def row_total(total, x, i, m):
    for j in range(m):
        total += x[i, j]


@rv.reversible
def row_totals(y, x, w):
    """Two calls of ``row_total``, which loops ``w.shape[0]`` times: a
    device function, not inlined."""
    for i in rv.prange(y.shape[0]):
        row_total(y[i, 0], x, i, w.shape[0])
        row_total(y[i, 1], x, i, w.shape[0])


@rv.reversible
def thirds(y, x, w):
    """``w.shape[0] // 3`` iterations: LLVM divides by ``mul.hi.s64`` with
    a magic number."""
    for i in rv.prange(y.shape[0]):
        for j in range(w.shape[0] // 3):
            y[i] += x[i, j]


@rv.reversible
def ratio(y, x, w, v):
    """``w.shape[0] // v.shape[0]`` iterations: ``div.s64`` or, where both
    fit, ``div.u32``."""
    for i in rv.prange(y.shape[0]):
        for j in range(w.shape[0] // v.shape[0]):
            y[i] += x[i, j]


@rv.reversible
def gathered(y, x, at):
    """``at[i]`` iterations: a trip count loaded from memory, unknown."""
    for i in rv.prange(y.shape[0]):
        for j in range(at[i]):
            y[i] += x[i, j]


def per_point(function: rv.ReversibleFunction, arrays: Callable[[int], list[Any]]) -> Counter[str]:
    """The instructions per point of ``function``'s kernel: those of a run
    on ``arrays(6)`` less those on ``arrays(2)``, over 4."""
    compiled = rv.cuda.kernel(function).specialise(*arrays(2))
    ptx, entry = compiled.program.ptx, compiled.program.kernels[compiled.name].entry
    few, many = (ptx_run.instructions(ptx, entry, arrays(n)) for n in (2, 6))
    return Counter({op: (count - few[op]) // 4 for op, count in many.items() if count != few[op]})


def test_a_device_functions_loop_runs_its_trip_count() -> None:
    """Each point runs ``row_total``'s loop of ``m`` loads twice: the
    count per point grows by ``2·m`` loads, and the same instructions per
    iteration, from ``m`` = 8 to 16 to 24."""
    counts = [
        per_point(row_totals, lambda n, m=m: [np.zeros((n, 2)), np.zeros((n, 24)), np.zeros(m)]) for m in (8, 16, 24)
    ]
    loads = [c["ld.global.nc.b64"] for c in counts]
    assert loads[1] - loads[0] == loads[2] - loads[1] == 16
    assert counts[1].total() - counts[0].total() == counts[2].total() - counts[1].total() > 16


@pytest.mark.parametrize(
    ("function", "extra", "iterations"),
    [(thirds, [np.zeros(30)], 10), (thirds, [np.zeros(90)], 30), (ratio, [np.zeros(30), np.zeros(3)], 10)],
    ids=["30 // 3", "90 // 3", "30 // len(v)"],
)
def test_a_trip_count_divided_is_the_quotient(
    function: rv.ReversibleFunction, extra: list[Any], iterations: int
) -> None:
    """A division by a constant (``mul.hi``) and by a size (``div``) give
    the loop its real trip count: ``iterations`` loads of ``x`` per
    point (90 // 3 = 30 columns of 40: no check fails)."""
    counts = per_point(function, lambda n: [np.zeros(n), np.zeros((n, 40)), *extra])
    assert counts["ld.global.nc.b64"] == iterations


def test_a_branch_on_an_unknown_integer_stops_the_run() -> None:
    """A trip count loaded from memory is unknown: the run refuses to
    guess the loop's branch."""
    compiled = rv.cuda.kernel(gathered).specialise(np.zeros(2), np.zeros((2, 4)), np.array([1, 3]))
    ptx, entry = compiled.program.ptx, compiled.program.kernels[compiled.name].entry
    with pytest.raises(RuntimeError, match=r"^gathered branches on %p\d+, (an unknown integer|which no setp sets)"):
        ptx_run.instructions(ptx, entry, [np.zeros(2), np.zeros((2, 4)), np.array([1, 3])])


FUNCTION = """.func (.param .b64 func_retval0) f(.param .b64 f_param_0)
{{
.local .align 8 .b8 __local_depot0[100000];
ld.param.b64 %rd1, [f_param_0];
{}
st.param.b64 [func_retval0], %rd9;
ret;
}}
"""
"""A function of one parameter returning ``%rd9``."""


@pytest.mark.parametrize(
    ("body", "argument", "returned"),
    [
        ("mul.hi.s64 %rd9, %rd1, 6148914691236517206;", 90, 30),  # 90 // 3, as LLVM divides by 3
        ("mul.hi.s64 %rd9, %rd1, 6148914691236517206;", -90, -31),
        ("cvt.u32.u64 %r1, %rd1; mul.wide.s32 %rd9, %r1, 3;", -2, -6),
        ("cvt.u32.u64 %r1, %rd1; mad.wide.u32 %rd9, %r1, %r1, %rd1;", 1 << 20, (1 << 40) + (1 << 20)),
        ("div.s64 %rd9, %rd1, 2;", -7, -3),
        ("rem.s64 %rd9, %rd1, 2;", -7, -1),
        ("setp.gt.s64 %p1, %rd1, 0; setp.eq.and.b64 %p2, %rd1, 5, %p1; selp.b64 %rd9, 1, 2, %p2;", 5, 1),
        ("mov.b64 {%r1, %r2}, %rd1; mov.b64 %rd9, {%r2, %r1};", 1, 1 << 32),
        ("mov.b64 %rd9, 7; ld.global.v2.b64 {%rd9, %rd2}, [%rd3];", 0, None),  # no stale value
        ("st.b64 [%rd1], 5; st.b64 [%rd3], 1; ld.b64 %rd9, [%rd1];", 1 << 40, None),  # %rd3 may be %rd1
        (
            "mov.b64 %rd2, __local_depot0; st.b64 [%rd2+69632], 5; alloca.u64 %rd3, 8, 8; st.b64 [%rd3], 1;"
            " ld.b64 %rd9, [%rd2+69632];",
            0,
            5,
        ),  # a frame of 100,000 bytes: the allocation after it does not overlap it
    ],
    ids=[
        "mul.hi",
        "mul.hi negative",
        "mul.wide.s32",
        "mad.wide",
        "div",
        "rem",
        "setp and",
        "vector mov",
        "vector load",
        "unknown store",
        "large frame",
    ],
)
def test_the_symbolic_run_computes_integers_as_ptx_defines_them(body: str, argument: int, returned: int | None) -> None:
    thread = ptx_run.Thread(ptx_run.functions(FUNCTION.format(body)), {})
    result = thread.run("f", [{0: argument & ptx_run.MASK}]).get(0)
    assert result == (None if returned is None else returned & ptx_run.MASK)


def test_a_numpy_integer_argument_is_known() -> None:
    thread = ptx_run.Thread({}, {})
    ptx = ".entry k(.param .b64 k_param_0, .param .b64 k_param_1, .param .b64 k_param_2)\n{\nret;\n}\n"
    assert ptx_run.kernel_arguments(ptx, "k", [np.int64(-3)], thread)[0] == {0: -3 & ptx_run.MASK}


def test_a_vector_load_waits_for_the_branches_before_the_first_use_of_any_value_it_loads() -> None:
    """``ld.global.nc.v2.b64 {%rd7, %rd8}`` loads two values: the count
    stops at the first use of either (here ``%rd8``, after one branch), and
    ``%rd7`` does not stand for ``%rd70``."""
    path = [
        "ld.global.nc.v2.b64 {%rd7, %rd8}, [%rd1];",
        "@%p1 bra $L__BB0_2;",
        "add.s64 %rd70, %rd2, 1;",
        "mul.f64 %fd1, %rd8, %rd8;",
        "@%p2 bra $L__BB0_3;",
        "add.f64 %fd2, %rd7, %fd1;",
        "ld.global.b64 %rd9, [%rd7];",
        "@%p3 bra $L__BB0_4;",
        "st.global.b64 [%rd2], %rd9;",
    ]
    assert ptx_path.branches_before_use(path) == 2


@pytest.mark.parametrize("label, branches", [("y += log(x)·sin(x)", 4), ("its adjoint", 14)])
def test_the_elementwise_kernels_loads_wait_for_few_branches(label: str, branches: int) -> None:
    """``log_sin``'s loads (its adjoint's too) are used before most of the
    logarithm's and sine's branches."""
    import revmlir as rv

    ((function, arguments),) = ((f, a) for name, f, a in ptx_path.kernels()[:2] if name == label)
    compiled = rv.cuda.kernel(function).specialise(*arguments)
    lines = ptx_path.entry_lines(compiled.program.ptx, compiled.program.kernels[compiled.name].entry)
    path = ptx_path.Walk(lines).iteration(ptx_path.loop_headers(lines)[0])
    assert ptx_path.branches_before_use(path) == branches
