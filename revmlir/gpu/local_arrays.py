"""``rev-gpu-local-arrays``: ancilla arrays of a size known at compile time
in a thread's registers and local memory, not in the per-thread arena.

The Python frontend gives every array a dynamic type: ``rv.zeros((1, 11))``
is a ``memref<?x?xf64>`` allocated with constant sizes.  ``rev-lower-to-std``
puts an array a loop allocates on the heap (``memref.alloc``), as native
code must, and ``rev-gpu-outline`` carves every ``memref.alloc`` of a
dynamic size from the per-thread arena (``revmlir.gpu.arena``): global
memory, where each thread's arrays lie ``bytes per thread`` apart, so no
access coalesces and LLVM cannot keep an element in a register.  BA's
Jacobian-blocks kernel spent most of its time there.

This pass, run between ``rev-lower-to-std`` and ``rev-gpu-outline``, makes
such an allocation whose sizes are constants and whose bytes are at most
``FRAME_ARRAY_BYTES`` a ``memref.alloca`` of the same type, and drops its
frees.  Its translation allocates it once, in the entry block, as a static
array (``convert-std-to-llvm``): once the loops over its elements are
unrolled, LLVM's SROA keeps its elements in registers.  One slot serves
every iteration of a loop: the verifier's ``array`` rule frees an ancilla
array in the block that allocates it, so two iterations' arrays are never
live at once, and ``rev-lower-to-std`` zeroes the array at each allocation.

An allocation that ``rev-lower-to-std`` yields out of the run-time choice
between frame and heap (outside loops) is left alone: its free is
conditional, on the yielded value.  Larger arrays stay in the arena, whose
size a launch chooses, rather than in local memory, whose size the kernel
fixes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from revmlir.ir_utils import nested_ops
from revmlir.lowering.std_to_llvm import frame_shape


def local_shape(op: memref.AllocOp) -> list[int] | None:
    """The shape of a heap array that may live in the thread's local memory
    instead, or ``None``: one a frame would hold (``frame_shape``: constant
    sizes, at most ``FRAME_ARRAY_BYTES``), which no ``scf.yield`` passes on
    (its free would not be found)."""
    type = op.memref.type
    assert isinstance(type, MemRefType)
    shape = frame_shape(type, op.dynamic_sizes)
    if shape is None or any(isinstance(use.operation, scf.YieldOp) for use in op.memref.uses):
        return None
    return shape


def make_local(op: memref.AllocOp) -> None:
    """Replace a heap array of a constant size (``local_shape``) by a
    ``memref.alloca`` of its type, without its frees."""
    type = op.memref.type
    assert isinstance(type, MemRefType)
    for use in list(op.memref.uses):
        if isinstance(use.operation, memref.DeallocOp):
            Rewriter.erase_op(use.operation)
    local = memref.AllocaOp.get(type.element_type, shape=type.get_shape(), dynamic_sizes=op.dynamic_sizes)
    local.memref.name_hint = op.memref.name_hint
    Rewriter.replace_op(op, local)


@dataclass(frozen=True)
class RevGpuLocalArraysPass(ModulePass):
    """Heap arrays of sizes known at compile time (at most 4 KiB) become
    thread-local ``memref.alloca``s in device code (run it after
    ``rev-lower-to-std``, before ``rev-gpu-outline``)."""

    name = "rev-gpu-local-arrays"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # one walk, not a rewrite worklist over the whole lowered module: an
        # alloca matches nothing, so a second round would find nothing; by
        # exact class, as every walk of a kernel's every op tests it
        # (isinstance on xDSL's ops goes through ABCMeta)
        for alloc in nested_ops(op):
            if alloc.__class__ is memref.AllocOp and alloc.dynamic_sizes and local_shape(alloc) is not None:
                make_local(alloc)
