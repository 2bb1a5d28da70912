"""Compile latency of the complex-log function (NiLang Listing 5): source →
rev IR → std → llvm dialect → LLVM IR → -O3 → machine code.  Target: < 1 s.

Measured three ways:

1. per stage, for the eDSL function ``complex_log`` (examples/python/
   paper_basics.py) and for examples/complex_log.mlir; the lowering to std
   is native code's, ``lower_to_std(check_ops=True)`` (each run-time check
   one op, which ``convert-std-to-llvm`` expands), not the printed form of
   the ``rev-lower-to-std`` pass;
2. end to end as users see it: time of the first call minus a warm call of a
   freshly decorated ``complex_log`` (the brief's definition), and
   ``NativeModule.compile`` on the parsed .mlir module, which compiles the
   forward direction only (``Direction.FORWARD``, the default since design
   decision 94; earlier figures compiled the inverses too);
3. both *cold* — in a fresh Python process (after ``import revmlir``, which is
   reported separately), so one-time initialisation (LLVM target set-up, xDSL
   contexts, lazy imports) is included — and *warm*, repeated in one process.

Run:  .venv/bin/python benchmarks/bench_compile.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _harness as H

# Compile latency includes LLVM's work: measured without the disk cache of
# compiled objects unless REVMLIR_CACHE is set (fresh processes inherit this).
os.environ.setdefault("REVMLIR_CACHE", "0")

EDSL_STAGES = [
    "python → rev IR",
    "rev-invert",
    "lower to std (check ops)",
    "convert-std-to-llvm",
    "llvm dialect → LLVM IR text",
    "LLVM parse+verify+O3",
    "MCJIT codegen",
]


def staged_compile(source: str) -> dict[str, float]:
    """Compile the complex-log function once, timing each stage."""
    import cmath  # noqa: F401  (the decorated function's globals)
    import math  # noqa: F401

    import llvmlite.binding as llvm
    from xdsl.backend.llvm.convert import convert_module

    from revmlir.frontend.reversible_code.compiler import ModuleCompiler
    from revmlir.lowering.rev_to_std import lower_to_std
    from revmlir.lowering.std_to_llvm import ConvertStdToLLVMPass
    from revmlir.parsing import make_context, parse_module
    from revmlir.passes.invert import RevInvertPass
    from revmlir.runtime.jit import host_target_machine, optimize

    times: dict[str, float] = {}
    clock = time.perf_counter
    t = clock()
    if source == "edsl":
        import paper_basics
        import revmlir as rv

        fresh = rv.reversible(paper_basics.complex_log.pyfunc)  # nothing cached
        types = fresh.signature_of((0j, 3 - 4j))
        compiler = ModuleCompiler()
        compiler.request(fresh, types)
        module = compiler.finish()
        times["python → rev IR"] = clock() - t
    else:
        text = (H.EXAMPLES / "complex_log.mlir").read_text()
        module = parse_module(text, "complex_log.mlir")
        times["parse .mlir → rev IR"] = clock() - t
    t = clock()
    ctx = make_context()
    work = module.clone()
    RevInvertPass().apply(ctx, work)
    times["rev-invert"] = clock() - t
    t = clock()
    lower_to_std(work, check_ops=True)
    times["lower to std (check ops)"] = clock() - t
    t = clock()
    work.attributes.clear()
    ConvertStdToLLVMPass().apply(ctx, work)
    times["convert-std-to-llvm"] = clock() - t
    t = clock()
    text_ir = str(convert_module(work, fallback_target_triple=None))
    times["llvm dialect → LLVM IR text"] = clock() - t
    t = clock()
    machine = host_target_machine(3)
    optimized = optimize(text_ir, machine, 3)
    times["LLVM parse+verify+O3"] = clock() - t
    t = clock()
    engine = llvm.create_mcjit_compiler(optimized, machine)
    engine.finalize_object()
    assert engine.get_function_address("complex_log_ciface")
    times["MCJIT codegen"] = clock() - t
    times["total"] = sum(times.values())
    return times


def first_call_minus_warm() -> dict[str, float]:
    """The user-visible latency: first call of a freshly decorated function
    minus a warm call."""
    import paper_basics
    import revmlir as rv

    fresh = rv.reversible(paper_basics.complex_log.pyfunc)
    t = time.perf_counter()
    fresh(0j, 3 - 4j)
    first = time.perf_counter() - t
    warm = []
    for _ in range(7):
        t = time.perf_counter()
        fresh(0j, 3 - 4j)
        warm.append(time.perf_counter() - t)
    return {"first call": first, "warm call": statistics.median(warm), "first - warm": first - statistics.median(warm)}


def native_module_compile() -> dict[str, float]:
    from revmlir.parsing import parse_module
    from revmlir.runtime.native import NativeModule

    t = time.perf_counter()
    module = parse_module((H.EXAMPLES / "complex_log.mlir").read_text(), "complex_log.mlir")
    parsed = time.perf_counter() - t
    t = time.perf_counter()
    native = NativeModule.compile(module)
    compiled = time.perf_counter() - t
    assert abs(native.call("complex_log", 0j, 3 - 4j)[0] - complex(1.6094379124341003, -0.9272952180016122)) < 1e-12
    return {"parse_module": parsed, "NativeModule.compile": compiled, "total": parsed + compiled}


def other_programs(repeat: int) -> dict[str, list[float]]:
    """Compile latency (first call − warm call) of the programs the other
    benchmarks run, each decorated afresh per sample, checks off."""
    import numpy as np
    import scipy.sparse as sp

    import bench_bennett
    import bench_complex_log
    import bench_leapfrog
    import bench_sparse
    import paper_leapfrog
    import revmlir as rv
    from paper_sparse import csr_arrays

    a = csr_arrays(sp.random(50, 50, density=0.1, format="csr", random_state=1))
    x0, v0, m = paper_leapfrog.solar_system()
    z = np.ones(8, dtype=np.complex128)
    factories = {
        "csr_mul (a)": (
            lambda: rv.reversible(bench_sparse.csr_mul, checks=False),
            lambda: (np.zeros(50), *a, np.ones(50), 1.0),
        ),
        "csr_dot (a)": (
            lambda: rv.reversible(bench_sparse.csr_dot, checks=False),
            lambda: (0.0, *a, *a, np.zeros(100, dtype=bool)),
        ),
        "complex-log loop (b)": (
            lambda: bench_complex_log.make(False)[1],
            lambda: (np.zeros(8, dtype=np.complex128), z),
        ),
        "bennett (c)": (lambda: bench_bennett.make(False), lambda: (1.0, 0.0, 2)),
        "leapfrog (d)": (
            lambda: bench_leapfrog.make(False),
            lambda: (x0.copy(), v0.copy(), m, paper_leapfrog.G_SOLAR, 0.01, 1),
        ),
    }
    runs: dict[str, list[float]] = {}
    for name, (make, make_args) in factories.items():
        for _ in range(repeat):
            f, args = make(), make_args()
            t = time.perf_counter()
            f(*args)
            first = time.perf_counter() - t
            t = time.perf_counter()
            f(*args)
            warm = time.perf_counter() - t
            runs.setdefault(name, []).append(first - warm)
    return runs


def child(kind: str) -> None:
    t = time.perf_counter()
    import revmlir
    import revmlir.runtime.native  # noqa: F401  (what the first call imports anyway)

    imported = time.perf_counter() - t
    if kind == "first-call":
        out = first_call_minus_warm()
    elif kind == "native-compile":
        out = native_module_compile()
    else:
        out = staged_compile(kind)
    out["import revmlir"] = imported
    print(json.dumps(out))


def cold(kind: str, repeat: int) -> dict[str, list[float]]:
    runs: dict[str, list[float]] = {}
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", kind],
            check=True,
            capture_output=True,
            text=True,
        )
        for key, value in json.loads(done.stdout.strip().splitlines()[-1]).items():
            runs.setdefault(key, []).append(value)
    return runs


def show(title: str, runs: dict[str, list[float]]) -> None:
    print(f"\n## {title}")
    print(f"{'stage':<30} {'median':>11} {'min … max':>25}")
    for key, values in runs.items():
        print(
            f"{key:<30} {H.fmt_time(statistics.median(values)):>11} "
            f"{H.fmt_time(min(values)) + ' … ' + H.fmt_time(max(values)):>25}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        return child(opts.child)
    repeat = 7
    H.print_header(
        "Compile latency: the complex-log function (Listing 5), source → machine code",
        """
