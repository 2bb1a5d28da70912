"""Native code never takes the host process down or hangs it: Ctrl-C stops
long loops with ``KeyboardInterrupt``, a push that cannot grow its stack
stops the run with an ``ExecutionError``, a failed check under upstream's
C interface returns to its caller, and IR that LLVM could only compile by
aborting is refused.  The cases of
``host_safety_programs.py`` run in a process of their own (recursion too
deep is among ``safety_programs.py``'s, on both engines)."""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from xdsl.backend.llvm.convert import convert_module
from xdsl.context import Context
from xdsl.dialects import func

from host_safety_programs import DEEPEN, RECURSION_CASES
from revmlir.checkpoint.cursor import next_entry
from revmlir.errors import ExecutionError
from revmlir.interpreter import RevInterpreter, snapshots
from revmlir.lowering.host_safety import POLL, STACK_OK, HostSafetyPass
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.lowering.std_to_llvm import ConvertStdToLLVMPass
from revmlir.parsing import parse_module
from revmlir.runtime import interrupt
from revmlir.runtime.jit import HostTarget, jit, optimize
from revmlir.runtime.native import NativeModule, lower_to_llvm_ir
from revmlir.runtime_checks import JUMP_WORD
from test_std_interop import MemRef1D, entry

HERE = Path(__file__).parent
PROGRAMS = HERE / "host_safety_programs.py"


