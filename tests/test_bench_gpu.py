"""benchmarks/bench_gpu.py's parts that need no GPU: the cases ``--cases``
selects, and the bytes a kernel call must move, which its bandwidth
figures divide by; and benchmarks/ptx_path.py's and ptx_run.py's counts of
the PTX instructions a kernel runs per element."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

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
