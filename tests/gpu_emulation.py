"""Kernels run on the CPU thread by thread: the differential oracle of the
GPU tests, which need no GPU.

The ``gpu.func`` that ``rev-gpu-outline`` makes is compiled for the host as
an ordinary function of its arguments and the thread's place in the grid
(``gpu.thread_id`` and the others become four more arguments); running it
for every thread of a grid, one after the other, must give what the CPU
function gives.  That tests the outlined body, the grid-stride loop and the
device's error-slot set-up, with the host's code generation.

A kernel that takes a per-thread arena gets one, ``arena`` bytes for every
thread of the grid, as a launcher gives it.  A failed check reports as on
the device: the first failing thread's check, values and element go to the
shared slot, and the thread ends (``longjmp`` to a guard around it, whose
``jmp_buf`` the shared slot's last, unused word holds).

The reference is the CPU function, native code for the same std function,
which runs the parallel loop in order (any order is one of its meanings).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from llvmlite import ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import Float64Type, IndexType, IntegerType, MemRefType, ModuleOp, UnrealizedConversionCastOp
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from revmlir.gpu.local_arrays import RevGpuLocalArraysPass
from revmlir.gpu.nvptx import array_at_address, pointer_as_index
from revmlir.gpu.outline import GPU_ERROR_SLOT, outline, takes_arena
from revmlir.ir_utils import RuleTable
from revmlir.lowering.checked_code import define_fail
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.lowering.std_to_llvm import CIFACE_SUFFIX, ModuleTranslation, Rule, translate_module
from revmlir.parsing import make_context
from revmlir.passes.invert import derive_inverses
from revmlir.runtime.guard import guard_entry
from revmlir.runtime.jit import jit
from revmlir.runtime.native import NativeModule
from revmlir.runtime_checks import ELEMENT_WORD, FAIL, GPU_ERROR_WORDS, JUMP_WORD, PAYLOAD_SLOTS

GRID_OPS = (gpu.ThreadIdOp, gpu.BlockIdOp, gpu.BlockDimOp, gpu.GridDimOp)


def thread_function(kernel: gpu.FuncOp) -> func.FuncOp:
    """``kernel`` as a host function of its arguments then (thread, block,
    block size, grid size), returning its scalar arguments."""
    body = kernel.body.clone()
    block = body.block
    place = [block.insert_arg(IndexType(), len(block.args)) for _ in GRID_OPS]
    for op in [op for op in block.walk() if isinstance(op, GRID_OPS)]:
        op.results[0].replace_all_uses_with(place[GRID_OPS.index(type(op))])
        op.detach()
        op.erase()
    scalars = [a for a in block.args if not isinstance(a.type, MemRefType)]
    returned = block.last_op
    assert isinstance(returned, gpu.ReturnOp)
    Rewriter.replace_op(returned, func.ReturnOp(*scalars))
    inputs = list(block.arg_types)
    return func.FuncOp(kernel.sym_name.data, (inputs, [a.type for a in scalars]), body)


def _descriptor(array: np.ndarray) -> ctypes.Structure:
    class Descriptor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("sizes", ctypes.c_int64 * array.ndim)]

    return Descriptor(array.ctypes.data, (ctypes.c_int64 * array.ndim)(*array.shape))


_SCALARS = {Float64Type: ctypes.c_double, IndexType: ctypes.c_int64, IntegerType: ctypes.c_int64}
JUMP_BUFFER_WORD = GPU_ERROR_WORDS - 1
"""Where the emulation keeps a running thread's ``jmp_buf`` address."""


