"""The cost of one step in checkpointed gradients of ordinary code, ÷ the
compiled primal's: seed 001's rotations example (``examples/python/rotations.py``,
``n = 1000``) under store-all, bisection and binomial (k = 4, at primitive
steps), and a fine-grained program checkpointed with ``checkpoint=`` (a loop
of ``n`` calls of a 32-point relaxation sweep: about ``32 n`` primitive steps
of one element update each, made resumable).

CPU time per call (``time.process_time``), the least of a few samples after
one warm-up call (which compiles).  Every gradient is checked: the
rotations' against the exact ``x₀`` (to 10⁻⁸, as the checkpoint-anywhere
benchmark does up to l = 809), the relaxation's against its store-all
gradient (to 10⁻¹²).

``--unannotated L…`` measures instead seed 001's rotations with no
annotation (``checkpoint="bisection"``, with each ``base`` of ``--bases``:
1024 and 4096 unless given; ``auto`` is the default base) beside the primal
and the marked bisection, at the given ``l``; with ``--paired N``, N paired
samples of the primal and each gradient instead, reported as medians of
their ratios (``paired_row``).

Run:  .venv/bin/python benchmarks/bench_step_cost.py [--quick | --unannotated L… [--bases B…] [--paired N]]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

import revmlir as rv

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "python"))
import rotations as R  # noqa: E402

SCHEDULES = {"store-all": R.rotations, "bisection": R.rotations_bisection, "binomial": R.rotations_work}
"""The rotations' gradients by schedule: Bennett's tape of the unmarked
program, and bisection and binomial (k = 4) at primitive steps
(``split="work"``)."""


@rv.ordinary
def relax_sweep(u):
    """One Gauss–Seidel sweep of a 32-point relaxation: 30 steps."""
    for k in range(1, 31):
        u[k] = 0.5 * u[k] + 0.25 * (u[k - 1] + u[k + 1])


@rv.ordinary
def relaxation(u, n):
    s = 0.0
    for t in range(n):
        relax_sweep(u)
        s += u[16]
    return s


def cpu(call: Callable[[], object], samples: int) -> float:
    """The least CPU time of ``samples`` calls, after one warm-up call."""
    call()
    best = float("inf")
    for _ in range(samples):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def rotations_row(l: int, samples: int) -> None:
    x0 = R.seed_state()
    primal = cpu(lambda: R.rotations(x0.copy(), l, R.PHI), max(samples, 5))
    cells = [f"primal {primal * 1e3:.3g} ms"]
    for name, f in SCHEDULES.items():
        gradient = rv.gradient(f, (x0.copy(), l, R.PHI))[0]
        if l <= 809:
            assert R.relative_error(gradient, x0) <= 1e-8, (name, l)
        seconds = cpu(lambda: rv.gradient(f, (x0.copy(), l, R.PHI)), samples)
        cells.append(f"{name} {seconds * 1e3:.3g} ms ({seconds / primal:.1f}x)")
    print(f"rotations l = {l:5d} (W = {sum(R.durations(l, R.PHI))}): " + ", ".join(cells), flush=True)


def unannotated_row(l: int, bases: list[str]) -> None:
    """The unannotated rotations' bisection gradient (``checkpoint=``,
    make-resumable) for each ``base``, beside the primal and the marked
    bisection, in one process; one sample from l = 1601 on."""
    x0 = R.seed_state()
    samples = 1 if l >= 1601 else 3
    primal = cpu(lambda: R.rotations(x0.copy(), l, R.PHI), 5 if l >= 1601 else 9)
    cells = [f"primal {primal * 1e3:.3g} ms"]
    for base in bases:
        options = {"checkpoint": "bisection", "base": base if base == "auto" else int(base)}
        gradient = rv.gradient(R.rotations, (x0.copy(), l, R.PHI), **options)[0]
        if l <= 809:
            assert R.relative_error(gradient, x0) <= 1e-8, (base, l)
        seconds = cpu(lambda: rv.gradient(R.rotations, (x0.copy(), l, R.PHI), **options), samples)
        cells.append(f"bisection base={base} {seconds * 1e3:.4g} ms ({seconds / primal:.1f}x)")
    seconds = cpu(lambda: rv.gradient(R.rotations_bisection, (x0.copy(), l, R.PHI)), samples)
    cells.append(f"marked {seconds * 1e3:.4g} ms ({seconds / primal:.1f}x)")
    print(
        f"rotations l = {l:5d}, log2(segments) = {np.log2(R.segments(l, R.PHI)):.1f}: " + ", ".join(cells), flush=True
    )


def paired_row(l: int, base: str, samples: int) -> None:
    """``samples`` pairs of (the least of two primal calls, one unannotated
    bisection gradient with ``base``), CPU time: the median of the
    per-sample ratios and their range, robust to a loaded machine (run
    two trees side by side to compare them under the same load)."""
    x0 = R.seed_state()
    options = {"checkpoint": "bisection", "base": base if base == "auto" else int(base)}
    gradient = rv.gradient(R.rotations, (x0.copy(), l, R.PHI), **options)[0]
    if l <= 809:
        assert R.relative_error(gradient, x0) <= 1e-8, (base, l)
    ratios = []
    for _ in range(samples):
        primal = cpu(lambda: R.rotations(x0.copy(), l, R.PHI), 2)
        ratios.append(cpu(lambda: rv.gradient(R.rotations, (x0.copy(), l, R.PHI), **options), 1) / primal)
    print(
        f"rotations l = {l:5d}, bisection base={base}, {samples} samples: median "
        f"{statistics.median(ratios):.1f}x the primal ({min(ratios):.1f}-{max(ratios):.1f})",
        flush=True,
    )


def relaxation_row(n: int, samples: int) -> None:
    u0 = np.linspace(0.0, 1.0, 32) ** 2
    primal = cpu(lambda: relaxation(u0.copy(), n), max(samples, 20))
    reference = rv.gradient(relaxation, (u0.copy(), n))[0]
    cells = [f"primal {primal * 1e6:.3g} µs"]
    for policy in ({"checkpoint": "bisection"}, {"checkpoint": "bisection", "base": 16}):
        gradient = rv.gradient(relaxation, (u0.copy(), n), **policy)[0]
        np.testing.assert_allclose(gradient, reference, rtol=1e-12, atol=1e-15)
        seconds = cpu(lambda: rv.gradient(relaxation, (u0.copy(), n), **policy), samples)
        label = "bisection" + (f", base={policy['base']}" if "base" in policy else "")
        cells.append(f"{label} {seconds * 1e3:.3g} ms ({seconds / primal:.0f}x)")
    print(f"relaxation n = {n:5d} (~{30 * n} steps): " + ", ".join(cells), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="l = 53 and n = 100 only")
    parser.add_argument(
        "--unannotated",
        type=int,
        nargs="+",
        metavar="L",
        help="only the unannotated bisection gradient at these l (base 1024 and 4096)",
    )
    parser.add_argument("--bases", nargs="+", default=["1024", "4096"], help="with --unannotated: integers or auto")
    parser.add_argument("--paired", type=int, metavar="N", help="with --unannotated: N paired samples, medians")
    options = parser.parse_args()
    if options.unannotated:
        for l in options.unannotated:
            if options.paired:
                for base in options.bases:
                    paired_row(l, base, options.paired)
            else:
                unannotated_row(l, options.bases)
        return 0
    for l in (53,) if options.quick else (53, 401, 3203):
        rotations_row(l, 1 if l > 1000 else 3)
    for n in (100,) if options.quick else (100, 1000):
        relaxation_row(n, 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
