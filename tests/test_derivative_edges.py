"""Derivatives at the edges of their formulas: powers at a zero base, the
elementary functions at their singular points, and matrices of functions
whose entries are infinite, ``NaN`` or absent (empty arrays).  JAX is the
reference; where its value is ``0·∞`` and revmlir's rule gives 0 instead (a
zero tangent or cotangent contributes exactly 0: docs/design.md, decisions
147 and 149), the test says so."""

from __future__ import annotations

import cmath
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


def zero_times_infinity_is_zero(jax_matrix, rest) -> np.ndarray:
    """A JAX matrix whose ``NaN`` entries all add ``0·∞`` (a zero tangent
    or cotangent meeting an infinite partial) to the entries of ``rest``
    (the matrix without the singular term) as revmlir gives it: ``rest``'s."""
    found = np.asarray(jax_matrix)
    return np.where(np.isnan(found), np.broadcast_to(rest, found.shape), found)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_matrix_with_infinite_entries_is_returned_as_the_tangents_give_it(backend):
    """sqrt at 0: infinite entries, and 0 where a zero tangent meets them
    (JAX: NaN); ten columns in runs of four lanes, so the last run has idle
    lanes, and every workspace must come back zero."""
    f = rv.reversible(roots_and_logs, backend=backend)
    args = (np.zeros(5), np.array([0.0, 1.0, 2.0, 0.0, 3.0]))
    flat = lambda outputs: np.concatenate([np.atleast_1d(o) for o in outputs])  # noqa: E731
    forward = rv.jacobian(f, args)
    columns = [flat(rv.jvp(f, args, tuple(np.eye(10)[j].reshape(2, 5)))[1]) for j in range(10)]
    assert_same(forward, np.transpose(columns))
    assert np.isinf(forward).any() and not np.isnan(forward).any()
    expected = np.block([list(row) for row in jax.jacfwd(roots_and_logs_jax, argnums=(0, 1))(*args)])
    assert np.isnan(expected).any()
    assert_same(forward, zero_times_infinity_is_zero(expected, np.eye(10)))
    reverse = rv.jacobian(f, args, mode="reverse")
    expected = np.block([list(row) for row in jax.jacrev(roots_and_logs_jax, argnums=(0, 1))(*args)])
    assert_same(reverse, zero_times_infinity_is_zero(expected, np.eye(10)))


def root(y, x):
    y += math.sqrt(x)


def ordinary_root(x):
    return math.sqrt(x) * x


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hessian_and_an_ordinary_jacobian_at_an_infinite_derivative(backend):
    f = rv.reversible(root, backend=backend)
    expected = jax.hessian(lambda y, x: y + jnp.sqrt(x), argnums=(0, 1))(0.0, 0.0)
    assert_same(rv.hessian(f, (0.0, 0.0)), zero_times_infinity_is_zero(expected, 0.0))
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


# The elementary functions at their singular points, where a partial is
# infinite (or NaN): each as ``y += F(x…)``, at the point.


def root_of(y, x):
    y += math.sqrt(x)


def log_of(y, x):
    y += math.log(x)


def log1p_of(y, x):
    y += math.log1p(x)


def log2_of(y, x):
    y += math.log2(x)


def log10_of(y, x):
    y += math.log10(x)


def arcsine_of(y, x):
    y += math.asin(x)


def arccosine_of(y, x):
    y += math.acos(x)


def angle_of(y, a, b):
    y += math.atan2(a, b)


def quotient_of(y, a, b):
    y += a / b


def hypot_of(y, a, b):
    y += math.hypot(a, b)


def modulus_of(y, a, b):
    y += abs(complex(a, b))


def complex_root_of(y: complex, z: complex):
    y += cmath.sqrt(z)


def complex_log_of(y: complex, z: complex):
    y += cmath.log(z)


def phase_of(y, z: complex):
    y += cmath.phase(z)


UNARY = [
    (root_of, jnp.sqrt, 0.0, 1e-3),
    (log_of, jnp.log, 0.0, 1e-3),
    (log1p_of, jnp.log1p, -1.0, -0.999),
    (log2_of, jnp.log2, 0.0, 1e-3),
    (log10_of, jnp.log10, 0.0, 1e-3),
    (arcsine_of, jnp.arcsin, 1.0, 0.999),
    (arccosine_of, jnp.arccos, -1.0, -0.999),
]
"""(f, JAX's function, its singular point, a point near it)"""

