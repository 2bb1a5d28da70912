"""ADBench bundle adjustment (ba1–ba3): the objective (reprojection and
weight residuals of every observation) and the per-observation Jacobian
blocks (2 × 15 and 1 × 1), ours against JAX ``jit(vmap(jacrev))`` of the
same residual written with ``jax.numpy``.

Ours: ``ba_objective`` and ``ba_jacobian`` of examples/python/adbench_ba.py,
native; the Jacobian program calls the two-lane adjoint
``@compute_reproj_error.adj2`` once per observation (``rv.adjoint(…,
lanes=2)``: both rows of the block), so the whole Jacobian is one native
call.

Targets (issue 5): faster than JAX on the BA Jacobians; Jacobian/objective
ratio ≤ the NiLang paper's (seed 002, table 4: 6.1–6.9).

Run:  .venv/bin/python benchmarks/bench_ad_ba.py [--quick] [--files ba1 ba2 ba3]
"""

from __future__ import annotations

import argparse
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

import _harness as H
from adbench_ba import ba_jacobian, ba_objective
from adbench_data import read_ba
from array_references import reproj_reference

jax.config.update("jax_enable_x64", True)

FILES = {
    "ba1": "ba/ba1_n49_m7776_p31843.txt",
    "ba2": "ba/ba2_n21_m11315_p36455.txt",
    "ba3": "ba/ba3_n161_m48126_p182072.txt",
}
NILANG_RATIO = {"ba1": 1.651e-02 / 2.708e-03, "ba2": 1.182e-01 / 1.757e-02, "ba3": 1.668e-01 / 2.438e-02}
"""Seed 002, table 4: NiLang-J / NiLang-O for 3.18e4, 2.04e5, 2.87e5 measurements
(the table's first three columns; ba2 and ba3 are not the table's exact sizes,
the ratio is nearly constant across them)."""


def jax_objective(cams, X, w, feats):
    return reproj_reference(jnp, cams, X, w, feats), 1.0 - w * w


jax_objective_jit = jax.jit(jax_objective)
jax_jacobian = jax.jit(jax.vmap(jax.jacrev(partial(reproj_reference, jnp), argnums=(0, 1, 2))))
jax_weight_jacobian = jax.jit(jax.vmap(jax.grad(lambda w: 1.0 - w * w)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--files", nargs="*", choices=sorted(FILES), default=sorted(FILES))
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 11
    H.print_header(
        "ADBench BA: objective and per-observation Jacobian blocks vs JAX",
        """
'ours objective' = ba_objective(reproj_err, w_err, cams, X, w, obs, feats),
'ours jacobian' = ba_jacobian(J, wJ, …) (all 2x15 and 1x1 blocks), both the
public f(*args) call of native code (runtime checks on); the Jacobian
arrays are zeroed before each call (they receive the blocks by swaps), as
JAX allocates and fills its outputs.  JAX: jit of the
residuals gathered per observation (cams[obs[:,0]], X[obs[:,1]]: the gather is
done once, outside the timing) and jit(vmap(jacrev)) of the reprojection
residual + vmap(grad) of the weight residual, block_until_ready.
""",
    )
    summary = []
    for label in opts.files:
        problem = read_ba(FILES[label])
        p = len(problem.w)
        reproj_err, w_err = np.zeros((p, 2)), np.zeros(p)
        J, wJ = np.zeros((p, 2, 15)), np.zeros(p)
        shadows = [
            np.zeros_like(problem.cams),
            np.zeros_like(problem.X),
            np.zeros_like(problem.cams),
            np.zeros_like(problem.X),
        ]
        objective_args = (reproj_err, w_err, problem.cams, problem.X, problem.w, problem.obs, problem.feats)
        jacobian_args = (J, wJ, problem.cams, problem.X, problem.w, problem.obs, problem.feats, *shadows)
        cams, X = problem.cams[problem.obs[:, 0]], problem.X[problem.obs[:, 1]]

        # -- correctness first -------------------------------------------------
        ba_objective(*objective_args)
        expected = jax_objective_jit(cams, X, problem.w, problem.feats)
        assert np.allclose(reproj_err, expected[0], rtol=1e-10) and np.allclose(w_err, expected[1])
        ba_jacobian(*jacobian_args)
        blocks = jax_jacobian(cams, X, problem.w, problem.feats)
        reference = np.concatenate([blocks[0], blocks[1], np.asarray(blocks[2])[..., None]], axis=-1)
        assert np.allclose(J, reference, rtol=1e-10, atol=1e-10 * np.abs(reference).max())
        assert np.allclose(wJ, jax_weight_jacobian(problem.w)) and not any(s.any() for s in shadows)
        print(f"\n{label}: n={len(problem.cams)} m={len(problem.X)} p={p}; checked: residuals and blocks equal JAX's")

        cands = {
            "ours objective": lambda: ba_objective(*objective_args),
            "ours jacobian": lambda: (J.fill(0.0), wJ.fill(0.0), ba_jacobian(*jacobian_args)),
            "jax objective": lambda: jax.block_until_ready(jax_objective_jit(cams, X, problem.w, problem.feats)),
            "jax jacobian": lambda: jax.block_until_ready(
                (jax_jacobian(cams, X, problem.w, problem.feats), jax_weight_jacobian(problem.w))
            ),
        }
        timings = H.measure(cands, repeat=repeat, warmup=1, min_sample_s=0.05)
        memory = {k: H.peak_alloc(fn) for k, fn in cands.items()}
        H.report(f"{label} ({p} observations)", timings, ["ours objective", "jax jacobian"], memory, per=("obs", p))
        summary.append((label, timings))

    print("\n## targets (median ratios)")
    for label, t in summary:
        ratio = t["ours jacobian"].median / t["ours objective"].median
        print(
            f"{label}: ours J/O = {ratio:.2f}  (NiLang paper J/O = {NILANG_RATIO[label]:.2f})"
            f"  → {'met' if ratio <= NILANG_RATIO[label] else 'NOT met'}"
        )
        print(f"{label}: ours jacobian vs jax jacobian" + H.verdict(t["ours jacobian"], t["jax jacobian"], 1.0))
    print(f"\nmax RSS of this process: {H.max_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
