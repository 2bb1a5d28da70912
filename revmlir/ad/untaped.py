"""Untaped copies of tape-mode functions, for steps whose tape is forgotten.

A checkpointed gradient runs most of its steps *plain*: only the state
after the step matters, since the step is rerun taped from a snapshot
before it is reversed.  Running the taped step and freeing its tapes
unchecked gives that state, but pays for every push (in time-stepping code,
one per overwritten element: the bulk of a step's cost beyond its
arithmetic).  ``untaped_copy`` makes ``@f.plain``, and ``@g.plain`` for
every function ``f`` calls, in which each ``anc.push`` forgets its value
instead (an unchecked, forgetful ``anc.free``) and each ``anc.copy_push``
is gone: the same state updates in the same order, so the state after a
plain step is bitwise that of the taped step, and the tapes stay empty.

Functions that also pop or uncall (which read what a push left), or push
values of other types than integers and floats (whose zero, the known value
of the forgetful free, is not an ``arith.constant``), are not copied: their
step stays taped.  Stacks that are state rather than tapes, the frame
stacks of a resumable function with recursion, keep their pushes and pops.
"""

from __future__ import annotations

from collections.abc import Collection

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    FlatSymbolRefAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import SymbolTable

from revmlir.dialects import anc, rev
from revmlir.errors import CheckpointError, describe_op
from revmlir.naming import FORGETFUL_ATTR

PLAIN_SUFFIX = ".plain"

_READS_TAPE = (anc.PopOp, anc.CopyPopOp, rev.UncallOp)


def _on_state(op: Operation, state: Collection[SSAValue]) -> bool:
    """Whether ``op`` pushes on or pops from a stack that is state."""
    return isinstance(op, anc.PushOp | anc.PopOp | anc.CopyPushOp) and op.operands[0] in state


def _callees(module: ModuleOp, root: rev.FuncOp, state: Collection[SSAValue]) -> list[rev.FuncOp] | None:
    """``root`` and every ``rev.func`` it calls, transitively; None where one
    reads a tape back (pops from ``state``, stacks of ``root`` that are
    not tapes, are not tape reads)."""
    found: dict[str, rev.FuncOp] = {root.sym_name.data: root}
    pending = [root]
    while pending:
        for op in pending.pop().walk():
            if _on_state(op, state):
                continue
            if isinstance(op, _READS_TAPE) or (isinstance(op, anc.PushOp) and _zero(op.value.type) is None):
                return None
            if not isinstance(op, rev.CallOp):
                continue
            name = op.callee.string_value()
            callee = SymbolTable.lookup_symbol(module, name)
            if isinstance(callee, rev.FuncOp) and name not in found:
                found[name] = callee
                pending.append(callee)
    return list(found.values())


def _zero(type: Attribute) -> arith.ConstantOp | None:
    if isinstance(type, AnyFloat):
        return arith.ConstantOp(FloatAttr(0.0, type))
    if isinstance(type, IntegerType | IndexType):
        return arith.ConstantOp(IntegerAttr(0, type))
    return None


def _forget_pushes(function: rev.FuncOp, state: Collection[SSAValue]) -> None:
    for op in list(function.walk()):
        if _on_state(op, state):
            continue
        if isinstance(op, anc.PushOp):
            zero = _zero(op.value.type)
            assert zero is not None
            forget = anc.FreeOp(op.value, zero.result)
            forget.attributes[anc.FreeOp.CHECK_ATTR] = UnitAttr()
            forget.attributes[FORGETFUL_ATTR] = UnitAttr()
            for new in (zero, forget):
                new.location = op.location
                op.parent_block().insert_op_before(new, op)
            op.detach()
            op.erase()
        elif isinstance(op, anc.CopyPushOp):
            op.detach()
            op.erase()


def _state_stacks(function: rev.FuncOp, state: Collection[int]) -> list[SSAValue]:
    """The stacks of ``function`` that are state, not tapes: its arguments
    at positions ``state`` and the stacks it allocates (a resumable
    function's frame stacks, pushed and popped within it)."""
    local = [op.result for op in function.walk() if isinstance(op, anc.StackAllocOp)]
    return [function.body.block.args[i] for i in state] + local


def untaped_copy(module: ModuleOp, name: str, state: Collection[int] = ()) -> str | None:
    """Add ``@name.plain`` (and the copies of its callees) to ``module``;
    its name, or None where ``@name`` or a callee reads a tape back.  The
    stack arguments of ``@name`` at positions ``state`` and the stacks a
    function allocates are state, not tapes (a resumable function's frame
    stacks): their pushes and pops stay."""
    root = SymbolTable.lookup_symbol(module, name)
    assert isinstance(root, rev.FuncOp)
    functions = _callees(module, root, _state_stacks(root, state))
    if functions is None:
        return None
    copied = {f.sym_name.data for f in functions}
    for function in functions:
        target = function.sym_name.data + PLAIN_SUFFIX
        if isinstance(taken := SymbolTable.lookup_symbol(module, target), rev.FuncOp):
            continue  # made for another step: copies are shared
        if taken is not None:
            raise CheckpointError(
                f"{describe_op(taken)}: @{target} is the name of the untaped copy of @{function.sym_name.data}, "
                "which this run builds; rename this function"
            )
        copy = function.clone()
        copy.sym_name = StringAttr(target)
        for op in copy.walk():
            if isinstance(op, rev.CallOp) and (callee := op.callee.string_value()) in copied:
                op.callee = FlatSymbolRefAttr(callee + PLAIN_SUFFIX)
        _forget_pushes(copy, _state_stacks(copy, state if function is root else ()))
        module.body.block.insert_op_after(copy, function)
    return name + PLAIN_SUFFIX
