"""``range(a, b, s)`` with a step known only when the function runs, of
either sign: Python's indices in Python's order, forwards, reversed and
inverted, on both engines; a zero step stops the run at the range call.
Ordinary code (``@rv.ordinary``) takes it too, called and differentiated."""

from __future__ import annotations

import inspect
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import revmlir as rv

ENGINES = ("native", "interpreter")
I64 = st.integers(-(2**63), 2**63 - 1)


def _visit(out, n, a, b, s):
    for i in range(a, b, s):
        out[n] += i
        n += 1


def _visit_reversed(out, n, a, b, s):
    for i in reversed(range(a, b, s)):
        out[n] += i
        n += 1


def _ordinary_visit(out, a, b, s):
    n = 0
    for i in range(a, b, s):
        out[n] = i
        n += 1
    return n


def _horner(x: float, a: int, b: int, s: int) -> float:
    t = 0.0
    for i in range(a, b, s):
        t = t * x + i
    return t


VISIT = {engine: rv.reversible(backend=engine)(_visit) for engine in ENGINES}
VISIT_REVERSED = {engine: rv.reversible(backend=engine)(_visit_reversed) for engine in ENGINES}
ORDINARY_VISIT = {engine: rv.ordinary(backend=engine)(_ordinary_visit) for engine in ENGINES}
HORNER = {engine: rv.ordinary(backend=engine)(_horner) for engine in ENGINES}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("a, b, s", [(0, 3, -1), (0, -6, -2), (6, 0, -2), (0, 6, 2), (5, -2, -3), (3, 3, -1)])
def test_a_run_time_step_of_either_sign_visits_pythons_indices(engine: str, a: int, b: int, s: int):
    out = np.zeros(8, np.int64)
    _, n, *_ = VISIT[engine](out, 0, a, b, s)
    assert out[:n].tolist() == list(range(a, b, s)) and not out[n:].any()
    back = np.zeros(8, np.int64)
    _, m, *_ = VISIT_REVERSED[engine](back, 0, a, b, s)
    assert back[:m].tolist() == list(reversed(range(a, b, s)))
    restored = (~VISIT[engine])(out, n, a, b, s)
    assert not restored[0].any() and restored[1] == 0


@settings(max_examples=60, deadline=None)
@given(I64, I64.filter(lambda s: s != 0), st.integers(0, 8), st.integers(0, 2**63))
def test_run_time_steps_agree_with_python_at_the_ends_of_int64(a: int, s: int, count: int, short: int):
    """Bounds near ±2⁶³ and steps up to its size: the count is taken
    unsigned, so nothing wraps, and the indices are Python's."""
    b = a + count * s - (short % abs(s) if count else 0) * (1 if s > 0 else -1)
    assume(-(2**63) <= b < 2**63)
    for engine in ENGINES:
        out = np.zeros(8, np.int64)
        _, n, *_ = VISIT[engine](out, 0, a, b, s)
        assert out[:n].tolist() == list(range(a, b, s)), engine
        visited = np.zeros(8, np.int64)
        n = ORDINARY_VISIT[engine](visited, a, b, s)
        assert visited[:n].tolist() == list(range(a, b, s)), engine


@pytest.mark.parametrize("engine", ENGINES)
def test_a_zero_run_time_step_stops_the_run_at_the_range_call_in_pythons_words(engine: str):
    """Forwards, reversed and inverted: Python's ``ValueError`` words at the
    ``range`` call, not the loop's refusal of a zero step."""
    for function, line in (
        (VISIT[engine], _visit),
        (VISIT_REVERSED[engine], _visit_reversed),
        (~VISIT[engine], _visit),
    ):
        source, first = inspect.getsourcelines(line)
        column = source[1].index("range(") + 1
        where = f"test_range_run_time_step.py:{first + 1}:{column}: "
        with pytest.raises(rv.ExecutionError, match=re.escape(where) + r".*: range\(\) step must not be zero$"):
            function(np.zeros(8, np.int64), 0, 0, 3, 0)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_run_time_negative_step_differentiates(engine: str):
    @rv.reversible(backend=engine)
    def f(y, x, n, s):
        for i in range(n, -1, s):
            y += x * float(i)

    assert rv.gradient(f, (0.0, 2.0, 6, -2)) == (1.0, 12.0, 0, 0)


