"""Programs that leave defined behaviour (an index outside its array, a
division by zero, a shift by the width, a step of zero, an array of negative
size, …), each run on one engine in a process of its own by
``test_native_safety.py``: native code that regressed could take the
process down.  ``python safety_programs.py ENGINE`` prints one JSON line per
case: the error raised (type, message, op, location, function) and the
arrays after the call."""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from xdsl.dialects import func

import revmlir as rv
from revmlir.dialects import rev
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule


def read_past_end(y, x, i):
    y += x[i]


def write_past_end(y, x, i):
    x[i] += y


def read_axis_one(y, m, i, j):
    y += m[i, j]


def read_a_row(y, m, i):
    y += m[i, 0]
    y += m[i, 1]


def divide(y: int, a: int, b: int):
    y += a // b


def remainder(y: int, a: int, b: int):
    y += a % b


def shift_left(y: int, a: int, b: int):
    y += a << b


def shift_right(y: int, a: int, b: int):
    y += a >> b


def add_bool(y: int, b: bool):
    y += b


def add_true(y: int):
    y += True


def add_bool_to_float(y: float, b: bool):
    y += b


def stepped(x, s: int):
    for i in range(0, len(x), s):
        x[i] += 1.0


def sized(y, n: int):
    t = rv.zeros(n)
    for i in range(n):
        t[i] += y
    for i in range(n):
        t[i] -= y
    rv.free(t)


def sized_once(y, n: int):
    t = rv.zeros(n)
    t[n - 1] += y
    t[n - 1] -= y
    rv.free(t)


def big_frame(y):
    t = rv.zeros(10000)
    t[9999] += y
    y += t[9999] * 2.0
    t[9999] -= y / 3.0
    rv.free(t)


def sized_in_a_loop(y, n: int):
    for k in range(2):
        t = rv.zeros(n)
        t[n - 1] += y
        t[n - 1] -= y
        rv.free(t)


def prefix_then_past_end(x, n: int):
    for i in range(n):
        x[i] += 1.0


def affine_reads(y, x, n: int, c: int):
    for i in range(n):
        y[i] += x[2 * i + c]


def falling_reads(y, x, n: int, c: int):
    for i in range(n):
        y[i] += x[c - i]


def nested_reads(m, x, n: int):
    for i in range(n):
        for j in range(3):
            m[i, j] += x[i + j]


