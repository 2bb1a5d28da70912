"""The graph embedding loss (examples/python/graph_embedding.py, seed 000
appendix D.2, equation 7) against numpy and JAX references written here from
the equation, its gradient against ``jax.grad`` and central finite
differences, and its inverse."""

from __future__ import annotations

import itertools
from functools import partial
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from python_examples import load_example

jax.config.update("jax_enable_x64", True)

embedding = load_example("graph_embedding")
EDGES, NON_EDGES = embedding.PETERSEN_EDGES, embedding.PETERSEN_NON_EDGES


def loss_reference(xp: ModuleType, x: Any) -> Any:
    return load_example("array_references").embedding_loss_reference(xp, x, EDGES, NON_EDGES)


loss_jax = jax.jit(partial(loss_reference, jnp))
loss_jax_gradient = jax.jit(jax.grad(partial(loss_reference, jnp)))


def adjacency_eigenspace_embedding(eigenvalue: float) -> np.ndarray:
    """The Petersen graph's vertices projected on an eigenspace of its
    adjacency matrix: a distance-regular graph puts every pair at a distance
    that depends only on whether the pair is an edge."""
    adjacency = np.zeros((10, 10))
    adjacency[EDGES[:, 0], EDGES[:, 1]] = adjacency[EDGES[:, 1], EDGES[:, 0]] = 1.0
    values, vectors = np.linalg.eigh(adjacency)
    return np.ascontiguousarray(vectors[:, np.isclose(values, eigenvalue)])


def run_loss(x: np.ndarray) -> tuple[Any, ...]:
    return embedding.embedding_loss(0.0, x, EDGES, NON_EDGES)


def test_pairs_are_the_petersen_graph():
    """Ten vertices, 15 edges, the other 30 pairs as non-edges, and strongly
    regular with parameters (10, 3, 0, 1), which only the Petersen graph is."""
    edges = {frozenset(e) for e in EDGES.tolist()}
    non_edges = {frozenset(e) for e in NON_EDGES.tolist()}
    assert len(edges) == 15 and len(non_edges) == 30
    assert edges | non_edges == {frozenset(p) for p in itertools.combinations(range(10), 2)}
    neighbours = {v: {u for e in edges if v in e for u in e if u != v} for v in range(10)}
    assert all(len(n) == 3 for n in neighbours.values())
    for a, b in itertools.combinations(range(10), 2):
        common = len(neighbours[a] & neighbours[b])
        assert common == (0 if frozenset((a, b)) in edges else 1)


CASES = {
    **{f"random_k{k}": np.random.default_rng(k).normal(size=(10, k)) for k in (1, 2, 5, 10)},
    # non-edges farther apart than edges: relu inactive
    "separated": np.random.default_rng(7).normal(size=(10, 5)) * 0.05 + 3 * adjacency_eigenspace_embedding(1.0),
    # edges farther apart than non-edges: relu active
    "crossed": np.random.default_rng(8).normal(size=(10, 4)) * 0.05 + 3 * adjacency_eigenspace_embedding(-2.0),
}


@pytest.mark.parametrize("name", CASES)
def test_loss_matches_numpy_and_jax(name):
    x = CASES[name]
    found = run_loss(x)[0]
    assert found == pytest.approx(loss_reference(np, x), rel=1e-12)
    assert found == pytest.approx(float(loss_jax(x)), rel=1e-12)


def test_both_sides_of_relu_are_covered():
    gaps = {}
    for name, x in CASES.items():
        d1, d2 = (np.linalg.norm(x[p[:, 0]] - x[p[:, 1]], axis=1) for p in (EDGES, NON_EDGES))
        gaps[name] = d1.mean() - d2.mean() + 0.1
    assert gaps["separated"] < 0 < gaps["crossed"]


def test_exact_embedding_in_five_dimensions():
    """The paper: for k ≥ 5 the loss reaches zero, with l2/l1 = √2.  The
    adjacency eigenspace of eigenvalue 1 is such an embedding."""
    x = adjacency_eigenspace_embedding(1.0)
    assert x.shape == (10, 5)
    d1, d2 = (np.linalg.norm(x[p[:, 0]] - x[p[:, 1]], axis=1) for p in (EDGES, NON_EDGES))
    assert d2.mean() / d1.mean() == pytest.approx(np.sqrt(2), rel=1e-12)
    assert run_loss(x)[0] == pytest.approx(0.0, abs=1e-14)


def test_runs_natively():
    x = CASES["random_k2"]
    spec = embedding.embedding_loss.specialization_for(0.0, x, EDGES, NON_EDGES)
    assert spec.native is not None


@pytest.mark.parametrize("name", ["separated", "crossed"])
def test_inverse_restores_the_inputs(name):
    x = CASES[name]
    outputs = run_loss(x.copy())
    np.testing.assert_array_equal(outputs[1], x)
    restored = (~embedding.embedding_loss)(*outputs)
    assert restored[0] == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(restored[1], x, rtol=1e-15)


def central_differences(x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += h
        minus[index] -= h
        gradient[index] = (run_loss(plus)[0] - run_loss(minus)[0]) / (2 * h)
    return gradient


@pytest.mark.parametrize("name", ["random_k2", "random_k5", "separated", "crossed"])
def test_gradient_matches_jax_and_finite_differences(name):
    x = CASES[name]
    gradient = rv.gradient(
        embedding.embedding_loss,
        (0.0, x, EDGES, NON_EDGES),
        iloss=0,
    )[1]
    np.testing.assert_allclose(gradient, loss_jax_gradient(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gradient, central_differences(x), rtol=1e-6, atol=1e-7)
