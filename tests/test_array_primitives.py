"""User primitives on arrays: BLAS's ``ddot`` (pure, an expression) and
``daxpy`` (``y += a·x``, a reversible instruction with an inverse rule) from
the CBLAS numpy bundles, with hand-written adjoints
(examples/python/blas_primitives.py).  Gradients match JAX and finite
differences, ``~f`` after ``f`` restores the inputs, native code and the
interpreter agree, and every misuse is a located diagnostic."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import revmlir as rv
from python_examples import load_example
from revmlir.errors import AdjointError, InversionError, TangentError
from revmlir.runtime.blas import BlasNotFound, numpy_blas

example = load_example("blas_primitives")
ddot, daxpy, Vector = example.ddot, example.daxpy, example.Vector


@rv.reversible(backend="interpreter")
def leapfrog_interpreted(energy, h, q, p, steps: int):
    for _ in range(steps):
        daxpy(h, p, q)
        daxpy(-h, q, p)
    energy += 0.5 * (ddot(q, q) + ddot(p, p))


STEPS = 7


@pytest.fixture(scope="module")
def state() -> tuple[float, np.ndarray, np.ndarray]:
    q, p = example.initial_state(n=5)
    return 0.3, q, p


def test_numpy_brings_a_cblas():
    blas = numpy_blas()
    assert blas.arrays in ("blas", "blas32")
    assert rv.primitive is not None and "ddot" in blas.symbol("ddot")


@pytest.mark.parametrize("f", [example.leapfrog, leapfrog_interpreted], ids=["native", "interpreter"])
def test_gradient_matches_jax_and_finite_differences(f, state):
    h, q, p = state
    _, g_h, g_q, g_p, _ = rv.gradient(f, (0.0, h, q, p, STEPS))
    j_h, j_q, j_p = example.jax_gradient(h, q, p, STEPS)
    assert g_h == pytest.approx(j_h, rel=1e-12)
    np.testing.assert_allclose(g_q, j_q, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g_p, j_p, rtol=1e-12, atol=1e-14)
    assert g_h == pytest.approx(example.central_difference(h, q, p, STEPS), rel=1e-6)


@pytest.mark.parametrize("f", [example.leapfrog, leapfrog_interpreted], ids=["native", "interpreter"])
def test_the_inverse_restores_the_inputs(f, state):
    h, q, p = state
    energy, _, q1, p1, _ = f(1.5, h, q.copy(), p.copy(), STEPS)
    assert not np.allclose(q1, q)
    back = (~f)(energy, h, q1, p1, STEPS)
    assert back[0] == pytest.approx(1.5, abs=1e-12)
    np.testing.assert_allclose(back[2], q, atol=1e-13)
    np.testing.assert_allclose(back[3], p, atol=1e-13)


def test_native_and_interpreter_agree(state):
    h, q, p = state
    assert example.leapfrog.specialization_for(0.0, h, q, p, STEPS).backend == "native"
    native = example.leapfrog(0.0, h, q.copy(), p.copy(), STEPS)
    interpreted = leapfrog_interpreted(0.0, h, q.copy(), p.copy(), STEPS)
    assert native[0] == pytest.approx(interpreted[0], rel=1e-14)
    np.testing.assert_allclose(native[2], interpreted[2], rtol=1e-14)
    np.testing.assert_allclose(native[3], interpreted[3], rtol=1e-14)


def test_the_module_declares_arrays_updates_and_rules(state):
    h, q, p = state
    text = example.leapfrog.mlir(0.0, h, q, p, STEPS)
    blas = numpy_blas()
    assert (
        f'rev.extern @daxpy : (f64, memref<?xf64>, memref<?xf64>) -> () {{symbol = "{blas.symbol("daxpy")}", '
        f'arrays = "{blas.arrays}", updates = array<i64: 2>, inverse = @daxpy_inverse, adjoint = @daxpy_adjoint, '
        f"tangent = @daxpy_tangent}}"
    ) in text
    assert "rev.invoke @daxpy(" in text and "rev.apply @ddot(" in text


def test_only_updated_arrays_are_written():
    """The Python call checks overlap only for arrays the function writes:
    ddot reads q twice, daxpy writes y."""

    @rv.reversible
    def square(s, x):
        s += ddot(x, x)

    x = np.arange(3.0)
    assert square(0.0, x)[0] == 5.0

    @rv.reversible
    def shear(a, x, y):
        daxpy(a, x, y)

    with pytest.raises(ValueError, match="overlap|share"):
        shear(2.0, x, x)


def _raises_at(fragment: str, line: int, error: type[Exception] = rv.ReversibleSyntaxError):
    return pytest.raises(error, match=rf"test_array_primitives.py:{line}:\d+: .*{fragment}")


def _line(offset: int) -> int:
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno + offset


def test_arguments_of_the_wrong_rank_or_dtype_are_located():
    @rv.reversible
    def dot(s, x, y):
        s += ddot(x, y)

    line = dot.__wrapped__.__code__.co_firstlineno + 2
    with _raises_at(r"argument 2 of ddot\(\) is a 2-d array of float; it must be a 1-d array of float", line):
        dot(0.0, np.ones(2), np.ones((2, 2)))
    with _raises_at(r"argument 1 of ddot\(\) is a 1-d array of int64; it must be a 1-d array of float", line):
        dot(0.0, np.ones(2, dtype=np.int64), np.ones(2))
    with _raises_at(r"argument 1 of ddot\(\) is float; it must be a 1-d array of float", line):
        dot(0.0, 1.0, np.ones(2))


def _dot_in_a_loop(x, y):
    s = 0.0
    for i in range(len(y)):
        s = s + ddot(x, y)
    return s


def _scalar_for_an_array_in_a_loop(x, y):
    s = 0.0
    for i in range(len(y)):
        s = s + ddot(s, y)
    return s


@pytest.mark.parametrize("engine", ["native", "interpreter"])
@pytest.mark.parametrize(
    ("function", "x", "fragment"),
    [
        (_dot_in_a_loop, np.ones(2, dtype=np.float32), "argument 1 of ddot() is a 1-d array of float32"),
        (_scalar_for_an_array_in_a_loop, np.ones(2), "argument 1 of ddot() is float"),
    ],
    ids=["array", "scalar"],
)
def test_a_mistyped_array_argument_in_a_loop_is_reported_as_it_is(function, x, fragment, engine):
    """Only a scalar argument's type may change between a loop body's
    builds; an array's, or a scalar given for an array, is refused in the
    first build with its own message, not postponed as a stand-in that
    then fails to convert to the array."""
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.ordinary(function, backend=engine)(x, np.ones(2))
    error = caught.value
    assert error.reason == f"{fragment}; it must be a 1-d array of float"
    assert error.lineno == function.__code__.co_firstlineno + 3
    assert not getattr(error, "__notes__", [])


def test_arrays_of_different_lengths_are_an_error_on_both_engines():
    @rv.reversible
    def dot(s, x, y):
        s += ddot(x, y)

    for f in (dot, rv.reversible(backend="interpreter")(dot.__wrapped__)):
        with pytest.raises(
            rv.ExecutionError,
            match=r"test_array_primitives.py:\d+:\d+: .*the arrays passed to a primitive of BLAS differ in length",
        ):
            f(0.0, np.ones(2), np.ones(3))


def test_calls_are_statements_or_expressions_as_the_primitive_says():
    @rv.reversible
    def as_value(s, a, x, y):
        s += daxpy(a, x, y)

    with _raises_at(
        "primitive daxpy updates arrays: it is a statement, not a value",
        as_value.__wrapped__.__code__.co_firstlineno + 2,
    ):
        as_value(0.0, 1.0, np.ones(2), np.ones(2))

    @rv.reversible
    def as_statement(x, y):
        ddot(x, y)

    with _raises_at(
        "primitive ddot returns a value and changes nothing", as_statement.__wrapped__.__code__.co_firstlineno + 2
    ):
        as_statement(np.ones(2), np.ones(2))


def test_aliased_arguments_are_located():
    @rv.reversible
    def twice(a, x):
        daxpy(a, x, x)

    with _raises_at(
        r"daxpy\(\) updates argument 3, which is also another of its arguments",
        twice.__wrapped__.__code__.co_firstlineno + 2,
    ):
        twice(1.0, np.ones(2))

    @rv.reversible
    def reads_what_it_updates(x, y):
        daxpy(y[0], x, y)

    line = reads_what_it_updates.__wrapped__.__code__.co_firstlineno + 2
    with _raises_at("'rev.invoke' reads %y in its scalar arguments but updates it", line):
        reads_what_it_updates(np.ones(2), np.ones(2))


def test_a_missing_inverse_is_located_where_an_inverse_is_needed():
    @rv.primitive(python=example.axpy, updates=["y"])
    def axpy(a: float, x: Vector, y: Vector) -> None: ...

    @rv.reversible(backend="interpreter")
    def forward_only(a, x, y):
        axpy(a, x, y)

    x, y = np.ones(2), np.ones(2)
    assert list(forward_only(2.0, x, y)[2]) == [3.0, 3.0]
    line = forward_only.__wrapped__.__code__.co_firstlineno + 2
    with pytest.raises(
        InversionError,
        match=rf"test_array_primitives.py:{line}:\d+ has no inverse: primitive @axpy updates arrays and declares no inverse rule",
    ):
        (~forward_only)(2.0, x, y)


def _adjoint_without_shadows(a, x, y):
    return a


def _adjoint_returning_nothing(a, x, y, gx, gy):
    daxpy(a, gy, gx)


def _inverse_returning(a, x, y):
    return a


def _tangent_of_scalars_only(a, x, y, da):
    return da


def _tangent_returning(a, x, y, da, dx, dy):
    daxpy(da, x, dy)
    return da


@pytest.mark.parametrize(
    "kind, rule, message",
    [
        (
            "adjoint",
            _adjoint_without_shadows,
            "the adjoint rule _adjoint_without_shadows of primitive wrong takes 3 argument.s.; it must take 5",
        ),
        (
            "adjoint",
            _adjoint_returning_nothing,
            r"the adjoint rule _adjoint_returning_nothing of primitive wrong returns \(\); it must return \(float\)",
        ),
        (
            "inverse",
            _inverse_returning,
            r"the inverse rule _inverse_returning of primitive wrong returns \(float\); it must return \(\)",
        ),
        (
            "tangent",
            _tangent_of_scalars_only,
            "the tangent rule _tangent_of_scalars_only of primitive wrong takes 4 argument.s.; it must take 6",
        ),
        (
            "tangent",
            _tangent_returning,
            r"the tangent rule _tangent_returning of primitive wrong returns \(float\); it must return \(\)",
        ),
    ],
)
def test_rule_signatures_are_checked_at_the_rule(kind, rule, message):
    @rv.primitive(python=example.axpy, updates=["y"], **{kind: rule})
    def wrong(a: float, x: Vector, y: Vector) -> None: ...

    @rv.reversible
    def uses_wrong(a, x, y):
        wrong(a, x, y)

    with _raises_at(message, rule.__code__.co_firstlineno):
        uses_wrong(1.0, np.ones(2), np.ones(2))


def test_declaration_errors_are_located(monkeypatch):
    with _raises_at("updates= of primitive scalar names 'a', which is not one of its array parameters", _line(2)):

        @rv.primitive(python=example.axpy, updates=["a"])
        def scalar(a: float, x: Vector, y: Vector) -> None: ...

    with _raises_at("primitive pure has an inverse= rule but updates no array", _line(2)):

        @rv.primitive(python=np.dot, inverse=example.daxpy_inverse)
        def pure(x: Vector, y: Vector) -> float: ...

    with _raises_at("blas= names the symbol, the library and the arrays' convention itself", _line(2)):

        @rv.primitive("cblas_ddot", blas="ddot")
        def both(x: Vector, y: Vector) -> float: ...

    with _raises_at("the result of primitive returns_array is an array", _line(3)):

        @rv.primitive(python=np.add)
        def returns_array(x: Vector, y: Vector) -> Vector: ...

    def missing() -> None:
        raise BlasNotFound("none of scipy_cblas_ddot64_ is exported by nothing")

    monkeypatch.setattr("revmlir.frontend.ordinary_code.primitives.numpy_blas", missing)
    with _raises_at(
        "primitive no_blas calls the BLAS routine 'ddot': none of scipy_cblas_ddot64_ is exported", _line(3)
    ):

        @rv.primitive(blas="ddot", python=np.dot)
        def no_blas(x: Vector, y: Vector) -> float: ...


def test_derivatives_the_declaration_lacks_are_located(state):
    """The inverse rule has no adjoint of its own (a gradient of ~f), and a
    primitive without a tangent rule has no tangent."""
    h, q, p = state
    line = inspect.getsourcelines(example.leapfrog.__wrapped__)[1] + 5
    with pytest.raises(
        AdjointError,
        match=rf"blas_primitives.py:{line}:\d+ cannot be differentiated: the inverse of primitive @daxpy has no adjoint rule",
    ):
        rv.gradient(~example.leapfrog, (0.0, h, q, p, STEPS))

    def inverse(a: float, x, y):
        axpy_without_tangent(-a, x, y)

    @rv.primitive(python=example.axpy, updates=["y"], inverse=inverse)
    def axpy_without_tangent(a: float, x: Vector, y: Vector) -> None: ...

    @rv.reversible(backend="interpreter")
    def shear(h, q, p):
        axpy_without_tangent(h, p, q)

    with pytest.raises(
        TangentError,
        match=r"cannot be differentiated in forward mode: primitive @axpy_without_tangent declares no tangent rule",
    ):
        rv.jvp(shear, (h, q, p), (1.0, np.zeros_like(q), np.zeros_like(p)))


# -- forward mode: the tangent rules ---------------------------------------------


@pytest.mark.parametrize("f", [example.leapfrog, leapfrog_interpreted], ids=["native", "interpreter"])
def test_jvp_matches_jax_and_finite_differences(f, state):
    """The tangent rules (daxpy's updates ẏ in place before the call,
    ddot's is an expression) give JAX's directional derivative of the
    energy and the final state, and the central difference of the energy."""
    h, q, p = state
    dq, dp = example.initial_state(n=5, seed=4)
    outputs, (d_energy, d_h, d_q, d_p, _) = rv.jvp(f, (0.0, h, q, p, STEPS), (0.0, 0.5, dq, dp, 0))
    j_energy, j_q, j_p = example.jax_jvp(h, q, p, STEPS, 0.5, dq, dp)
    assert outputs[0] == pytest.approx(f(0.0, h, q.copy(), p.copy(), STEPS)[0], rel=1e-14)
    assert d_energy == pytest.approx(j_energy, rel=1e-12) and d_h == 0.5
    np.testing.assert_allclose(d_q, j_q, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(d_p, j_p, rtol=1e-12, atol=1e-14)
    step = 1e-6
    moved = [f(0.0, h + s * 0.5, q + s * dq, p + s * dp, STEPS)[0] for s in (step, -step)]
    assert d_energy == pytest.approx((moved[0] - moved[1]) / (2 * step), rel=1e-6)


def test_hessian_through_blas_matches_jax():
    """Forward over reverse through the BLAS rules: the gradient program
    runs daxpy's inverse rule and invokes the adjoint rules, ordinary code
    whose tangents are derived from their bodies (BLAS calls, so their
    tangents call the tangent rules); on the interpreter, which compiles
    nothing."""
    jax, jnp, integrate = example.jax_leapfrog(2)
    q, p = example.initial_state(n=2)
    expected = jax.jit(jax.hessian(lambda v: integrate(v[0], v[1:3], v[3:5])[0]))(jnp.array([0.3, *q, *p]))
    hessian = rv.hessian(leapfrog_interpreted, (0.0, 0.3, q, p, 2))
    np.testing.assert_allclose(hessian[1:, 1:], np.asarray(expected), rtol=1e-12, atol=1e-13)
    assert not hessian[0].any()


def test_the_tangent_of_the_inverse_undoes_the_tangent(state):
    """~f runs daxpy's inverse rule, ordinary code whose tangent is derived
    from its body (a daxpy, whose tangent rule it calls): the jvp of ~f
    along the tangents f's jvp gave brings the tangents back."""
    h, q, p = state
    dq, dp = example.initial_state(n=5, seed=4)
    outputs, tangents = rv.jvp(leapfrog_interpreted, (0.0, h, q, p, STEPS), (0.0, 0.5, dq, dp, 0))
    inputs, back = rv.jvp(~leapfrog_interpreted, outputs, tangents)
    np.testing.assert_allclose(inputs[2], q, atol=1e-13)
    assert back[0] == pytest.approx(0.0, abs=1e-12) and back[1] == 0.5
    np.testing.assert_allclose(back[2], dq, atol=1e-12)
    np.testing.assert_allclose(back[3], dp, atol=1e-12)


@pytest.mark.parametrize("f", [example.leapfrog, leapfrog_interpreted], ids=["native", "interpreter"])
def test_forward_jacobian_matches_the_reverse_one(f, state):
    """rv.jacobian in forward mode (the whole-matrix @f.jacobian, which
    uncalls @f itself, not @f.tan, whose rule calls have no inverse) agrees
    with the reverse-mode one."""
    h, q, p = state
    args = (0.0, h, q[:3].copy(), p[:3].copy(), 2)
    forward = rv.jacobian(f, args, mode="forward")
    reverse = rv.jacobian(f, args, mode="reverse")
    assert forward.shape == (8, 8)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-14)


