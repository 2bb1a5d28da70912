"""Every complex function the lowering translates gives the same bits on
both engines (issue 16): the interpreter runs ``complex_functions`` on
floats with the C library's functions, native code the same algorithms as
LLVM instructions.  Inputs: random ones and the edge cases (signed zeros,
10^±300, infinities, NaN, the negative real axis, pure imaginary numbers).
An independent reference checks the results: ``cmath`` within a few ulps
where it is finite and well conditioned, ``mpmath`` at 40 digits for the
functions ``cmath`` lacks (``expm1``, ``log1p``: near 0 too, where
``exp(z) − 1`` and ``log(1 + z)`` lose every digit)."""

import cmath
import functools
import itertools
import math
import struct

import mpmath
import numpy as np
import pytest

import revmlir as rv
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule
from test_native_numerics import exact_power, normwise_error

EPS = 2.0**-52
UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "expm1", "log1p", "rsqrt", "sign"]
TO_REAL = ["abs", "angle"]
BINARY = ["mul", "div", "pow"]

PARTS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    math.pi,
    22.5,
    710.0,
    -800.0,
    1e300,
    -1e300,
    1e-300,
    -1e-300,
    5e-324,
    math.inf,
    -math.inf,
    math.nan,
]
"""Real and imaginary parts of the edge cases: every pair of them is one
(the negative real axis with both zeros, pure imaginary numbers, …)."""

rng = np.random.default_rng(1616)
EDGES = [complex(x, y) for x, y in itertools.product(PARTS, PARTS)]
RANDOM = [complex(*(rng.choice([-1.0, 1.0], 2) * 10.0 ** rng.uniform(-3, 2, 2))) for _ in range(150)]
SMALL = [complex(*(rng.choice([-1.0, 1.0], 2) * 10.0 ** rng.uniform(-150, -3, 2))) for _ in range(60)]
"""Inputs near 0 (parts 10⁻¹⁵⁰ to 10⁻³ in size, often of very different
sizes), where e^z − 1 and log(1 + z) are near 0 too."""


def _function(name: str, op: str, operands: int, result: str, float: str = "f64") -> str:
    names = ["%a", "%b"][:operands]
    typed = ", ".join(f"{n}: complex<{float}>" for n in names)
    kept = ", ".join(names)
    types = ", ".join([f"complex<{float}>"] * operands)
    return f"""
rev.func @{name}(%y: {result}, {typed}) {{
  %t = complex.{op} {kept} : complex<{float}>
  %y1 = rev.add %y, %t : {result}
  rev.return %y1, {kept} : {result}, {types}
}}"""


@functools.cache
def _free_engines(element: str) -> tuple[RevInterpreter, NativeModule]:
    module = parse_module(FREE.replace("f64", element), "free.mlir")
    return RevInterpreter(module), NativeModule.compile(module)


def _freed_alike(element: str, a: complex, b: complex, close: bool) -> None:
    """``a`` freed against ``b`` on both engines: it passes where ``close``,
    otherwise stops at the free with the same located error."""
    for engine in _free_engines(element):
        if close:
            assert repr(engine.call("free_check", a, b)) == repr((a, b))
        else:
            with pytest.raises(
                rv.InvertibilityError, match=r"^free.mlir:4:3: 'anc.free' in @free_check: ancilla freed"
            ):
                engine.call("free_check", a, b)


def _source(float: str) -> str:
    return "\n".join(
        [_function(f"c_{op}", op, 1, f"complex<{float}>", float) for op in UNARY]
        + [_function(f"c_{op}", op, 1, float, float) for op in TO_REAL]
        + [_function(f"c_{op}", op, 2, f"complex<{float}>", float) for op in BINARY]
    )


SOURCE = _source("f64")


@pytest.fixture(scope="module")
def engines() -> tuple[RevInterpreter, NativeModule]:
    module = parse_module(SOURCE, "complex_engines.mlir")
    return RevInterpreter(module), NativeModule.compile(module)


def bits(value: complex | float) -> tuple[bytes, ...]:
    """The parts' bytes, any NaN as one (payloads are not semantics)."""
    parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
    return tuple(b"nan" if math.isnan(p) else struct.pack("<d", p) for p in parts)


