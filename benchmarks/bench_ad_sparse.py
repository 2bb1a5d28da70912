"""Gradients of the sparse products of appendix D.1 (NiLang paper): the
backward pass (``@f.adj``, reverse computing) against the forward pass, a
hand-written numba adjoint loop, and scipy's closed forms.

* csr_mul  ``y += alpha*A@x`` with the loss ``w·y``: gradients with respect
  to ``x`` (``alpha*Aᵀw``), the nonzeros of ``A`` and ``alpha``.
* csr_dot  ``r += sum(A.*B)``: gradients with respect to both matrices'
  nonzeros.

Target (issue 5): gradient time ≤ 3× our compiled objective.

Run:  .venv/bin/python benchmarks/bench_ad_sparse.py [--quick]
"""

from __future__ import annotations

import argparse

import numba
import numpy as np
import scipy.sparse as sp

import _harness as H
import revmlir as rv
from paper_sparse import csr_arrays, csr_dot, csr_mul
from revmlir.frontend.base.derived import adjoint_backend


@numba.njit(cache=False)
def nb_csr_mul_adjoint(w, data, indices, indptr, x, alpha, g_data, g_x):
    """The adjoint of ``y += alpha*A@x`` written by hand: returns ḡalpha."""
    g_alpha = 0.0
    for row in range(len(indptr) - 1):
        for j in range(indptr[row], indptr[row + 1]):
            col = indices[j]
            g_x[col] += w[row] * data[j] * alpha
            g_data[j] += w[row] * x[col] * alpha
            g_alpha += w[row] * data[j] * x[col]
    return g_alpha


@numba.njit(cache=False)
def nb_csr_dot_adjoint(a_data, a_indices, a_indptr, b_data, b_indices, b_indptr, g_a, g_b):
    """The adjoint of the two-pointer merge ``r = sum(A.*B)`` by hand."""
    for row in range(len(a_indptr) - 1):
        ia, ib = a_indptr[row], b_indptr[row]
        ea, eb = a_indptr[row + 1], b_indptr[row + 1]
        while ia < ea and ib < eb:
            ca, cb = a_indices[ia], b_indices[ib]
            if ca == cb:
                g_a[ia] += b_data[ib]
                g_b[ib] += a_data[ia]
                ia += 1
                ib += 1
            elif ca < cb:
                ia += 1
            else:
                ib += 1


