"""Operational semantics of snapshots and schedule cursors (checkpointed
gradients, ``revmlir.ad.checkpointed``).

A snapshot record is a run of elements on the store stack: the scalars and
the memrefs' elements (row-major) in operand order, then a stack's elements
and its length.  The runtime counts the records held and their bytes, so
tests can compare the peak with a schedule's ``stats()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import SSAValue

from revmlir.checkpoint.cursor import next_entry
from revmlir.dialects import anc
from revmlir.dialects.ad import NextOp
from revmlir.interpreter.anc import check_room
from revmlir.interpreter.state import RuntimeInterpreter
from revmlir.lowering.native_types import element_bytes
from revmlir.runtime.values import normalize
from revmlir.safety import EMPTY_STACK, STACK_NOT_GROWN


def _fixed_length(operands: Sequence[SSAValue], values: Sequence[Any]) -> int:
    """The elements of a record's scalars and memrefs (its stack's part,
    last, is sized by the length stored at its top)."""
    return sum(
        v.size if isinstance(o.type, MemRefType) else 1
        for o, v in zip(operands, values, strict=True)
        if not isinstance(o.type, anc.StackType)
    )


def _bytes(op: anc.SnapshotOp | anc.DropOp, length: int) -> int:
    """The bytes of a record of ``length`` elements on ``op``'s store."""
    assert isinstance(op.store.type, anc.StackType)
    return length * element_bytes(op.store.type.element_type)


def _latest(
    interpreter: RuntimeInterpreter, op: anc.RestoreOp | anc.DropOp, args: PythonValues, what: str
) -> tuple[list[Any], list[Any], int]:
    """The store, the values named by ``op`` and where the latest record
    (the one ``op`` acts on) starts in the store."""
    store, *values = args
    start = len(store) - _fixed_length(op.values, values)
    if op.stack() is not None:
        # the stored length bounded as native code bounds it, a float as a
        # float (NaN fails, 3.5 does not fit 4 places: ``<= start - 1``): a
        # hand-written top word must place the stack's part, and its
        # length, in the store after the fixed part
        held = store[-1] if start > 0 else -1
        start = start - int(held) - 1 if 0 <= held <= start - 1 else -1
    if start < 0:
        raise interpreter.runtime.fail(op, f"no snapshot to {what}")
    return store, values, start


@register_impls
class SnapshotFunctions(InterpreterFunctions):
    @impl(NextOp)
    def run_next(self, interpreter: RuntimeInterpreter, op: NextOp, args: PythonValues) -> PythonValues:
        """The cursor's next entry.  A transition one level deeper pushes
        a frame (at most one per entry), bounded as native code's push of
        it (``check_room``): a schedule of more levels than the stack holds
        stops at the op, the frames as they were."""
        frames, steps, *words = args
        schedule = op.schedule
        held = len(frames)
        try:
            entry = next_entry(schedule.scheme.data, schedule.snapshots.data, steps, tuple(words), frames)
            if len(frames) > held:
                check_room(op.frames.type, frames, 0, interpreter.runtime.stack_limit)
        except IndexError:
            # the machine pops a frame on its way up; hand-written words may
            # ask that of empty frames
            raise interpreter.runtime.fail(op, EMPTY_STACK) from None
        except MemoryError:
            # the frames are as they were, as native code's failed push leaves them
            del frames[held:]
            raise MemoryError(STACK_NOT_GROWN.format(held)) from None
        return tuple(int(w) for w in entry)

    @impl(anc.SnapshotOp)
    def run_snapshot(self, interpreter: RuntimeInterpreter, op: anc.SnapshotOp, args: PythonValues) -> PythonValues:
        store, *values = args
        start = len(store)
        held = sum(
            len(value) + 1
            for operand, value in zip(op.values, values, strict=True)
            if isinstance(operand.type, anc.StackType)
        )
        check_room(op.store.type, store, _fixed_length(op.values, values) + held, interpreter.runtime.stack_limit)
        for operand, value in zip(op.values, values, strict=True):
            if isinstance(operand.type, MemRefType):
                store.extend(np.asarray(value).reshape(-1).tolist())
            elif isinstance(operand.type, anc.StackType):
                store.extend(value)
                store.append(normalize(operand.type.element_type, len(value)))
            else:
                store.append(value)
        interpreter.runtime.take_snapshot(_bytes(op, len(store) - start))
        return ()

    @impl(anc.RestoreOp)
    def run_restore(self, interpreter: RuntimeInterpreter, op: anc.RestoreOp, args: PythonValues) -> PythonValues:
        store, values, position = _latest(interpreter, op, args, "restore")
        scalars: list[Any] = []
        for operand, value in zip(op.values, values, strict=True):
            if isinstance(operand.type, MemRefType):
                value.reshape(-1)[:] = store[position : position + value.size]
                position += value.size
            elif isinstance(operand.type, anc.StackType):
                check_room(operand.type, [], len(store) - 1 - position, interpreter.runtime.stack_limit)
                value[:] = store[position:-1]
            else:
                scalars.append(normalize(operand.type, store[position]))
                position += 1
        return tuple(scalars)

    @impl(anc.DropOp)
    def run_drop(self, interpreter: RuntimeInterpreter, op: anc.DropOp, args: PythonValues) -> PythonValues:
        store, _, position = _latest(interpreter, op, args, "drop")
        interpreter.runtime.drop_snapshot(_bytes(op, len(store) - position))
        del store[position:]
        return ()

    @impl(anc.ZeroPadOp)
    def run_zero_pad(self, interpreter: RuntimeInterpreter, op: anc.ZeroPadOp, args: PythonValues) -> PythonValues:
        shadow, stack = args
        assert isinstance(op.shadow.type, anc.StackType)
        zero = normalize(op.shadow.type.element_type, 0)
        missing = max(len(stack) - len(shadow), 0)
        check_room(op.shadow.type, shadow, missing, interpreter.runtime.stack_limit)
        shadow.extend([zero] * missing)
        return ()
