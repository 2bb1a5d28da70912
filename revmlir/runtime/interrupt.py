"""Ctrl-C and the stack budget of native calls from Python: the run contexts
that ``revmlir.runtime.guard``'s entry points read from the error slot.

Python's own SIGINT handler only sets a flag that the interpreter looks at
between bytecodes, which a native loop never reaches.  So native code has a
SIGINT action of its own: machine code, compiled once per process and never
freed, that adds one to the process's *interrupt count* and then calls
Python's C-level handler, so that Python sees every Ctrl-C as it would
alone.  Once installed, the action stays: every loop of a run compares the
count with the one its call started with and leaves through the error path
with ``INTERRUPTED`` in the slot once it has moved, and ``interrupted``
lets Python run its handler (``KeyboardInterrupt`` by default).

Calls from Python of a function that polls (``polling_functions``) go
through ``Interrupts.run`` (machine code too, called with the GIL held),
which takes the call's run context, followed by the entry point and its
argument, and

1. asks the kernel for the SIGINT action and, where that is Python's
   (before the first call, or after ``signal.signal`` installed Python's
   anew), installs ours with Python's mask and flags; an ignored SIGINT,
   the system's default or another program's handler stays as the program
   chose, and runs are not interrupted;
2. notes the count in the run context;
3. lets Python act on the signals it has had (``PyErr_CheckSignals``),
   returning -1 with its exception set where a handler raised;
4. releases the GIL, calls the entry point, and takes the GIL back.

A Ctrl-C before 2 has reached Python, through our action or its own, and 3
raises ``KeyboardInterrupt`` before the run starts; one after 2 moves the
count, which the run's next poll sees.  No instant lies between the two.
Nothing is cleared or put back per call, so runs in several threads, and a
run called from a callback of another, each see every Ctrl-C that comes
after their own start.  One call of machine code from Python does all of
it, as one did the entry point alone, with one system call where the entry
point made two to install and remove its action.  (Asking Python which
handler is in place cost more than a whole call on some systems.)

The stack budget is half the stack of the thread that calls
(``set_stack``), leaving the rest to whatever called in: a recursion
deeper than that stops with ``RECURSION_TOO_DEEP`` instead of overflowing.
Each call of a function that may recurse writes its own thread's budget
into its run context: threads' stacks differ (``threading.stack_size``,
a C library's threads, musl's 128 KiB default), and one budget for the
process, taken from the first caller's stack, let a thread with a smaller
stack overflow it.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import threading
from _ctypes import CFuncPtr
from collections.abc import Callable
from typing import NoReturn

import llvmlite.binding as llvm

from revmlir.lowering.llvm_parse import parse_llvm
from revmlir.runtime.guard import (
    CONTEXT_BUDGET,
    CONTEXT_COUNT,
    CONTEXT_FLOOR,
    CONTEXT_SEEN,
    CONTEXT_WORDS,
    PTHREAD_ATTR_WORDS,
    STACK_MARGIN,
)
from revmlir.runtime.jit import c_function, host_target_machine

DEFAULT_THREAD_STACK = 8 << 20
"""What a thread's stack is taken to be when ``RLIMIT_STACK`` is unlimited."""
SIGACTION_WORDS = 64
"""512 bytes, more than any libc's ``struct sigaction`` (glibc: 152), whose
first word is the handler."""

