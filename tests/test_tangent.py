"""Forward mode (``ad-tangent``, ``rv.jvp``) and Hessians, forward over
reverse (``ad-hessian``, ``rv.hvp``, ``rv.hessian``).

Tangents must equal central differences along the tangent and JAX's
``jax.jvp`` of the same program written with ``jax.numpy``; Hessians must
equal JAX's ``jax.hessian`` and central differences of ``rv.gradient``.  Both
on the interpreter and in native code, on the reverse-mode test programs
(loops, calls, recursion, ancillas, log numbers, ``y += x * x``), the paper's
programs, complex numbers, arrays and stacks.  ``@f.tan`` must be a verified
reversible function; every op must have a tangent rule or a mark.

JAX's answers are computed under ``jax.jit``: one XLA compile of each
reference, where JAX run eagerly compiles every primitive at every new
shape and parameter (the Hessians of ``every_function`` and the array
programs took 9 s of CPU eagerly, 0.3 s jitted; their entries agree to
10⁻¹⁶ relative).
"""

import math
import sys
from functools import partial

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest
import scipy.sparse as sparse_matrices
from xdsl.dialects import arith, memref
from xdsl.dialects import complex as complexd
from xdsl.dialects import math as mathd
from xdsl.traits import Pure

import revmlir as rv
from derivative_checks import assert_per_argument_close
from python_examples import load_example
from revmlir.ad.derivatives import derivatives
from revmlir.ad.matrices import generate_hessian_matrices
from revmlir.ad.tangent import generate_tangents, hvp_name
from revmlir.ad.tangent_rules import tangents
from revmlir.dialects import get_all_dialects, rev
from revmlir.dialects.primitives import ApplyOp, ReadsItsArrays
from revmlir.frontend.base.derived import derived_backend
from revmlir.frontend.derivatives.forward import _Tangents, run_tangent
from revmlir.interfaces import ForwardDifferentiableOp, NotDifferentiable
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.tangent import AdTangentPass
from test_ad import CASES
from test_ad_complex import (
    holomorphic,
    holomorphic_jax,
    non_holomorphic,
    non_holomorphic_jax,
)

jax.config.update("jax_enable_x64", True)

BACKENDS = ("interpreter", "native")
basics = load_example("paper_basics")
appendix_b = load_example("paper_appendix_b")
sparse = load_example("paper_sparse")
leapfrog_mod = load_example("paper_leapfrog")


def make(backend, pyfunc):
    if isinstance(pyfunc, rv.ReversibleFunction):
        pyfunc = pyfunc.pyfunc
    return rv.reversible(pyfunc, backend=backend)


def _as_tuple(result, n):
    return result if n > 1 else (result,)


def _copy(value):
    return np.array(value) if isinstance(value, np.ndarray) else value


def central_differences(f, args, tangents, h=1e-6):
    """``(f(args + h·t) − f(args − h·t)) / 2h`` for every output that is a
    float, complex number or float array (``None`` for the others)."""

    def shifted(sign):
        values = [
            _copy(a)
            if t is None
            else _copy(a) + sign * h * np.asarray(t)
            if isinstance(a, np.ndarray)
            else a + sign * h * t
            for a, t in zip(args, tangents)
        ]
        return _as_tuple(f(*values), len(args))

    plus, minus = shifted(1.0), shifted(-1.0)
    result = []
    for p, m in zip(plus, minus):
        exact = isinstance(p, int | np.integer) or (isinstance(p, np.ndarray) and p.dtype.kind in "iub")
        result.append(None if exact else (np.asarray(p) - np.asarray(m)) / (2 * h))
    return result


def assert_tangents(found, expected, rtol=1e-6, atol=1e-7):
    assert_per_argument_close(found, expected, rtol, atol)


def assert_jvp(f, args, tangents, rtol=1e-6, atol=1e-7):
    """rv.jvp against f itself and central differences; returns its result."""
    originals = [_copy(a) for a in args]
    outputs, dots = rv.jvp(f, args, tangents)
    for a, original in zip(args, originals):  # the caller's arrays are untouched
        np.testing.assert_array_equal(a, original)
    expected_outputs = _as_tuple(f(*[_copy(a) for a in args]), len(args))
    for got, want in zip(outputs, expected_outputs):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert_tangents(dots, central_differences(f, args, tangents), rtol, atol)
    return outputs, dots