# -- arrays passed as a pointer and a length to the user's own C function ------

C_LIBRARY = r"""
#include <stdint.h>
double weighted_sum(const double *x, int64_t n, double w) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += w * x[i];
    return s;
}
void scale_add(double a, const double *x, int64_t n, double *y, int64_t m) {
    for (int64_t i = 0; i < n && i < m; ++i) y[i] += a * x[i];
}
"""


@pytest.fixture(scope="module")
def vector_library(tmp_path_factory):
    from test_aot import shared_library

    return shared_library(tmp_path_factory.mktemp("library"), "vectors", C_LIBRARY)


def test_pointer_and_length_arrays_of_a_c_library(vector_library):
    """The default convention: each array as its data pointer and its
    length, scalars by value in between; native code and the interpreter
    (numpy) agree, forward and backward."""

    def scale_add_py(a, x, y):
        y += a * x

    @rv.primitive("weighted_sum", library=vector_library, python=lambda x, w: w * float(np.sum(x)))
    def weighted_sum(x: Vector, w: float) -> float: ...

    @rv.ordinary
    def scale_add_inverse(a: float, x, y):
        scale_add(-a, x, y)

    @rv.primitive("scale_add", library=vector_library, python=scale_add_py, updates=["y"], inverse=scale_add_inverse)
    def scale_add(a: float, x: Vector, y: Vector) -> None: ...

    def program(s, a, x, y):
        scale_add(a, x, y)
        s += weighted_sum(y, 0.5)

    native = rv.reversible(backend="native")(program)
    interpreted = rv.reversible(backend="interpreter")(program)
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.25, -1.0, 4.0])
    expected_y = y + 1.5 * x
    for f in (native, interpreted):
        s, _, _, y1 = f(1.0, 1.5, x, y.copy())
        np.testing.assert_allclose(y1, expected_y, rtol=1e-15)
        assert s == pytest.approx(1.0 + 0.5 * expected_y.sum(), rel=1e-15)
        back = (~f)(s, 1.5, x, y1)
        assert back[0] == pytest.approx(1.0, abs=1e-14)
        np.testing.assert_allclose(back[3], y, atol=1e-15)


