"""``rv.prange``: parallel loops from Python.  Outside a reversible function it
is ``range``; inside one it makes a ``rev.for parallel``, whose results and
gradients (``rv.vjp``, vector mode included) equal those of the same function
over ``range`` and JAX's, on both backends; misuse is a located
``ReversibleSyntaxError``."""

import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from derivative_checks import assert_per_argument_close
from revmlir.errors import AdjointError
from revmlir.gpu import toolkit

jax.config.update("jax_enable_x64", True)

BACKENDS = ("interpreter", "native")
rng = np.random.default_rng(17)


@pytest.mark.parametrize("bounds", [(5,), (2, 9), (1, 10, 3), (8, 2, -2), (0,)])
def test_outside_a_reversible_function_prange_is_range(bounds):
    assert list(rv.prange(*bounds)) == list(range(*bounds))


def sine_log(y, x, g, idx, a):
    """y[i] += log(x[i]) sin(x[i]) (private), g[i] += a x[idx[i]] (a gather)."""
    for i in LOOP(len(x)):
        y[i] += math.log(x[i]) * math.sin(x[i])
        g[i] += a * x[idx[i]]


def gmm_like(out, x, means, weights, inv_scales):
    """Per point (in parallel): out[i] += Σ_k w_k exp(-½ Σ_d ((x[i,d] - μ[k,d]) s_k)²);
    the parameters are shared by every point."""
    for i in LOOP(x.shape[0]):
        for k in range(means.shape[0]):
            q = rv.ancilla(0.0)
            for d in range(x.shape[1]):
                q += ((x[i, d] - means[k, d]) * inv_scales[k]) ** 2
            out[i] += weights[k] * math.exp(-0.5 * q)
            for d in reversed(range(x.shape[1])):
                q -= ((x[i, d] - means[k, d]) * inv_scales[k]) ** 2
            rv.free(q)


def variants(pyfunc, backend):
    """The function over rv.prange and over range."""
    made = {}
    for name, loop in (("parallel", rv.prange), ("plain", range)):
        namespace = {**pyfunc.__globals__, "LOOP": loop}
        function = type(pyfunc)(pyfunc.__code__, namespace, pyfunc.__name__)
        made[name] = rv.reversible(function, backend=backend)
    return made


def sine_log_args(n=10):
    return [np.zeros(n), rng.uniform(0.5, 2.0, n), rng.normal(size=n), rng.integers(0, n, n), 0.8]


def gmm_args(points=7, components=3, dims=2):
    return [
        np.zeros(points),
        rng.normal(size=(points, dims)),
        rng.normal(size=(components, dims)),
        rng.uniform(0.5, 1.5, components),
        rng.uniform(0.5, 1.5, components),
    ]


def jax_sine_log(y, x, g, idx, a):
    return y + jnp.log(x) * jnp.sin(x), x, g + a * x[idx], idx, a


def jax_gmm(out, x, means, weights, inv_scales):
    q = jnp.sum(((x[:, None, :] - means[None, :, :]) * inv_scales[None, :, None]) ** 2, axis=2)
    return out + jnp.sum(weights[None, :] * jnp.exp(-0.5 * q), axis=1), x, means, weights, inv_scales


CASES = {"sine_log": (sine_log, sine_log_args, jax_sine_log), "gmm_like": (gmm_like, gmm_args, jax_gmm)}


@pytest.fixture(params=[(case, backend) for case in CASES for backend in BACKENDS], ids="-".join)
def program(request):
    """A case's function over rv.prange and over range, its arguments and
    its JAX reference, on one backend."""
    case, backend = request.param
    pyfunc, make_args, reference = CASES[case]
    return variants(pyfunc, backend), make_args(), reference


