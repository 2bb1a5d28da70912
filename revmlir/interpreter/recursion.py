"""How deep the interpreter lets calls nest.

A call the interpreter runs nests a dozen Python frames or more (the call,
the regions of the ops around it, xDSL's dispatch), so Python's default
recursion limit of 1000 frames stopped user recursion about a hundred calls
deep, where native code goes as deep as half the thread's stack allows.
While an interpreter runs, Python's limit is raised to leave room for
``MAX_CALL_DEPTH`` calls of ``FRAMES_PER_CALL`` frames each; a recursive
call deeper than ``MAX_CALL_DEPTH`` (``revmlir.safety``), or one whose
frames run out first (calls nested in many loops and branches), stops with
``RECURSION_TOO_DEEP`` at the call, as native code does.  Python 3.11 runs a Python
function called from Python without a C frame of its own, so these frames
live on the heap: the thread's C stack is not what bounds them.

The limit is the process's: it is raised when the first interpreter run
starts and put back when the last one ends, whichever threads run them.
The frontend's compiles hold the same room (docs/design.md, decision 144):
an expression compiles recursively, a frame or two per level of nesting,
and one count for both puts the limit back once.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.ir import Operation

from revmlir.errors import ExecutionError
from revmlir.safety import MAX_CALL_DEPTH, RECURSION_TOO_DEEP

FRAMES_PER_CALL = 40
"""Python frames left for each nested call."""

_lock = threading.Lock()
_runs = 0
_saved = 0


@contextmanager
def room_for_calls() -> Iterator[None]:
    """Python's recursion limit raised for ``MAX_CALL_DEPTH`` nested calls
    (of an interpreter run, or of a compile's expressions) while the block
    runs."""
    global _runs, _saved
    with _lock:
        if _runs == 0:
            _saved = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved, _saved + MAX_CALL_DEPTH * FRAMES_PER_CALL))
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0:
                sys.setrecursionlimit(_saved)


def too_deep(call: Operation, function: str | None) -> ExecutionError:
    """``RECURSION_TOO_DEEP`` at ``call`` in ``function``, named as native
    code's check names it (``rev-host-safety``): a call that stands for
    another (``SOURCE_OP_ATTR``: a ``rev.call`` lowered, ordinary code's
    ``func.call`` made reversible) by that op."""
    return ExecutionError.at(call, RECURSION_TOO_DEEP, function)