@cache
def outcomes(group: str = "") -> dict[str, dict[str, Any]]:
    """The outcomes of the cases of ``host_safety_programs.py``, or of
    those of ``group`` (``"recursion"``: ``RECURSION_CASES``, which only a
    timeout ends if they fail).  A timeout is an outcome too, kept like
    the others: ``cache`` keeps no exception, so the programs would
    otherwise start again, and time out again, for every later test."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    returncode: int | str
    try:
        run = subprocess.run(
            [sys.executable, str(PROGRAMS), *([group] if group else [])],
            capture_output=True,
            timeout=120 if group else 300,
            env=environment,
            check=False,
        )
        stdout, stderr, returncode = run.stdout, run.stderr, run.returncode
    except subprocess.TimeoutExpired as timeout:
        stdout, stderr, returncode = timeout.stdout or b"", timeout.stderr or b"", f"timed out: {timeout}"
    text = stdout.decode(errors="replace")
    # A timeout may cut the last line short: only whole lines are outcomes.
    lines = text.splitlines() if text.endswith("\n") else text.splitlines()[:-1]
    results = {line["case"]: line for line in map(json.loads, lines)}
    results["<exit>"] = {"returncode": returncode, "stderr": stderr.decode(errors="replace")[-2000:]}
    return results


def outcome(case: str) -> dict[str, Any]:
    results = outcomes("recursion" if case in RECURSION_CASES else "")
    assert case in results, f"the programs did not finish {case!r}: {results['<exit>']}"
    return results[case]


def test_the_programs_run_to_the_end():
    assert outcomes()["<exit>"]["returncode"] == 0, outcomes()["<exit>"]


def stopped(case: str) -> dict[str, Any]:
    """The outcome of a case whose Ctrl-C must stop the run by itself."""
    result = outcome(case)
    assert result.get("error") == "KeyboardInterrupt" and not result["watchdog"], result
    return result


def test_ctrl_c_at_the_last_instant_before_a_native_call_stops_its_loop():
    """SIGINT raised by machine code just before the entry point, where
    Python had looked at its signals for the last time: a loop of 10¹⁵
    iterations (for, backwards, ordinary code's while, a for loop inside
    another) stops with KeyboardInterrupt (it ran until a second SIGINT
    when the entry point installed the SIGINT action), and the function
    runs again."""
    for case in (
        "Ctrl-C in a for loop",
        "Ctrl-C in a for loop, backwards",
        "Ctrl-C in ordinary code's while loop",
        "Ctrl-C in an inner for loop",
    ):
        stopped(case)
    assert outcome("runs on after Ctrl-C")["result"] == [2.0**17, 2**17]


def test_ctrl_c_stops_a_nest_of_short_loops():
    """Four loops of 1000 iterations each, none long enough to poll by its
    own count: they share one count of the function's iterations, which
    polls, so Ctrl-C stops the nest forwards and backwards, and it runs
    again."""
    stopped("Ctrl-C in a nest of short loops")
    stopped("Ctrl-C in a nest of short loops, backwards")
    assert outcome("runs on after Ctrl-C in a nest of short loops")["result"] == [12.0**4, 12]


def test_ctrl_c_stops_a_nest_of_short_loops_across_functions():
    """The same nest with each loop in a function of its own that calls
    the next: each call's count starts at 0 and reaches no poll, so a
    loop that calls a function with a ``for`` loop polls in each
    iteration, and Ctrl-C stops the nest forwards and backwards."""
    stopped("Ctrl-C in a nest of short loops across functions")
    stopped("Ctrl-C in a nest of short loops across functions, backwards")
    assert outcome("runs on after Ctrl-C in a nest of short loops across functions")["result"] == [
        12.0**4,
        12,
        12,
        12,
        12,
    ]


def test_ctrl_c_in_a_callee_stops_the_call_of_a_function_without_loops():
    """A function with no loop of its own whose callee loops is called as
    one that polls (``polling_functions``), so the count its call noted
    is there for the callee's polls: Ctrl-C while the callee runs (sent
    from another thread; for ordinary code, at the entry point) is a
    KeyboardInterrupt in the caller's Python call, and the next call runs
    to its end."""
    result = outcome("Ctrl-C in a callee's loop")
    assert result.get("error") == "KeyboardInterrupt" and result["seconds"] < 5.0, result
    assert outcome("runs on after Ctrl-C in a callee's loop")["result"] == [2.0**17, 2**17]
    stopped("Ctrl-C in an ordinary callee's loop")
    assert outcome("runs on after Ctrl-C in an ordinary callee's loop")["result"] == 2**17


def test_ctrl_c_stops_a_recursion_without_loops():
    """A binary recursion of depth 100 (2¹⁰⁰ calls), ordinary code's
    ``fib`` and a reversible one, forward and backwards: no loop polls,
    the recursive calls do; Ctrl-C at the entry point or from another
    thread stops it, and the functions run again."""
    for case in (
        "Ctrl-C in a recursion without loops",
        "Ctrl-C in a reversible recursion without loops",
        "Ctrl-C in a reversible recursion without loops, backwards",
    ):
        stopped(case)
    result = outcome("Ctrl-C from another thread into a running recursion")
    assert result.get("error") == "KeyboardInterrupt" and result["seconds"] < 5.0, result
    assert outcome("runs on after Ctrl-C in a recursion")["result"] == [6765, [2047.0, 10]]
    assert outcomes("recursion")["<exit>"]["returncode"] == 0, outcomes("recursion")["<exit>"]


def test_ctrl_c_from_another_thread_stops_a_running_loop():
    result = outcome("Ctrl-C from another thread into a running loop")
    assert result.get("error") == "KeyboardInterrupt" and result["seconds"] < 5.0, result


def test_ctrl_c_before_the_call_arms_raises_before_the_run():
    """Python's handler back in place, SIGINT just before the arming: it
    raises, and the run (which adds one to x[0]) never starts."""
    assert stopped("Ctrl-C before arming")["x"] == [0.0]


def test_a_ctrl_c_handled_before_the_call_does_not_stop_it():
    result = outcome("Ctrl-C handled before the call")
    assert result == {"case": "Ctrl-C handled before the call", "result": [2.0**17, 2**17], "handler calls": 1}


def test_a_handler_that_returns_still_stops_the_run():
    assert stopped("a SIGINT handler that returns")["handler calls"] == 1


def test_an_ignored_sigint_does_not_stop_the_run():
    result = outcome("SIGINT ignored")
    assert result.get("result") == [1e6, 10**6] and not result["watchdog"], result


def test_ctrl_c_stops_a_run_in_another_thread_and_reaches_the_main_one():
    result = outcome("Ctrl-C in a run in another thread")
    assert result == {
        "case": "Ctrl-C in a run in another thread",
        "thread": "KeyboardInterrupt",
        "main": "KeyboardInterrupt",
        "watchdog": False,
    }


def test_a_push_that_cannot_grow_its_stack_stops_the_run():
    result = outcome("push without memory")
    assert result.get("error") == "ExecutionError", result
    assert result["message"].startswith(f"{PROGRAMS}:"), result
    assert "'anc.push' in @pile: cannot grow a stack of" in result["message"]
    assert result["message"].endswith("elements: out of memory")
    assert result["after"] == [1.0, 5]


def test_a_snapshot_that_cannot_grow_its_store_stops_the_run():
    """A record pushed at once grows its store once, and is checked once."""
    result = outcome("records without memory")
    assert result.get("snapshot") == (
        "records.mlir:4:3: 'anc.snapshot' in @hoard: cannot grow a stack of 0 elements: out of memory"
    ), result
    assert result["after"] == [0.0, 1.0, 2.0, 3.0]


def test_a_cursor_whose_frames_cannot_grow_stops_the_run_on_both_engines(monkeypatch: pytest.MonkeyPatch):
    """Natively under an address-space limit; on the interpreter with an
    allocator that refuses the cursor's next push: the same error at
    ``ad.next``, the frames as they were."""
    result = outcome("cursor push without memory")
    assert result["small"] == [40]
    assert result.get("error") == "ExecutionError", result
    line = next(n for n, text in enumerate(DEEPEN.splitlines(), 1) if "ad.next" in text)
    prefix = f"drive.mlir:{line}:5: 'ad.next' in @drive: cannot grow a stack of "
    assert result["message"].startswith(prefix) and result["message"].endswith(" elements: out of memory")
    assert int(result["message"][len(prefix) :].split()[0]) > 1000

    def refusing(scheme: str, snapshots: int, steps: int, words: Any, frames: list[int]) -> Any:
        grown = list(frames)
        moved = next_entry(scheme, snapshots, steps, words, grown)
        if len(grown) > len(frames) and len(frames) >= 3:
            raise MemoryError
        frames[:] = grown
        return moved

    monkeypatch.setattr(snapshots, "next_entry", refusing)
    interpreter = RevInterpreter(parse_module(DEEPEN, "drive.mlir"))
    assert interpreter.call("drive", 3) == (3,)
    with pytest.raises(ExecutionError) as failure:
        interpreter.call("drive", 40)
    assert str(failure.value) == prefix + "3 elements: out of memory"


def test_a_failed_check_under_mlir_ciface_returns_to_the_c_caller():
    result = outcome("upstream entry point, failed check")
    assert result["passes"] == [4.0, [0] * (JUMP_WORD + 1)]
    expected = "upstream.mlir:3:3: 'memref.load' in @f: index 9 is out of bounds for axis 0 with size 4"
    assert result["slot says"] == result["python says"] == expected
    assert result["jump word after"] == 0


def test_a_target_intrinsic_is_an_error_not_an_llvm_abort():
    result = outcome("a target intrinsic")
    assert result.get("error") == "TargetIntrinsicError", result
    assert result["message"].startswith(
        "native code cannot call @llvm.nvvm.read.ptx.sreg.tid.x, an intrinsic of the nvvm target"
    )


RECURSIVE = """
func.func @even(%n: index) -> i1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %zero -> (i1) {
    %t = arith.constant true
    scf.yield %t : i1
  } else {
    %m = arith.subi %n, %c1 : index
    %o = func.call @odd(%m) : (index) -> i1
    scf.yield %o : i1
  }
  return %r : i1
}
func.func @odd(%n: index) -> i1 {
  %c1 = arith.constant 1 : index
  %m = arith.subi %n, %c1 : index
  %e = func.call @even(%m) : (index) -> i1
  %f = func.call @leaf(%m) : (index) -> i1
  %r = arith.andi %e, %f : i1
  return %r : i1
}
func.func @leaf(%n: index) -> i1 {
  %t = arith.constant true
  cf.br ^head(%n : index)
^head(%k: index):
  %c0 = arith.constant 0 : index
  %done = arith.cmpi eq, %k, %c0 : index
  cf.cond_br %done, ^exit, ^body
^body:
  %c1 = arith.constant 1 : index
  %k1 = arith.subi %k, %c1 : index
  cf.br ^head(%k1 : index)
^exit:
  return %t : i1
}
func.func @nest(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
    }
  }
  return
}
func.func @calls(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    func.call @nest(%n) : (index) -> ()
  }
  scf.for %i = %c0 to %n step %c1 {
    %t = func.call @leaf(%n) : (index) -> i1
  }
  return
}
"""


def test_stack_checks_go_before_recursive_calls_and_polls_into_loops():
    """Only calls within a cycle of the call graph check the stack (even ↔
    odd, not odd → leaf), and poll for Ctrl-C before; a loop in ``cf`` form
    polls at the target of its backward branch; nested ``for`` loops poll,
    each now and then, on the function's one count of iterations; a loop
    that calls a function with a ``for`` loop polls in each iteration, one
    that calls a function without (``leaf``) on the count."""
    module = parse_module(RECURSIVE, "recursive.mlir")
    RevLowerToStdPass().apply(Context(), module)
    HostSafetyPass().apply(Context(), module)
    text = str(module)
    assert text.count(f"func.call @{STACK_OK}") == 2
    even, odd, leaf = (text.split(f"func.func @{name}(")[1].split("func.func")[0] for name in ("even", "odd", "leaf"))
    assert even.index(STACK_OK) < even.index("@odd(")
    assert odd.index(STACK_OK) < odd.index("@even(") and STACK_OK not in leaf
    for recursive in (even, odd):
        assert recursive.count(f"func.call @{POLL}") == 1
        assert recursive.index(POLL) < recursive.index(STACK_OK)
    assert even.index("scf.if") < even.index(POLL)  # where it recurses, not on entry
    assert leaf.count(f"func.call @{POLL}") == 1
    assert leaf.index("^head(") < leaf.index(POLL) < leaf.index("^body")
    nest = text.split("func.func @nest(")[1].split("func.func")[0]
    assert nest.count(f"func.call @{POLL}") == 2
    assert nest.index("scf.for") < nest.index(POLL) < nest.rindex("scf.for") < nest.rindex(POLL)
    assert nest.count("memref.alloca") == 1
    for loop in nest.split("scf.for")[1:]:
        assert loop.index("memref.load") < loop.index("scf.if") < loop.index(POLL)
    calling, counted = text.split("func.func @calls(")[1].split("func.func")[0].split("scf.for")[1:]
    assert calling.index(POLL) < calling.index("@nest(") and "scf.if" not in calling
    assert counted.index("scf.if") < counted.index(POLL) < counted.index("@leaf(")


USED = """
rev.func @used(%y: f64, %x: f64, %n: index, %m: index) {
  %a = anc.array_alloc(%n, %m) : memref<?x?xf64>
  %c0 = arith.constant 0 : index
  %e = rev.take %a[%c0, %c0] : memref<?x?xf64>
  %e1 = rev.add %e, %x : f64
  rev.put %e1, %a[%c0, %c0] : memref<?x?xf64>
  %v = memref.load %a[%c0, %c0] : memref<?x?xf64>
  %y1 = rev.add %y, %v : f64
  %f = rev.take %a[%c0, %c0] : memref<?x?xf64>
  %f1 = rev.sub %f, %x : f64
  rev.put %f1, %a[%c0, %c0] : memref<?x?xf64>
  anc.array_free %a(%n, %m) : memref<?x?xf64>
  rev.return %y1, %x, %n, %m : f64, f64, index, index
}
"""
"""An ancilla array of run-time sizes, always on the heap (two dimensions
of unknown size), holding ``x`` for a while: what LLVM cannot fold away
(it knew the zeros of ``calloc``'s array, and an array only read was no
array at all)."""

FRAME_OR_HEAP = USED.replace("@used", "@frame_or_heap").replace("?x?x", "?x").replace("%c0, %c0]", "%c0]")
FRAME_OR_HEAP = (
    FRAME_OR_HEAP.replace("(%n, %m)", "(%n)")
    .replace("%m: index", "%m: i64")
    .replace(", %n, %m : f64, f64, index, index", ", %n, %m : f64, f64, index, i64")
)
"""The same of one dimension, which the run puts in the frame where it is
small."""


def _optimized(text: str, function: str) -> str:
    """``function``'s optimised native LLVM IR."""
    optimized = str(
        optimize(lower_to_llvm_ir(parse_module(text)).llvm_ir, HostTarget.detect().machine(3, "default"), 3)
    )
    return optimized.split(f" @{function}(")[1].split("\ndefine ")[0]


