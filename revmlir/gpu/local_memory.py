"""The local memory a GPU thread's frames take, bounded at compile time.

Device code keeps every array of a size known at compile time in the
thread's local memory (``alloca``, docs/gpu.md *Memory*): ancilla arrays of
a static type however large, ``memref.alloca``s a user wrote, small arrays
``rev-gpu-local-arrays`` moved off the heap.  CUDA gives a thread at most
``LOCAL_MEMORY_LIMIT`` bytes of it, but neither LLVM nor ptxas refuses a
larger frame: the module assembles and every launch fails.  So the bytes a
function's frame takes, with the largest frame among the functions it
calls (a call stack holds one callee's frame at a time), are counted from
its allocations, and a function past the limit is a located error before
LLVM sees it.  The count is of the allocations as written: LLVM may keep
arrays in registers or overlap them, never take more than their sum.
"""

from __future__ import annotations

from math import prod

from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from revmlir.errors import describe_op
from revmlir.ir_utils import constant_shape, nested_ops
from revmlir.lowering.native_types import element_bytes
from revmlir.safety import MAX_STACK_ALLOCATION

LOCAL_MEMORY_LIMIT = MAX_STACK_ALLOCATION
"""The local memory a CUDA thread may have (every GPU from sm_20 on), the
bound of one ``memref.alloca`` on every engine."""


def _bytes(alloca: memref.AllocaOp) -> int:
    """The bytes of an array in the frame; one of a run-time size counts
    nothing here (the device takes those larger than a frame array from
    the per-thread arena, whose size the launch chooses)."""
    type = alloca.memref.type
    assert isinstance(type, MemRefType)
    shape = constant_shape(type.get_shape(), alloca.dynamic_sizes)
    return 0 if shape is None else prod(shape) * element_bytes(type.element_type)


def check_local_memory(module: gpu.ModuleOp) -> None:
    """A located error at the largest array of the first function (kernel
    or device function) whose frame, with its callees' largest, takes more
    than ``LOCAL_MEMORY_LIMIT`` bytes."""
    functions: dict[str, Operation] = {
        op.sym_name.data: op for op in module.body.ops if isinstance(op, func.FuncOp | gpu.FuncOp)
    }
    need: dict[str, tuple[int, memref.AllocaOp | None]] = {}

    def frame(name: str, calling: frozenset[str]) -> tuple[int, memref.AllocaOp | None]:
        """The bytes ``name`` and its deepest callee take, and the largest
        array among them; a recursive call adds nothing (its depth is
        unknown here)."""
        if name in need:
            return need[name]
        own, largest, deepest = 0, (0, None), (0, None)
        for op in nested_ops(functions[name]):  # by exact class, as every walk of a kernel's ops
            if op.__class__ is memref.AllocaOp:
                size = _bytes(op)
                own += size
                largest = max(largest, (size, op), key=lambda p: p[0])
            elif op.__class__ is func.CallOp:
                callee = op.callee.string_value()
                if callee in functions and callee not in calling:
                    deepest = max(deepest, frame(callee, calling | {name}), key=lambda p: p[0])
        total = own + deepest[0]
        need[name] = (total, max(largest, deepest, key=lambda p: p[0])[1])
        return need[name]

    for name in functions:
        total, largest = frame(name, frozenset())
        if total > LOCAL_MEMORY_LIMIT:
            assert largest is not None
            where = describe_op(largest)
            raise PassFailedException(
                f"{where}: @{name} needs {total} bytes of local memory per thread on the GPU "
                f"(this array takes {_bytes(largest)}), more than the {LOCAL_MEMORY_LIMIT} a CUDA thread has: "
                "give the array a run-time size, which the per-thread arena holds"
            )