def run_both(engines, name: str, args: tuple[complex, ...]):
    interpreter, native = engines
    zero = 0.0 if name in TO_REAL else 0j
    expected = interpreter.call(f"c_{name}", zero, *args)[0]
    got = native.call(f"c_{name}", zero, *args)[0]
    assert bits(got) == bits(expected), (name, args, got, expected)
    return expected


def normwise(got: complex, reference: complex) -> float:
    return abs(got - reference) / abs(reference) if reference else abs(got)


def _precise(function):
    """``function`` of mpmath at 40 digits, rounded to a complex; mpmath
    has no signed zeros, so a negative imaginary part (−0 included: the
    lower side of a branch cut) is taken by symmetry, f(z̄) = f(z)‾."""

    def reference(z: complex) -> complex:
        if math.copysign(1.0, z.imag) < 0:
            return reference(z.conjugate()).conjugate()
        with mpmath.workdps(40):
            return complex(function(mpmath.mpc(z)))

    return reference


REFERENCE = {
    "expm1": _precise(mpmath.expm1),
    "log1p": _precise(mpmath.log1p),
    "rsqrt": _precise(lambda z: 1 / mpmath.sqrt(z)),
    "sign": _precise(lambda z: z / abs(z)),
    "exp": cmath.exp,
    "log": cmath.log,
    "sqrt": cmath.sqrt,
    "sin": cmath.sin,
    "cos": cmath.cos,
    "tan": cmath.tan,
    "tanh": cmath.tanh,
}


@pytest.mark.parametrize("name", UNARY + TO_REAL)
def test_functions_of_one_operand_are_the_same_bits_on_both_engines(engines, name):
    """Every edge case and random input; ``cmath`` (or the real closed
    forms for ``abs``/``angle``) within 8 ε normwise on the random ones and
    the finite edge cases of moderate size, where it does not raise."""
    worst = 0.0
    for z in EDGES + RANDOM + SMALL:
        got = run_both(engines, name, (z,))
        moderate = cmath.isfinite(z) and (z == 0 or 1e-200 < abs(z) < 700)
        if name in TO_REAL or not moderate:
            continue
        try:
            reference = REFERENCE[name](z)
        except (ValueError, OverflowError, ZeroDivisionError):
            continue
        if cmath.isfinite(reference) and abs(reference) > 1e-290:
            worst = max(worst, normwise(got, reference))
    assert worst <= 8 * EPS, (name, worst)
    if name == "abs":
        assert run_both(engines, name, (3 - 4j,)) == 5.0
        assert run_both(engines, name, (1.5e308 + 1.5e308j,)) == math.inf
    if name == "angle":
        assert run_both(engines, name, (complex(-1, -0.0),)) == -math.pi
        assert run_both(engines, name, (-1 + 0.0j,)) == math.pi


NEAR_ONE = [
    1 + 4e-12j,
    1 - 1e-200j,
    1.0000001 + 0j,
    -1 + 1e-10j,
    1e-9 + 1j,
    0.9999995 + 1e-3j,
    0.99999999995 + 1e-5j,
    0.6 + 0.8j,
    0.7 + 0.71j,
    -0.6793449364004376 - 0.6894768360299789j,
    0.41972 + 0.28673j,
    1.9 + 0.3j,
]
"""Near |z| = 1 on and off the axes (where x² + y² − 1 cancels most), and
near the window's ends."""


def test_log_near_the_unit_circle_keeps_its_small_real_part(engines):
    """log |z| for |z| near 1, where the log of hypot(x, y) rounded it away
    (log(1 + 4·10⁻¹²i) has the real part 8·10⁻²⁴; it was 0): each part
    within 4 ε of ``mpmath`` at 40 digits, on both engines alike."""
    reference = _precise(mpmath.log)
    for z in NEAR_ONE:
        got, expected = run_both(engines, "log", (z,)), reference(z)
        assert abs(got.real - expected.real) <= 4 * EPS * abs(expected.real), (z, got, expected)
        assert abs(got.imag - expected.imag) <= 4 * EPS * abs(expected.imag), (z, got, expected)