def test_prange_compiles_to_a_parallel_loop_with_ranges_results(program):
    made, args, reference = program
    spec = made["parallel"].specialization_for(*args)
    assert "rev.for parallel" in spec.text()
    parallel, plain = made["parallel"](*copies(args)), made["plain"](*copies(args))
    expected = reference(*args)
    for p, s, e in zip(parallel, plain, expected):
        np.testing.assert_allclose(p, s, rtol=1e-14)
        np.testing.assert_allclose(p, np.asarray(e), rtol=1e-13)
    back = (~made["parallel"])(*parallel)
    for b, a in zip(back, args):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-13)


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def cotangents(args):
    return [
        rng.normal(size=a.shape)
        if isinstance(a, np.ndarray) and a.dtype == np.float64
        else (1.3 if isinstance(a, float) else None)
        for a in args
    ]


def test_prange_gradients_equal_ranges_and_jax(program):
    made, args, reference = program
    seeds = cotangents(args)
    found = {}
    for name, function in made.items():
        _, pullback = rv.vjp(function, *args)
        found[name] = pullback(*seeds)
    floats = [
        i for i, a in enumerate(args) if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype == np.float64)
    ]
    _, jax_pullback = jax.vjp(
        lambda *fl: reference(*[fl[floats.index(i)] if i in floats else a for i, a in enumerate(args)]),
        *[args[i] for i in floats],
    )
    jax_seeds = tuple(
        seeds[i] if seeds[i] is not None else np.zeros_like(np.asarray(args[i]), dtype=np.int64)
        for i in range(len(args))
    )
    wanted = jax_pullback(jax_seeds)
    expected = [None] * len(args)
    for position, value in zip(floats, wanted):
        expected[position] = np.asarray(value)
    assert_per_argument_close(found["parallel"], expected, rtol=1e-11, atol=1e-13)
    assert_per_argument_close(found["parallel"], found["plain"], rtol=1e-12, atol=1e-14)


def test_vector_mode_pulls_back_several_cotangents_through_a_parallel_loop():
    made = variants(gmm_like, "native")
    args = gmm_args()
    _, pullback = rv.vjp(made["parallel"], *args)
    rows = [cotangents(args) for _ in range(3)]
    batched = pullback.batch(rows)
    for row, got in zip(rows, batched):
        assert_per_argument_close(got, pullback(*row), rtol=1e-12, atol=1e-14)


def test_a_prange_body_that_breaks_the_rule_is_a_located_error():
    line = inspect.currentframe().f_lineno + 5

    @rv.reversible
    def shift(y):
        for i in rv.prange(len(y) - 1):
            y[i] += y[i + 1]

    with pytest.raises(
        rv.ReversibleSyntaxError,
        match=rf"test_prange.py:{line}:21: an rv.prange loop reads y\[…\] at an index other than the loop's i, and the loop updates y",
    ):
        shift(np.zeros(4))


def test_a_prange_updating_an_outer_variable_is_a_located_error():
    line = inspect.currentframe().f_lineno + 4

    @rv.reversible
    def total(s, x):
        for i in rv.prange(len(x)):
            s += x[i]

    with pytest.raises(
        rv.ReversibleSyntaxError, match=rf"test_prange.py:{line}:9: a parallel loop updates 's', defined outside it"
    ):
        total(0.0, np.ones(3))


def test_prange_arguments_are_checked():
    @rv.reversible
    def keywords(y):
        for i in rv.prange(len(y), step=2):
            y[i] += 1.0

    with pytest.raises(rv.ReversibleSyntaxError, match=r"rv.prange\(\) takes one to three integers"):
        keywords(np.zeros(3))

    @rv.reversible
    def floats(y):
        for i in rv.prange(2.5):
            y[0] += 1.0

    with pytest.raises(rv.ReversibleSyntaxError, match=r"range\(\) needs integers, got float"):
        floats(np.zeros(3))

    @rv.reversible
    def ordered(y):
        for i in reversed(rv.prange(len(y))):
            y[i] += 1.0

    with pytest.raises(rv.ReversibleSyntaxError, match="a parallel loop has no order"):
        ordered(np.zeros(3))