_HANDLER = """
define void @revmlir_on_interrupt(i32 %signal) {{
  %before = atomicrmw add ptr inttoptr (i64 {count} to ptr), i64 1 monotonic, align 8
  call void inttoptr (i64 {python} to ptr)(i32 %signal)
  ret void
}}
"""
_INSTALL = """
  %action = alloca [{words} x i64], align 16
  %asked = call i32 inttoptr (i64 {sigaction} to ptr)(i32 {sigint}, ptr null, ptr %action)
  %handler = load i64, ptr %action, align 16
  %python = icmp eq i64 %handler, {python}
  br i1 %python, label %install, label %note
install:
  store i64 ptrtoint (ptr @revmlir_on_interrupt to i64), ptr %action, align 16
  %installed = call i32 inttoptr (i64 {sigaction} to ptr)(i32 {sigint}, ptr %action, ptr null)
"""
_RUN = """
define i32 @revmlir_run(ptr %context) {{
start:
{install}
  br label %note
note:
  %count = load atomic i64, ptr inttoptr (i64 {count} to ptr) monotonic, align 8
  %seen = getelementptr i64, ptr %context, i64 {seen}
  store i64 %count, ptr %seen, align 8
  %signals = call i32 inttoptr (i64 {check} to ptr)()
  %raised = icmp ne i32 %signals, 0
  br i1 %raised, label %done, label %run
run:
  %entry_word = getelementptr i64, ptr %context, i64 {entry}
  %entry = load ptr, ptr %entry_word, align 8
  %argument_word = getelementptr i64, ptr %context, i64 {argument}
  %argument = load ptr, ptr %argument_word, align 8
  %state = call ptr inttoptr (i64 {save} to ptr)()
  call void %entry(ptr %argument)
  call void inttoptr (i64 {restore} to ptr)(ptr %state)
  br label %done
done:
  ret i32 %signals
}}
"""
_RUN_TYPE = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
"""Called with the GIL held, and raising what ``PyErr_CheckSignals``
raised."""
CALL_ENTRY, CALL_ARGUMENT = CONTEXT_WORDS, CONTEXT_WORDS + 1
"""Words of what ``Interrupts.run`` takes after the run context: the entry
point's address and its argument."""


_thread = threading.local()


