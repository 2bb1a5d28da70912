"""The gradients a parallel loop's adjoint would carry, as shared sums.

An adjoint loop carries the gradients of the outer scalars its body reads
(``captured_gradients``): ``y[i] += a * x[i]`` gives ``ḡa += ḡy[i] * x[i]``
in every iteration.  A parallel loop carries no state, so each such gradient
becomes a one-element ancilla array that the iterations accumulate into
(a shared accumulation, an atomic add on a GPU)::

    %buf = anc.array_alloc() : memref<1xf64>
    %e = rev.take %buf[%c0]           // 0
    %s, %z = rev.swap %e, %g_a        // the array holds ḡa, %z is 0
    rev.put %s, %buf[%c0]
    rev.for parallel ... {            // rev.take %buf[%c0]; rev.add ...; rev.put
    }
    %e1 = rev.take %buf[%c0]          // ḡa + Σ contributions
    %zero, %g_a1 = rev.swap %e1, %z   // the array holds 0 again, exactly
    rev.put %zero, %buf[%c0]
    anc.array_free %buf() : memref<1xf64>

Swapping in and out keeps the adjoint reversible: no sum is ever subtracted
back out, and the array is freed holding an exact zero.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerAttr, IntegerType, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from revmlir.dialects import anc, rev
from revmlir.parallel import can_accumulate_atomically, is_private


def unshareable_gradients(loop: rev.ForOp) -> list[int]:
    """The positions of the gradients ``loop`` carries whose updates are not
    a chain of ``rev.add``/``rev.sub`` in the body's own block (one that
    passes through a region op inside the body): no shared sum can take
    them."""
    block = loop.body.block
    found: list[int] = []
    terminator = block.last_op
    assert terminator is not None
    for position, (argument, output) in enumerate(zip(block.args[1:], terminator.operands, strict=True)):
        current: SSAValue = argument
        while current is not output:
            uses = list(current.uses)
            user = uses[0].operation if len(uses) == 1 else None
            if (
                not (isinstance(user, rev._UpdateOp) and user.ACCUMULATES and uses[0].index == 0)
                or user.parent_block() is not block
            ):
                found.append(position)
                break
            current = user.result
    return found


def unsummable_gradients(loop: rev.ForOp) -> list[int]:
    """The positions of the gradients ``loop`` carries that no shared sum
    can hold: its one-element array is an ancilla array, which holds floats
    or integers (a complex number's gradient is neither)."""
    return [k for k, gradient in enumerate(loop.state) if not isinstance(gradient.type, AnyFloat | IntegerType)]


def unsummable_accumulations(loop: rev.ForOp) -> list[rev.TakeOp]:
    """The shared accumulations of ``loop`` (an adjoint's parallel loop)
    that no atomic addition makes: those into an array of complex
    elements, the gradient of a complex array read at an element that
    iterations share."""
    return [
        op
        for op in loop.body.walk()
        if isinstance(op, rev.TakeOp)
        and not is_private(op.memref, op.indices, loop)
        and op.accumulation() is not None
        and not can_accumulate_atomically(op.memref)
    ]


def share_carried_gradients(loop: rev.ForOp) -> list[SSAValue]:
    """Replace ``loop`` (a parallel adjoint loop carrying gradients, none of
    them ``unshareable_gradients``) by a parallel loop without state that
    accumulates them into one-element arrays; return the values that stand
    for ``loop``'s results."""
    block = loop.body.block
    terminator = block.last_op
    assert isinstance(terminator, rev.YieldOp)
    outputs = list(terminator.operands)
    before: list[Operation] = []
    zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
    before.append(zero)
    index = zero.result
    buffers: list[SSAValue] = []
    zeros: list[SSAValue] = []
    for gradient in loop.state:
        buffer = anc.ArrayAllocOp(MemRefType(gradient.type, [1]), [])
        buffer.results[0].name_hint = f"{gradient.name_hint}_sum" if gradient.name_hint else None
        empty = rev.TakeOp(buffer.results[0], [index])
        swap = rev.SwapOp(empty.result, gradient)
        before += [buffer, empty, swap, rev.PutOp(swap.new_lhs, buffer.results[0], [index])]
        buffers.append(buffer.results[0])
        zeros.append(swap.new_rhs)
    Rewriter.erase_op(terminator)
    for argument, output, buffer in zip(block.args[1:], outputs, buffers, strict=True):
        if output is argument:
            continue  # the body adds nothing to this gradient
        take, put = rev.TakeOp(buffer, [index]), rev.PutOp(output, buffer, [index])
        take.location = put.location = loop.location
        block.insert_op_before(take, block.first_op) if block.first_op else block.add_op(take)
        argument.replace_all_uses_with(take.result)
        block.add_op(put)
    block.add_op(rev.YieldOp())
    block.last_op.location = terminator.location
    for argument in reversed(block.args[1:]):
        block.erase_arg(argument)
    region = loop.detach_region(loop.body)
    parallel = rev.ForOp(loop.lb, loop.ub, loop.step, [], region, loop.is_reverse, parallel=True)
    after: list[Operation] = [parallel]
    results: list[SSAValue] = []
    for buffer, held in zip(buffers, zeros, strict=True):
        total = rev.TakeOp(buffer, [index])
        swap = rev.SwapOp(total.result, held)
        after += [total, swap, rev.PutOp(swap.new_lhs, buffer, [index]), anc.ArrayFreeOp(buffer, [])]
        results.append(swap.new_rhs)
    for op in (*before, *after):
        op.location = loop.location
    Rewriter.insert_op([*before, *after], InsertPoint.before(loop))
    parallel.attributes.update(loop.attributes)
    Rewriter.erase_op(loop)
    return results