def test_an_outer_scalar_read_in_a_nested_loop_is_differentiated_through_a_copy():
    """Its gradient would be summed inside the inner loop, which a shared sum
    cannot take: a located error that names the fix, which works."""
    line = inspect.currentframe().f_lineno + 4

    @rv.reversible
    def nested(y, x, a):
        for i in rv.prange(len(y)):
            for k in range(x.shape[1]):
                y[i] += a * x[i, k]

    @rv.reversible
    def copied(y, x, a):
        for i in rv.prange(len(y)):
            b = rv.ancilla(a)
            for k in range(x.shape[1]):
                y[i] += b * x[i, k]
            rv.free(b, a)

    x = rng.normal(size=(4, 3))
    with pytest.raises(
        Exception,
        match=rf"'rev.for' at .*test_prange.py:{line}:9 cannot be differentiated: the gradient of an outer scalar it reads \(%a .*\) would be summed inside a region of the parallel loop's body; read a copy made in the body instead",
    ):
        rv.vjp(nested, np.zeros(4), x, 0.5)[1](np.ones(4), None, None)  # the adjoint is built here
    _, pullback = rv.vjp(copied, np.zeros(4), x, 0.5)
    y_bar = rng.normal(size=4)
    _, g_x, g_a = pullback(y_bar, None, None)
    np.testing.assert_allclose(g_x, 0.5 * np.repeat(y_bar[:, None], 3, axis=1), rtol=1e-15)
    np.testing.assert_allclose(g_a, y_bar @ x.sum(axis=1), rtol=1e-13)


@rv.reversible
def scatter(g, x, idx):
    for i in rv.prange(len(x)):
        g[idx[i]] += x[i] * x[i]


def test_the_gradient_of_a_shared_accumulation_reads_the_shared_gradient():
    """The adjoint of ``g[idx[i]] += x[i]²`` borrows ``ḡ[idx[i]]`` and puts
    it back unchanged, a read that iterations share: it was refused as a
    racing write to ``%g_g`` (an unlocated ReversibilityViolation), on the
    CPU and for the GPU alike.  Against the closed form; its kernel
    assembles."""
    x, idx = rng.normal(size=9), rng.integers(0, 4, 9)
    g_bar = rng.normal(size=4)
    _, pullback = rv.vjp(scatter, np.zeros(4), x, idx)
    _, g_x, _ = pullback(g_bar, None, None)
    np.testing.assert_allclose(g_x, 2 * x * g_bar[idx], rtol=1e-15)
    program = rv.cuda.kernel(rv.adjoint(scatter)).compile(np.zeros(4), x, idx, g_bar, np.zeros(9))
    assert toolkit.emit_cubin(program.ptx)[:4] == b"\x7fELF"


def test_the_gradient_of_an_outer_complex_scalar_read_in_a_parallel_loop_is_a_located_error():
    """A shared sum is an array of floats or integers: the gradient of a
    complex scalar that every iteration reads was an unlocated
    "'anc.array_alloc': ancilla arrays hold integers or floats, not
    complex<f64>"; the same loop over range is differentiated."""
    line = inspect.currentframe().f_lineno + 4

    @rv.reversible
    def scaled(y, x, c: complex):
        for i in rv.prange(len(y)):
            y[i] += c * x[i]

    y, x = np.zeros(3, dtype=complex), np.array([1.0, 2.0, 3.0], dtype=complex)
    with pytest.raises(
        AdjointError,
        match=rf"'rev.for' at .*test_prange.py:{line}:9 cannot be differentiated: the gradient of an outer complex "
        r"scalar it reads \(%c .*\) cannot be summed over the parallel loop's iterations .* pass its real and "
        "imaginary parts as two floats instead",
    ):
        rv.vjp(scaled, y, x, 1 + 2j)[1](np.ones(3, dtype=complex), None, None)
