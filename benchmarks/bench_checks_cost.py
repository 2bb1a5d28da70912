"""What run-time checks cost: the issue-4 programs (sparse CSR, complex log,
Bennett, leapfrog) and the ADBench GMM and BA objectives, each with its
reversibility checks on and off (``checks=``), as the public call
``f(*args)``.  The safety checks of docs/design.md decision 29 (bounds,
division, shifts, the stack and Ctrl-C polls of ``rev-host-safety``) are in
both columns: no switch removes them (``rev-version-loops`` hoists the index
checks of loops out of them where it can, in both).  Run the script under two revisions
(``PYTHONPATH`` pointing at each) to compare before and after a change.

Run:  .venv/bin/python benchmarks/bench_checks_cost.py [--quick]
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import scipy.sparse as sp

import _harness as H
import revmlir as rv
from adbench_data import read_ba, read_gmm
from bench_ad_ba import FILES as BA_FILES
from bench_sparse import csr_arrays, csr_mul


def reloaded(name: str, checks: bool) -> ModuleType:
    """A fresh copy of example module ``name`` whose ``@rv.reversible``
    functions all have ``checks=checks``."""
    spec = importlib.util.spec_from_file_location(f"{name}_checks_{checks}", H.EXAMPLES / "python" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    original = rv.reversible

    def reversible(function: Any = None, **options: Any) -> Any:
        options.setdefault("checks", checks)
        return original(function, **options) if function is not None else original(**options)

    rv.reversible = reversible  # type: ignore[assignment]
    try:
        spec.loader.exec_module(module)
    finally:
        rv.reversible = original  # type: ignore[assignment]
    return module


def programs(checks: bool) -> dict[str, Callable[[], Any]]:
    import bench_bennett
    import bench_complex_log
    import bench_leapfrog
    import paper_leapfrog

    n = 1000
    matrix = sp.random(n, n, density=0.05, format="csr", random_state=1, dtype=np.float64)
    data, indices, indptr = csr_arrays(matrix)
    x = np.random.default_rng(0).normal(size=n)
    mul = rv.reversible(checks=checks)(csr_mul)
    _, log_call, log_routine = bench_complex_log.make(checks)
    zs = np.random.default_rng(1).normal(size=10**5) + 1j * np.random.default_rng(2).normal(size=10**5)
    ys = np.zeros(10**5, dtype=complex)
    bennett = bench_bennett.make(checks)
    leapfrog = bench_leapfrog.make(checks)
    x0, v0, m = paper_leapfrog.solar_system()
    x16, v16, m16 = bench_leapfrog.cluster(16)
    gmm = reloaded("adbench_gmm", checks)
    problem = read_gmm("gmm/1k/gmm_d10_K5.txt")
    ba = reloaded("adbench_ba", checks)
    bundle = read_ba(BA_FILES["ba1"])
    p = len(bundle.w)
    reproj, w_err = np.zeros((p, 2)), np.zeros(p)
    return {
        "csr_mul 1000×1000, 5 %": lambda: mul(np.zeros(n), data, indices, indptr, x, 1.5),
        "complex log 10⁵, call form": lambda: log_call(ys, zs),
        "complex log 10⁵, routine form": lambda: log_routine(ys, zs),
        "Bennett k = 4, n = 4": lambda: bennett(1.0, 0.0, 4),
        "leapfrog 3 bodies, 1000 steps": lambda: leapfrog(x0.copy(), v0.copy(), m, paper_leapfrog.G_SOLAR, 0.01, 1000),
        "leapfrog 16 bodies, 100 steps": lambda: leapfrog(x16.copy(), v16.copy(), m16, 1.0, 0.01, 100),
        "GMM d = 10, K = 5 objective": functools.partial(
            gmm.gmm_objective, 0.0, problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m
        ),
        "BA ba1 objective": functools.partial(
            ba.ba_objective, reproj, w_err, bundle.cams, bundle.X, bundle.w, bundle.obs, bundle.feats
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    opts = parser.parse_args()
    H.print_header("checks on vs off", "median of f(*args) per call; ratio = on / off")
    off, on = programs(False), programs(True)
    print("| program | checks off | checks on | on / off |")
    print("|---|---|---|---|")
    for name in off:
        timings = H.measure({"off": off[name], "on": on[name]}, repeat=7 if opts.quick else 11)
        low, high = timings["off"].median, timings["on"].median
        print(f"| {name} | {H.fmt_time(low)} | {H.fmt_time(high)} | {high / low:.2f}× |", flush=True)


if __name__ == "__main__":
    main()
