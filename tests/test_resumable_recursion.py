"""Checkpointing recursion with no annotation: ``make-resumable`` lays out each
function of a recursive cycle once and calls it through frame stacks, so
``ad-checkpoint{functions=f policy=…}`` reverses any ordinary function, its
recursion included, under the schedule.

On recursions of data-dependent depth, mutual recursion with a loop inside,
divide and conquer over an array and a recursive function called from a
loop: every policy's gradient equals the store-all one (the taped machine
and its adjoint, no checkpointing) and central differences of the program
written in Python; native code agrees with the interpreter; the snapshots
held are the schedule's ``stats()`` exactly, and their bytes grow with the
recursion's depth (the frames' live part), not with the run's length.
"""

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.traits import SymbolTable

from revmlir.checkpoint import bisection
from revmlir.dialects import anc, rev
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.adjoint import AdAdjointPass
from revmlir.passes.checkpoint import AdCheckpointPass
from revmlir.passes.resumable import MakeResumablePass
from revmlir.passes.reversibilize import ReversibilizePass
from revmlir.reversibilize import ReversibilizeError
from revmlir.semantics import gradient_type

SOURCE = (Path(__file__).parent / "checkpoint_programs" / "recursion.mlir").read_text()
NAMES = ("halve", "dc", "looped")


def halve(x: float, a: float) -> float:
    if x < 1.0:
        return x * a
    return (np.sin(halve(x * 0.5, a)) + x) * a


def dc(x: np.ndarray, lo: int, hi: int) -> float:
    if hi - lo <= 1:
        return x[lo] * x[lo]
    mid = lo + (hi - lo) // 2
    a = dc(x, lo, mid)
    x[mid] += 0.5 * np.sin(a)
    return a + dc(x, mid, hi)


def nest(y: float, n: int) -> float:
    return y if n == 0 else np.sin(nest(y, n - 1)) + 0.5 * y


def looped(x: float, n: int, l: int) -> float:
    acc = x
    for _ in range(l):
        acc = nest(acc, n) + 0.1 * x
    return acc


PYTHON = {"halve": halve, "dc": dc, "looped": looped}
ARGUMENTS: dict[str, list[Any]] = {
    "halve": [13.0, 0.9],  # five levels below 13, then the leaf
    "dc": [np.linspace(0.1, 0.8, 8), 0, 8],
    "looped": [0.7, 1, 2],
}


def module(policy: str | None, snapshots: int = 0, base: int = 1, names: tuple[str, ...] = NAMES) -> ModuleOp:
    """The programs ``names`` checkpointed under ``policy``, or (None)
    store-all: the resumable machine taped, and its adjoint."""
    ctx = make_context()
    parsed = parse_module(SOURCE, "recursion.mlir", ctx)
    if policy is None:
        MakeResumablePass(functions=names).apply(ctx, parsed)
        ReversibilizePass(mode="tape").apply(ctx, parsed)
        AdAdjointPass(functions=names).apply(ctx, parsed)
    else:
        AdCheckpointPass(functions=names, policy=policy, snapshots=snapshots, base=base).apply(ctx, parsed)
    parsed.verify()
    return parsed


@pytest.fixture(scope="module")
def bisected() -> ModuleOp:
    return module("bisection")


def copies(values: list[Any]) -> list[Any]:
    return [v.copy() if isinstance(v, np.ndarray | list) else v for v in values]


def inputs(runner: Any, name: str, args: list[Any]) -> tuple[list[Any], tuple[Any, ...]]:
    """The arguments of the tape-mode ``@name``: ``args``, a zero result
    slot, empty tapes; and its argument types."""
    function = SymbolTable.lookup_symbol(runner.module, name)
    assert isinstance(function, rev.FuncOp)
    types = function.function_type.inputs.data
    return [*copies(args), 0.0, *([] for t in types if isinstance(t, anc.StackType))], types


