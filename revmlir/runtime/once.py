"""A value computed once, on first use, by whichever thread asks first.

Native compiles are lazy (a call compiles the direction it runs), and a
compile that fails fails the same way every time: its outcome, value or
error, is remembered and handed to every later use, so nothing is
compiled twice, nor warned about twice.  ``functools.cached_property``
does not serve: it caches no exception, and on Python 3.11 it locks one
lock for all instances of a class, so two modules could not compile at
the same time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")


class Once(Generic[T]):
    """The outcome of ``compute``, computed at the first ``get`` under a lock
    of this value's own; later ``get``s return the value or raise the same
    error again (with the traceback of its first raise, which re-raising
    would otherwise lengthen on every use)."""

    def __init__(self, compute: Callable[[], T]):
        self._compute = compute
        # re-entrant: a compute that asks for its own value recurses, as
        # without a lock, rather than waiting for itself forever
        self._lock = threading.RLock()
        self._done = False
        self._value: T  # set when computed
        self._error: Exception | None = None
        self._traceback: TracebackType | None = None

    def get(self) -> T:
        # on every call of a compiled function: the computed value first
        if self._done and self._error is None:
            return self._value
        if not self._done:
            with self._lock:
                if not self._done:
                    try:
                        self._value = self._compute()
                    except Exception as error:
                        self._error, self._traceback = error, error.__traceback__
                    self._done = True
        if self._error is not None:
            raise self._error.with_traceback(self._traceback)
        return self._value

    def computed(self) -> T | None:
        """The value if it was computed (without error), else None: what
        other work may reuse without computing it."""
        return self._value if self._done and self._error is None else None