def test_native_code_allocates_a_new_ancilla_array_zeroed():
    """A new ancilla array on the heap is ``calloc``'s, whose new pages are
    zero, where the loops zeroing it touched every page; one the run may
    put in the frame is zeroed there by those loops, which poll for Ctrl-C
    nowhere, so LLVM makes them one ``memset`` (with a poll every 2^16
    elements they stayed loops: 0.77 ms for 2^20 elements, 0.12 ms as a
    memset); the free's check of every element still polls.  Both engines
    agree, on the heap, in the frame and for an empty array."""
    zeroed = _optimized(USED, "used")
    assert "@calloc" in zeroed and "@malloc" not in zeroed and "@llvm.memset" not in zeroed
    assert "load atomic" in zeroed  # the free's loop reads the interrupt count
    either = _optimized(FRAME_OR_HEAP, "frame_or_heap")
    assert either.count("@calloc") == 1 and either.count("@llvm.memset") == 1 and "@malloc" not in either
    for text, function, arguments in (
        (USED, "used", [(1.5, 2.0, 300, 700), (1.5, 2.0, 1 << 11, 1 << 11)]),
        (FRAME_OR_HEAP, "frame_or_heap", [(1.5, 2.0, 3, 0), (1.5, 2.0, 600, 0), (1.5, 2.0, 1 << 22, 0)]),
    ):
        native, interpreter = NativeModule.compile(parse_module(text)), RevInterpreter(parse_module(text))
        for given in arguments:
            assert native.call(function, *given) == interpreter.call(function, *given) == (3.5, *given[1:])


