"""Run-time schedulers: the table entries of an adjoint schedule, one at a
time, from a few words of state.

A checkpointed loop of 10⁶ steps cannot carry its schedule as a table (the
table alone would grow with the steps, and so would the code filling it), so
the generated code asks a *cursor* for the next entry instead: ``PLAIN``,
``TAKE``, ``RESTORE``, ``FREE`` or ``REVERSE`` of a step, then ``END``.  A
cursor is the recursion of ``revmlir.checkpoint.offline``'s generators
turned into a state machine:

* ``WORDS`` scalars (phase, working position, the current segment's start
  and end, the next goal, the recursion depth) travel as loop-carried values;
* the starts of the enclosing segments sit on a stack (``frames``), at most
  one per snapshot held, so memory is O(snapshots) whatever the trip count;
* the trip count is an operand: it may be known only when the loop starts.

Store-all, bisection and binomial share the machine and differ only in where
they split a segment (``split``).  The entries are exactly those of
``revmlir.checkpoint.table.encode`` applied to the offline schedule of the
same scheme, which the tests check; this module is the reference semantics
of ``ad.next`` in the interpreter, and ``revmlir.lowering.cursor_functions`` is the
same machine in native code.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import IntEnum
from typing import Final

from revmlir.checkpoint.offline import binomial_split
from revmlir.checkpoint.table import Entry

SCHEMES = ("store_all", "bisection", "binomial")
"""The schemes a cursor runs, in the order of their run-time code."""


class Phase(IntEnum):
    """What the machine does next.  ``GO_*`` restores the segment start if
    the working state is elsewhere; ``WALK_*`` advances to the goal, then
    snapshots it (``SPLIT``) or reverses the step there (``TAIL``)."""

    START = 0
    PLAN = 1
    GO_SPLIT = 2
    WALK_SPLIT = 3
    GO_TAIL = 4
    WALK_TAIL = 5
    RETURN = 6
    DONE = 7


WORDS: Final = 8
"""``(kind, step, phase, pos, start, end, goal, depth)``: the entry just
produced and the machine's state.  The initial words are zeros, and so are
the final ones but for ``kind = END`` and ``phase = DONE``, so the code that
runs a cursor can check that it finished."""
MAX_COUNT: Final = 2**63 - 1
"""The largest count a word holds: a budget of snapshots, or primitive
steps per checkpointed step, beyond it is refused where it is given."""
NOWHERE = -1
"""``pos`` when there is no working state (after a reversal)."""


def split(scheme: str, length: int, snapshots: int) -> int:
    """Where a segment of ``length`` steps is split (steps before the
    snapshot), or 0 when it is reversed as it is."""
    if length < 2:
        return 0
    if scheme == "store_all":
        return 1
    if scheme == "bisection":
        return length // 2
    return binomial_split(length, snapshots) if snapshots > 1 else 0


Words = tuple[int, int, int, int, int, int, int, int]
FINAL: Words = (Entry.END, 0, Phase.DONE, 0, 0, 0, 0, 0)


def next_entry(scheme: str, snapshots: int, steps: int, words: Words, frames: list[int]) -> Words:
    """The cursor after ``words`` (``frames`` is updated in place): its
    first two words are the next entry."""
    phase, pos, start, end, goal, depth = words[2:]
    while True:
        if phase == Phase.START:
            if steps <= 0:
                phase = Phase.DONE
                continue
            phase, pos, start, end, depth = Phase.PLAN, 0, 0, steps, 0
            return (Entry.TAKE, 0, phase, pos, start, end, goal, depth)
        if phase == Phase.PLAN:
            j = split(scheme, end - start, snapshots - depth)
            goal = start + j if j else end - 1
            phase = Phase.GO_SPLIT if j else Phase.GO_TAIL
            continue
        if phase in (Phase.GO_SPLIT, Phase.GO_TAIL):
            phase += 1
            if pos != start:
                pos = start
                return (Entry.RESTORE, start, phase, pos, start, end, goal, depth)
            continue
        if phase in (Phase.WALK_SPLIT, Phase.WALK_TAIL) and pos < goal:
            pos += 1
            return (Entry.PLAIN, pos - 1, phase, pos, start, end, goal, depth)
        if phase == Phase.WALK_SPLIT:
            frames.append(start)
            phase, start, depth = Phase.PLAN, goal, depth + 1
            return (Entry.TAKE, goal, phase, pos, start, end, goal, depth)
        if phase == Phase.WALK_TAIL:
            step, pos = goal, NOWHERE
            if goal > start:
                phase, goal = Phase.GO_TAIL, goal - 1
            else:
                phase = Phase.RETURN
            return (Entry.REVERSE, step, phase, pos, start, end, goal, depth)
        if phase == Phase.RETURN:
            freed = start
            if depth == 0:
                phase = Phase.DONE
            else:
                phase, end, start, depth = Phase.PLAN, start, frames.pop(), depth - 1
            return (Entry.FREE, freed, phase, pos, start, end, goal, depth)
        return FINAL


def entries(scheme: str, steps: int, snapshots: int = 0) -> Iterator[tuple[Entry, int]]:
    """Every entry up to ``END`` (excluded), as the generated code sees them."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme '{scheme}'; expected one of {', '.join(SCHEMES)}")
    words: Words = (0,) * WORDS
    frames: list[int] = []
    while True:
        words = next_entry(scheme, snapshots, steps, words, frames)
        if words[0] == Entry.END:
            return
        yield Entry(words[0]), words[1]
