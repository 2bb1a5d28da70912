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
outlive the IR it describes.

The table is per thread (a ``ContextVar``): a compile in one thread does not
see another's answers.  A kept answer is shared by everyone who asks, so
analyses return it for reading only.
"""

from __future__ import annotations

import contextlib
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
    answer: A = found[1]
    return answer
