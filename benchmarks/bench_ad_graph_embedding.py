"""The graph embedding loss of the NiLang paper (seed 000 appendix D.2; seed
002 table 2) on the Petersen graph, k = 1 … 10 dimensions: objective,
gradient and Hessian, ours against JAX (jit of the loss, of ``grad`` and of
``hessian``, the loss written with ``jax.numpy``) and against our own
compiled objective.

Ours: ``embedding_loss`` of examples/python/graph_embedding.py (native);
``rv.gradient`` (reverse computing); ``rv.hessian`` (forward over reverse:
one Hessian-vector product ``@f.adj.tan`` per column).

Targets (issue 5): gradient ≤ 3× our objective; faster than JAX for the
gradient and the Hessian.

Run:  .venv/bin/python benchmarks/bench_ad_graph_embedding.py [--quick] [--k 1 2 …]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

import _harness as H
import revmlir as rv
from array_references import embedding_loss_reference
from graph_embedding import PETERSEN_EDGES, PETERSEN_NON_EDGES, embedding_loss
from revmlir.ad.adjoint import generate_gradients, gradient_name
from revmlir.frontend.base.derived import derived_backend

jax.config.update("jax_enable_x64", True)

reference = partial(embedding_loss_reference, jnp, edges=PETERSEN_EDGES, non_edges=PETERSEN_NON_EDGES)
jax_loss = jax.jit(reference)
jax_gradient = jax.jit(jax.grad(reference))
jax_hessian = jax.jit(jax.hessian(reference))


def loss_arguments(x: np.ndarray) -> tuple:
    """``embedding_loss``'s arguments for the embedding ``x`` (a zero loss)."""
    return (0.0, x, PETERSEN_EDGES, PETERSEN_NON_EDGES)


def embeddings(ks: list[int]) -> Iterator[tuple[int, np.ndarray, tuple]]:
    """For each ``k``: a random embedding ``x (10, k)`` (the same ones in
    every script) and ``embedding_loss``'s arguments for it."""
    rng = np.random.default_rng(0)
    for k in ks:
        x = rng.normal(size=(10, k))
        yield k, x, loss_arguments(x)


def gradient_direct(args: tuple) -> Callable[[], None]:
    """``@embedding_loss.grad.loss0`` (the forward run and the adjoint
    seeded at the loss in one function) with pre-marshalled arguments: the
    generated code alone, plus zeroing the gradient array it fills (it
    checks that it starts at zero)."""
    spec = embedding_loss.specialization_for(*args)
    _, backend = derived_backend(spec, "gradient of #0", partial(generate_gradients, loss=0))
    shadows = [np.zeros_like(a) for a in args[1:] if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    call = H.DirectCall(backend, gradient_name(spec.name, 0), [*args, 1.0, *shadows])

    def run() -> None:
        for shadow in shadows:
            shadow.fill(0.0)
        call()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--k", nargs="*", type=int, default=list(range(1, 11)))
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 11
    H.print_header(
        "graph embedding (Petersen graph): objective, gradient, Hessian vs JAX",
        """
'ours objective' = embedding_loss(0.0, x, edges, non_edges),
'ours gradient' = rv.gradient(embedding_loss, args), 'ours hessian' =
rv.hessian(embedding_loss, args, wrt=(1,)) (10k x 10k; its columns are 10k
Hessian-vector products), all public calls of native code (argument checking
and marshalling included), runtime checks on; 'ours gradient direct' calls
the generated @embedding_loss.grad.loss0 (forward run + adjoint in one function)
with pre-marshalled arguments, 'ours objective direct' the generated
@embedding_loss the same way.  JAX: jit(loss), jit(grad(loss)),
jit(hessian(loss)), block_until_ready (JAX's dispatch included).
""",
    )
    summary = []
    for k, x, args in embeddings(opts.k):
        n = x.size

        # -- correctness first -------------------------------------------------
        assert np.isclose(embedding_loss(*args)[0], float(jax_loss(x)), rtol=1e-12)
        assert np.allclose(rv.gradient(embedding_loss, args)[1], jax_gradient(x), rtol=1e-9, atol=1e-12)
        hessian = rv.hessian(embedding_loss, args, wrt=(1,))
        assert np.allclose(hessian, np.asarray(jax_hessian(x)).reshape(n, n), rtol=1e-8, atol=1e-10)

        cands = {
            "ours objective": lambda: embedding_loss(*args),
            "ours objective direct": H.direct(embedding_loss, args),
            "ours gradient": lambda: rv.gradient(embedding_loss, args),
            "ours gradient direct": gradient_direct(args),
            "ours hessian": lambda: rv.hessian(embedding_loss, args, wrt=(1,)),
            "jax objective": lambda: jax.block_until_ready(jax_loss(x)),
            "jax gradient": lambda: jax.block_until_ready(jax_gradient(x)),
            "jax hessian": lambda: jax.block_until_ready(jax_hessian(x)),
        }
        timings = H.measure(cands, repeat=repeat, min_sample_s=0.02)
        memory = {name: H.peak_alloc(fn) for name, fn in cands.items()}
        H.report(f"k = {k} ({n} parameters)", timings, ["ours objective", "jax gradient", "jax hessian"], memory)
        summary.append((k, timings))

    print("\n## ratios (medians)")
    print(
        f"{'k':>3} {'ours G/O':>9} {'direct G/O':>11} {'ours G/JAX G':>13} {'direct G/JAX G':>15} "
        f"{'ours H/JAX H':>13} {'ours O/JAX O':>13}"
    )
    for k, t in summary:
        print(
            f"{k:>3} {t['ours gradient'].median / t['ours objective'].median:>9.2f} "
            f"{t['ours gradient direct'].median / t['ours objective direct'].median:>11.2f} "
            f"{t['ours gradient'].median / t['jax gradient'].median:>13.2f} "
            f"{t['ours gradient direct'].median / t['jax gradient'].median:>15.2f} "
            f"{t['ours hessian'].median / t['jax hessian'].median:>13.2f} "
            f"{t['ours objective'].median / t['jax objective'].median:>13.2f}"
        )
    print(f"\nmax RSS of this process: {H.max_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
