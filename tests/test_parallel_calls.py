"""Calls inside parallel loops that read shared arrays whole, and their
gradients.

A callee's adjoint accumulates into the gradient of every array it reads, so
the adjoint of ``for i in rv.prange(n): f(y[i], x, i)`` passes all of ``ḡx``
to ``@f.adj`` from every iteration.  ``argument_writes`` classifies how each
function changes each array argument (not at all, only by accumulations, or
otherwise); the parallel rule admits a whole array passed to a callee that
only accumulates into it, and the lowering makes those accumulations atomic.
Here the gradients of such loops (a point-wise kernel, and ADBench's GMM
per-point log-likelihood with shared parameters) equal those of the same
function over ``range`` and JAX's, on both engines."""

import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from derivative_checks import assert_per_argument_close
from python_examples import load_example
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.parsing import make_context, parse_module
from revmlir.runtime.native import NativeModule
from revmlir.semantics import Writes, argument_writes

jax.config.update("jax_enable_x64", True)

BACKENDS = ("interpreter", "native")
rng = np.random.default_rng(23)
gmm = load_example("adbench_gmm")
references = load_example("array_references")
preprocess_qs, point_logsumexp = gmm.preprocess_qs, gmm.point_logsumexp


@rv.reversible
def weighted_sines(acc, x, i):
    """``acc += x[i] Σ_j sin(x[j])``: reads all of ``x``."""
    for j in range(len(x)):
        acc += math.sin(x[j]) * x[i]


def pointwise(y, x):
    """``y[i] += f(x, i)`` with ``f`` reading all of ``x``."""
    for i in LOOP(len(y)):  # noqa: F821 (bound per variant)
        weighted_sines(y[i], x, i)


def gmm_points(losses, alphas, means, icf, x):
    """``losses[i] += logsumexp_k(α_k + Σ_j q_kj − ½‖Q_k (x_i − μ_k)‖²)``,
    one call per point (ADBench's kernels), the parameters shared."""
    with rv.routine() as r:
        qdiags = rv.zeros((len(alphas), x.shape[1]))
        sum_qs = rv.zeros(len(alphas))
        preprocess_qs(qdiags, sum_qs, icf)
    for ix in LOOP(x.shape[0]):  # noqa: F821 (bound per variant)
        point_logsumexp(losses[ix], ix, alphas, means, icf, x, qdiags, sum_qs)
    ~r


def jax_pointwise(y, x):
    return y + x[: len(y)] * jnp.sum(jnp.sin(x)), x


def jax_gmm_points(losses, alphas, means, icf, x):
    d = x.shape[1]
    log_diagonal = icf[:, :d]
    placement = references.lower_triangle_placement(d)
    q = jnp.exp(log_diagonal)[:, :, None] * jnp.eye(d) + jnp.einsum("kl,lij->kij", icf[:, d:], placement)
    centred = x[:, None, :] - means[None, :, :]
    main = alphas + jnp.sum(log_diagonal, axis=1) - 0.5 * jnp.sum(jnp.einsum("kij,nkj->nki", q, centred) ** 2, axis=-1)
    return losses + references.logsumexp_reference(jnp, main), alphas, means, icf, x


def pointwise_args():
    return [np.zeros(5), rng.uniform(-1.0, 1.0, 7)]