def direction(args, seed=0):
    """A random tangent per float (complex) argument, None for the others."""
    rng = np.random.default_rng(seed)
    result = []
    for a in args:
        if isinstance(a, np.ndarray) and a.dtype == np.float64:
            result.append(rng.normal(size=a.shape))
        elif isinstance(a, complex):
            result.append(complex(*rng.normal(size=2)))
        elif isinstance(a, float):
            result.append(float(rng.normal()))
        else:
            result.append(None)
    return result


# ---------------------------------------------------------------------------
# The reverse-mode test programs: loops, calls (recursive too), ancillas of
# expressions, `y += x * x`, log numbers, rotations, selections
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES)
def test_tangents_equal_finite_differences(case, backend):
    pyfunc, args, _ = CASES[case]
    f = make(backend, pyfunc)
    assert f.specialization_for(*args).backend == backend
    assert_jvp(f, args, direction(args))


def test_known_tangents():
    square = make("native", CASES["square"][0])
    # the shared read `x * x`: 2x·ẋ
    assert rv.jvp(square, (0.5, 3.0), (0.0, 1.0)) == ((9.5, 3.0), (6.0, 1.0))
    # None is a zero tangent; integers have none
    power = make("native", CASES["recursion"][0])
    outputs, dots = rv.jvp(power, (0.5, 1.3, 4), (None, 1.0, None))
    assert outputs == (pytest.approx(0.5 + 1.3**4), 1.3, 4)
    assert dots[0] == pytest.approx(4 * 1.3**3) and dots[2] == 0.0


# ---------------------------------------------------------------------------
# Every tangent rule of a pure op, against JAX
# ---------------------------------------------------------------------------


def every_function(y, x, z, w):
    y += math.exp(x) * math.expm1(z) + math.log(z) * math.log1p(x) - math.log2(z) / math.log10(w)
    y += math.sqrt(z) * math.sin(x) - math.cos(z) * math.tan(x) + math.asin(x) * math.acos(x / 2.0)
    y += math.atan(z) + math.sinh(x) * math.cosh(z) - math.tanh(w) + math.erf(x * z)
    y += np.floor(z * 3.0) * x + np.ceil(w) * z + abs(x - z) + math.copysign(w, x - z)
    y += min(x, z) * max(x, w) + z**x + z**2.5 + math.atan2(x, w) + math.hypot(x, z)
    y += np.fmin(z, w) * np.fmax(x, z)
    y += (x * 3.0 if x > z else -x * z) - (x - z) / (w * w + 1.0) + (-w) + x % z * w
    product = rv.ancilla(rv.ulog(z))  # log numbers: to_log, mul, from_log
    product *= rv.ulog(z + 1.0)
    w += float(product)
    product /= rv.ulog(z + 1.0)
    rv.free(product, rv.ulog(z))
    fixed = rv.ancilla(rv.Fixed[43](0.0))  # fixed point: to_fixed, mul, sub, add, from_fixed
    fixed += rv.Fixed[43](x) * rv.Fixed[43](z) - rv.Fixed[43](x) + rv.Fixed[43](w)
    y += float(fixed)
    fixed -= rv.Fixed[43](x) * rv.Fixed[43](z) - rv.Fixed[43](x) + rv.Fixed[43](w)
    rv.free(fixed)
    tropical = rv.ancilla(rv.tropical(x))  # tropical: to_tropical, from_tropical
    y += float(tropical)
    tropical /= rv.tropical(x)
    rv.free(tropical)


def every_function_jax(y, x, z, w):
    y = y + jnp.exp(x) * jnp.expm1(z) + jnp.log(z) * jnp.log1p(x) - jnp.log2(z) / jnp.log10(w)
    y = y + jnp.sqrt(z) * jnp.sin(x) - jnp.cos(z) * jnp.tan(x) + jnp.arcsin(x) * jnp.arccos(x / 2.0)
    y = y + jnp.arctan(z) + jnp.sinh(x) * jnp.cosh(z) - jnp.tanh(w) + jsp.erf(x * z)
    y = y + jnp.floor(z * 3.0) * x + jnp.ceil(w) * z + jnp.abs(x - z) + jnp.copysign(w, x - z)
    y = y + jnp.minimum(x, z) * jnp.maximum(x, w) + z**x + z**2.5 + jnp.arctan2(x, w) + jnp.hypot(x, z)
    y = y + jnp.fmin(z, w) * jnp.fmax(x, z)
    y = y + jnp.where(x > z, x * 3.0, -x * z) - (x - z) / (w * w + 1.0) + (-w) + jnp.remainder(x, z) * w
    w = w + z * (z + 1.0)
    y = y + x * z - x + w + x
    return y, x, z, w


