"""The fixed cost of calling a compiled reversible function from Python,
beside numba's dispatcher, with where the time goes.

Small problems (the 1000×1000 CSR product of bench_sparse.py runs in ~20 µs)
are dominated by it.  Rows:

* ``f(*args)``           — the public call = specialization_for + run;
* ``specialization_for`` — finding the compiled specialization for the
                           arguments (a cache keyed on Python types);
* ``Specialization.run`` — picking the native caller, then the caller:
* ``native caller``      — one pass that checks each argument and stores it
                           in a reused frame (ctypes storage, array
                           descriptors, error slot), the native call, the
                           scalars read back;
* ``signature_of``       — the xDSL type signature, computed only when a new
                           combination of Python types is seen (shown because
                           it was on every call before that cache existed);
* ``direct``             — the machine code alone (benchmarks/_harness.py);
* ``numba dispatch``     — a numba function with the same arguments and a
                           trivial body.

Then the calls that go through more of the frontend, each beside the
plain call of the same function: a struct argument (a dataclass of two
floats, flattened on every call), ``rv.jvp`` (whose tangents are checked
and named per argument) and a pullback of ``rv.vjp``.

Run:  .venv/bin/python benchmarks/bench_call_overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numba
import numpy as np

import _harness as H
import revmlir as rv


def six_arrays(y, a, b, c, d, alpha):
    y[0] += alpha


def three_scalars(y, a, b):
    y += a * b


@dataclass
class Pair:
    a: float
    b: float


def pair_scalars(y, p: Pair):
    y += p.a * p.b


@numba.njit(cache=False)
def nb_six_arrays(y, a, b, c, d, alpha):
    y[0] += alpha


@numba.njit(cache=False)
def nb_three_scalars(y, a, b):
    return y + a * b, a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    H.print_header("Call overhead: public eDSL call vs machine code vs numba dispatch", __doc__.split("Run:")[0])
    arrays = (np.zeros(1000), np.zeros(100), np.zeros(100, dtype=np.int32), np.zeros(10, dtype=np.int32), np.zeros(5))
    cases = {
        "5 arrays + 1 float (csr_mul's signature)": (six_arrays, nb_six_arrays, (*arrays, 1.0)),
        "3 floats (multiplier)": (three_scalars, nb_three_scalars, (2.0, 3.0, 5.0)),
    }
    for title, (src, nb, args) in cases.items():
        f = rv.reversible(src, checks=False)
        f(*args)
        nb(*args)
        spec = f.specialization_for(*args)
        caller = spec.native.caller(spec.name, backward=False)
        cands = {
            "f(*args)": lambda f=f, args=args: f(*args),
            "  specialization_for(*args)": lambda f=f, args=args: f.specialization_for(*args),
            "  Specialization.run(args)": lambda spec=spec, args=args: spec.run(args, backward=False),
            "    native caller(args)": lambda run=caller, args=args: run(args),
            "signature_of (new types only)": lambda f=f, args=args: f.signature_of(args),
            "direct (machine code)": H.direct(f, args),
            "numba dispatch": lambda nb=nb, args=args: nb(*args),
        }
        timings = H.measure(cands, repeat=7 if opts.quick else 11, min_sample_s=0.01)
        H.report(title, timings, ["numba dispatch"])
    plain, pair = rv.reversible(three_scalars, checks=False), rv.reversible(pair_scalars, checks=False)
    scalars, struct = (2.0, 3.0, 5.0), (2.0, Pair(3.0, 5.0))
    _, pullback = rv.vjp(plain, *scalars)
    frontend = {
        "f(*args), 3 floats": lambda: plain(*scalars),
        "f(*args), a float and a struct of 2": lambda: pair(*struct),
        "rv.jvp(f, args, tangents), 3 floats": lambda: rv.jvp(plain, scalars, (1.0, 0.0, 0.0)),
        "pullback(cotangents), 3 floats": lambda: pullback(1.0, 0.0, 0.0),
    }
    timings = H.measure(frontend, repeat=7 if opts.quick else 11, min_sample_s=0.01)
    H.report("Through the frontend: structs and derivatives", timings, ["f(*args), 3 floats"])


if __name__ == "__main__":
    sys.exit(main())
