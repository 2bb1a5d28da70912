"""Kernels run on the CPU thread by thread: the differential oracle of the
GPU tests, which need no GPU.

The ``gpu.func`` that ``rev-gpu-outline`` makes is compiled for the host as
an ordinary function of its arguments and the thread's place in the grid
(``gpu.thread_id`` and the others become four more arguments); running it
for every thread of a grid, one after the other, must give what the CPU
function gives.  That tests the outlined body, the grid-stride loop and the
device's error-slot set-up, with the host's code generation.

The reference runs the std function with its parallel loop as a sequential
``scf.for`` and its shared accumulations as load/add/store, which is what a
parallel loop means (docs/gpu.md).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects.builtin import Float64Type, IndexType, MemRefType, ModuleOp
from xdsl.ir import Block, Operation
from xdsl.rewriter import Rewriter

from revmlir.gpu.outline import GPU_ERROR_WORDS, outline
from revmlir.lowering.rev_to_std import RevLowerToStdPass, define_fail
from revmlir.lowering.rules import RuleTable
from revmlir.lowering.std_to_llvm import CIFACE_SUFFIX, FunctionTranslation, ModuleTranslation, translate_module
from revmlir.parsing import make_context
from revmlir.runtime.jit import jit

GRID_OPS = (gpu.ThreadIdOp, gpu.BlockIdOp, gpu.BlockDimOp, gpu.GridDimOp)


def sequential(function: func.FuncOp) -> None:
    """Run ``function``'s parallel loops in order, its atomic additions as
    plain ones: the CPU's meaning of both."""
    for loop in [op for op in function.walk() if isinstance(op, scf.ParallelOp)]:
        (lb,), (ub,), (step,) = loop.lowerBound, loop.upperBound, loop.step
        body = loop.detach_region(loop.body)
        reduce = body.block.last_op
        assert reduce is not None
        Rewriter.replace_op(reduce, scf.YieldOp())
        Rewriter.replace_op(loop, scf.ForOp(lb, ub, step, [], body))
    for add in [op for op in function.walk() if isinstance(op, memref.AtomicRMWOp)]:
        load = memref.LoadOp.get(add.memref, add.indices)
        total = arith.AddfOp(load, add.value)
        store = memref.StoreOp.get(total, add.memref, add.indices)
        Rewriter.replace_op(add, [load, total, store], [load.res])


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


def _atomic_add(t: FunctionTranslation, op: Operation) -> None:
    """The host's single thread adds without an atomic."""
    assert isinstance(op, memref.AtomicRMWOp)
    load = memref.LoadOp.get(op.memref, op.indices)
    total = arith.AddfOp(load, op.value)
    store = memref.StoreOp.get(total, op.memref, op.indices)
    block = Block([load, total, store])
    t.translate_ops(block.ops)
    t.set(op.result, t.get(load.res))


_host_rules: RuleTable[Callable[[FunctionTranslation, Operation], None]] = RuleTable()
_host_rules(memref.AtomicRMWOp)(_atomic_add)


def _descriptor(array: np.ndarray) -> ctypes.Structure:
    class Descriptor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("sizes", ctypes.c_int64 * array.ndim)]

    return Descriptor(array.ctypes.data, (ctypes.c_int64 * array.ndim)(*array.shape))


_SCALARS = {Float64Type: ctypes.c_double, IndexType: ctypes.c_int64}


class EmulatedKernel:
    """A kernel of a std module, compiled for the host."""

    def __init__(self, module: ModuleOp, name: str):
        ctx = make_context()
        work = module.clone()
        RevLowerToStdPass().apply(ctx, work)
        outline(work, [name])
        (device,) = [op for op in work.ops if isinstance(op, gpu.ModuleOp)]
        functions: list[Operation] = []
        for op in device.body.ops:
            if isinstance(op, gpu.FuncOp):
                functions.append(thread_function(op))
            else:
                functions.append(op.clone())
        host = ModuleOp(functions)
        define_fail(host)  # the tests' runs pass every check
        kernel = next(f for f in host.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
        self.types = list(kernel.function_type.inputs.data)
        translate_module(host, ModuleTranslation(overrides=_host_rules), entry_points=True)
        self.machine = jit(str(convert_module(host, fallback_target_triple=None)))
        self.entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(self.machine.address(name + CIFACE_SUFFIX))

    def launch(self, args: Sequence[Any], blocks: int, threads: int) -> np.ndarray:
        """Run every thread of a ``blocks`` × ``threads`` grid on ``args``
        (arrays updated in place); return the shared error slot."""
        slot = np.zeros(GPU_ERROR_WORDS, dtype=np.int64)
        for block in range(blocks):
            for thread in range(threads):
                values = [*args, slot, thread, block, threads, blocks]
                storage = [
                    _descriptor(v) if isinstance(t, MemRefType) else _SCALARS[type(t)](v)
                    for v, t in zip(values, self.types, strict=True)
                ]
                pointers = (ctypes.c_void_p * len(storage))(*[ctypes.addressof(s) for s in storage])
                self.entry(ctypes.addressof(pointers))
        return slot


def reference(module: ModuleOp, name: str) -> Callable[..., tuple[Any, ...]]:
    """The CPU function ``name`` of a std module, its parallel loops run in
    order."""
    from revmlir.runtime.native import NativeModule

    work = module.clone()
    function = next(f for f in work.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
    sequential(function)
    return NativeModule.compile(work).std_caller(function)
