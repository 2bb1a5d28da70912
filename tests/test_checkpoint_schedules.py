"""Checkpoint schedules are checked against the known optima by simulation.

The expected numbers come from closed forms computed here, independently of the
generators: Griewank-Walther's binomial optimum (and a brute-force recurrence
for small cases), bisection's ceil(log2) memory, Bennett's (2k-1)^n time and
n(k-1)+2 space.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from math import ceil, comb, log2
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from revmlir.checkpoint import (
    Advance,
    Compute,
    FreeSnapshot,
    Objective,
    OnlineSchedule,
    Restore,
    ReverseStep,
    Schedule,
    ScheduleError,
    TakeSnapshot,
    bennett,
    binomial,
    binomial_optimum,
    bisection,
    online,
    repetition_number,
    store_all,
    validate,
)
from revmlir.checkpoint.offline import binomial_split


def gw_optimum(steps: int, snaps: int) -> int:
    t = 0
    while comb(snaps + t, snaps) < steps:
        t += 1
    return t * steps - (comb(snaps + t, snaps + 1) if t >= 1 else 0)


@cache
def brute_force(steps: int, snaps: int) -> int:
    """min over the first split j of j + cost(right, s-1) + cost(left, s)."""
    if steps <= 1:
        return 0
    if snaps == 1:
        return steps * (steps - 1) // 2
    return min(j + brute_force(steps - j, snaps - 1) + brute_force(j, snaps) for j in range(1, steps))


@pytest.mark.parametrize("snaps", range(1, 9))
def test_binomial_matches_griewank_walther(snaps: int) -> None:
    for steps in range(1, 61):
        stats = validate(binomial(steps, snaps), steps, memory=snaps)
        assert stats["plain"] == gw_optimum(steps, snaps), (steps, snaps)
        assert stats["taped"] == steps
        assert stats["peak"] <= snaps


def test_closed_form_is_the_brute_force_optimum() -> None:
    for snaps in range(1, 6):
        for steps in range(1, 40):
            assert gw_optimum(steps, snaps) == brute_force(steps, snaps)


def test_binomial_too_little_memory_is_reported() -> None:
    with pytest.raises(ScheduleError, match=r"action #\d+ TAKE_SNAPSHOT\(\d+\).*exceed memory 4"):
        validate(binomial(100, 5), 100, memory=4)


def test_binomial_large() -> None:
    s = binomial(20000, 12)
    stats = validate(s, 20000, 12)
    assert stats["plain"] == gw_optimum(20000, 12)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 400), st.integers(1, 30))
def test_binomial_random_validates(steps: int, snaps: int) -> None:
    stats = validate(binomial(steps, snaps), steps, snaps)
    assert stats["plain"] == (gw_optimum(steps, snaps) if steps else 0)


@pytest.mark.parametrize("steps", [*range(1, 70), 100, 1000, 1024, 1025])
def test_bisection_peak_is_ceil_log2_plus_one(steps: int) -> None:
    peak = ceil(log2(steps)) + 1
    stats = validate(bisection(steps), steps, memory=peak)
    assert stats["peak"] == peak
    assert stats["taped"] == steps
    assert stats["plain"] <= steps * ceil(log2(steps)) // 2 + steps
    if steps > 2:
        with pytest.raises(ScheduleError, match="exceed memory"):
            validate(bisection(steps), steps, memory=peak - 1)


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_bennett_time_and_space(k: int, n: int) -> None:
    steps = k**n
    space = n * (k - 1) + 2
    stats = validate(bennett(steps, k), steps, memory=space)
    assert stats["plain"] + stats["uncompute"] == (2 * k - 1) ** n
    assert stats["plain"] - stats["uncompute"] == 1
    assert stats["peak"] == space
    assert stats["taped"] == 0


@pytest.mark.parametrize("steps", [1, 2, 5, 17, 100])
def test_bennett_any_length_validates(steps: int) -> None:
    validate(bennett(steps, 3), steps, memory=None)


@pytest.mark.parametrize("steps", [1, 2, 10, 57])
def test_store_all(steps: int) -> None:
    stats = validate(store_all(steps), steps, memory=steps)
    # The last step is run taped from the stored s_{steps-1}, so s_steps is never
    # stored and only steps - 1 plain advances happen (= binomial(steps, steps)).
    assert stats == {"plain": steps - 1, "taped": steps, "uncompute": 0, "peak": steps}
    assert stats == binomial(steps, steps).stats()


def test_empty_chain() -> None:
    for s in (store_all(0), bisection(0), binomial(0, 3), online(3).realize(0)):
        assert s.stats() == {"plain": 0, "taped": 0, "uncompute": 0, "peak": 0}
    # The pebble game holds its input from the start, even with nothing to compute.
    assert bennett(0, 2).stats() == {"plain": 0, "taped": 0, "uncompute": 0, "peak": 1}


@pytest.mark.parametrize("snaps", [1, 2, 3, 4, 7, 10])
def test_online_validates_for_unknown_trip_counts(snaps: int) -> None:
    policy = online(snaps)
    for n in [*range(80), 200, 513, 1000]:
        stats = validate(policy.realize(n), n, memory=snaps)
        assert stats["taped"] == n
        assert stats["plain"] >= gw_optimum(n, snaps)  # never beats the offline optimum


def test_online_forward_does_not_depend_on_the_trip_count() -> None:
    """The forward actions of a longer run extend those of a shorter one."""
    run_short, run_long = online(5).start(), online(5).start()
    short = [a for _ in range(40) for a in run_short.step()]
    long = [a for _ in range(300) for a in run_long.step()]
    assert long[: len(short)] == short
    with pytest.raises(RuntimeError):
        run_short.finish()
        run_short.step()


def test_schedules_are_immutable_values() -> None:
    s = binomial(10, 3)
    assert s == binomial(10, 3) and hash(s) == hash(binomial(10, 3))
    with pytest.raises(AttributeError):
        s.steps = 3  # type: ignore[misc]
    assert isinstance(s.actions, tuple) and str(s.actions[0]) == "TAKE_SNAPSHOT(0)"


def _adjoint(steps: int, *actions: object) -> Schedule:
    return Schedule("hand", steps, Objective.ADJOINT, tuple(actions))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        (_adjoint(2, TakeSnapshot(0), ReverseStep(0)), r"#1 REVERSE_STEP\(0\).*expected step 1"),
        (
            _adjoint(2, TakeSnapshot(0), Advance(1), ReverseStep(1), ReverseStep(0)),
            r"#3 REVERSE_STEP\(0\).*working state is none",
        ),
        (_adjoint(2, Restore(0)), r"#0 RESTORE\(0\).*not stored"),
        (_adjoint(2, TakeSnapshot(0), Advance(3)), r"#1 ADVANCE\(3\).*past s_2"),
        (_adjoint(1, TakeSnapshot(0), ReverseStep(0)), r"end of schedule.*left stored: \[0\]"),
        (
            _adjoint(2, TakeSnapshot(0), Advance(1), ReverseStep(1), FreeSnapshot(0)),
            r"end of schedule.*step 0 was never reversed",
        ),
        (_adjoint(1, TakeSnapshot(0), Compute(0)), r"#1 COMPUTE\(0\).*not an action of a adjoint"),
        (Schedule("hand", 2, Objective.REVERSIBLE, (Compute(1),)), r"#0 COMPUTE\(1\).*s_1 is not stored"),
        (Schedule("hand", 2, Objective.REVERSIBLE, (Compute(0), Compute(1))), r"end of schedule.*holds \[0, 1, 2\]"),
    ],
)
def test_validate_names_first_bad_action(schedule: Schedule, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        validate(schedule, schedule.steps, memory=None)


def test_validate_checks_chain_length() -> None:
    with pytest.raises(ScheduleError, match="for 5 steps, not 6"):
        validate(binomial(5, 2), 6, 2)


# -- cross-check against an independent implementation -------------------------


def _revolve_counts(steps: int, snaps: int) -> tuple[int, int]:
    """Plain and taped forward steps of checkpoint_schedules' Revolve (a
    separate implementation of Griewank & Walther's algorithm), whose RAM
    snapshot count includes the initial state like ours."""
    import checkpoint_schedules as cs

    plain = taped = 0
    for action in cs.Revolve(steps, snaps):
        if isinstance(action, cs.Forward):
            if action.write_adj_deps:
                taped += action.n1 - action.n0
            else:
                plain += action.n1 - action.n0
    return plain, taped


@pytest.mark.parametrize("snaps", [1, 2, 3, 5, 8, 13])
def test_binomial_agrees_with_checkpoint_schedules_revolve(snaps: int) -> None:
    import checkpoint_schedules as cs

    for steps in [*range(1, 80), 100, 257]:
        stats = binomial(steps, snaps).stats()
        assert (stats["plain"], stats["taped"]) == _revolve_counts(steps, snaps), (steps, snaps)
        if steps > 1:
            # their closed form counts every forward step, the taped ones included
            assert stats["plain"] + stats["taped"] == cs.optimal_steps_binomial(steps, snaps), (steps, snaps)


# -- arguments ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: online(1.5), TypeError, "online: snapshots must be an integer, got 1.5 (float)"),
        (lambda: online(0), ValueError, "online: snapshots must be >= 1, got 0"),
        (lambda: OnlineSchedule(1.5), TypeError, "OnlineSchedule: snapshots must be an integer, got 1.5 (float)"),
        (lambda: binomial_split(10, 1.5), TypeError, "binomial_split: snapshots must be an integer, got 1.5"),
        (lambda: binomial_split(1, 2), ValueError, "binomial_split: length must be >= 2, got 1"),
        (lambda: binomial_split(10, 1), ValueError, "binomial_split: snapshots must be >= 2, got 1"),
        (lambda: binomial(10, True), TypeError, "binomial: snapshots must be an integer, got True (bool)"),
        (lambda: binomial(10, 1.5), TypeError, "binomial: snapshots must be an integer, got 1.5 (float)"),
        (lambda: binomial(10.0, 2), TypeError, "binomial: steps must be an integer, got 10.0 (float)"),
        (lambda: binomial(-1, 2), ValueError, "binomial: steps must be >= 0, got -1"),
        (lambda: binomial(10, 0), ValueError, "binomial: snapshots must be >= 1, got 0"),
        (lambda: store_all(False), TypeError, "store_all: steps must be an integer, got False (bool)"),
        (lambda: bisection("3"), TypeError, "bisection: steps must be an integer, got '3' (str)"),
        (lambda: bennett(8, 1), ValueError, "bennett: k must be >= 2, got 1"),
        (lambda: bennett(8, 2.0), TypeError, "bennett: k must be an integer, got 2.0 (float)"),
        (lambda: bennett(-2, 2), ValueError, "bennett: steps must be >= 0, got -2"),
        # the least t with beta(0, t) >= 5 does not exist: this looped forever
        (lambda: repetition_number(5, 0), ValueError, "repetition_number: snapshots must be >= 1, got 0"),
        (lambda: binomial_optimum(5, None), TypeError, "binomial_optimum: snapshots must be an integer, got None"),
        (lambda: online(3).realize(2.0), TypeError, "OnlineSchedule.realize: trip_count must be an integer, got 2.0"),
        (lambda: validate(binomial(5, 2), 5, memory=True), TypeError, "validate: memory must be an integer, got True"),
        (lambda: validate(binomial(5, 2), 5, memory=-1), ValueError, "validate: memory must be >= 0, got -1"),
    ],
)
def test_arguments_are_checked(call: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value).startswith(message)


def test_numpy_integers_are_counts() -> None:
    """numpy's integers are integers: the schedule is the one of the
    Python ints, and holds them as Python ints."""
    assert binomial(np.int64(10), np.int32(3)) == binomial(10, 3)
    assert online(np.int16(4)).snapshots == 4 and type(online(np.int16(4)).snapshots) is int
    assert bennett(np.uint8(9), np.int64(3)) == bennett(9, 3)
