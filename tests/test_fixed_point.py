"""Fixed-point numbers (``rv.Fixed[fraction]``, ``!rev.fixed<64, 43>``):
``+=``/``-=`` on the stored integers invert bit for bit, the interpreter and
native code agree bit for bit, results are checked against integer
arithmetic done here, overflows and conversions out of range are located
errors on both engines, and gradients (with respect to the real value)
equal the f64 program's and finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import revmlir as rv

F43 = rv.Fixed[43]
F16 = rv.Fixed[8, 16]
FRACTION = 1 << 43


def _program(y, a, b, c, n):
    """Fixed-point when called with ``FixedPoint``s, f64 with floats."""
    y += a * b
    y -= c * 0.75 + a
    for i in range(n):
        c += a * a
    if a > b:
        y += 1
    rv.swap(a, b)


def _narrow(y: F16, a: F16, b: F16):
    y += a * b


def _converted(y: F43, x: float):
    y += F43(x) * F43(x)


ENGINES = ("native", "interpreter")


@pytest.fixture(scope="module")
def compiled():
    return {engine: rv.reversible(backend=engine)(_program) for engine in ENGINES}


@pytest.fixture(scope="module")
def narrow():
    return {engine: rv.reversible(backend=engine)(_narrow) for engine in ENGINES}


@pytest.fixture(scope="module")
def converted():
    return {engine: rv.reversible(backend=engine)(_converted) for engine in ENGINES}


def _expected(y: int, a: int, b: int, c: int, n: int) -> tuple[int, ...]:
    """``_program`` on the stored integers, by Python's integer arithmetic:
    a product is floored to the last fraction bit, 0.75 is stored exactly."""
    y += (a * b) >> 43
    y -= ((c * (3 * FRACTION // 4)) >> 43) + a
    for _ in range(n):
        c += (a * a) >> 43
    if a > b:
        y += FRACTION
    return y, b, a, c


raws = st.integers(-(1 << 44), 1 << 44)  # |x| < 2: no product overflows


@settings(max_examples=20, deadline=None)
@given(y=raws, a=raws, b=raws, c=raws, n=st.integers(0, 3))
def test_runs_invert_bit_for_bit_and_engines_agree(compiled, y, a, b, c, n):
    args = (F43.from_raw(y), F43.from_raw(a), F43.from_raw(b), F43.from_raw(c), n)
    outputs = {engine: f(*args) for engine, f in compiled.items()}
    assert outputs["native"] == outputs["interpreter"]
    assert tuple(v.raw for v in outputs["native"][:4]) == _expected(y, a, b, c, n)
    for engine, f in compiled.items():
        assert (~f)(*outputs[engine]) == args


def test_the_ir_has_the_fixed_point_type_and_ops(compiled):
    text = compiled["native"].mlir(*FIXED_POINT)
    assert "rev.func @_program(%y: !rev.fixed<64, 43>" in text
    assert "rev.fixed_mul" in text and "rev.to_fixed" in text


def test_reals_convert_to_the_nearest_number_and_back():
    assert F43(1.5).raw == 3 * (1 << 42)
    assert F43(2.0**-44).raw == 0 and F43(3 * 2.0**-44).raw == 2  # ties to even
    assert float(F43(-0.1)) == round(-0.1 * FRACTION) / FRACTION
    assert F43.from_raw(7) == rv.FixedPoint(7, F43) and repr(F43(0.5)) == "Fixed[43](0.5)"
    with pytest.raises(OverflowError, match="no fixed-point number in Fixed"):
        F43(2.0**20)
    with pytest.raises(ValueError, match="fraction bits"):
        rv.Fixed[64]


def test_each_format_of_an_unannotated_parameter_has_its_own_code():
    """Calls were matched on the Python type alone, so a ``Fixed[16, 32]``
    after a ``Fixed[43]`` was refused as not a ``Fixed[43]``."""

    @rv.reversible
    def accumulate(y, x):
        y += x

    narrow = rv.Fixed[16, 32]
    assert accumulate(F43(0.25), F43(1.5)) == (F43(1.75), F43(1.5))
    assert accumulate(narrow(0.25), narrow(1.5)) == (narrow(1.75), narrow(1.5))


@pytest.mark.parametrize("item", [1.5, "a", True, (16, 32.0)])
def test_a_format_of_no_integers_is_refused(item):
    """``Fixed[1.5]`` was a format, failing later in the compiler, and
    ``Fixed['a']`` a comparison's TypeError."""
    with pytest.raises(TypeError, match=r"the fraction bits and the width are integers, as in Fixed\[43\]"):
        rv.Fixed[item]
    with pytest.raises(TypeError, match=r"Fixed\[16, 32, 1\]: give the fraction bits, and the width"):
        rv.Fixed[16, 32, 1]


