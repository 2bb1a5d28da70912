"""``math``'s, ``cmath``'s and numpy's spellings of what revmlir computes:
the phase of a real number and ``math.fabs`` on both engines, as Python
computes them, with their derivatives; functions it does not compile and
that an expression writes otherwise are refused with what to write."""

from __future__ import annotations

import cmath
import math
from typing import Any

import numpy as np
import pytest

import revmlir as rv

ENGINES = ("native", "interpreter")
REALS = (0.3, -2.0, 0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 3, -3, 0)


def phase(y, a):
    y += cmath.phase(a)


def angle(y, a):
    y += np.angle(a)


def absolute(y, a):
    y += math.fabs(a)


def bits(value: float) -> bytes:
    return np.float64(value).tobytes()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("function", "python"), [(phase, cmath.phase), (angle, np.angle), (absolute, math.fabs)])
def test_a_real_argument_gives_pythons_bits(engine, function, python):
    """``cmath.phase``/``np.angle`` of a real are 0 or π by its sign (π for
    ``-0.0`` and ``-inf``, NaN for NaN), ``math.fabs`` its absolute value as
    a float (an int's too): bit for bit Python's, where both were refused."""
    compiled = rv.reversible(backend=engine)(function)
    for a in REALS:
        assert bits(compiled(0.0, a)[0]) == bits(0.0 + python(a)), a


def phase_of(a):
    return cmath.phase(a)


def angle_of(a):
    return np.angle(a)


def fabs_of(a):
    return math.fabs(a)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("function", "python"), [(phase_of, cmath.phase), (angle_of, np.angle), (fabs_of, math.fabs)])
def test_the_value_returned_keeps_the_sign_of_zero(engine, function, python):
    """Returned as it is, not added to ``0.0``, the value shows its sign:
    ``math.fabs(-0.0)`` is ``0.0``, a phase of ``±0.0`` is ``0.0`` or π."""
    compiled = rv.ordinary(backend=engine)(function)
    for a in REALS:
        assert bits(compiled(a)) == bits(python(a)), a


@pytest.mark.parametrize("engine", ENGINES)
def test_a_single_precision_phase_is_computed_at_its_precision(engine):
    """As ``np.angle`` computes it: π rounded to ``f32`` for a negative
    ``np.float32``, where ``cmath.phase`` converts to Python's float first."""
    for function in (phase_of, angle_of):
        value = rv.ordinary(backend=engine)(function)(np.float32(-1.0))
        single = float(np.float32(math.pi))
        assert value == float(np.angle(np.float32(-1.0))) == single != cmath.phase(np.float32(-1.0))


@pytest.mark.parametrize("engine", ENGINES)
def test_their_derivatives_are_the_functions_own(engine):
    """A real's phase is constant on each side of 0 (derivative 0, at
    ``±0.0`` too, where ``atan2``'s is NaN), and ``|a|``'s is ``a``'s sign."""
    for function, a, expected in (
        (phase, -2.5, 0.0),
        (phase, 0.0, 0.0),
        (phase, -0.0, 0.0),
        (angle, 0.0, 0.0),
        (absolute, -2.5, -1.0),
    ):
        assert rv.gradient(rv.reversible(backend=engine)(function), (0.0, a)) == (1.0, expected), (function, a)
    ordinary = rv.ordinary(backend=engine)(phase_plus_fabs)
    assert ordinary(-1.0) == math.pi + 1.0 and rv.gradient(ordinary, (-1.0,)) == (-1.0,)


def phase_plus_fabs(a):
    return np.angle(a) + math.fabs(a)


def test_math_fabs_of_a_complex_number_is_refused_as_python_refuses_it():
    @rv.reversible
    def f(y, z):
        y += math.fabs(z)

    with pytest.raises(rv.ReversibleSyntaxError, match=r"math\.fabs takes a real number; abs\(z\) is"):
        f(0.0, 1j)


@pytest.mark.parametrize(
    ("written", "hint", "advised"),
    [
        ("math.floor(a)", "np.floor(a), a float (math.floor's int: int(np.floor(a)))", "np.floor(a)"),
        ("math.isnan(a)", "a != a, true for NaN alone", "a != a"),
        ("np.isinf(a)", "abs(a) == math.inf", "abs(a) == math.inf"),
        ("math.isfinite(a)", "abs(a) < math.inf, false for NaN and ±inf", "abs(a) < math.inf"),
        ("math.degrees(a)", "a * (180.0 / math.pi), as math.degrees computes it", "a * (180.0 / math.pi)"),
        ("np.square(a)", "a * a", "a * a"),
        ("np.exp2(a)", "2.0 ** a", "2.0 ** a"),
    ],
)
def test_a_function_written_otherwise_is_refused_with_the_spelling(written, hint, advised, tmp_path):
    """Where ``np.floor``, ``a != a`` or a product compute it, the refusal
    says so at the call (it sent the user to declare a primitive with
    derivative rules for ``math.floor``); the advised spelling compiles and
    gives Python's value."""
    module = tmp_path / "spelled.py"
    module.write_text(
        "import math\nimport numpy as np\nimport revmlir as rv\n\n\n"
        f"def refused(y, a):\n    y += {written}\n\n\n"
        f"def advised(y, a):\n    y += {advised}\n"
    )
    namespace: dict[str, Any] = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.reversible(namespace["refused"])(0.0, 1.5)
    error = info.value
    assert (error.filename, error.lineno) == (str(module), 7)
    assert error.reason == f"revmlir does not compile '{written.split('(')[0]}'" and error.hint == f"write {hint}"
    expected = 0.0 + eval(written, {"math": math, "np": np, "a": 1.5})  # noqa: S307 - the test's own expression
    assert rv.reversible(namespace["advised"])(0.0, 1.5) == (expected, 1.5)