ZEROED_AGAIN = """
func.func @again(%n: index, %x: f64, %k: index) -> (index, f64, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %a = memref.alloc(%n) : memref<?xf64>
  memref.store %x, %a[%c0] : memref<?xf64>
  %sum = scf.for %j = %c0 to %k step %c1 iter_args(%s = %zero) -> (f64) {
    %m = memref.dim %a, %c0 : memref<?xf64>
    scf.for %i = %c0 to %m step %c1 {
      memref.store %zero, %a[%i] : memref<?xf64>
    }
    %v = memref.load %a[%c0] : memref<?xf64>
    memref.store %x, %a[%c0] : memref<?xf64>
    %t = arith.addf %s, %v : f64
    scf.yield %t : f64
  }
  %m = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %m step %c1 {
    memref.store %zero, %a[%i] : memref<?xf64>
  }
  %w = memref.load %a[%c0] : memref<?xf64>
  memref.dealloc %a : memref<?xf64>
  %r = arith.addf %sum, %w : f64
  func.return %n, %r, %k : index, f64, index
}
"""
"""Fills of zeros into a ``memref.alloc`` that are not the first thing done
to it: in a loop, and after the loop, each zeroing what was written (the
result, rev's convention, is ``x``'s final value: the sum of what the
loads after the fills read)."""


