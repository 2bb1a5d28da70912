"""(d) The reversible leapfrog integrator for the N-body problem (NiLang
paper, appendix F; examples/python/paper_leapfrog.py), forward and inverse
over many steps, against a numba leapfrog with the same arithmetic.

Cases: the Sun–Jupiter–Saturn system of the example (3 bodies, 20 000 steps)
and a random 16-body cluster (400 steps), so that both the per-step overhead
and the pair-interaction kernel are seen.

Run:  .venv/bin/python benchmarks/bench_leapfrog.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys

import numba
import numpy as np

import _harness as H
import paper_leapfrog
import revmlir as rv


def make(checks: bool):
    """examples/python/paper_leapfrog.py (Listing 25 form) without the
    ``with rv.nocheck():`` in ``acceleration``, ``checks=`` on every function."""

    @rv.reversible(checks=checks)
    def acceleration(v, x, m, i, j, G, dt):
        with rv.routine() as r:
            d = rv.ancilla(0.0)
            anc1 = rv.ancilla(0.0)
            anc2 = rv.ancilla(0.0)
            anc3 = rv.ancilla(0.0)
            anc4 = rv.ancilla(0.0)
            rc0 = rv.ancilla(0.0)
            rc1 = rv.ancilla(0.0)
            rc2 = rv.ancilla(0.0)
            d += (x[i, 0] - x[j, 0]) ** 2 + (x[i, 1] - x[j, 1]) ** 2 + (x[i, 2] - x[j, 2]) ** 2
            anc1 += math.sqrt(d)
            anc2 += anc1**3
            anc3 += G * m[j]
            anc4 += anc3 / anc2
            rc0 += x[j, 0] - x[i, 0]
            rc1 += x[j, 1] - x[i, 1]
            rc2 += x[j, 2] - x[i, 2]
        v[i, 0] += anc4 * rc0 * dt
        v[i, 1] += anc4 * rc1 * dt
        v[i, 2] += anc4 * rc2 * dt
        ~r  # noqa: B018 - the eDSL's uncompute statement

    @rv.reversible(checks=checks)
    def kick(v, x, m, G, dt):
        for i in range(x.shape[0]):
            for j in range(x.shape[0]):
                if j != i:
                    acceleration(v, x, m, i, j, G, dt)

    @rv.reversible(checks=checks)
    def drift(x, v, dt):
        for i in range(x.shape[0]):
            for k in range(3):
                x[i, k] += v[i, k] * dt

    @rv.reversible(checks=checks)
    def leapfrog(x, v, m, G, dt, nsteps):
        kick(v, x, m, G, dt / 2)
        for step in range(nsteps):
            drift(x, v, dt)
            kick(v, x, m, G, dt)

    return leapfrog


@numba.njit(cache=False)
def nb_kick(v, x, m, G, h):
    n = x.shape[0]
    for i in range(n):
        for j in range(n):
            if j != i:
                d = (x[i, 0] - x[j, 0]) ** 2 + (x[i, 1] - x[j, 1]) ** 2 + (x[i, 2] - x[j, 2]) ** 2
                r = math.sqrt(d)
                a = G * m[j] / (r * r * r)
                v[i, 0] += a * (x[j, 0] - x[i, 0]) * h
                v[i, 1] += a * (x[j, 1] - x[i, 1]) * h
                v[i, 2] += a * (x[j, 2] - x[i, 2]) * h


@numba.njit(cache=False)
def nb_drift(x, v, dt):
    for i in range(x.shape[0]):
        for k in range(3):
            x[i, k] += v[i, k] * dt


@numba.njit(cache=False)
def nb_leapfrog(x, v, m, G, dt, nsteps):
    nb_kick(v, x, m, G, dt / 2)
    for _ in range(nsteps):
        nb_drift(x, v, dt)
        nb_kick(v, x, m, G, dt)


@numba.njit(cache=False)
def nb_leapfrog_inv(x, v, m, G, dt, nsteps):
    for _ in range(nsteps):
        nb_kick(v, x, m, G, -dt)
        nb_drift(x, v, -dt)
    nb_kick(v, x, m, G, -dt / 2)


def cluster(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return rng.normal(size=(n, 3)) * 10.0, rng.normal(size=(n, 3)) * 0.1, rng.uniform(0.5, 1.5, size=n) * 1e-3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 11
    H.print_header(
        "(d) reversible leapfrog (appendix F) vs a numba leapfrog",
        """
