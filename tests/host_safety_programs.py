"""Native runs that would take the host process down or never end without
``revmlir.lowering.host_safety``: Ctrl-C in long loops, a stack that
cannot grow, a failed check under upstream's C interface.  Run by
``test_host_safety.py`` in a process of its own (a regression could crash
it, and a SIGINT or an address-space limit must not reach the test run);
``python host_safety_programs.py`` prints one JSON line per case.

Most Ctrl-Cs here are raised by machine code put in front of a call's
entry point or its arming (``sigint_first``), in the thread that calls:
the instant is exact, whatever the load, and no case waits on a clock.
One case sends SIGINT from another thread into a running loop, as a
terminal does."""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import llvmlite.binding as llvm
import numpy as np

import revmlir as rv
from cursor_driver import quiet
from revmlir.parsing import parse_module
from revmlir.runtime.interrupt import CALL_ENTRY
from revmlir.runtime.jit import host_target_machine
from revmlir.runtime.native import NativeModule
from revmlir.runtime_checks import JUMP_WORD, check_error_slot

FOREVER = 10**15
"""A trip count no run reaches (days): only Ctrl-C ends it."""
POLLED = 1 << 17
"""A trip count whose loop polls for Ctrl-C (a ``for`` loop does every
2¹⁶ iterations) and ends at once."""
SHORT = 1000
"""A trip count of which no loop polls on its own (fewer than 2¹⁶
iterations), four deep: 10¹² iterations, which only Ctrl-C ends."""
WATCHDOG = 30.0
"""Seconds after which a second SIGINT ends a run that the first did not
stop (a failure the case reports), so that no case can hang."""


@rv.reversible(backend="native")
def spin(y, n: int):
    for i in range(n):
        y += 1.0


@rv.reversible(backend="native")
def spin_inside(y, n: int):
    for i in range(2):
        for j in range(n):
            y += 1.0


@rv.reversible(backend="native")
def spin_nest(y, n: int):
    """A nest of loops each too short to poll by its own count: they
    share the function's count of ``for`` iterations, which polls."""
    for i in range(n):
        for j in range(n):
            for k in range(n):
                for m in range(n):
                    y += 1.0


@rv.reversible(backend="native")
def spin_calling(y, n: int, m: int):
    """The innermost two loops of a nest across functions, each call's
    count starting at 0: the loop around the call polls in each
    iteration.  (A call may update its arguments, so each loop's bound
    is an argument of its own.)"""
    for i in range(n):
        spin(y, m)


@rv.reversible(backend="native")
def spin_calling_twice(y, n: int, m: int, k: int):
    for i in range(n):
        spin_calling(y, m, k)


@rv.reversible(backend="native")
def spin_nest_across(y, n: int, m: int, k: int, j: int):
    """Four loops, one in each function of a chain of calls."""
    for i in range(n):
        spin_calling_twice(y, m, k, j)


@rv.ordinary(backend="native")
def spin_while(n: int):
    k = 0
    while k < n:
        k += 1
    return k


@rv.reversible(backend="native")
def spin_through(y, n: int):
    """No loop of its own: its callee's polls stop it."""
    spin(y, n)


@rv.ordinary(backend="native")
def spin_while_through(n: int):
    return spin_while(n)


ENDLESS_DEPTH = 100
"""A depth at which a binary recursion makes more calls than a run
reaches (2¹⁰⁰), and the stack holds every frame."""


@rv.ordinary(backend="native")
def fib(n: int):
    """Recursion without loops: only the calls may poll."""
    r = n
    if n >= 2:
        r = fib(n - 1) + fib(n - 2)
    return r


@rv.reversible(backend="native")
def tree(y, n: int):
    """A reversible recursion without loops, two calls deep per level."""
    if n > 0:
        tree(y, n - 1)
        tree(y, n - 1)
    y += 1.0


@rv.reversible(backend="native")
def bump(x, n: int):
    for i in range(n):
        x[0] += 1.0


