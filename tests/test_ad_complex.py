"""Gradients of complex programs, in NiLang's convention: a complex
``z = x + iy`` receives ``∂L/∂x + i ∂L/∂y``; a complex loss is differentiated
through its real part.

JAX returns the conjugate (``∂L/∂x − i ∂L/∂y``) for real-valued functions of
complex inputs, so the JAX references are conjugated; central differences
along the real and imaginary axes are the second reference.
"""

import cmath
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from python_examples import load_example

jax.config.update("jax_enable_x64", True)

BACKENDS = ("interpreter", "native")


def holomorphic(y: complex, x: complex, a):
    y += x * x * a + cmath.exp(x) / (x + 2.0) + cmath.log(x)
    a += y.real * y.imag


def holomorphic_jax(y, x, a):
    y = y + x * x * a + jnp.exp(x) / (x + 2.0) + jnp.log(x)
    return y, x, a + y.real * y.imag


def non_holomorphic(y: complex, x: complex, r):
    """abs, phase, real and imaginary parts, parts updated in place."""
    r += abs(x) * cmath.phase(x)
    y += complex(x.imag, r) * x
    y.real += x.real * r
    y.imag -= r * r


def non_holomorphic_jax(y, x, r):
    r = r + jnp.abs(x) * jnp.angle(x)
    y = y + (x.imag + 1j * r) * x
    y = y + x.real * r - 1j * r * r
    return y, x, r


def complex_array(z, w: complex, total):
    """Elements of a complex array updated in place and read."""
    for i in range(len(z)):
        z[i] += w * z[len(z) - 1 - i] if i < len(z) - 1 - i else w
    for i in range(len(z)):
        total += abs(z[i])


def complex_array_jax(z, w, total):
    n = z.shape[0]
    for i in range(n):
        z = z.at[i].add(w * z[n - 1 - i] if i < n - 1 - i else w)
    return z, w, total + jnp.sum(jnp.abs(z))


CASES = {
    "holomorphic": (holomorphic, holomorphic_jax, (0.1 - 0.2j, 0.3 + 0.7j, 1.5)),
    "non_holomorphic": (non_holomorphic, non_holomorphic_jax, (0.5j, -0.4 + 1.1j, 0.25)),
}


def real_part_loss(f, iloss):
    return lambda *a: complex(f(*a)[iloss]).real


def finite_difference_gradient(loss, args, h=1e-6):
    gradients = []
    for i, a in enumerate(args):

        def along(step, i=i):
            plus, minus = list(args), list(args)
            plus[i], minus[i] = a + step, a - step
            return (loss(*plus) - loss(*minus)) / (2 * h)

        g = along(h)
        if isinstance(a, complex):
            g += 1j * along(1j * h)
        gradients.append(g)
    return gradients


def jax_gradient(twin, args, iloss):
    def loss(*a):
        return jnp.real(twin(*a)[iloss])

    found = jax.grad(loss, argnums=tuple(range(len(args))))(*args)
    return [np.conj(complex(g)) if isinstance(a, complex) else float(g) for g, a in zip(found, args)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("iloss", [0, 2])
@pytest.mark.parametrize("case", CASES)
def test_complex_gradients(case, iloss, backend):
    program, twin, args = CASES[case]
    f = rv.reversible(program, backend=backend)
    gradients = rv.gradient(f, args, iloss=iloss)
    np.testing.assert_allclose(gradients, jax_gradient(twin, args, iloss), rtol=1e-10, atol=1e-12)
    expected = finite_difference_gradient(real_part_loss(f, iloss), args)
    np.testing.assert_allclose(gradients, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_arrays_and_complex_cotangents(backend):
    f = rv.reversible(complex_array, backend=backend)
    z = np.array([1 + 2j, -0.5 + 0.1j, 0.3 - 0.9j, 2.0 + 0j])
    args = (z, 0.4 - 0.3j, 0.0)
    c = 0.7 - 1.3j  # weighs the output w as Re(conj(c) w)
    _, pullback = rv.vjp(f, *args)
    found = pullback(np.full(4, c), c, 1.0)

    def weighted(z, w, total):
        z, w, total = complex_array_jax(z, w, total)
        return jnp.sum(jnp.real(jnp.conj(c) * z)) + jnp.real(jnp.conj(c) * w) + total

    g_z, g_w, g_total = jax.grad(weighted, argnums=(0, 1, 2))(*args)
    np.testing.assert_allclose(found[0], np.conj(g_z), rtol=1e-12)
    np.testing.assert_allclose(found[1], np.conj(complex(g_w)), rtol=1e-12)
    assert found[2] == pytest.approx(float(g_total))
    np.testing.assert_array_equal(z, [1 + 2j, -0.5 + 0.1j, 0.3 - 0.9j, 2.0 + 0j])


def test_the_complex_log_example_of_the_paper():
    """NiLang's complex log instruction (seed 000): the gradient of
    Re(log z) w.r.t. z is conj(1/z) in this convention, i.e. z/|z|²."""
    complex_log = load_example("paper_basics").complex_log
    z = 1.5 - 0.5j
    gradients = rv.gradient(complex_log, (0j, z), iloss=0)
    assert gradients[1] == pytest.approx(z / abs(z) ** 2)
    assert math.isclose(abs(gradients[0]), 1.0)
