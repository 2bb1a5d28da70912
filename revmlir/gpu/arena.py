"""Per-thread arenas: the device's home of ancilla arrays of a dynamic size.

Native code puts an ancilla array of a run-time size that a loop allocates
on the heap (``memref.alloc``, ``rev-lower-to-std``).  The device heap is
small, slow, and on the GPUs measured gave illegal addresses; so device
code carves these arrays from an *arena* instead: one buffer per launch,
``bytes per thread`` for every thread of the grid, which the launcher
allocates and passes after the error slot (the kernel's address and bytes
per thread, two ``i64`` parameters).  Thread ``t``'s part starts at
``arena + t·bytes per thread``.

A thread's arena state lives in its error context (``revmlir.gpu.outline``),
which every device function reaches through the thread's own error slot
(its last word holds the context's address), so callees need no new
argument: ``[shared slot, element, top, base, end]``, addresses.  An
allocation is a bump of ``top`` by the array's bytes (rounded up to
``ALIGNMENT``); its free sets ``top`` back to the array's address when the
array is the newest allocation (it ends at ``top``).  Ancilla arrays are
freed in the reverse order of their allocation (the verifier's ``array``
rule), so that is a stack's discipline, and the arena does not fragment;
a stack's buffer (``revmlir.gpu.stacks``) follows no such rule, and an
array freed below a live buffer leaves its bytes to the end of the
iteration (the kernel sets ``top`` back at the start of every iteration of
its parallel loop, whose allocations cannot outlive it).  An allocation
that would pass ``end`` is the run-time check "needs N bytes of per-thread
arena, has M", reported at the allocation through ``revmlir.report`` like
every other check, before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    LocationAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from revmlir.errors import ExecutionError
from revmlir.implicit_builder import implicit_builder
from revmlir.ir_utils import nested_ops
from revmlir.lowering.checked_code import check_form
from revmlir.lowering.native_types import element_bytes
from revmlir.lowering.stacks import constant, result
from revmlir.lowering.std_to_llvm import llvm_position, llvm_type
from revmlir.runtime_checks import CHECKS_ATTR, JUMP_WORD, CheckTable

TOP_WORD, BASE_WORD, END_WORD = 2, 3, 4
"""Where a thread's error context keeps its arena's top, start and end."""
CONTEXT_WORDS = 5
"""The context of a kernel with an arena (without: shared slot, element)."""
ALIGNMENT = 16
"""Every array starts at a multiple of this (the widest element, complex
f64, needs 16)."""
EXHAUSTED = "needs {{0}} bytes of per-thread arena, has {{1}} ({what}; launch with a larger arena=)"
"""The check of an allocation past the arena's end, for ``what`` needed it."""
ARRAY = "an ancilla array of a dynamic size"


def arena_allocations(function: Operation, ops: Sequence[Operation] | None = None) -> list[memref.AllocOp]:
    """The allocations of a dynamic size in ``function`` (whose
    ``nested_ops`` are ``ops`` where the caller has them): those an arena
    holds (one of a static size is the thread's local memory)."""
    return [
        op
        for op in (nested_ops(function) if ops is None else ops)
        if op.__class__ is memref.AllocOp and op.dynamic_sizes
    ]


def built(location: LocationAttr, build: Callable[[], SSAValue | None]) -> tuple[list[Operation], SSAValue | None]:
    """The ops ``build`` makes (under ``implicit_builder``), detached and
    located at ``location`` (every check they make reports there), and the
    value it returns."""
    block = Block()
    with implicit_builder(block):
        value = build()
    for op in block.walk():
        op.location = location
    ops = list(block.ops)
    for op in ops:
        op.detach()
    return ops, value


def thread_context(own: SSAValue) -> SSAValue:
    """The thread's context, whose address its own slot's last word holds."""
    return result(llvm.IntToPtrOp(result(memref.LoadOp.get(own, [constant(JUMP_WORD, IndexType())]))))


def context_word(context: SSAValue, word: int) -> SSAValue:
    """The address of a word of the thread's context."""
    return llvm.GEPOp(context, [word], i64).result


def load(address: SSAValue) -> SSAValue:
    return llvm.LoadOp(address, i64).dereferenced_value


def rounded(bytes: SSAValue) -> SSAValue:
    """``bytes`` rounded up to ``ALIGNMENT``."""
    return result(arith.AndIOp(result(arith.AddiOp(bytes, constant(ALIGNMENT - 1))), constant(-ALIGNMENT)))


