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

The backend also converts every ``llvm.load`` and ``llvm.store`` as a plain
one, dropping an atomic ordering: an atomic load ran as a plain load.  The
ordering is carried (``atomic_access`` reads it, for both routes), and what
llvmlite cannot write, a ``volatile`` store, is refused at the op.  An
inline assembly that may unwind (``revmlir.lowering.unwinding_asm``) it
converts as one that may not: ``mark_unwinding`` gives it its keyword back.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import AnyFloat, IntegerType, ModuleOp
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from revmlir import fast_ops
from revmlir.collector import take_apart_llvm_function
from revmlir.dialects.upstream_forms import CmpXchgOp
from revmlir.errors import describe_op
from revmlir.ir_utils import nested_ops
from revmlir.lowering.unwinding_asm import mark_unwinding, unwinds

CMPXCHG = "revmlir.cmpxchg."
"""The prefix of the functions that stand for ``llvm.cmpxchg`` while xDSL's
LLVM backend, which has no such instruction, converts the module."""


def llvm_ir(module: ModuleOp) -> ir.Module:
    """``module`` (of ``llvm`` ops only, rewritten in place) as an llvmlite
    module, with no target triple."""
    # one walk finds each function's loads and stores and the swaps, by
    # exact class: it meets every op of every compile, where isinstance on
    # xDSL's ops goes through ABCMeta
    swaps: list[CmpXchgOp] = []
    accesses: dict[str, list[llvm.LoadOp | llvm.StoreOp]] = {}
    assembly: dict[str, list[bool]] = {}
    for function in module.ops:
        if function.__class__ is llvm.FuncOp:
            found = accesses[function.sym_name.data] = []
            for op in nested_ops(function):
                if op.__class__ is llvm.LoadOp or op.__class__ is llvm.StoreOp:
                    found.append(op)
                elif op.__class__ is CmpXchgOp:
                    swaps.append(op)
                elif op.__class__ is llvm.InlineAsmOp:
                    assembly.setdefault(function.sym_name.data, []).append(unwinds(op))
    _cmpxchg_as_calls(module, swaps)
    converted = convert_module(module, fallback_target_triple=None)
    _cmpxchg_instructions(converted)
    _atomic_instructions(accesses, converted)
    mark_unwinding(converted, {name: flags for name, flags in assembly.items() if any(flags)})
    return converted


_NOT_ORDERINGS = {llvm.LoadOp: ("release", "acq_rel"), llvm.StoreOp: ("acquire", "acq_rel")}
"""The orderings LLVM refuses on each kind of access (a load releases
nothing, a store acquires nothing)."""


def atomic_access(op: llvm.LoadOp | llvm.StoreOp) -> tuple[str, int] | None:
    """The ordering and alignment of ``op`` where it is atomic, None where
    it is a plain access; what LLVM's parser would refuse without a
    location, or llvmlite cannot write, is refused at the op.  LLVM writes
    an atomic access with its alignment, so one without an ``alignment``
    is given its type's size, the ABI alignment of every type both targets
    access atomically (one of up to 8 bytes: a wider one is a library call
    that neither the JIT nor a GPU links).  An alignment below the size is
    refused: LLVM makes such an access a call of ``__atomic_load`` or
    ``__atomic_store``, which MCJIT cannot resolve and binds to address 0,
    so its first run crashed the process.  Called by both routes to LLVM
    IR, so that they write the same access and refuse the same ops."""
    if isinstance(op, llvm.StoreOp) and op.volatile_ is not None:
        raise PassFailedException(
            f"{describe_op(op)}: a volatile store is not supported: native code cannot mark an access volatile"
        )
    number = op.ordering.value.data if op.ordering is not None else 0
    if number == 0:
        return None
    access = "load" if isinstance(op, llvm.LoadOp) else "store"
    ordering = llvm.ATOMIC_ORDERING_KEYWORDS.get(number)
    refused = _NOT_ORDERINGS[type(op)]
    if ordering is None or ordering in refused:
        taken = ", ".join(o for o in llvm.ATOMIC_ORDERING_KEYWORDS.values() if o not in refused)
        raise PassFailedException(
            f"{describe_op(op)}: an atomic {access} cannot have the ordering {ordering or number}; it takes {taken}"
        )
    type_ = op.dereferenced_value.type if isinstance(op, llvm.LoadOp) else op.value.type
    bits = 64 if isinstance(type_, llvm.LLVMPointerType) else _scalar_bits(type_)
    if bits not in (8, 16, 32, 64):
        raise PassFailedException(
            f"{describe_op(op)}: an atomic {access} of {type_} is not supported: "
            "native code accesses atomically integers, floats and pointers of 1, 2, 4 or 8 bytes"
        )
    size = bits // 8
    align = op.alignment.value.data if op.alignment is not None else size
    if align < size:
        raise PassFailedException(
            f"{describe_op(op)}: an atomic {access} of {type_} aligned to {align} byte(s) is not supported: "
            f"native code accesses it atomically aligned to at least its size, {size}"
        )
    return ordering, align


def _scalar_bits(type_: object) -> int | None:
    """The bits of an integer or float type; None for any other."""
    if isinstance(type_, IntegerType):
        return type_.width.data
    if isinstance(type_, AnyFloat):
        return type_.bitwidth
    return None


def _atomic_instructions(accesses: dict[str, list[llvm.LoadOp | llvm.StoreOp]], converted: ir.Module) -> None:
    """Each atomic one of ``accesses`` (each function's ``llvm.load``s and
    ``llvm.store``s, in the order of its blocks) made atomic in
    ``converted``, where the backend wrote it plain.  The backend makes one
    ``load`` or ``store`` instruction of each such op and of no other, in
    that order, so the two are paired by position; the instruction is made
    atomic in place, since llvmlite's users hold the instruction object
    itself (see ``check_swap``)."""
    for name, found in accesses.items():
        atomic = [(position, a) for position, o in enumerate(found) if (a := atomic_access(o)) is not None]
        if not atomic:
            continue
        instructions = [
            i
            for b in converted.get_global(name).blocks
            for i in b.instructions
            if isinstance(i, (ir.LoadInstr, ir.StoreInstr))
        ]
        assert len(instructions) == len(found), f"@{name}: loads and stores do not pair"
        for position, (ordering, align) in atomic:
            _make_atomic(instructions[position], ordering, align)


def _make_atomic(instruction: ir.LoadInstr | ir.StoreInstr, ordering: str, align: int) -> None:
    """``instruction`` as llvmlite's atomic form of it, in place."""
    if isinstance(instruction, ir.LoadInstr):
        instruction.__class__ = ir.LoadAtomicInstr
        instruction.opname = "load atomic"
    else:
        instruction.__class__ = ir.StoreAtomicInstr
        instruction.opname = "store atomic"
    instruction.ordering = ordering
    instruction.align = align


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


def _cmpxchg_as_calls(module: ModuleOp, swaps: list[CmpXchgOp]) -> None:
    """Each of ``module``'s ``swaps`` (checked by ``check_swap``) becomes a
    call of a declared function named after its orderings and type
    (``_cmpxchg_instructions`` makes it the instruction again in LLVM IR)."""
    declared: dict[str, llvm.LLVMFunctionType] = {}
    for op in swaps:
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
