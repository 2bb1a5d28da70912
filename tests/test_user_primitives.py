"""User primitives (``rv.primitive``, ``rev.extern``/``rev.apply``): a C
function or a Python callable with user-written adjoint and tangent rules,
differentiated through those rules natively and on the interpreter, checked
against finite differences and JAX; every error is a located diagnostic."""

from __future__ import annotations

import functools
import math
import re

import jax
import numpy as np
import pytest
import scipy.special

import revmlir as rv
from python_examples import load_example
from revmlir.ad.adjoint import AdjointError
from revmlir.ad.tangent import TangentError

jax.config.update("jax_enable_x64", True)


# math.lgamma from the C library, with digamma as its derivative
lgamma = load_example("user_primitives").lgamma


@rv.reversible
def log_beta(y, a, b):
    """y += log B(a, b) = lgamma(a) + lgamma(b) − lgamma(a + b)."""
    y += lgamma(a) + lgamma(b) - lgamma(a + b)


@rv.reversible(backend="interpreter")
def log_beta_interpreted(y, a, b):
    y += lgamma(a) + lgamma(b) - lgamma(a + b)


def _log_beta_jax(a, b):
    gammaln = jax.scipy.special.gammaln
    return gammaln(a) + gammaln(b) - gammaln(a + b)


POINTS = [(2.5, 0.75), (7.0, 3.25)]


@pytest.mark.parametrize("f", [log_beta, log_beta_interpreted], ids=["native", "interpreter"])
@pytest.mark.parametrize("a,b", POINTS)
def test_lgamma_values_gradients_and_tangents(f, a, b):
    expected = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    y, _, _ = f(0.5, a, b)
    assert y == pytest.approx(0.5 + expected, rel=1e-14)
    assert (~f)(y, a, b)[0] == pytest.approx(0.5, abs=1e-14)

    gradient = rv.gradient(f, (0.5, a, b))
    jax_gradient = jax.grad(_log_beta_jax, argnums=(0, 1))(a, b)
    h = 1e-6
    differences = [
        (f(0.0, a + h, b)[0] - f(0.0, a - h, b)[0]) / (2 * h),
        (f(0.0, a, b + h)[0] - f(0.0, a, b - h)[0]) / (2 * h),
    ]
    for ours, reference, difference in zip(gradient[1:], jax_gradient, differences):
        assert ours == pytest.approx(float(reference), rel=1e-10)
        assert ours == pytest.approx(difference, rel=1e-6)
    assert gradient[0] == 1.0

    _, tangents = rv.jvp(f, (0.5, a, b), (0.0, 1.0, -2.0))
    assert tangents[0] == pytest.approx(float(jax_gradient[0] - 2 * jax_gradient[1]), rel=1e-10)


def test_native_and_interpreter_run_the_same_primitive():
    assert log_beta.specialization_for(0.0, 2.5, 0.75).backend == "native"
    assert log_beta_interpreted.specialization_for(0.0, 2.5, 0.75).backend == "interpreter"
    assert rv.gradient(log_beta, (0.0, 2.5, 0.75)) == pytest.approx(
        rv.gradient(log_beta_interpreted, (0.0, 2.5, 0.75)), rel=1e-14
    )


def test_the_module_declares_the_primitive_and_its_rules():
    text = log_beta.mlir(0.0, 2.5, 0.75)
    declaration = '(f64) -> f64 {symbol = "lgamma", adjoint = @lgamma_adjoint, tangent = @lgamma_tangent}'
    assert f"rev.extern @{lgamma.name} : {declaration}" in text
    assert "func.func @lgamma_adjoint(%x: f64, %g: f64) -> f64" in text
    assert text.count(f"rev.apply @{lgamma.name}(") == 3


def test_an_integer_argument_is_converted_and_the_primitive_runs_from_python():
    @rv.reversible
    def shifted(y, n: int):
        y += lgamma(n + 1)

    assert shifted(0.0, 5)[0] == pytest.approx(math.log(120.0), rel=1e-14)
    assert lgamma(5.0) == math.lgamma(5.0)


# -- a primitive with an integer argument and two float ones ------------------


@rv.ordinary
def scaled_power_adjoint(x, n, s, g):
    return g * s * n * x ** (n - 1), g * x**n


