"""Ctrl-C and the stack budget of native calls from Python: the run context
that ``revmlir.runtime.guard``'s entry points read from the error slot.

Python's own SIGINT handler only sets a flag that the interpreter looks at
between bytecodes, which a native loop never reaches.  So while a native
call runs, its guard installs a handler of its own: machine code, compiled
once per process and never freed, that sets the *interrupt flag* every
loop of the run polls and then calls Python's C-level handler as if it
alone were installed.  The run leaves through the error path with
``INTERRUPTED`` in the slot, and ``interrupted`` lets Python run its
handler now (``KeyboardInterrupt`` by default).  Where the program ignores
SIGINT or leaves it to the system, the guard finds that action in place
and puts it back at once: Ctrl-C does what the program asked for.  (Asking
Python which handler is in place costs more than the call itself on some
systems, so the guard asks the kernel, as it installs its own.)

The stack budget is half the stack a thread gets (``RLIMIT_STACK``, or
``threading.stack_size()`` when it is set and smaller), leaving the rest to
whatever called in: a recursion deeper than that stops with
``RECURSION_TOO_DEEP`` instead of overflowing.
"""

from __future__ import annotations

import ctypes
import resource
import signal
import threading
from typing import NoReturn

import llvmlite.binding as llvm

from revmlir.runtime.guard import CONTEXT_ACTION, CONTEXT_BUDGET, CONTEXT_FLAG, CONTEXT_HANDLER, SIGACTION_WORDS
from revmlir.runtime.jit import c_function, host_target_machine

DEFAULT_THREAD_STACK = 8 << 20
"""What a thread's stack is taken to be when ``RLIMIT_STACK`` is unlimited."""

_HANDLER = """
define void @revmlir_on_interrupt(i32 %signal) {{
  store atomic i64 1, ptr inttoptr (i64 {flag} to ptr) monotonic, align 8
  call void inttoptr (i64 {previous} to ptr)(i32 %signal)
  ret void
}}
"""


def _context(flag: ctypes.c_int64, action: int, handler: int) -> ctypes.Array[ctypes.c_int64]:
    context = (ctypes.c_int64 * 4)()
    context[CONTEXT_FLAG] = ctypes.addressof(flag)
    context[CONTEXT_ACTION] = action
    context[CONTEXT_BUDGET] = _stack_budget()
    context[CONTEXT_HANDLER] = handler
    return context


def _stack_budget() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    size = soft if soft > 0 and soft != resource.RLIM_INFINITY else DEFAULT_THREAD_STACK
    if threads := threading.stack_size():
        size = min(size, threads)
    return size // 2


class _Interrupts:
    """The process's interrupt flag, our SIGINT action (its mask and flags
    those of Python's, its handler sets the flag and calls Python's C-level
    handler) and the run context that names both.  Made when native code
    first runs: where Python's handler is not in place then (SIGINT ignored
    or left to the system when the process started), runs are not
    interruptible."""

    def __init__(self) -> None:
        self.flag = ctypes.c_int64(0)
        self.action = (ctypes.c_int64 * SIGACTION_WORDS)()
        sigaction = c_function("sigaction", ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
        found = sigaction(signal.SIGINT, None, ctypes.addressof(self.action)) == 0
        python = self.action[0]
        if not (found and callable(signal.getsignal(signal.SIGINT)) and python not in (0, 1)):
            self.context = _context(self.flag, 0, 0)
            return
        text = _HANDLER.format(flag=ctypes.addressof(self.flag), previous=python)
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(text), host_target_machine())
        self.engine.finalize_object()
        self.action[0] = self.engine.get_function_address("revmlir_on_interrupt")
        self.context = _context(self.flag, ctypes.addressof(self.action), python)


_lock = threading.Lock()
_address = 0
_interrupts: _Interrupts | None = None
"""Made with the first run context, whose handler code and action it keeps alive."""


def run_context() -> int:
    """The address of the run context of calls from Python."""
    return _address or _first_context()


def _first_context() -> int:
    global _address, _interrupts
    with _lock:
        if not _address:
            _interrupts = _Interrupts()
            _address = ctypes.addressof(_interrupts.context)
    return _address


def interrupted() -> NoReturn:
    """A run stopped by Ctrl-C: Python's handler runs now (it raises
    ``KeyboardInterrupt`` unless the program chose otherwise); a handler
    that returns, or a thread other than the main one, where Python runs
    no handlers, gets ``KeyboardInterrupt`` all the same, since the run
    did not finish."""
    ctypes.pythonapi.PyErr_CheckSignals()
    raise KeyboardInterrupt