def gmm_args(points=6, components=3, dims=3):
    return [
        np.zeros(points),
        rng.normal(size=components),
        rng.normal(size=(components, dims)),
        0.3 * rng.normal(size=(components, dims + dims * (dims - 1) // 2)),
        rng.normal(size=(points, dims)),
    ]


CASES = {"pointwise": (pointwise, pointwise_args, jax_pointwise), "gmm": (gmm_points, gmm_args, jax_gmm_points)}


def variants(pyfunc, backend):
    """The function over rv.prange and over range."""
    made = {}
    for name, loop in (("parallel", rv.prange), ("plain", range)):
        function = type(pyfunc)(pyfunc.__code__, {**pyfunc.__globals__, "LOOP": loop}, pyfunc.__name__)
        made[name] = rv.reversible(function, backend=backend)
    return made


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("case", CASES)
def test_gradients_through_calls_in_a_parallel_loop_equal_ranges_and_jax(case):
    pyfunc, make_args, reference = CASES[case]
    args = make_args()
    seeds = [rng.normal(size=a.shape) for a in args]
    found = {}
    # every variant but the plain loop natively, which the rest of the suite
    # runs: the parallel one natively, and both on the reference engine
    for backend, name in (("interpreter", "plain"), ("interpreter", "parallel"), ("native", "parallel")):
        outputs, pullback = rv.vjp(variants(pyfunc, backend)[name], *copies(args))
        found[backend, name] = (outputs, pullback(*seeds))
    assert "rev.for parallel" in variants(pyfunc, "native")["parallel"].specialization_for(*args).text()
    expected_outputs, jax_pullback = jax.vjp(reference, *args)
    expected = [np.asarray(g) for g in jax_pullback(tuple(seeds))]
    for (backend, name), (outputs, gradients) in found.items():
        for got, want in zip(outputs, expected_outputs):
            np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12, atol=1e-14)
        assert_per_argument_close(gradients, expected, rtol=1e-10, atol=1e-12)
        assert_per_argument_close(gradients, found["interpreter", "plain"][1], rtol=1e-12, atol=1e-14)
    assert_per_argument_close(
        found["native", "parallel"][1], found["interpreter", "parallel"][1], rtol=1e-13, atol=1e-15
    )


def squared_rows(s, y, x):
    """``s += Σ_i y_i²`` after ``y[i] += f(x, i)``: a scalar to take the
    Hessian of."""
    for i in LOOP(len(y)):  # noqa: F821 (bound per variant)
        weighted_sines(y[i], x, i)
    for i in range(len(y)):
        s += y[i] * y[i]


def jax_squared_rows(x):
    return jnp.sum((x[:3] * jnp.sum(jnp.sin(x))) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tangents_hessians_and_vector_mode_through_calls_in_a_parallel_loop(backend):
    x = rng.uniform(-1.0, 1.0, 5)
    dx = rng.normal(size=5)
    args = [0.0, np.zeros(3), x]
    expected_tangent = jax.jvp(jax.jit(jax_squared_rows), (x,), (dx,))[1]
    expected_hessian = jax.jit(jax.hessian(jax_squared_rows))(x)
    # the parallel loop (the plain one's tangents and Hessians are test_tangent.py's)
    for function in [variants(squared_rows, backend)["parallel"]]:
        _, tangents = rv.jvp(function, copies(args), [0.0, np.zeros(3), dx])
        np.testing.assert_allclose(tangents[0], expected_tangent, rtol=1e-11)
        hessian = rv.hessian(function, copies(args), iloss=0, wrt=[2])
        np.testing.assert_allclose(np.asarray(hessian).reshape(5, 5), expected_hessian, rtol=1e-10, atol=1e-12)
        _, pullback = rv.vjp(function, *copies(args))
        rows = [[rng.normal(), rng.normal(size=3), rng.normal(size=5)] for _ in range(3)]
        for row, got in zip(rows, pullback.batch(rows)):
            assert_per_argument_close(got, pullback(*row), rtol=1e-12, atol=1e-14)


ADD_AT = """
rev.func @add_at(%g: memref<?xf64>, %j: index, %v: f64) {
  %e = rev.take %g[%j] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %g[%j] : memref<?xf64>
  rev.return %j, %v : index, f64
}
"""

SCATTER = (
    ADD_AT
    + """
rev.func @scatter(%g: memref<?xf64>, %x: memref<?xf64>, %idx: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %j = memref.load %idx[%i] : memref<?xindex>
    %xi = memref.load %x[%i] : memref<?xf64>
    %cj = anc.alloc %j : index
    %cv = anc.alloc %xi : f64
    %cj1, %cv1 = rev.call @add_at(%g, %cj, %cv) : (memref<?xf64>, index, f64) -> (index, f64)
    %c0j = anc.alloc %c0 : index
    %c0j1, %cv2 = rev.uncall @add_at(%g, %c0j, %cv1) : (memref<?xf64>, index, f64) -> (index, f64)
    anc.free %c0j1, %c0 : index
    anc.free %cv2, %xi : f64
    anc.free %cj1, %j : index
    rev.yield
  }
  rev.return %n : index
}
"""
)


def test_a_callees_atomic_accumulations_run_on_every_engine_as_numpy_adds():
    """g[idx[i]] += x[i] and g[0] -= x[i] in callees of a parallel loop: the
    rev interpreter, the lowered std form on the interpreter (atomic adds in
    @add_at and @add_at.inv) and native code agree with numpy."""
    module = parse_module(SCATTER, "scatter.mlir")
    lowered = module.clone()
    RevLowerToStdPass().apply(make_context(), lowered)
    assert str(lowered).count("memref.atomic_rmw") == 2
    n = 40
    x, idx = rng.normal(size=n), rng.integers(0, 6, n)
    expected = rng.normal(size=6)
    start = expected.copy()
    np.add.at(expected, idx, x)
    expected[0] -= x.sum()
    runs = {
        "interpreter": lambda g: RevInterpreter(module).call("scatter", g, x, idx, n),
        "std": lambda g: RevInterpreter(lowered).call_lowered("scatter", g, x, idx, n),
        "native": lambda g: NativeModule.compile(module).call("scatter", g, x, idx, n),
    }
    for run in runs.values():
        g = start.copy()
        run(g)
        np.testing.assert_allclose(g, expected, rtol=1e-13, atol=1e-13)


CLASSIFIED = (
    ADD_AT
    + """
rev.func @recurse(%g: memref<?xf64>, %r: memref<?xf64>, %j: index, %v: f64) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %g, %c0 : memref<?xf64>
  %j2, %v2 = rev.if (%j, %v) : index, f64 attributes {nocheck} pre {
  ^bb0(%pj: index, %pv: f64):
    %more = arith.cmpi ult, %pj, %n : index
    rev.cond %more
  } then {
  ^bb0(%a: index, %b: f64):
    %a1, %b1 = rev.call @add_at(%g, %a, %b) : (memref<?xf64>, index, f64) -> (index, f64)
    %k = memref.load %r[%c0] : memref<?xf64>
    %b2 = rev.add %b1, %k : f64
    %a2, %b3 = rev.call @recurse(%g, %r, %a1, %b2) : (memref<?xf64>, memref<?xf64>, index, f64) -> (index, f64)
    rev.yield %a2, %b3 : index, f64
  } else {
  ^bb0(%a: index, %b: f64):
    rev.yield %a, %b : index, f64
  }
  rev.return %j2, %v2 : index, f64
}

rev.func @negate(%g: memref<?xf64>, %j: index) {
  %e = rev.take %g[%j] : memref<?xf64>
  %e1 = rev.neg %e : f64
  rev.put %e1, %g[%j] : memref<?xf64>
  rev.return %j : index
}

rev.func @mixed(%g: memref<?xf64>, %h: memref<?xf64>, %j: index, %v: f64) {
  %j1, %v1 = rev.call @add_at(%g, %j, %v) : (memref<?xf64>, index, f64) -> (index, f64)
  %j2, %v2 = rev.call @add_at(%h, %j1, %v1) : (memref<?xf64>, index, f64) -> (index, f64)
  %j3 = rev.call @negate(%h, %j2) : (memref<?xf64>, index) -> index
  rev.return %j3, %v2 : index, f64
}
"""
)


def test_argument_writes_classifies_accumulations_through_calls_and_recursion():
    writes = argument_writes(parse_module(CLASSIFIED))
    none, acc, other = Writes.NONE, Writes.ACCUMULATES, Writes.OTHER
    assert writes["add_at"] == (acc, none, none)
    # only accumulations reach %g, through the recursion too; %r is read
    assert writes["recurse"] == (acc, none, none, none)
    assert writes["negate"] == (other, none)
    # %h is accumulated into and negated
    assert writes["mixed"] == (acc, other, none, none)


def test_a_callee_that_writes_a_shared_array_otherwise_is_a_located_error():
    line = inspect.currentframe().f_lineno + 11

    @rv.reversible
    def rotate_into(acc, x, i):
        """Adds into x[0] but reads x too."""
        x[0] += acc
        acc += x[i]

    @rv.reversible
    def uses(y, x):
        for i in rv.prange(len(y)):
            rotate_into(y[i], x, i)

    with pytest.raises(
        rv.ReversibleSyntaxError,
        match=rf"test_parallel_calls.py:{line}:13: an rv.prange loop passes x whole to rotate_into, which writes it",
    ):
        uses(np.zeros(3), np.ones(3))