@pytest.mark.parametrize("engine", ENGINES)
def test_conversions_in_a_program(converted, engine):
    f = converted[engine]
    y, x = f(0.0, 0.1)
    assert y.raw == (F43(0.1).raw ** 2) >> 43 and x == 0.1
    with pytest.raises(
        rv.ExecutionError, match=r"test_fixed_point.py:\d+:\d+: 'rev.to_fixed' in @_converted: inf has no"
    ):
        f(0.0, math.inf)
    with pytest.raises(rv.ExecutionError, match="nan has no fixed-point number in Fixed"):
        f(0.0, math.nan)


@pytest.mark.parametrize("engine", ENGINES)
def test_overflow_is_a_located_error(compiled, narrow, engine):
    big, zero = F43(2.0**19), F43(0.0)
    with pytest.raises(
        rv.ExecutionError, match=r"test_fixed_point.py:\d+:\d+: 'rev.fixed_mul' in @_program: fixed-point overflow"
    ):
        compiled[engine](zero, big, big, zero, 0)
    with pytest.raises(
        rv.ExecutionError,
        match=r"'rev.add' in @_narrow: fixed-point overflow: the result is out of range for Fixed\[8, 16\]",
    ):
        narrow[engine](127.0, 1.0, 1.0)
    assert narrow[engine](126.5, 1.5, -2.0) == (F16(123.5), F16(1.5), F16(-2.0))


def test_arguments_are_checked(converted):
    f = converted["native"]
    with pytest.raises(
        TypeError,
        match=r"^argument 'y' of _converted must be a Fixed\[43\] or a real number within its range, got float$",
    ):
        f(1e9, 0.0)
    with pytest.raises(TypeError, match=r"argument 'y' is declared rv.Fixed\[43\], got rv.Fixed\[8, 16\]"):
        f(F16(1.0), 0.0)
    with pytest.raises(TypeError, match=r"argument 'y' is declared rv.Fixed\[43\], got complex"):
        f(1j, 0.0)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_int_out_of_range_is_an_overflow_error(converted, narrow, engine):
    """An int beyond a format's integer range, a Python or a numpy one
    (which was a ``TypeError`` where the Python int was an
    ``OverflowError``), is the call's ``OverflowError`` naming the argument,
    on both engines; a float out of range stays a ``TypeError``
    (``test_arguments_are_checked``), and an int at the range's end
    converts to that number exactly."""
    wide = r"is out of range for rv.Fixed\[43\] \(-1048576 to 1048575\)$"
    for value in (np.int64(2**30), np.int32(2**25), 2**30, np.int64(-(2**20) - 1)):
        with pytest.raises(OverflowError, match=rf"^_converted\(\): argument 'y': {int(value)} {wide}"):
            converted[engine](value, 0.0)
    with pytest.raises(
        OverflowError, match=r"^_narrow\(\): argument 'a': 128 is out of range for rv.Fixed\[8, 16\] \(-128 to 127\)$"
    ):
        narrow[engine](0.0, np.int32(128), 1.0)
    assert narrow[engine](0.0, np.int32(-128), 0.5) == (F16(-64.0), F16(-128.0), F16(0.5))
    assert narrow[engine](0.0, np.int64(127), -1) == (F16(-127.0), F16(127.0), F16(-1.0))
    assert converted[engine](np.int64(2**20 - 1), 0.0) == (F43(2.0**20 - 1), 0.0)


def test_elementary_functions_take_the_real_value():
    @rv.reversible(backend="interpreter")
    def exponential(y: F43, a: F43):
        y += math.exp(a) - a

    y, _ = exponential(0.0, 0.5)
    assert float(y) == pytest.approx(math.exp(0.5) - 0.5, abs=2.0**-42)
    assert rv.gradient(exponential, (0.0, 0.5))[1] == pytest.approx(math.exp(0.5) - 1.0)


