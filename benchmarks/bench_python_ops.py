"""What Python's semantics cost in native code: float ``%`` and ``//``
(CPython's ``float_divmod``, docs/design.md decision 153), ``math.hypot``
(libm's, not ``sqrt(a² + b²)``) and recursive calls (each counted against
the 10 000-call bound both engines share, decision 152), each beside numba
running the same Python in the same run.  numba also follows CPython for
``%``, ``//`` and ``hypot``; its recursion has no bound.  A plain ``+``
loop and a plain ``sqrt(a² + b²)`` loop are the floor each is compared
against.  Every pair is checked to give the same result.

Run:  .venv/bin/python benchmarks/bench_python_ops.py [--quick]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

import _harness as H
import revmlir as rv


@rv.ordinary
def sum_remainders(x, d):
    s = 0.0
    for i in range(len(x)):
        s += x[i] % d
    return s


@numba.njit(cache=False)
def sum_remainders_numba(x, d):
    s = 0.0
    for i in range(len(x)):
        s += x[i] % d
    return s


@rv.ordinary
def sum_quotients(x, d):
    s = 0.0
    for i in range(len(x)):
        s += x[i] // d
    return s


@numba.njit(cache=False)
def sum_quotients_numba(x, d):
    s = 0.0
    for i in range(len(x)):
        s += x[i] // d
    return s


@rv.ordinary
def sum_plain(x, d):
    """The floor: one float operation an element, as cheap as it gets."""
    s = 0.0
    for i in range(len(x)):
        s += x[i] + d
    return s


@rv.ordinary
def sum_hypot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += math.hypot(x[i], y[i])
    return s


@numba.njit(cache=False)
def sum_hypot_numba(x, y):
    s = 0.0
    for i in range(len(x)):
        s += math.hypot(x[i], y[i])
    return s


@rv.ordinary
def sum_norms(x, y):
    """The floor of ``hypot``: ``sqrt(a² + b²)``, which overflows where
    ``hypot`` does not."""
    s = 0.0
    for i in range(len(x)):
        s += math.sqrt(x[i] * x[i] + y[i] * y[i])
    return s


@rv.ordinary
def fib(n):
    r = n
    if n >= 2:
        r = fib(n - 1) + fib(n - 2)
    return r


@numba.njit(cache=False)
def fib_numba(n):
    r = n
    if n >= 2:
        r = fib_numba(n - 1) + fib_numba(n - 2)
    return r


def checked(ours: Callable[[], Any], theirs: Callable[[], Any]) -> None:
    """The two give the same result, to the last bit for these sums in the
    same order (a different libm's ``hypot`` may differ in the last place)."""
    a, b = ours(), theirs()
    assert math.isclose(a, b, rel_tol=1e-13), (a, b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^5 elements and fib(20) instead of 10^6 and fib(25)")
    quick = parser.parse_args().quick
    n, depth = (100_000, 20) if quick else (1_000_000, 25)
    H.print_header("Python's semantics in native code: %, //, hypot, recursion", __doc__ or "")
    rng = np.random.default_rng(0)
    x, y, d = rng.uniform(-100.0, 100.0, n), rng.uniform(-100.0, 100.0, n), 0.7
    pairs: dict[str, tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any]]] = {
        "x % d": (lambda: sum_remainders(x, d), lambda: sum_remainders_numba(x, d), lambda: sum_plain(x, d)),
        "x // d": (lambda: sum_quotients(x, d), lambda: sum_quotients_numba(x, d), lambda: sum_plain(x, d)),
        "math.hypot(x, y)": (lambda: sum_hypot(x, y), lambda: sum_hypot_numba(x, y), lambda: sum_norms(x, y)),
    }
    for title, (ours, theirs, floor) in pairs.items():
        checked(ours, theirs)
        timings = H.measure({"ours (native)": ours, "numba": theirs, "ours, the floor": floor})
        H.report(f"Σ {title}, n = {n:,}", timings, ["numba", "ours, the floor"], per=("element", n))
    calls = 2 * fib_numba(depth + 1) - 1
    checked(lambda: fib(depth), lambda: fib_numba(depth))
    timings = H.measure({"ours (native)": lambda: fib(depth), "numba": lambda: fib_numba(depth)})
    H.report(f"fib({depth}), {calls:,} recursive calls", timings, ["numba"], per=("call", calls))


if __name__ == "__main__":
    main()
