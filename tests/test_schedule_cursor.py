"""Run-time schedulers (``revmlir.checkpoint.cursor``, ``ad.next``): the
entries a cursor produces are the offline generators' tables, they replay
as valid schedules with the same stats, the native scheduler produces the
interpreter's entries, and checkpointed loops whose trip count is known only
at run time get the store-all gradient."""

import numpy as np
import pytest

from cursor_driver import DRIVER, quiet
from revmlir.checkpoint import binomial, binomial_optimum, bisection, store_all
from revmlir.checkpoint.cursor import SCHEMES, entries
from revmlir.checkpoint.offline import _beta, binomial_split, repetition_number
from revmlir.checkpoint.table import Entry, encode, replay
from revmlir.errors import InvertibilityError
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.adjoint import AdAdjointPass
from revmlir.passes.checkpoint import AdCheckpointPass
from revmlir.runtime.native import NativeModule

OFFLINE = {
    "store_all": lambda n, s: store_all(n),
    "bisection": lambda n, s: bisection(n),
    "binomial": binomial,
}


@pytest.mark.parametrize("snapshots", range(2, 12))
def test_the_binomial_split_is_optimal(snapshots):
    """The closed form against the search over every split."""
    for length in range(2, 400):
        best = binomial_optimum(length, snapshots)
        j = binomial_split(length, snapshots)
        assert 1 <= j < length
        assert j + binomial_optimum(length - j, snapshots - 1) + binomial_optimum(j, snapshots) == best, (
            length,
            snapshots,
            j,
        )


def test_the_binomial_split_is_the_least_optimal_one():
    for snapshots, length in [(2, 4), (3, 50), (5, 1000), (9, 777)]:
        j = binomial_split(length, snapshots)
        assert all(
            i + binomial_optimum(length - i, snapshots - 1) + binomial_optimum(i, snapshots)
            > binomial_optimum(length, snapshots)
            for i in range(1, j)
        )
        t = repetition_number(length, snapshots)
        assert j == max(length - _beta(snapshots - 1, t), _beta(snapshots, t - 2), 1)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_cursor_entries_are_the_offline_tables(scheme):
    for steps in range(0, 70):
        for snapshots in range(1, 8) if scheme == "binomial" else (0,):
            expected = encode(OFFLINE[scheme](steps, snapshots))
            assert list(entries(scheme, steps, snapshots)) == expected, (steps, snapshots)


@pytest.mark.parametrize(
    "scheme, steps, snapshots",
    [("binomial", 5000, 4), ("binomial", 2000, 30), ("bisection", 3000, 0), ("store_all", 500, 0)],
)
def test_cursor_entries_replay_as_the_schedule(scheme, steps, snapshots):
    """Simulated independently of the generators: every step reversed once,
    last first, within the memory, with the optimal recomputation."""
    table = list(entries(scheme, steps, snapshots))
    stats = replay(table).as_dict()
    assert stats == OFFLINE[scheme](steps, snapshots).stats()
    if scheme == "binomial":
        assert stats["plain"] == binomial_optimum(steps, snapshots)
        assert stats["peak"] <= snapshots


def test_unknown_scheme():
    with pytest.raises(ValueError, match="unknown scheme 'revolve'"):
        list(entries("revolve", 3))


ATTRS = {
    "store_all": "#ad.schedule<store_all>",
    "bisection": "#ad.schedule<bisection>",
    "binomial": "#ad.schedule<binomial, snapshots = 4>",
}


def _stream(table: list[tuple[Entry, int]]) -> list[int]:
    return [number for kind, step in table for number in (int(kind), step)] + [Entry.END, 0]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_native_cursor_is_the_interpreters(scheme):
    module = parse_module(DRIVER.replace("SCHEDULE", ATTRS[scheme]), "drive", make_context())
    native = NativeModule.compile(module)
    interpreter = RevInterpreter(module)
    snapshots = 4 if scheme == "binomial" else 0
    for steps in (0, 1, 2, 3, 9, 31, 64):
        expected = _stream(list(entries(scheme, steps, snapshots)))
        out: list[int] = []
        interpreter.call("drive", steps, out)
        assert out == expected
        assert native.call("drive", steps, [])[-1] == expected
    big = native.call("drive", 20000, [])[-1]
    table = list(zip(big[0:-2:2], big[1:-2:2]))
    assert replay(table).as_dict() == OFFLINE[scheme](20000, snapshots).stats()