def test_every_rule_is_exercised():
    """every_function uses every op with a tangent rule that Python reaches
    (the f32 conversions are tested on IR below)."""
    f = make("interpreter", every_function)
    module = f.specialization_for(0.1, 0.4, 0.7, 1.3).module
    used = {type(op) for op in module.walk()}
    expected = {
        op for op in tangents.rules if op.__module__ != complexd.__name__ and op not in (arith.ExtFOp, arith.TruncFOp)
    }
    # arrays: tested below; user primitives: tests/test_user_primitives.py;
    # roundeven: only derived code makes it (the partial of x % d along d),
    # reached by the Hessians of % in test_hessian_against_jax_and_gradient_differences
    assert expected - used == {memref.LoadOp, ApplyOp, mathd.RoundEvenOp}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [0.4, -0.3])
def test_every_rule_against_jax(backend, x):
    f = make(backend, every_function)
    args = (0.1, x, 0.7, 1.3)
    dots = direction(args, seed=3)
    outputs, found = assert_jvp(f, args, dots)
    expected_outputs, expected = jax.jvp(jax.jit(every_function_jax), args, tuple(dots))
    assert_tangents(found, [float(e) for e in expected], rtol=1e-10, atol=1e-12)
    assert_tangents(outputs, [float(e) for e in expected_outputs], rtol=1e-12)


F32_CONVERSIONS = """
rev.func @convert(%y: f64, %x: f32) {
  %e = arith.extf %x : f32 to f64
  %s = arith.mulf %e, %e : f64
  %y1 = rev.add %y, %s : f64
  %t = arith.truncf %y1 : f64 to f32
  %c = math.sin %t : f32
  %x1 = rev.add %x, %c : f32
  rev.return %y1, %x1 : f64, f32
}
ad.tangent @convert
"""


def test_f32_conversion_rules():
    module = parse_module(F32_CONVERSIONS)
    AdTangentPass().apply(make_context(), module)
    module.verify()
    interpreter = RevInterpreter(module)
    y, x, dy, dx = 0.25, 0.5, 0.5, 1.0
    _, _, d_y, d_x = interpreter.call("convert.tan", y, x, dy, dx)
    y1 = y + x * x
    assert d_y == pytest.approx(dy + 2 * x * dx)
    assert d_x == pytest.approx(dx + math.cos(y1) * d_y, rel=1e-6)


# ---------------------------------------------------------------------------
# Complex numbers (the paper's complex log) and stacks
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "pyfunc, twin, args",
    [
        (holomorphic, holomorphic_jax, (0.5 + 0.2j, 1.1 - 0.4j, 0.3)),
        (non_holomorphic, non_holomorphic_jax, (0.5 + 0.2j, 1.1 - 0.4j, 0.3)),
        (basics.complex_log, None, (0j, 3 - 4j)),
        (basics.complex_log_routine, None, (0j, 3 - 4j)),
    ],
    ids=["holomorphic", "non_holomorphic", "complex_log", "complex_log_routine"],
)
def test_complex_tangents(backend, pyfunc, twin, args):
    f = make(backend, pyfunc)
    dots = direction(args, seed=5)
    _, found = assert_jvp(f, args, dots)
    if twin is None:  # complex log: log|x| + i arg x, whose tangent is ẋ / x
        twin = lambda y, x: (y + jnp.log(jnp.abs(x)) + 1j * jnp.angle(x), x)
        assert found[0] == pytest.approx(dots[0] + dots[1] / args[1])
    _, expected = jax.jvp(jax.jit(twin), args, tuple(dots))
    assert_tangents(found, [complex(e) for e in expected], rtol=1e-10, atol=1e-12)


def float_stack(y, x):
    s = rv.stack(float)
    t = rv.ancilla(0.0)
    t += x * x
    rv.push(s, t)  # t ends on the stack
    rv.copy_push(s, x)
    y += math.sin(x) * 2.0
    rv.copy_pop(s, x)
    t = rv.pop(s)
    y += t * x
    t -= x * x
    rv.free(t)
    rv.free(s)