def gradient(runner: Any, name: str, args: list[Any]) -> list[Any]:
    """The gradient of ``name``'s result with respect to its float and array
    arguments: ``@name.ckpt`` on the inputs, or (store-all) ``@name`` then
    ``@name.adj`` on its outputs.  Array gradients accumulate in place."""
    inputs_, types = inputs(runner, name, args)
    checkpointed = SymbolTable.lookup_symbol(runner.module, name + ".ckpt") is not None
    state = inputs_ if checkpointed else list(runner.call(name, *inputs_))
    seeds: list[Any] = []
    for number, (type, value) in enumerate(zip(types, state, strict=True)):
        if gradient_type(type) is None:
            continue
        if isinstance(type, MemRefType):
            seeds.append(np.zeros_like(value))
        elif isinstance(type, anc.StackType):
            seeds.append([0.0] * len(value))
        else:
            seeds.append(1.0 if number == len(args) else 0.0)
    returned = runner.call(f"{name}.{'ckpt' if checkpointed else 'adj'}", *state, *seeds)
    differentiated = (t for t in types[: len(args)] if gradient_type(t) is not None)
    # the state comes back first, then one gradient per seed
    return [
        seed if isinstance(type, MemRefType) else value
        for type, seed, value in zip(differentiated, seeds, returned[len(types) :], strict=False)
    ]


def central_differences(name: str, args: list[Any], h: float = 1e-6) -> list[Any]:
    found: list[Any] = []
    for number, value in enumerate(args):
        if isinstance(value, np.ndarray):
            column = np.zeros_like(value)
            for k in range(value.size):
                up, down = copies(args), copies(args)
                up[number][k] += h
                down[number][k] -= h
                column[k] = (PYTHON[name](*up) - PYTHON[name](*down)) / (2 * h)
            found.append(column)
        elif isinstance(value, float):
            up, down = copies(args), copies(args)
            up[number] += h
            down[number] -= h
            found.append((PYTHON[name](*up) - PYTHON[name](*down)) / (2 * h))
    return found


@pytest.fixture(scope="module")
def store_all() -> dict[str, list[Any]]:
    """The reference gradients: the taped machine's adjoint."""
    runner = RevInterpreter(module(None))
    found: dict[str, list[Any]] = {}
    for name in NAMES:
        outputs = runner.call(name, *inputs(runner, name, ARGUMENTS[name])[0])
        assert outputs[len(ARGUMENTS[name])] == pytest.approx(PYTHON[name](*copies(ARGUMENTS[name])), rel=1e-13)
        found[name] = gradient(runner, name, ARGUMENTS[name])
    return found


@pytest.mark.parametrize("name", NAMES)
def test_store_all_gradient_is_the_programs(store_all, name):
    """The reference against central differences of the program in Python
    (the fixture also checks the machine's result)."""
    for got, expected in zip(store_all[name], central_differences(name, ARGUMENTS[name]), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-8)


def test_bisection_equals_store_all_with_the_schedules_steps_and_snapshots(store_all, bisected):
    """One segment a step.  Counted steps are plain (the untaped copy keeps
    the frames' pushes and pops), reversed steps taped once; each store (a
    record per element type) holds the schedule's peak."""
    runner = RevInterpreter(bisected)
    for name in ("halve", "dc"):
        checkpointed = SymbolTable.lookup_symbol(bisected, f"{name}.ckpt")
        assert checkpointed is not None
        stores = len({op.store for op in checkpointed.walk() if isinstance(op, anc.SnapshotOp)})
        runner.reset_counters()
        for got, expected in zip(gradient(runner, name, ARGUMENTS[name]), store_all[name], strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)
        assert runner.runtime.live_snapshots == 0 and runner.runtime.live_snapshot_bytes == 0
        step = f"{name}.ckpt.step0"
        steps = runner.counters[f"{step}.adj"].calls
        stats = bisection(steps).stats()
        assert runner.counters[step].calls == stats["taped"] == steps
        assert runner.counters[f"{step}.plain"].calls == steps + stats["plain"]
        assert runner.peak_snapshots == stores * stats["peak"]


