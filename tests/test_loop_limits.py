"""A loop runs exactly the indices of ``range(lb, ub, step)`` on every
engine, at every width, however close its bounds are to the limits of the
type and however large its step: native code (forwards, backwards and
parallel) agrees with the interpreter where ``i + step`` or ``ub − lb``
would overflow the loop's type, and so do a gradient, a checkpointed
gradient and ``rev-run``'s two backends.  The iterations are told apart by
what they leave: the count, and the sum of each index times its position,
which only that order of those indices gives."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import revmlir as rv
from revmlir.errors import ExecutionError
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule
from revmlir.tools.rev_run import main as rev_run

WIDTHS = (8, 16, 32, 64)


def _program(width: int) -> str:
    """``@walk(h, k, lb, ub, step)``: for each index i, h += i·k, then
    k += 1, in i64."""
    type = f"i{width}"
    widen = f"arith.extsi %i : {type} to i64" if width < 64 else "arith.addi %i, %zero : i64"
    return f"""rev.func @walk(%h: i64, %k: i64, %lb: {type}, %ub: {type}, %s: {type}) {{
  %r:2 = rev.for %lb to %ub step %s : {type} (%h, %k) : i64, i64 {{
  ^bb0(%i: {type}, %a: i64, %c: i64):
    %zero = arith.constant 0 : i64
    %x = {widen}
    %m = arith.muli %x, %c : i64
    %a1 = rev.add %a, %m : i64
    %c1 = rev.inc %c : i64
    rev.yield %a1, %c1 : i64, i64
  }}
  rev.return %r#0, %r#1, %lb, %ub, %s : i64, i64, {type}, {type}, {type}
}}
"""


SPREAD = """rev.func @spread(%t: memref<?xi64>, %lb: index, %ub: index, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %lb to %ub step %s : index () {
  ^bb0(%i: index):
    %x = arith.index_cast %i : index to i64
    %n = rev.take %t[%c0] : memref<?xi64>
    %one = arith.constant 1 : i64
    %n1 = rev.add %n, %one : i64
    rev.put %n1, %t[%c0] : memref<?xi64>
    %v = rev.take %t[%c1] : memref<?xi64>
    %v1 = rev.add %v, %x : i64
    rev.put %v1, %t[%c1] : memref<?xi64>
    rev.yield
  }
  rev.return %lb, %ub, %s : index, index, index
}"""
"""A parallel loop (over ``index``, as every parallel loop) adding its
count and the sum of its indices into an array (of a size known only at
run time, whose index checks make it a kernel ``tests/test_gpu.py`` can
run on the emulated GPU)."""


@cache
def _engines(width: int) -> tuple[RevInterpreter, NativeModule]:
    return (
        RevInterpreter(parse_module(_program(width), f"i{width}.mlir")),
        NativeModule.compile(parse_module(_program(width), f"i{width}.mlir")),
    )


def _expected(lb: int, ub: int, step: int) -> tuple[int, int]:
    """What ``@walk`` leaves from (0, 1), computed apart from the engines
    (h wraps as an i64)."""
    h = sum(i * k for k, i in enumerate(range(lb, ub, step), start=1))
    return (h + 2**63) % 2**64 - 2**63, len(range(lb, ub, step)) + 1


def _limit_cases(width: int) -> list[tuple[int, int, int]]:
    """Bounds at the type's limits, with steps at which ``i + step``,
    ``ub − lb`` or the last index's computation overflows; a few
    iterations each."""
    low, high = -(2 ** (width - 1)), 2 ** (width - 1) - 1
    quarter = 2 ** (width - 2)
    return [
        (high - 10, high, 4),  # i + step passes the top
        (high - 1, high, 1),  # one iteration, at the top but one
        (high - 3, high, high),  # the largest step
        (low, high, quarter),  # ub − lb is 2^N − 1
        (low, high, high),  # low, −1, high − 1
        (low, low + 5, 2),
        (low, high, 2 ** (width - 1) - 2 ** (width - 4)),
        (0, high, quarter - 1),
        (-5, 5, 3),
        (high, high, 1),  # none
        (high, low, 1),  # none
        (5, -5, 1),  # none
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_loops_at_the_limits_of_their_type_agree_forwards_and_backwards(width: int) -> None:
    interpreter, native = _engines(width)
    for lb, ub, step in _limit_cases(width):
        forwards = interpreter.call("walk", 0, 1, lb, ub, step)
        assert forwards[:2] == _expected(lb, ub, step), (lb, ub, step)
        assert native.call("walk", 0, 1, lb, ub, step) == forwards, (lb, ub, step)
        # backwards from the last index: the uncall undoes h += i·k only
        # where it visits the same indices in the reverse order
        assert native.uncall("walk", *forwards) == interpreter.uncall("walk", *forwards) == (0, 1, lb, ub, step)


def test_parallel_loops_at_the_limits_of_index_agree() -> None:
    engines = RevInterpreter(parse_module(SPREAD, "spread.mlir")), NativeModule.compile(parse_module(SPREAD, "n.mlir"))
    for lb, ub, step in _limit_cases(64):
        indices = range(lb, ub, step)
        expected = [len(indices), (sum(indices) + 2**63) % 2**64 - 2**63]
        for engine in engines:
            cells = np.zeros(2, dtype=np.int64)
            engine.call("spread", cells, lb, ub, step)
            assert cells.tolist() == expected, (engine, lb, ub, step)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), width=st.sampled_from(WIDTHS))
def test_any_bounds_and_step_give_the_same_iterations(data: st.DataObject, width: int) -> None:
    """Bounds anywhere in the type, near its ends more often, and a step
    large enough for at most 40 iterations."""
    low, high = -(2 ** (width - 1)), 2 ** (width - 1) - 1
    ends = st.one_of(
        st.integers(low, high), st.integers(low, low + 40), st.integers(high - 40, high), st.integers(-40, 40)
    )
    lb, ub = data.draw(ends, "lb"), data.draw(ends, "ub")
    fewest = max(1, -(-(ub - lb) // 40))
    step = data.draw(st.one_of(st.integers(fewest, high), st.integers(fewest, min(high, fewest + 40))), "step")
    interpreter, native = _engines(width)
    forwards = native.call("walk", 0, 1, lb, ub, step)
    assert forwards[:2] == _expected(lb, ub, step)
    assert interpreter.call("walk", 0, 1, lb, ub, step) == forwards
    assert native.uncall("walk", *forwards) == (0, 1, lb, ub, step)


def _powers(x, lb, ub):
    """x^(n + 1) for the n iterations of a loop whose step passes 2⁶³ − 1."""
    y = x
    for i in range(lb, ub, 4611686018427387904):
        y = y * x
    return y


def _powers_checkpointed(x, lb, ub):
    y = x
    for i in rv.checkpointed(range(lb, ub, 4611686018427387904), snapshots=2):
        y = y * x
    return y


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_gradients_of_loops_at_the_limits(backend: str) -> None:
    """The adjoint runs the iterations backwards from the last index, and a
    checkpointed loop counts its steps, where ``ub − lb`` passes 2⁶³: four
    iterations, −2⁶³, −2⁶², 0 and 2⁶², so the derivative of x⁵."""
    bounds = (-(2**63), 2**63 - 1)
    for function in (_powers, _powers_checkpointed):
        f = rv.ordinary(function, backend=backend)
        assert f(1.5, *bounds) == pytest.approx(1.5**5, rel=1e-15)
        assert rv.gradient(f, (1.5, *bounds))[0] == pytest.approx(5 * 1.5**4, rel=1e-15)


@pytest.mark.parametrize("width", WIDTHS)
def test_rev_run_backends_agree_at_the_limits(width: int, tmp_path, capsys) -> None:
    """Forwards from (0, 1) and backwards from what that leaves, on a loop
    whose ``i + step`` passes the top of its type."""
    source = tmp_path / "walk.mlir"
    source.write_text(_program(width))
    high = 2 ** (width - 1) - 1
    bounds = [str(high - 10), str(high), "4"]
    h, k = _expected(high - 10, high, 4)
    runs = {"": ["0", "1", *bounds], "--inverse": [str(h), str(k), *bounds]}
    printed: dict[tuple[str, str], str] = {}
    for backend in ("native", "interpreter"):
        for direction, args in runs.items():
            flags = [direction] if direction else []
            assert rev_run([str(source), "-e", "walk", "--backend", backend, *flags, "--args", *args]) == 0
            printed[backend, direction] = capsys.readouterr().out
    for direction in runs:
        assert printed["native", direction] == printed["interpreter", direction]
    assert printed["native", ""].splitlines()[:2] == [f"{h} : i64", f"{k} : i64"]
    assert printed["native", "--inverse"].splitlines()[:2] == ["0 : i64", "1 : i64"]


def _powers_down(x, a, b):
    y = x
    for i in range(a, b, -4611686018427387904):
        y = y * x
    return y


def _count_down(y, x, a: int, b: int):
    for i in range(a, b, -4611686018427387904):
        y += x


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_descending_ranges_far_apart_count_their_iterations(backend: str) -> None:
    """``range(a, b, -s)`` in ordinary and reversible code, where ``a − b``
    passes 2⁶³: four iterations, from 2⁶³ − 2 down by 2⁶²."""
    bounds = (2**63 - 2, -(2**63))
    assert len(range(*bounds, -(2**62))) == 4
    powers = rv.ordinary(_powers_down, backend=backend)
    assert powers(1.5, *bounds) == pytest.approx(1.5**5, rel=1e-15)
    assert rv.gradient(powers, (1.5, *bounds))[0] == pytest.approx(5 * 1.5**4, rel=1e-15)
    count = rv.reversible(_count_down, backend=backend)
    assert count(0.0, 1.0, *bounds) == (4.0, 1.0, *bounds)
    assert (~count)(4.0, 1.0, *bounds) == (0.0, 1.0, *bounds)


def _walk_down_by_3(y, a: int, b: int):
    for i in range(a, b, -3):
        y += float(a - i) + 1.0


def _walk_down_by_2_62(y, a: int, b: int):
    for i in range(a, b, -4611686018427387904):
        y += float(i) * 2.0**-62 + 4.0


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_reversible_descending_ranges_near_the_limits_are_pythons(backend: str) -> None:
    """A reversible ``range(a, b, −s)`` visits Python's indices, forwards
    and backwards, where ``a + s`` or ``a + 1`` passes 2⁶³ − 1 and where the
    range is empty."""
    top, bottom = 2**63 - 1, -(2**63)
    cases = {
        (_walk_down_by_3, 3): [(top - 1, top), (top, top), (top, top - 1), (top, top - 20), (bottom + 5, bottom)],
        (_walk_down_by_2_62, 2**62): [(2**62, 2**62 + 5), (top, bottom), (top, top), (bottom + 1, bottom)],
    }
    for (function, step), bounds in cases.items():
        f = rv.reversible(function, backend=backend)
        for a, b in bounds:
            terms = [float(a - i) + 1.0 if step == 3 else float(i) * 2.0**-62 + 4.0 for i in range(a, b, -step)]
            expected = sum(terms)
            assert f(0.5, a, b) == (0.5 + expected, a, b), (function.__name__, a, b)
            assert (~f)(0.5 + expected, a, b) == (0.5, a, b), (function.__name__, a, b)


def _powers_by_3(x, lb, ub):
    y = x
    for i in range(lb, ub, 3):
        y = y * x
    return y


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_checkpointed_gradients_of_loops_stepping_past_the_top(backend: str) -> None:
    """``checkpoint=`` runs the loop in the resumable form, which steps its
    variable: a loop whose last ``i + 3`` lands on ``ub`` just below
    2⁶³ − 1 has the gradient of x³ (finite differences agree), and one
    whose last step passes 2⁶³ − 1 stops with a located error, which it
    did not (it wrapped and never ended)."""
    f = rv.ordinary(_powers_by_3, backend=backend)
    top = 2**63 - 1
    exact = (top - 8, top - 2)
    assert len(range(*exact, 3)) == 2
    (gradient, *_) = rv.gradient(f, (1.5, *exact), checkpoint="bisection")
    h = 1e-6
    assert gradient == pytest.approx((f(1.5 + h, *exact) - f(1.5 - h, *exact)) / (2 * h), rel=1e-6)
    assert gradient == pytest.approx(3 * 1.5**2, rel=1e-15)
    with pytest.raises(ExecutionError, match=r"^.*test_loop_limits\.py:\d+:\d+: .*i \+ step overflows"):
        rv.gradient(f, (1.5, top - 7, top), checkpoint="bisection")