def test_only_a_fill_that_comes_first_is_calloc_s():
    """A fill of zeros is the allocation's ``calloc`` only where nothing
    used the array before it: one after a store (or in a loop) zeroes what
    was stored, so it stays and the allocation is ``malloc``'s."""
    optimized = _optimized(ZEROED_AGAIN, "again")
    assert "@calloc" not in optimized and "@malloc" in optimized
    native = NativeModule.compile(parse_module(ZEROED_AGAIN, "again.mlir"))
    (again,) = [op for op in native.module.ops if isinstance(op, func.FuncOp)]
    assert native.std_caller(again)([4, 2.5, 3]) == (4, 0.0, 3)


WRITTEN_BEFORE_THE_CHOICE = {
    "stored in the branch": """
    %a = scf.if %c -> (memref<?xf64>) {
      %h = memref.alloc(%n) : memref<?xf64>
      memref.store %x, %h[%c0] : memref<?xf64>
      scf.yield %h : memref<?xf64>
    } else {
      %f = memref.alloca(%n) : memref<?xf64>
      scf.yield %f : memref<?xf64>
    }
""",
    "allocated before the choice": """
    %h = memref.alloc(%n) : memref<?xf64>
    memref.store %x, %h[%c0] : memref<?xf64>
    %a = scf.if %c -> (memref<?xf64>) {
      scf.yield %h : memref<?xf64>
    } else {
      %f = memref.alloca(%n) : memref<?xf64>
      scf.yield %f : memref<?xf64>
    }
""",
}
"""A frame-or-heap choice whose heap allocation is written before the
choice's result is zeroed: the heap's ``x`` must not survive the fill."""