def test_the_store_all_schedule_equals_store_all(store_all):
    """A snapshot of every step, two segments a step."""
    runner = RevInterpreter(module("store_all", 0, 2, ("halve",)))
    for got, expected in zip(gradient(runner, "halve", ARGUMENTS["halve"]), store_all["halve"], strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)
    assert runner.runtime.live_snapshots == 0


def test_snapshot_bytes_grow_with_the_depth_not_the_run(store_all, bisected):
    """``looped`` runs a recursion of depth n, l times.  A record pair holds
    the machine's slots (and two lengths) and the frames' live part: at
    most ``n + 1`` frames of at most every frame push of the machine.
    Three times the run adds snapshots (the schedule's log), each within the
    same bound (its gradient is store-all's); twice the depth makes the
    records larger."""
    runner = RevInterpreter(bisected)
    gradient_function = SymbolTable.lookup_symbol(bisected, "looped.ckpt")
    step = SymbolTable.lookup_symbol(bisected, "looped.ckpt.step0")
    assert isinstance(gradient_function, rev.FuncOp) and isinstance(step, rev.FuncOp)
    records = [op for op in gradient_function.walk() if isinstance(op, anc.SnapshotOp)][:2]
    assert [op.stack() is not None for op in records] == [True, True]
    empty = 8 * sum(len(op.scalars()) + 1 for op in records)
    frame = 8 * sum(isinstance(op, anc.CopyPushOp) and op.stack in step.body.block.args for op in step.walk())

    def measure(n: int, l: int) -> tuple[int, int, int]:
        runner.reset_counters()
        found = gradient(runner, "looped", [0.7, n, l])
        if [0.7, n, l] == ARGUMENTS["looped"]:
            assert found[0] == pytest.approx(store_all["looped"][0], rel=1e-13)
        steps = runner.counters["looped.ckpt.step0.adj"].calls
        assert runner.peak_snapshots == 2 * bisection(steps).stats()["peak"]
        return runner.peak_snapshots // 2, runner.peak_snapshot_bytes, steps

    short, long, deep = measure(1, 2), measure(1, 8), measure(3, 2)
    assert long[2] > 3 * short[2] and long[0] > short[0]
    for (held, size, _), n in ((short, 1), (long, 1), (deep, 4)):
        assert held * empty < size <= held * (empty + (n + 1) * frame)
    assert deep[1] - deep[0] * empty > short[1] - short[0] * empty


SEVERAL = """
func.func @f(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %k = func.call @f(%x, %m) : (f64, index) -> f64
    %s = math.sin %k : f64
    %t = arith.mulf %s, %x : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
func.func @g(%x: f64, %n: index) -> f64 {
  %k = func.call @f(%x, %n) : (f64, index) -> f64
  %t = arith.mulf %k, %x : f64
  func.return %t : f64
}
"""


@pytest.mark.parametrize("order", [("f", "g"), ("g", "f")])
def test_functions_made_resumable_together_lay_out_their_callees_as_written(order):
    """@g calls @f's recursion: its machine lays @f out from the source
    whether @f's own machine, with its frames, was made first or not (made
    first, it was inlined into @g with frame stacks defined outside @g)."""
    ctx = make_context()
    parsed = parse_module(SEVERAL, "several.mlir", ctx)
    MakeResumablePass(functions=order).apply(ctx, parsed)
    ReversibilizePass(mode="tape").apply(ctx, parsed)
    parsed.verify()
    runner = RevInterpreter(parsed)
    x, n = 0.5, 3
    f = x
    for _ in range(n):
        f = np.sin(f) * x
    for name, expected in (("f", f), ("g", f * x)):
        arguments, _ = inputs(runner, name, [x, n])
        assert runner.call(name, *arguments)[2] == pytest.approx(expected, rel=1e-15)