@rv.reversible(backend="native")
def pile(y, n: int):
    s = rv.stack(float)
    for i in range(n):
        t = rv.ancilla(0.0)
        t += y
        rv.push(s, t)
    for i in range(n):
        t = rv.pop(s)
        t -= y
        rv.free(t)
    rv.free(s)


def caller(function: Any, *args: Any, backward: bool = False) -> Any:
    """The native caller that runs ``function`` on ``args`` (``~function``
    with ``backward``)."""
    spec = function.specialization_for(*args)
    plain = getattr(spec, "plain", None)  # ordinary code's
    return plain if plain is not None else spec.native.caller(spec.name, backward)


FIRST = """
declare i32 @raise(i32)
define {result} @first(ptr %argument) {{
  %raised = call i32 @raise(i32 {sigint})
  {value}call {result} inttoptr (i64 {callee} to ptr)(ptr %argument)
  ret {result} {returned}
}}
"""


def signal_first(callee: int, result: str) -> Any:
    """Machine code that raises SIGINT in the calling thread (the handler
    runs before ``raise`` returns), then calls the function at ``callee``
    with its argument and returns its ``result`` (``i32`` or ``void``)."""
    returns = result == "i32"
    text = FIRST.format(
        result=result,
        sigint=int(signal.SIGINT),
        value="%value = " if returns else "",
        callee=callee,
        returned="%value" if returns else "",
    )
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(text), host_target_machine())
    engine.finalize_object()
    return engine


@contextmanager
def sigint_first(run: Any, at: str) -> Iterator[None]:
    """A Ctrl-C at ``at`` of native caller ``run``'s calls: just before the
    entry point (``"entry"``: after Python's last look at its signals, in
    every frame the caller keeps), or just before the call of machine code
    that looks at them (``"run"``)."""
    if at == "run":
        original = run.run
        engine = signal_first(ctypes.cast(original, ctypes.c_void_p).value, "i32")
        run.run = type(original)(engine.get_function_address("first"))
        try:
            yield
        finally:
            run.run = original
        return
    assert run.frames, "the caller has no frame yet: call it once first"
    engine = signal_first(run.entry, "void")
    for frame in run.frames:
        frame.context[CALL_ENTRY] = engine.get_function_address("first")
    try:
        yield
    finally:
        for frame in run.frames:
            frame.context[CALL_ENTRY] = run.entry


@contextmanager
def watchdog() -> Iterator[dict[str, Any]]:
    """SIGINT again ``WATCHDOG`` seconds on, unless the block ended; says
    whether it had to."""
    outcome = {"watchdog": False}

    def fire() -> None:
        outcome["watchdog"] = True
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(WATCHDOG, fire)
    timer.start()
    try:
        yield outcome
    finally:
        timer.cancel()


def outcome_of(run: Callable[[], Any]) -> dict[str, Any]:
    try:
        return {"result": run()}
    except KeyboardInterrupt:
        return {"error": "KeyboardInterrupt"}


def interrupted_at(function: Any, args: tuple[Any, ...], backward: bool = False, at: str = "entry") -> dict[str, Any]:
    """Run ``function`` on ``args`` with a Ctrl-C just before ``at``."""
    with watchdog() as outcome, sigint_first(caller(function, *args, backward=backward), at):
        outcome.update(outcome_of(lambda: (~function if backward else function)(*args)))
    return outcome


def interrupted_later(run: Callable[[], Any], after: float = 0.3) -> dict[str, Any]:
    """Send this process SIGINT from another thread ``after`` seconds into
    ``run``, as a terminal's Ctrl-C does, and say what ``run`` raised and
    how long after the signal."""
    sent: list[float] = []

    def send() -> None:
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(after, send).start()
    outcome = outcome_of(run)
    return {**outcome, "seconds": time.perf_counter() - sent[0] if sent else None}


