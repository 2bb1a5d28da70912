"""A number to a constant integer power from 1 to 4 is repeated
multiplication on both engines, bit for bit alike: ``a ** 3`` is
``a * a * a``, within an ulp per multiplication of Python's ``pow``
(``0.3 ** 3`` is ``0.027``, Python's ``0.026999999999999996``), and of
every number type that multiplies (``rv.Fixed``, ``rv.Tropical``,
complex), none of which has a ``pow``.  A float exponent, ``a ** 3.0``, is
``pow``, rounded as Python rounds it (docs/python.md, "Numbers")."""

from __future__ import annotations

import math
from functools import reduce
from operator import mul

import numpy as np
import pytest

import revmlir as rv

ENGINES = ("interpreter", "native")
BASES = [0.3, 1.1, -2.7, 1e-100, 7.0 / 3.0, 123.456]
F43 = rv.Fixed[43]


def square(y, a):
    y += a**2


def cube(y, a):
    y += a**3


def fourth(y, a):
    y += a**4


def float_cube(y, a):
    y += a**3.0


def fixed_cube(y: F43, a: F43):
    y += a**3


def fixed_fourth(y: F43, a: F43):
    y += a**4


def tropical_cube(y: rv.Tropical, a: rv.Tropical):
    y *= a**3


def tropical_fourth(y: rv.Tropical, a: rv.Tropical):
    y *= a**4


def complex_cube(y: complex, a: complex):
    y += a**3


def complex_fourth(y: complex, a: complex):
    y += a**4


POWERS = [(square, 2), (cube, 3), (fourth, 4)]


def _product(a: object, exponent: int) -> object:
    """``a * a * ... * a``, left to right, as the frontend multiplies."""
    return reduce(mul, [a] * exponent)


@pytest.mark.parametrize(("function", "exponent"), POWERS)
def test_a_constant_power_is_repeated_multiplication_on_both_engines(function, exponent: int):
    found = {engine: [rv.reversible(backend=engine)(function)(0.0, a)[0] for a in BASES] for engine in ENGINES}
    assert found["native"] == found["interpreter"] == [_product(a, exponent) for a in BASES]
    single = {engine: rv.reversible(backend=engine)(function)(0.0, np.float32(0.3))[0] for engine in ENGINES}
    assert single["native"] == single["interpreter"] == _product(np.float32(0.3), exponent)


@pytest.mark.parametrize(("function", "exponent"), POWERS)
def test_a_constant_power_is_within_an_ulp_per_multiplication_of_pythons(function, exponent: int):
    """``exponent - 1`` roundings, each within half an ulp, and ``pow``'s
    own error, below an ulp: at most ``exponent - 1`` ulps apart."""
    compiled = rv.reversible(backend="native")(function)
    for a in BASES:
        expected = a**exponent
        assert abs(compiled(0.0, a)[0] - expected) <= (exponent - 1) * math.ulp(expected)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_float_exponent_is_pow(engine: str):
    compiled = rv.reversible(backend=engine)(float_cube)
    assert [compiled(0.0, a)[0] for a in BASES] == [a**3.0 for a in BASES]


@pytest.mark.parametrize(("function", "exponent"), [(fixed_cube, 3), (fixed_fourth, 4)])
def test_a_fixed_point_number_to_a_constant_power(function, exponent: int):
    """Exact where the power has 43 fraction bits; the engines agree on
    the stored bits where it has not."""
    compiled = {engine: rv.reversible(backend=engine)(function) for engine in ENGINES}
    for a in (1.5, -0.75, 2.25):
        for f in compiled.values():
            assert f(F43(0.0), F43(a))[0] == F43(a**exponent)
    inexact = [f(F43(0.0), F43(1.1))[0].raw for f in compiled.values()]
    assert inexact[0] == inexact[1]
    assert float(compiled["native"](F43(0.0), F43(1.1))[0]) == pytest.approx(1.1**exponent, rel=1e-12)


@pytest.mark.parametrize(("function", "exponent"), [(tropical_cube, 3), (tropical_fourth, 4)])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_tropical_number_to_a_constant_power_is_a_multiple(engine: str, function, exponent: int):
    """A max-plus product is a sum: ``a ** n`` is ``n·a``."""
    compiled = rv.reversible(backend=engine)(function)
    for y, a in ((0.5, 1.25), (-2.0, -0.75)):
        assert compiled(y, a) == (y + exponent * a, a)


@pytest.mark.parametrize(("function", "exponent"), [(complex_cube, 3), (complex_fourth, 4)])
def test_a_complex_number_to_a_constant_power(function, exponent: int):
    compiled = {engine: rv.reversible(backend=engine)(function) for engine in ENGINES}
    for a in (1 + 2j, 0.3 - 0.7j):
        found = [f(0j, a)[0] for f in compiled.values()]
        assert found[0] == found[1] == _product(a, exponent)
    assert compiled["native"](0j, 1 + 2j)[0] == (1 + 2j) ** exponent  # exact: Gaussian integers


@pytest.mark.parametrize("engine", ENGINES)
def test_a_constant_power_keeps_its_derivative(engine: str):
    gradient = rv.gradient(rv.reversible(backend=engine)(cube), (0.0, 0.3))
    assert gradient[1] == pytest.approx(3 * 0.3**2, rel=1e-15)