def packed_reads(y, x, n: int):
    """Reads of a packed strictly lower triangle, column by column, as
    ADBench's GMM reads its factors: an index affine in ``j`` whose
    invariant part divides by a constant."""
    for i in range(n):
        for j in range(i + 1, n):
            y[j] += x[i * (2 * n - i - 1) // 2 + j - i - 1]


def divided_reads(y, x, k: int):
    for i in range(len(y)):
        y[i] += x[i + len(x) // k]


def negated_reads(y, x, k: int):
    for i in range(len(y)):
        y[i] += x[i + k // -1]


def indirect_reads(y, x, at):
    for i in range(len(y)):
        y[i] += x[at[i]]


@rv.reversible
def callee_read(y, x, i):
    y += x[i]


def caller(y, x, i):
    y += 1.0
    callee_read(y, x, i)


def dirty_free(x, y):
    x[0] += 1.0
    t = rv.ancilla(0.0)
    t += y
    rv.free(t)
    x[1] += 1.0


@rv.reversible
def recurse_forever(y):
    y += 1.0
    recurse_forever(y)


@rv.reversible
def recurse(y, n: int):
    if n > 0:
        y += 1.0
        n -= 1
        recurse(y, n)
        n += 1


def ordinary_divide(a: int, b: int):
    return a // b


def ordinary_sum(x, n: int):
    total = 0.0
    for i in range(n):
        total += x[i]
    return total


def ordinary_write(x, i: int):
    x[i] = 1.0


def read_only_bytes() -> np.ndarray:
    return np.frombuffer(bytes(32))


def read_only_mmap() -> np.ndarray:
    with tempfile.NamedTemporaryFile(delete=False) as file:
        file.write(bytes(32))
    mapped = np.memmap(file.name, dtype=np.float64, mode="r")
    os.unlink(file.name)  # the mapping outlives the name
    return mapped


CASES: dict[str, tuple[Callable[..., Any], Callable[[], tuple[Any, ...]], bool]] = {
    # name: (function, arguments, run backwards)
    "read past the end": (read_past_end, lambda: (0.0, np.zeros(4), 4), False),
    "read at -1": (read_past_end, lambda: (0.0, np.zeros(4), -1), False),
    "read from an empty array": (read_past_end, lambda: (0.0, np.zeros(0), 0), False),
    "write past the end": (write_past_end, lambda: (1.0, np.zeros(4), 7), False),
    "write at -3": (write_past_end, lambda: (1.0, np.zeros(4), -3), False),
    "write past the end, backwards": (write_past_end, lambda: (1.0, np.zeros(4), 9), True),
    "read outside axis 1": (read_axis_one, lambda: (0.0, np.zeros((2, 3)), 1, 3), False),
    "read outside axis 0": (read_axis_one, lambda: (0.0, np.zeros((2, 3)), -1, 0), False),
    # a row read twice: past the rows, the first read's check fails on both
    # engines (native code does not check the row again at the second read,
    # test_check_ops.py's read_a_row test); past the columns, the second's
    "read a row past the end": (read_a_row, lambda: (0.0, np.zeros((2, 2)), 2), False),
    "read a row past its last column": (read_a_row, lambda: (0.0, np.zeros((2, 1)), 1), False),
    "divide by zero": (divide, lambda: (0, 7, 0), False),
    "remainder by zero": (remainder, lambda: (0, 7, 0), False),
    "divide by zero, backwards": (divide, lambda: (0, 7, 0), True),
    "shift left by 64": (shift_left, lambda: (0, 1, 64), False),
    "shift right by 200": (shift_right, lambda: (0, 1, 200), False),
    "shift left by -1": (shift_left, lambda: (0, 1, -1), False),
    "shift left by 63": (shift_left, lambda: (0, 1, 63), False),
    "add a bool": (add_bool, lambda: (5, True), False),
    "add True": (add_true, lambda: (5,), False),
    "add a bool to a float": (add_bool_to_float, lambda: (0.5, True), False),
    "step of zero": (stepped, lambda: (np.zeros(5), 0), False),
    "negative step": (stepped, lambda: (np.zeros(5), -2), False),
    "step of two": (stepped, lambda: (np.zeros(5), 2), False),
    "zeros of negative size": (sized, lambda: (1.0, -5), False),
    "zeros of 2**61 elements": (sized, lambda: (1.0, 2**61), False),
    "zeros of 10**7 elements": (sized_once, lambda: (1.0, 10**7), False),
    "zeros of 3 elements": (sized, lambda: (1.0, 3), False),
    "zeros of a large static size": (big_frame, lambda: (3.0,), False),
    "stops at the first bad index": (prefix_then_past_end, lambda: (np.zeros(3), 6), False),
    "versioned loop in range": (affine_reads, lambda: (np.zeros(4), np.arange(10.0), 4, 1), False),
    "versioned loop fails in the middle": (affine_reads, lambda: (np.zeros(8), np.arange(10.0), 8, 1), False),
    "versioned loop fails in the middle, backwards": (
        falling_reads,
        lambda: (np.zeros(8), np.arange(10.0), 8, 12),
        True,
    ),
    "versioned loop falls below zero": (falling_reads, lambda: (np.zeros(8), np.arange(10.0), 8, 5), False),
    "nested versioned loops fail in the middle": (nested_reads, lambda: (np.zeros((4, 3)), np.arange(5.0), 4), False),
    "a packed triangle read in range": (packed_reads, lambda: (np.zeros(4), np.arange(1.0, 7.0), 4), False),
    "a packed triangle read fails in the middle": (packed_reads, lambda: (np.zeros(4), np.arange(1.0, 6.0), 4), False),
    "an index divided by a variable fails in a versioned loop": (
        divided_reads,
        lambda: (np.zeros(4), np.arange(6.0), 2),
        False,
    ),
    "an index divided by zero in a versioned loop": (divided_reads, lambda: (np.zeros(4), np.arange(6.0), 0), False),
    "an index divided by -1 in a versioned loop": (negated_reads, lambda: (np.zeros(3), np.arange(5.0), -2), False),
    "an index divided by -1 fails in a versioned loop": (
        negated_reads,
        lambda: (np.zeros(3), np.arange(5.0), -3),
        False,
    ),
    "an indirect index fails in a versioned loop": (
        indirect_reads,
        lambda: (np.zeros(4), np.arange(5.0), np.array([4, 0, 5, 1])),
        False,
    ),
    "fails in a callee": (caller, lambda: (0.0, np.zeros(2), 2), False),
    "fails in a callee, backwards": (caller, lambda: (0.0, np.zeros(2), 2), True),
    "arrays after a failed check": (dirty_free, lambda: (np.zeros(2), 2.0), False),
    "write a view of bytes": (write_past_end, lambda: (1.0, read_only_bytes(), 0), False),
    "write a read-only mmap": (write_past_end, lambda: (1.0, read_only_mmap(), 0), False),
    "read a view of bytes": (read_past_end, lambda: (0.0, read_only_bytes(), 3), False),
    "recursion without end": (recurse_forever, lambda: (0.0,), False),
    "recursion 10**6 deep": (recurse, lambda: (0.0, 10**6), False),
    "recursion 10**6 deep, backwards": (recurse, lambda: (0.0, 10**6), True),
    "recursion 30 deep": (recurse, lambda: (0.0, 30), False),
    "recursion 5000 deep": (recurse, lambda: (0.0, 5000), False),
    "ordinary: divide by zero": (ordinary_divide, lambda: (7, 0), False),
    "ordinary: read past the end": (ordinary_sum, lambda: (np.ones(3), 5), False),
    "ordinary: write at -1": (ordinary_write, lambda: (np.zeros(3), -1), False),
}
ARITH = """
rev.func @f(%y: i64, %a: i64, %b: i64) {
  %q = arith.OP %a, %b : i64
  %y1 = rev.add %y, %q : i64
  rev.return %y1, %a, %b : i64, i64, i64
}
"""
CONSTANT_SHIFT = """
rev.func @f(%y: i64, %a: i64) {
  %zero = arith.constant 0 : i64
  %count = arith.constant 64 : i64
  %t = anc.alloc %zero : i64
  %s = arith.shli %a, %count : i64
  %t1 = rev.add %t, %s : i64
  %y1 = rev.add %y, %t1 : i64
  %t2 = rev.sub %t1, %s : i64
  anc.free %t2, %zero : i64
  rev.return %y1, %a : i64, i64
}
"""
STATIC_INDEX = """
rev.func @f(%y: f64, %m: memref<4xf64>) {
  %four = arith.constant 4 : index
  %v = memref.load %m[%four] : memref<4xf64>
  %y1 = rev.add %y, %v : f64
  rev.return %y1 : f64
}
"""
STD_ALLOCATION = """
func.func @f(%n: index, %x: f64) -> (index, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %x, %m[%i] : memref<?xf64>
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = memref.load %m[%i] : memref<?xf64>
    %more = arith.addf %acc, %v : f64
    scf.yield %more : f64
  }
  memref.dealloc %m : memref<?xf64>
  func.return %n, %sum : index, f64
}
"""
"""Ordinary code written by hand that allocates, run as it is (natively,
and on the interpreter lowered, with its error slot): native code mallocs
the array as it does an ancilla array on the heap.  The array is used
(filled, then summed): LLVM removes a ``malloc`` whose memory nothing
reads, which then cannot fail."""
ALLOCATION_SIZES = [("-1", -1), ("2**61", 1 << 61), ("2**62", 1 << 62), ("2**38", 1 << 38)]
"""Sizes of a hand-written ``memref.alloc`` that both engines refuse before
allocating: negative; 2⁶¹ and 2⁶² ``f64``s, whose byte count wraps to 0
(native code then stored into a block of 0 bytes); 2³⁸, 2 TiB, over
``MAX_ALLOCATION`` without wrapping."""
STD_FRAME_ALLOCATION = STD_ALLOCATION.replace("memref.alloc(%n)", "memref.alloca(%n)").replace(
    "  memref.dealloc %m : memref<?xf64>\n", ""
)
"""The same array in the function's frame (``memref.alloca``), which holds
``MAX_STACK_ALLOCATION`` (65,536 ``f64``s) at most: native code moved the
stack pointer by any size, and a size past the thread's stack faulted."""


def static_frame_allocation(elements: int) -> str:
    """The ``alloca`` with a static size, which native code would make on
    entry to the function, before any check."""
    return STD_FRAME_ALLOCATION.replace("memref.alloca(%n) : memref<?xf64>", "memref.alloca() : memref<?xf64>").replace(
        "memref<?xf64>", f"memref<{elements}xf64>"
    )


FRAME_SIZES = [("65536", 65536), ("65537", 65537), ("-1", -1), ("2**61", 1 << 61)]
MLIR: dict[str, tuple[str, Callable[[], tuple[Any, ...]]]] = {
    **{
        f"mlir: {op} by zero": (ARITH.replace("OP", op), lambda: (0, 7, 0))
        for op in ("divsi", "divui", "remsi", "remui", "floordivsi", "ceildivsi")
    },
    "mlir: shrui by 64": (ARITH.replace("OP", "shrui"), lambda: (0, 7, 64)),
    "mlir: constant shift count": (CONSTANT_SHIFT, lambda: (0, 3)),
    "mlir: constant index of a static shape": (STATIC_INDEX, lambda: (0.0, np.zeros(4))),
    "mlir: memref.alloc the memory cannot hold": (STD_ALLOCATION, lambda: (1 << 34, 1.5)),
    **{f"mlir: memref.alloc of {shown} f64s": (STD_ALLOCATION, lambda n=n: (n, 1.5)) for shown, n in ALLOCATION_SIZES},
    **{
        f"mlir: memref.alloca of {shown} f64s": (STD_FRAME_ALLOCATION, lambda n=n: (n, 1.5)) for shown, n in FRAME_SIZES
    },
    "mlir: memref.alloca of a static 60000 f64s": (static_frame_allocation(60000), lambda: (3, 1.5)),
    "mlir: memref.alloca of a static 10**8 f64s": (static_frame_allocation(10**8), lambda: (3, 1.5)),
}
"""Cases in IR, for the ops the eDSL does not produce."""
CASES.update({name: (lambda: None, arguments, False) for name, (_, arguments) in MLIR.items()})
OUT_OF_MEMORY: dict[str, tuple[Any, ...]] = {
    "zeros the memory cannot hold": (1.0, 1),
    "zeros the memory cannot hold, backwards": (1.0, 1),
    "zeros the memory cannot hold, in a loop": (1.0, 1),
    "mlir: memref.alloc the memory cannot hold": (2, 1.5),
    **{f"mlir: memref.alloc of {shown} f64s": (2, 1.5) for shown, _ in ALLOCATION_SIZES},
}
"""Cases run under an address-space limit (``memory_limited``), after a
run with these arguments outside it (which compiles them): an array of
2³⁴ elements, within ``MAX_ALLOCATION``, that no memory left can hold,
and hand-written allocations whose size checks keep them from allocating
(were one missing, the limit keeps it from taking the machine's memory)."""
CASES.update(
    {
        "zeros the memory cannot hold": (sized_once, lambda: (1.0, 1 << 34), False),
        "zeros the memory cannot hold, backwards": (sized_once, lambda: (1.0, 1 << 34), True),
        "zeros the memory cannot hold, in a loop": (sized_in_a_loop, lambda: (1.0, 1 << 34), False),
    }
)
ORDINARY = {name for name in CASES if name.startswith("ordinary:")}
"""Cases written in ordinary Python (``@rv.ordinary``)."""
AT_A_CALL = {"recursion without end", "recursion 10**6 deep", "recursion 10**6 deep, backwards"}
"""Cases that stop at a call, which the interpreter runs as ``rev.call``
and native code as the ``func.call`` it was lowered to."""


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _compiled(name: str, engine: str) -> Callable[..., Any]:
    function, _, backwards = CASES[name]
    if name in MLIR:
        module = parse_module(MLIR[name][0], "case.mlir")
        (function,) = [f for f in module.ops if isinstance(f, func.FuncOp | rev.FuncOp)]
        if isinstance(function, rev.FuncOp):
            backend = NativeModule.compile(module) if engine == "native" else RevInterpreter(module)
            return lambda *args: backend.call("f", *args)
        if engine == "native":
            std = NativeModule.compile(module).std_caller(function)
            return lambda *args: std(args)
        lower_to_std(module)
        interpreter = RevInterpreter(module)
        return lambda *args: interpreter.call_lowered("f", *args)
    decorator = rv.ordinary if name in ORDINARY else rv.reversible
    # a function that calls itself is compiled where it calls itself, with
    # the backend it was declared with: that of the run
    compiled = decorator(backend=engine)(getattr(function, "__wrapped__", function))
    return ~compiled if backwards else compiled


@contextmanager
def memory_limited() -> Iterator[None]:
    """The process's address space limited to 256 MiB above what it has:
    an allocation larger than that fails at once, whatever memory the
    machine has, its pages never touched."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[0])
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (pages * resource.getpagesize() + (256 << 20), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def run(name: str, engine: str) -> dict[str, Any]:
    _, arguments, _ = CASES[name]
    args = arguments()
    outcome: dict[str, Any] = {"case": name}
    try:
        compiled = _compiled(name, engine)
        if name in OUT_OF_MEMORY:
            compiled(*OUT_OF_MEMORY[name])
            with memory_limited():
                outcome["result"] = _plain(compiled(*args))
        else:
            outcome["result"] = _plain(compiled(*args))
    except Exception as error:  # the test compares what each engine raised
        outcome["error"] = type(error).__name__
        outcome["message"] = str(error)
        for field in ("op_name", "location", "function"):
            outcome[field] = getattr(error, field, None)
    outcome["arrays"] = [a.tolist() for a in args if isinstance(a, np.ndarray)]
    return outcome


if __name__ == "__main__":
    for case in CASES:
        print(json.dumps(run(case, sys.argv[1])), flush=True)