'rev checks=…' = the example's program with checks= on every function (the
example's own `with rv.nocheck()` removed); 'paper_leapfrog.leapfrog' = the
example as published (acceleration under rv.nocheck, kick/drift/leapfrog
checked).  'f(*args)' = public eDSL call (includes ~0.2 ms of marshalling);
'direct' = machine code alone.  numba: the same kick–drift–kick arithmetic.
Inverse = (~leapfrog) vs a numba leapfrog run with -dt in reverse order.
""",
    )
    variants = {"off": make(False), "on": make(True)}
    cases = [
        ("solar system, 3 bodies", *paper_leapfrog.solar_system(), paper_leapfrog.G_SOLAR, 0.01, 20_000),
        ("cluster, 16 bodies", *cluster(16), 1.0, 0.01, 400),
    ]
    summary = []
    for title, x0, v0, m, G, dt, nsteps in cases:
        # -- correctness: same trajectory as the example and as numba ------------------
        x, v = x0.copy(), v0.copy()
        paper_leapfrog.leapfrog(x, v, m, G, dt, 100)
        xr, _vr = paper_leapfrog.leapfrog_regular(x0, v0, m, G, dt, 100)
        xn, vn = x0.copy(), v0.copy()
        nb_leapfrog(xn, vn, m, G, dt, 100)
        for mode, f in variants.items():
            xf, vf = x0.copy(), v0.copy()
            f(xf, vf, m, G, dt, 100)
            assert np.array_equal(xf, x) and np.array_equal(vf, v), mode
            (~f)(xf, vf, m, G, dt, 100)
            assert np.allclose(xf, x0, atol=1e-9) and np.allclose(vf, v0, atol=1e-9), mode
        assert np.allclose(xn, xr, atol=1e-10, rtol=1e-10) and np.allclose(x, xr, atol=1e-10, rtol=1e-10)
        interactions = nsteps * len(m) * (len(m) - 1)
        for backward in (False, True):
            x, v = x0.copy(), v0.copy()
            args = (x, v, m, G, dt, nsteps)
            cands: dict[str, object] = {}
            for mode, f in variants.items():
                g = ~f if backward else f
                cands[f"rev checks={mode}  f(*args)"] = lambda g=g, args=args: g(*args)
                cands[f"rev checks={mode}  direct"] = H.direct(f, args, backward)
            paper = ~paper_leapfrog.leapfrog if backward else paper_leapfrog.leapfrog
            cands["paper_leapfrog.leapfrog f(*args)"] = lambda paper=paper, args=args: paper(*args)
            nb = nb_leapfrog_inv if backward else nb_leapfrog
            cands["numba leapfrog"] = lambda nb=nb, args=args: nb(*args)
            timings = H.measure(cands, repeat=repeat, warmup=1, min_sample_s=0.01)
            memory = {k: H.peak_alloc(fn) for k, fn in cands.items()}
            label = f"{title}, {nsteps} steps, {'inverse' if backward else 'forward'}"
            H.report(label, timings, ["numba leapfrog"], memory, per=("pair", interactions))
            for mode in ("off", "on"):
                for how in ("direct", "f(*args)"):
                    summary.append((label, mode, how, timings[f"rev checks={mode}  {how}"], timings["numba leapfrog"]))
    print("\n## targets (median ratio to numba: ≤ 1.2× checks off, ≤ 2× checks on)")
    for label, mode, how, ours, base in summary:
        print(f"{label:<48} checks={mode:<3} {how:<8}" + H.verdict(ours, base, 1.2 if mode == "off" else 2.0))
    ir_evidence(variants, cases[0])
    print(f"\nmax RSS of this process: {H.max_rss_mib():.0f} MiB")


def ir_evidence(variants, case) -> None:
    print("\n## optimized LLVM IR: is @acceleration inlined into @kick, and what is in it")
    _, x0, v0, m, G, dt, nsteps = case
    for mode, f in [*variants.items(), ("paper", paper_leapfrog.leapfrog)]:
        spec = f.specialization_for(x0, v0, m, G, dt, nsteps)
        irs = {name: H.optimized_ir(H.compiled_ir(spec.native, name)) for name in ("kick", "kick.inv")}
        for name in ("kick", "kick.inv"):
            body = H.function_body(irs[name], name)
            calls = H.count_calls(body, "acceleration") + H.count_calls(body, "acceleration.inv")
            print(f"{mode:<5} @{name:<9}: calls to @acceleration(.inv) per pair: {calls}")
        for name in ("acceleration", "acceleration.inv"):
            body = H.function_body(irs["kick.inv" if name.endswith(".inv") else "kick"], name)
            if not body:
                continue
            print(
                f"{mode:<5} @{name:<16}: {len(body.splitlines())} lines, sqrt: {body.count('call double @llvm.sqrt')}, "
                f"fdiv: {body.count(' fdiv ')}, anc.free tolerance checks: {body.count('llvm.maximum.f64') // 2}, "
                f"error-slot loads: {body.count('load i64')}, returns a struct: {body.startswith('define {')}"
            )


if __name__ == "__main__":
    sys.exit(main())