def reserve(context: SSAValue, own: SSAValue, new_top: SSAValue, identifier: int, check_ops: bool) -> None:
    """Move the arena's top to ``new_top`` after check ``identifier``
    (``EXHAUSTED``) that it does not pass the end: the bytes the thread's
    arena then holds, and has.  The check is built as every lowered check
    is (``check_form``, in the form ``check_ops`` asks for), placed by the
    caller's ``implicit_builder``; its report's device body gives the
    launch's shared slot the words and ends the thread."""
    base, end = (load(context_word(context, w)) for w in (BASE_WORD, END_WORD))
    needed, has = result(arith.SubiOp(new_top, base)), result(arith.SubiOp(end, base))
    check_form(result(arith.CmpiOp(new_top, end, "ule")), own, identifier, [needed, has], check_ops)
    llvm.StoreOp(new_top, context_word(context, TOP_WORD))


def release(context: SSAValue, start: SSAValue, end: SSAValue) -> None:
    """Give the bytes ``[start, end)`` back: the top moves to ``start`` if
    they are the newest allocation, else they stay taken until an older
    allocation is given back or the iteration ends."""
    top_address = context_word(context, TOP_WORD)
    top = load(top_address)
    newest = result(arith.CmpiOp(end, top, "eq"))
    llvm.StoreOp(result(arith.SelectOp(newest, start, top)), top_address)


def _array_bytes(type: MemRefType, dynamic: list[SSAValue]) -> SSAValue:
    """The bytes an array of ``type`` takes in the arena, given its dynamic
    extents (``i64``)."""
    bytes = constant(element_bytes(type.element_type) * prod(d for d in type.get_shape() if d >= 0))
    for extent in dynamic:
        bytes = result(arith.MuliOp(bytes, extent))
    return rounded(bytes)


def carve(function: Operation, own: SSAValue, checks: CheckTable, name: str, check_ops: bool) -> None:
    """Allocate ``function``'s arrays of a dynamic size from the arena of
    the thread whose own error slot is ``own``; their frees give the bytes
    back.  Every free but that of an array of a static size is one of
    these, also where the array is chosen at run time (``rev-lower-to-std``
    frees an array outside loops that it may have put in the frame only
    when it did not; ``check_ops``: the form of the checks, as
    ``lower_to_std``'s)."""
    frees = [
        op
        for op in nested_ops(function)
        if isinstance(op, memref.DeallocOp)
        and not (isinstance(op.memref.owner, memref.AllocOp) and not op.memref.owner.dynamic_sizes)
    ]
    for alloc in arena_allocations(function):
        _allocate(alloc, own, checks, name, check_ops)
    for free in frees:
        ops, _ = built(free.location, lambda: _free(free.memref, own))
        Rewriter.replace_op(free, ops, [])


def _free(array: SSAValue, own: SSAValue) -> None:
    type = array.type
    assert isinstance(type, MemRefType)
    address = result(arith.IndexCastOp(result(memref.ExtractAlignedPointerAsIndexOp.get(array)), i64))
    extents = [
        result(arith.IndexCastOp(result(memref.DimOp(array, constant(d, IndexType()))), i64))
        for d, extent in enumerate(type.get_shape())
        if extent < 0
    ]
    end = result(arith.AddiOp(address, _array_bytes(type, extents)))
    release(thread_context(own), address, end)


def _allocate(alloc: memref.AllocOp, own: SSAValue, checks: CheckTable, name: str, check_ops: bool) -> None:
    """Replace ``alloc`` by a bump of the arena's top (the array starts at
    the old top), after the check that it fits."""
    type = alloc.memref.type
    assert isinstance(type, MemRefType)
    identifier = checks.register(alloc, EXHAUSTED.format(what=ARRAY), ["i64", "i64"], name, ExecutionError)

    def build() -> SSAValue:
        context = thread_context(own)
        top = load(context_word(context, TOP_WORD))
        sizes = iter(alloc.dynamic_sizes)
        extents = [constant(d) if d >= 0 else result(arith.IndexCastOp(next(sizes), i64)) for d in type.get_shape()]
        dynamic = [e for e, d in zip(extents, type.get_shape()) if d < 0]
        reserve(context, own, result(arith.AddiOp(top, _array_bytes(type, dynamic))), identifier, check_ops)
        descriptor = result(llvm.UndefOp(llvm_type(type)))
        for position, value in enumerate([result(llvm.IntToPtrOp(top)), *extents]):
            descriptor = result(llvm.InsertValueOp(llvm_position(position), descriptor, value))
        return result(UnrealizedConversionCastOp.get([descriptor], [type]))

    ops, array = built(alloc.location, build)
    Rewriter.replace_op(alloc, ops, [array])


def register_checks(module: ModuleOp) -> CheckTable:
    """The module's check table, to add the arena's checks to
    (``store_checks`` writes it back)."""
    table = module.attributes.get(CHECKS_ATTR)
    entries = [e.data for e in table.data if isinstance(e, StringAttr)] if isinstance(table, ArrayAttr) else []
    return CheckTable(entries)


def store_checks(module: ModuleOp, checks: CheckTable) -> None:
    module.attributes[CHECKS_ATTR] = ArrayAttr([StringAttr(e) for e in checks.entries])
