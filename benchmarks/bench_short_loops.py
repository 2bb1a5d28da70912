"""Short loops of straight code (docs/design.md decision 129): a function
that fills an 8-element ancilla array from each element of ``x``, adds it
into ``y`` and uncomputes it, natively (the public call), beside numba
running the same loops in the same run.  Before decision 129 every
iteration of the two 8-iteration loops counted towards the Ctrl-C poll,
which kept LLVM from unrolling and vectorising them; run the script under
two revisions (``PYTHONPATH`` pointing at each) to compare.

Run:  .venv/bin/python benchmarks/bench_short_loops.py [--quick]
"""

from __future__ import annotations

import argparse

import numba
import numpy as np

import _harness as H
import revmlir as rv


@rv.reversible
def fill_and_sum(y, x):
    """``y[i] += Σ_j x[i]·j`` over an ancilla array filled and uncomputed."""
    for i in range(len(x)):
        with rv.routine() as r:
            a = rv.zeros(8)
            for j in range(8):
                a[j] += x[i] * j
        for j in range(8):
            y[i] += a[j]
        ~r


@numba.njit(cache=False)
def fill_and_sum_numba(y, x):
    a = np.zeros(8)
    for i in range(len(x)):
        for j in range(8):
            a[j] = x[i] * j
        for j in range(8):
            y[i] += a[j]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^5 elements instead of 2·10^6")
    n = 100_000 if parser.parse_args().quick else 2_000_000
    H.print_header("Short loops of straight code (decision 129)", __doc__ or "")
    x = np.random.default_rng(0).uniform(size=n)
    ours, theirs = np.zeros(n), np.zeros(n)
    fill_and_sum(ours, x)
    fill_and_sum_numba(theirs, x)
    assert np.allclose(ours, theirs, rtol=1e-12)
    timings = H.measure(
        {"ours (native, f(*args))": lambda: fill_and_sum(ours, x), "numba": lambda: fill_and_sum_numba(theirs, x)}
    )
    H.report(f"fill and sum 8 per element, n = {n:,}", timings, ["numba"], per=("element", n))


if __name__ == "__main__":
    main()
