"""Answers about IR kept while the IR is known not to change.

The analyses of a function or module (which arguments it uses where, which
it writes, which are counters) are pure functions of the IR, and a
verification asks them of the same functions again and again: xDSL
verifies each ``rev.func`` on its own, and each function's checks ask
about its callees, so a module of eleven functions asked for the uses of
their arguments 19 times.  IR has no version number to tell whether it
changed since an answer was computed, so answers are kept only where the
caller says it does not: inside ``ir_unchanged()``, ``kept(question,
subject)`` computes ``question(subject)`` once per subject and returns it
until the outermost block ends; outside any such block it computes it
every time, as the analyses always did.  Callers that change IR (passes,
the frontend building a module) open no block, so an answer can never
outlive the IR it describes; the one way out of a block is
``kept_answer``, for a caller that keeps the IR as it is afterwards (a
specialisation's verified module, which every compile copies).

The table is per context (a ``ContextVar``), not per thread: a thread
started in a fresh context (threads of CPython before 3.14, and of a
free-threaded build only with ``-X thread_inherit_context=0``) sees no
block, but whatever runs in a copy of the context the block set sees its
table: a thread that inherits the context, an asyncio task created inside
the block, a generator that yields inside it to a caller that then changes
the IR.  So nothing inside a block yields, awaits or starts a thread or
task; the blocks are around a verification, which does none of these.  A
kept answer is shared by everyone who asks, so analyses return it for
reading only.

With ``REVMLIR_CHECK_KEPT`` set (any non-empty value, read at import) every
kept answer is computed again when it is asked for and compared with the
one kept: a block around code that changes the IR raises an
``AssertionError`` naming the question.  It costs what keeping saves, so it
is for tests and debugging.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

S = TypeVar("S")
A = TypeVar("A")

_answers: ContextVar[dict[tuple[Callable[..., Any], int], tuple[Any, Any]] | None] = ContextVar(
    "revmlir_kept_answers", default=None
)
"""Per (question, id of the subject): the subject (held, so that its id is
not reused while the answer is kept) and the answer."""

_CHECK = bool(os.environ.get("REVMLIR_CHECK_KEPT"))
"""Whether every kept answer is computed again and compared when asked."""


@contextlib.contextmanager
def ir_unchanged() -> Iterator[None]:
    """A block in which the IR the analyses are asked about does not change:
    their answers are kept until the outermost such block ends (an inner
    block shares the outer one's)."""
    if _answers.get() is not None:
        yield
        return
    token = _answers.set({})
    try:
        yield
    finally:
        _answers.reset(token)


def keeping() -> bool:
    """Whether answers are kept here (inside ``ir_unchanged()``): for an
    analysis of a whole module that pays only when kept, and asks less of
    the module where it is not (``revmlir.counters``)."""
    return _answers.get() is not None


def kept(question: Callable[[S], A], subject: S) -> A:
    """``question(subject)``, computed once per subject inside
    ``ir_unchanged()`` and every time outside it."""
    answers = _answers.get()
    if answers is None:
        return question(subject)
    key = (question, id(subject))
    found = answers.get(key)
    if found is None:
        found = answers[key] = (subject, question(subject))
    elif _CHECK and question(subject) != found[1]:
        raise AssertionError(
            f"the kept answer of {getattr(question, '__qualname__', question)} is stale: "
            "the IR changed inside ir_unchanged()"
        )
    answer: A = found[1]
    return answer


def kept_answer(question: Callable[[S], A], subject: S) -> A | None:
    """The answer ``kept`` holds for ``question(subject)`` in the current
    block, without computing it: None outside any block, or where nothing
    in the block asked.  For a caller that hands an answer on past the
    block's end, over IR that stays as it is (a specialisation's module
    once verified, which every compile copies)."""
    answers = _answers.get()
    found = None if answers is None else answers.get((question, id(subject)))
    return None if found is None else found[1]
