"""A graph-embedding batch on the GPU: the pair distances of the graph
embedding loss (``graph_embedding.py``) for a large batch of vertex pairs,
one pair per thread, and their gradient with respect to the embedding.

Each iteration copies its pair's two rows of ``x`` into an ancilla array of
its own and measures that: a call in a parallel loop may read a shared array
whole, but its adjoint would then write the whole gradient array, which
another iteration may write too (the parallel rule rejects it).  With the
copy, the callee's gradient stays private, and the adjoint of the copy
turns each read of ``x[a, j]`` into a shared accumulation
``g_x[a, j] += …`` in the loop itself, which the GPU makes atomic (pairs
share vertices).  Called directly, the functions run on the CPU.
"""

import numpy as np

import revmlir as rv
from graph_embedding import distance


@rv.reversible
def batch_distances(dist, x, pairs):
    """``dist[i] += ‖x[pairs[i, 0]] − x[pairs[i, 1]]‖`` for every pair."""
    for i in rv.prange(len(dist)):
        with rv.routine() as r:
            ends = rv.zeros((2, x.shape[1]))
            for j in range(x.shape[1]):
                ends[0, j] += x[pairs[i, 0], j]
                ends[1, j] += x[pairs[i, 1], j]
        distance(dist[i], ends, 0, 1)
        ~r


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