@rv.ordinary(backend="interpreter")
def _scaled_dot(x, y, s):
    return s * ddot(x, y)


def test_ordinary_functions_call_pure_array_primitives_on_arrays_they_only_read():
    """s·(x·y): the gradient through ddot's adjoint rule, the tangent
    through its tangent rule."""
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    assert _scaled_dot(x, y, 2.0) == 2.0
    gradient = rv.gradient(_scaled_dot, (x, y, 2.0))
    np.testing.assert_array_equal(np.concatenate(gradient[:2]), [6.0, -2.0, 2.0, 4.0])
    assert gradient[2] == 1.0
    dx, dy = np.array([0.5, -1.0]), np.array([2.0, 1.0])
    _, tangents = rv.jvp(_scaled_dot, (x, y, 2.0), (dx, dy, 3.0))
    assert tangents[0] == 2.0 * (dx @ y + x @ dy) + 3.0 * (x @ y)


def test_ordinary_functions_cannot_update_arrays_through_primitives():
    @rv.ordinary
    def writes_what_ddot_reads(x, y):
        x[0] = 2.0 * x[0]
        return ddot(x, y)

    @rv.ordinary
    def updates(a, x, y):
        daxpy(a, x, y)

    def at(function: rv.OrdinaryFunction, offset: int, what: str) -> str:
        line = function.__wrapped__.__code__.co_firstlineno + offset
        return rf"test_array_primitives.py:{line}:\d+ cannot be reversibilized: {what}"

    with pytest.raises(rv.ReversibleSyntaxError, match=at(writes_what_ddot_reads, 3, "@ddot reads an array the")):
        writes_what_ddot_reads(np.ones(2), np.ones(2))
    with pytest.raises(rv.ReversibleSyntaxError, match=at(updates, 2, "@daxpy updates arrays; ordinary code")):
        updates(1.0, np.ones(2), np.ones(2))