WALK = """
// x ← x + a·i·sin(x) for i = n−1, n−4, … down to 1: the trip count is known
// only when the loop starts, the loop runs backwards, and i enters the step.
rev.func @walk(%x: f64, %a: f64, %n: i64, %tape: !anc.stack<f64>) {
  %c1 = arith.constant 1 : i64
  %c3 = arith.constant 3 : i64
  %r = rev.for reverse %c1 to %n step %c3 : i64 (%x) : f64 attributes {checkpoint = SCHEDULE} {
  ^bb0(%i: i64, %y: f64):
    %fi = arith.sitofp %i : i64 to f64
    %s = math.sin %y : f64
    %d = arith.mulf %a, %s : f64
    %e = arith.mulf %d, %fi : f64
    %m = arith.addf %y, %e : f64
    %z = anc.alloc %m : f64
    anc.push %tape, %y : !anc.stack<f64>
    rev.yield %z : f64
  }
  rev.return %r, %a, %n : f64, f64, i64
}
"""


@pytest.mark.parametrize("scheme", SCHEMES)
def test_dynamic_trip_counts_give_the_store_all_gradient(scheme):
    ctx = make_context()
    module = parse_module(WALK.replace("SCHEDULE", ATTRS[scheme]), "walk", ctx)
    AdCheckpointPass(functions=("walk",)).apply(ctx, module)
    AdAdjointPass(functions=("walk",)).apply(ctx, module)
    native = NativeModule.compile(module)
    interpreter = RevInterpreter(module)
    for n in (0, 1, 2, 5, 14, 40):
        x, a = 0.3, 0.05
        outputs = interpreter.call("walk", x, a, n, [])
        tape = outputs[-1]
        assert len(tape) == len(range(1, n, 3))
        reference = interpreter.call("walk.adj", *outputs, 1.0, 0.0, [0.0] * len(tape))[4:6]
        for runner in (interpreter, native):
            got = runner.call("walk.ckpt", x, a, n, [], 1.0, 0.0, [])
            np.testing.assert_allclose(got[4:6], reference, rtol=1e-12, atol=1e-15)
    fresh = RevInterpreter(module)
    fresh.call("walk.ckpt", 0.3, 0.05, 40, [], 1.0, 0.0, [])
    stats = OFFLINE[scheme](len(range(1, 40, 3)), 4).stats()
    assert fresh.counters["walk.ckpt.step0"].calls == stats["taped"]  # plain: the untaped copy
    assert fresh.counters["walk.ckpt.step0.plain"].calls == stats["plain"]
    assert fresh.counters["walk.ckpt.step0.adj"].calls == stats["taped"]
    assert fresh.peak_snapshots == stats["peak"]


# Hand-written cursor loops that pop what is not there: the verifier proves
# snapshots balanced only in straight-line code, so both engines check at run
# time, with the same located error.
STORE = "  %s = anc.stack_alloc : !anc.stack<index>\n"
FREE_STORE = "  anc.stack_free %s : !anc.stack<index>\n"
STEP = "    %c1 = rev.inc %c : index\n"
POPS = {
    # words of a cursor one level deep on its way up, with no frame pushed
    "empty_frames": (
        [
            ("%w2 = anc.alloc %z", "%six = arith.constant 6 : index\n  %w2 = anc.alloc %six"),
            ("%w7 = anc.alloc %z", "%one = arith.constant 1 : index\n  %w7 = anc.alloc %one"),
        ],
        "'ad.next' in @empty_frames: pop from an empty stack",
    ),
    "restore_nothing": (
        [
            (
                STEP,
                "    %c0 = anc.restore %s, %c : !anc.stack<index>, index -> (index)\n    %c1 = anc.alloc %c0 : index\n",
            )
        ],
        "'anc.restore' in @restore_nothing: no snapshot to restore",
    ),
    "drop_more": (  # a record of one element, dropped as one of two
        [
            (
                STEP,
                "    anc.snapshot %s, %n : !anc.stack<index>, index\n"
                "    anc.drop %s, %n, %n : !anc.stack<index>, index, index\n" + STEP,
            )
        ],
        "'anc.drop' in @drop_more: no snapshot to drop",
    ),
}


def _popping(name: str, edits: list[tuple[str, str]]) -> str:
    text = quiet(ATTRS["bisection"]).replace("@drive", f"@{name}")
    text = text.replace(
        "  %frames = anc.stack_alloc : !anc.stack<index>\n", "  %frames = anc.stack_alloc : !anc.stack<index>\n" + STORE
    )
    text = text.replace(
        "  anc.stack_free %frames : !anc.stack<index>\n", "  anc.stack_free %frames : !anc.stack<index>\n" + FREE_STORE
    )
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    return text


def test_a_pop_of_what_is_not_there_is_the_same_error_on_both_engines():
    module = parse_module("".join(_popping(name, edits) for name, (edits, _) in POPS.items()), "pops")
    native = NativeModule.compile(module)
    interpreter = RevInterpreter(module)
    for name, (_, message) in POPS.items():
        for runner in (interpreter, native):
            with pytest.raises(InvertibilityError) as error:
                runner.call(name, 5)
            assert message in str(error.value)
            assert "pops:" in str(error.value)  # located
