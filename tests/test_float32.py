"""float32 programs: Python float literals are weakly typed, as in JAX.

A literal such as ``2.0`` takes the float type of the value it meets, so
``2.0 * x[i]`` of a ``float32`` array is ``float32`` arithmetic; it stays
``f64`` where nothing fixes its type (``total = 0.0``), and a float32 value
meeting an ``f64`` one widens to it.  Checked natively and on the
interpreter against numpy's float32 arithmetic, and through ``rv.to_jax``
without JAX's 64-bit mode (docs/python.md, "Inside JAX and PyTorch")."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv


def _smooth(u, c):
    for i in range(1, len(u)):
        u[i] = u[i] + 0.5 * c * u[i - 1]
    total = 0.0
    for i in range(len(u)):
        total += u[i] * u[i]
    return total


@rv.reversible
def energy(e, x, k):
    for i in range(len(x)):
        e += 0.5 * k * x[i] * x[i] + math.cos(2.0 * x[i])


ENGINES = {
    "native": (energy, rv.ordinary(_smooth)),
    "interpreter": (rv.reversible(energy.pyfunc, backend="interpreter"), rv.ordinary(_smooth, backend="interpreter")),
}
X = np.linspace(-1.0, 1.0, 5, dtype=np.float32)
K = np.float32(1.5)


@pytest.mark.parametrize("engine", ENGINES)
def test_literals_take_the_float32_of_arrays_and_scalars(engine):
    """Every product and sum is float32, as numpy computes it (a Python
    float beside a float32 array is weak there too)."""
    f, _ = ENGINES[engine]
    e, x, k = f(np.float32(0.25), X, K)
    expected = np.float32(0.25) + np.sum(0.5 * K * X * X + np.cos(2.0 * X), dtype=np.float32)
    assert x.dtype == np.float32 and e == pytest.approx(float(expected), rel=1e-6)
    text = f.mlir(np.float32(0.25), X, K)
    arithmetic = [line for line in text.splitlines() if "arith.mulf" in line or "arith.addf" in line]
    assert "arith.extf" not in text and len(arithmetic) == 5
    assert all(line.endswith(": f32") for line in arithmetic)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unfixed_literal_stays_f64_and_float32_widens_to_it(engine):
    """``total = 0.0`` is f64: the float32 elements added to it widen, and
    the function returns an f64, as numpy's ``float64 + float32`` does."""
    _, g = ENGINES[engine]
    u, after = np.linspace(0.5, 2.0, 4, dtype=np.float32), np.linspace(0.5, 2.0, 4, dtype=np.float32)
    total = g(u, K)
    for i in range(1, 4):
        after[i] = after[i] + np.float32(0.5) * K * after[i - 1]
    assert u.dtype == np.float32 and np.array_equal(u, after)
    assert g.specialization_for(u, K).result_types[0].bitwidth == 64
    assert total == pytest.approx(float(np.sum(after.astype(np.float64) ** 2)), rel=1e-15)


@pytest.mark.parametrize("backend", ENGINES)
def test_float32_gradients_through_the_literals(backend):
    f = ENGINES[backend][0]
    e, x, k = rv.gradient(f, (np.float32(0.0), X, K))
    assert x.dtype == np.float32 and e == 1.0
    np.testing.assert_allclose(x, K * X - 2.0 * np.sin(2.0 * X), rtol=1e-6, atol=1e-7)
    assert k == pytest.approx(float(np.sum(0.5 * X * X)), rel=1e-6)


def test_to_jax_without_64_bit_mode():
    """JAX's default arrays and scalars are float32: the call and its
    gradient under ``jit`` (custom calls: a float32 scalar is an ``f32``
    argument, which the custom call passes) stay float32 and match JAX's
    own."""

    def reference(x, k):
        return jnp.sum(0.5 * k * x * x + jnp.cos(2.0 * x))

    with jax.enable_x64(False):
        f = rv.to_jax(energy, lowering="ffi")
        loss = lambda x, k: f(0.0, x, k)[0]  # noqa: E731
        x = jnp.linspace(-1.0, 1.0, 5)
        assert x.dtype == jnp.float32 and loss(x, 1.5).dtype == jnp.float32
        found = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, 1.5)
        expected = jax.grad(reference, argnums=(0, 1))(x, 1.5)
        for a, b in zip(found, expected, strict=True):
            assert a.dtype == jnp.float32
            np.testing.assert_allclose(a, b, rtol=1e-6)


@rv.reversible(backend="interpreter")
def _round_into(y, x, k):
    for i in range(len(x)):
        y[i] += k * x[i]
        y[i] -= np.float32(k) * x[i]


def test_an_f64_operand_is_rounded_into_a_float32_target():
    """``k`` is a Python float, an f64: ``k * x[i]`` is f64 arithmetic,
    rounded to float32 by the update as numpy's ``+=`` rounds it;
    ``np.float32(k)`` converts explicitly, so the second update subtracts
    the float32 product, which differs from the rounded f64 one in the
    last bit at most."""
    x = np.linspace(0.1, 0.9, 5, dtype=np.float32)
    y, _, _ = _round_into(np.zeros(5, np.float32), x, 1 / 3)
    expected = np.float32(1 / 3 * x.astype(np.float64)) - np.float32(1 / 3) * x
    assert y.dtype == np.float32 and np.array_equal(y, expected)
    text = _round_into.mlir(np.zeros(5, np.float32), x, 1 / 3)
    assert text.count("arith.truncf") == 2 and "arith.extf" in text


@rv.reversible(backend="interpreter")
def _turns(y, x):
    for i in range(len(x)):
        y[i] += 2 * math.pi * x[i]


def test_integer_literals_and_constants_are_weak_too():
    """``2 * math.pi`` is computed once from weak values and rounded: the
    product with the float32 element stays float32."""
    x = np.linspace(0.1, 0.9, 5, dtype=np.float32)
    y, _ = _turns(np.zeros(5, np.float32), x)
    assert y.dtype == np.float32 and np.array_equal(y, np.float32(2 * math.pi) * x)
    assert "arith.extf" not in _turns.mlir(np.zeros(5, np.float32), x)
