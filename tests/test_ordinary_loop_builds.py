"""Errors of a loop body's builds that are thrown away.

An ``@rv.ordinary`` loop whose carried variable changes type is built
again with the merged type (docs/design.md, decision 80): ``s = 0`` summing
floats is built with an int ``s``, then with a float one.  A callee the
first build calls is compiled for the first build's types, and may not
compile for them: that error is postponed with the build, stand-ins below
every type are the call's results (``OrdinaryBuilder.stand_ins``), and
only a build the loop keeps reports it.  So is a primitive's mistyped
argument, and an operation that fails on a stand-in; any other error of
the build is its own, reported first.  Checked natively and on the
interpreter against the same loop in Python."""

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


def _through_an_operation(x):
    s = 0
    for i in range(len(x)):
        s = s + x[i] + x[i] * math.atan2(_angle(s), 2)
    return s


def _through_an_operation_reference(x):
    s = 0.0
    for value in x:
        s = s + value + value * math.atan2(math.atan2(s, 2), 2)
    return s


def _primitive_in_the_body(x, d):
    s = x[0]
    for i in range(len(d)):
        s = s + d[i] * _sin(s)
    return s


@rv.ordinary
def _to_float(t):
    return float(t)


def _through_a_condition(x32):
    s = 0
    for i in range(len(x32)):
        if _angle(s) > 0:
            t = x32[i]
        else:
            t = x32[0]
        s = s + t
    return s


def _through_a_condition_reference(x32):
    s = np.float32(0)
    for value in x32:
        s = s + (value if math.atan2(s, 2) > 0 else x32[0])
    return s


def _through_a_conversion(x):
    s = 0
    for i in range(len(x)):
        s = s + float(_angle(s)) + 1
    return s


def _through_a_call(x):
    s = 0
    for i in range(len(x)):
        s = s + _to_float(_angle(s)) + 1
    return s


def _through_a_conversion_reference(x):
    s = 0.0
    for _ in x:
        s = s + math.atan2(s, 2) + 1
    return s


X = np.array([0.5, 1.5, -0.25])
X32 = np.array([0.75, 2.0], dtype=np.float32)
CASES = [
    (_weak_int_accumulator, _weak_int_accumulator_reference, (X,)),
    (_widening_accumulator, _widening_accumulator_reference, (X32, X)),
    (_in_an_inner_loop, _in_an_inner_loop_reference, (X,)),
    (_through_an_operation, _through_an_operation_reference, (X,)),
    (_primitive_in_the_body, _widening_accumulator_reference, (X32, X)),
    (_through_a_condition, _through_a_condition_reference, (np.array([0.75, 2.0, 1.5], dtype=np.float32),)),
    (_through_a_conversion, _through_a_conversion_reference, (X,)),
    (_through_a_call, _through_a_conversion_reference, (X,)),
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
    build is thrown away; ``math.atan2`` of the stand-in int, which fails
    too; a primitive called with the float32 ``s``), the build is thrown
    away, and the final one compiles and computes what Python does.  What
    is computed of a stand-in but knows its own type is no stand-in: an
    ``if`` on a comparison of one (its results are ``float32``), an
    explicit ``float()`` of one, a call of another function with one (its
    result is the ``f64`` it returns); they make ``s`` a float."""
    f = rv.ordinary(function, backend=engine)
    assert f(*args) == pytest.approx(reference(*args), rel=1e-12)


def test_a_build_thrown_away_leaves_no_callee_behind():
    """The callee the first build asked for did not compile, and the one
    the final build compiled, for the f64 ``s``, is the module's only one,
    in the ordinary IR and in its reversible form; the one that failed
    keeps its name, ``_angle`` (docs/design.md, decision 93)."""
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


@rv.ordinary
def _declared_int(t) -> int:
    return t  # E:declared


def _int32_product(k):
    s = k[0]
    for i in range(len(k)):
        s = s * _declared_int(s)
    return s


def _int32_product_through_an_if(k):
    s = k[0]
    for i in range(len(k)):
        if k[i] > 2:
            t = _declared_int(s)
        else:
            t = _declared_int(s) + 1
        s = s * t
    return s


def _int32_product_through_an_inner_loop(k):
    s = k[0]
    for i in range(len(k)):
        t = _declared_int(s)
        for j in range(2):
            t = t + 1
        s = s * t
    return s


FINAL_ERRORS = [
    (_int_accumulator, (np.array([1, 2, 3]),), "# E:atan2", "'atan2' is not defined on int64"),
    (_calls_a_broken_rule, (X,), "# E:rule", "'t' is not an array"),
    (
        _int32_product,
        (np.array([2, 3], dtype=np.int32),),
        "# E:declared",
        "_declared_int is declared to return int64 but returns int32",
    ),
    *(
        (
            function,
            (np.array([2, 3], dtype=np.int32),),
            "# E:declared",
            "_declared_int is declared to return int64 but returns int32",
        )
        for function in (_int32_product_through_an_if, _int32_product_through_an_inner_loop)
    ),
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
    call of ``_cos`` without its declaration, refused by the verifier).
    An ``int32`` product calls ``_declared_int`` with an ``int32``, which
    it does not return as the ``int`` declared: the stand-in for its
    result takes the ``int32`` it meets, so the loop is not built again
    with an ``int64`` ``s`` for which the callee compiles; nor is it where
    two stand-ins meet, after an ``if`` whose branches both call it or
    around an inner loop that carries one: what they merge into is a
    stand-in too."""
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.ordinary(function, backend=engine)(*args)
    error = caught.value
    assert (error.filename, error.lineno, error.reason) == (str(HERE), line_of(marker), message)


