"""The graph embedding loss of the NiLang paper (seed 000, appendix D.2,
equation 7) as a reversible program.

Vertices of a graph are embedded as points ``x[v]`` of a ``k``-dimensional
Euclidean space so that connected vertices (the pair set ``L1``) are at one
distance and disconnected ones (``L2``) at another, larger one::

    L = Var(dist(L1)) + Var(dist(L2)) + exp(relu(mean dist(L1) − mean dist(L2) + 0.1)) − 1

``Var`` is the sample variance (divided by ``|L| − 1``, Julia's
``Statistics.var``, which the paper's benchmark uses) and ``dist`` the
Euclidean distance.  The paper's graph is the Petersen graph (10 vertices,
15 edges; ``PETERSEN_EDGES``, 0-based, and its 30 ``PETERSEN_NON_EDGES``);
``x`` is ``(vertices, k)``, one row per vertex (the paper's Julia code
stores the transpose).

The reversible formulation: the pair distances go into ancilla arrays
(``dist1``, ``dist2``: ``rv.zeros``, freed holding zeros again, up to
rounding), each distance from a squared distance held in an ancilla for the
length of its square root; the means and variances are ancillas; all of it
is a routine computed before and uncomputed after the loss is accumulated
into ``loss``.  ``relu`` is an ``if`` on the (unchanged) gap, so
``exp(relu(z)) − 1`` adds ``exp(z) − 1`` when ``z > 0`` and nothing
otherwise.  Pass ``loss = 0.0``.
"""

import math

import numpy as np

import revmlir as rv

PETERSEN_EDGES = np.array(
    [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]  # the outer cycle
    + [(v, v + 5) for v in range(5)]  # the spokes
    + [(5, 7), (7, 9), (9, 6), (6, 8), (8, 5)]  # the inner pentagram
)
PETERSEN_NON_EDGES = np.array(
    [
        (a, b)
        for a in range(10)
        for b in range(a + 1, 10)
        if {(a, b), (b, a)}.isdisjoint(map(tuple, PETERSEN_EDGES.tolist()))
    ]
)


@rv.reversible
def distance(out, x, a, b):
    """``out += ‖x[a] − x[b]‖``."""
    with rv.routine() as r:
        squared = rv.ancilla(0.0)
        for j in range(x.shape[1]):
            squared += (x[a, j] - x[b, j]) ** 2
    out += math.sqrt(squared)
    ~r


@rv.reversible
def pair_distances(dist, x, pairs):
    """``dist[i] += ‖x[pairs[i, 0]] − x[pairs[i, 1]]‖``."""
    for i in range(len(dist)):
        distance(dist[i], x, pairs[i, 0], pairs[i, 1])


@rv.reversible
def mean_and_variance(mean, var, v):
    """``mean +=`` the mean of ``v``, ``var +=`` its sample variance
    (two passes: the sum of squared deviations from the mean)."""
    with rv.routine() as r:
        total = rv.ancilla(0.0)
        for i in range(len(v)):
            total += v[i]
        deviations = rv.ancilla(0.0)
        for i in range(len(v)):
            deviations += (v[i] - total / len(v)) ** 2
    mean += total / len(v)
    var += deviations / (len(v) - 1)
    ~r


@rv.reversible
def embedding_loss(loss, x, edges, non_edges):
    """``loss +=`` equation 7 for the embedding ``x``."""
    with rv.routine() as r:
        dist1 = rv.zeros(len(edges))
        dist2 = rv.zeros(len(non_edges))
        pair_distances(dist1, x, edges)
        pair_distances(dist2, x, non_edges)
        mean1 = rv.ancilla(0.0)
        var1 = rv.ancilla(0.0)
        mean_and_variance(mean1, var1, dist1)
        mean2 = rv.ancilla(0.0)
        var2 = rv.ancilla(0.0)
        mean_and_variance(mean2, var2, dist2)
        gap = rv.ancilla(mean1 - mean2 + 0.1)
    loss += var1 + var2
    if gap > 0:
        loss += math.exp(gap) - 1.0
    ~r


def petersen_loss(x: np.ndarray) -> float:
    """The loss on the Petersen graph for an embedding ``x (10, k)``."""
    return embedding_loss(0.0, x, PETERSEN_EDGES, PETERSEN_NON_EDGES)[0]


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    print("loss of a random embedding in 5 dimensions:", petersen_loss(rng.normal(size=(10, 5))))
