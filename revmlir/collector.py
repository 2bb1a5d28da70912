"""Python's cyclic garbage collector paused while revmlir compiles.

A compile builds and drops hundreds of thousands of xDSL objects (ops,
their results and uses, attributes), and IR is cyclic: an op and its block
point at each other.  Every allocation counts toward the collector's
thresholds, so compiling BA's GPU kernel ran about a thousand young
collections and several full ones, each traversing the objects still alive
(the IR being compiled, and everything the process has imported) only to
find that they survive: 1.2 s of the compile's 5.4 s of CPU time.  While a
compile runs the collector is off; the IR it dropped waits, as it did
before, for the next full collection after it (nearly all of it is cyclic
garbage that only a full collection frees), so the peak memory of a compile
stays where it was (BA's kernel: 219 MB instead of 214 MB).

The switch is process-wide: objects other threads allocate meanwhile are
not collected until the last compile in progress ends.  A program that
turned the collector off itself keeps it off.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_depth = 0
"""How many compiles (of any thread, nested or not) are in progress."""
_paused = False
"""Whether the outermost of them turned the collector off (it was on)."""


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block (and for any block that nests or
    overlaps it, in any thread), back to how the outermost found it after
    the last one ends, however it ends."""
    global _depth, _paused
    with _lock:
        if _depth == 0:
            _paused = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _paused:
                gc.enable()


def pausing(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` run with the collector paused.  Its wrapper is a frame
    of this package, as the warnings that point past revmlir's frames at the
    user's line require (``contextlib``'s decorator would be the first frame
    outside it)."""

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        with collector_paused():
            return function(*args, **kwargs)

    return paused