@pytest.mark.parametrize("choice", WRITTEN_BEFORE_THE_CHOICE.values(), ids=WRITTEN_BEFORE_THE_CHOICE.keys())
def test_a_fill_after_a_choice_whose_heap_array_was_written_stays(choice: str):
    """The fill of an ``scf.if``'s array is the heap allocation's
    ``calloc`` only where the allocation is the last op of its branch:
    one written in the branch, or before the ``if``, is zeroed by the fill
    on both paths (the heap's read ``x``, 2.5, where std code reads 0.0).
    Unchecked std code, as ``rev-opt -p rev-host-safety,convert-std-to-llvm``
    compiles it: a bounds check on the fill's store (native code's own
    compile of std code) keeps it from the form of a fill."""
    module = parse_module(
        "func.func @chosen(%n: index, %x: f64, %err: memref<6xi64>) -> f64 {\n"
        "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n  %c4 = arith.constant 4 : index\n"
        "  %zero = arith.constant 0.0 : f64\n  %c = arith.cmpi ugt, %n, %c4 : index\n"
        f"{choice}"
        "  %m = memref.dim %a, %c0 : memref<?xf64>\n"
        "  scf.for %i = %c0 to %m step %c1 {\n    memref.store %zero, %a[%i] : memref<?xf64>\n  }\n"
        "  %r = memref.load %a[%c0] : memref<?xf64>\n  func.return %r : f64\n}\n",
        "chosen.mlir",
    )
    HostSafetyPass().apply(Context(), module)
    ConvertStdToLLVMPass().apply(Context(), module)
    machine_code = jit(str(convert_module(module, fallback_target_triple=None)))
    slots = (ctypes.c_int64 * 6)()
    error = MemRef1D(ctypes.addressof(slots), ctypes.addressof(slots), 0, (6,), (1,))
    chosen = entry(machine_code, "chosen", ctypes.c_double, ctypes.c_int64, ctypes.c_double, ctypes.POINTER(MemRef1D))
    assert chosen(8, 2.5, ctypes.byref(error)) == 0.0  # the heap's
    assert chosen(2, 2.5, ctypes.byref(error)) == 0.0  # the frame's
    assert list(slots) == [0] * 6


EMPTY_ROWS = """
rev.func @empty_rows(%y: f64, %n: index, %m: index) {
  %a = anc.array_alloc(%n, %m) : memref<?x?xf64>
  anc.array_free %a(%n, %m) : memref<?x?xf64>
  rev.return %y, %n, %m : f64, index, index
}
"""


def test_a_fill_with_a_zero_extent_counts_its_outer_loops():
    """An ancilla array of ``n`` rows of no elements (``rv.zeros((n, 0))``)
    is filled by ``n`` iterations that store nothing: its fill adds them to
    the function's count (``n + n·0``, where the element count alone was 0),
    so its poll after the fill is due where they pass 2^16; both engines run
    it alike."""
    module = parse_module(EMPTY_ROWS)
    RevLowerToStdPass().apply(Context(), module)
    HostSafetyPass().apply(Context(), module)
    body = str(module).split("func.func @empty_rows(")[1].split("func.func")[0]
    count = re.search(r"(%\w+) = arith.muli (%\w+), %\w+ : index\n\s*(%\w+) = arith.addi \2, \1 : index", body)
    assert count is not None and f"arith.index_cast {count[3]} : index to i64" in body
    native = NativeModule.compile(parse_module(EMPTY_ROWS))
    expected = RevInterpreter(parse_module(EMPTY_ROWS)).call("empty_rows", 1.5, 1 << 20, 0)
    assert native.call("empty_rows", 1.5, 1 << 20, 0) == expected == (1.5, 1 << 20, 0)


