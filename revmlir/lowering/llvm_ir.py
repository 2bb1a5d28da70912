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
again.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter

from revmlir.dialects.upstream_forms import CmpXchgOp
from revmlir.ir_utils import nested_ops
from revmlir.lowering import fast_ops

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


def _cmpxchg_as_calls(module: ModuleOp) -> None:
    """Each ``llvm.cmpxchg`` becomes a call of a declared function named
    after its orderings and type (``_cmpxchg_instructions`` makes it the
    instruction again in LLVM IR)."""
    declared: dict[str, llvm.LLVMFunctionType] = {}
    for op in [o for o in nested_ops(module) if isinstance(o, CmpXchgOp)]:
        name = f"{CMPXCHG}{op.success_ordering.data}.{op.failure_ordering.data}.{op.val.type}"
        declared[name] = llvm.LLVMFunctionType([a.type for a in op.operands], op.res.type)
        Rewriter.replace_op(op, fast_ops.llvm_call(name, op.operands, op.res.type))
    for name, type in sorted(declared.items()):
        module.body.block.insert_op_before(
            llvm.FuncOp(name, type, linkage=llvm.LinkageAttr("external")), module.body.block.first_op
        )


def _cmpxchg_instructions(module: ir.Module) -> None:
    """The calls ``_cmpxchg_as_calls`` made, ``cmpxchg`` instructions again,
    and their functions' declarations gone.  llvmlite's ``replace`` renews
    the operands of the instructions that use a call, but an
    ``extractvalue`` (how a swap's old value and success are read) prints
    its aggregate, which is renewed here."""
    for function in [f for f in module.functions if f.name.startswith(CMPXCHG)]:
        success, failure, _ = function.name.removeprefix(CMPXCHG).split(".")
        for caller in module.functions:
            for block in caller.blocks:
                for call in [i for i in block.instructions if isinstance(i, ir.CallInstr) and i.callee is function]:
                    swap = ir.CmpXchg(block, *call.args, success, failure, "")
                    block.replace(call, swap)
                    for user in (i for b in caller.blocks for i in b.instructions):
                        if isinstance(user, ir.ExtractValue) and user.aggregate is call:
                            user.aggregate = swap
        del module.globals[function.name]
