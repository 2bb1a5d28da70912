"""What the names a compiled Python function reads are bound to.

A compile looks a name up as Python would inside the function (closure,
globals, builtins), and the function keeps what each name or dotted path
(``cfg.K``) was bound to at the first compile that read it: every
specialisation, the inverse and the derivatives of a function then compute
with the same constants and call the same functions, whatever argument
types come first (docs/design.md, decisions 144 and 166).

The bindings are kept on the function object itself (``KEPT`` in its
``__dict__``), not in a table keyed by it: they often refer back to it (a
recursive function reads its own name), and a table would hold the
function, its specialisations and their native code for ever through its
values.  On the function they are a cycle of its own, which the collector
frees with it.

A compile's reads are kept only when it succeeds (``compiling``): after an
error at a helper or a callee, the user fixes it and calls again, and the
next compile reads the fixed one instead of the broken one it failed in.
"""

from __future__ import annotations

import builtins
import inspect
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class _Unresolved:
    def __repr__(self) -> str:
        return "<unresolved>"


UNRESOLVED: Any = _Unresolved()
"""What a name bound to nothing (or not a Python object) resolves to."""

KEPT = "__revmlir_bindings__"
"""The attribute of a Python function that holds its kept bindings (a
``_Kept``)."""

Reads = dict[str, Any]


class _Compiles(threading.local):
    """Per thread, the compiles under way, outermost first: each holds the
    reads it made, per function, until it succeeds."""

    def __init__(self) -> None:
        self.open: list[dict[Any, Reads]] = []


_compiles = _Compiles()


@contextmanager
def compiling() -> Iterator[None]:
    """A compile whose reads the functions keep when it completes, and
    forget when it raises.  Compiles nest (a caller's compile builds its
    callees'): an inner one that succeeds keeps its reads, whatever the
    outer one then does, since its specialisation is built from them."""
    pending: dict[Any, Reads] = {}
    _compiles.open.append(pending)
    try:
        yield
    finally:
        _compiles.open.pop()
    for owner, reads in pending.items():
        kept = _kept(owner)
        for path, value in reads.items():
            kept.setdefault(path, value)


def _owner(function: Any) -> Any:
    """The object that keeps the bindings of ``function``: a method's
    function, whose names its bound methods share."""
    return getattr(function, "__func__", function)


class _Kept:
    """The bindings of one function, with a weak reference to it:
    ``functools.wraps`` copies a function's ``__dict__`` into its wrapper,
    whose names are its own and must not be read as the wrapped one's."""

    __slots__ = ("owner", "reads")

    def __init__(self, owner: Any) -> None:
        self.owner = weakref.ref(owner)
        self.reads: Reads = {}


def _kept(owner: Any) -> Reads:
    entry = owner.__dict__.get(KEPT)
    if not isinstance(entry, _Kept) or entry.owner() is not owner:
        entry = owner.__dict__[KEPT] = _Kept(owner)
    return entry.reads


def namespace_of(function: Any) -> Callable[[str], Any]:
    """Name lookup as inside ``function``: closure, globals, builtins, of a
    name or a dotted path.  A name or path keeps the value the first
    successful compile that read it found; one read in a compile under way
    is read as that compile found it; one not bound yet, or read outside a
    compile, is read again at the next lookup."""
    closure = inspect.getclosurevars(function)
    scopes = (closure.nonlocals, function.__globals__, vars(builtins))
    owner = _owner(function)
    kept = _kept(owner)

    def lookup(path: str) -> Any:
        if path in kept:
            return kept[path]
        value = next((reads[path] for reads in _reads_under_way(owner) if path in reads), UNRESOLVED)
        if value is UNRESOLVED:
            name, *attributes = path.split(".")
            value = next((scope[name] for scope in scopes if name in scope), UNRESOLVED)
            for attribute in attributes:
                value = getattr(value, attribute, UNRESOLVED)
        if value is not UNRESOLVED and _compiles.open:
            _compiles.open[-1].setdefault(owner, {})[path] = value
        return value

    return lookup


def _reads_under_way(owner: Any) -> Iterator[Reads]:
    """The reads of ``owner`` by the compiles under way, innermost first."""
    for pending in reversed(_compiles.open):
        if (reads := pending.get(owner)) is not None:
            yield reads
