"""The errors both engines raise where a program would leave defined
behaviour: an index outside its array, an integer division or remainder by
zero, a shift by at least the width, an array of negative size, a loop's
step that is not positive.

They are ``ExecutionError``s and, unlike reversibility checks, not
switchable by ``nocheck``: the interpreter raises them from the op's
semantics, native code from checks that ``rev-lower-to-std`` inserts before
the op, with the same messages, which are kept here so that the two cannot
drift apart.  A message is a ``str.format`` template over the values the
check saw.
"""

from __future__ import annotations

import functools
import os
import warnings

DIVISION_BY_ZERO = "integer division by zero"
REMAINDER_BY_ZERO = "integer remainder by zero"
NEGATIVE_SIZE = "array size {0} is negative"
NEGATIVE_POWER = (
    "the integer {0} to the power {1}: an integer to a negative power is no integer "
    "(Python's is a float: float(n) ** k)"
)
"""``math.ipowi`` with a negative exponent, over the base and the
exponent: Python's ``n ** k`` is then a float, which an integer result
cannot be (upstream MLIR truncates it to 0 but for a base of ±1, a number
Python never gives)."""
STEP_NOT_POSITIVE = "step must be positive"
NONPOSITIVE_STEP = STEP_NOT_POSITIVE + ", got {0}"
"""A loop (``rev.for``, ``scf.for``, ``scf.parallel``) reached with a step
that is not positive: MLIR requires a positive step and gives the loop no
meaning otherwise (the interpreter's ``range`` ran no iteration or failed,
native code ran one iteration or never ended).  ``STEP_NOT_POSITIVE`` is
its form without the step, for an assertion in ordinary code
(``cf.assert``, whose message is a literal)."""
MAX_ALLOCATION = 1 << 40
"""The most bytes one array allocation may take (1 TiB): anything larger is
refused before ``malloc`` sees it, which also keeps the size's product of
extents from overflowing."""
CANNOT_ALLOCATE = "cannot allocate {0} bytes: out of memory"
"""An array allocation within ``MAX_ALLOCATION`` that the memory left
cannot hold, over its bytes: ``malloc`` gave no memory (native code,
``rev-host-safety``), numpy raised ``MemoryError`` (the interpreter)."""


def out_of_bounds(axis: int) -> str:
    """An index outside ``axis``, over the index and the axis's size
    (numpy's wording)."""
    return f"index {{0}} is out of bounds for axis {axis} with size {{1}}"


def shift_out_of_range(width: int) -> str:
    """A shift count outside ``[0, width)``, over the count: LLVM's shifts
    give poison there, so both engines refuse it."""
    return f"shift count {{0}} is out of range for i{width}"


def too_large(itemsize: int) -> str:
    """An array over ``MAX_ALLOCATION`` bytes, over its number of elements,
    counted as a float (a product of sizes that cannot overflow)."""
    return f"array of {{0}} elements of {itemsize} bytes is too large"


MAX_STACK_ALLOCATION = 512 * 1024
"""The most bytes one ``memref.alloca`` may take, on both engines: CUDA's
local memory per thread (``revmlir.gpu.local_memory``), which no frame
of normal IR meets; native code also checks that the thread's stack has
room for it (``STACK_EXHAUSTED``)."""
STACK_EXHAUSTED = "a stack allocation of {0} bytes would exhaust the stack"
"""A ``memref.alloca`` within ``MAX_STACK_ALLOCATION`` that the thread's
stack has no room for below the stack pointer (native code only, as a
recursion's depth is: the interpreter has no stack to run out of)."""


def too_large_for_the_stack(itemsize: int) -> str:
    """A ``memref.alloca`` over ``MAX_STACK_ALLOCATION`` bytes, over its
    number of elements, counted as a float: native code would move the
    stack pointer past a thread's stack, where the interpreter's array is
    on the heap."""
    return (
        f"array of {{0}} elements of {itemsize} bytes is too large for a stack allocation "
        f"(at most {MAX_STACK_ALLOCATION} bytes): allocate it with memref.alloc"
    )


