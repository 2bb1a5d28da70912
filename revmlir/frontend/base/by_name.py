"""Copying and pickling a decorated function: it is itself, sent by name.

A function decorated with ``@rv.reversible`` or ``@rv.ordinary`` is the
Python function it was made from and the programs compiled from it, on
demand, which nothing a user can do changes.  So it copies as Python
copies a plain function, to itself (a deep copy would reach locks and
machine code), and pickles as pickle sends a plain function, by the name
it has in its module: the process that loads it imports that module and
finds the function there, and its first calls compile it again (machine
code is of one process).  With ``multiprocessing``'s spawn start method
that is how a function defined at the top level of a module reaches the
workers.  The forms derived from a function (``~f``, ``rv.adjoint(f)``,
…) hold the function and copy and pickle through it.
"""

from __future__ import annotations

import pickle
import sys
from typing import Any, Self


class Itself:
    """Copies to itself: what it is, its compiled programs included, does
    not change once made."""

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self


class ByName(Itself):
    """Copies to itself and pickles as the function it was made from
    (above)."""

    __module__: str
    __qualname__: str

    def __reduce__(self) -> str:
        """The function's name in its module, for pickle to send; a
        ``PicklingError`` saying so where that name does not find it (a
        function defined inside another, or replaced by another object),
        since the loading process could not find it either."""
        found: Any = sys.modules.get(self.__module__)
        for part in self.__qualname__.split("."):
            found = getattr(found, part, None)
        if found is not self:
            name = f"{self.__module__}.{self.__qualname__}"
            advice = (
                f"{name} does not name it (define it at the top level of a module, which the loading process imports)"
                if found is None
                # ``alias = rv.reversible(_plain)``: the name is the plain function's
                else f"{name} names another object, {found!r} (decorate the def itself: @rv.… on a "
                "function defined at the top level of a module)"
            )
            raise pickle.PicklingError(
                f"{self!r} cannot be pickled: a revmlir function is pickled by its name, and {advice}"
            )
        return self.__qualname__
