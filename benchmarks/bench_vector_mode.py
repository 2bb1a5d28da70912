"""Vector-mode tangents (``@f.tanL``: L directional derivatives per run) and
adjoints (``@f.adjL``: L cotangents per backward run) on the graph embedding
loss (Petersen graph, seed 000 appendix D.2): how the number of lanes
changes the whole forward Jacobian (``rv.jacobian``, ``@f.jacobian``), the
whole reverse-mode Jacobian (``rv.jacobian(mode="reverse")``,
``pullback.batch``) and the whole Hessian (``rv.hessian``, ``@f.hessian``),
and what one run of each derived function costs, against JAX's ``jacfwd``
and ``hessian`` of the same loss measured in the same run.

This is how ``rv.jacobian``'s and ``rv.hessian``'s lane counts
(``revmlir.frontend.derivatives.jacobian.JACOBIAN_LANES``, ``REVERSE_JACOBIAN_LANES``,
``revmlir.frontend.derivatives.forward.HESSIAN_LANES``) were chosen.

Run:  .venv/bin/python benchmarks/bench_vector_mode.py [--quick] [--k 5 10]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial

import jax
import numpy as np

import _harness as H
import revmlir as rv
from bench_ad_graph_embedding import embeddings, jax_hessian, reference
from graph_embedding import embedding_loss
from revmlir.ad.tangent import generate_hvps, generate_tangents, hvp_name, tangent_name
from revmlir.frontend.base.derived import derived_backend

jax.config.update("jax_enable_x64", True)

LANES = (1, 2, 4, 8)
forward = sys.modules["revmlir.frontend.derivatives.forward"]
jacobian = sys.modules["revmlir.frontend.derivatives.jacobian"]


def with_lanes(module: object, setting: str, lanes: int, call):  # noqa: ANN001, ANN202
    """``call`` with the module's lane count set to ``lanes``."""

    def run():  # noqa: ANN202
        saved = getattr(module, setting)
        setattr(module, setting, lanes)
        try:
            return call()
        finally:
            setattr(module, setting, saved)

    return run