def fixed_overflow(type: str) -> str:
    """A fixed-point sum, difference or product outside its type: checked
    rather than wrapped, so no result is a number the program did not mean."""
    return f"fixed-point overflow: the result is out of range for {type}"


def not_fixed(type: str) -> str:
    """A real with no fixed-point number of ``type`` near it (too large, or
    not finite), over the real."""
    return f"{{0}} has no fixed-point number in {type}"


NOT_TROPICAL = "{0} is no tropical number: only finite reals have a tropical inverse (-inf is the tropical zero)"
"""A tropical number made from a real that is not finite, over the real."""
NOT_LOG = "{0} is no log number: a log number is the logarithm of a positive, finite real"
"""A log number made from a real that is not positive or not finite, over
the real: its logarithm would be NaN or infinite, and ``ly *= l`` then
``ly /= l`` would leave NaN where ``ly`` was."""
RECURSION_TOO_DEEP = "calls nest too deeply: the recursion would exhaust the stack"
"""A call that would leave too little stack, or nest deeper than
``MAX_CALL_DEPTH``: native code checks the stack pointer and the depth
before a call that may recurse (``revmlir.lowering.host_safety``), the
interpreter the depth (``revmlir.interpreter.rev``) and where Python's
frames run out, a resumable function beyond ``MAX_FRAME_DEPTH`` frames."""
MAX_CALL_DEPTH = 10_000
"""The most calls that may recurse (caller and callee in one cycle of the
call graph, ``revmlir.call_graph``) a run nests, on both engines: the
interpreter's Python frames hold that many (``revmlir.interpreter.recursion``),
and native code, whose stack holds more, stops at the same call, so that
a recursion without end stops at the same depth, in the same function,
on both."""
MAX_FRAME_DEPTH = 1 << 20
"""The most frames a resumable function's frame stacks hold
(``revmlir.reversibilize.resumable``): a call within a recursive cycle
deeper than that stops the run with ``RECURSION_TOO_DEEP`` at the call, so
a recursion without end does not grow its frames until memory runs out."""
EMPTY_STACK = "pop from an empty stack"
"""A pop of an empty stack: ``anc.pop`` and ``anc.copy_pop``, and ``ad.next``
taking a frame from empty frames (hand-written cursor words can ask that)."""
STACK_NOT_GROWN = "cannot grow a stack of {0} elements: out of memory"
"""A push whose ``realloc`` failed, or whose buffer would pass
``stack_limit()`` bytes (which also keeps its size from overflowing)."""
STACK_LIMIT_ENV = "REVMLIR_STACK_MAX_MB"
"""Megabytes one stack's buffer may take, where the default
(``stack_limit``) does not fit."""


def stack_limit() -> int:
    """The most bytes one stack's buffer may take: ``REVMLIR_STACK_MAX_MB``
    megabytes, else a quarter of the physical memory, at most
    ``MAX_ALLOCATION``.  Where memory is overcommitted ``realloc`` never
    fails, so a push without end (a gradient's tape of a loop that never
    ends) grew until the kernel killed the process, and others with it; a
    quarter leaves room for the copy ``realloc`` makes of the largest
    buffer.  Native code takes it when a module is compiled, the
    interpreter when it is made."""
    return _stack_limit(os.environ.get(STACK_LIMIT_ENV))


@functools.cache
def _stack_limit(text: str | None) -> int:
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    if text is None:
        return min(physical, MAX_ALLOCATION)
    try:
        megabytes = float(text)
        if not 0 < megabytes < float("inf"):
            raise ValueError
    except ValueError:
        warnings.warn(
            f"{STACK_LIMIT_ENV}={text!r} is not a positive number of megabytes; using a quarter of the memory",
            RuntimeWarning,
            stacklevel=3,
        )
        return min(physical, MAX_ALLOCATION)
    return min(int(megabytes * 1024 * 1024), MAX_ALLOCATION)


def is_out_of_bounds(message: str) -> bool:
    """Whether ``message`` is ``out_of_bounds``'s for some axis."""
    axis = message.removeprefix("index {0} is out of bounds for axis ").split(" ", 1)[0]
    return axis.isdigit() and message == out_of_bounds(int(axis))
