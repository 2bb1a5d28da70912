"""Tropical (max-plus) numbers (``rv.Tropical``, ``!rev.tropical<f64>``):
``*=``/``/=`` add and subtract the reals and undo each other, ``+`` in an
expression is ``max``; results equal the max-plus arithmetic done here, both
engines agree bit for bit, and what cannot be reversible — a tropical
``+=``, the tropical zero ``-inf`` — is a located error."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import revmlir as rv

T = rv.Tropical


def _path(y: T, a: T, b: T, c: T):
    y *= a * b
    s = rv.ancilla(rv.tropical(0.0))
    s *= a + c  # max(a, c), into an ancilla the inverse can recompute
    y *= s
    s /= a + c
    rv.free(s)
    y /= rv.tropical(0.5)
    if a > b:
        y *= c


def _made(y: T, x: float):
    y *= rv.tropical(x)


ENGINES = ("native", "interpreter")


@pytest.fixture(scope="module")
def path():
    return {engine: rv.reversible(backend=engine)(_path) for engine in ENGINES}


def _expected(y: float, a: float, b: float, c: float) -> float:
    y = y + (a + b) + max(a, c) - 0.5
    return y + c if a > b else y


quarters = st.integers(-400, 400).map(lambda n: n / 4)  # sums of these are exact


@settings(max_examples=20, deadline=None)
@given(y=quarters, a=quarters, b=quarters, c=quarters)
def test_runs_are_max_plus_and_invert_bit_for_bit(path, y, a, b, c):
    outputs = {engine: f(y, a, b, c) for engine, f in path.items()}
    assert outputs["native"] == outputs["interpreter"] == (_expected(y, a, b, c), a, b, c)
    for engine, f in path.items():
        assert (~f)(*outputs[engine]) == (y, a, b, c)


def test_the_ir_has_the_tropical_type(path):
    text = path["native"].mlir(0.0, 1.0, 2.0, 3.0)
    assert "rev.func @_path(%y: !rev.tropical<f64>" in text
    assert "rev.mul" in text and "rev.div" in text and "arith.maximumf" in text


@pytest.mark.parametrize("engine", ENGINES)
def test_gradients_are_those_of_max_plus(path, engine):
    point = (0.3, 1.1, -0.4, 2.5)
    gradient = rv.gradient(path[engine], point)
    assert gradient == (1.0, 1.0, 1.0, 2.0)  # a > b, c > a: y + a + b + c - 0.5 + c
    low_c = (0.3, 1.1, -0.4, 0.5)
    assert rv.gradient(path[engine], low_c) == (1.0, 2.0, 1.0, 1.0)


def test_the_tropical_zero_is_refused(path):
    with pytest.raises(
        TypeError, match=r"^argument 'a' of _path must be a finite real number \(-inf, the tropical zero"
    ):
        path["native"](0.0, -math.inf, 0.0, 0.0)
    with pytest.raises(TypeError, match="must be a finite real number"):
        path["interpreter"](0.0, 0.0, math.nan, 0.0)


@pytest.mark.parametrize("engine", ENGINES)
def test_making_the_tropical_zero_is_a_located_error(engine):
    made = rv.reversible(backend=engine)(_made)
    assert made(1.0, 2.0) == (3.0, 2.0)
    for x in (-np.inf, np.nan):
        with pytest.raises(
            rv.ExecutionError, match=r"test_tropical.py:\d+:\d+: 'rev.to_tropical' in @_made: .* is no tropical number"
        ):
            made(1.0, x)


def test_a_tropical_sum_into_a_variable_is_refused():
    def accumulate(y: T, a: T):
        y += a

    def minus(y: T, a: T):
        y -= a

    for f, text in ((accumulate, "y += a"), (minus, "y -= a")):
        with pytest.raises(
            rv.ReversibleSyntaxError,
            match=rf"test_tropical.py:\d+:\d+: '{re.escape(text)}' is not reversible: a tropical \+= is max",
        ):
            rv.reversible(f)(0.0, 1.0)
