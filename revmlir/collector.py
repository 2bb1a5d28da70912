"""Python's cyclic garbage collector paused while revmlir compiles.

A compile builds and drops hundreds of thousands of xDSL objects (ops,
their results and uses, attributes), and IR is cyclic: an op and its block
point at each other.  Every allocation counts toward the collector's
thresholds, so compiling BA's GPU kernel ran about a thousand young
collections and several full ones, each traversing the objects still alive
(the IR being compiled, and everything the process has imported) only to
find that they survive: 1.2 s of the compile's 5.4 s of CPU time.  While a
compile runs the collector is off; what the compile drops and does not
take apart (below) waits for the first collection after it, so the peak
memory of a compile stays where it was (BA's kernel: 219 MB instead of
214 MB).

The switch is process-wide: objects other threads allocate meanwhile are
not collected until the last compile in progress ends.  A program that
turned the collector off itself keeps it off.

What a compile drops whole (a lowered module once the next stage has made
its own form of it, the functions a translation replaced, llvmlite's IR
once it is printed) is taken apart where it is dropped (``take_apart``,
``take_apart_llvm_ir``), so that reference counting frees it there rather
than the collection after the compile: a young collection goes through its
whole generation, garbage and survivors alike, several times over, at a
cache miss an object.  BA's kernel left it 142,000 objects (0.10-0.15 s
of CPU) and leaves it 39,000 (0.01-0.03 s); taking the trees apart costs
0.02 s.  Only a tree that is the compile's own is taken apart: a caller
may hold what a public pass replaces, as it may what xDSL's rewriters
erase.

With ``REVMLIR_CHECK_TAKEN_APART`` set (any non-empty value, read at
import) ``take_apart`` first checks that its tree is in no block, uses no
value (and branches to no block) from outside it and has no value used
outside it, and raises an ``AssertionError`` naming the op that does:
taking such a tree apart would clear uses on the outside value's list, and
the IR left would fail far from here, or leave the outside user holding
the tree's values in a cycle for the collector.  The check walks the tree once more, so it is for tests and
debugging.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from xdsl.ir import Operation

from revmlir.errors import describe_op, describe_value

if TYPE_CHECKING:
    from llvmlite import ir

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_depth = 0
"""How many compiles (of any thread, nested or not) are in progress."""
_paused = False
"""Whether the outermost of them turned the collector off (it was on)."""

_CHECK = bool(os.environ.get("REVMLIR_CHECK_TAKEN_APART"))
"""Whether ``take_apart`` checks that its tree is dropped whole first."""


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


def take_apart(op: Operation) -> None:
    """Break every reference cycle of ``op`` and the IR nested in it, which
    no one may use again: a tree the compile has dropped that uses no value
    from outside it (a module, a function), so that it is freed as the last
    reference to it goes.  An xDSL op is in cycles with its results, its
    block, its neighbours and the uses of its operands (a value's uses are a
    doubly linked list); clearing the fields of each op, use, block and
    region breaks them all, without the collector."""
    if _CHECK:
        check_dropped_whole(op)
    _take_apart(op)


def check_dropped_whole(op: Operation) -> None:
    """An ``AssertionError`` unless ``op`` is in no block, no op of its tree
    uses a value or branches to a block from outside it, and no op outside
    it uses a value of it: the precondition of ``take_apart``, which would
    otherwise unlink the uses from the outside value's list and leave the IR
    around it broken, or leave an outside user holding the tree's values in
    a cycle only the collector frees (an op left behind in a block no one
    reaches)."""
    if op.parent is not None:
        raise AssertionError(f"take_apart: {describe_op(op)} is still in a block")
    ops = list(op.walk())
    blocks = [block for nested in ops for region in nested.regions for block in region.blocks]
    inside = {id(nested) for nested in ops}
    defined = [
        *(result for nested in ops for result in nested.results),
        *(arg for block in blocks for arg in block.args),
    ]
    for value in defined:
        for use in value.uses:
            if id(use.operation) not in inside:
                raise AssertionError(
                    f"take_apart: {describe_op(use.operation)} outside the tree of {describe_op(op)} uses "
                    f"{describe_value(value)} from inside it"
                )
    inside.update(id(block) for block in blocks)
    for nested in ops:
        for value in nested.operands:
            if id(value.owner) not in inside:
                raise AssertionError(
                    f"take_apart: {describe_op(nested)} in the tree of {describe_op(op)} uses "
                    f"{describe_value(value)} from outside it"
                )
        for successor in nested.successors:
            if id(successor) not in inside:
                raise AssertionError(
                    f"take_apart: {describe_op(nested)} in the tree of {describe_op(op)} branches to a block outside it"
                )


def _take_apart(op: Operation) -> None:
    for region in op.regions:
        block = region.first_block
        while block is not None:
            inner = block.first_op
            while inner is not None:
                following = inner.next_op
                _take_apart(inner)
                inner = following
            following_block = block.next_block
            block.__dict__.clear()
            block = following_block
        region.__dict__.clear()
    for use in (*op._operand_uses, *op._successor_uses):
        use.__dict__.clear()
    op.__dict__.clear()


def take_apart_llvm_ir(module: ir.Module) -> None:
    """``take_apart`` for an llvmlite module no one uses again (once it is
    printed): the module points at its functions and metadata, and they
    back at it."""
    for function in module.functions:
        take_apart_llvm_function(function)
    module.__dict__.clear()


def take_apart_llvm_function(function: ir.Function) -> None:
    """``take_apart`` for an llvmlite function no one uses again: its
    blocks and arguments point back at it."""
    take_apart_llvm_blocks(function.blocks)
    function.__dict__.clear()


def take_apart_llvm_blocks(blocks: Iterable[ir.Block]) -> None:
    """``take_apart`` for llvmlite blocks no one uses again (a function's
    body replaced): their instructions point at their block, and a loop's
    instructions at each other (a phi and the value it carries)."""
    for block in blocks:
        for instruction in block.instructions:
            instruction.__dict__.clear()
        block.__dict__.clear()