cold = a fresh Python process per sample (revmlir imported first, reported on
its own row); warm = the same compile repeated in one process.  Medians of 7.
Target: < 1 s from source to machine code.
""",
    )
    results = {}
    for kind, title in (
        ("first-call", "eDSL: first call − warm call (fresh process)"),
        ("native-compile", "examples/complex_log.mlir: parse + NativeModule.compile, forward only (fresh process)"),
        ("edsl", "eDSL complex_log, per stage (fresh process)"),
        ("mlir", "complex_log.mlir, per stage (fresh process)"),
    ):
        runs = cold(kind, repeat)
        show(title, runs)
        results[kind] = runs
    # warm: same process
    for kind in ("edsl", "mlir"):
        staged_compile(kind)  # initialise
        runs: dict[str, list[float]] = {}
        for _ in range(repeat):
            for key, value in staged_compile(kind).items():
                runs.setdefault(key, []).append(value)
        show(f"{'eDSL complex_log' if kind == 'edsl' else 'complex_log.mlir'}, per stage (warm, in-process)", runs)
        results[kind + "-warm"] = runs
    programs = other_programs(repeat)
    show("first call − warm call of every benchmarked program (fresh decoration, warm process)", programs)
    print("\n## target: compile latency < 1 s")
    for key, label in (
        ("first-call", "first - warm"),
        ("native-compile", "total"),
        ("edsl", "total"),
        ("mlir", "total"),
        ("edsl-warm", "total"),
    ):
        value = statistics.median(results[key][label])
        print(f"{key + ' [' + label + ']':<32} {H.fmt_time(value):>10} → {'met' if value < 1.0 else 'NOT met'}")
    for name, values in programs.items():
        value = statistics.median(values)
        print(f"{name + ' [first - warm]':<32} {H.fmt_time(value):>10} → {'met' if value < 1.0 else 'NOT met'}")


if __name__ == "__main__":
    sys.exit(main())