BINARY = [
    (angle_of, jnp.arctan2, (0.0, 0.0), (1e-3, 2e-3)),
    (quotient_of, lambda a, b: a / b, (1.0, 0.0), (1.0, 1e-3)),
    (hypot_of, jnp.hypot, (0.0, 0.0), (1e-3, 2e-3)),
    (modulus_of, lambda a, b: jnp.abs(a + 1j * b), (0.0, 0.0), (1e-3, 2e-3)),
]

SINGULAR = [
    *((f, (0.0, x)) for f, _, x, _ in UNARY),
    *((f, (0.0, *point)) for f, _, point, _ in BINARY),
    (quotient_of, (0.0, 0.0, 0.0)),
    (complex_root_of, (0j, 0j)),
    (complex_log_of, (0j, 0j)),
    (phase_of, (0.0, 0j)),
]


def unit(value):
    return type(value)(1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("function", "point"), SINGULAR, ids=lambda v: getattr(v, "__name__", None))
def test_a_zero_tangent_or_cotangent_at_a_singular_point_contributes_zero(function, point, backend):
    """A direction along ``y`` alone, and a cotangent on the inputs alone,
    do not reach ``F``'s infinite partials: the identity's entries come
    out exact, where ``0·∞`` made them NaN (JAX: NaN too)."""
    f = rv.reversible(function, backend=backend)
    _, tangents = rv.jvp(f, point, (unit(point[0]), *(None for _ in point[1:])))
    assert tangents == (unit(point[0]), *(0 * v for v in point[1:]))
    _, pullback = rv.vjp(f, *point)
    assert pullback(None, *(unit(v) for v in point[1:])) == (0 * point[0], *(unit(v) for v in point[1:]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("function", "twin", "point"),
    [*((f, F, (x,)) for f, F, x, _ in UNARY), *((f, F, p) for f, F, p, _ in BINARY if f is not hypot_of)],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_first_derivatives_at_a_singular_point_are_jaxs(function, twin, point, backend):
    """At the point itself: infinite, NaN (atan2 at the origin) or, for the
    modulus of a complex number at 0, JAX's 0."""
    f = rv.reversible(function, backend=backend)
    expected = [float(g) for g in jax.grad(twin, argnums=tuple(range(len(point))))(*point)]
    assert_same(rv.gradient(f, (0.0, *point)), [1.0, *expected])
    columns = [rv.jvp(f, (0.0, *point), (None, *np.eye(len(point))[j]))[1][0] for j in range(len(point))]
    assert_same(columns, expected)


def flat_hessian(twin, arity):
    return lambda values: jax.hessian(lambda v: v[0] + twin(*(v[i] for i in range(1, arity + 1))))(values)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("function", "twin", "point", "near"),
    [*((f, F, (x,), (n,)) for f, F, x, n in UNARY), *BINARY],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_hessians_at_and_near_a_singular_point_are_jaxs(function, twin, point, near, backend):
    """Near the point, JAX's Hessian and products.  At the point (the
    unary functions and the modulus; atan2, the quotient and hypot have
    gradients that are infinite there), JAX's Hessian with 0 for its
    ``0·∞``, and a product along ``y`` alone exactly 0."""
    f = rv.reversible(function, backend=backend)
    hessian = flat_hessian(twin, len(point))
    args = (0.5, *near)
    expected = np.asarray(hessian(jnp.asarray(args)))
    np.testing.assert_allclose(rv.hessian(f, args), expected, rtol=1e-9, atol=0)
    ones = np.ones(len(args))
    np.testing.assert_allclose(rv.hvp(f, args, tuple(ones)), expected @ ones, rtol=1e-9, atol=0)
    if function in (angle_of, quotient_of, hypot_of):
        return
    args = (0.0, *point)
    assert_same(rv.hessian(f, args), zero_times_infinity_is_zero(hessian(jnp.asarray(args)), 0.0))
    assert rv.hvp(f, args, (1.0, *(0.0 for _ in point))) == (0.0, *(0.0 for _ in point))
