"""Stacks on the GPU: their buffers in the thread's per-thread arena.

Native code grows a stack's buffer with ``realloc`` (``revmlir.lowering.stacks``),
which the device lacks; there a stack's buffer is a piece of the thread's
arena (``revmlir.gpu.arena``).  The header stays the native one, a
``memref<3xi64>`` in the frame, with its ``CAPACITY`` word holding the
bytes the buffer has reserved rather than elements:

- a push that finds the buffer full reserves more: in place while the
  buffer is the thread's newest allocation (it ends at the arena's top),
  exactly the bytes it needs (rounded up to ``ALIGNMENT``); else at the top,
  twice what it needs, its elements copied there (the first push of a
  stack is such a move, copying nothing).  Growing past the arena's end is
  the run-time check ``EXHAUSTED`` at the push, with the bytes the thread
  needed, before anything is written;
- a fill (a snapshot's record, pushed as zeros and then written in place;
  a shadow zero-padded to its tape) and a copy (a record's stack part, into
  the store and back) reserve as a push does, for all their elements at
  once, then write them as native code does (``fill_elements``,
  ``copy_elements``): so checkpointed gradients' snapshots run on the GPU;
- a free gives the buffer back as a free of an array does (the top moves
  back if it is the newest) and zeroes the header;
- a pop, a put and a get are native code's (they never allocate), and so
  are the checks ``rev-lower-to-std`` puts around them (an empty stack, a
  stack freed holding values, a store holding no record), which report
  through the error slot as every check does on the device.

``rev-gpu-outline`` rewrites every push, fill, copy and free of a kernel
and of the functions it calls (``place``), which the thread's own error
slot gives the arena's context, as it gives it to ``revmlir.report``.

Why these growths: in place costs no copy, so there is nothing to gain
from reserving ahead, and a lone stack takes only what it holds (so the
error's byte count is what a launch needs to run).  Stacks pushed in turn
(an adjoint's tapes) block each other; the one that moves leaves its old
bytes behind until an older allocation is given back or the iteration ends
(``revmlir.gpu.arena``), and doubling keeps both the copies and the bytes
left behind within a constant factor of what the stack holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, llvm, scf
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from revmlir.errors import ExecutionError
from revmlir.gpu.arena import (
    EXHAUSTED,
    TOP_WORD,
    built,
    context_word,
    load,
    release,
    reserve,
    rounded,
    thread_context,
)
from revmlir.implicit_builder import implicit_builder
from revmlir.ir_utils import nested_ops
from revmlir.lowering import stacks
from revmlir.lowering.native_types import element_bytes
from revmlir.lowering.stacks import constant, header_word, result, set_header_word, slot_addresses, slots, to_slots
from revmlir.runtime_checks import CheckTable

STACK = "a stack"
WORD_BYTES = 8
"""A moved buffer is copied in words of this many bytes."""
ARENA_KINDS = (stacks.PUSH, stacks.FILL, stacks.COPY, stacks.FREE)
"""The stack runtime functions whose device form is the arena's (those
that grow a buffer, and the free); the device has no definition of them."""


def arena_calls(function: Operation, ops: Sequence[Operation] | None = None) -> list[func.CallOp]:
    """The calls in ``function`` (whose ``nested_ops`` are ``ops`` where the
    caller has them) that grow or free a stack's buffer."""
    return [
        op
        for op in (nested_ops(function) if ops is None else ops)
        if op.__class__ is func.CallOp and stacks.runtime_kind(op.callee.string_value()) in ARENA_KINDS
    ]


def place(function: Operation, own: SSAValue, checks: CheckTable, name: str, check_ops: bool) -> None:
    """Put the buffers of ``function``'s stacks in the arena of the thread
    whose own error slot is ``own``: each call that grows a buffer
    reserves what it needs there first (the check that the arena holds it
    reported at the call), then writes as native code does."""
    for call in arena_calls(function):
        kind = stacks.runtime_kind(call.callee.string_value())
        arguments = list(call.arguments)
        if kind == stacks.FREE:
            ops, _ = built(call.location, lambda: _free(arguments[0], own))
        else:
            exhausted = checks.register(call, EXHAUSTED.format(what=STACK), ["i64", "i64"], name, ExecutionError)
            write = _WRITES[kind]
            ops, _ = built(call.location, lambda: write(arguments, Growth(own, exhausted, check_ops)))
        Rewriter.replace_op(call, ops, [])