# -- ordinary code ---------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("a, b, s", [(0, 3, -1), (0, -6, -2), (6, 0, -2), (0, 6, 2), (5, -2, -3), (3, 3, -1)])
def test_ordinary_code_takes_a_run_time_step_of_either_sign(engine: str, a: int, b: int, s: int):
    """Called (native code runs it as written, the interpreter its
    reversible form) and differentiated: Horner's ``t·x + i`` over the
    indices, whose derivative in ``x`` is Python's of the same sum."""
    out = np.zeros(8, np.int64)
    n = ORDINARY_VISIT[engine](out, a, b, s)
    assert out[:n].tolist() == list(range(a, b, s)) and not out[n:].any()
    indices = list(range(a, b, s))
    assert HORNER[engine](1.5, a, b, s) == _horner(1.5, a, b, s)
    slope = sum((len(indices) - 1 - k) * 1.5 ** (len(indices) - 2 - k) * i for k, i in enumerate(indices[:-1]))
    assert rv.gradient(HORNER[engine], (1.5, a, b, s))[0] == pytest.approx(slope, rel=1e-14)
    assert rv.jvp(HORNER[engine], (1.5, a, b, s), (1.0, None, None, None))[1][0] == pytest.approx(slope, rel=1e-14)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_zero_run_time_step_of_ordinary_code_stops_at_the_range_call(engine: str):
    """Called, differentiated in both modes: Python's words at the
    ``range`` call of the function as written (its tangent's name for the
    tangent, as a reversible function's)."""
    source, first = inspect.getsourcelines(_horner)
    where = f"{__file__}:{first + 2}:{source[2].index('range(') + 1}: 'cf.assert' in @_horner"
    runs = (
        ("", lambda: HORNER[engine](1.5, 0, 3, 0)),
        ("", lambda: rv.gradient(HORNER[engine], (1.5, 0, 3, 0))),
        (".tan", lambda: rv.jvp(HORNER[engine], (1.5, 0, 3, 0), (1.0, None, None, None))),
    )
    for suffix, run in runs:
        with pytest.raises(rv.ExecutionError) as caught:
            run()
        assert str(caught.value) == f"{where}{suffix}: range() step must not be zero"


def _nested_horner(x: float, n: int, s: int) -> float:
    t = 0.0
    for k in range(n):
        for i in range(0, k, s):
            t = t * x + i
    return t


def _checkpointed_horner(x: float, n: int, s: int) -> float:
    t = 0.0
    for k in rv.checkpointed(range(n), snapshots=2):
        for i in range(0, k, s):
            t = t * x + i
    return t


NESTED_HORNER = {engine: rv.ordinary(backend=engine)(_nested_horner) for engine in ENGINES}
CHECKPOINTED_HORNER = {engine: rv.ordinary(backend=engine)(_checkpointed_horner) for engine in ENGINES}
CHECKPOINTS = ({"checkpoint": "binomial", "snapshots": 2}, {"checkpoint": "bisection"})


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("policy", CHECKPOINTS)
def test_checkpoint_policies_take_a_run_time_step(engine: str, policy: dict[str, Any]):
    """``checkpoint=`` makes the function resumable, the zero step's check
    carried into the step that reaches it: the store-all gradient, whose
    value the tests above check, for steps of both signs."""
    for a, b, s in ((0, 7, 2), (6, -2, -3)):
        assert rv.gradient(HORNER[engine], (1.5, a, b, s), **policy) == rv.gradient(HORNER[engine], (1.5, a, b, s))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_checkpointed_loop_takes_a_run_time_step_inside(engine: str):
    """``rv.checkpointed`` around a loop with a run-time step, alone and
    under ``checkpoint=`` (which drops the mark): the store-all gradient of
    the same loops unmarked."""
    expected = rv.gradient(NESTED_HORNER[engine], (1.5, 5, 2))
    assert expected[0] != 0.0
    for policy in ({}, CHECKPOINTS[0]):
        assert rv.gradient(CHECKPOINTED_HORNER[engine], (1.5, 5, 2), **policy) == expected


@pytest.mark.parametrize("engine", ENGINES)
def test_a_zero_run_time_step_stops_a_checkpointed_gradient_at_the_range_call(engine: str):
    """Wherever the schedule runs the loop, the step's check stops the
    gradient at the ``range`` call, in Python's words."""
    for function, arguments, python, line in (
        (HORNER[engine], (1.5, 0, 3, 0), _horner, 2),
        (CHECKPOINTED_HORNER[engine], (1.5, 3, 0), _checkpointed_horner, 3),
    ):
        source, first = inspect.getsourcelines(python)
        where = f"{__file__}:{first + line}:{source[line].index('range(') + 1}: 'cf.assert' in @"
        for policy in ({}, *CHECKPOINTS):
            with pytest.raises(rv.ExecutionError) as caught:
                rv.gradient(function, arguments, **policy)
            assert str(caught.value).startswith(where), policy
            assert str(caught.value).endswith(": range() step must not be zero"), policy