def derived_runs(args: tuple, lanes: int) -> dict[str, Callable[[], None]]:
    """One run of ``@f.tanL`` and of ``@f.hvpL.loss0`` (what ``rv.hessian``
    runs) with pre-marshalled arguments (zero tangents: the cost does not
    depend on them); the hvp's gradient array is zeroed before each run, as
    it checks."""
    spec = embedding_loss.specialization_for(*args)
    generate = partial(generate_hvps, lanes=lanes, loss=0)
    _, backend = derived_backend(spec, f"hvp of #0, {lanes} lanes", generate)
    x = args[1]

    def shadows() -> list:
        return [np.zeros_like(x)]

    tangent = [*args, *(a for _ in range(lanes) for a in (0.0, *shadows()))]
    gradients = shadows()
    hvp = [*args, 1.0, *gradients, *(a for _ in range(lanes) for a in (0.0, *shadows(), 0.0, *shadows()))]
    name = spec.name
    hvp_call = H.DirectCall(backend, hvp_name(name, lanes, loss=0), hvp)

    def run_hvp() -> None:
        for gradient in gradients:
            gradient.fill(0.0)
        hvp_call()

    _, tangents = derived_backend(spec, f"tangent, {lanes} lanes", partial(generate_tangents, lanes=lanes))
    return {
        f"@f.tan{lanes if lanes > 1 else ''} run": H.DirectCall(tangents, tangent_name(name, lanes), tangent),
        f"@f.hvp{lanes if lanes > 1 else ''} run": run_hvp,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--k", nargs="*", type=int, default=[5, 10])
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 11
    H.print_header(
        "vector-mode tangents: lanes per run, forward Jacobian and Hessian of the graph embedding loss",
        """
'jacobian L' = rv.jacobian(embedding_loss, args, mode="forward") with L lanes
(all 1 + 10k + 45 float entries, one native call of @f.jacobian running
@f.tanL and its inverse per L columns); 'reverse jacobian L' the same matrix
with mode="reverse" (pullback.batch: one @f.adjL call per L rows); 'hessian L' = rv.hessian(embedding_loss,
args, wrt=(1,)) with L lanes (10k x 10k, @f.hvpL per L columns); '@f.tanL run'
and '@f.hvpL run' = one call of the derived function (@f.hvpL.loss0), pre-marshalled (per run,
not per column).  JAX: jit(jacfwd(loss)) over x and jit(hessian(loss)),
block_until_ready.  First calls (compilation, from a cold cache when
REVMLIR_CACHE=0) are printed before the timings.
""",
    )
    summary = []
    for k, x, args in embeddings(opts.k):
        n = x.size
        jax_jacfwd = jax.jit(jax.jacfwd(reference))
        expected_hessian = np.asarray(jax_hessian(x)).reshape(n, n)
        expected_gradient = np.asarray(jax_jacfwd(x)).ravel()
        cands: dict = {}
        for lanes in LANES:
            run_jacobian = with_lanes(
                jacobian, "JACOBIAN_LANES", lanes, lambda: rv.jacobian(embedding_loss, args, mode="forward")
            )
            run_hessian = with_lanes(
                forward, "HESSIAN_LANES", lanes, lambda: rv.hessian(embedding_loss, args, wrt=(1,))
            )
            run_reverse = with_lanes(
                jacobian, "REVERSE_JACOBIAN_LANES", lanes, lambda: rv.jacobian(embedding_loss, args, mode="reverse")
            )
            start = time.perf_counter()
            J = run_jacobian()
            middle = time.perf_counter()
            Hm = run_hessian()
            print(
                f"k = {k}, {lanes} lane(s): first calls {middle - start:.2f} s (jacobian), "
                f"{time.perf_counter() - middle:.2f} s (hessian)"
            )
            # correctness first: row 0 of the Jacobian is the loss's gradient after the call
            assert np.allclose(J[0, 1 : 1 + n], expected_gradient, rtol=1e-9, atol=1e-12)
            assert np.allclose(Hm, expected_hessian, rtol=1e-8, atol=1e-10)
            assert np.allclose(run_reverse(), J, rtol=1e-10, atol=1e-12)
            cands[f"jacobian {lanes}"] = run_jacobian
            cands[f"reverse jacobian {lanes}"] = run_reverse
            cands[f"hessian {lanes}"] = run_hessian
            cands.update(derived_runs(args, lanes))
        cands["jax jacfwd"] = lambda: jax.block_until_ready(jax_jacfwd(x))
        cands["jax hessian"] = lambda: jax.block_until_ready(jax_hessian(x))
        timings = H.measure(cands, repeat=repeat, min_sample_s=0.02)
        H.report(f"k = {k} ({n} parameters)", timings, ["jacobian 1", "hessian 1", "jax hessian"])
        summary.append((k, timings))

    print("\n## per column (medians), and the whole matrix against JAX")
    print(
        f"{'k':>3} {'lanes':>5} {'jacobian/col':>13} {'reverse/row':>12} {'hessian/col':>12} {'tan run/lane':>13} "
        f"{'hvp run/lane':>13} {'hessian ÷ JAX':>14}"
    )
    for k, t in summary:
        n = 10 * k
        for lanes in LANES:
            suffix = str(lanes) if lanes > 1 else ""
            print(
                f"{k:>3} {lanes:>5} {H.fmt_time(t[f'jacobian {lanes}'].median / (n + 46)):>13} "
                f"{H.fmt_time(t[f'reverse jacobian {lanes}'].median / (n + 46)):>12} "
                f"{H.fmt_time(t[f'hessian {lanes}'].median / n):>12} "
                f"{H.fmt_time(t[f'@f.tan{suffix} run'].median / lanes):>13} "
                f"{H.fmt_time(t[f'@f.hvp{suffix} run'].median / lanes):>13} "
                f"{t[f'hessian {lanes}'].median / t['jax hessian'].median:>13.2f}×"
            )
    print(f"\nmax RSS of this process: {H.max_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
