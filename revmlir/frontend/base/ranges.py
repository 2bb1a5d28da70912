"""``range(a, b, s)`` of a step known only when the function runs, of
either sign, as Python's (docs/design.md, decision 153): a loop of ``k``
over ``len(range(a, b, s))`` with step 1, visiting ``a + k·s``.

Reversible and ordinary code count it alike; each refuses a zero step
with an assertion of its own kind at the ``range`` call (reversible code's
runs both ways, ordinary code's forwards), in Python's words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from revmlir.builder import ExpressionBuilder, Loc, Operand, Value

ZERO_STEP = "range() step must not be zero"
"""Python's ``ValueError`` of ``range(a, b, 0)``: at decoration for a
constant step, where the run reaches the loop for a run-time one."""

PRANGE_STEP = "rv.prange() step must be positive where it is known only at run time (a constant one may be negative)"
"""The refusal of ``rv.prange(a, b, s)`` whose ``s`` is zero or negative
when the run reaches the loop: a parallel loop keeps its step, which a
kernel's launch reads, so only a constant negative step is rewritten into a
count, as ``range``'s is."""


class RunTimeRange(NamedTuple):
    """A loop of step 1 standing for ``range(a, b, s)``."""

    length: Value
    """``len(range(a, b, s))``, an ``index``; 0 where ``s`` is 0."""
    nonzero: Value
    """Whether ``s`` is not 0: what the caller's assertion holds."""
    position: Callable[[Value], Value]
    """The index ``a + k·s`` the ``k``-th iteration visits."""


def run_time_range(fn: ExpressionBuilder, start: Operand, stop: Operand, step: Operand, loc: Loc) -> RunTimeRange:
    """The loop of ``range(start, stop, step)``: its count taken as a
    constant negative step's is (decision 115), from the far bound to the
    near one by ``|step|``, both read unsigned, so no bound or index wraps,
    at the ends of ``int64`` too.  The count is 0 where ``step`` is, so an
    inverse, which reaches a reversible function's assertion after the
    loop, divides by nothing."""
    first, stop, stride = (fn.index(v, loc) for v in (start, stop, step))
    nonzero = fn.compare("ne", stride, 0, loc)
    up = fn.compare("gt", stride, 0, loc)
    far, near = fn.select(up, stop, first, loc), fn.select(up, first, stop, loc)
    size = fn.select(nonzero, fn.select(up, stride, fn.binary("sub", 0, stride, loc), loc), 1, loc)
    count = fn.select(nonzero, fn.descending_count(far, near, size, loc), 0, loc)

    def position(k: Value) -> Value:
        return fn.binary("add", first, fn.binary("mul", k, stride, loc), loc)

    return RunTimeRange(count, nonzero, position)