def adjoint_call(function, args, cotangents) -> H.DirectCall:
    """``@f.adj`` alone, on ``f``'s outputs and fresh shadows, pre-marshalled."""
    spec = function.specialization_for(*args)
    _, backend = adjoint_backend(spec)
    outputs = function(*[np.array(a) if isinstance(a, np.ndarray) else a for a in args])
    seeds = []
    for i in spec.carrying:
        c = cotangents[i]
        if isinstance(args[i], np.ndarray):
            seeds.append(np.zeros_like(args[i]) if c is None else np.array(c, dtype=float))
        else:
            seeds.append(0.0 if c is None else float(c))
    return H.DirectCall(backend, spec.name + ".adj", [*outputs, *seeds])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--density", type=float, default=0.05)
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 15
    H.print_header(
        "gradients of the sparse products (appendix D.1): backward vs forward, numba, scipy",
        f"""
A, B: {opts.n}x{opts.n} random CSR (density {opts.density}, sorted indices).
'objective direct' / 'adjoint direct' call the generated code of csr_mul
(csr_dot) and of @csr_mul.adj (@csr_dot.adj) with pre-marshalled arguments;
'rv.vjp pullback' and 'rv.gradient' are the public calls (copies of written
arrays, fresh shadow arrays, marshalling; rv.gradient also runs f).  The
numba adjoints are hand-written loops computing the same gradients; scipy
computes them in closed form with sparse matrix products.  Ratios are
median / median (> 1 = slower).
""",
    )
    n, density = opts.n, opts.density
    A = sp.random(n, n, density=density, format="csr", random_state=1, dtype=np.float64)
    B = sp.random(n, n, density=density, format="csr", random_state=2, dtype=np.float64)
    a, b = csr_arrays(A), csr_arrays(B)
    rng = np.random.default_rng(0)
    x, w, alpha = rng.normal(size=n), rng.normal(size=n), 1.5
    rows = np.repeat(np.arange(n), np.diff(a[2]))

    # -- correctness first ---------------------------------------------------
    mul_args = (np.zeros(n), *a, x, alpha)
    _, pullback = rv.vjp(csr_mul, *mul_args)
    mul_cot = (w, None, None, None, None, None)
    g = pullback(*mul_cot)
    assert np.allclose(g[4], alpha * (A.T @ w)) and np.allclose(g[1], alpha * w[rows] * x[a[1]])
    assert np.isclose(g[5], w @ (A @ x))
    keeper = np.zeros(2 * n, dtype=bool)
    dot_args = (0.0, *a, *b, keeper)
    gd = rv.gradient(csr_dot, dot_args)
    g_a, g_b = np.zeros_like(a[0]), np.zeros_like(b[0])
    nb_csr_dot_adjoint(*a, *b, g_a, g_b)
    assert np.allclose(gd[1], g_a) and np.allclose(gd[4], g_b)
    print("checked: gradients equal the closed forms (scipy) and the hand-written numba adjoints")

    results: dict[str, dict[str, H.Timing]] = {}

    # -- csr_mul ---------------------------------------------------------------
    g_data, g_x = np.zeros_like(a[0]), np.zeros(n)
    cands = {
        "objective direct": H.direct(csr_mul, mul_args),
        "adjoint direct": adjoint_call(csr_mul, mul_args, mul_cot),
        "rv.vjp pullback": lambda: pullback(*mul_cot),
        "numba hand-written adjoint": lambda: nb_csr_mul_adjoint(w, *a, x, alpha, g_data, g_x),
        "scipy closed form": lambda: (alpha * (A.T @ w), alpha * w[rows] * x[a[1]], w @ (A @ x)),
        "scipy objective A@x": lambda: A @ x,
    }
    timings = H.measure(cands, repeat=repeat)
    memory = {k: H.peak_alloc(fn) for k, fn in cands.items()}
    H.report(
        "csr_mul: gradient of w·(y + alpha*A@x)",
        timings,
        ["objective direct", "numba hand-written adjoint", "scipy closed form"],
        memory,
        per=("nnz", A.nnz),
    )
    results["csr_mul"] = timings

    # -- csr_dot ---------------------------------------------------------------
    dot_cot = (1.0, None, None, None, None, None, None, None)
    cands = {
        "objective direct": H.direct(csr_dot, dot_args),
        "adjoint direct": adjoint_call(csr_dot, dot_args, dot_cot),
        "rv.gradient": lambda: rv.gradient(csr_dot, dot_args),
        "numba hand-written adjoint": lambda: nb_csr_dot_adjoint(*a, *b, g_a, g_b),
        "scipy closed form": lambda: (B.multiply(A != 0), A.multiply(B != 0)),
    }
    timings = H.measure(cands, repeat=repeat)
    memory = {k: H.peak_alloc(fn) for k, fn in cands.items()}
    H.report(
        "csr_dot: gradient of sum(A.*B)",
        timings,
        ["objective direct", "numba hand-written adjoint", "scipy closed form"],
        memory,
        per=("row", n),
    )
    assert not keeper.any()
    results["csr_dot"] = timings

    print("\n## target (median ratios): the gradient of the sparse dot within 3x its objective")
    t = results["csr_dot"]
    print("csr_dot: adjoint direct vs objective direct" + H.verdict(t["adjoint direct"], t["objective direct"], 3.0))
    t = results["csr_mul"]
    ratio = t["adjoint direct"].median / t["objective direct"].median
    reference = t["numba hand-written adjoint"].median / t["objective direct"].median
    print(
        f"(csr_mul, not a target: adjoint direct {ratio:.2f}x its objective, a hand-written "
        f"numba adjoint {reference:.2f}x: scattering gradients costs more than gathering)"
    )
    print(f"\nmax RSS of this process: {H.max_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