ZEROED_IN_A_LOOP = """
rev.func @main(%y: f64, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %y1 = rev.for %c0 to %n step %c1 : index (%y) : f64 {
  ^bb0(%i: index, %a: f64):
    %t = anc.array_alloc(%m) {nocheck} : memref<?xf64>
    %j = arith.remui %i, %m : index
    %e = memref.load %t[%j] : memref<?xf64>
    %a1 = rev.add %a, %e : f64
    anc.array_free %t(%m) {nocheck} : memref<?xf64>
    rev.yield %a1 : f64
  }
  rev.return %y1, %n, %m : f64, index, index
}
"""


def test_a_loop_that_zeroes_a_large_array_polls_by_the_elements_it_zeroes():
    """A loop whose body allocates an ancilla array and frees it unchecked
    (no loop of its own but the zeroing, which ``calloc`` does): the
    zeroing's element count is added to the function's count in one step
    and a poll after it runs where that count passes a multiple of 2^16, so
    4 Mi elements an iteration poll in every iteration, not once per 2^16
    iterations, and both engines agree."""
    module = parse_module(ZEROED_IN_A_LOOP)
    RevLowerToStdPass().apply(Context(), module)
    HostSafetyPass().apply(Context(), module)
    body = str(module).split("func.func @main(")[1].split("func.func")[0].split("scf.for", 1)[1]
    fill = body.index("memref.alloc(")
    assert body.count(f"func.call @{POLL}") == 2  # the loop's own, now and then, and the zeroing's
    assert fill < body.index("arith.xori", fill) < body.rindex(POLL) and "scf.for" not in body[fill:]
    optimized = _optimized(ZEROED_IN_A_LOOP, "main")
    # calloc's, whose zeros LLVM knows: an array only read is no array at all
    assert "@malloc" not in optimized and "@llvm.memset" not in optimized
    native = NativeModule.compile(parse_module(ZEROED_IN_A_LOOP))
    expected = RevInterpreter(parse_module(ZEROED_IN_A_LOOP)).call("main", 0.5, 3, 1000)
    assert native.call("main", 0.5, 3, 1000) == expected


THREAD_STACKS = """
import json, threading
import revmlir as rv


@rv.reversible(backend="native")
def down(out: int, n: int):
    if n >= 1:
        k = rv.ancilla(0)
        k += n - 1
        down(out, k)
        k -= n - 1
        rv.free(k)
    out += 1


outcomes = []


def run(n):
    try:
        outcomes.append(list(down(0, n)))
    except rv.ExecutionError as error:
        outcomes.append(str(error))


def run_past_the_budget(n):
    # a budget larger than the thread's stack, as where the stack a call
    # starts with is mostly used already: the stack's end still stops it
    from revmlir.runtime import interrupt

    _, start = interrupt._thread_stack()
    interrupt._thread.stack = (1 << 40, start + interrupt.STACK_MARGIN)
    run(n)


for size, depth, target in ((8 << 20, 10, run), (256 << 10, 9000, run), (8 << 20, 9000, run), (256 << 10, 9000, run_past_the_budget)):
    threading.stack_size(size)
    thread = threading.Thread(target=target, args=(depth,))
    thread.start()
    thread.join()
print(json.dumps(outcomes))
"""


def run_alone(script: Path, text: str) -> Any:
    """What the program ``text``, written to ``script`` and run in a
    process of its own, prints as JSON."""
    script.write_text(text)
    environment = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=environment, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def test_a_recursion_in_a_thread_of_a_smaller_stack_stops_at_that_stack(tmp_path: Path):
    """The stack a native recursion may use is measured for each thread,
    from its own stack: the first run in a thread of 8 MiB set a budget of
    4 MiB for the process, and a recursion 20000 deep in a thread of 256 KiB
    then ran past that thread's stack and took the process down.  Now one
    9000 deep (within ``MAX_CALL_DEPTH``) stops with the located error, and
    a thread of 8 MiB still runs it to the end.  A budget past the thread's stack (a call that starts with
    most of it used) stops at the stack's end, which the thread's C
    library reports.  In a process of its own."""
    script = tmp_path / "thread_stacks.py"
    small, deep, capped = run_alone(script, THREAD_STACKS)[1:]
    for stopped in (small, capped):
        assert stopped.startswith(f"{script}:") and stopped.endswith(
            "'rev.call' in @down: calls nest too deeply: the recursion would exhaust the stack"
        ), stopped
    assert deep == [9001, 9000]


