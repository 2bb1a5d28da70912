"""LLVM IR from a module of ``llvm`` ops: xDSL's ``convert_module``, with
the ops revmlir adds to xDSL's ``llvm`` dialect that its backend has no
conversion for.

``llvm.cmpxchg`` (``revmlir.dialects.upstream_forms``) is one: the GPU's
report takes the launch's error slot with it, and a user's ``func.func``
may hold it too, which the host translation passes through as every
``llvm`` op.  Host and device code both convert here, so the op is LLVM's
``cmpxchg`` instruction on either, not an unlocated "Conversion not
implemented" from the backend.  While the backend converts, each
``llvm.cmpxchg`` is a call of a declared function named after its
orderings and type; in the llvmlite module the call is the instruction
again.  Its result is read only by ``llvm.extractvalue`` (how a swap's old
value and success are read); another use is refused at the op
(``check_swap``), by LLVM IR printed from the ops
(``revmlir.lowering.llvm_text``) as by this conversion.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from revmlir import fast_ops
from revmlir.collector import take_apart_llvm_function
from revmlir.dialects.upstream_forms import CmpXchgOp
from revmlir.errors import describe_op
from revmlir.ir_utils import nested_ops

CMPXCHG = "revmlir.cmpxchg."
"""The prefix of the functions that stand for ``llvm.cmpxchg`` while xDSL's
LLVM backend, which has no such instruction, converts the module."""


def llvm_ir(module: ModuleOp) -> ir.Module:
    """``module`` (of ``llvm`` ops only, rewritten in place) as an llvmlite
    module, with no target triple."""
    _cmpxchg_as_calls(module)
    converted = convert_module(module, fallback_target_triple=None)
    _cmpxchg_instructions(converted)
    return converted


def check_swap(op: CmpXchgOp) -> None:
    """Refuses ``op`` if its result is read other than by
    ``llvm.extractvalue``: llvmlite keeps an instruction's operands in
    attributes of each kind of its own (a call's ``args``, a store's
    ``value``, a phi's incomings, ...), so the instruction that
    ``_cmpxchg_instructions`` puts in place of the stand-in call could not
    stand for it in any other use, which would print a reference to the
    removed call.  The use is refused at the ops, which have locations,
    and by either route to LLVM IR, so that whether a module compiles does
    not depend on which route it takes."""
    for use in op.res.uses:
        if not isinstance(use.operation, llvm.ExtractValueOp):
            raise PassFailedException(
                f"{describe_op(op)}: its result is used by {describe_op(use.operation)}; "
                "native code reads a compare-and-swap only with 'llvm.extractvalue'"
            )


def _cmpxchg_as_calls(module: ModuleOp) -> None:
    """Each ``llvm.cmpxchg`` (checked by ``check_swap``) becomes a call of
    a declared function named after its orderings and type
    (``_cmpxchg_instructions`` makes it the instruction again in LLVM IR)."""
    declared: dict[str, llvm.LLVMFunctionType] = {}
    # by exact class: the walk meets every op of every compile, and few have one
    for op in [o for o in nested_ops(module) if o.__class__ is CmpXchgOp]:
        check_swap(op)
        name = f"{CMPXCHG}{op.success_ordering.data}.{op.failure_ordering.data}.{op.val.type}"
        declared[name] = llvm.LLVMFunctionType([a.type for a in op.operands], op.res.type)
        Rewriter.replace_op(op, fast_ops.llvm_call(name, op.operands, op.res.type))
    for name, type in sorted(declared.items()):
        module.body.block.insert_op_before(
            llvm.FuncOp(name, type, linkage=llvm.LinkageAttr("external")), module.body.block.first_op
        )


def _cmpxchg_instructions(module: ir.Module) -> None:
    """The calls ``_cmpxchg_as_calls`` made, ``cmpxchg`` instructions again,
    and their functions' declarations gone.  The calls' only users are
    ``extractvalue``s (``_cmpxchg_as_calls`` refuses others), which print
    their ``aggregate``: each function's are renewed in one pass over it."""
    stand_ins = {f for f in module.functions if f.name.startswith(CMPXCHG)}
    if not stand_ins:
        return
    for caller in module.functions:
        swaps: dict[ir.CallInstr, ir.CmpXchg] = {}
        for block in caller.blocks:
            for position, call in enumerate(block.instructions):
                if isinstance(call, ir.CallInstr) and call.callee in stand_ins:
                    success, failure, _ = call.callee.name.removeprefix(CMPXCHG).split(".")
                    swaps[call] = block.instructions[position] = ir.CmpXchg(block, *call.args, success, failure, "")
        if not swaps:
            continue
        for block in caller.blocks:
            for user in block.instructions:
                if isinstance(user, ir.ExtractValue) and (swap := swaps.get(user.aggregate)) is not None:
                    user.replace_usage(user.aggregate, swap)
                    user.aggregate = swap
    for function in stand_ins:
        del module.globals[function.name]
        take_apart_llvm_function(function)
