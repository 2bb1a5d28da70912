"""Forward mode, Jacobians and Hessians of ordinary Python (``@rv.ordinary``).

``rv.jvp`` and ``rv.jacobian`` differentiate the Bennett form in forward
mode, ``rv.hvp`` and ``rv.hessian`` the gradient program (its tape included)
forward over reverse; a checkpointed loop's Hessian-vector products are the
tangent of the checkpointed gradient.  Everything must equal JAX's
derivatives (``jax.jacfwd``, ``jax.hessian``) of the same program in
``jax.numpy`` to 1e-10, native code the interpreter, and checkpointed
store-all.

Time: each derived program is generated once per module (the functions are
module-level and the checks share their arguments); they run on the
interpreter, and the tangent also natively (native Hessians, with their
tapes, run in docs/python.md).  JAX's reference derivatives are one jitted
function per program.
"""

import math
from functools import cache

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv

jax.config.update("jax_enable_x64", True)

RTOL = 1e-10


@rv.ordinary
def decay(x, k):
    """A helper the model calls."""
    return x * math.exp(-k * x * x)


def model(u, w, a, n):
    """Loops that overwrite, a data-dependent branch writing an array, a
    call, a while loop whose trip count depends on the data; two results."""
    x = a
    for i in range(n):
        x = decay(x * w[i], 0.3) + u[i]
        if x > 0.5:
            u[i] = x * x
        else:
            u[i] = math.sin(x)
    s = 0.0
    j = 0
    while s < 2.0 and j < 50:
        s += w[0] * w[0] + 0.05 * a
        j += 1
    return s + x * u[0], x


native = rv.ordinary(model)
interpreted = rv.ordinary(model, backend="interpreter")

U, W, A = np.array([0.4, -0.2, 0.9]), np.array([1.1, 0.7, -0.8]), 0.6
ARGS = (U, W, A, 3)
V = (np.array([0.3, -1.0, 0.5]), np.array([0.2, 0.1, -0.4]), 0.7, None)
v_flat = np.concatenate([V[0], V[1], [V[2]]])  # u, w, a: rv.jacobian's layout


def model_jax(z, trips):
    """``model`` on ``z = (u, w, a)``: its two results, then ``u`` as it
    leaves it.  The while loop's trip count is piecewise constant, so it is
    given (``TRIPS``), which lets JAX compile the function."""
    u, w, a = z[:3], z[3:6], z[6]
    x = a
    for i in range(3):
        x = x * w[i] * jnp.exp(-0.3 * (x * w[i]) ** 2) + u[i]
        u = u.at[i].set(jnp.where(x > 0.5, x * x, jnp.sin(x)))
    s = 0.0
    for _ in range(trips):
        s = s + w[0] * w[0] + 0.05 * a
    return jnp.concatenate([jnp.stack([s + x * u[0], x]), u])


TRIPS = math.ceil(2.0 / (W[0] * W[0] + 0.05 * A))


@cache
def reference() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """JAX's outputs, Jacobian and the Hessians of both results."""
    z = np.concatenate([U, W, [A]])

    @jax.jit
    def derivatives(z):
        return model_jax(z, TRIPS), jax.jacfwd(model_jax)(z, TRIPS), jax.hessian(model_jax)(z, TRIPS)[:2]

    return tuple(np.asarray(d) for d in derivatives(z))  # type: ignore[return-value]


def test_jvp_equals_jax():
    outputs, tangents = rv.jvp(interpreted, ARGS, V)
    values, jacobian, _ = reference()
    expected = jacobian @ v_flat
    np.testing.assert_allclose(outputs[:2], values[:2], rtol=RTOL)
    np.testing.assert_allclose(outputs[2], values[2:], rtol=RTOL)  # u as the model left it
    np.testing.assert_allclose(tangents[:2], expected[:2], rtol=RTOL)
    np.testing.assert_allclose(tangents[2], expected[2:], rtol=RTOL)
    np.testing.assert_array_equal(tangents[3], V[1])  # w is read only: its tangent passes through
    assert tangents[4:] == (V[2], 0.0)  # a, and the integer n
    np.testing.assert_array_equal(ARGS[0], U)  # the arguments are not modified


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_jacobian_equals_jax(mode):
    # outputs: the two results, then u as the model left it; inputs u, w, a
    found = rv.jacobian(interpreted, ARGS, of=(0, 1, 2), mode=mode)
    assert found.shape == (5, 7)
    np.testing.assert_allclose(found, reference()[1], rtol=RTOL, atol=1e-14)


