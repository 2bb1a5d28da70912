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
``ALIGNMENT``); its free sets ``top`` back to the array's address.  Ancilla
arrays are freed in the reverse order of their allocation (the verifier's
``array`` rule), so that is a stack's discipline, and the arena never
fragments.  An allocation that would pass ``end`` is the run-time check
"needs N bytes of per-thread arena, has M", reported at the allocation
through the error slot like every other check, before anything is written.
"""

from __future__ import annotations

from math import prod

from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnrealizedConversionCastOp,
    i1,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from revmlir.errors import ExecutionError
from revmlir.lowering.checked_code import display_name
from revmlir.lowering.rev_to_std import element_bytes
from revmlir.lowering.std_to_llvm import _position, llvm_type
from revmlir.runtime_checks import CHECKS_ATTR, FAIL, JUMP_WORD, CheckTable

TOP_WORD, BASE_WORD, END_WORD = 2, 3, 4
"""Where a thread's error context keeps its arena's top, start and end."""
CONTEXT_WORDS = 5
"""The context of a kernel with an arena (without: shared slot, element)."""
ALIGNMENT = 16
"""Every array starts at a multiple of this (the widest element, complex
f64, needs 16)."""
EXHAUSTED = (
    "needs {0} bytes of per-thread arena, has {1} (an ancilla array of a dynamic size; launch with a larger "
    "arena=)"
)


def arena_allocations(function: Operation) -> list[memref.AllocOp]:
    """The allocations of a dynamic size in ``function``: those an arena
    holds (one of a static size is the thread's local memory)."""
    return [op for op in function.walk() if isinstance(op, memref.AllocOp) and op.dynamic_sizes]


def carve(function: Operation, own: SSAValue, checks: CheckTable, name: str) -> None:
    """Allocate ``function``'s arrays of a dynamic size from the arena of
    the thread whose own error slot is ``own``; their frees give the bytes
    back.  Every free but that of an array of a static size is one of
    these, also where the array is chosen at run time (``rev-lower-to-std``
    frees an array outside loops that it may have put in the frame only
    when it did not)."""
    frees = [
        op for op in function.walk()
        if isinstance(op, memref.DeallocOp)
        and not (isinstance(op.memref.owner, memref.AllocOp) and not op.memref.owner.dynamic_sizes)
    ]
    for alloc in arena_allocations(function):
        _allocate(alloc, own, checks, name)
    for free in frees:
        ops: list[Operation] = []
        pointer = memref.ExtractAlignedPointerAsIndexOp.get(free.memref)
        address = arith.IndexCastOp(pointer, i64)
        ops += [pointer, address, llvm.StoreOp(address.result, _word(_context(own, ops), TOP_WORD, ops))]
        for op in ops:
            op.location = free.location
        Rewriter.replace_op(free, ops, [])


def _context(own: SSAValue, ops: list[Operation]) -> SSAValue:
    """The thread's context, whose address its own slot's last word holds."""
    jump = arith.ConstantOp.from_int_and_width(JUMP_WORD, IndexType())
    context = memref.LoadOp.get(own, [jump])
    pointer = llvm.IntToPtrOp(context)
    ops += [jump, context, pointer]
    return pointer.results[0]


def _word(context: SSAValue, word: int, ops: list[Operation]) -> SSAValue:
    """The address of a word of the thread's context."""
    address = llvm.GEPOp(context, [word], i64)
    ops.append(address)
    return address.result


def _allocate(alloc: memref.AllocOp, own: SSAValue, checks: CheckTable, name: str) -> None:
    """Replace ``alloc`` by a bump of the arena's top (the array starts at
    the old top), after the check that it fits."""
    type = alloc.memref.type
    assert isinstance(type, MemRefType)
    ops: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    def const(value: int) -> SSAValue:
        return add(arith.ConstantOp.from_int_and_width(value, i64))

    context = _context(own, ops)
    top_address = _word(context, TOP_WORD, ops)
    top = add(llvm.LoadOp(top_address, i64))
    base = add(llvm.LoadOp(_word(context, BASE_WORD, ops), i64))
    end = add(llvm.LoadOp(_word(context, END_WORD, ops), i64))
    sizes = iter(alloc.dynamic_sizes)
    extents = [const(d) if d >= 0 else add(arith.IndexCastOp(next(sizes), i64)) for d in type.get_shape()]
    bytes = const(element_bytes(type.element_type) * prod(d for d in type.get_shape() if d >= 0))
    for extent, static in zip(extents, type.get_shape()):
        if static < 0:
            bytes = add(arith.MuliOp(bytes, extent))
    rounded = add(arith.AndIOp(add(arith.AddiOp(bytes, const(ALIGNMENT - 1))), const(-ALIGNMENT)))
    new_top = add(arith.AddiOp(top, rounded))
    fits = add(arith.CmpiOp(new_top, end, "ule"))
    needed = add(arith.SubiOp(new_top, base))
    has = add(arith.SubiOp(end, base))
    identifier = checks.register(alloc, EXHAUSTED, ["i64", "i64"], display_name(name), ExecutionError)
    report: list[Operation] = []
    for slot, value in enumerate([const(identifier), needed, has]):
        position = arith.ConstantOp.from_int_and_width(slot, IndexType())
        report += [position, memref.StoreOp.get(value, own, [position])]
    report += [func.CallOp(FAIL, [own], []), scf.YieldOp()]
    exhausted = add(arith.XOrIOp(fits, add(arith.ConstantOp.from_int_and_width(1, i1))))
    ops += [scf.IfOp(exhausted, [], Region(Block(report))), llvm.StoreOp(new_top, top_address)]
    descriptor = add(llvm.UndefOp(llvm_type(type)))
    for position, value in enumerate([add(llvm.IntToPtrOp(top)), *extents]):
        descriptor = add(llvm.InsertValueOp(_position(position), descriptor, value))
    array = UnrealizedConversionCastOp.get([descriptor], [type])
    ops.append(array)
    for op in ops:
        op.location = alloc.location
    for op in report:
        op.location = alloc.location
    Rewriter.replace_op(alloc, ops, [array.results[0]])


def register_checks(module: ModuleOp) -> CheckTable:
    """The module's check table, to add the arena's checks to
    (``store_checks`` writes it back)."""
    table = module.attributes.get(CHECKS_ATTR)
    entries = [e.data for e in table.data if isinstance(e, StringAttr)] if isinstance(table, ArrayAttr) else []
    return CheckTable(entries)


def store_checks(module: ModuleOp, checks: CheckTable) -> None:
    module.attributes[CHECKS_ATTR] = ArrayAttr([StringAttr(e) for e in checks.entries])