def set_stack(context: ctypes.Array[ctypes.c_int64]) -> None:
    """Give the run ``context`` the calling thread's stack (``_thread_stack``,
    measured once per thread): half of it as the budget, and the lowest
    address a run may reach, ``STACK_MARGIN`` above its low end (0 where
    the end is unknown)."""
    try:
        budget, floor = _thread.stack
    except AttributeError:
        size, start = _thread_stack()
        budget, floor = _thread.stack = (size // 2, start + STACK_MARGIN if start else 0)
    context[CONTEXT_BUDGET], context[CONTEXT_FLOOR] = budget, floor


def _thread_stack() -> tuple[int, int]:
    """The bytes of the calling thread's stack, and its lowest address, 0
    where unknown.  The process's main thread's grows up to
    ``RLIMIT_STACK`` (``DEFAULT_THREAD_STACK`` when unlimited), a limit a
    program may lower later, so its end is taken as unknown; another
    thread's is what the C library gave it, which it says on Linux
    (``pthread_getattr_np``, with its end) and macOS
    (``pthread_get_stacksize_np``).  Elsewhere a thread is taken to have the
    smaller of the main thread's and ``threading.stack_size()`` where that
    is set."""
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    main = soft if soft > 0 and soft != resource.RLIM_INFINITY else DEFAULT_THREAD_STACK
    if _is_process_main_thread():
        return main, 0
    if (own := _own_stack()) is not None:
        return own
    return min(main, threading.stack_size() or main), 0


def _is_process_main_thread() -> bool:
    """Whether the calling thread is the process's first, whose stack grows
    to ``RLIMIT_STACK``.  On Linux, the thread whose id is the process's:
    Python's main thread is the one that started Python, which a program
    that embeds it may do in a thread of its own, of a smaller stack."""
    if sys.platform.startswith("linux"):
        return threading.get_native_id() == os.getpid()
    return threading.current_thread() is threading.main_thread()


def _own_stack() -> tuple[int, int] | None:
    """The calling thread's stack size and lowest address (0 where unknown)
    as its C library reports them, or None where the library has no way to
    say."""
    this = c_function("pthread_self", ctypes.c_void_p)()
    try:
        stack_size = c_function("pthread_get_stacksize_np", ctypes.c_size_t, ctypes.c_void_p)  # macOS
    except KeyError:
        pass
    else:
        return int(stack_size(this)), 0
    try:
        get = c_function("pthread_getattr_np", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
        stack = c_function("pthread_attr_getstack", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        destroy = c_function("pthread_attr_destroy", ctypes.c_int, ctypes.c_void_p)
    except KeyError:
        return None
    attributes = (ctypes.c_int64 * PTHREAD_ATTR_WORDS)()
    if get(this, attributes) != 0:
        return None
    start, size = ctypes.c_void_p(), ctypes.c_size_t()
    found = stack(attributes, ctypes.byref(start), ctypes.byref(size)) == 0
    destroy(attributes)
    return (size.value, start.value or 0) if found and size.value else None


def _address(function: CFuncPtr) -> int:
    address = ctypes.cast(function, ctypes.c_void_p).value
    assert address is not None
    return address


class Interrupts:
    """The process's interrupt count, our SIGINT action's machine code and
    ``arm``.  Made when native code first runs: where Python's handler is
    not in place then (SIGINT ignored or left to the system when the
    process started), there is no action to install, and runs are not
    interruptible."""

    def __init__(self) -> None:
        self.count = ctypes.c_int64(0)
        sigaction = c_function("sigaction", ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
        action = (ctypes.c_int64 * SIGACTION_WORDS)()
        found = sigaction(signal.SIGINT, None, ctypes.addressof(action)) == 0
        python = action[0]
        api = ctypes.pythonapi
        fields = {
            "count": ctypes.addressof(self.count),
            "check": _address(api.PyErr_CheckSignals),
            "save": _address(api.PyEval_SaveThread),
            "restore": _address(api.PyEval_RestoreThread),
            "seen": CONTEXT_SEEN,
            "entry": CALL_ENTRY,
            "argument": CALL_ARGUMENT,
            "install": "",
        }
        text = ""
        if found and callable(signal.getsignal(signal.SIGINT)) and python not in (0, 1):
            install = {"words": SIGACTION_WORDS, "sigaction": _address(sigaction), "sigint": int(signal.SIGINT)}
            fields["install"] = _INSTALL.format(python=python, **install)
            text = _HANDLER.format(python=python, **fields)
        self.engine = llvm.create_mcjit_compiler(parse_llvm(text + _RUN.format(**fields)), host_target_machine())
        self.engine.finalize_object()
        self.run: Callable[[int], int] = _RUN_TYPE(self.engine.get_function_address("revmlir_run"))
        """``run(address of a call's context)``: the steps of the module
        docstring; raises what Python's handler raised."""

    def context(self, entry: int, argument: int) -> ctypes.Array[ctypes.c_int64]:
        """The run context of one call frame, followed by what ``run``
        calls: the entry point at ``entry`` with ``argument``.  Its stack
        budget is the calling thread's; a frame used in another thread
        takes that thread's (``set_stack``) before it runs."""
        context = (ctypes.c_int64 * (CALL_ARGUMENT + 1))()
        context[CONTEXT_COUNT] = ctypes.addressof(self.count)
        set_stack(context)
        context[CALL_ENTRY], context[CALL_ARGUMENT] = entry, argument
        return context


_lock = threading.Lock()
_interrupts: Interrupts | None = None


def interrupts() -> Interrupts:
    """The process's ``Interrupts``, made by the first call."""
    global _interrupts
    with _lock:
        if _interrupts is None:
            _interrupts = Interrupts()
    return _interrupts


def interrupted() -> NoReturn:
    """A run stopped by Ctrl-C: Python's handler runs now (it raises
    ``KeyboardInterrupt`` unless the program chose otherwise); a handler
    that returns, or a thread other than the main one, where Python runs
    no handlers, gets ``KeyboardInterrupt`` all the same, since the run
    did not finish."""
    ctypes.pythonapi.PyErr_CheckSignals()
    raise KeyboardInterrupt