@pytest.mark.parametrize("name", BINARY)
def test_functions_of_two_operands_are_the_same_bits_on_both_engines(engines, name):
    """Random pairs, pairs of edge cases and mixes; the product and the
    quotient within 8 ε of ``cmath``'s (Smith's algorithm, as numpy's,
    overflows the reciprocal of a subnormal divisor: those are compared
    across engines only), powers with integer exponents too
    (by squaring), other powers within their condition number |w log z| ε."""
    edges = EDGES[::7]
    pairs = [(a, b) for a in edges for b in edges][::3]
    pairs += list(zip(RANDOM, RANDOM[::-1], strict=True))
    pairs += [(z, complex(n)) for z, n in zip(RANDOM, rng.integers(-99, 100, len(RANDOM)), strict=True)]
    pairs += [(e, z) for e, z in zip(EDGES[::5], RANDOM, strict=False)]
    worst = 0.0
    for a, b in pairs:
        got = run_both(engines, name, (a, b))
        if not (cmath.isfinite(a) and cmath.isfinite(b)) or a == 0 or max(abs(b.real), abs(b.imag)) < 1e-300:
            continue
        if name == "pow":
            if abs(a) > 1e3 or abs(a) < 1e-3 or abs(b) > 100:
                continue
            if b.imag == 0 and b.real == int(b.real):
                if not 1e-290 < abs(a) ** b.real < 1e290:
                    continue
                worst = max(worst, normwise_error(got, exact_power(a, int(b.real))) / 40)
                continue
            reference = complex(a) ** complex(b)
            condition = max(1.0, abs(b * cmath.log(a)))
        else:
            reference = a * b if name == "mul" else complex(a) / complex(b)
            condition = 1.0
        if cmath.isfinite(reference) and 1e-290 < abs(reference) < 1e290:
            worst = max(worst, normwise(got, reference) / condition)
    assert worst <= 8 * EPS, (name, worst)


@pytest.mark.parametrize(
    "name, z, expected",
    [
        ("exp", 1000 + 1j, (math.inf, math.inf)),
        ("exp", 1e200 + 0j, (math.inf, 0.0)),
        ("log", 0j, (-math.inf, 0.0)),
        ("log", complex(-0.0, -0.0), (-math.inf, -math.pi)),
        ("sqrt", -4 + 0.0j, (0.0, 2.0)),
        ("sqrt", complex(-4, -0.0), (0.0, -2.0)),
        ("sin", 1 + 800j, (math.inf, math.inf)),
        ("cos", 1 + 800j, (math.inf, -math.inf)),
        ("tanh", 800 + 1j, (1.0, 0.0)),
        ("expm1", 1000 + 0j, (math.inf, 0.0)),
        ("expm1", complex(-math.inf, -0.0), (-1.0, -0.0)),
        ("expm1", complex(-0.0, 0.0), (-0.0, 0.0)),
        ("log1p", -1 + 0j, (-math.inf, 0.0)),
        ("log1p", complex(-2, -0.0), (0.0, -math.pi)),
        ("log1p", complex(math.inf, -1.0), (math.inf, -0.0)),
        ("rsqrt", -4 + 0.0j, (0.0, -0.5)),
        ("rsqrt", complex(math.inf, 0.0), (0.0, 0.0)),
        ("sign", 1e308 + 1e308j, (1 / math.sqrt(2), 1 / math.sqrt(2))),
        ("sign", complex(-math.inf, math.inf), (-1 / math.sqrt(2), 1 / math.sqrt(2))),
        ("sign", complex(-0.0, 0.0), (-0.0, 0.0)),
        ("sign", complex(math.inf, -2.0), (1.0, -0.0)),
    ],
)
def test_where_cmath_raises_both_engines_give_the_same_ieee_value(engines, name, z, expected):
    """An overflow is an infinity, ``log 0`` −∞, never an error: ``cmath``
    raises on these, both engines agree on IEEE's values (the branch cut
    sides by the sign of the zero)."""
    got = run_both(engines, name, (z,))
    assert (got.real, got.imag) == expected, (name, z, got)


def test_powers_of_zero_and_to_zero_on_both_engines(engines):
    assert run_both(engines, "pow", (0j, 2.5 + 1j)) == 0j
    assert all(math.isnan(p) for p in (lambda v: (v.real, v.imag))(run_both(engines, "pow", (0j, -1 + 0j))))
    assert run_both(engines, "pow", (complex(math.nan, 1.0), 0j)) == 1 + 0j
    assert run_both(engines, "pow", (1j, 2 + 0j)) == -1 + 0j