def test_hessian_equals_jax():
    expected = reference()[2][0]
    np.testing.assert_allclose(rv.hessian(interpreted, ARGS), expected, rtol=RTOL, atol=1e-13)
    order = [6, 0, 1, 2]  # wrt a, then u
    np.testing.assert_allclose(
        rv.hessian(interpreted, ARGS, wrt=(2, 0)), expected[np.ix_(order, order)], rtol=RTOL, atol=1e-13
    )


def test_hvp_equals_jax():
    """The second result's Hessian-vector product: the tangent of the
    Bennett form's gradient, tape pushes and pops included."""
    found = rv.hvp(interpreted, ARGS, V, iloss=1)
    expected = reference()[2][1] @ v_flat
    np.testing.assert_allclose(np.concatenate([found[0], found[1], [found[2]]]), expected, rtol=RTOL, atol=1e-13)
    assert found[3] == 0.0


def test_native_equals_interpreter():
    outputs, tangents = rv.jvp(native, ARGS, V)
    expected_outputs, expected_tangents = rv.jvp(interpreted, ARGS, V)
    for found, expected in zip((*outputs, *tangents), (*expected_outputs, *expected_tangents), strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(
        rv.jacobian(native, ARGS, mode="forward"),
        rv.jacobian(interpreted, ARGS, mode="forward"),
        rtol=1e-13,
        atol=1e-15,
    )


@rv.ordinary(backend="interpreter")
def relax(u, tmp, c):
    """One step, nonlinear so that the Hessian is not the gradient's."""
    n = len(u)
    for i in range(1, n - 1):
        tmp[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    for i in range(1, n - 1):
        u[i] = tmp[i] * (1.0 + 0.5 * tmp[i])


def energy(u):
    total = 0.0
    for i in range(len(u)):
        total += u[i] * u[i]
    return total


@rv.ordinary(backend="interpreter")
def heat(u, tmp, c, steps):
    rate = c
    for step in rv.checkpointed(range(steps), snapshots=3):
        relax(u, tmp, rate)
        rate = c + 0.1 * rate * u[2]  # a carried scalar, overwritten: snapshotted and restored
    return energy(u) + rate


@rv.ordinary(backend="interpreter")
def heat_store_all(u, tmp, c, steps):
    rate = c
    for step in range(steps):
        relax(u, tmp, rate)
        rate = c + 0.1 * rate * u[2]
    return energy(u) + rate


energy = rv.ordinary(energy, backend="interpreter")

STEPS = 5


@jax.jit
def heat_jax(z):
    """``heat`` on ``z = (u, c)``."""
    u, c = z[:-1], z[-1]
    rate = c
    for _ in range(STEPS):
        t = u[1:-1] + rate * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        u = u.at[1:-1].set(t * (1.0 + 0.5 * t))
        rate = c + 0.1 * rate * u[2]
    return jnp.sum(u * u) + rate


def test_hvp_of_a_checkpointed_gradient_equals_store_all_and_jax():
    u = np.sin(np.linspace(0.0, np.pi, 5))
    args = (u, np.zeros(5), 0.2, STEPS)
    v = (np.cos(np.arange(5.0)), None, 0.3, None)
    z, v_flat = np.append(u, 0.2), np.append(v[0], 0.3)
    gradient, hessian = jax.jit(lambda z: (jax.grad(heat_jax)(z), jax.hessian(heat_jax)(z)))(z)
    found = rv.hvp(heat, args, v)
    store_all = rv.hvp(heat_store_all, args, v)
    np.testing.assert_allclose(found[0], store_all[0], rtol=1e-12, atol=1e-14)
    assert found[2] == pytest.approx(store_all[2], rel=1e-12)
    expected = np.asarray(hessian) @ v_flat
    np.testing.assert_allclose(found[0], expected[:-1], rtol=RTOL, atol=1e-14)
    assert found[2] == pytest.approx(expected[-1], rel=RTOL)
    np.testing.assert_array_equal(found[1], 0.0)  # tmp is overwritten before it is read
    # the Hessian of a checkpointed function: one checkpointed HVP per column
    assert rv.hessian(heat, args, wrt=(2,)) == pytest.approx(np.asarray(hessian)[-1:, -1:], rel=RTOL)
    # a tangent of a checkpointed function runs it forward: no schedule
    _, tangents = rv.jvp(heat, args, v)
    assert tangents[0] == pytest.approx(float(np.asarray(gradient) @ v_flat), rel=RTOL)


@rv.ordinary(backend="interpreter")
def sweeps(u, c, steps):
    n = len(u)
    for step in rv.checkpointed(range(steps), snapshots=2, split="work"):
        for i in range(1, n):
            u[i] = u[i] * (1.0 + c * u[i - 1])
    return u[n - 1] * u[n - 1]


def test_hvp_of_a_gradient_checkpointed_at_primitive_steps():
    """``split="work"`` flattens the loop nest before ``ad-checkpoint``: the
    tangent of the gradient it builds composes the same way."""
    u, c, steps = np.array([0.5, 0.4, 0.3]), 0.3, 4
    v = (np.array([1.0, 0.5, -0.2]), 0.7, None)

    def loss(z):
        u = z[:3]
        for _ in range(steps):
            for i in range(1, 3):
                u = u.at[i].set(u[i] * (1.0 + z[3] * u[i - 1]))
        return u[2] * u[2]

    found = rv.hvp(sweeps, (u, c, steps), v)
    _, expected = jax.jvp(jax.grad(loss), (np.append(u, c),), (np.append(v[0], v[1]),))
    np.testing.assert_allclose(np.append(found[0], found[1]), np.asarray(expected), rtol=RTOL)


def test_errors():
    with pytest.raises(TypeError, match=r"takes 4 argument\(s\), so 4 tangents"):
        rv.jvp(interpreted, ARGS, V[:2])
    with pytest.raises(
        TypeError, match=r"output #5 of model \('n' as the call leaves it\) is not a float scalar or an array"
    ):
        rv.jacobian(interpreted, ARGS, of=(5,))  # n after the call
    with pytest.raises(IndexError, match=r"rv.jacobian: of=9 is out of range for the 6 outputs of model"):
        rv.jacobian(interpreted, ARGS, of=(9,))
    with pytest.raises(TypeError, match=r"argument 'n' of model is not a float"):
        rv.hessian(interpreted, ARGS, wrt=(3,))
    with pytest.raises(
        TypeError, match=r"rv.hvp: output #2 of model \('u' as the call leaves it\) is not a float scalar"
    ):
        rv.hvp(interpreted, ARGS, V, iloss=2)  # u after the call: an array
    with pytest.raises(IndexError, match="iloss=7 is out of range for the 6 outputs of model"):
        rv.hessian(interpreted, ARGS, iloss=7)
    with pytest.raises(
        TypeError, match=r"rv.jvp expects an @rv.ordinary function, a @rv.reversible function or its inverse"
    ):
        rv.jvp(model, ARGS, V)
    with pytest.raises(TypeError, match=r"the vector of argument 'u' of model must have the argument's shape"):
        rv.hvp(interpreted, ARGS, (np.ones(2), None, None, None))
    with pytest.raises(ValueError, match="share memory"):
        rv.jvp(interpreted, (U, U, A, 3), V)
