"""Checkpointed gradients of ordinary Python: ``rv.checkpointed`` loops.

The gradient of a heat-equation loop marked ``rv.checkpointed`` must equal
the store-all gradient of the same loop unmarked and ``jax.grad`` of the
same program in ``jax.numpy``.  (That the checkpointed adjoint holds only
the schedule's snapshots is tested exactly, with the interpreter's counters,
in test_checkpointed_adjoint.py.)
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from test_ordinary import heat_py

jax.config.update("jax_enable_x64", True)


@rv.ordinary
def heat(u, tmp, c, steps):
    n = len(u)
    for step in rv.checkpointed(range(steps), snapshots=3):
        for i in range(1, n - 1):
            tmp[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i]
    energy = 0.0
    for i in range(n):
        energy += u[i] * u[i]
    return energy


@rv.ordinary
def heat_halving(u, tmp, c, steps: int):
    n = len(u)
    for step in rv.checkpointed(range(1, steps + 1)):
        for i in range(1, n - 1):
            tmp[i] = u[i] + c * step * (u[i - 1] - 2.0 * u[i] + u[i + 1]) / steps
        for i in range(1, n - 1):
            u[i] = tmp[i]
    energy = 0.0
    for i in range(n):
        energy += u[i] * u[i]
    return energy


heat_store_all = rv.ordinary(heat_py)  # the same loop, unmarked


def heat_jax(u, c, steps, ramp=False):
    for step in range(1, steps + 1):
        rate = c * step / steps if ramp else c
        u = u.at[1:-1].set(u[1:-1] + rate * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
    return jnp.sum(u * u)


@pytest.mark.parametrize("steps", [1, 7, 25])
def test_checkpointed_gradient_equals_store_all_and_jax(steps):
    u = np.sin(np.linspace(0.0, np.pi, 9)) + 0.1 * np.cos(np.arange(9.0))
    g_u, g_tmp, g_c, g_steps = rv.gradient(heat, (u, np.zeros(9), 0.2, steps))
    r_u, r_tmp, r_c, _ = rv.gradient(heat_store_all, (u, np.zeros(9), 0.2, steps))
    np.testing.assert_allclose(g_u, r_u, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g_tmp, r_tmp, rtol=1e-12, atol=1e-14)
    assert g_c == pytest.approx(r_c, rel=1e-12)
    j_u, j_c = jax.grad(heat_jax, argnums=(0, 1))(jnp.asarray(u), 0.2, steps)
    np.testing.assert_allclose(g_u, np.asarray(j_u), rtol=1e-10, atol=1e-14)
    assert g_c == pytest.approx(float(j_c), rel=1e-10)
    assert g_steps == 0.0


def test_bisection_with_computed_bounds_against_jax():
    u = np.cos(np.linspace(0.0, 2.0, 6))
    g_u, _, g_c, _ = rv.gradient(heat_halving, (u, np.zeros(6), 0.3, 13))
    j_u, j_c = jax.grad(heat_jax, argnums=(0, 1))(jnp.asarray(u), 0.3, 13, True)
    np.testing.assert_allclose(g_u, np.asarray(j_u), rtol=1e-10, atol=1e-14)
    assert g_c == pytest.approx(float(j_c), rel=1e-10)


def test_calls_and_vjp_are_unchanged_by_the_mark():
    u = np.sin(np.linspace(0.0, np.pi, 8))
    expected = heat.pyfunc(u.copy(), np.zeros(8), 0.2, 10)  # rv.checkpointed is range in Python
    assert heat(u.copy(), np.zeros(8), 0.2, 10) == pytest.approx(expected, rel=1e-12)
    outputs, pullback = rv.vjp(heat, u, np.zeros(8), 0.2, 10)
    assert outputs[0] == pytest.approx(expected, rel=1e-12)
    g_u, _, g_c, _ = pullback(1.0, None, None, None, None)
    r_u, _, r_c, _ = rv.gradient(heat_store_all, (u, np.zeros(8), 0.2, 10))
    np.testing.assert_allclose(g_u, r_u, rtol=1e-12, atol=1e-14)
    assert g_c == pytest.approx(r_c, rel=1e-12)


def test_a_checkpointed_loop_must_be_at_the_top_level():
    def nested(u, steps):
        for k in range(2):
            for step in rv.checkpointed(range(steps)):
                u[0] = u[0] * 0.5
        return u[0]

    with pytest.raises(rv.ReversibleSyntaxError, match="top level") as error:
        rv.ordinary(nested)(np.ones(2), 3)
    assert error.value.lineno is not None


def test_snapshots_must_be_a_positive_literal():
    def bad(u, steps):
        for step in rv.checkpointed(range(steps), snapshots=0):
            u[0] = u[0] * 0.5
        return u[0]

    with pytest.raises(rv.ReversibleSyntaxError, match="positive integer constant"):
        rv.ordinary(bad)(np.ones(2), 3)


def test_snapshots_beyond_the_cursors_words_are_refused_at_the_literal():
    def huge(u, steps):
        for step in rv.checkpointed(range(steps), snapshots=2**63):
            u[0] = u[0] * 0.5
        return u[0]

    with pytest.raises(rv.ReversibleSyntaxError, match=r"snapshots must be at most 2\*\*63 - 1 ") as error:
        rv.gradient(rv.ordinary(huge), (np.ones(2), 3))
    assert (error.value.lineno, error.value.offset) == (huge.__code__.co_firstlineno + 1, 61)


def test_the_trip_count_is_known_at_run_time():
    """Any trip count the code computes works, and one compiled gradient
    serves them all: the schedule runs at run time."""

    def scaled(u, c):
        for step in rv.checkpointed(range(int(c)), snapshots=2):
            u[0] = u[0] * 0.5
        return u[0]

    f = rv.ordinary(scaled)
    assert f(np.ones(2), 3.0) == 0.125
    for c in (0.0, 1.0, 3.0, 9.5):
        g_u, _ = rv.gradient(f, (np.ones(2), c))
        np.testing.assert_allclose(g_u, [0.5 ** int(c), 0.0], rtol=1e-15)
    assert "checkpointed_gradient" in vars(f.specialization_for(np.ones(2), 3.0))
