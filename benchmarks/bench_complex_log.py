"""(b) The complex-log instruction y[i] += log(x[i]) in a loop over 10^6
elements (NiLang paper, section 3.2, Listing 5): |x| is computed into an
ancilla, used, and uncomputed — against numba (and numpy for reference).

Two reversible forms are timed:

* ``call``   — ``complex_log(y[i], x[i])``: the loop calls Listing 5 (the
  function of examples/python/paper_basics.py, redefined here so that its
  checks follow ``checks=``) on the array elements, NiLang's
  ``(:+=)(log)(y[i], x[i])``;
* ``routine`` — the same instruction written inline with compute–copy–
  uncompute: ``with rv.routine(): n += abs(x[i])``, ``y[i] += complex(log(n),
  phase(x[i]))``, ``~r``.

x and y are arrays, so no work can be hoisted out of the loop on either side.

Run:  .venv/bin/python benchmarks/bench_complex_log.py [--quick] [--n N]
"""

from __future__ import annotations

import argparse
import cmath
import math
import sys

import numba
import numpy as np

import _harness as H
import revmlir as rv
from paper_basics import complex_log as paper_complex_log


def make(checks: bool):
    """The two reversible loops with run-time checks on or off throughout."""

    @rv.reversible(checks=checks)
    def complex_log(y: complex, x: complex):
        n = rv.ancilla(0.0)
        n += abs(x)
        y.real += math.log(n)
        y.imag += cmath.phase(x)
        n -= abs(x)
        rv.free(n)

    @rv.reversible(checks=checks)
    def log_call(y, x):
        for i in range(len(x)):
            complex_log(y[i], x[i])

    @rv.reversible(checks=checks)
    def log_routine(y, x):
        for i in range(len(x)):
            with rv.routine() as r:
                n = rv.ancilla(0.0)
                n += abs(x[i])
            y[i] += complex(math.log(n), cmath.phase(x[i]))
            ~r  # noqa: B018 - the eDSL's uncompute statement

    return complex_log, log_call, log_routine


@numba.njit(cache=False)
def nb_log(y, x):
    for i in range(len(x)):
        y[i] += complex(math.log(abs(x[i])), cmath.phase(x[i]))


@numba.njit(cache=False)
def nb_log_inv(y, x):
    for i in range(len(x)):
        y[i] -= complex(math.log(abs(x[i])), cmath.phase(x[i]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=10**6)
    opts = parser.parse_args()
    n = opts.n
    repeat = 7 if opts.quick else 11
    H.print_header(
        "(b) complex log in a loop: y[i] += log(x[i]), |x[i]| in an ancilla (Listing 5)",
        f"""
{n} complex128 elements, x ~ N(0,1) + i N(0,1).  Calls are the public eDSL
call f(*args) (its ~0.2 ms argument marshalling is < 1% here; 'direct' rows
call the machine code alone).  numba: the ordinary loop
y[i] += complex(log(abs(x[i])), phase(x[i])).  numpy: y += np.log(x).
""",
    )
    rng = np.random.default_rng(0)
    x = rng.normal(size=n) + 1j * rng.normal(size=n)
    y = np.zeros(n, dtype=np.complex128)
    variants = {mode: make(mode == "off") for mode in ("off", "on")}
    variants = {"off": make(False), "on": make(True)}

    # -- correctness -----------------------------------------------------------------
    expected = np.log(x)
    for mode, (single, log_call, log_routine) in variants.items():
        assert single(0j, 3 - 4j)[0] == paper_complex_log(0j, 3 - 4j)[0]
        for f in (log_call, log_routine):
            y[:] = 0
            f(y, x)
            assert np.allclose(y, expected), (mode, f.__name__)
            (~f)(y, x)
            assert np.allclose(y, 0, atol=1e-12), (mode, f.__name__)
    y[:] = 0
    nb_log(y, x)
    assert np.allclose(y, expected)
    nb_log_inv(y, x)
    print("checked: results equal numpy's log (and paper_basics.complex_log), inverses restore y")

    results = {}
    for backward in (False, True):
        cands: dict[str, object] = {}
        for mode, (_single, log_call, log_routine) in variants.items():
            for label, f in (("call", log_call), ("routine", log_routine)):
                g = ~f if backward else f
                cands[f"rev {label:<7} checks={mode}"] = lambda g=g: g(y, x)
        cands["rev call    checks=off direct"] = H.direct(variants["off"][1], (y, x), backward)
        cands["numba loop"] = (lambda: nb_log_inv(y, x)) if backward else (lambda: nb_log(y, x))
        cands["numpy y ∓= np.log(x)"] = (lambda: y.__isub__(np.log(x))) if backward else (lambda: y.__iadd__(np.log(x)))
        timings = H.measure(cands, repeat=repeat, warmup=1, min_sample_s=0.0)
        memory = {k: H.peak_alloc(fn) for k, fn in cands.items()}
        label = "inverse" if backward else "forward"
        H.report(f"complex log, {label}", timings, ["numba loop", "numpy y ∓= np.log(x)"], memory, per=("element", n))
        results[label] = timings

    print("\n## targets (median ratio to the numba loop)")
    for label, timings in results.items():
        for variant in ("call", "routine"):
            for mode, target in (("off", 1.2), ("on", 2.0)):
                print(
                    f"{label:<8} {variant:<8} checks={mode:<3}"
                    + H.verdict(timings[f"rev {variant:<7} checks={mode}"], timings["numba loop"], target)
                )
    print(f"\nmax RSS of this process: {H.max_rss_mib():.0f} MiB")
    ir_evidence(variants, y, x)


def ir_evidence(variants, y, x) -> None:
    """Count the libm calls left in the -O3 inner loops (see RESULTS.md)."""
    print("\n## optimized LLVM IR: libm calls per element in the -O3 loop body")
    for mode, (_s, log_call, log_routine) in variants.items():
        for f in (log_call, log_routine):
            spec = f.specialization_for(y, x)
            for name in (spec.name, spec.name + ".inv"):
                body = H.function_body(H.optimized_ir(H.compiled_ir(spec.native, name)), name)
                counts = {c: H.count_calls(body, c) for c in ("hypot", "atan2", "llvm.log.f64", "log")}
                print(
                    f"checks={mode:<3} @{name:<16} "
                    + ", ".join(f"{c}: {k}" for c, k in counts.items() if k)
                    + f"; vectorized: {H.has_vector_ops(body)}"
                )
    decl = [
        l
        for l in H.optimized_ir(variants["off"][1].specialization_for(y, x).native.llvm_ir).splitlines()
        if l.startswith("declare") and ("hypot" in l or "atan2" in l)
    ]
    attrs = [
        l
        for l in H.optimized_ir(variants["off"][1].specialization_for(y, x).native.llvm_ir).splitlines()
        if l.startswith("attributes #0")
    ]
    print("\n".join(decl + attrs))
    ir = next(iter(nb_log.inspect_llvm().values()))
    print(f"numba loop: hypot calls: {H.count_calls(ir, 'hypot')}, atan2 calls: {H.count_calls(ir, 'atan2')}")


if __name__ == "__main__":
    sys.exit(main())
