"""What an iteration of a parallel loop may touch (``rev.for parallel``).

Iterations of a parallel loop run in any order, or at once on a GPU, so none
may see another's writes.  Each iteration's footprint keeps to:

- *private* elements: an array element whose first index is the loop's
  induction variable itself (``y[i]``, ``a[i, k]``), or any element of an
  array allocated inside the body.  Such an array may be read only at private
  elements too (reading ``y[i + 1]`` would race with iteration ``i + 1``);
- *shared accumulations*: ``%v = rev.take %m[%j]``, then only ``rev.add`` /
  ``rev.sub`` with ``%v`` as their target, then ``rev.put`` back: the
  iterations' updates of one element commute (up to float rounding), and
  lower to atomic adds.  An array accumulated into this way is not otherwise
  read or written in the loop, since its elements change under the reader.

A whole array passed to a call that writes it is neither (the callee could
write any element): pass the element instead.  The same holds for a whole
array that the loop writes and a callee only reads.  Nested regions are part
of the body; callees are checked as their own functions.

The ops say what they write (``InvertibleOp.written_memrefs``), whether an
update accumulates (``ACCUMULATES``) and whether a borrow only accumulates
(``rev.TakeOp.accumulation``); this module puts that together per loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import AnyFloat, IntegerType, MemRefType
from xdsl.ir import Operation, SSAValue

from revmlir.dialects import rev
from revmlir.errors import ReversibilityViolation
from revmlir.interfaces import InvertibleOp

RULE = "parallel"


def _inside(value: SSAValue, loop: rev.ForOp) -> bool:
    """Whether ``value`` is defined in ``loop``'s body (one per iteration)."""
    owner = value.owner
    block = owner if not isinstance(owner, Operation) else owner.parent_block()
    while block is not None:
        if block is loop.body.block:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


def is_private(array: SSAValue, indices: Sequence[SSAValue], loop: rev.ForOp) -> bool:
    """Whether element ``array[indices]`` belongs to one iteration of ``loop``."""
    return _inside(array, loop) or (bool(indices) and indices[0] == loop.body.block.args[0])


def accumulated_arrays(loop: rev.ForOp) -> set[SSAValue]:
    """The arrays ``loop``'s iterations accumulate into at shared elements."""
    return {
        op.memref
        for op in loop.body.walk()
        if isinstance(op, rev.TakeOp)
        and not is_private(op.memref, op.indices, loop)
        and op.accumulation() is not None
    }


def _can_accumulate_atomically(array: SSAValue) -> bool:
    assert isinstance(array.type, MemRefType)
    element = array.type.element_type
    return isinstance(element, AnyFloat | IntegerType)


def check_parallel_loop(loop: rev.ForOp, written_by_call: Callable[[Operation], Sequence[SSAValue]]) -> None:
    """Raise the first op of ``loop``'s body that breaks the footprint rule.
    ``written_by_call(op)`` is what a call writes of its arguments."""
    shared = accumulated_arrays(loop)
    written: set[SSAValue] = set(shared)
    for op in loop.body.walk():
        if isinstance(op, rev.TakeOp):
            _check_write(op, loop, shared)
            written.add(op.memref)
        elif isinstance(op, InvertibleOp) and not isinstance(op, rev.PutOp):
            for array in written_by_call(op) if isinstance(op, rev.CallOp | rev.UncallOp) else op.written_memrefs():
                if not _inside(array, loop):
                    raise _violation(
                        op,
                        f"passes {_name(array)}, which it writes, as a whole array: another "
                        "iteration may write the same elements; pass the element instead",
                    )
    for op in loop.body.walk():
        if isinstance(op, memref.LoadOp):
            _check_read(op, op.memref, op.indices, loop, shared, written)
        elif isinstance(op, rev.CallOp | rev.UncallOp):
            for array in op.args:
                if array in written and not _inside(array, loop):
                    raise _violation(
                        op,
                        f"passes {_name(array)} as a whole array while the loop writes it: "
                        "a callee reading it would race with other iterations",
                    )


def _check_write(take: rev.TakeOp, loop: rev.ForOp, shared: set[SSAValue]) -> None:
    accumulates = take.accumulation() is not None
    if take.memref in shared:
        if not accumulates:
            raise _violation(
                take,
                f"borrows an element of {_name(take.memref)}, which iterations accumulate into: "
                "it is only accumulated into (rev.take, rev.add/rev.sub, rev.put) in the loop",
            )
        if not _can_accumulate_atomically(take.memref):
            raise _violation(
                take,
                f"accumulates into a shared element of {_name(take.memref)} of type "
                f"{take.memref.type}: shared accumulations need float or integer elements",
            )
        return
    if not is_private(take.memref, take.indices, loop):
        raise _violation(
            take,
            f"writes an element of {_name(take.memref)} whose first index is not the loop's "
            "index: another iteration may write it too; only accumulations "
            "(rev.take, rev.add/rev.sub, rev.put) may share an element",
        )


def _check_read(
    op: Operation,
    array: SSAValue,
    indices: Sequence[SSAValue],
    loop: rev.ForOp,
    shared: set[SSAValue],
    written: set[SSAValue],
) -> None:
    if array in shared:
        raise _violation(
            op,
            f"reads {_name(array)}, which iterations accumulate into: its elements change "
            "while the loop runs",
        )
    if array in written and not is_private(array, indices, loop):
        raise _violation(
            op,
            f"reads an element of {_name(array)}, which the loop writes, at an index other "
            "than the loop's: another iteration may be writing it",
        )


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "an array"


def _violation(op: Operation, message: str) -> ReversibilityViolation:
    return ReversibilityViolation(RULE, op, f"'{op.name}' in a parallel loop {message}")