@dataclass(frozen=True)
class Growth:
    """How a call grows a buffer in the arena: the thread's own error
    slot, the call's check that the arena holds what it needs, and the
    form of that check."""

    own: SSAValue
    exhausted: int
    check_ops: bool

    def reserve(self, header: SSAValue, elements: SSAValue, width: SSAValue) -> None:
        """Make the buffer hold ``elements`` elements of ``width`` bytes:
        grown (``_grow``) where it has reserved fewer bytes."""
        reserved = header_word(header, stacks.CAPACITY)
        needed = result(arith.MuliOp(elements, width))
        full = result(arith.CmpiOp(needed, reserved, "ugt"))
        grow = Block()
        with implicit_builder(grow):
            _grow(header, self.own, reserved, needed, self.exhausted, self.check_ops)
            scf.YieldOp()
        scf.IfOp(full, [], Region(grow))


def _width(element: Attribute) -> SSAValue:
    """The bytes an element takes in a buffer, a constant."""
    slot, count = slots(element)
    return constant(element_bytes(slot) * count)


def _push(arguments: Sequence[SSAValue], growth: Growth) -> None:
    """Store the value at the top, the size one more."""
    header, value = arguments
    size = header_word(header, stacks.SIZE)
    growth.reserve(header, result(arith.AddiOp(size, constant(1))), _width(value.type))
    for part, address in zip(to_slots(value), slot_addresses(header, size, value.type), strict=True):
        llvm.StoreOp(part, address)
    set_header_word(result(arith.AddiOp(size, constant(1))), header, stacks.SIZE)


def _fill(arguments: Sequence[SSAValue], growth: Growth) -> None:
    """Push ``count`` copies of the value at once (a record's room, a
    shadow's zeros)."""
    header, count, value = arguments
    size = header_word(header, stacks.SIZE)
    end = result(arith.AddiOp(size, count))
    growth.reserve(header, end, _width(value.type))
    stacks.fill_elements(header, size, end, value, value.type)


def _copy_elements(arguments: Sequence[SSAValue], growth: Growth) -> None:
    """Copy a run of elements from a stack into another (a record's stack
    part, to the store and back)."""
    target, at, source, first, count, width = arguments
    growth.reserve(target, result(arith.AddiOp(at, count)), width)
    stacks.copy_elements(target, at, source, first, count, width)


_WRITES: dict[str | None, Callable[[Sequence[SSAValue], Growth], None]] = {
    stacks.PUSH: _push,
    stacks.FILL: _fill,
    stacks.COPY: _copy_elements,
}


def _grow(
    header: SSAValue, own: SSAValue, reserved: SSAValue, needed: SSAValue, exhausted: int, check_ops: bool
) -> None:
    """Reserve at least ``needed`` bytes for the buffer: in place while it
    ends at the top, else at the top, twice what it needs, its elements
    copied there (a buffer without bytes moves, copying nothing)."""
    context = thread_context(own)
    top = load(context_word(context, TOP_WORD))
    data = header_word(header, stacks.DATA)
    moved = result(arith.CmpiOp(result(arith.AddiOp(data, reserved)), top, "ne"))
    start = result(arith.SelectOp(moved, top, data))
    twice = result(arith.AddiOp(needed, needed))
    bytes = rounded(result(arith.SelectOp(moved, twice, needed)))
    new_end = result(arith.AddiOp(start, bytes))
    reserve(context, own, new_end, exhausted, check_ops)
    copy = Block()
    with implicit_builder(copy):
        _copy(data, start, reserved)
        scf.YieldOp()
    scf.IfOp(moved, [], Region(copy))
    set_header_word(start, header, stacks.DATA)
    set_header_word(bytes, header, stacks.CAPACITY)


def _copy(source: SSAValue, target: SSAValue, bytes: SSAValue) -> None:
    """Copy ``bytes`` (a multiple of ``ALIGNMENT``) from address ``source``
    to address ``target``, a word at a time."""
    words = result(arith.IndexCastOp(result(arith.DivUIOp(bytes, constant(WORD_BYTES))), IndexType()))
    loop = scf.ForOp(
        constant(0, IndexType()), words, constant(1, IndexType()), [], Region(Block(arg_types=[IndexType()]))
    )
    with implicit_builder(loop.body.block):
        word = result(arith.IndexCastOp(loop.body.block.args[0], i64))
        from_, to = (
            result(llvm.GEPOp(result(llvm.IntToPtrOp(a)), [llvm.GEP_USE_SSA_VAL], i64, ssa_indices=[word]))
            for a in (source, target)
        )
        llvm.StoreOp(llvm.LoadOp(from_, i64).dereferenced_value, to)
        scf.YieldOp()


def _free(header: SSAValue, own: SSAValue) -> None:
    """Give the buffer back to the arena and zero the header."""
    start = header_word(header, stacks.DATA)
    release(thread_context(own), start, result(arith.AddiOp(start, header_word(header, stacks.CAPACITY))))
    zero = constant(0)
    for word in (stacks.DATA, stacks.SIZE, stacks.CAPACITY):
        set_header_word(zero, header, word)
