"""Errors of a loop body's builds that are thrown away.

An ``@rv.ordinary`` loop whose carried variable changes type is built
again with the merged type (docs/design.md, decision 80): ``s = 0`` summing
floats is built with an int ``s``, then with a float one.  A callee the
first build calls is compiled for the first build's types, and may not
compile for them: that error is postponed with the build, the call's
results stand in as weak ints (``OrdinaryBuilder.stand_ins``), and only a
build the loop keeps reports it.  Checked natively and on the interpreter
against the same loop in Python."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import revmlir as rv

HERE = Path(__file__)
LINES = HERE.read_text().splitlines()
ENGINES = ["native", "interpreter"]


def line_of(marker: str) -> int:
    return next(number for number, line in enumerate(LINES, 1) if line.rstrip().endswith(marker))


@rv.ordinary
def _angle(t):
    return math.atan2(t, 2)  # E:atan2


def _weak_int_accumulator(x):
    s = 0
    for i in range(len(x)):
        s = s + x[i] + x[i] * _angle(s)
    return s


def _weak_int_accumulator_reference(x):
    s = 0.0
    for value in x:
        s = s + value + value * math.atan2(s, 2)
    return s


@rv.primitive("sin", python=math.sin)
def _sin(t: float) -> float: ...


@rv.ordinary
def _sine(t):
    return _sin(t)


def _widening_accumulator(x, d):
    s = x[0]
    for i in range(len(d)):
        s = s + d[i] * _sine(s)
    return s


def _widening_accumulator_reference(x, d):
    s = float(x[0])
    for value in d:
        s = s + value * math.sin(s)
    return s


def _in_an_inner_loop(x):
    s = 0
    u = 0.0
    for i in range(len(x)):
        for j in range(2):
            u = u + _angle(s)
        s = s + x[i] * u
    return s


def _in_an_inner_loop_reference(x):
    s, u = 0.0, 0.0
    for value in x:
        for _ in range(2):
            u = u + math.atan2(s, 2)
        s = s + value * u
    return s


X = np.array([0.5, 1.5, -0.25])
X32 = np.array([0.75, 2.0], dtype=np.float32)
CASES = [
    (_weak_int_accumulator, _weak_int_accumulator_reference, (X,)),
    (_widening_accumulator, _widening_accumulator_reference, (X32, X)),
    (_in_an_inner_loop, _in_an_inner_loop_reference, (X,)),
]


def test_the_callees_do_not_compile_for_the_first_builds_types():
    """What makes the first builds fail: ``math.atan2`` of two ints and a
    float32 passed for a primitive's ``float``."""
    with pytest.raises(rv.ReversibleSyntaxError, match="'atan2' is not defined on int64"):
        _angle(1)
    with pytest.raises(rv.ReversibleSyntaxError, match=r"argument 1 of _sin\(\) is float32; it must be float"):
        _sine(np.float32(1.0))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("function", "reference", "args"), CASES, ids=[f.__name__ for f, _, _ in CASES])
def test_a_callee_error_of_a_build_thrown_away_is_not_reported(function, reference, args, engine):
    """The first build of each loop calls a callee that does not compile
    for its types (an int ``s``; a float32 ``s`` that the f64 elements
    widen; an inner loop settled with the error, whose enclosing loop's
    build is thrown away), the build is thrown away, and the final one
    compiles and computes what Python does."""
    f = rv.ordinary(function, backend=engine)
    assert f(*args) == pytest.approx(reference(*args), rel=1e-12)


def test_a_build_thrown_away_leaves_no_callee_behind():
    """The callee the first build asked for did not compile, and the one
    the final build compiled, for the f64 ``s``, is the module's only one,
    in the ordinary IR and in its reversible form."""
    text = rv.ordinary(_weak_int_accumulator, backend="interpreter").mlir(X)
    functions = [line.split("{")[0].strip() for line in text.splitlines() if "func @" in line]
    assert functions == [
        "func.func @_angle_0(%t: f64) -> f64",
        "func.func @_weak_int_accumulator(%x: memref<?xf64>) -> f64",
        "rev.func @_angle_0(%t: f64, %result0: f64)",
        "rev.func @_angle_0.tape(%t: f64, %result0: f64, %tape_f64: !anc.stack<f64>)",
        "rev.func @_weak_int_accumulator(%x: memref<?xf64>, %result0: f64)",
        "rev.func @_weak_int_accumulator.tape(%x: memref<?xf64>, %result0: f64, %tape_f64: !anc.stack<f64>)",
    ]


def _int_accumulator(k):
    s = 0
    for i in range(len(k)):
        s = s + k[i] * _angle(s)
    return s


def _broken_adjoint(t, g):
    return g * t[0]  # E:rule


@rv.primitive("cos", python=math.cos, adjoint=_broken_adjoint)
def _cos(t: float) -> float: ...


@rv.ordinary
def _cosine(t):
    return _cos(t)


def _calls_a_broken_rule(x):
    s = 0
    for i in range(len(x)):
        s = s + x[i] * _cosine(s)
    return s


FINAL_ERRORS = [
    (_int_accumulator, (np.array([1, 2, 3]),), "# E:atan2", "'atan2' is not defined on int64"),
    (_calls_a_broken_rule, (X,), "# E:rule", "'t' is not an array"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("function", "args", "marker", "message"), FINAL_ERRORS, ids=[f.__name__ for f, *_ in FINAL_ERRORS]
)
def test_an_error_of_the_final_build_is_reported_at_its_line(function, args, marker, message, engine):
    """Summing ints, ``s`` stays an int: the final build calls the callee
    with the int too, and its error is reported where it is.  Calling
    ``_cosine`` with the int ``s``, the first build declares ``_cos``,
    whose rule does not compile; the final build declares it again and
    meets the error (a primitive kept as declared would have left it a
    call of ``_cos`` without its declaration, refused by the verifier)."""
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.ordinary(function, backend=engine)(*args)
    error = caught.value
    assert (error.filename, error.lineno, error.reason) == (str(HERE), line_of(marker), message)