def _stores_a_float(x, k):
    s = 0
    for i in range(len(x)):
        s = s + x[i] * _angle(s)
        k[i] = 0.5 * x[i]  # E:store
    return s


def _names_an_unknown_variable(x, k):
    s = 0
    for i in range(len(x)):
        s = s + x[i] * (_angle(s) + nowhere)  # noqa: F821  # E:unknown
    return s


@rv.ordinary
def _sum(a, b):
    return a + b


def _passes_a_failing_argument(x, k):
    s = 0
    for i in range(len(x)):
        s = s + x[i] * _sum(_angle(s), math.atan2(k[i], 2))  # E:argument
    return s


def _stores_a_float_in_an_inner_loop(x, k):
    s = 0
    for i in range(len(x)):
        s = s + x[i] * _angle(s)
        for j in range(len(k)):
            s = s + x[i] * _angle(j)
            k[j] = 0.5 * x[i]  # E:inner
    return s


OWN_ERRORS = [
    (_stores_a_float, "# E:store", "cannot store float into 'k', an array of int64"),
    (_names_an_unknown_variable, "# E:unknown", "unknown variable 'nowhere'"),
    (_passes_a_failing_argument, "# E:argument", "'atan2' is not defined on int64"),
    (_stores_a_float_in_an_inner_loop, "# E:inner", "cannot store float into 'k', an array of int64"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("function", "marker", "message"), OWN_ERRORS, ids=[f.__name__ for f, *_ in OWN_ERRORS])
def test_an_error_of_the_body_itself_is_reported_before_a_postponed_one(function, marker, message, engine):
    """The first build postpones ``_angle``'s error for the int ``s``, then
    meets an error of its own, which no stand-in caused: a statement's, or
    an expression's beside the stand-in (the sum of the stand-in and the
    unknown name does not take its operand's error for its own, nor does
    a call the error of its argument beside the stand-in, located anew
    where the argument's compile ends).  An inner loop's error notes its
    body's postponed error once, not again for each loop around it.  That is
    the error reported, at its line, noting the postponed one."""
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.ordinary(function, backend=engine)(X, np.zeros(3, dtype=np.int64))
    error = caught.value
    assert error.lineno == line_of(marker) and error.msg.startswith(message)
    assert error.__notes__ == [
        f"the loop's body also postponed this error: {HERE}:{line_of('# E:atan2')}:12: 'atan2' is not defined on int64"
    ]
