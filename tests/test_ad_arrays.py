"""Gradients of arrays and stacks of floats: shadow arrays (``rv.gradient``,
``rv.vjp``).

Each program is checked against JAX (the same function written with
``jax.numpy``) and against central finite differences, on the interpreter and
in native code; the caller's arrays must not change.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from xdsl.traits import SymbolTable

import revmlir as rv
from derivative_checks import assert_per_argument_close
from python_examples import load_example
from revmlir.frontend.base.derived import adjoint_backend

jax.config.update("jax_enable_x64", True)

BACKENDS = ("interpreter", "native")


def make(backend, pyfunc):
    return rv.reversible(pyfunc, backend=backend)


def finite_difference_vjp(f, args, cotangents, h=1e-6):
    """⟨cotangents, ∂f(args)/∂a⟩ for every float element of every float
    argument, by central differences."""

    def weighted(values):
        outputs = f(*[np.array(v) if isinstance(v, np.ndarray) else v for v in values])
        total = 0.0
        for out, cot in zip(outputs, cotangents):
            if cot is not None:
                total += float(np.sum(np.asarray(out) * np.asarray(cot)))
        return total

    gradients = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.dtype == np.float64:
            g = np.zeros_like(a)
            for index in np.ndindex(a.shape):
                step = h * max(1.0, abs(a[index]))
                plus, minus = list(args), list(args)
                plus[i], minus[i] = a.copy(), a.copy()
                plus[i][index] += step
                minus[i][index] -= step
                g[index] = (weighted(plus) - weighted(minus)) / (2 * step)
            gradients.append(g)
        elif isinstance(a, float):
            step = h * max(1.0, abs(a))
            plus, minus = list(args), list(args)
            plus[i], minus[i] = a + step, a - step
            gradients.append((weighted(plus) - weighted(minus)) / (2 * step))
        else:
            gradients.append(None)
    return gradients


# ---------------------------------------------------------------------------
# Programs and their JAX twins
# ---------------------------------------------------------------------------


def matvec(y, A, x, alpha):
    """y += alpha · A x, then alpha += Σ y²/2 (reads y after writing it)."""
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            y[i] += A[i, j] * x[j] * alpha
    for i in range(len(y)):
        alpha += y[i] * y[i] * 0.5


def matvec_jax(y, A, x, alpha):
    y = y + alpha * A @ x
    return y, A, x, alpha + 0.5 * jnp.sum(y * y)


def in_place_recurrence(u, c):
    """u[i] += sin(u[i-1]) · c: each element reads the previous, updated one."""
    for i in range(1, len(u)):
        u[i] += math.sin(u[i - 1]) * c
    c += u[len(u) - 1] * u[0]


def in_place_recurrence_jax(u, c):
    for i in range(1, u.shape[0]):
        u = u.at[i].add(jnp.sin(u[i - 1]) * c)
    return u, c + u[-1] * u[0]


def swap_and_rotate(v, theta):
    """Element swaps and a rotation of two elements by a traced angle."""
    v[0], v[2] = v[2], v[0]
    rv.rot(v[0], v[1], theta)
    theta += v[0] * v[1]


def swap_and_rotate_jax(v, theta):
    v = v[jnp.array([2, 1, 0])]
    a, b = v[0], v[1]
    c, s = jnp.cos(theta), jnp.sin(theta)
    v = v.at[0].set(a * c - b * s).at[1].set(a * s + b * c)
    return v, theta + v[0] * v[1]


@rv.reversible  # called by name
def axpy(y, x, a):
    for i in range(len(y)):
        y[i] += x[i] * a


def calls_with_arrays(y, x, a, n):
    """Arrays passed to a call and an uncall (the uncall's adjoint is the
    adjoint of the inverse)."""
    axpy(y, x, a)
    axpy(y, x, a)
    (~axpy)(x, y, a)  # x -= y · a
    for i in range(n):
        a += x[i] * y[i]


def calls_with_arrays_jax(y, x, a):
    y = y + 2 * a * x
    x = x - a * y
    return y, x, a + jnp.sum(x * y)


def stack_of_floats(x, total):
    """Values moved onto a stack and back (uncomputing a running product)."""
    s = rv.stack(float)
    for i in range(len(x)):
        t = rv.ancilla(0.0)
        t += x[i] * x[i]
        rv.push(s, t)
    for i in range(len(x)):
        t = rv.pop(s)
        total += t * math.exp(t)
        rv.copy_push(s, t)
        total += t
        rv.copy_pop(s, t)
        t -= x[len(x) - 1 - i] * x[len(x) - 1 - i]
        rv.free(t)
    rv.free(s)


def stack_of_floats_jax(x, total):
    t = x * x
    return x, total + jnp.sum(t * jnp.exp(t)) + jnp.sum(t)


def ancilla_arrays(y, x, c):
    """Ancilla arrays (rv.zeros): one allocated in a routine, lives across it
    and is uncomputed; one allocated in a loop body (on the heap natively),
    2-D, freed by hand in the same iteration."""
    with rv.routine() as r:
        s = rv.zeros(len(x))
        for i in range(len(x)):
            s[i] += math.sin(x[i]) * c
    for i in range(len(x)):
        y += s[i] * s[i]
        w = rv.zeros((2, len(x)))
        w[1, i] += s[i] * x[i]
        y += w[1, i] * 0.25
        w[1, i] -= s[i] * x[i]
        rv.free(w)
    ~r


def ancilla_arrays_jax(y, x, c):
    s = jnp.sin(x) * c
    return y + jnp.sum(s * s) + 0.25 * jnp.sum(s * x), x, c


CASES = {
    "matvec": (
        matvec,
        matvec_jax,
        lambda r: (np.zeros(3), r.normal(size=(3, 4)), r.normal(size=4), 0.7),
    ),
    "in_place_recurrence": (
        in_place_recurrence,
        in_place_recurrence_jax,
        lambda r: (r.normal(size=5), 1.3),
    ),
    "swap_and_rotate": (
        swap_and_rotate,
        swap_and_rotate_jax,
        lambda r: (r.normal(size=3), 0.4),
    ),
    "stack_of_floats": (
        stack_of_floats,
        stack_of_floats_jax,
        lambda r: (r.normal(size=4) * 0.5, 0.0),
    ),
    "ancilla_arrays": (
        ancilla_arrays,
        ancilla_arrays_jax,
        lambda r: (0.3, r.normal(size=4), 1.2),
    ),
}


def random_cotangents(rng, args):
    return [rng.normal(size=a.shape) if isinstance(a, np.ndarray) else float(rng.normal()) for a in args]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES)
def test_vjp_equals_jax_and_finite_differences(case, backend):
    program, twin, make_args = CASES[case]
    rng = np.random.default_rng(7)
    f = make(backend, program)
    args = make_args(rng)
    before = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
    cotangents = random_cotangents(rng, args)

    outputs, pullback = rv.vjp(f, *args)
    found = pullback(*cotangents)

    expected_outputs, jax_pullback = jax.vjp(twin, *args)
    for out, exp in zip(outputs, expected_outputs):
        np.testing.assert_allclose(out, exp, rtol=1e-12, atol=1e-12)
    assert_per_argument_close(found, jax_pullback(tuple(jnp.asarray(c) for c in cotangents)))
    assert_per_argument_close(found, finite_difference_vjp(f, args, cotangents), rtol=1e-6, atol=1e-7)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are untouched
    assert_per_argument_close(pullback(*cotangents), found, rtol=0, atol=0)  # repeatable


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_a_scalar_loss_with_integer_arguments(backend):
    f = make(backend, calls_with_arrays)
    rng = np.random.default_rng(3)
    y, x = rng.normal(size=4), rng.normal(size=4)
    gradients = rv.gradient(f, (y, x, 0.3, 4), iloss=2)
    _, pullback = jax.vjp(calls_with_arrays_jax, y, x, 0.3)
    expected = pullback((jnp.zeros(4), jnp.zeros(4), 1.0))
    assert_per_argument_close(gradients[:3], expected)
    assert gradients[3] == 0.0  # an integer


def test_adjoint_of_integer_arrays_is_their_inverse():
    @rv.reversible
    def gather(y, x, index):
        for i in range(len(index)):
            y += x[index[i]] * x[index[i]]
            index[i] += 1  # an integer array carries no gradient

    x = np.array([1.0, 2.0, 3.0])
    index = np.array([0, 1, 0], dtype=np.int64)
    g = rv.gradient(gather, (0.0, x, index))
    assert g[0] == 1.0
    np.testing.assert_allclose(g[1], [4 * x[0], 2 * x[1], 0.0])  # y = 2 x0² + x1²
    assert g[2] is None
    np.testing.assert_array_equal(index, [0, 1, 0])


def test_the_adjoint_takes_shadow_arrays_in_argument_order():
    f = rv.reversible(matvec)
    args = (np.zeros(2), np.ones((2, 2)), np.ones(2), 1.0)
    module, _ = adjoint_backend(f.specialization_for(*args))
    adjoint = SymbolTable.lookup_symbol(module, "matvec.adj")
    types = [str(t) for t in adjoint.function_type.inputs.data]
    assert types == [
        "memref<?xf64>",
        "memref<?x?xf64>",
        "memref<?xf64>",
        "f64",
        "memref<?xf64>",
        "memref<?x?xf64>",
        "memref<?xf64>",
        "f64",
    ]
    assert [str(t) for t in adjoint.function_type.outputs.data] == ["f64", "f64"]


def test_cotangents_are_checked():
    f = rv.reversible(matvec)
    args = (np.zeros(2), np.ones((2, 2)), np.ones(2), 1.0)
    _, pullback = rv.vjp(f, *args)
    with pytest.raises(
        TypeError, match=r"the cotangent of output #0 of matvec \(argument 'y'\) must have the argument's shape \(2,\)"
    ):
        pullback(np.ones(3), None, None, None)
    with pytest.raises(TypeError, match="takes 4 cotangent"):
        pullback(None)
    with pytest.raises(
        TypeError, match="the cotangent of output #3 of matvec \\(argument 'alpha'\\) must be a real number"
    ):
        pullback(None, None, None, np.ones(2))
    with pytest.raises(TypeError, match="only float scalar outputs can be the loss .*rv.vjp"):
        rv.gradient(f, args, iloss=0)


# ---------------------------------------------------------------------------
# The sparse products of the paper (appendix D.1): closed-form gradients
# ---------------------------------------------------------------------------


def test_sparse_matrix_vector_product_gradients():
    sparse = load_example("paper_sparse")
    A = sp.random(30, 20, density=0.2, format="csr", random_state=4)
    data, indices, indptr = sparse.csr_arrays(A)
    rng = np.random.default_rng(5)
    x, w, alpha = rng.normal(size=20), rng.normal(size=30), 1.7
    _, pullback = rv.vjp(sparse.csr_mul, np.zeros(30), data, indices, indptr, x, alpha)
    g_y, g_data, g_indices, g_indptr, g_x, g_alpha = pullback(w, None, None, None, None, None)
    # L = w · (α A x):  ∂x = α Aᵀw,  ∂α = w·Ax,  ∂A_ij = α w_i x_j,  ∂y = w
    np.testing.assert_allclose(g_x, alpha * (A.T @ w), rtol=1e-12)
    assert g_alpha == pytest.approx(w @ (A @ x), rel=1e-12)
    rows = np.repeat(np.arange(30), np.diff(indptr))
    np.testing.assert_allclose(g_data, alpha * w[rows] * x[indices], rtol=1e-12)
    np.testing.assert_allclose(g_y, w)
    assert g_indices is None and g_indptr is None


def test_sparse_frobenius_product_gradients():
    sparse = load_example("paper_sparse")
    A = sp.random(12, 9, density=0.4, format="csr", random_state=6)
    B = sp.random(12, 9, density=0.4, format="csr", random_state=7)
    a, b = sparse.csr_arrays(A), sparse.csr_arrays(B)
    keeper = np.zeros(18, dtype=bool)
    g = rv.gradient(sparse.csr_dot, (0.0, *a, *b, keeper), iloss=0)
    # r = Σ A∘B:  ∂a_data = B at A's positions, ∂b_data = A at B's positions
    dense_a, dense_b = A.toarray(), B.toarray()
    a_rows = np.repeat(np.arange(12), np.diff(a[2]))
    b_rows = np.repeat(np.arange(12), np.diff(b[2]))
    np.testing.assert_allclose(g[1], dense_b[a_rows, a[1]], rtol=1e-12)
    np.testing.assert_allclose(g[4], dense_a[b_rows, b[1]], rtol=1e-12)
    assert g[0] == 1.0 and g[7] is None
    assert not keeper.any()