@rv.ordinary
def scaled_power_tangent(x, n, s, dx, ds):
    return s * n * x ** (n - 1) * dx + x**n * ds


@rv.primitive(python=lambda x, n, s: s * x**n, adjoint=scaled_power_adjoint, tangent=scaled_power_tangent)
def scaled_power(x: float, n: int, s: float) -> float: ...


@rv.reversible(backend="interpreter")
def uses_power(y, x, n: int, s):
    y += scaled_power(x, n, s)


def test_a_python_only_primitive_with_an_integer_argument():
    y, *_ = uses_power(1.0, 1.5, 3, 2.0)
    assert y == pytest.approx(1.0 + 2.0 * 1.5**3)
    gradient = rv.gradient(uses_power, (1.0, 1.5, 3, 2.0))
    assert gradient == pytest.approx((1.0, 2.0 * 3 * 1.5**2, 0.0, 1.5**3))
    _, tangents = rv.jvp(uses_power, (1.0, 1.5, 3, 2.0), (0.0, 1.0, 0, 1.0))
    assert tangents[0] == pytest.approx(2.0 * 3 * 1.5**2 + 1.5**3)


def test_a_python_only_primitive_falls_back_to_the_interpreter():
    @rv.reversible
    def auto(y, x, n: int, s):
        y += scaled_power(x, n, s)

    with pytest.warns(rv.InterpreterFallbackWarning, match="has no C symbol"):
        assert auto(0.0, 2.0, 2, 1.0)[0] == 4.0


# -- errors ---------------------------------------------------------------------


@rv.primitive("lgamma", python=math.lgamma)
def lgamma_without_rules(x: float) -> float: ...


@rv.reversible
def uses_no_rules(y, x):
    y += lgamma_without_rules(x)


def test_a_missing_rule_is_located_at_the_call():
    line = uses_no_rules.__wrapped__.__code__.co_firstlineno + 2
    with pytest.raises(
        AdjointError,
        match=rf":{line}:\d+ cannot be differentiated: primitive @lgamma_without_rules declares no adjoint rule",
    ):
        rv.gradient(uses_no_rules, (0.0, 2.0))
    with pytest.raises(TangentError, match="declares no tangent rule"):
        rv.jvp(uses_no_rules, (0.0, 2.0), (0.0, 1.0))


@pytest.fixture(scope="module")
def jax_hessian() -> np.ndarray:
    """JAX's Hessian of log B(a, b) at the first point (jitted: once, fast)."""
    hessian = jax.jit(jax.hessian(lambda v: _log_beta_jax(v[0], v[1])))
    return np.asarray(hessian(np.array(POINTS[0])))


@pytest.mark.parametrize("f", [log_beta, log_beta_interpreted], ids=["native", "interpreter"])
def test_hessians_through_lgamma_match_jax_and_finite_differences(f, jax_hessian):
    """Forward over reverse differentiates the adjoint rule (ordinary code,
    digamma): its derived tangent gives trigamma, which the C library lacks."""
    a, b = POINTS[0]
    hessian = rv.hessian(f, (0.0, a, b))
    np.testing.assert_allclose(hessian[1:, 1:], jax_hessian, rtol=1e-10)
    assert not hessian[0].any() and not hessian[:, 0].any()
    # one Hessian-vector product (on the interpreter: a native one compiles another program)
    _, h_a, h_b = rv.hvp(log_beta_interpreted, (0.0, a, b), (0.0, 1.0, -2.0))
    assert (h_a, h_b) == pytest.approx(hessian[1:, 1:] @ [1.0, -2.0], rel=1e-12)
    step = 1e-5
    moved = [rv.gradient(f, (0.0, a + s, b - 2 * s)) for s in (step, -step)]
    assert h_a == pytest.approx((moved[0][1] - moved[1][1]) / (2 * step), rel=1e-6)


# -- called from @rv.ordinary functions -------------------------------------


def _ordinary_lgamma_sum(a, b, n: int):
    """f(a, b) = a·lgamma(a + b) + Σₖ b·lgamma(a + k): primitives assigned,
    in expressions and in a loop."""
    y = lgamma(a + b)
    total = y * a
    for k in range(n):
        total += b * lgamma(a + k)
    return total


ORDINARY_LGAMMA_SUM = {
    engine: rv.ordinary(_ordinary_lgamma_sum, backend=engine) for engine in ("native", "interpreter")
}


