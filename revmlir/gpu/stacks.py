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
- a free gives the buffer back as a free of an array does (the top moves
  back if it is the newest) and zeroes the header;
- a pop is native code's (``revmlir.stack.pop.*`` never allocates), and so
  are the checks ``rev-lower-to-std`` puts around them (an empty stack, a
  stack freed holding values), which report through the error slot as
  every check does on the device.

``rev-gpu-outline`` rewrites every push and free of a kernel and of the
functions it calls (``place``), which the thread's own error slot gives the
arena's context, as it gives it to ``revmlir.report``.

Why these growths: in place costs no copy, so there is nothing to gain
from reserving ahead, and a lone stack takes only what it holds (so the
error's byte count is what a launch needs to run).  Stacks pushed in turn
(an adjoint's tapes) block each other; the one that moves leaves its old
bytes behind until an older allocation is given back or the iteration ends
(``revmlir.gpu.arena``), and doubling keeps both the copies and the bytes
left behind within a constant factor of what the stack holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func, llvm, scf
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import Block, Operation, Region, SSAValue
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
from revmlir.ir_utils import nested_ops
from revmlir.lowering import stacks
from revmlir.lowering.checked_code import display_name
from revmlir.lowering.native_types import element_bytes
from revmlir.lowering.stacks import constant, header_word, result, set_header_word, slot_addresses, slots, to_slots
from revmlir.runtime_checks import CheckTable

STACK = "a stack"
WORD_BYTES = 8
"""A moved buffer is copied in words of this many bytes."""
ARENA_KINDS = (stacks.PUSH, stacks.FREE)
"""The stack runtime functions whose device form is the arena's; the
device has no definition of them."""


def arena_calls(function: Operation, ops: Sequence[Operation] | None = None) -> list[func.CallOp]:
    """The pushes and frees of stacks in ``function`` (whose ``nested_ops``
    are ``ops`` where the caller has them)."""
    return [
        op
        for op in (nested_ops(function) if ops is None else ops)
        if isinstance(op, func.CallOp) and stacks.runtime_kind(op.callee.string_value()) in ARENA_KINDS
    ]


def place(function: Operation, own: SSAValue, checks: CheckTable, name: str, check_ops: bool) -> None:
    """Put the buffers of ``function``'s stacks in the arena of the thread
    whose own error slot is ``own``."""
    for call in arena_calls(function):
        if stacks.runtime_kind(call.callee.string_value()) == stacks.PUSH:
            _push(call, own, checks, name, check_ops)
        else:
            ops, _ = built(call.location, lambda: _free(call.arguments[0], own))
            Rewriter.replace_op(call, ops, [])


def _push(call: func.CallOp, own: SSAValue, checks: CheckTable, name: str, check_ops: bool) -> None:
    """Replace the push ``call`` by the arena's: grow a full buffer, then
    store the value at the top."""
    header, value = call.arguments
    slot, count = slots(value.type)
    width = element_bytes(slot) * count
    exhausted = checks.register(call, EXHAUSTED.format(what=STACK), ["i64", "i64"], display_name(name), ExecutionError)

    def build() -> None:
        size, reserved = header_word(header, stacks.SIZE), header_word(header, stacks.CAPACITY)
        needed = result(arith.MuliOp(result(arith.AddiOp(size, constant(1))), constant(width)))
        full = result(arith.CmpiOp(needed, reserved, "ugt"))
        grow = Block()
        with ImplicitBuilder(grow):
            _grow(header, own, reserved, needed, exhausted, check_ops)
            scf.YieldOp()
        scf.IfOp(full, [], Region(grow))
        for part, address in zip(to_slots(value), slot_addresses(header, size, value.type), strict=True):
            llvm.StoreOp(part, address)
        set_header_word(result(arith.AddiOp(size, constant(1))), header, stacks.SIZE)

    ops, _ = built(call.location, build)
    Rewriter.replace_op(call, ops, [])


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
    with ImplicitBuilder(copy):
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
    with ImplicitBuilder(loop.body.block):
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
