"""``rv.jacobian``: forward and reverse mode agree with each other and with
JAX (``jax.jacfwd`` of the same function written with ``jax.numpy``)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv

jax.config.update("jax_enable_x64", True)


@rv.reversible
def spread(y, x, a, n):
    for i in range(len(y)):
        y[i] += math.sin(x[i % len(x)]) * a
    a += x[0] * x[1] + float(n)


def spread_jax(y, x, a):
    y = y + jnp.sin(x[jnp.arange(y.shape[0]) % x.shape[0]]) * a
    return y, x, a + x[0] * x[1]


@rv.reversible
def rotate(m, theta):
    """Givens rotations of neighbouring entries of a 2-D array."""
    for i in range(m.shape[0]):
        rv.rot(m[i, 0], m[i, 1], theta)
        theta += m[i, 0] * 0.1


def rotate_jax(m, theta):
    for i in range(m.shape[0]):
        a, b = m[i, 0], m[i, 1]
        c, s = jnp.cos(theta), jnp.sin(theta)
        m = m.at[i, 0].set(a * c - b * s).at[i, 1].set(a * s + b * c)
        theta = theta + m[i, 0] * 0.1
    return m, theta


def flat_jacobian(twin, args, wrt, of):
    """JAX's Jacobian in rv.jacobian's layout: the float entries of the chosen
    arguments, argument by argument, C order."""
    shapes = [np.shape(a) for a in args]
    sizes = [int(np.prod(s)) for s in shapes]

    def unflatten(v):
        parts, start = [], 0
        for i, (shape, size) in enumerate(zip(shapes, sizes)):
            parts.append(v[start : start + size].reshape(shape) if i in wrt else jnp.asarray(args[i]))
            start += size if i in wrt else 0
        return parts

    def function(v):
        outputs = twin(*unflatten(v))
        return jnp.concatenate([jnp.ravel(outputs[i]) for i in of])

    point = jnp.concatenate([jnp.ravel(jnp.asarray(args[i], dtype=jnp.float64)) for i in wrt])
    return np.asarray(jax.jacfwd(function)(point))


CASES = {
    "spread": (spread, spread_jax, (np.zeros(3), np.array([0.3, 0.5]), 1.2, 2), (0, 1, 2)),
    "rotate": (rotate, rotate_jax, (np.arange(6.0).reshape(3, 2) / 7, 0.4), (0, 1)),
}


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
@pytest.mark.parametrize("case", CASES)
def test_full_jacobians(case, mode):
    f, twin, args, floats = CASES[case]
    found = rv.jacobian(f, args, mode=mode)
    twin_args = args[: len(floats)]
    np.testing.assert_allclose(found, flat_jacobian(twin, twin_args, floats, floats), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_blocks(mode):
    args = (np.zeros(4), np.array([0.3, -0.5]), 1.2, 2)
    found = rv.jacobian(spread, args, wrt=(1, 2), of=(0,), mode=mode)
    assert found.shape == (4, 3)
    np.testing.assert_allclose(found, flat_jacobian(spread_jax, args[:3], (1, 2), (0,)), rtol=1e-12)


def test_arguments_are_checked():
    args = (np.zeros(3), np.array([0.3, 0.5]), 1.2, 2)
    with pytest.raises(TypeError, match=r"argument 'n' of spread is not a float"):
        rv.jacobian(spread, args, wrt=(3,))
    with pytest.raises(ValueError, match="mode must be"):
        rv.jacobian(spread, args, mode="sideways")

    @rv.reversible
    def cmul(y: complex, x: complex):
        y += x * x

    with pytest.raises(TypeError, match="complex; Jacobians of complex arguments"):
        rv.jacobian(cmul, (0j, 1j))
