"""benchmarks/bench_gpu.py's parts that need no GPU: the cases ``--cases``
selects, and the bytes a kernel call must move, which its bandwidth
figures divide by."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_gpu", ROOT / "benchmarks" / "bench_gpu.py")
assert _spec is not None and _spec.loader is not None
bench_gpu = importlib.util.module_from_spec(_spec)
sys.modules["bench_gpu"] = bench_gpu
_spec.loader.exec_module(bench_gpu)


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
