"""Reverse mode on the paper's programs (examples/python/paper_*.py) against
JAX's ``vjp`` of the same computations and closed forms, plus the dot-product
test that ties reverse mode to forward mode: ⟨ȳ, J ẋ⟩ = ⟨Jᵀȳ, ẋ⟩ for random
ẋ, ȳ on every program of the gradient tests."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from derivative_checks import assert_per_argument_close
from python_examples import load_example
from test_ad import CASES, make
from test_tangent import direction, leapfrog_jax

jax.config.update("jax_enable_x64", True)

appendix_b = load_example("paper_appendix_b")
leapfrog = load_example("paper_leapfrog")
bennett = load_example("paper_bennett")

BACKENDS = ("interpreter", "native")


def inner(a, b):
    """Σ a·b over the float entries of two per-argument lists (``None``: zero)."""
    total = 0.0
    for x, y in zip(a, b):
        if x is not None and y is not None:
            total += float(np.sum(np.asarray(x) * np.asarray(y)))
    return total


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES)
def test_reverse_mode_is_the_transpose_of_forward_mode(case, backend):
    pyfunc, args, _ = CASES[case]
    f = make(backend, pyfunc)
    x_dot, y_bar = direction(args, seed=1), direction(args, seed=2)
    _, y_dot = rv.jvp(f, args, x_dot)
    _, pullback = rv.vjp(f, *args)
    x_bar = pullback(*y_bar)
    assert inner(y_bar, y_dot) == pytest.approx(inner(x_bar, x_dot), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_affine_map(backend):
    f = make(backend, appendix_b.i_affine)
    rng = np.random.default_rng(1)
    args = (rng.normal(size=3), rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=4))
    cotangents = direction(args, seed=3)
    _, pullback = rv.vjp(f, *args)
    _, expected = jax.vjp(lambda y, W, b, x: (y + W @ x + b, W, b, x), *args)
    assert_per_argument_close(pullback(*cotangents), expected(tuple(cotangents)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_leapfrog(backend):
    f = make(backend, leapfrog.leapfrog)
    rng = np.random.default_rng(10)
    x, v, m = rng.normal(size=(3, 3)), rng.normal(size=(3, 3)) * 0.1, rng.uniform(1, 2, size=3)
    args = (x, v, m, 0.5, 0.01, 4)
    x_bar, v_bar = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    _, pullback = rv.vjp(f, *args)
    found = pullback(x_bar, v_bar, None, None, None, None)
    _, expected = jax.vjp(lambda *a: leapfrog_jax(*a, 4), *args[:5])
    for got, want in zip(found[:5], expected((x_bar, v_bar))):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_power_with_log_numbers():
    gradient = rv.gradient(appendix_b.mypower, (0.0, 1.7, 5))
    assert gradient[1] == pytest.approx(5 * 1.7**4, rel=1e-12)


@pytest.mark.parametrize("level", [1, 2])
def test_bennett_chain(level):
    """s_out += 2^(4^level) s_in through Bennett's schedule: the gradient is
    the closed form, and the ancillas' uncomputation leaves no trace."""
    g = rv.gradient(bennett.bennett, (0.75, 0.0, level), iloss=1)
    assert g[0] == pytest.approx(2.0 ** (4**level), rel=1e-12)
    assert g[1] == 1.0


@rv.reversible
def norm(out, x):
    """out += ‖x‖₂, the sum of squares in an ancilla computed and uncomputed."""
    with rv.routine() as r:
        squares = rv.ancilla(0.0)
        for i in range(len(x)):
            squares += x[i] * x[i]
    out += np.sqrt(squares)
    ~r


@pytest.mark.parametrize("backend", BACKENDS)
def test_norm(backend):
    f = make(backend, norm)
    x = np.random.default_rng(12).normal(size=7)
    gradient = rv.gradient(f, (0.0, x))
    np.testing.assert_allclose(gradient[1], jax.grad(lambda v: jnp.linalg.norm(v))(x), rtol=1e-13)
    np.testing.assert_allclose(gradient[1], x / np.linalg.norm(x), rtol=1e-13)