def before_arming() -> dict[str, Any]:
    """Python's own handler back in place (``signal.signal`` installs it
    over native code's), and a Ctrl-C just before the machine code that
    arms the call: Python alone sees it, and that code raises
    ``KeyboardInterrupt`` before the run starts."""
    x = np.zeros(1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    outcome = interrupted_at(bump, (x, 1), at="run")
    return {**outcome, "x": x.tolist()}


def handled_before_the_call() -> dict[str, Any]:
    """A Ctrl-C that a handler took care of before the call (native code's
    action in place, so the count moved) does not stop the next run."""
    calls: list[int] = []
    spin(0.0, 1)  # arms: native code's action in place
    previous = signal.signal(signal.SIGINT, lambda *_: calls.append(1))
    try:
        spin(0.0, 1)
        signal.raise_signal(signal.SIGINT)
        return {"result": spin(0.0, POLLED), "handler calls": len(calls)}
    finally:
        signal.signal(signal.SIGINT, previous)


def handler_that_returns() -> dict[str, Any]:
    calls: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda *_: calls.append(1))
    try:
        return {**interrupted_at(spin, (0.0, FOREVER)), "handler calls": len(calls)}
    finally:
        signal.signal(signal.SIGINT, previous)


def ignored() -> dict[str, Any]:
    """SIGINT ignored: the run is not interrupted, and finishes."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return interrupted_at(spin, (0.0, 10**6))
    finally:
        signal.signal(signal.SIGINT, previous)


def in_another_thread() -> dict[str, Any]:
    """A Ctrl-C in a run in another thread: that run stops with
    ``KeyboardInterrupt``, and Python's handler raises it in the main
    thread too."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        outcome["thread"] = outcome_of(lambda: spin(0.0, FOREVER)).get("error")

    with watchdog() as guarded, sigint_first(caller(spin, 0.0, FOREVER), "entry"):
        thread = threading.Thread(target=run)
        try:
            thread.start()
            thread.join()
            ctypes.pythonapi.PyErr_CheckSignals()
        except KeyboardInterrupt:
            outcome["main"] = "KeyboardInterrupt"
            thread.join()
    return {**outcome, **guarded}


UPSTREAM = """
rev.func @f(%y: f64, %x: memref<?xf64>, %i: index) {
  %v = memref.load %x[%i] : memref<?xf64>
  %y1 = rev.add %y, %v : f64
  rev.return %y1, %i : f64, index
}
"""


class Descriptor(ctypes.Structure):
    """Upstream's memref descriptor of rank 1."""

    _fields_ = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
        ("sizes", ctypes.c_int64 * 1),
        ("strides", ctypes.c_int64 * 1),
    ]


class Results(ctypes.Structure):
    _fields_ = [("y", ctypes.c_double), ("i", ctypes.c_int64)]


def upstream_entry_point() -> dict[str, Any]:
    """``_mlir_ciface_f`` called as C would, reading past the end: the guard
    returns to the caller with the check in the slot, which reads as the
    error a call from Python raises; a zeroed slot is left for the next."""
    module = NativeModule.compile(parse_module(UPSTREAM, "upstream.mlir"))
    entry = ctypes.CFUNCTYPE(
        None,
        ctypes.POINTER(Results),
        ctypes.c_double,
        ctypes.POINTER(Descriptor),
        ctypes.c_int64,
        ctypes.POINTER(Descriptor),
    )(module.machine_code.address("_mlir_ciface_f"))
    x, slot = np.arange(4.0), np.zeros(JUMP_WORD + 1, dtype=np.int64)
    array = Descriptor(x.ctypes.data, x.ctypes.data, 0, (4,), (1,))
    error = Descriptor(slot.ctypes.data, slot.ctypes.data, 0, (len(slot),), (1,))
    results = Results()
    outcome: dict[str, Any] = {}
    entry(ctypes.byref(results), 1.0, ctypes.byref(array), 3, ctypes.byref(error))
    outcome["passes"] = [results.y, slot.tolist()]
    entry(ctypes.byref(results), 1.0, ctypes.byref(array), 9, ctypes.byref(error))
    outcome["jump word after"] = int(slot[JUMP_WORD])
    try:
        check_error_slot(module.check_table, slot.tolist())
    except rv.ExecutionError as failure:
        outcome["slot says"] = str(failure)
    try:
        module.call("f", 1.0, x, 9)
    except rv.ExecutionError as failure:
        outcome["python says"] = str(failure)
    return outcome


