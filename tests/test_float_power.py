"""A float to a constant integer power is Python's ``pow`` on both engines:
``a ** 3`` and ``a ** 4`` as ``pow`` rounds them once, not as repeated
multiplications round them twice or three times; ``a ** 2`` is ``a * a``,
rounded once.  A power with no real value is a NaN on both engines, of
either sign (docs/python.md, "Numbers")."""

from __future__ import annotations

import math

import numpy as np
import pytest

import revmlir as rv

BASES = [0.3, 1.1, -2.7, 1e-100, 7.0 / 3.0, 123.456]


def cube(y, a):
    y += a**3


def fourth(y, a):
    y += a**4


def square(y, a):
    y += a**2


@pytest.mark.parametrize("engine", ["interpreter", "native"])
@pytest.mark.parametrize(("function", "exponent"), [(square, 2), (cube, 3), (fourth, 4)])
def test_a_constant_power_is_pythons(engine: str, function, exponent: int):
    compiled = rv.reversible(backend=engine)(function)
    found = [compiled(0.0, a)[0] for a in BASES]
    assert found == [a**exponent for a in BASES]
    assert compiled(0.0, np.float32(0.3))[0] == np.float32(0.3) ** exponent


@pytest.mark.parametrize("engine", ["interpreter", "native"])
def test_a_constant_power_keeps_its_derivative(engine: str):
    gradient = rv.gradient(rv.reversible(backend=engine)(cube), (0.0, 0.3))
    assert gradient[1] == pytest.approx(3 * 0.3**2, rel=1e-15)


def root(y, a):
    y += a**0.5


@pytest.mark.parametrize("engine", ["interpreter", "native"])
def test_a_power_of_no_real_value_is_a_nan(engine: str):
    assert math.isnan(rv.reversible(backend=engine)(root)(0.0, -1.5)[0])
