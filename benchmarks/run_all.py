"""Run every benchmark, one fresh Python process each, and print (and
optionally save) their reports.

    .venv/bin/python benchmarks/run_all.py               # all, full settings
    .venv/bin/python benchmarks/run_all.py --quick       # fewer samples, smaller (b) what-if
    .venv/bin/python benchmarks/run_all.py --only sparse bennett
    .venv/bin/python benchmarks/run_all.py --log benchmarks/last_run.txt

Exit status: non-zero if any benchmark failed (a failed correctness check
included).  Timings are never asserted: whether a target is met is reported.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = {
    "sparse": "bench_sparse.py",  # (a)
    "complex_log": "bench_complex_log.py",  # (b)
    "bennett": "bench_bennett.py",  # (c)
    "leapfrog": "bench_leapfrog.py",  # (d)
    "compile": "bench_compile.py",  # compile latency
    "both_ways": "bench_both_ways.py",  # what the first ~f after f compiles
    "call_overhead": "bench_call_overhead.py",  # the fixed cost of f(*args)
    "python_ops": "bench_python_ops.py",  # float %, //, hypot and recursion beside numba
    "ad_sparse": "bench_ad_sparse.py",  # gradients of (a)
    "ad_graph_embedding": "bench_ad_graph_embedding.py",
    "ad_gmm": "bench_ad_gmm.py",
    "ad_ba": "bench_ad_ba.py",
    "checkpoint": "bench_checkpoint.py",  # checkpointed gradients vs steps (issue 6)
    "checkpoint_anywhere": "bench_checkpoint_anywhere.py",  # seed 001's rotations vs l (issue 22)
    "step_cost": "bench_step_cost.py",  # checkpointed gradients ÷ primal, per schedule (issue 22)
    "vector_mode": "bench_vector_mode.py",  # lanes per run: forward Jacobian and Hessian
    "interop": "bench_interop.py",  # rv.to_jax / rv.to_torch per-call cost
    "inverse": "bench_inverse.py",  # J⁻¹·v and J⁻ᵀ·w against J·v and Jᵀ·w (issue 20)
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    parser.add_argument("--only", nargs="*", choices=sorted(BENCHMARKS), help="run only these")
    parser.add_argument("--log", type=Path, help="also write the combined output to this file")
    opts = parser.parse_args()
    names = opts.only or list(BENCHMARKS)
    log = opts.log.open("w") if opts.log else None
    failed = []
    for name in names:
        command = [sys.executable, str(HERE / BENCHMARKS[name]), *(["--quick"] if opts.quick else [])]
        start = time.perf_counter()
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=HERE.parent
        )
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            if log:
                log.write(line)
        code = process.wait()
        footer = f"\n[{BENCHMARKS[name]}: exit {code}, {time.perf_counter() - start:.1f} s wall]\n\n"
        sys.stdout.write(footer)
        if log:
            log.write(footer)
        if code:
            failed.append(name)
    if log:
        log.close()
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
