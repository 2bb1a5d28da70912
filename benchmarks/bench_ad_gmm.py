"""ADBench Gaussian mixture model: the objective and its gradient, ours
against JAX ``jit(value_and_grad)`` of the same objective written with
``jax.numpy`` and against a plain (irreversible) numba loop nest computing
the objective as ADBench's C++ does.

Ours: ``gmm_objective`` of examples/python/adbench_gmm.py (native), and
``rv.gradient`` of it (``@gmm_objective.grad.loss0``: reverse computing, no
tape).

Targets (issue 5): gradient/objective ratio ≤ the NiLang paper's (seed 002,
table 3, by parameter count); the ratio to JAX is stated per size.

Run:  .venv/bin/python benchmarks/bench_ad_gmm.py [--quick] [--files 1k/gmm_d2_K5 …]
"""

from __future__ import annotations

import argparse
import math
from functools import partial

import jax
import jax.numpy as jnp
import numba
import numpy as np

import _harness as H
import revmlir as rv
from adbench_data import DATA_DIR, read_gmm
from adbench_gmm import gmm_objective
from array_references import gmm_reference

jax.config.update("jax_enable_x64", True)

NILANG = {  # parameters → (NiLang-O, NiLang-G) in seconds, seed 002 table 3 (10k points)
    30: (3.655e-03, 9.102e-03),
    330: (1.425e-02, 3.709e-02),
    1200: (1.040e-01, 2.830e-01),
    3300: (1.389e-01, 3.556e-01),
    10700: (7.388e-02, 6.652e-01),
    21500: (1.491e-01, 1.449e00),
    53600: (4.176e-01, 3.590e00),
    429000: (5.462e00, 3.342e01),
}


def nilang_ratio(parameters: int) -> tuple[int, float]:
    """The paper's G/O ratio at the column nearest in parameter count."""
    nearest = min(NILANG, key=lambda p: abs(math.log(p / parameters)))
    objective, gradient = NILANG[nearest]
    return nearest, gradient / objective


@numba.njit(cache=False, fastmath=False)
def numba_objective(alphas, means, icf, x, gamma, m):
    """ADBench's gmm_objective (gmm.h), the plain loop nest."""
    n, d = x.shape
    k = alphas.shape[0]
    qdiags = np.exp(icf[:, :d])
    sum_qs = np.sum(icf[:, :d], axis=1)
    main_term = np.empty(k)
    xcentered = np.empty(d)
    qx = np.empty(d)
    slse = 0.0
    for ix in range(n):
        for ik in range(k):
            for j in range(d):
                xcentered[j] = x[ix, j] - means[ik, j]
            for j in range(d):
                qx[j] = qdiags[ik, j] * xcentered[j]
            l = d
            for i in range(d):
                for j in range(i + 1, d):
                    qx[j] += icf[ik, l] * xcentered[i]
                    l += 1
            sq = 0.0
            for j in range(d):
                sq += qx[j] * qx[j]
            main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sq
        top = main_term.max()
        slse += math.log(np.sum(np.exp(main_term - top))) + top
    top = alphas.max()
    lse_alphas = math.log(np.sum(np.exp(alphas - top))) + top
    n_w = d + m + 1
    log_gamma_d = 0.25 * d * (d - 1) * math.log(math.pi)
    for j in range(1, d + 1):
        log_gamma_d += math.lgamma(0.5 * n_w + 0.5 * (1 - j))
    constant = n_w * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_gamma_d
    prior = 0.0
    for ik in range(k):
        frobenius = np.sum(qdiags[ik] ** 2) + np.sum(icf[ik, d:] ** 2)
        prior += 0.5 * gamma * gamma * frobenius - m * sum_qs[ik]
    prior -= k * constant
    return -0.5 * n * d * math.log(2 * math.pi) + slse - n * lse_alphas + prior


jax_objective = jax.jit(partial(gmm_reference, jnp), static_argnums=5)
jax_value_and_grad = jax.jit(jax.value_and_grad(partial(gmm_reference, jnp), argnums=(0, 1, 2)), static_argnums=5)


def available() -> list[str]:
    return sorted(str(p.relative_to(DATA_DIR / "gmm").with_suffix("")) for p in (DATA_DIR / "gmm").glob("*/gmm_*.txt"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--files", nargs="*", help="e.g. 1k/gmm_d2_K5 (default: every file in the data folder)")
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 9
    files = opts.files or available()
    H.print_header(
        "ADBench GMM: objective and gradient vs JAX and a plain numba objective",
        """
'ours objective' = gmm_objective(0.0, alphas, means, icf, x, gamma, m),
'ours gradient' = rv.gradient(gmm_objective, args) (forward run + adjoint,
gradients of every float argument, the points x included), both public calls
of native code, runtime checks on.  JAX: jit(objective) and
jit(value_and_grad w.r.t. alphas, means, icf), block_until_ready.  numba: the
objective as ADBench's C++ loop nest.  NiLang G/O: seed 002 table 3 at the
nearest parameter count.
""",
    )
    summary = []
    for name in files:
        problem = read_gmm(f"gmm/{name}.txt")
        args = (0.0, problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m)
        inputs = (problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m)
        parameters = problem.alphas.size + problem.means.size + problem.icf.size

        # -- correctness first -------------------------------------------------
        value = gmm_objective(*args)[0]
        reference = float(jax_objective(*inputs))
        assert math.isclose(value, reference, rel_tol=1e-10), (value, reference)
        assert math.isclose(numba_objective(*inputs), reference, rel_tol=1e-10)
        gradient = rv.gradient(gmm_objective, args)
        _, expected = jax_value_and_grad(*inputs)
        for found, want in zip(gradient[1:4], expected):
            assert np.allclose(found, want, rtol=1e-8, atol=1e-8 * np.abs(want).max())
        print(
            f"\n{name}: d={problem.d} k={problem.k} n={problem.n}, {parameters} parameters; "
            "checked: objective and gradient equal JAX's"
        )

        cands = {
            "ours objective": lambda: gmm_objective(*args),
            "ours gradient": lambda: rv.gradient(gmm_objective, args),
            "numba objective": lambda: numba_objective(*inputs),
            "jax objective": lambda: jax.block_until_ready(jax_objective(*inputs)),
            "jax value_and_grad": lambda: jax.block_until_ready(jax_value_and_grad(*inputs)),
        }
        timings = H.measure(cands, repeat=repeat, warmup=1, min_sample_s=0.05)
        memory = {k: H.peak_alloc(fn) for k, fn in cands.items()}
        H.report(name, timings, ["ours objective", "numba objective", "jax value_and_grad"], memory)
        summary.append((name, parameters, timings))

    print("\n## ratios (medians)")
    print(
        f"{'file':<18} {'params':>7} {'ours G/O':>9} {'NiLang G/O':>11} {'met':>4} "
        f"{'ours O/numba O':>15} {'ours G/JAX G':>13} {'JAX G/O':>8}"
    )
    for name, parameters, t in summary:
        ours = t["ours gradient"].median / t["ours objective"].median
        nearest, paper = nilang_ratio(parameters)
        print(
            f"{name:<18} {parameters:>7} {ours:>9.2f} {paper:>8.2f} @{nearest:<6} {'yes' if ours <= paper else 'no':>3} "
            f"{t['ours objective'].median / t['numba objective'].median:>15.2f} "
            f"{t['ours gradient'].median / t['jax value_and_grad'].median:>13.2f} "
            f"{t['jax value_and_grad'].median / t['jax objective'].median:>8.2f}"
        )
    print(f"\nmax RSS of this process: {H.max_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
