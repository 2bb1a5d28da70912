"""Operational semantics of the ``anc`` dialect: ancillas, ancilla arrays and
stacks."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.interpreter import (
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute

from revmlir.dialects import anc
from revmlir.interpreter.memref import checked_shape, zeros
from revmlir.interpreter.state import RuntimeInterpreter
from revmlir.lowering import stacks
from revmlir.lowering.native_types import element_bytes, shown_kind
from revmlir.runtime_checks import (
    ANCILLA_FREED,
    POPPED_OTHER,
    array_freed,
    format_message,
    freed_element,
    shape_mismatch,
    shown,
    shown_indices,
)
from revmlir.safety import EMPTY_STACK, STACK_NOT_GROWN


@register_impls
class AncFunctions(InterpreterFunctions):
    @impl(anc.AllocOp)
    def run_alloc(self, interpreter: RuntimeInterpreter, op: anc.AllocOp, args: PythonValues) -> PythonValues:
        interpreter.runtime.allocate()
        return args

    @impl(anc.FreeOp)
    def run_free(self, interpreter: RuntimeInterpreter, op: anc.FreeOp, args: PythonValues) -> PythonValues:
        runtime = interpreter.runtime
        value, expected = args
        if runtime.checking(op) and not runtime.same(value, expected):
            raise runtime.fail(op, _compared(ANCILLA_FREED, op.ancilla.type, value, expected))
        runtime.release()
        return ()

    @impl(anc.ArrayAllocOp)
    def run_array_alloc(
        self, interpreter: RuntimeInterpreter, op: anc.ArrayAllocOp, args: PythonValues
    ) -> PythonValues:
        return (zeros(op.result.type, args),)

    @impl(anc.ArrayFreeOp)
    def run_array_free(self, interpreter: RuntimeInterpreter, op: anc.ArrayFreeOp, args: PythonValues) -> PythonValues:
        array, *sizes = args
        runtime = interpreter.runtime
        if not runtime.checking(op):
            return ()
        type = op.array.type
        assert isinstance(type, MemRefType)
        expected = tuple(checked_shape(type, sizes))  # not allocated: the array may fill the memory
        if array.shape != expected:
            dynamic = [axis for axis, size in enumerate(type.get_shape()) if size == DYNAMIC_INDEX]
            restated = [int(array.shape[a]) for a in dynamic] + [int(expected[a]) for a in dynamic]
            raise runtime.fail(op, format_message(shape_mismatch(type.get_shape()), shown_indices(restated)))
        for found in np.argwhere(array):  # unlike np.nonzero, an index () for a rank-0 array
            index = tuple(int(i) for i in found)
            if not runtime.same(array[index].item(), 0):
                payload = freed_element(array[index].item(), list(index))
                message = format_message(array_freed(array.ndim), payload)
                raise runtime.fail(op, message)
        return ()

    @impl(anc.StackAllocOp)
    def run_stack_alloc(
        self, interpreter: RuntimeInterpreter, op: anc.StackAllocOp, args: PythonValues
    ) -> PythonValues:
        return ([],)

    @impl(anc.StackFreeOp)
    def run_stack_free(self, interpreter: RuntimeInterpreter, op: anc.StackFreeOp, args: PythonValues) -> PythonValues:
        (stack,) = args
        runtime = interpreter.runtime
        if stack and runtime.checking(op):
            raise runtime.fail(op, f"stack freed holding {len(stack)} value(s)")
        return ()

    @impl(anc.PushOp)
    def run_push(self, interpreter: RuntimeInterpreter, op: anc.PushOp, args: PythonValues) -> PythonValues:
        stack, value = args
        _push(op, stack, value, interpreter.runtime.stack_limit)
        return ()

    @impl(anc.PopOp)
    def run_pop(self, interpreter: RuntimeInterpreter, op: anc.PopOp, args: PythonValues) -> PythonValues:
        (stack,) = args
        if not stack:
            raise interpreter.runtime.fail(op, EMPTY_STACK)
        return (stack.pop(),)

    @impl(anc.CopyPushOp)
    def run_copy_push(self, interpreter: RuntimeInterpreter, op: anc.CopyPushOp, args: PythonValues) -> PythonValues:
        stack, value = args
        _push(op, stack, value, interpreter.runtime.stack_limit)
        return ()

    @impl(anc.CopyPopOp)
    def run_copy_pop(self, interpreter: RuntimeInterpreter, op: anc.CopyPopOp, args: PythonValues) -> PythonValues:
        stack, value = args
        runtime = interpreter.runtime
        if not stack:
            raise runtime.fail(op, EMPTY_STACK)
        popped = stack.pop()
        if runtime.checking(op) and not runtime.same(popped, value):
            raise runtime.fail(op, _compared(POPPED_OTHER, op.value.type, popped, value))
        return ()


def _compared(template: str, type: Attribute, *values: object) -> str:
    """The message of a check that compared ``values`` of ``type``, shown
    as native code reports them (``shown_kind``: a log number as the
    number)."""
    kind = shown_kind(type)
    return format_message(template, [shown(kind, value) for value in values])


def _push(op: anc.PushOp | anc.CopyPushOp, stack: list[object], value: object, limit: int) -> None:
    """Push ``value``, or stop where native code's push could not grow the
    stack (``check_room``): a push without end otherwise grew the list
    until memory ran out."""
    check_room(op.stack.type, stack, 1, limit)
    stack.append(value)


def check_room(stack_type: Attribute, stack: list[Any], count: int, limit: int) -> None:
    """Stop, with native code's message, where ``count`` more elements
    would pass the most a stack of ``stack_type`` holds under ``limit``
    (``stacks.most_elements``): a push, and a record (a snapshot, a fill)
    that native code could not grow the stack's buffer for."""
    if len(stack) + count > _most_elements(stack_type, limit):
        raise MemoryError(STACK_NOT_GROWN.format(len(stack)))


@functools.cache
def _most_elements(stack_type: Attribute, limit: int) -> int:
    """``stacks.most_elements`` of a stack type's elements under ``limit``,
    worked out once: a push asks it, and it took longer than the push."""
    assert isinstance(stack_type, anc.StackType)
    return stacks.most_elements(element_bytes(stack_type.element_type), limit)