@pytest.mark.parametrize("backend", ["interpreter", "auto"])
def test_stacks_of_floats_carry_tangent_stacks(backend):
    f = rv.reversible(float_stack, backend=backend)
    _, dots = assert_jvp(f, (0.5, 1.2), (0.25, 1.0))
    assert dots[0] == pytest.approx(0.25 + (2 * math.cos(1.2) + 3 * 1.2**2))


# ---------------------------------------------------------------------------
# Arrays: shadow tangent arrays (the paper's programs), against JAX
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_affine_against_jax(backend):
    f = make(backend, appendix_b.i_affine)
    rng = np.random.default_rng(1)
    args = (rng.normal(size=3), rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=4))
    dots = direction(args, seed=2)
    _, found = assert_jvp(f, args, dots)
    twin = lambda y, W, b, x: (y + W @ x + b, W, b, x)
    _, expected = jax.jvp(jax.jit(twin), args, tuple(dots))
    assert_tangents(found, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unitary_rotations(backend):
    """Rotations of array elements by angles read from an array: the angle
    tangents count."""
    f = make(backend, appendix_b.i_umm)
    rng = np.random.default_rng(4)
    args = (rng.normal(size=(3, 2)), rng.normal(size=3))
    _, found = assert_jvp(f, args, direction(args, seed=6))
    assert np.any(found[1] != 0.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mypower_with_log_numbers(backend):
    f = make(backend, appendix_b.mypower)
    _, found = assert_jvp(f, (0.0, 1.7, 5), (None, 1.0, None))
    assert found[0] == pytest.approx(5 * 1.7**4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sparse_csr_mul_against_jax(backend):
    f = make(backend, sparse.csr_mul)
    matrix = sparse_matrices.random(5, 4, density=0.5, random_state=7, format="csr")
    x, y = np.random.default_rng(8).normal(size=4), np.zeros(5)
    args = (y, matrix.data, matrix.indices.astype(np.int64), matrix.indptr.astype(np.int64), x, 1.5)
    dots = direction(args, seed=9)
    _, found = assert_jvp(f, args, dots)
    rows = np.repeat(np.arange(5), np.diff(matrix.indptr))

    def twin(y, data, x, alpha):
        return y + jnp.zeros(5).at[rows].add(data * x[matrix.indices] * alpha)

    expected = jax.jvp(jax.jit(twin), (y, matrix.data, x, 1.5), (dots[0], dots[1], dots[4], dots[5]))[1]
    np.testing.assert_allclose(found[0], expected, rtol=1e-12, atol=1e-12)
    assert found[2] is None and found[3] is None  # integer arrays carry none


def leapfrog_jax(x, v, m, G, dt, nsteps):
    def kick(v, x, h):
        d = x[:, None, :] - x[None, :, :]
        r = jnp.sqrt(jnp.sum(d * d, axis=-1) + jnp.eye(x.shape[0]))
        a = G * m[None, :, None] * -d / (r**3)[:, :, None] * (1 - jnp.eye(x.shape[0]))[:, :, None]
        return v + jnp.sum(a, axis=1) * h

    v = kick(v, x, dt / 2)
    for _ in range(nsteps):
        x = x + v * dt
        v = kick(v, x, dt)
    return x, v


@pytest.mark.parametrize("backend", BACKENDS)
def test_leapfrog_against_jax(backend):
    f = make(backend, leapfrog_mod.leapfrog)
    rng = np.random.default_rng(10)
    x, v, m = rng.normal(size=(3, 3)), rng.normal(size=(3, 3)) * 0.1, rng.uniform(1, 2, size=3)
    args = (x, v, m, 0.5, 0.01, 3)
    dots = direction(args, seed=11)
    _, found = assert_jvp(f, args, dots, rtol=1e-5, atol=1e-8)
    expected = jax.jvp(jax.jit(lambda *a: leapfrog_jax(*a, 3)), args[:5], tuple(dots[:5]))[1]
    np.testing.assert_allclose(found[0], expected[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(found[1], expected[1], rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------
# Hessians, forward over reverse
# ---------------------------------------------------------------------------


def gradient_differences(f, args, iloss, h=1e-5):
    """The Hessian by central differences of rv.gradient, flattened like
    rv.hessian's."""
    floats = [
        i for i, a in enumerate(args) if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype == np.float64)
    ]

    def flat_gradient(values):
        g = rv.gradient(f, values, iloss=iloss)
        return np.concatenate([np.ravel(g[i]) for i in floats])

    columns = []
    for i in floats:
        for index in np.ndindex(np.shape(args[i])):
            plus, minus = [_copy(a) for a in args], [_copy(a) for a in args]
            if isinstance(args[i], np.ndarray):
                plus[i][index] += h
                minus[i][index] -= h
            else:
                plus[i] += h
                minus[i] -= h
            columns.append((flat_gradient(plus) - flat_gradient(minus)) / (2 * h))
    return np.stack(columns, axis=1)


def flat_jax_hessian(twin, args, iloss):
    """jax.hessian of output iloss over the flattened float arguments."""
    floats = [
        i for i, a in enumerate(args) if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype == np.float64)
    ]
    sizes = [int(np.size(args[i])) for i in floats]

    def scalar(flat):
        values, start = list(args), 0
        for i, size in zip(floats, sizes):
            part = flat[start : start + size]
            values[i] = part.reshape(np.shape(args[i])) if isinstance(args[i], np.ndarray) else part[0]
            start += size
        return twin(*values)[iloss]

    flat = np.concatenate([np.ravel(args[i]) for i in floats])
    return np.asarray(jax.jit(jax.hessian(scalar))(flat))


def quadratic_form(e, A, x, c):
    """e += xᵀ A x + Σ c·sin(x_i)·x_0: the Hessian couples A, x and c."""
    for i in range(len(x)):
        for j in range(len(x)):
            e += x[i] * A[i, j] * x[j]
        e += c * math.sin(x[i]) * x[0]


def quadratic_form_jax(e, A, x, c):
    return (e + x @ A @ x + jnp.sum(c * jnp.sin(x) * x[0]), A, x, c)


def through_ancilla_arrays(e, x, c):
    """e += Σ (c·sin(x_i))² + Σ x_i·x_{i+1}, the sines in an ancilla array
    (rv.zeros) the routine uncomputes, the products in a 2-D one freed by
    hand: their tangents and gradients live as long as the arrays."""
    with rv.routine() as r:
        s = rv.zeros(len(x))
        for i in range(len(x)):
            s[i] += c * math.sin(x[i])
    for i in range(len(x)):
        e += s[i] * s[i]
    ~r
    p = rv.zeros((len(x), 1))
    for i in range(len(x) - 1):
        p[i, 0] += x[i] * x[i + 1]
        e += p[i, 0]
        p[i, 0] -= x[i] * x[i + 1]
    rv.free(p)


def through_ancilla_arrays_jax(e, x, c):
    return (e + jnp.sum((c * jnp.sin(x)) ** 2) + jnp.sum(x[:-1] * x[1:]), x, c)


@pytest.mark.parametrize(
    "backend, pyfunc, twin, args, iloss",
    [
        ("native", every_function, every_function_jax, (0.1, 0.4, 0.7, 1.3), 0),
        ("native", every_function, every_function_jax, (0.1, -0.3, 0.7, 1.3), 3),
        *[
            (
                backend,
                quadratic_form,
                quadratic_form_jax,
                (0.5, np.arange(4.0).reshape(2, 2) / 3, np.array([0.3, -0.7]), 1.1),
                0,
            )
            for backend in BACKENDS
        ],
        ("native", through_ancilla_arrays, through_ancilla_arrays_jax, (0.2, np.array([0.3, -0.7, 1.1]), 0.8), 0),
    ],
    ids=["scalars", "scalars_other_loss", *[f"arrays-{b}" for b in BACKENDS], "ancilla_arrays"],
)
def test_hessian_against_jax_and_gradient_differences(backend, pyfunc, twin, args, iloss):
    """Native code on every program; the interpreter (which runs the same
    generated programs, and which the engine-parity tests compare with
    native code) on the one with arrays."""
    f = make(backend, pyfunc)
    originals = [_copy(a) for a in args]
    hessian = rv.hessian(f, args, iloss=iloss)
    for a, original in zip(args, originals):
        np.testing.assert_array_equal(a, original)
    np.testing.assert_allclose(hessian, flat_jax_hessian(twin, args, iloss), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(hessian, gradient_differences(f, args, iloss), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["transcendental", "control_then", "calls", "recursion", "instructions"])
def test_hessian_of_reverse_mode_programs(case):
    pyfunc, args, losses = CASES[case]
    f = make("native", pyfunc)
    for iloss in losses:
        np.testing.assert_allclose(
            rv.hessian(f, args, iloss=iloss), gradient_differences(f, args, iloss), rtol=1e-5, atol=1e-6
        )


def test_hvp_by_argument():
    f = make("native", quadratic_form)
    A, x = np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.3, -0.7])
    products = rv.hvp(f, (0.0, A, x, 1.1), (None, None, np.array([1.0, 0.0]), None))
    # ∂²e/∂x∂x₀ = (A + Aᵀ)[:, 0] + the sin terms; ∂²e/∂A∂x₀ = x ⊗ e₀ + e₀ ⊗ x
    assert products[0] == 0.0
    np.testing.assert_allclose(products[1], [[2 * 0.3, -0.7], [-0.7, 0.0]])
    expected_x = (A + A.T)[:, 0] + 1.1 * np.array([2 * math.cos(0.3) - 0.3 * math.sin(0.3), math.cos(-0.7)])
    np.testing.assert_allclose(products[2], expected_x)
    assert products[3] == pytest.approx(math.sin(0.3) + 0.3 * math.cos(0.3) + math.sin(-0.7))


def borrow_then_loop(y, x, ya, xa):
    ya[1] -= xa[0]
    for i in range(2):
        y += xa[1] * x


def borrow_then_loop_jax(y, x, ya, xa):
    return y + 2 * xa[1] * x, x, ya.at[1].add(-xa[0]), xa


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_where_the_gradient_program_borrows_across_a_loop(backend):
    """``@f.grad.loss0`` merges f's last update of ``ya[1]`` with the
    adjoint's undo of it into one borrow around both loops; its tangent
    recomputes the index inside the loops and must put ``ya[1]`` back with
    the take's own index value (it did not verify)."""
    f = make(backend, borrow_then_loop)
    args = (0.0, 1.0, np.zeros(2), np.array([0.5, 2.0]))
    np.testing.assert_array_equal(rv.hessian(f, args), flat_jax_hessian(borrow_then_loop_jax, args, 0))
    assert rv.hessian(f, args, wrt=(1,)).tolist() == [[0.0]]
    products = rv.hvp(f, args, (None, 1.0, None, None))
    assert products[:2] == (0.0, 0.0)
    np.testing.assert_array_equal(products[2], [0.0, 0.0])
    np.testing.assert_array_equal(products[3], [0.0, 2.0])


def test_a_derived_function_that_does_not_verify_is_an_internal_error_at_f():
    """A derived module the verifier rejects is revmlir's mistake, not the
    user's: said so, at f's definition, with the rule it breaks."""
    f = make("interpreter", borrow_then_loop)
    spec = f.specialization_for(0.0, 1.0, np.zeros(2), np.array([0.5, 2.0]))

    def unbalanced(module, names):
        put = next(op for op in module.walk() if op.name == "rev.put")
        put.detach()
        put.erase()  # the element taken is never put back

    with pytest.raises(rv.ReversibleSyntaxError, match="internal error: the broken of borrow_then_loop") as error:
        derived_backend(spec, "broken", unbalanced)
    assert error.value.lineno == borrow_then_loop.__code__.co_firstlineno
    assert error.value.filename == __file__


# ---------------------------------------------------------------------------
# Vector mode: @f.tanL carries L tangents per value; every lane must equal
# the one-lane tangent program along its own direction
# ---------------------------------------------------------------------------


def lanes_jvp(f, args, directions):
    """Run ``@f.tanL`` once for ``L = len(directions)``; returns each lane's
    output tangents, one per argument that carries one."""
    spec = f.specialization_for(*args)
    lanes = len(directions)
    _, backend = derived_backend(spec, f"tangent, {lanes} lanes", partial(generate_tangents, lanes=lanes))
    plan = _Tangents.of(spec)
    dots = [dot for d in directions for dot in plan.inputs(spec, args, d, "the tangent")]
    results = backend.call(spec.name + f".tan{lanes}", *spec.private_copies(args), *dots)[len(args) :]
    c = len(plan.carrying)
    return [results[lane * c : (lane + 1) * c] for lane in range(lanes)]


def one_lane_jvp(f, args, tangents):
    spec = f.specialization_for(*args)
    _, backend = derived_backend(spec, "tangent", generate_tangents)
    return list(run_tangent(spec, backend, args, tangents)[1].values())


rng_vector = np.random.default_rng(7)
VECTOR_PROGRAMS = {
    **{case: (pyfunc, args, BACKENDS) for case, (pyfunc, args, _) in CASES.items()},
    "affine_arrays": (
        appendix_b.i_affine,
        (
            rng_vector.normal(size=3),
            rng_vector.normal(size=(3, 4)),
            rng_vector.normal(size=3),
            rng_vector.normal(size=4),
        ),
        BACKENDS,
    ),
    "unitary_rotations": (appendix_b.i_umm, (rng_vector.normal(size=(3, 2)), rng_vector.normal(size=3)), BACKENDS),
    "float_stack": (float_stack, (0.5, 1.2), ("interpreter", "auto")),
}


@pytest.mark.parametrize(
    "case, backend",
    [(case, backend) for case, (_, _, backends) in VECTOR_PROGRAMS.items() for backend in backends],
)
def test_vector_mode_lanes_equal_one_direction_at_a_time(case, backend):
    pyfunc, args, _ = VECTOR_PROGRAMS[case]
    f = make(backend, pyfunc)
    directions = [direction(args, seed) for seed in range(3)]
    lanes = lanes_jvp(f, args, directions)
    assert len(lanes) == 3
    for lane, tangents in zip(lanes, directions):
        assert_per_argument_close(lane, one_lane_jvp(f, args, tangents), rtol=1e-13, atol=1e-14)
    # the lanes are independent: different directions, different tangents
    assert not np.allclose(
        np.concatenate([np.ravel(t) for t in lanes[0]]), np.concatenate([np.ravel(t) for t in lanes[1]])
    )


@pytest.mark.parametrize(
    "case, backend",
    [(case, backend) for case, (_, _, backends) in VECTOR_PROGRAMS.items() for backend in backends],
)
def test_vector_mode_adjoint_lanes_equal_one_cotangent_at_a_time(case, backend):
    """Reverse mode's vector mode: every lane of ``@f.adj3``
    (``pullback.batch``) is the one-lane pullback of its own cotangent (same
    programs as above)."""
    pyfunc, args, _ = VECTOR_PROGRAMS[case]
    f = make(backend, pyfunc)
    outputs, pullback = rv.vjp(f, *args)
    cotangents = [direction(outputs, seed) for seed in range(3)]
    lanes = pullback.batch(cotangents)
    assert len(lanes) == 3
    for lane, cotangent in zip(lanes, cotangents):
        assert_per_argument_close(lane, pullback(*cotangent), rtol=1e-13, atol=1e-14)
    flat = [
        np.concatenate([np.ravel(np.asarray(g if g is not None else 0.0, dtype=complex)) for g in lane])
        for lane in lanes
    ]
    assert not np.allclose(flat[0], flat[1])


@pytest.mark.parametrize("lanes", [1, 3])
def test_hessian_and_jacobian_with_lanes(monkeypatch, lanes):
    """8 columns (rows): with 3 lanes the last run has an idle lane, which
    must not be gathered; ``wrt`` makes the Hessian a range of columns."""
    monkeypatch.setattr(sys.modules["revmlir.frontend.derivatives.forward"], "HESSIAN_LANES", lanes)
    monkeypatch.setattr(sys.modules["revmlir.frontend.derivatives.jacobian"], "JACOBIAN_LANES", lanes)
    monkeypatch.setattr(sys.modules["revmlir.frontend.derivatives.jacobian"], "REVERSE_JACOBIAN_LANES", lanes)
    f = make("native", quadratic_form)
    args = (0.5, np.arange(4.0).reshape(2, 2) / 3, np.array([0.3, -0.7]), 1.1)
    expected = flat_jax_hessian(quadratic_form_jax, args, 0)
    np.testing.assert_allclose(rv.hessian(f, args), expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(rv.hessian(f, args, wrt=(2, 3)), expected[5:, 5:], rtol=1e-12, atol=1e-13)
    jacobian = rv.jacobian(f, args, mode="forward")
    np.testing.assert_allclose(jacobian, rv.jacobian(f, args, mode="reverse"), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(
        jacobian[0, 5:7], jax.jit(jax.grad(lambda x: quadratic_form_jax(*args[:2], x, args[3])[0]))(args[2])
    )


def test_the_hessian_function_runs_only_its_columns():
    """``@f.hessian`` calls the Hessian-vector products of its columns and
    nothing else: each runs the gradient it differentiates, so a gradient
    run before them was work nothing read (it took a third of a small
    Hessian's time).  The matrix is still JAX's."""
    f = make("native", quadratic_form)
    args = (0.5, np.arange(4.0).reshape(2, 2) / 3, np.array([0.3, -0.7]), 1.1)
    spec = f.specialization_for(*args)
    module = spec.module.clone()
    (function,) = generate_hessian_matrices(module, [spec.name], loss=0, lanes=2)
    callees = {op.callee.root_reference.data for op in function.walk() if isinstance(op, rev.CallOp | rev.UncallOp)}
    assert callees == {hvp_name(spec.name, 2, 0)}
    expected = flat_jax_hessian(quadratic_form_jax, args, 0)
    np.testing.assert_allclose(rv.hessian(f, args), expected, rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------------------
# The tangent program is a reversible function; the API checks its inputs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_tangent_program_runs_backwards(backend):
    """@f.tan is verified (derived_backend verifies) and invertible: its
    inverse takes the outputs and output tangents back to the inputs.
    Native code compiled it forward only; the uncall compiles the inverses."""
    f = make(backend, CASES["control_then"][0])
    args = CASES["control_then"][1]
    spec = f.specialization_for(*args)
    _, runner = derived_backend(spec, "tangent", generate_tangents)
    assert runner.__class__.__name__ == ("NativeModule" if backend == "native" else "RevInterpreter")
    forward = runner.call(spec.name + ".tan", *args, 0.5, -0.25)
    back = runner.uncall(spec.name + ".tan", *forward)
    np.testing.assert_allclose(back, (*args, 0.5, -0.25), rtol=1e-10, atol=1e-12)


def test_api_errors():
    f = make("native", CASES["multiplier"][0])
    with pytest.raises(TypeError, match="3 tangents"):
        rv.jvp(f, (1.0, 2.0, 3.0), (1.0,))
    with pytest.raises(TypeError, match="3 tangents"):
        rv.jvp(~f, (1.0, 2.0, 3.0), (None, None))
    with pytest.raises(TypeError, match="must be a real number"):
        rv.jvp(f, (1.0, 2.0, 3.0), (None, np.zeros(2), None))
    with pytest.raises(TypeError, match="not a float scalar"):
        rv.hessian(make("native", CASES["recursion"][0]), (0.5, 1.3, 4), iloss=2)
    with pytest.raises(TypeError, match="log number"):
        rv.hvp(rv.reversible(_log_argument), (0.0, 2.0), (None, 1.0))


def _log_argument(out, x: rv.ULog):
    out += float(x)


# ---------------------------------------------------------------------------
# Coverage: no op without a tangent rule or a mark
# ---------------------------------------------------------------------------


def all_ops():
    dialects = get_all_dialects()
    for name in ("rev", "anc"):
        yield from dialects[name]().operations


@pytest.mark.parametrize("op", list(all_ops()), ids=lambda op: op.name)
def test_every_op_has_a_tangent_rule_or_a_mark(op):
    """An op has a tangent rule (ForwardDifferentiableOp), is a pure
    expression with a rule in revmlir/ad/tangent_rules.py, or is marked
    NotDifferentiable(reason); on an op with a tangent rule the mark gives
    the reason it has no adjoint (the snapshots of checkpointed gradients)."""
    forward = issubclass(op, ForwardDifferentiableOp)
    # an expression: pure, or a call reading the arrays it is given
    rule = (op.has_trait(Pure) or op.has_trait(ReadsItsArrays)) and op in tangents
    marked = op.has_trait(NotDifferentiable) and not forward
    assert [forward, rule, marked].count(True) == 1, (
        f"{op.name}: tangent rule={forward} pure rule={rule} marked={marked}"
    )


def test_every_derivative_rule_has_a_tangent_rule():
    missing = [op.name for op in derivatives.rules if op not in tangents]
    assert not missing, f"pure ops with an adjoint but no tangent rule: {missing}"
