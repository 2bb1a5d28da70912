"""The interpreter's semantics of upstream pure ops, checked against numpy and
Python on random inputs (two's complement wraparound for integers, IEEE
doubles for floats)."""

import cmath
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module


def binary(op: str, type: str, result: str | None = None) -> RevInterpreter:
    """``y ⊕= a OP b`` where ⊕ is xor for i1 results and + otherwise."""
    result = result or type
    update = "rev.xor" if result == "i1" else "rev.add"
    text = f"""
    rev.func @f(%y: {result}, %a: {type}, %b: {type}) {{
      %t = {op} %a, %b : {type}
      %y1 = {update} %y, %t : {result}
      rev.return %y1, %a, %b : {result}, {type}, {type}
    }}"""
    return RevInterpreter(parse_module(text, "semantics.mlir"))


def unary(op: str, type: str) -> RevInterpreter:
    text = f"""
    rev.func @f(%y: {type}, %a: {type}) {{
      %t = {op} %a : {type}
      %y1 = rev.add %y, %t : {type}
      rev.return %y1, %a : {type}, {type}
    }}"""
    return RevInterpreter(parse_module(text, "semantics.mlir"))


def wrap(value: int, bits: int) -> int:
    """Two's complement: reduce modulo 2**bits into [-2**(bits-1), 2**(bits-1))."""
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


INT_OPS = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.maxsi": max,
    "arith.minsi": min,
}


@pytest.mark.parametrize("op", INT_OPS)
@pytest.mark.parametrize("bits", [8, 32, 64])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_integer_ops_wrap_like_twos_complement(op, bits, data):
    ints = st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    a, b = data.draw(ints), data.draw(ints)
    (y, _, _) = binary(op, f"i{bits}").call("f", 0, a, b)
    assert y == wrap(INT_OPS[op](a, b), bits)


@settings(max_examples=50, deadline=None)
@given(st.integers(-1000, 1000), st.integers(-50, 50).filter(lambda b: b != 0))
def test_signed_division_family(a, b):
    def run(op):
        return binary(op, "i64").call("f", 0, a, b)[0]

    assert run("arith.divsi") == int(a / b)  # truncation toward zero
    assert run("arith.remsi") == a - b * int(a / b)
    assert run("arith.floordivsi") == a // b
    assert run("arith.ceildivsi") == -((-a) // b)


CMPI = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "ult": lambda a, b: (a % 2**64) < (b % 2**64),
    "uge": lambda a, b: (a % 2**64) >= (b % 2**64),
}


@pytest.mark.parametrize("predicate", CMPI)
@settings(max_examples=20, deadline=None)
@given(st.integers(-5, 5), st.integers(-5, 5))
def test_cmpi(predicate, a, b):
    program = binary(f"arith.cmpi {predicate},", "i64", result="i1")
    assert program.call("f", False, a, b)[0] == CMPI[predicate](a, b)


def c_pow(a: float, b: float) -> float:
    """The C library's ``pow`` (Python's ``math.pow`` calls it) with IEEE
    results where ``math.pow`` raises instead."""
    try:
        return math.pow(a, b)
    except ValueError:  # a negative base to a fractional power, or ±0 to a negative one
        if a == 0:  # a pole: ±∞ by the zero's sign for an odd exponent, +∞ otherwise
            return math.copysign(math.inf, a) if b.is_integer() and int(b) % 2 else math.inf
        return math.nan
    except OverflowError:
        return -math.inf if a < 0 and b.is_integer() and int(b) % 2 else math.inf


FLOAT_OPS = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "math.powf": c_pow,
    "math.atan2": math.atan2,
    "arith.maximumf": np.maximum,
    "math.copysign": np.copysign,
}
"""IEEE arithmetic (numpy), and the C library's functions as native code
calls them (numpy's own ``arctan2`` and ``power`` differ by an ulp)."""

finite = st.floats(-1e6, 1e6, allow_nan=False)


@pytest.mark.parametrize("op", FLOAT_OPS)
@settings(max_examples=25, deadline=None)
@given(finite, finite)
def test_float_binary_ops_are_ieee_and_the_c_librarys(op, a, b):
    (y, _, _) = binary(op, "f64").call("f", 0.0, a, b)
    with np.errstate(all="ignore"):
        expected = float(FLOAT_OPS[op](np.float64(a), np.float64(b)))
    assert y == expected or (math.isnan(y) and math.isnan(expected))


def test_float_division_by_zero_is_ieee():
    program = binary("arith.divf", "f64")
    assert program.call("f", 0.0, 1.0, 0.0)[0] == math.inf
    assert math.isnan(program.call("f", 0.0, 0.0, 0.0)[0])


UNARY = {
    "math.exp": math.exp,
    "math.log": math.log,
    "math.sqrt": math.sqrt,
    "math.sin": math.sin,
    "math.cos": math.cos,
    "math.tan": math.tan,
    "math.tanh": math.tanh,
    "math.absf": abs,
    "math.atan": math.atan,
    "math.log1p": math.log1p,
    "math.expm1": math.expm1,
    "arith.negf": lambda a: -a,
    "math.floor": math.floor,
}
"""Python's ``math`` module calls the C math library, as native code does
(numpy's own implementations differ from it by an ulp on some inputs)."""


@pytest.mark.parametrize("op", UNARY)
@settings(max_examples=25, deadline=None)
@given(st.floats(0.01, 50.0))
def test_float_unary_ops_are_the_c_librarys(op, a):
    (y, _) = unary(op, "f64").call("f", 0.0, a)
    assert y == float(UNARY[op](a))


def test_f32_rounds_to_single_precision():
    (y, _, _) = binary("arith.addf", "f32").call("f", 0.0, 0.1, 0.2)
    assert y == float(np.float32(np.float32(0.1) + np.float32(0.2)))


COMPLEX = {
    "complex.add": lambda a, b: a + b,
    "complex.mul": lambda a, b: a * b,
    "complex.div": lambda a, b: a / b,
    "complex.pow": lambda a, b: a**b,
}

nonzero_complex = st.complex_numbers(min_magnitude=0.1, max_magnitude=10)


@pytest.mark.parametrize("op", COMPLEX)
@settings(max_examples=20, deadline=None)
@given(nonzero_complex, nonzero_complex)
def test_complex_ops(op, a, b):
    (y, _, _) = binary(op, "complex<f64>").call("f", 0j, a, b)
    assert cmath.isclose(y, COMPLEX[op](a, b), rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=20, deadline=None)
@given(nonzero_complex)
def test_complex_log_exp(a):
    (y, _) = unary("complex.log", "complex<f64>").call("f", 0j, a)
    assert cmath.isclose(y, cmath.log(a), rel_tol=1e-12)
    (y, _) = unary("complex.exp", "complex<f64>").call("f", 0j, a)
    assert cmath.isclose(y, cmath.exp(a), rel_tol=1e-12)
