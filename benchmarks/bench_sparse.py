"""(a) Sparse CSR matrix–vector product and Frobenius dot (NiLang paper,
appendix D.1) at 1000 × 1000, density 0.05, forward and inverse, against
scipy.sparse and numba loops doing the same computation.

Run:  .venv/bin/python benchmarks/bench_sparse.py [--quick]
"""

from __future__ import annotations

import argparse
import sys

import numba
import numpy as np
import scipy.sparse as sp

import _harness as H
import revmlir as rv
from paper_sparse import csr_arrays
from paper_sparse import csr_dot as paper_csr_dot
from paper_sparse import csr_mul as paper_csr_mul

# ---------------------------------------------------------------------------
# The reversible programs: the bodies of examples/python/paper_sparse.py
# without the `with rv.nocheck():` wrapper, so that `checks=` decides.
# ---------------------------------------------------------------------------


def csr_mul(y, data, indices, indptr, x, alpha):
    for row in range(len(indptr) - 1):
        for j in range(indptr[row], indptr[row + 1]):
            y[row] += data[j] * x[indices[j]] * alpha


def csr_dot(r, a_data, a_indices, a_indptr, b_data, b_indices, b_indptr, branch_keeper):
    for row in range(len(a_indptr) - 1):
        ia1 = rv.ancilla(a_indptr[row])
        ib1 = rv.ancilla(b_indptr[row])
        ia2 = rv.ancilla(a_indptr[row + 1])
        ib2 = rv.ancilla(b_indptr[row + 1])
        if ia2 > ia1 and ib2 > ib1:
            ia = rv.ancilla(ia1)
            ib = rv.ancilla(ib1)
            for i in range(ia2 - ia1 + ib2 - ib1 - 1):
                ra = rv.ancilla(a_indices[ia])
                rb = rv.ancilla(b_indices[ib])
                if ra == rb:
                    r += np.conj(a_data[ia]) * b_data[ib]
                branch_keeper[i] ^= ia == ia2 - 1 or (ib != ib2 - 1 and ra > rb)
                rv.free(ra, a_indices[ia])
                rv.free(rb, b_indices[ib])
                if branch_keeper[i]:
                    rv.inc(ib)
                else:
                    rv.inc(ia)
            with rv.inverse():
                for i in range(ia2 - ia1 + ib2 - ib1 - 1):
                    branch_keeper[i] ^= ia == ia2 - 1 or (ib != ib2 - 1 and a_indices[ia] > b_indices[ib])
                    if branch_keeper[i]:
                        rv.inc(ib)
                    else:
                        rv.inc(ia)
            rv.free(ia, ia1)
            rv.free(ib, ib1)
        rv.free(ib2, b_indptr[row + 1])
        rv.free(ia2, a_indptr[row + 1])
        rv.free(ib1, b_indptr[row])
        rv.free(ia1, a_indptr[row])


REV = {
    "off": (rv.reversible(csr_mul, checks=False), rv.reversible(csr_dot, checks=False)),
    "on": (rv.reversible(csr_mul, checks=True), rv.reversible(csr_dot, checks=True)),
}

# ---------------------------------------------------------------------------
# numba baselines
# ---------------------------------------------------------------------------


@numba.njit(cache=False)
def nb_csr_mul(y, data, indices, indptr, x, alpha):
    for row in range(len(indptr) - 1):
        for j in range(indptr[row], indptr[row + 1]):
            y[row] += data[j] * x[indices[j]] * alpha


@numba.njit(cache=False)
def nb_csr_mul_inv(y, data, indices, indptr, x, alpha):
    for row in range(len(indptr) - 1):
        for j in range(indptr[row], indptr[row + 1]):
            y[row] -= data[j] * x[indices[j]] * alpha


@numba.njit(cache=False)
def nb_csr_dot(sign, a_data, a_indices, a_indptr, b_data, b_indices, b_indptr):
    """The ordinary two-pointer merge: sign * sum(A .* B)."""
    r = 0.0
    for row in range(len(a_indptr) - 1):
        ia, ib = a_indptr[row], b_indptr[row]
        ea, eb = a_indptr[row + 1], b_indptr[row + 1]
        while ia < ea and ib < eb:
            ca, cb = a_indices[ia], b_indices[ib]
            if ca == cb:
                r += a_data[ia] * b_data[ib]
                ia += 1
                ib += 1
            elif ca < cb:
                ia += 1
            else:
                ib += 1
    return sign * r