TARGET_INTRINSIC = """
llvm.func @llvm.nvvm.read.ptx.sreg.tid.x() -> i32
func.func @f(%x: memref<?xi32>) {
  %t = llvm.call @llvm.nvvm.read.ptx.sreg.tid.x() : () -> i32
  %c0 = arith.constant 0 : index
  memref.store %t, %x[%c0] : memref<?xi32>
  return
}
"""


def target_intrinsic() -> dict[str, Any]:
    """Upstream IR calling a GPU intrinsic: LLVM's instruction selection
    would abort the process; compiling it raises instead."""
    try:
        NativeModule.compile(parse_module(TARGET_INTRINSIC, "intrinsic.mlir"))
    except Exception as error:  # the test checks which
        return {"error": type(error).__name__, "message": str(error)}
    return {"result": "compiled"}


DEEPEN = quiet("#ad.schedule<store_all>")
"""A store-all cursor over ``n`` steps, driven to its end: its frames grow
one level per step, and nothing else grows."""


def address_space_limit() -> tuple[int, int]:
    """256 MiB above what the process has now, and the hard limit."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[0])
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    return pages * resource.getpagesize() + (256 << 20), hard


def cursor_push_without_memory() -> dict[str, Any]:
    """A cursor whose frames cannot grow under the address-space limit: the
    run stops at ``ad.next`` (the cursor's machine has no error slot of its
    own), and the limit is lifted again."""
    module = NativeModule.compile(parse_module(DEEPEN, "drive.mlir"))
    outcome: dict[str, Any] = {"small": module.call("drive", 40)}
    limit, hard = address_space_limit()
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        module.call("drive", 10**12)
    except rv.ExecutionError as failure:
        outcome.update(error="ExecutionError", message=str(failure))
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    return outcome


RECORDS = """
rev.func @hoard(%m: memref<?xf64>) attributes {rev.forgetful} {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %m : !anc.stack<f64>, memref<?xf64>
  anc.drop %s, %m : !anc.stack<f64>, memref<?xf64>
  anc.stack_free %s : !anc.stack<f64>
  rev.return
}
"""
"""A snapshot of a whole array, pushed at once."""


def records_without_memory() -> dict[str, Any]:
    """A snapshot whose stack cannot grow to hold the record under the
    address-space limit (the array is larger than the memory left, its
    pages never touched): the run stops at the snapshot, and runs again
    where the record fits."""
    module = NativeModule.compile(parse_module(RECORDS, "records.mlir"))
    small = np.arange(4.0)
    module.call("hoard", small)
    huge = np.zeros(40 << 20)  # 320 MiB of address space, untouched
    limit, hard = address_space_limit()
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    outcome: dict[str, Any] = {}
    try:
        module.call("hoard", huge)
    except rv.ExecutionError as failure:
        outcome["snapshot"] = str(failure)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    module.call("hoard", small)
    outcome["after"] = small.tolist()
    return outcome


def push_without_memory() -> dict[str, Any]:
    """Pushes until ``realloc`` fails under an address-space limit 256 MiB
    above what the process has: a clean error, and the process lives on."""
    spin(0.0, 1)  # compiled before the limit
    pile(1.0, 4)
    limit, hard = address_space_limit()
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        pile(1.0, 10**9)
    except rv.ExecutionError as failure:
        return {"error": "ExecutionError", "message": str(failure), "after": pile(1.0, 5)}
    return {"result": "no error"}


CASES: dict[str, Callable[[], dict[str, Any]]] = {
    "Ctrl-C in a for loop": lambda: interrupted_at(spin, (0.0, FOREVER)),
    "Ctrl-C in a for loop, backwards": lambda: interrupted_at(spin, (0.0, FOREVER), backward=True),
    "Ctrl-C in ordinary code's while loop": lambda: interrupted_at(spin_while, (FOREVER,)),
    "Ctrl-C in an inner for loop": lambda: interrupted_at(spin_inside, (0.0, FOREVER)),
    "Ctrl-C in a nest of short loops": lambda: interrupted_at(spin_nest, (0.0, SHORT)),
    "Ctrl-C in a nest of short loops, backwards": lambda: interrupted_at(spin_nest, (0.0, SHORT), backward=True),
    "runs on after Ctrl-C in a nest of short loops": lambda: {"result": spin_nest(0.0, 12)},
    "Ctrl-C in a nest of short loops across functions": lambda: interrupted_at(spin_nest_across, (0.0, *[SHORT] * 4)),
    "Ctrl-C in a nest of short loops across functions, backwards": lambda: interrupted_at(
        spin_nest_across, (0.0, *[SHORT] * 4), backward=True
    ),
    "runs on after Ctrl-C in a nest of short loops across functions": lambda: {
        "result": spin_nest_across(0.0, 12, 12, 12, 12)
    },
    "Ctrl-C in a callee's loop": lambda: interrupted_later(lambda: spin_through(0.0, FOREVER)),
    "runs on after Ctrl-C in a callee's loop": lambda: {"result": spin_through(0.0, POLLED)},
    "Ctrl-C in an ordinary callee's loop": lambda: interrupted_at(spin_while_through, (FOREVER,)),
    "runs on after Ctrl-C in an ordinary callee's loop": lambda: {"result": spin_while_through(POLLED)},
    "Ctrl-C from another thread into a running loop": lambda: interrupted_later(lambda: spin(0.0, FOREVER)),
    "runs on after Ctrl-C": lambda: {"result": spin(0.0, POLLED)},
    "Ctrl-C before arming": before_arming,
    "Ctrl-C handled before the call": handled_before_the_call,
    "a SIGINT handler that returns": handler_that_returns,
    "SIGINT ignored": ignored,
    "Ctrl-C in a run in another thread": in_another_thread,
    "upstream entry point, failed check": upstream_entry_point,
    "a target intrinsic": target_intrinsic,
    "cursor push without memory": cursor_push_without_memory,
    "records without memory": records_without_memory,
    # last: it limits the address space of the process
    "push without memory": push_without_memory,
}


RECURSION_CASES: dict[str, Callable[[], dict[str, Any]]] = {
    "Ctrl-C in a recursion without loops": lambda: interrupted_at(fib, (ENDLESS_DEPTH,)),
    "Ctrl-C in a reversible recursion without loops": lambda: interrupted_at(tree, (0.0, ENDLESS_DEPTH)),
    "Ctrl-C in a reversible recursion without loops, backwards": lambda: interrupted_at(
        tree, (0.0, ENDLESS_DEPTH), backward=True
    ),
    "Ctrl-C from another thread into a running recursion": lambda: interrupted_later(lambda: fib(ENDLESS_DEPTH)),
    "runs on after Ctrl-C in a recursion": lambda: {"result": [fib(20), tree(0.0, 10)]},
}
"""Run apart (``python host_safety_programs.py recursion``): without polls
in recursive functions, no SIGINT stops them, and only the caller's
timeout ends the process."""


if __name__ == "__main__":
    # compiled before any SIGINT is sent: only the native code may see it
    if sys.argv[1:] == ["recursion"]:
        fib(1), tree(0.0, 1), (~tree)(0.0, 1)
        cases = RECURSION_CASES
    else:
        spin(0.0, 1), (~spin)(0.0, 1), spin_while(1), spin_inside(0.0, 1), bump(np.zeros(1), 1)
        spin_nest(0.0, 1), (~spin_nest)(0.0, 1)
        spin_nest_across(0.0, 1, 1, 1, 1), (~spin_nest_across)(0.0, 1, 1, 1, 1)
        spin_through(0.0, 1), spin_while_through(1)
        cases = CASES
    for name, case in cases.items():
        print(json.dumps({"case": name, **case()}), flush=True)