def test_hand_written_frames_are_refused_where_they_are():
    """Frame stacks are make-resumable's own: in
    its input they are a located error that says so, not code it would
    lay out with a stack carried where only scalars go."""
    source = """
func.func @f(%x: f64) -> f64 {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.copy_push %s, %x : !anc.stack<f64>
  %y = anc.pop %s : !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  func.return %y : f64
}
"""
    ctx = make_context()
    parsed = parse_module(source, "frames.mlir", ctx)
    with pytest.raises(ReversibilizeError) as raised:
        MakeResumablePass(functions=("f",)).apply(ctx, parsed)
    assert str(raised.value).startswith(
        "'anc.stack_alloc' at frames.mlir:3:3 cannot be made resumable: frame stacks "
        "are what make-resumable writes for the calls of a recursion"
    )


def recursive(signature: str, call: str, result: str) -> str:
    """A function of ``x`` and ``n`` (among ``signature``'s parameters)
    that returns x at n = 0 and otherwise makes ``call`` with ``%m`` = n - 1
    (its result ``%k``) and returns ``result`` of ``%k`` and ``%f``, its
    parameter ``%a`` as a float."""
    return f"""
func.func @{signature} -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {{
    scf.yield %x : f64
  }} else {{
    %m = arith.subi %n, %c1 : index
    {call}
    %i = arith.index_cast %a : index to i64
    %f = arith.sitofp %i : i64 to f64
    {result}
    scf.yield %t : f64
  }}
  func.return %r : f64
}}"""


PASSED_ON = "\n".join(
    (
        recursive(
            "swap(%x: f64, %a: index, %b: index, %n: index)",
            "%k = func.call @swap(%x, %b, %a, %m) : (f64, index, index, index) -> f64",
            "%s = math.sin %k : f64\n    %t = arith.addf %s, %f : f64",
        ),
        recursive(
            "there(%x: f64, %a: index, %b: index, %n: index)",
            "%k = func.call @back(%x, %b, %m) : (f64, index, index) -> f64",
            "%t = arith.addf %k, %f : f64",
        ),
        """
func.func @back(%x: f64, %c: index, %n: index) -> f64 {
  %k = func.call @there(%x, %c, %c, %n) : (f64, index, index, index) -> f64
  %s = math.sin %k : f64
  func.return %s : f64
}""",
        recursive(
            "kept(%x: f64, %a: index, %n: index)",
            "%k = func.call @kept(%x, %a, %m) : (f64, index, index) -> f64",
            "%t = arith.mulf %k, %f : f64",
        ),
    )
)


def swap(x: float, a: int, b: int, n: int) -> float:
    return x if n == 0 else np.sin(swap(x, b, a, n - 1)) + a


def there(x: float, a: int, b: int, n: int) -> float:
    return x if n == 0 else np.sin(there(x, b, b, n - 1)) + a


@pytest.mark.parametrize(
    ("name", "args", "expected", "pushed"),
    [
        ("swap", [0.5, 2, 7, 5], swap(0.5, 2, 7, 5), {"a"}),
        ("there", [0.5, 2, 7, 5], there(0.5, 2, 7, 5), {"a"}),
        ("kept", [0.5, 3, 4], 0.5 * 3**4, set()),
    ],
)
def test_frames_leave_out_only_integer_parameters_no_call_changes(name, args, expected, pushed):
    """@kept passes a on unchanged, so its frames hold the point alone; @swap
    passes a as b and b as a, and @there passes b as @back's c, which @back
    passes as both a and b: each a takes other values at deeper calls, so
    its frames keep it, and the machine computes what the program does."""
    ctx = make_context()
    parsed = parse_module(PASSED_ON, "passed_on.mlir", ctx)
    MakeResumablePass(functions=(name,)).apply(ctx, parsed)
    function = SymbolTable.lookup_symbol(parsed, name)
    assert function is not None
    saved = {op.value.name_hint for op in function.walk() if isinstance(op, anc.CopyPushOp)}
    assert {hint.split("_")[0] for hint in saved if hint} == pushed
    ReversibilizePass(mode="tape").apply(ctx, parsed)
    runner = RevInterpreter(parsed)
    arguments, _ = inputs(runner, name, args)
    assert runner.call(name, *arguments)[len(args)] == pytest.approx(expected, rel=1e-15)