FREE = """
rev.func @free_check(%a: complex<f64>, %b: complex<f64>) {
  %z = anc.alloc %a : complex<f64>
  anc.free %z, %b : complex<f64>
  rev.return %a, %b : complex<f64>, complex<f64>
}"""


@pytest.mark.parametrize(
    "a, b, close",
    [
        (1 + 1j, 1 + 1j, True),
        (1 + 1j, 1 + 1j + 1e-12, True),
        (1 + 1j, 2 + 1j, False),
        (1.5e308 + 1.5e308j, 1.5e308 + 1.4999999999e308j, True),
        (1.5e308 + 1.5e308j, -1.5e308 + 1.5e308j, False),
        (complex(math.inf, 1), complex(math.inf, 1), True),
        (complex(math.nan, 1), complex(math.nan, 1), True),
        (complex(math.nan, 1), complex(math.nan, 2), False),
        (complex(math.nan, 1), complex(1, math.nan), False),
    ],
)
def test_a_check_of_complex_numbers_decides_alike_on_both_engines(a, b, close):
    """A free's check: equal, or a finite |a − b| within the tolerance
    (relative or absolute), the parts NaN in both taken as equal.
    ``cmath.isclose`` took the infinite gap of 1.5·10³⁰⁸(1+i) −
    1.5·10³⁰⁸(−1+i) as close, native code did not."""
    _freed_alike("f64", a, b, close)


@pytest.mark.parametrize("element", ["f64", "f32"])
@pytest.mark.parametrize(
    "a, b, close",
    [
        (complex(math.nan, math.inf), complex(math.nan, math.inf), True),
        (complex(math.inf, math.nan), complex(math.inf, math.nan), True),
        (complex(math.nan, -math.inf), complex(math.nan, -math.inf), True),
        (complex(math.nan, math.inf), complex(math.nan, -math.inf), False),
        (complex(math.nan, math.inf), complex(math.nan, 1.0), False),
        (complex(math.inf, math.nan), complex(math.inf, math.inf), False),
    ],
)
def test_a_nan_part_next_to_an_equal_infinite_part_is_freed_on_both_engines(element, a, b, close):
    """The parts NaN in both are taken as 0, and the numbers are then equal:
    ``nan+∞j`` is itself, though the difference of the infinite parts is
    NaN, which no tolerance passes."""
    _freed_alike(element, a, b, close)


REAL_F32 = """
rev.func @r_f32(%y: f32, %a: f32, %b: f32) {
  %e = math.exp %a : f32
  %t = math.tanh %b : f32
  %p = math.powf %e, %t : f32
  %y1 = rev.add %y, %p : f32
  rev.return %y1, %a, %b : f32, f32, f32
}"""


def _in_f32_range(z: complex) -> bool:
    """Whether ``z`` is a complex<f32> argument (a finite part beyond
    f32's range is an argument error)."""
    return all(not math.isfinite(part) or abs(part) < 1e38 for part in (z.real, z.imag))


def test_complex_f32_functions_are_the_same_bits_on_both_engines():
    """complex<f32> parts are computed in single precision by native code,
    each operation rounded to f32 and the C library's ``expf``, ``hypotf``
    … called: the interpreter computes them alike (it computed in double
    and rounded the result, a few ulps of f32 apart on most inputs), and
    real f32 functions call the single-precision ones too."""
    module = parse_module(_source("f32") + REAL_F32, "complex_f32.mlir")
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    inputs = [z for z in EDGES[::3] + RANDOM[:40] + SMALL[:10] if _in_f32_range(z)]
    for name in UNARY + TO_REAL:
        zero = 0.0 if name in TO_REAL else 0j
        for z in inputs:
            expected = interpreter.call(f"c_{name}", zero, z)[0]
            assert bits(native.call(f"c_{name}", zero, z)[0]) == bits(expected), (name, z)
    for name in BINARY:
        for a, b in zip(inputs, inputs[::-1], strict=True):
            expected = interpreter.call(f"c_{name}", 0j, a, b)[0]
            assert bits(native.call(f"c_{name}", 0j, a, b)[0]) == bits(expected), (name, a, b)
    for a, b in zip(RANDOM[:40], RANDOM[40:80], strict=True):
        assert native.call("r_f32", 0.0, a.real, b.imag) == interpreter.call("r_f32", 0.0, a.real, b.imag)
