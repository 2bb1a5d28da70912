"""Python's float ``%``, ``//`` and ``math.hypot`` on every engine: the
interpreter, native code and a GPU kernel (run thread by thread on the CPU,
and its PTX assembled) give Python's values, edge operands included, and
their derivatives are the functions' own."""

from __future__ import annotations

import math
import re
import struct

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import revmlir as rv
from gpu_emulation import EmulatedKernel
from revmlir.gpu.toolkit import emit_cubin
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

ENGINES = ("native", "interpreter")
INF, NAN = math.inf, math.nan
EDGES = (0.0, -0.0, 0.1, -0.1, 3.0, -3.0, 5.0, 1e-310, -1e-20, 1e17, 1e308, -1e308, INF, -INF, NAN)


def _divmod_py(x, d):
    return x % d, x // d


DIVMOD = {engine: rv.ordinary(_divmod_py, backend=engine) for engine in ENGINES}


def _python_divmod(x: float, d: float) -> tuple[float, float]:
    """Python's ``x % d, x // d``; where ``d`` is 0, which Python refuses,
    numpy's (NaN and ``x / d``), as the engines give."""
    if d == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.remainder(x, d)), float(np.floor_divide(x, d))
    return x % d, x // d


def _same(got: tuple[float, ...], expected: tuple[float, ...]) -> bool:
    """Each value equal, NaN where the reference's is, and of its sign
    (``-0.0`` is not ``0.0``)."""
    return all(
        math.isnan(a) if math.isnan(b) else (a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
        for a, b in zip(got, expected, strict=True)
    )


def _functions_py(x, d):
    return math.fmod(x, d), np.fmod(x, d), np.remainder(x, d), np.floor_divide(x, d), np.mod(x, d)


FUNCTIONS = {engine: rv.ordinary(_functions_py, backend=engine) for engine in ENGINES}


def _numpy_functions(x: float, d: float) -> tuple[float, ...]:
    """numpy's values of ``_functions_py``'s functions: ``math.fmod`` is
    C's ``fmod``, as ``np.fmod``, and where Python raises (a zero divisor,
    an infinite dividend), numpy's NaN, as ``%`` gives it."""
    with np.errstate(all="ignore"):
        values = (np.fmod(x, d), np.fmod(x, d), np.remainder(x, d), np.floor_divide(x, d), np.mod(x, d))
    return tuple(float(v) for v in values)


DIVISIONS = {"operators": (DIVMOD, _python_divmod), "functions": (FUNCTIONS, _numpy_functions)}
"""``%`` and ``//``, against Python's values; ``math.fmod``, ``np.fmod``,
``np.remainder`` (``np.mod``) and ``np.floor_divide`` of two numbers,
against numpy's (ordinary code refused numpy's as allocating an array,
reversible code all four as functions without rules)."""


@pytest.mark.parametrize("engine", ENGINES)
def test_float_modulo_and_floor_division_are_pythons_and_fmod_cs(engine: str):
    """``5.0 % 0.1`` is 0.0999…, not 0; ``5.0 // 0.1`` is 49, not 50;
    ``1e17 % 3.0`` is 1; ``fmod`` takes the dividend's sign."""
    assert DIVMOD[engine](5.0, 0.1) == (0.09999999999999973, 49.0)
    assert DIVMOD[engine](1e17, 3.0) == (1.0, 3.3333333333333332e16)
    assert FUNCTIONS[engine](-5.0, 3.0) == (-2.0, -2.0, 1.0, -2.0, 1.0)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("division", DIVISIONS)
def test_divisions_are_pythons_and_numpys_at_the_edges(engine: str, division: str):
    """Signed zeros, infinities and NaN as Python has them, and a zero
    divisor as numpy has it."""
    compiled, reference = DIVISIONS[division]
    for x in EDGES:
        for d in EDGES:
            assert _same(compiled[engine](x, d), reference(x, d)), (x, d)


@settings(max_examples=150, deadline=None)
@given(st.floats(width=64), st.floats(width=64))
def test_divisions_agree_with_python_and_numpy_on_both_engines(x: float, d: float):
    for compiled, reference in DIVISIONS.values():
        expected = reference(x, d)
        for engine in ENGINES:
            assert _same(compiled[engine](x, d), expected), (engine, x, d)


def _integer_functions_py(a: int, b: int):
    return np.fmod(a, b), np.remainder(a, b), np.floor_divide(a, b)


def _python_remainder(a: int, b: int):
    return a % b


INTEGER_FUNCTIONS = {engine: rv.ordinary(_integer_functions_py, backend=engine) for engine in ENGINES}
INT64_EDGES = (0, 1, -1, 7, -7, 3, -3, 2**63 - 1, -(2**63))


@pytest.mark.parametrize("engine", ENGINES)
def test_numpys_integer_fmod_remainder_and_floor_divide_are_its_scalars(engine: str):
    """Of ints, numpy's integer ufuncs: ``np.fmod`` C's ``%`` (the
    dividend's sign), ``np.remainder`` and ``np.floor_divide`` Python's
    ``%`` and ``//``, wrapped at the ends of ``int64`` as numpy's
    ``int64`` scalars (``-2⁶³ // -1`` is ``-2⁶³``), and 0 by zero, where
    Python's ``%`` stops the run."""
    for a in INT64_EDGES:
        for b in INT64_EDGES:
            with np.errstate(divide="ignore", over="ignore"):
                x, y = np.int64(a), np.int64(b)
                expected = (np.fmod(x, y), np.remainder(x, y), np.floor_divide(x, y))
            assert INTEGER_FUNCTIONS[engine](a, b) == tuple(int(v) for v in expected), (a, b)
    with pytest.raises(rv.ExecutionError, match="in @_python_remainder: integer division by zero"):
        rv.ordinary(_python_remainder, backend=engine)(7, 0)


def _functions_rev(y, x, d):
    y += math.fmod(x, d) + 2.0 * np.remainder(x, d) + 4.0 * np.floor_divide(x, d)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("x, d", [(5.3, 0.7), (-5.3, 0.7), (5.3, -0.7), (-1e-20, 3.0), (5.0, 0.1)])
def test_the_derivatives_of_fmod_remainder_and_floor_divide(engine: str, x: float, d: float):
    """``fmod``: 1 and −trunc(x / d); ``np.remainder``: ``%``'s, 1 and
    −(x // d); ``np.floor_divide``: 0, piecewise constant.  In reverse and
    forward mode, exactly."""
    f = rv.reversible(backend=engine)(_functions_rev)
    expected = (1.0 + 2.0, -math.trunc((x - math.fmod(x, d)) / d) - 2.0 * (x // d))
    assert rv.gradient(f, (0.0, x, d))[1:] == expected
    assert rv.jvp(f, (0.0, x, d), (0.0, 1.0, -2.0))[1][0] == expected[0] - 2.0 * expected[1]


def _mixed(y, x, d):
    y[0] += x[0] // d
    y[1] += x[0] % d
    y[2] += np.hypot(x[0], d)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_float32_meeting_a_float64_computes_in_float64_as_division_does(engine: str):
    """``x32 // d64`` and ``x32 % d64`` compute in float64, as ``x32 / d64``:
    a divisor of 1e-50 truncated to float32 is 0, which would make the
    quotient ∞ and the remainder NaN."""
    x = np.array([0.3], np.float32)
    y = rv.reversible(backend=engine)(_mixed)(np.zeros(3), x, 1e-50)[0]
    expected_mod = float(x[0]) % 1e-50
    assert list(y) == [float(x[0]) // 1e-50, expected_mod, math.hypot(float(x[0]), 1e-50)]


@pytest.mark.parametrize("engine", ENGINES)
def test_hypot_of_a_float32_and_an_int_literal_is_float32_as_with_a_float_literal(engine: str):
    @rv.ordinary(backend=engine)
    def both(x):
        return np.hypot(x, 3), np.hypot(x, 3.0)

    x = np.float32(0.3)
    assert both(x) == (np.hypot(x, 3), np.hypot(x, 3))


def _int_and_float32(n: int, x):
    return n + x, n * x, n / x, n % x, n // x, np.fmod(n, x), np.remainder(n, x), math.fmod(n, x)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_int_meeting_a_float32_computes_in_float32_in_every_operation(engine: str):
    """The frontend's promotion is JAX's (``jnp.promote_types(int64,
    float32)`` is ``float32``; docs/python.md, "Float types"), where numpy
    widens to ``float64``: ``%``, ``//`` and the division functions take
    it as ``+`` and ``*`` do.  2²⁴ + 1 is 2²⁴ in ``float32``, which each
    result shows."""
    n, x = 2**24 + 1, np.float32(3.0)
    f = rv.ordinary(_int_and_float32, backend=engine)
    assert f(n, x) == _int_and_float32(np.float32(n), x)
    assert f(n, x)[3] == 1.0  # float64 says 2.0
    assert f"(%n: i64, %x: f32) -> ({', '.join(['f32'] * 8)})" in f.mlir(n, x, form="ordinary")


def _bools(a, b):
    return a % b, a // b, math.hypot(a, b)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("a, b", [(True, 3), (7, True), (True, True), (2.5, True), (True, -2.5), (False, 2.0)])
def test_bools_take_modulo_floor_division_and_hypot_as_python_does(engine: str, a: object, b: object):
    got = rv.ordinary(_bools, backend=engine)(a, b)
    assert got == _bools(a, b)
    assert [type(v) for v in got] == [type(v) for v in _bools(a, b)]


MODERATE = st.floats(-1e12, 1e12, allow_subnormal=True) | st.integers(-(2**20), 2**20).map(float)


# -0.0 + r is r, bit for bit
REMF = """
rev.func @remf(%y: f64, %a: f64, %b: f64) {
  %r = arith.remf %a, %b : f64
  %y1 = rev.add %y, %r : f64
  rev.return %y1, %a, %b : f64, f64, f64
}
"""
REMF_ENGINES = (NativeModule.compile(parse_module(REMF)), RevInterpreter(parse_module(REMF)))


@settings(max_examples=300, deadline=None)
@given(MODERATE, MODERATE.filter(lambda d: d != 0), st.integers(0, 2))
def test_fmod_of_quotients_below_two_to_the_53_is_the_c_librarys_on_both_engines(x: float, d: float, nudge: int):
    """Native code's fast path (``revmlir/lowering/remainder.py``: the
    truncated quotient, ``fma`` and one correction) where ``x / d`` is
    below 2⁵³, at multiples of ``d`` (a zero of ``x``'s sign) and an ulp
    beside them, where the quotient rounds up to an integer: ``fmod``'s
    bits, as the interpreter's."""
    if math.isfinite(x / d):
        x = round(x / d) * d
    x = float(np.nextafter(x, (0.0, np.inf, -np.inf)[nudge])) if nudge else x
    expected = struct.pack("<d", math.fmod(x, d))
    for engine in REMF_ENGINES:
        assert struct.pack("<d", engine.call("remf", -0.0, x, d)[0]) == expected, (engine, x, d)


REMF32 = REMF.replace("f64", "f32")
REMF32_ENGINES = (NativeModule.compile(parse_module(REMF32)), RevInterpreter(parse_module(REMF32)))
FLOAT32S = st.floats(-(2.0**40), 2.0**40, width=32, allow_subnormal=True)


@settings(max_examples=300, deadline=None)
@given(FLOAT32S, FLOAT32S.filter(lambda d: d != 0))
def test_a_float32_fmod_is_the_c_librarys_beyond_two_to_the_24(x: float, d: float):
    """A float32 quotient is an integer past 2²⁴ with an ulp of more than
    1 (3·10⁹ has 256), so the fast path stops at 2²⁴ for a float32: ``1e10
    % 3`` gave 256 where ``fmod`` gives 1."""
    expected = np.fmod(np.float32(x), np.float32(d))
    for engine in REMF32_ENGINES:
        got = np.float32(engine.call("remf", -0.0, x, d)[0])
        assert got.tobytes() == expected.tobytes(), (engine, x, d)


def test_a_float32_fmod_of_a_large_quotient():
    for engine in REMF32_ENGINES:
        assert engine.call("remf", 0.0, 1e10, 3.0)[0] == 1.0
        assert engine.call("remf", 0.0, 1e9, 7.0)[0] == float(np.fmod(np.float32(1e9), np.float32(7.0)))


@rv.reversible
def _wrap(y, x, d):
    y += x % d


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("x, d", [(5.3, 0.7), (-5.3, 0.7), (5.3, -0.7), (-1e-20, 3.0), (5.0, 0.1)])
def test_the_derivatives_of_modulo_are_one_and_minus_the_floor_quotient(engine: str, x: float, d: float):
    """∂(x % d)/∂x = 1 and ∂(x % d)/∂d = −(x // d), Python's quotient:
    −49 for ``5.0 % 0.1``, where ``floor(5.0 / 0.1)`` would say −50."""
    f = rv.reversible(backend=engine)(_wrap.__wrapped__)
    _, dx, dd = rv.gradient(f, (0.0, x, d))
    assert (dx, dd) == (1.0, -(x // d))


WRAPS = {engine: rv.reversible(backend=engine)(_wrap.__wrapped__) for engine in ENGINES}


@settings(max_examples=40, deadline=None)
@given(st.floats(-1e9, 1e9), st.floats(1e-3, 1e3), st.booleans())
@example(295292.71334336116, 0.4391859396473535, True)  # (r − a)/b was 672363.9999999999
def test_the_derivative_of_modulo_along_the_divisor_is_an_integer(x: float, d: float, negative: bool):
    """∂(x % d)/∂d is −(x // d) exactly, in reverse and forward mode on both
    engines: ``(fmod(x, d) − x)/d`` is the integer within a few ulps.  (At
    a multiple of ``d`` the remainder is a signed zero, a constant.)"""
    d = -d if negative else d
    assume(x % d != 0)
    for engine in ENGINES:
        assert rv.gradient(WRAPS[engine], (0.0, x, d))[2] == -(x // d), engine
        assert rv.jvp(WRAPS[engine], (0.0, x, d), (0.0, 0.0, 1.0))[1][0] == -(x // d), engine


def _hypot_py(y, a, b):
    y += math.hypot(a, b)


@pytest.mark.parametrize("engine", ENGINES)
def test_hypot_is_the_c_librarys_without_overflow_or_underflow(engine: str):
    """``math.hypot`` (and ``np.hypot``) is libm's ``hypot``, within an ulp
    of Python's, where √(a² + b²) overflowed, underflowed or lost
    ``hypot(inf, nan) = inf``; the engines agree bit for bit."""
    f = rv.reversible(backend=engine)(_hypot_py)
    cases = [(3.0, 4.0), (1e200, 1e200), (1e-200, 1e-200), (3e154, 4e154), (INF, NAN), (NAN, -INF), (-0.0, 0.0)]
    for a, b in cases:
        got = f(0.0, a, b)[0]
        assert got == pytest.approx(math.hypot(a, b), rel=2.3e-16, abs=0.0) or got == math.hypot(a, b), (a, b)
        assert got == rv.reversible(backend="native")(_hypot_py)(0.0, a, b)[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_derivative_of_hypot_is_each_operand_over_the_result(engine: str):
    f = rv.reversible(backend=engine)(_hypot_py)
    _, da, db = rv.gradient(f, (0.0, 3e154, -4e154))
    assert (da, db) == pytest.approx((0.6, -0.8), rel=1e-15)
    _, tangents = rv.jvp(f, (0.0, 3e154, 4e154), (0.0, 1.0, 2.0))
    assert tangents[0] == pytest.approx((3.0 + 8.0) / 5.0, rel=1e-15)


def test_numpy_hypot_of_two_numbers_is_computed_in_ordinary_code():
    """``np.hypot`` of two floats computes a number: ordinary code once
    refused it as allocating an array."""

    @rv.ordinary
    def size(a, b):
        return np.hypot(a, b) + np.float64(a)

    assert size(3e154, 4e154) == 5e154 + 3e154


def test_hypot_of_a_complex_number_is_refused_with_its_fix():
    @rv.reversible
    def f(y, z):
        y += math.hypot(z, 1.0)

    with pytest.raises(rv.ReversibleSyntaxError, match=r"math.hypot\(\) takes real numbers, not .*complex.*\.real"):
        f(0.0, 1 + 2j)


@rv.reversible
def _periodic(y, x, d):
    for i in rv.prange(len(y)):
        y[i] += x[i] % d[i] + x[i] // d[i] + np.hypot(x[i], d[i])


@rv.reversible
def _numpy_periodic(y, x, d, n):
    for i in rv.prange(len(y)):
        y[i] += math.fmod(x[i], d[i]) + np.remainder(x[i], d[i]) + np.floor_divide(x[i], d[i])
        y[i] += float(np.fmod(n[i], 3) + np.remainder(n[i], -2) + np.floor_divide(n[i], n[i] - 4))


def _runs_as_the_cpu(kernel: rv.ReversibleFunction, *arrays: np.ndarray) -> tuple[list[np.ndarray], str]:
    """``kernel``'s arrays after a run thread by thread as a kernel, checked
    the CPU's value for value (a NaN where it has one, a zero of its sign),
    and its PTX: which calls no outside function (libdevice's ``fmod`` and
    ``hypot`` are linked in), and which ptxas assembles."""
    expected, got = [a.copy() for a in arrays], [a.copy() for a in arrays]
    kernel(*expected)
    slot = EmulatedKernel(*rv.cuda.kernel(kernel).rev_module(*got)).launch(got, 2, 3)
    assert not slot.any()
    for computed, reference in zip(got, expected, strict=True):
        assert _same(tuple(computed), tuple(reference)), (computed, reference)
    ptx = rv.cuda.kernel(kernel).compile(*got).ptx
    assert ".extern" not in ptx
    assert emit_cubin(ptx)[:4] == b"\x7fELF"
    return expected, ptx


X = np.array([5.0, 1e17, -1e-20, 3e154, -3.0, 7.0])
D = np.array([0.1, 3.0, 3.0, 4e154, INF, -0.1])


def test_a_kernel_computes_them_as_the_cpu_and_its_ptx_links_libdevices():
    y = _runs_as_the_cpu(_periodic, np.zeros(6), X, D)[0][0]
    assert y[0] == 0.09999999999999973 + 49.0 + math.hypot(5.0, 0.1)


def test_a_kernel_computes_numpys_division_functions_as_the_cpu():
    """Of floats and of ints, a zero integer divisor (``n - 4`` at 4) too."""
    n = np.array([7, -7, 4, -(2**63), 0, 2**63 - 1])
    y = _runs_as_the_cpu(_numpy_periodic, np.zeros(6), X, D, n)[0][0]
    assert y[2] == math.fmod(-1e-20, 3.0) + np.remainder(-1e-20, 3.0) - 1.0 + float(1 + 0 + 0)


@rv.ordinary
def _square(a, b):
    return a % b + b, math.hypot(a, b)


def test_inverse_products_through_modulo_and_hypot_take_their_partials():
    """Lumps (``rv.inverse_jvp``) take each op's partials: ``%``'s 1 and
    −(a // b), ``hypot``'s a/h and b/h."""
    a, b = 5.3, 0.7
    h = math.hypot(a, b)
    jacobian = np.array([[1.0, 1.0 - a // b], [a / h, b / h]])
    v = np.array([1.0, -2.0])
    _, dots = rv.inverse_jvp(_square, (a, b), (*v, None, None))
    np.testing.assert_allclose(dots, np.linalg.solve(jacobian, v), rtol=1e-12)


def test_modulo_of_a_log_number_is_refused_at_the_expression():
    @rv.reversible
    def f(y, x):
        y += float(rv.ulog(x) % 2.0)

    with pytest.raises(
        rv.ReversibleSyntaxError,
        match=r":\d+:\d+: 'rv.ulog\(x\) % 2.0': a log number \(rv.ULog\) has no arithmetic in an expression of a "
        r"reversible function: .*; convert the real value: rv.ulog\(float\(rv.ulog\(x\)\) % 2.0\)$",
    ):
        f(0.0, 3.0)


def _extrema(a: float, b: float):
    return min(a, b), max(a, b), np.minimum(a, b), np.fmin(a, b), np.fmax(a, b)


@pytest.mark.parametrize("engine", ENGINES)
def test_min_and_max_are_ieees_at_signed_zeros_and_nan_not_pythons(engine: str):
    """docs/python.md's rule: IEEE 754-2019's ``minimum`` and ``maximum``
    for Python's ``min``/``max`` and numpy's ``minimum``/``maximum``, on
    every engine: ``-0.0`` below ``0.0``, NaN wins; numpy's ``fmin`` and
    ``fmax`` are its ``minimumNumber`` and ``maximumNumber``: a NaN loses.
    Python's ``min`` keeps its first argument."""
    extrema = rv.ordinary(_extrema, backend=engine)
    low, high, minimum, fmin, fmax = extrema(0.0, -0.0)
    assert [math.copysign(1.0, v) for v in (low, high, minimum, fmin, fmax)] == [-1.0, 1.0, -1.0, -1.0, 1.0]
    assert math.copysign(1.0, min(0.0, -0.0)) == 1.0
    low, high, minimum, fmin, fmax = extrema(1.0, math.nan)
    assert all(math.isnan(v) for v in (low, high, minimum)) and (fmin, fmax) == (1.0, 1.0)
    assert min(1.0, math.nan) == 1.0


def _numpy_extrema(y, a, b):
    y[0] += np.fmin(a, b)
    y[1] += np.fmax(a, b)
    y[2] += np.fmin(b, a)
    y[3] += np.fmax(b, a)


NUMPY_EXTREMA = {engine: rv.reversible(backend=engine)(_numpy_extrema) for engine in ENGINES}
NAN_OPERANDS = [(1.0, NAN), (NAN, -2.5), (NAN, NAN), (NAN, INF), (-INF, NAN), (NAN, -0.0), (0.0, NAN), (3.0, -3.0)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("a, b", NAN_OPERANDS)
def test_numpys_fmin_and_fmax_drop_a_nan_on_both_engines(engine: str, a: float, b: float):
    """``np.fmin``/``np.fmax`` were IEEE's ``minimum``/``maximum``, which
    give NaN where numpy returns the other operand; now numpy's values in
    either order, of ``float64`` and ``float32``."""
    y = NUMPY_EXTREMA[engine](np.full(4, -0.0), a, b)[0]  # -0.0 + v is v, of either zero
    expected = (np.fmin(a, b), np.fmax(a, b), np.fmin(b, a), np.fmax(b, a))
    assert _same(tuple(y), tuple(float(v) for v in expected))
    a32, b32 = np.float32(a), np.float32(b)
    y32 = NUMPY_EXTREMA[engine](np.full(4, -0.0, np.float32), a32, b32)[0]
    assert _same(tuple(map(float, y32)), (np.fmin(a32, b32), np.fmax(a32, b32), np.fmin(b32, a32), np.fmax(b32, a32)))


@given(st.floats(width=32) | st.just(-0.0), st.floats(width=32) | st.just(0.0))
@settings(max_examples=60, deadline=None)
def test_fmin_and_fmax_agree_on_both_engines_bit_for_bit(a: float, b: float):
    """Where numpy's ``fmin`` returns either of two zeros (its scalars the
    first, its arrays the second), both engines put ``-0.0`` below
    ``0.0``; elsewhere they are numpy's."""
    native, interpreted = (NUMPY_EXTREMA[engine](np.full(4, -0.0), a, b)[0] for engine in ENGINES)
    assert _same(tuple(native), tuple(interpreted))
    if a != b or math.isnan(a) or math.isnan(b):
        assert _same(tuple(native), (np.fmin(a, b), np.fmax(a, b), np.fmin(b, a), np.fmax(b, a)))


def _fmin_rev(y, a, b):
    y += np.fmin(a, b) + 2.0 * np.fmax(a, b)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "a, b, da, db", [(1.0, NAN, 3.0, 0.0), (NAN, 1.0, 0.0, 3.0), (1.0, 2.0, 1.0, 2.0), (2.0, 1.0, 2.0, 1.0)]
)
def test_the_derivatives_of_fmin_and_fmax_go_to_the_number(engine: str, a: float, b: float, da: float, db: float):
    """The operand the result is: the number beside a NaN, in reverse and
    forward mode."""
    f = rv.reversible(backend=engine)(_fmin_rev)
    assert rv.gradient(f, (0.0, a, b))[1:] == (da, db)
    assert rv.jvp(f, (0.0, a, b), (0.0, 1.0, -1.0))[1][0] == da - db


@rv.reversible
def _extrema_kernel(low, high, a, b):
    for i in rv.prange(len(low)):
        low[i] += np.fmin(a[i], b[i])
        high[i] += np.fmax(a[i], b[i])


def test_a_kernel_computes_fmin_and_fmax_as_the_cpu():
    """PTX's ``min``/``max`` are ``llvm.minimumnum``/``maximumnum``: NaN
    loses, ``-0.0`` below ``0.0``; ptxas assembles the kernel.  Each in an
    output of its own that starts at ``-0.0``, which adding keeps every
    value of, a zero's sign included."""
    a = np.array([1.0, NAN, NAN, 0.0, -0.0, 3.0])
    b = np.array([NAN, -2.0, NAN, -0.0, 0.0, -3.0])
    (low, high, _, _), ptx = _runs_as_the_cpu(_extrema_kernel, np.full(6, -0.0), np.full(6, -0.0), a, b)
    assert _same(tuple(low), (1.0, -2.0, NAN, -0.0, -0.0, -3.0))
    assert _same(tuple(high), (1.0, -2.0, NAN, 0.0, 0.0, 3.0))
    # PTX's own instructions, not a NaN-propagating form: no ``.NaN`` (f32's), no compare of floats to select by
    assert "min.f64" in ptx and "max.f64" in ptx
    assert ".NaN" not in ptx and re.search(r"setp\.\w+\.f64", ptx) is None