def _lgamma_sum_derivatives(a: float, b: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The closed-form gradient and Hessian of ``_ordinary_lgamma_sum`` in
    (a, b), with scipy's digamma ψ and trigamma ψ₁."""
    psi, psi1 = scipy.special.digamma, functools.partial(scipy.special.polygamma, 1)
    ks = np.arange(n)
    gradient = [
        math.lgamma(a + b) + a * psi(a + b) + b * psi(a + ks).sum(),
        a * psi(a + b) + sum(map(math.lgamma, a + ks)),
    ]
    ab = psi(a + b) + a * psi1(a + b) + psi(a + ks).sum()
    hessian = [[2 * psi(a + b) + a * psi1(a + b) + b * psi1(a + ks).sum(), ab], [ab, a * psi1(a + b)]]
    return np.array(gradient), np.array(hessian)


@pytest.mark.parametrize("engine", ["native", "interpreter"])
def test_ordinary_functions_call_primitives(engine):
    """The ordinary IR calls the primitive as reversible code does
    (``rev.apply``), and the reversible form keeps the call as a pure
    expression: values, gradients, tangents and Hessian-vector products
    through the rules match math.lgamma, the closed form (scipy's digamma
    and trigamma), JAX and finite differences.  Native programs take
    seconds to compile, so the interpreter also runs the whole Hessian and
    the checkpointed gradients (the same derived programs)."""
    f = ORDINARY_LGAMMA_SUM[engine]
    (a, b), n = POINTS[0], 2
    expected = a * math.lgamma(a + b) + sum(b * math.lgamma(a + k) for k in range(n))
    assert f(a, b, n) == pytest.approx(expected, rel=1e-14)
    spec = f.specialization_for(a, b, n)
    # natively a call of f runs its plain code, which calls lgamma by its C symbol
    assert (spec.plain is not None) == (engine == "native") and spec.reversible.backend == engine
    exact_gradient, exact_hessian = _lgamma_sum_derivatives(a, b, n)
    gradient = rv.gradient(f, (a, b, n))
    np.testing.assert_allclose(gradient[:2], exact_gradient, rtol=1e-10)
    assert gradient[2] == 0.0
    if engine == "native":
        gammaln = jax.scipy.special.gammaln
        jax_gradient = jax.grad(lambda a, b: a * gammaln(a + b) + b * gammaln(a) + b * gammaln(a + 1), (0, 1))(a, b)
        np.testing.assert_allclose(gradient[:2], np.array(jax_gradient), rtol=1e-10)
    h = 1e-6
    assert gradient[0] == pytest.approx((f(a + h, b, n) - f(a - h, b, n)) / (2 * h), rel=1e-6)
    _, pullback = rv.vjp(f, a, b, n)
    assert pullback(1.0, 0.0, 0.0, 0) == pytest.approx(gradient, rel=1e-14)
    _, tangents = rv.jvp(f, (a, b, n), (1.0, -2.0, 0))
    assert tangents[0] == pytest.approx(exact_gradient @ [1.0, -2.0], rel=1e-10)
    if engine == "native":
        assert rv.hvp(f, (a, b, n), (1.0, -2.0, 0))[:2] == pytest.approx(exact_hessian @ [1.0, -2.0], rel=1e-9)
        return
    np.testing.assert_allclose(rv.hessian(f, (a, b, n))[:2, :2], exact_hessian, rtol=1e-9)
    assert rv.gradient(f, (a, b, n), checkpoint="bisection") == pytest.approx(gradient, rel=1e-14)
    products = rv.hvp(f, (a, b, n), (1.0, -2.0, 0), checkpoint="store_all")
    assert products[:2] == pytest.approx(exact_hessian @ [1.0, -2.0], rel=1e-9)


@rv.ordinary(backend="interpreter")
def _recurrence_with_lgamma(a, n: int):
    t = 0.0
    for k in rv.checkpointed(range(n)):
        t = t + lgamma(a + k) * t + a
    return t


def test_a_checkpointed_loop_of_an_ordinary_function_calls_a_primitive():
    """The marked loop's gradient is the checkpointed one, its steps
    calling lgamma and, backwards, its adjoint rule."""
    a, n, h = 2.5, 4, 1e-6
    gradient = rv.gradient(_recurrence_with_lgamma, (a, n))
    difference = (_recurrence_with_lgamma(a + h, n) - _recurrence_with_lgamma(a - h, n)) / (2 * h)
    assert gradient == (pytest.approx(difference, rel=1e-7), 0.0)


def test_the_ordinary_ir_declares_the_primitive_and_keeps_its_rules_ordinary():
    text = ORDINARY_LGAMMA_SUM["native"].mlir(2.5, 0.75, 2)
    assert f'rev.extern @{lgamma.name} : (f64) -> f64 {{symbol = "lgamma"' in text
    ordinary, reversible = text.split("// reversible IR")
    assert ordinary.count(f"rev.apply @{lgamma.name}(") == 2
    # the rules stay func.funcs in the reversible form, which calls the primitive as an expression
    assert "func.func @lgamma_adjoint(" in reversible and "rev.func @lgamma_adjoint" not in reversible
    assert reversible.count(f"rev.apply @{lgamma.name}(") >= 2


@rv.ordinary
def _ordinary_without_rules(x):
    return x * lgamma_without_rules(x)


def test_a_missing_rule_under_an_ordinary_function_names_the_primitive_and_the_rule():
    line = _ordinary_without_rules.__wrapped__.__code__.co_firstlineno + 2
    assert _ordinary_without_rules(2.5) == pytest.approx(2.5 * math.lgamma(2.5), rel=1e-14)
    located = rf"test_user_primitives.py:{line}:\d+ cannot be differentiated"
    with pytest.raises(AdjointError, match=located + ": primitive @lgamma_without_rules declares no adjoint rule"):
        rv.gradient(_ordinary_without_rules, (2.5,))
    with pytest.raises(
        TangentError, match=located + " in forward mode: primitive @lgamma_without_rules declares no tangent rule"
    ):
        rv.jvp(_ordinary_without_rules, (2.5,), (1.0,))
    with pytest.raises(AdjointError, match=located + ": primitive @lgamma_without_rules declares no adjoint rule"):
        rv.hessian(_ordinary_without_rules, (2.5,))


@rv.ordinary
def _series_adjoint(x, g):
    total = 0.0
    for k in range(1, 4):
        total += x**k / k
    return g * total


@rv.primitive(python=lambda x: x + x**2 / 2 + x**3 / 6, adjoint=_series_adjoint)
def series(x: float) -> float: ...


@rv.reversible(backend="interpreter")
def uses_series(y, x):
    y += series(x)


def test_a_rule_that_is_no_straight_line_code_is_located_in_a_hessian():
    """The tangent of a rule is derived for straight-line code; a loop in
    the adjoint rule is an error at the loop, naming the rule."""
    assert rv.gradient(uses_series, (0.0, 0.5))[1] == pytest.approx(0.5 + 0.25 / 2 + 0.125 / 3)
    line = _series_adjoint.__wrapped__.__code__.co_firstlineno + 3
    with pytest.raises(
        TangentError,
        match=rf":{line}:\d+ cannot be differentiated in forward mode: 'scf.for' has no tangent rule, in @_series_adjoint, ordinary code that a derivative calls",
    ):
        rv.hessian(uses_series, (0.0, 0.5))


def test_the_interpreter_needs_a_python_implementation():
    @rv.primitive("lgamma")
    def c_only(x: float) -> float: ...

    @rv.reversible(backend="interpreter")
    def interpreted(y, x):
        y += c_only(x)

    with pytest.raises(rv.ExecutionError, match="primitive @c_only has no Python implementation"):
        interpreted(0.0, 2.0)
    with pytest.raises(TypeError, match="has no Python implementation"):
        c_only(2.0)


def test_the_annotation_hint_names_numpy_scalar_types():
    """numpy's scalar types annotate a primitive's parameters and result
    (``test_a_primitive_of_numpy_scalar_types``): the hint says so."""
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.primitive("lgamma")
        def untyped(x) -> float: ...

    assert info.value.hint == (
        "annotate every parameter and the result with float, int, complex or a numpy scalar type "
        "(np.float64, np.float32, np.int64, np.int32, np.bool_, np.complex128, np.complex64), "
        "arrays with numpy.typing.NDArray[numpy.float64] (or another dtype)"
    )


@rv.ordinary
def expf_adjoint(x: np.float32, g: np.float32):
    return g * math.exp(x)


@rv.ordinary
def expf_tangent(x: np.float32, dx: np.float32):
    return math.exp(x) * dx


@rv.primitive("expf", python=lambda x: np.float32(math.exp(x)), adjoint=expf_adjoint, tangent=expf_tangent)
def expf(x: np.float32) -> np.float32: ...


def single_exp(y: np.float32, x: np.float32):
    y += expf(x)


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_a_primitive_of_numpy_scalar_types(backend):
    """``x: np.float32`` on a primitive is the C library's ``expf``'s
    ``f32``, as on any parameter: the value is numpy's ``float32`` exp, the
    gradient and tangent the rules' (checked against float32 central
    differences of ``math.exp``, and exactly against the rule at f32)."""
    f = rv.reversible(single_exp, backend=backend)
    assert "rev.extern @expf : (f32) -> f32" in f.mlir(0.0, 0.5)
    y, x = f(0.0, 0.5)
    assert type(y) is np.float32 and y == np.float32(math.exp(np.float32(0.5)))
    assert x == np.float32(0.5)
    exact = float(np.float32(math.exp(0.5)))
    h = 1e-2
    difference = (math.exp(0.5 + h) - math.exp(0.5 - h)) / (2 * h)
    gradient = rv.gradient(f, (0.0, 0.5))
    assert gradient == (1.0, exact) and gradient[1] == pytest.approx(difference, rel=1e-4)
    assert rv.jvp(f, (0.0, 0.5), (0.0, 1.0))[1] == (exact, 1.0)


def _raises_at(fragment: str, line: int):
    return pytest.raises(rv.ReversibleSyntaxError, match=rf"test_user_primitives.py:{line}:\d+: .*{fragment}")


def _line(offset: int) -> int:
    import inspect

    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno + offset


def test_declaration_errors_are_located():
    with _raises_at("no C function 'no_such_function_xyz' is loaded", _line(2)):

        @rv.primitive("no_such_function_xyz")
        def unknown(x: float) -> float: ...

    with _raises_at("parameter 'x' of primitive untyped has no type annotation", _line(3)):

        @rv.primitive("lgamma")
        def untyped(x) -> float: ...

    with _raises_at("the result of primitive no_result has no type annotation", _line(3)):

        @rv.primitive("lgamma")
        def no_result(x: float): ...

    with _raises_at("unknown annotation 'list' for parameter 'x'", _line(3)):

        @rv.primitive("lgamma")
        def listed(x: list) -> float: ...

    with _raises_at("primitive nothing has no implementation", _line(2)):

        @rv.primitive()
        def nothing(x: float) -> float: ...

    with _raises_at("adjoint= of primitive not_a_function must be a function", _line(2)):

        @rv.primitive("lgamma", adjoint=3)
        def not_a_function(x: float) -> float: ...


def _one_argument(x):
    return x


def _two_results(x, dx):
    return x, dx


@pytest.mark.parametrize(
    "kind, rule, message",
    [
        (
            "adjoint",
            _one_argument,
            "the adjoint rule _one_argument of primitive wrong takes 1 argument.s.; it must take 2",
        ),
        (
            "tangent",
            _two_results,
            r"the tangent rule _two_results of primitive wrong returns \(float, float\); it must return \(float\)",
        ),
    ],
)
def test_rule_signatures_are_checked_at_the_rule(kind, rule, message):
    @rv.primitive("lgamma", **{kind: rule})
    def wrong(x: float) -> float: ...

    @rv.reversible
    def uses_wrong(y, x):
        y += wrong(x)

    with _raises_at(message, rule.__code__.co_firstlineno):
        uses_wrong(0.0, 1.0)


def test_call_errors_are_located():
    @rv.reversible
    def too_many(y, x):
        y += lgamma(x, x)

    with _raises_at(r"lgamma\(\) takes 1 argument\(s\), got 2", too_many.__wrapped__.__code__.co_firstlineno + 2):
        too_many(0.0, 1.0)

    @rv.reversible
    def complex_argument(y: complex, x: complex):
        y += lgamma(x)

    with _raises_at(
        "argument 1 of lgamma.. is complex; it must be float", complex_argument.__wrapped__.__code__.co_firstlineno + 2
    ):
        complex_argument(0j, 1j)


def test_a_failing_python_implementation_is_located():
    @rv.reversible(backend="interpreter")
    def pole(y, x):
        y += lgamma(x)

    with pytest.raises(
        rv.ExecutionError,
        match=rf":{pole.__wrapped__.__code__.co_firstlineno + 2}:\d+: 'rev.apply' in @pole: math domain error",
    ):
        pole(0.0, 0.0)
    assert math.isinf(log_beta(0.0, 0.0, 1.0)[0])  # native: the C library's lgamma(0) = inf


@pytest.mark.parametrize("returned", ["oops", None, (1.0, 2.0), 3j])
def test_a_python_implementation_returning_no_number_is_located(returned):
    """What the callable returns must be the declared number: anything else
    names the primitive and the value (it was float()'s own message,
    "could not convert string to float: 'oops'")."""

    @rv.primitive(python=lambda x: returned)
    def odd(x: float) -> float: ...

    @rv.reversible(backend="interpreter")
    def caller(y, x):
        y += odd(x)

    with pytest.raises(
        rv.ExecutionError,
        match=rf":{caller.__wrapped__.__code__.co_firstlineno + 2}:\d+: 'rev.apply' in @caller: "
        rf"the Python implementation of primitive @odd(\.\d+)? returned {re.escape(repr(returned))}, not f64",
    ):
        caller(0.0, 1.0)


# -- a C function of the user's own shared library -----------------------------

C_LIBRARY = r"""
#include <math.h>
double soft_plus(double x) { return log1p(exp(x)); }
"""


@pytest.fixture(scope="module")
def soft_plus_library(tmp_path_factory):
    from test_aot import shared_library

    return shared_library(tmp_path_factory.mktemp("library"), "soft_plus", C_LIBRARY)


def test_a_c_function_of_a_shared_library(soft_plus_library):
    def sigmoid_adjoint(x, g):
        return g / (1 + math.exp(-x))

    @rv.primitive("soft_plus", library=soft_plus_library, adjoint=sigmoid_adjoint)
    def soft_plus(x: float) -> float: ...

    @rv.reversible(backend="native")
    def activation(y, x):
        y += soft_plus(x) * x

    x = 0.8
    assert activation(0.0, x)[0] == pytest.approx(math.log1p(math.exp(x)) * x, rel=1e-15)
    expected = jax.grad(lambda x: jax.nn.softplus(x) * x)(x)
    assert rv.gradient(activation, (0.0, x))[1] == pytest.approx(float(expected), rel=1e-13)


def test_a_library_that_does_not_load_is_located():
    with _raises_at("cannot load the library '/nonexistent/libnothing.so'", _line(2)):

        @rv.primitive("nothing", library="/nonexistent/libnothing.so")
        def nothing(x: float) -> float: ...


# -- a rule whose loop is built again and declares another primitive ----------


@rv.ordinary
def _square_adjoint(x, g):
    return 2.0 * x * g


@rv.primitive(python=lambda x: x * x, adjoint=_square_adjoint)
def square(x: float) -> float: ...


@rv.ordinary
def _twice_cube_adjoint(x, g):
    total = 0
    for _ in range(2):
        total = total + 3.0 * square(x) * g
    return total


@rv.primitive(python=lambda x: 2.0 * x**3, adjoint=_twice_cube_adjoint)
def twice_cube(x: float) -> float: ...


@rv.ordinary(backend="interpreter")
def _uses_twice_cube(x):
    return twice_cube(x)


def test_a_rule_whose_loop_is_built_again_declares_another_primitive():
    """The rule's integer ``total`` turns float in the loop, whose body,
    built again, declares ``square`` with its rule: the module holds both
    rules (the outer one was missing, 'names @_twice_cube_adjoint, which
    is not a rev.extern or a func.func with a body of the module')."""
    assert _uses_twice_cube(1.5) == pytest.approx(2.0 * 1.5**3)
    assert rv.gradient(_uses_twice_cube, (1.5,))[0] == pytest.approx(6.0 * 1.5**2, rel=1e-14)
    text = _uses_twice_cube.mlir(1.5).split("// reversible IR")[0]
    assert [line.split("(")[0] for line in text.splitlines() if line.startswith("  func.func")] == [
        "  func.func @_uses_twice_cube",
        "  func.func @_square_adjoint",
        "  func.func @_twice_cube_adjoint",
    ]
