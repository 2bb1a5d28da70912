"""What ``reversibilize`` must know about ordinary code before translating it:
whether it can be translated at all, which value types may have to be saved,
and which loads can stay recomputable expressions.  Which array arguments
each function writes is ``revmlir.semantics.written_arguments``, the one
analysis of written arrays, which native code's ``noalias`` rests on too."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.dialects import cf, func, memref, scf
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType, MemRefType
from xdsl.ir import Attribute, Operation, SSAValue, Use
from xdsl.utils.exceptions import PassFailedException

from revmlir.dialects import anc
from revmlir.dialects.primitives import ApplyOp, InvokeOp
from revmlir.errors import describe_op
from revmlir.semantics import PURE_DIALECTS


class ReversibilizeError(PassFailedException):
    """A construct ``reversibilize`` does not translate, reported at its op."""


def unsupported(op: Operation, why: str) -> ReversibilizeError:
    return ReversibilizeError(f"{describe_op(op)} cannot be reversibilized: {why}")


def is_scalar(type: Attribute) -> bool:
    """The value types ordinary code may compute with (complex numbers and
    log numbers have no ordinary counterpart to translate from yet)."""
    return isinstance(type, AnyFloat | IntegerType | IndexType)


def is_array(type: Attribute) -> bool:
    return isinstance(type, MemRefType) and is_scalar(type.element_type)


def computes(op: Operation) -> bool:
    """Pure computations, which the reversible code recomputes wherever it
    reads them: arithmetic and calls of pure primitives (``rev.apply``,
    which the translation keeps as reversible code calls them)."""
    return op.dialect_name() in PURE_DIALECTS or isinstance(op, ApplyOp)


def is_expression(op: Operation) -> bool:
    """Ops translated into the same op: pure computations and memory reads."""
    return computes(op) or isinstance(op, memref.LoadOp | memref.DimOp)


_STRUCTURE = (scf.ForOp, scf.IfOp, scf.WhileOp, scf.YieldOp, scf.ConditionOp)
_MEMORY = (memref.StoreOp,)
_CALLS = (func.CallOp, func.ReturnOp)
FRAME_OPS = (anc.StackAllocOp, anc.StackFreeOp, anc.CopyPushOp, anc.PopOp)
"""The ops of frame stacks: the call stack ``make-resumable`` gives a
function with recursion (``revmlir.reversibilize.frames``), local stacks of
scalars that a push copies onto and a pop takes from.  ``reversibilize``
translates them, as its input is ``make-resumable``'s output;
``make-resumable`` refuses them in its own input, whose only call stack is
the calls it lays out: a stack is state no slot of its machine can hold."""

CHECKS = (cf.AssertOp,)
"""Checks of the run, which stop it where their condition is false: the
user's (``range()``'s zero step in ordinary code) and the depth check
``make-resumable`` puts at a call of a recursion.  One kind of op to both
passes: a check reads an ``i1`` and changes no state, so ``make-resumable``
carries it into a segment as it is, at any depth of the machine, and
``reversibilize`` keeps it as a check that runs forwards only."""


def _is_frame_stack(value: SSAValue) -> bool:
    return isinstance(value.type, anc.StackType) and is_scalar(value.type.element_type)


def check_function(function: func.FuncOp, module_functions: dict[str, func.FuncOp], frames: bool = True) -> None:
    """Reject, at the offending op, what the translation does not handle,
    and with ``frames`` false the frame ops (``make-resumable``'s input)."""
    if len(function.body.blocks) != 1:
        raise unsupported(function, "its body has several blocks; only structured control flow (scf) is supported")
    for index, type in enumerate(function.function_type.inputs.data):
        if not (is_scalar(type) or is_array(type)):
            raise unsupported(
                function,
                f"argument #{index} has type {type}; only integers, floats, indices and memrefs of them are supported",
            )
    for type in function.function_type.outputs.data:
        if not is_scalar(type):
            raise unsupported(function, f"it returns {type}; only scalars can be returned")
    arguments = set(function.body.block.args)
    for op in function.body.walk():
        if isinstance(op, memref.AllocOp | memref.AllocaOp | memref.DeallocOp):
            raise unsupported(op, "local arrays are not supported; pass the array as an argument")
        if isinstance(op, InvokeOp):
            raise unsupported(
                op,
                f"@{op.callee.string_value()} updates arrays; ordinary code calls only primitives "
                "that return a value, and @rv.reversible functions the others",
            )
        if not frames and isinstance(op, FRAME_OPS):
            raise ReversibilizeError(
                f"{describe_op(op)} cannot be made resumable: frame stacks are what make-resumable writes "
                "for the calls of a recursion, and the ordinary code it lays out has none "
                "(write the recursion as calls)"
            )
        if not (is_expression(op) or isinstance(op, _STRUCTURE + _MEMORY + _CALLS + FRAME_OPS + CHECKS)):
            raise unsupported(
                op,
                "only func, scf (for, if, while), arith, math, memref.load/store/dim, "
                "cf.assert and calls of pure primitives (rev.apply) are supported",
            )
        for value in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
            if not is_scalar(value.type) and not (isinstance(op, anc.StackAllocOp) and _is_frame_stack(value)):
                raise unsupported(
                    op, f"it produces a value of type {value.type}; only scalars can be computed and carried"
                )
        for operand in op.operands:
            if isinstance(operand.type, MemRefType) and operand not in arguments:
                raise unsupported(op, "arrays must be arguments of the function")
            if isinstance(op, ApplyOp) and isinstance(operand.type, MemRefType) and _touches_array(function, operand):
                raise unsupported(
                    op,
                    f"@{op.callee.string_value()} reads an array the function writes; "
                    "a primitive may only read arrays the function does not change",
                )
        if isinstance(op, func.CallOp):
            callee = module_functions.get(op.callee.string_value())
            if callee is None or callee.is_declaration:
                raise unsupported(op, f"@{op.callee.string_value()} is not a function defined in the module")
        if isinstance(op, scf.WhileOp):
            _check_while(op)


def _check_while(op: scf.WhileOp) -> None:
    before = op.before_region.block
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    if any(not is_expression(o) for o in before.ops if o is not condition):
        raise unsupported(op, "its condition region may only compute expressions")
    if tuple(condition.args) != tuple(before.args):
        raise unsupported(op, "its condition must forward the loop-carried values unchanged")


def saved_types(functions: Sequence[func.FuncOp]) -> list[Attribute]:
    """The types of every value the translation may push on a tape: values
    carried or produced by control flow and calls, loads, stored elements and
    ``scf.while`` iteration counters.  Deterministic order, so signatures are
    stable."""
    types: dict[str, Attribute] = {}
    for function in functions:
        for op in function.body.walk():
            if isinstance(op, scf.ForOp | scf.IfOp | scf.WhileOp | func.CallOp | memref.LoadOp | anc.PopOp):
                types.update((str(r.type), r.type) for r in op.results)
            if isinstance(op, memref.StoreOp):
                types[str(op.value.type)] = op.value.type
            if isinstance(op, scf.WhileOp):
                types[str(IndexType())] = IndexType()
    return [types[k] for k in sorted(types)]


def _consuming_uses(value: SSAValue) -> Iterator[Use]:
    """Uses of ``value`` by ops that are not pure computations, following
    them transitively (its results are recomputed wherever they are
    used, so they read ``value`` there)."""
    for use in value.uses:
        if computes(use.operation):
            for result in use.operation.results:
                yield from _consuming_uses(result)
        else:
            yield use


def _touches_array(op: Operation, array: SSAValue) -> bool:
    """Whether ``op`` (or an op inside it) may write ``array``.  A call counts
    as a write of every array it receives, as for the reversibility
    verifier's ``memory-read`` rule."""
    return any(
        isinstance(o, memref.StoreOp | func.CallOp)
        and array in ((o.memref,) if isinstance(o, memref.StoreOp) else tuple(o.operands))
        for o in op.walk()
    )


@dataclass(frozen=True)
class _Anchor:
    op: Operation
    value_only: bool
    """Every use reaching ``op`` is its stored value (a store reads it before
    it writes)."""


def load_is_stable(load: memref.LoadOp) -> bool:
    """Whether the loaded element cannot change before any use of the load:
    then the load stays an expression the reversible code recomputes;
    otherwise its value is copied into an ancilla where it is loaded."""
    block = load.parent_block()
    assert block is not None
    anchors: dict[Operation, _Anchor] = {}
    for use in _consuming_uses(load.res):
        op = block.find_ancestor_op_in_block(use.operation)
        assert op is not None
        value_only = isinstance(op, memref.StoreOp) and use.operation is op and use.index == 0
        previous = anchors.get(op)
        anchors[op] = _Anchor(op, value_only and (previous is None or previous.value_only))
    written = False
    remaining = len(anchors)
    op = load.next_op
    while op is not None and remaining:
        anchor = anchors.get(op)
        touches = _touches_array(op, load.memref)
        if anchor is not None:
            remaining -= 1
            if written or (touches and not anchor.value_only):
                return False
        written = written or touches
        op = op.next_op
    return True