def test_a_thread_python_takes_for_its_main_one_has_the_stack_its_c_library_gave_it(monkeypatch):
    """A program that embeds Python may start it in a thread of its own:
    that thread is Python's main thread but not the process's, and its
    stack is what the C library gave it, not ``RLIMIT_STACK`` (the budget
    was then 4 MiB in a thread of 256 KiB).  Here a thread of 256 KiB
    stands in for it."""
    seen: list[int] = []

    def measure() -> None:
        monkeypatch.setattr(threading, "main_thread", threading.current_thread)
        seen.append(interrupt._thread_stack()[0])

    previous = threading.stack_size(256 << 10)
    try:
        thread = threading.Thread(target=measure)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
    assert 128 << 10 < seen[0] <= 256 << 10


THREAD_ARRAYS = """
import json, sys, threading
from xdsl.dialects import func
from revmlir.errors import ExecutionError
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

FILLED = '''func.func @f(%n: index, %x: f64) -> (index, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.alloca(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %x, %m[%i] : memref<?xf64>
  }
  %v = memref.load %m[%c0] : memref<?xf64>
  func.return %n, %v : index, f64
}
'''
STATIC = FILLED.replace("memref.alloca(%n) : memref<?xf64>", "memref.alloca() : memref<?xf64>").replace(
    "memref<?xf64>", "memref<60000xf64>"
)
LOOPLESS = '''func.func @f(%n: index, %x: f64) -> (index, f64) {
  %c0 = arith.constant 0 : index
  %m = memref.alloca() : memref<60000xf64>
  memref.store %x, %m[%c0] : memref<60000xf64>
  %v = memref.load %m[%c0] : memref<60000xf64>
  func.return %n, %v : index, f64
}
'''
outcomes = []


def run(text, n):
    module = parse_module(text, "case.mlir")
    (function,) = [f for f in module.ops if isinstance(f, func.FuncOp)]
    try:
        outcomes.append(NativeModule.compile(module).std_caller(function)([n, 1.5]))
    except ExecutionError as error:
        outcomes.append(str(error))


for size in (8 << 20, 256 << 10):
    for text, n in ((FILLED, 65536), (STATIC, 60000), (LOOPLESS, 1)):
        threading.stack_size(size)
        thread = threading.Thread(target=run, args=(text, n))
        thread.start()
        thread.join()
print(json.dumps(outcomes))
"""


def test_a_stack_allocation_past_the_threads_stack_stops_the_run(tmp_path: Path):
    """A ``memref.alloca`` within the bound both engines share
    (``MAX_STACK_ALLOCATION``, 512 KiB) runs in a thread of 8 MiB; in one of
    256 KiB it would move the stack pointer past the thread's stack, and
    native code stops the run there with a located error, before the stack
    pointer moves: for a run-time size, and for a static one, which would
    otherwise be made on entry to the function, in a function without
    loops too (whose Python caller then takes the thread's stack, as for a
    recursion).  In a process of its own."""
    outcomes = run_alone(tmp_path / "thread_arrays.py", THREAD_ARRAYS)
    assert outcomes[:3] == [[65536, 1.5], [60000, 1.5], [1, 1.5]]
    assert outcomes[3:] == [
        "case.mlir:4:3: 'memref.alloca' in @f: a stack allocation of 524288 bytes would exhaust the stack",
        "case.mlir:4:3: 'memref.alloca' in @f: a stack allocation of 480000 bytes would exhaust the stack",
        "case.mlir:3:3: 'memref.alloca' in @f: a stack allocation of 480000 bytes would exhaust the stack",
    ]
