"""A graph-embedding batch on the GPU: the pair distances of the graph
embedding loss (``graph_embedding.py``) for a large batch of vertex pairs,
one pair per thread, and their gradient with respect to the embedding.

Each iteration calls ``distance`` on the shared embedding ``x`` whole.
The adjoint of that call only accumulates into the gradient ``g_x`` (pairs
share vertices, so iterations accumulate into the same rows): the parallel
rule admits a callee that only accumulates into an array, and the compiler
makes those accumulations atomic in the callee (``memref.atomic_rmw``, f64
atomics on the GPU).  Called directly, the functions run on the CPU.
"""

import numpy as np

import revmlir as rv
from graph_embedding import distance


@rv.reversible
def batch_distances(dist, x, pairs):
    """``dist[i] += ‖x[pairs[i, 0]] − x[pairs[i, 1]]‖`` for every pair."""
    for i in rv.prange(len(dist)):
        distance(dist[i], x, pairs[i, 0], pairs[i, 1])


def random_batch(vertices: int, k: int, pairs: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """An embedding ``(vertices, k)`` and ``pairs`` distinct-vertex pairs."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(vertices, k))
    a = rng.integers(0, vertices, pairs)
    b = (a + rng.integers(1, vertices, pairs)) % vertices
    return x, np.stack([a, b], axis=1).astype(np.int64)


if __name__ == "__main__":
    from gpu_elementwise import run

    x, pairs = random_batch(10_000, 8, 1_000_000)
    dist = np.zeros(len(pairs))
    run(batch_distances, dist, x, pairs)
    expected = np.linalg.norm(x[pairs[:, 0]] - x[pairs[:, 1]], axis=1)
    print("distances: max error", np.max(np.abs(dist - expected)))
    g_dist, g_x = np.ones(len(pairs)), np.zeros_like(x)
    run(rv.adjoint(batch_distances), dist, x, pairs, g_dist, g_x)
    print("gradient of the summed distances: ‖g_x‖ =", np.linalg.norm(g_x))
