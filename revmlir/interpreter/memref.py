"""memref ops on numpy arrays, so arrays passed from Python are updated in place.

``memref.load`` also enforces the no-shared-read/write rule at run time: an
element borrowed by ``rev.take`` cannot be read until it is put back.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    MemRefType,
)
from xdsl.interpreter import (
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import InterpretationError

from revmlir.errors import describe_op
from revmlir.interpreter.state import RuntimeInterpreter
from revmlir.lowering.native_types import element_bytes
from revmlir.runtime.values import normalize, numpy_dtype
from revmlir.runtime_checks import borrowed_element, format_message, shown_indices
from revmlir.safety import (
    CANNOT_ALLOCATE,
    MAX_ALLOCATION,
    MAX_STACK_ALLOCATION,
    NEGATIVE_SIZE,
    out_of_bounds,
    too_large,
    too_large_for_the_stack,
)


def element_key(array: np.ndarray, indices: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    return id(array), indices


def checked_index(array: np.ndarray, indices: tuple[int, ...]) -> tuple[int, ...]:
    """``indices`` when each is within its axis; native code checks the same
    axes in the same order (``rev-lower-to-std``), with the same message."""
    if len(indices) != array.ndim:
        raise IndexError(f"{len(indices)} indices for an array of rank {array.ndim}")
    for axis, (index, size) in enumerate(zip(indices, array.shape)):
        if not 0 <= index < size:
            raise IndexError(out_of_bounds(axis).format(index, size))
    return indices


def checked_shape(type: Attribute, dynamic_sizes: PythonValues) -> list[int]:
    """The shape of an array of ``type`` with ``dynamic_sizes``, after the
    checks native code makes before allocating one: no size negative, at
    most ``MAX_ALLOCATION`` bytes."""
    type = cast(MemRefType, type)
    sizes = iter(dynamic_sizes)
    # dynamic sizes: xDSL 0.74 spells `?` as DYNAMIC_INDEX (-2**63), not -1
    shape = [next(sizes) if d < 0 else d for d in type.get_shape()]
    itemsize = numpy_dtype(type.element_type).itemsize
    for size in shape:
        if size < 0:
            raise ValueError(NEGATIVE_SIZE.format(size))
    elements = math.prod(map(float, shape))  # as native code counts them
    if elements > MAX_ALLOCATION // itemsize:
        raise MemoryError(too_large(itemsize).format(repr(elements)))
    return shape


def zeros(type: Attribute, dynamic_sizes: PythonValues) -> np.ndarray:
    """A zeroed array of ``type`` (``checked_shape``); one the memory left
    cannot hold is native code's ``CANNOT_ALLOCATE``, not numpy's words."""
    shape = checked_shape(type, dynamic_sizes)
    dtype = numpy_dtype(cast(MemRefType, type).element_type)
    try:
        return np.zeros(shape, dtype=dtype)
    except MemoryError:
        raise MemoryError(CANNOT_ALLOCATE.format(math.prod(shape) * dtype.itemsize)) from None


@register_impls
class MemRefFunctions(InterpreterFunctions):
    @impl(memref.LoadOp)
    def run_load(self, interpreter: RuntimeInterpreter, op: memref.LoadOp, args: PythonValues) -> PythonValues:
        array, *indices = args
        index = checked_index(array, tuple(indices))
        runtime = interpreter.runtime
        take = runtime.borrowed.get(element_key(array, index))
        if take is not None and runtime.checking(take):
            message = borrowed_element(len(index), True, describe_op(take))
            raise runtime.fail(op, format_message(message, shown_indices([int(i) for i in index])))
        return (normalize(op.res.type, array[index].item()),)

    @impl(memref.StoreOp)
    def run_store(self, interpreter: RuntimeInterpreter, op: memref.StoreOp, args: PythonValues) -> PythonValues:
        value, array, *indices = args
        array[checked_index(array, tuple(indices))] = value
        return ()

    @impl(memref.AllocOp)
    def run_alloc(self, interpreter: RuntimeInterpreter, op: memref.AllocOp, args: PythonValues) -> PythonValues:
        return (zeros(op.memref.type, args),)

    @impl(memref.AllocaOp)
    def run_alloca(self, interpreter: RuntimeInterpreter, op: memref.AllocaOp, args: PythonValues) -> PythonValues:
        """An array within ``MAX_STACK_ALLOCATION`` bytes, as native code
        checks it (``rev-host-safety``)."""
        type = op.memref.type
        assert isinstance(type, MemRefType)
        itemsize = element_bytes(type.element_type)
        elements = math.prod(map(float, checked_shape(type, args)))
        if elements > MAX_STACK_ALLOCATION // itemsize:
            raise MemoryError(too_large_for_the_stack(itemsize).format(repr(elements)))
        return (zeros(type, args),)

    @impl(memref.DeallocOp)
    def run_dealloc(self, interpreter: RuntimeInterpreter, op: memref.DeallocOp, args: PythonValues) -> PythonValues:
        return ()

    @impl(memref.DimOp)
    def run_dim(self, interpreter: RuntimeInterpreter, op: memref.DimOp, args: PythonValues) -> PythonValues:
        array, dim = args
        if not 0 <= dim < array.ndim:
            raise InterpretationError(f"dimension {dim} is out of range for {op.source.type}")
        return (int(array.shape[dim]),)