@numba.njit(cache=False)
def nb_csr_dot_schedule(sign, a_data, a_indices, a_indptr, b_data, b_indices, b_indptr, keeper):
    """The same schedule as the reversible csr_dot: per row a merge of
    na + nb - 1 steps that records its direction in ``keeper`` and then the
    merge walked back, clearing ``keeper`` (what ``rv.inverse`` does)."""
    r = 0.0
    for row in range(len(a_indptr) - 1):
        ia1, ib1 = a_indptr[row], b_indptr[row]
        ia2, ib2 = a_indptr[row + 1], b_indptr[row + 1]
        if ia2 > ia1 and ib2 > ib1:
            ia, ib = ia1, ib1
            steps = ia2 - ia1 + ib2 - ib1 - 1
            for i in range(steps):
                ra, rb = a_indices[ia], b_indices[ib]
                if ra == rb:
                    r += sign * a_data[ia] * b_data[ib]
                keeper[i] ^= ia == ia2 - 1 or (ib != ib2 - 1 and ra > rb)
                if keeper[i]:
                    ib += 1
                else:
                    ia += 1
            for i in range(steps - 1, -1, -1):
                if keeper[i]:
                    ib -= 1
                else:
                    ia -= 1
                keeper[i] ^= ia == ia2 - 1 or (ib != ib2 - 1 and a_indices[ia] > b_indices[ib])
    return r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--density", type=float, default=0.05)
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 15
    H.print_header(
        "(a) sparse CSR: y += alpha*A@x (csr_mul) and r += sum(A.*B) (csr_dot), appendix D.1",
        f"""
A, B: {opts.n}x{opts.n} random CSR (scipy.sparse.random, density {opts.density},
sorted int32 indices); x random.  'f(*args)' is the public eDSL call (argument
checking and marshalling included); 'direct' calls the same machine code with
pre-marshalled arguments (benchmarks/_harness.py:DirectCall), i.e. the
generated code alone.  numba loops are the same loops compiled by numba.
Ratios are median / median of the baseline column (> 1 = slower).
""",
    )
    n, density = opts.n, opts.density
    A = sp.random(n, n, density=density, format="csr", random_state=1, dtype=np.float64)
    B = sp.random(n, n, density=density, format="csr", random_state=2, dtype=np.float64)
    a, b = csr_arrays(A), csr_arrays(B)
    x = np.random.default_rng(0).normal(size=n)
    alpha = 1.5
    print(f"nnz(A) = {A.nnz}, nnz(B) = {B.nnz}, nnz(A.*B) = {A.multiply(B).nnz}")

    # -- correctness first ---------------------------------------------------
    for mode, (mul, dot) in REV.items():
        y = np.zeros(n)
        mul(y, *a, x, alpha)
        assert np.allclose(y, alpha * (A @ x)), mode
        (~mul)(y, *a, x, alpha)
        assert np.allclose(y, 0.0, atol=1e-12), mode
        keeper = np.zeros(2 * n, dtype=bool)
        r = dot(0.0, *a, *b, keeper)[0]
        assert np.isclose(r, A.multiply(B).sum()) and not keeper.any(), mode
        r = (~dot)(r, *a, *b, keeper)[0]
        assert abs(r) < 1e-9 and not keeper.any(), mode
    y_paper = paper_csr_mul(np.zeros(n), *a, x, alpha)[0]
    y_ours = REV["off"][0](np.zeros(n), *a, x, alpha)[0]
    assert np.array_equal(y_paper, y_ours)
    keeper = np.zeros(2 * n, dtype=bool)
    assert paper_csr_dot(0.0, *a, *b, keeper)[0] == REV["off"][1](0.0, *a, *b, keeper)[0]
    assert np.isclose(nb_csr_dot(1.0, *a, *b), A.multiply(B).sum())
    assert np.isclose(nb_csr_dot_schedule(1.0, *a, *b, keeper), A.multiply(B).sum()) and not keeper.any()
    print("checked: results equal scipy (and examples/python/paper_sparse.py), inverses restore the inputs")

    results: dict[str, dict[str, H.Timing]] = {}

    # -- csr_mul ---------------------------------------------------------------
    y = np.zeros(n)
    mul_args = (y, *a, x, alpha)
    for backward in (False, True):
        cands: dict[str, object] = {}
        for mode, (mul, _dot) in REV.items():
            f = ~mul if backward else mul
            cands[f"rev checks={mode}  f(*args)"] = lambda f=f: f(*mul_args)
            cands[f"rev checks={mode}  direct"] = H.direct(mul, mul_args, backward)
        nb = nb_csr_mul_inv if backward else nb_csr_mul
        cands["numba loop"] = lambda nb=nb: nb(*mul_args)
        if backward:
            cands["scipy  y -= alpha*(A@x)"] = lambda: y.__isub__(alpha * (A @ x))
        else:
            cands["scipy  y += alpha*(A@x)"] = lambda: y.__iadd__(alpha * (A @ x))
        timings = H.measure(cands, repeat=repeat)
        memory = {k: H.peak_alloc(fn) for k, fn in cands.items()}
        label = "inverse (~csr_mul)" if backward else "forward (csr_mul)"
        H.report(
            f"csr_mul {label}",
            timings,
            ["numba loop", next(k for k in cands if k.startswith("scipy"))],
            memory,
            per=("nnz", A.nnz),
        )
        results[label] = timings

    # -- csr_dot ---------------------------------------------------------------
    keeper = np.zeros(2 * n, dtype=bool)
    dot_args = (0.0, *a, *b, keeper)
    for backward in (False, True):
        sign = -1.0 if backward else 1.0
        cands = {}
        for mode, (_mul, dot) in REV.items():
            f = ~dot if backward else dot
            cands[f"rev checks={mode}  f(*args)"] = lambda f=f: f(*dot_args)
            cands[f"rev checks={mode}  direct"] = H.direct(dot, dot_args, backward)
        cands["numba merge"] = lambda sign=sign: nb_csr_dot(sign, *a, *b)
        cands["numba same schedule"] = lambda sign=sign: nb_csr_dot_schedule(sign, *a, *b, keeper)
        cands["scipy A.multiply(B).sum()"] = lambda sign=sign: sign * A.multiply(B).sum()
        timings = H.measure(cands, repeat=repeat)
        memory = {k: H.peak_alloc(fn) for k, fn in cands.items()}
        label = "inverse (~csr_dot)" if backward else "forward (csr_dot)"
        H.report(
            f"csr_dot {label}",
            timings,
            ["numba merge", "numba same schedule", "scipy A.multiply(B).sum()"],
            memory,
            per=("row", n),
        )
        assert not keeper.any()
        results[label] = timings

    # -- targets ---------------------------------------------------------------
    print("\n## targets (median ratios; 'direct' = generated code, 'f(*args)' = public call)")
    for label, timings in results.items():
        bases = ["numba loop"] if "mul" in label else ["numba same schedule", "numba merge"]
        for base in bases:
            for mode, target in (("off", 1.2), ("on", 2.0)):
                for how in ("direct", "f(*args)"):
                    print(
                        f"{label:<20} checks={mode:<3} {how:<8} vs {base:<19}"
                        + H.verdict(timings[f"rev checks={mode}  {how}"], timings[base], target)
                    )
    print(f"\nmax RSS of this process: {H.max_rss_mib():.0f} MiB")
    _ir_notes(mul_args, dot_args)


def _ir_notes(mul_args: tuple, dot_args: tuple) -> None:
    """What -O3 made of the inner loops (evidence for RESULTS.md)."""
    print("\n## optimized LLVM IR (checks=off)")
    for f, args in ((REV["off"][0], mul_args), (REV["off"][1], dot_args)):
        spec = f.specialization_for(*args)
        ir = H.optimized_ir(spec.native.llvm_ir)
        body = H.function_body(ir, spec.name)
        loads = sum(1 for line in body.splitlines() if " load " in line)
        stores = sum(1 for line in body.splitlines() if " store " in line)
        print(
            f"@{spec.name}: {len(body.splitlines())} lines, {loads} loads, {stores} stores, "
            f"vectorized: {H.has_vector_ops(body)}"
        )


if __name__ == "__main__":
    sys.exit(main())
