"""Derivatives at the edges of their formulas: powers at a zero base, and
matrices of functions whose entries are infinite, ``NaN`` or absent (empty
arrays).  JAX is the reference; where its value is ``0·∞`` and revmlir's rule
gives 0 instead (docs/design.md, decision 147), the test says so."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv

jax.config.update("jax_enable_x64", True)

BACKENDS = ("interpreter", "native")

# (x, p): a zero base with a positive, zero, fractional, unit and negative
# exponent, and a negative base with an integer exponent
POWERS = [(0.0, 2.0), (0.0, 0.0), (0.0, 0.5), (0.0, 1.0), (0.0, -1.0), (-2.0, 3.0), (2.0, 0.5)]


def power(y, x, p):
    y += x**p


def ordinary_power(x, p):
    return x**p


def jax_by_base(x: float, p: float) -> float:
    """∂x^p/∂x as JAX gives it; JAX's rule for an integer exponent gives
    ``x^0`` the derivative 0 at ``x = 0`` (its float rule: ``0·0^-1``)."""
    exponent = int(p) if p.is_integer() else p
    return float(jax.grad(lambda x: x**exponent)(x))


def jax_by_exponent(x: float, p: float) -> float:
    """∂x^p/∂p as JAX gives it (``r·log x``, with ``log 1`` at ``x = 0``);
    at ``x = 0, p < 0`` that is ``∞·0``, which revmlir takes as 0."""
    if x == 0.0 and p < 0.0:
        return 0.0
    return float(jax.grad(lambda p: x**p)(p))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("x", "p"), POWERS)
def test_a_power_at_a_zero_base_has_jaxs_derivatives(x, p, backend):
    f = rv.reversible(power, backend=backend)
    o = rv.ordinary(ordinary_power, backend=backend)
    by_base, by_exponent = jax_by_base(x, p), jax_by_exponent(x, p)
    # a direction that does not move one of them leaves its partial out, even a NaN one
    np.testing.assert_equal(rv.jvp(f, (0.0, x, p), (None, 1.0, None))[1][0], by_base)
    np.testing.assert_equal(rv.jvp(f, (0.0, x, p), (None, None, 1.0))[1][0], by_exponent)
    np.testing.assert_allclose(rv.jvp(o, (x, p), (1.0, None))[1][0], by_base, rtol=1e-15)
    np.testing.assert_allclose(rv.gradient(f, (0.0, x, p)), (1.0, by_base, by_exponent), rtol=1e-15)
    np.testing.assert_allclose(rv.gradient(o, (x, p)), (by_base, by_exponent), rtol=1e-15)


def complex_power(y: complex, z: complex, w: complex):
    y += z**w


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("z", "w"), [(0j, 2 + 0j), (0j, 1 + 0j), (1 + 1j, 2 + 0j), (0.5j, 0.5 - 1j)])
def test_a_complex_power_at_a_zero_base_has_jaxs_derivatives(z, w, backend):
    f = rv.reversible(complex_power, backend=backend)
    expected = jax.grad(lambda z, w: (z**w).real, argnums=(0, 1))(z, w)
    # NiLang's convention: the conjugate of JAX's gradient
    np.testing.assert_allclose(rv.gradient(f, (0j, z, w))[1:], np.conj(expected), rtol=1e-12)
    tangent = jax.jvp(lambda z: z**w, (z,), (1.0 + 0j,))[1]
    np.testing.assert_allclose(rv.jvp(f, (0j, z, w), (None, 1.0 + 0j, None))[1][0], tangent, rtol=1e-12)


def pairwise_squares(y, x):
    for i in range(len(x)):
        y[i] += x[i] * x[i]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_the_jacobian_of_empty_arrays_is_empty(mode, backend):
    f = rv.reversible(pairwise_squares, backend=backend)
    expected = jax.jacfwd(lambda x: x * x)(np.zeros(0))
    assert rv.jacobian(f, (np.zeros(0), np.zeros(0)), mode=mode).shape == expected.shape
    assert rv.jacobian(f, (np.zeros(0), np.zeros(0)), wrt=(1,), of=(0,), mode=mode).shape == expected.shape


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_jacobian_runs_f_once_as_any_matrix_does(backend):
    """No column to compute, but the arguments are refused and f's own
    errors raised as for any matrix: one array passed twice where f writes
    one, and an index past the end."""
    f = rv.reversible(pairwise_squares, backend=backend)
    shared = np.zeros(3)
    with pytest.raises(ValueError, match="share memory"):
        rv.jacobian(f, (shared, shared), wrt=())
    with pytest.raises(rv.ExecutionError, match="out of bounds"):
        rv.jacobian(f, (np.zeros(2), np.zeros(3)), wrt=())


def squares_up_to(s: float, x, n: int):
    for i in range(n):
        s += x[i] * x[i]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_hessian_runs_f_once_as_any_matrix_does(backend):
    """No column to compute (``wrt=()``, or only empty arrays), but f runs
    once, as for an empty Jacobian, so its errors are raised: an index past
    the end; where it runs cleanly, the matrix is empty."""
    f = rv.reversible(squares_up_to, backend=backend)
    with pytest.raises(rv.ExecutionError, match="out of bounds"):
        rv.hessian(f, (0.0, np.ones(2), 3), wrt=())
    with pytest.raises(rv.ExecutionError, match="out of bounds"):
        rv.hessian(f, (0.0, np.zeros(0), 1), wrt=(1,))
    assert rv.hessian(f, (0.0, np.ones(2), 2), wrt=()).shape == (0, 0)


def roots_and_logs(y, x):
    for i in range(len(x)):
        y[i] += math.log(x[i] + 1.0) * x[i] + math.sqrt(x[i])


def roots_and_logs_jax(y, x):
    return y + jnp.log(x + 1.0) * x + jnp.sqrt(x), x


def assert_same(found, expected) -> None:
    np.testing.assert_allclose(found, np.asarray(expected), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_matrix_with_infinite_entries_is_returned_as_the_tangents_give_it(backend):
    """sqrt at 0: infinite entries, and NaN where a zero tangent
    meets them (JAX's too); ten columns in runs of four lanes, so the last
    run has idle lanes, and every workspace must come back zero."""
    f = rv.reversible(roots_and_logs, backend=backend)
    args = (np.zeros(5), np.array([0.0, 1.0, 2.0, 0.0, 3.0]))
    flat = lambda outputs: np.concatenate([np.atleast_1d(o) for o in outputs])  # noqa: E731
    forward = rv.jacobian(f, args)
    columns = [flat(rv.jvp(f, args, tuple(np.eye(10)[j].reshape(2, 5)))[1]) for j in range(10)]
    assert_same(forward, np.transpose(columns))
    assert np.isinf(forward).any() and np.isnan(forward).any()
    assert_same(forward, np.block([list(row) for row in jax.jacfwd(roots_and_logs_jax, argnums=(0, 1))(*args)]))
    reverse = rv.jacobian(f, args, mode="reverse")
    assert_same(reverse, np.block([list(row) for row in jax.jacrev(roots_and_logs_jax, argnums=(0, 1))(*args)]))


def root(y, x):
    y += math.sqrt(x)


def ordinary_root(x):
    return math.sqrt(x) * x


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hessian_and_an_ordinary_jacobian_at_an_infinite_derivative(backend):
    f = rv.reversible(root, backend=backend)
    expected = jax.hessian(lambda y, x: y + jnp.sqrt(x), argnums=(0, 1))(0.0, 0.0)
    assert_same(rv.hessian(f, (0.0, 0.0)), np.array(expected))
    o = rv.ordinary(ordinary_root, backend=backend)
    # the tangent of the returned value: 0·∞ in JAX's product rule too
    tangent = jax.jvp(lambda x: jnp.sqrt(x) * x, (0.0,), (1.0,))[1]
    assert_same(rv.jacobian(o, (0.0,))[:, 0], [tangent, 1.0])


def squared_residual(y, x):
    y += (x**2.0 - 4.0) ** 2.0


def residual_of_a_power(y, x, p):
    y += (x**p - 1.0) ** 2.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("function", "args", "reference"),
    [
        # a zero gradient reaching the power (the minimum): its derivative is not 0
        (squared_residual, (0.0, 2.0), lambda a: (a[0] ** 2.0 - 4.0) ** 2.0),
        # a zero exponent: ∂r/∂x is 0 there, its derivative along p is not
        (power, (0.0, 2.0, 0.0), lambda a: a[0] ** a[1]),
        (residual_of_a_power, (0.0, 1.0, 2.0), lambda a: (a[0] ** a[1] - 1.0) ** 2),
    ],
)
def test_hessians_through_a_power_where_its_rules_choose_zero_are_jaxs(function, args, reference, backend):
    """The rules' zeros (a zero factor times a partial; ∂r/∂x at y = 0) are
    chosen where the value is not finite only: a Hessian differentiates the
    gradient program forwards, and a constant 0 has no derivative, where the
    product it replaced had one."""
    f = rv.reversible(function, backend=backend)
    expected = np.asarray(jax.hessian(reference)(jnp.asarray(args[1:])))
    assert np.allclose(rv.hessian(f, args)[1:, 1:], expected, rtol=1e-12, atol=0)
    direction = (0.0, *np.ones(len(args) - 1))
    assert np.allclose(rv.hvp(f, args, direction)[1:], expected @ np.ones(len(args) - 1), rtol=1e-12, atol=0)