def test_comparisons_are_exact():
    """Two numbers one unit apart round to the same f64 (63 significant
    bits), yet compare as they are."""

    @rv.reversible(backend="interpreter")
    def order(flag: int, a: F43, b: F43):
        if a < b:
            flag += 1

    a = F43.from_raw((1 << 62) + 2)
    b = F43.from_raw((1 << 62) + 3)
    assert float(a) == float(b)
    assert order(0, a, b)[0] == 1 and order(0, b, a)[0] == 0


@pytest.fixture(scope="module")
def real_program():
    return rv.reversible(backend="interpreter")(_program)


POINT = (0.25, 0.5, -0.75, 1.25, 2)
FIXED_POINT = (*map(F43, POINT[:4]), POINT[4])


@pytest.mark.parametrize(("engine", "loss"), [("native", 0), ("interpreter", 3)])
def test_gradients_are_the_real_programs(compiled, real_program, engine, loss):
    f = compiled[engine]
    fixed = rv.gradient(f, FIXED_POINT, loss)
    real = rv.gradient(real_program, POINT, loss)
    assert np.allclose(fixed[:4], real[:4], rtol=1e-12, atol=1e-12)

    def value(*args):
        return float(f(*map(F43, args), POINT[4])[loss])

    h = 1e-4
    for i in range(4):
        plus, minus = list(POINT[:4]), list(POINT[:4])
        plus[i] += h
        minus[i] -= h
        assert fixed[i] == pytest.approx((value(*plus) - value(*minus)) / (2 * h), abs=1e-6)


def test_tangents_are_the_real_programs(compiled, real_program):
    tangents = (0.3, -1.0, 0.5, 2.0, 0)
    outputs, fixed = rv.jvp(compiled["interpreter"], FIXED_POINT, tangents)
    _, real = rv.jvp(real_program, POINT, tangents)
    assert np.allclose(fixed[:4], real[:4], rtol=1e-12)
    assert isinstance(outputs[0], rv.FixedPoint)


def _stacked(y: F43, a: F43):
    s = rv.stack(F43)
    t = rv.ancilla(a * a)
    rv.push(s, t)
    y += a
    t = rv.pop(s)
    rv.free(t, a * a)
    rv.free(s)


@pytest.mark.parametrize("engine", ENGINES)
def test_stacks_hold_fixed_point_numbers(engine):
    f = rv.reversible(backend=engine)(_stacked)
    a = F43.from_raw(3 * FRACTION + 5)
    assert f(0.5, a) == (F43.from_raw(FRACTION // 2 + 3 * FRACTION + 5), a)


def _expect_syntax_error(source_function, match: str) -> None:
    with pytest.raises(rv.ReversibleSyntaxError, match=match):
        rv.reversible(source_function)(0.0, 1.0)


def test_what_fixed_point_numbers_do_not_have_is_a_located_error():
    def times(y: F43, a: F43):
        y *= a

    def divide(y: F43, a: F43):
        y += a / a

    def array(y: F43, a: F43):
        z = rv.zeros(3, dtype=F43)
        rv.free(z)

    def bad_format(y: F43, a: F43):
        y += rv.Fixed[64](1.0)

    _expect_syntax_error(bad_format, r"test_fixed_point.py:\d+:\d+: Fixed\[64, 64\]: a fixed-point number is stored in")
    _expect_syntax_error(
        array, r"test_fixed_point.py:\d+:\d+: ancilla arrays hold integers or floats, not rv.Fixed\[43\]"
    )
    _expect_syntax_error(times, r"test_fixed_point.py:\d+:\d+: 'y \*= a' is not reversible on rv.Fixed\[43\]")
    _expect_syntax_error(divide, r"test_fixed_point.py:\d+:\d+: .*'div' is not defined on rv.Fixed\[43\]")


def test_second_derivatives_are_the_real_ones():
    @rv.reversible(backend="interpreter")
    def cubic(y: F43, a: F43, b: F43):
        y += a * a * b

    hessian = rv.hessian(cubic, (F43(0.0), F43(1.5), F43(2.0)))
    np.testing.assert_allclose(hessian, [[0, 0, 0], [0, 2 * 2.0, 2 * 1.5], [0, 2 * 1.5, 0]], atol=1e-12)
