"""Kernels run on the CPU thread by thread: the differential oracle of the
GPU tests, which need no GPU.

The ``gpu.func`` that ``rev-gpu-outline`` makes is compiled for the host as
an ordinary function of its arguments and the thread's place in the grid
(``gpu.thread_id`` and the others become four more arguments); running it
for every thread of a grid, one after the other, must give what the CPU
function gives.  That tests the outlined body, the grid-stride loop and the
device's error-slot set-up, with the host's code generation.

The reference is the CPU function, native code for the same std function,
which runs the parallel loop in order (any order is one of its meanings).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import Float64Type, IndexType, MemRefType, ModuleOp
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from revmlir.gpu.outline import GPU_ERROR_WORDS, outline
from revmlir.lowering.rev_to_std import RevLowerToStdPass, define_fail
from revmlir.gpu.nvptx import pointer_as_index
from revmlir.lowering.rules import RuleTable
from revmlir.lowering.std_to_llvm import CIFACE_SUFFIX, ModuleTranslation, Rule, translate_module
from revmlir.parsing import make_context
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime.jit import jit
from revmlir.runtime.native import NativeModule

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


_SCALARS = {Float64Type: ctypes.c_double, IndexType: ctypes.c_int64}


class EmulatedKernel:
    """A kernel of a module (rev functions, their inverses, std functions),
    compiled for the host."""

    def __init__(self, module: ModuleOp, name: str):
        ctx = make_context()
        work = module.clone()
        RevInvertPass().apply(ctx, work)
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
        # the host's translation, with the one rule only kernels need
        pointers: RuleTable[Rule] = RuleTable()
        pointers(memref.ExtractAlignedPointerAsIndexOp)(pointer_as_index)
        translate_module(host, ModuleTranslation(overrides=pointers), entry_points=True)
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


def reference(module: ModuleOp, name: str) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """The CPU function ``name`` of a std module (native code runs its
    parallel loop in order)."""
    function = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
    return NativeModule.compile(module).std_caller(function)
