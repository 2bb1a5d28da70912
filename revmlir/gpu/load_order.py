"""Loads first: an iteration of a kernel's loop issues its loads before its
math.

The adjoint of ``y[i] += log(x[i])·sin(x[i])`` reads ``g_x[i]`` where it
adds to it, after the logarithm, sine and cosine; LLVM keeps a load where
the IR has it (the back end's machine sinking is off, decision 46), so
each iteration waited for memory twice: for ``y``, ``x`` and ``g_y``, then,
after the math, for ``g_x``.  Moving every load of the loop's body up, past
the pure ops before it, makes the loads of an iteration leave together.  A
load does not pass what it depends on: the ops computing its index, an
earlier load (program order is kept among loads), a check (a ``CheckOp``,
which declares a write, or its std form's ``scf.if``, a region: either may
report a failure, and an index is only loaded once it is known in range),
a call, or a store, except a store into one of the thread's own
``memref.alloca`` s when the load reads a kernel argument, which that
memory cannot be (the element a failing check reports is such a store).
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Block, BlockArgument, Operation
from xdsl.traits import is_side_effect_free


def _passable(op: Operation, load: memref.LoadOp, arguments: Block) -> bool:
    """Whether ``load`` may move above ``op``."""
    if any(result in load.operands for result in op.results):
        return False
    if isinstance(op, memref.StoreOp):
        reads_argument = isinstance(load.memref, BlockArgument) and load.memref.owner is arguments
        return reads_argument and isinstance(op.memref.owner, memref.AllocaOp)
    return not op.regions and not isinstance(op, memref.LoadOp) and is_side_effect_free(op)


def loads_first(body: Block, arguments: Block) -> None:
    """Move each ``memref.load`` of ``body`` up past the ops before it that
    it may pass (``arguments``: the kernel's entry block, whose arguments
    are its arrays)."""
    for load in [op for op in body.ops if isinstance(op, memref.LoadOp)]:
        anchor: Operation = load
        while (previous := anchor.prev_op) is not None and _passable(previous, load, arguments):
            anchor = previous
        if anchor is not load:
            load.detach()
            body.insert_op_before(load, anchor)
