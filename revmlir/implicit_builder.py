"""xDSL's ``ImplicitBuilder``, one thread at a time.

``xdsl.builder.ImplicitBuilder`` keeps its builder per thread, but places the
ops by replacing ``Operation.__post_init__`` for the whole process: a thread's
first builder saves the class's initialiser and installs a wrapper, and puts
back what it saved when it closes.  Two threads building at once save and put
back each other's wrappers, so an op is inserted twice (xDSL's "Can't add to a
block an operation already attached to a block") or the wrapper outlives both.
Compiles from several threads are promised to work (the first calls of one
function, or of different ones, at the same time), so every builder revmlir
opens goes through ``implicit_builder``, which holds one process-wide lock from
the outermost builder's opening to its closing; a thread's nested builders take
the lock again (it is re-entrant), so only builders of different threads wait.
The blocks built under it are small (a stack's growth, a check's report), so
the wait is short.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.builder import Builder, ImplicitBuilder
from xdsl.ir import Block, BlockArgument, Region

_IMPLICIT = threading.RLock()


@contextmanager
def implicit_builder(where: Builder | Block | Region) -> Iterator[tuple[BlockArgument, ...]]:
    """``ImplicitBuilder(where)`` while no other thread has one open."""
    with _IMPLICIT, ImplicitBuilder(where) as arguments:
        yield arguments