def _report_and_leave(module: ir.Module, entry: str, slot: int) -> None:
    """``revmlir.fail`` as the device's (first failure wins the shared slot,
    the thread ends), on the host: ``entry`` runs a thread under
    ``_setjmp``, and ``fail`` jumps back to it."""
    fail = module.get_global(FAIL)
    pointer = fail.function_type.args[0]
    i32, i64 = ir.IntType(32), ir.IntType(64)
    setjmp = ir.Function(module, ir.FunctionType(i32, [pointer]), "_setjmp")
    setjmp.attributes.add("returns_twice")
    longjmp = ir.Function(module, ir.FunctionType(ir.VoidType(), [pointer, i32]), "longjmp")
    longjmp.attributes.add("noreturn")
    fail.blocks = []
    builder = ir.IRBuilder(fail.append_basic_block())

    def word(base: ir.Value, index: int) -> ir.Value:
        return builder.gep(base, [ir.Constant(i64, index)], source_etype=i64)

    own = fail.args[0]
    context = builder.inttoptr(builder.load(word(own, JUMP_WORD), typ=i64), pointer)
    shared = builder.inttoptr(builder.load(word(context, 0), typ=i64), pointer)
    with builder.if_then(builder.icmp_signed("==", builder.load(word(shared, 0), typ=i64), ir.Constant(i64, 0))):
        for index in range(1 + PAYLOAD_SLOTS):
            builder.store(builder.load(word(own, index), typ=i64), word(shared, index))
        builder.store(builder.load(word(context, 1), typ=i64), word(shared, ELEMENT_WORD))
    buffer = builder.inttoptr(builder.load(word(shared, JUMP_BUFFER_WORD), typ=i64), pointer)
    builder.call(longjmp, [buffer, ir.Constant(i32, 1)])
    builder.unreachable()
    guard_entry(module, module.get_global(entry), slot, setjmp, pointer, JUMP_BUFFER_WORD)


class EmulatedKernel:
    """A kernel of a module (rev functions, their inverses, std functions),
    compiled for the host."""

    def __init__(self, module: ModuleOp, name: str):
        ctx = make_context()
        work = module.clone()
        derive_inverses(ctx, work)  # as compile_kernels derives them: errors name them ~f
        lower_to_std(work, check_ops=True)  # as compile_kernels lowers: a check is one op
        RevGpuLocalArraysPass().apply(ctx, work)
        outline(work, [name], check_ops=True)
        (device,) = [op for op in work.ops if isinstance(op, gpu.ModuleOp)]
        functions: list[Operation] = []
        for op in device.body.ops:
            if isinstance(op, gpu.FuncOp):
                functions.append(thread_function(op))
            else:
                functions.append(op.clone())
        host = ModuleOp(functions)
        self.arena = takes_arena(next(op for op in device.body.ops if isinstance(op, gpu.FuncOp)))
        self.check_table = work
        define_fail(host)
        kernel = next(f for f in host.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
        self.types = list(kernel.function_type.inputs.data)
        # the host's translation, with the rules only kernels need
        rules: RuleTable[Rule] = RuleTable()
        rules(memref.ExtractAlignedPointerAsIndexOp)(pointer_as_index)
        rules(UnrealizedConversionCastOp)(array_at_address)
        translate_module(host, ModuleTranslation(overrides=rules), entry_points=True)
        llvm_module = convert_module(host, fallback_target_triple=None)
        _report_and_leave(llvm_module, name + CIFACE_SUFFIX, self.types.index(GPU_ERROR_SLOT))
        self.machine = jit(str(llvm_module))
        self.entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(self.machine.address(name + CIFACE_SUFFIX))

    def launch(self, args: Sequence[Any], blocks: int, threads: int, arena: int = 4096) -> np.ndarray:
        """Run every thread of a ``blocks`` × ``threads`` grid on ``args``
        (arrays updated in place), with ``arena`` bytes of per-thread arena
        if the kernel takes one; return the shared error slot."""
        slot = np.zeros(GPU_ERROR_WORDS, dtype=np.int64)
        # 16-byte aligned, as a device allocation is
        buffer = np.zeros(blocks * threads * arena + 16, dtype=np.uint8)
        start = buffer.ctypes.data + (-buffer.ctypes.data % 16)
        extra = [start, arena] if self.arena else []
        for block in range(blocks):
            for thread in range(threads):
                values = [*args, slot, *extra, thread, block, threads, blocks]
                storage = [
                    _descriptor(v) if isinstance(t, MemRefType) else _SCALARS[type(t)](v)
                    for v, t in zip(values, self.types, strict=True)
                ]
                pointers = (ctypes.c_void_p * len(storage))(*[ctypes.addressof(s) for s in storage])
                self.entry(ctypes.addressof(pointers))
                slot[JUMP_BUFFER_WORD] = 0
        return slot


def reference(module: ModuleOp, name: str) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """The CPU function ``name`` of a std module (native code runs its
    parallel loop in order)."""
    function = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
    return NativeModule.compile(module).std_caller(function)
