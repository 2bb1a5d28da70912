"""Stacks in native code: the representation that ``rev-lower-to-std``,
``convert-std-to-llvm`` and the native runtime agree on.

A stack (``!anc.stack<T>``) becomes a *header* of three 64-bit words, a
``memref<3xi64>``: the address of a heap buffer of ``T`` elements, the number
of elements, and the buffer's capacity in elements.

- ``rev-lower-to-std`` allocates the header of a local stack with
  ``memref.alloca`` in the function's frame and zeroes it (no buffer yet),
  reads the size with ``memref.load`` for the run-time checks, which it
  reports through the error slot like every other check, and calls three
  runtime functions for what needs the buffer: ``revmlir.stack.push.<T>``,
  ``revmlir.stack.pop.<T>`` and ``revmlir.stack.free``, declared in the
  module.
- ``convert-std-to-llvm`` defines these functions (``runtime_function``)
  instead of leaving them external: push grows the buffer geometrically with
  ``realloc``; pop of an empty stack yields zero and leaves the stack empty;
  free releases the buffer and zeroes the header.
- Python builds a header around a ``malloc``'d copy of a list argument, and
  after the call copies the elements back into the list and frees the buffer
  (``revmlir.runtime.native``).

Why this shape:

- A header in the frame, not on the heap, means ``anc.stack_free`` never has
  to decide who owns it: freeing a stack that was passed in (its header
  belongs to the caller, or to Python) and using a stack after freeing it
  both see an empty stack, as in the interpreter.  ``convert-std-to-llvm``
  places static allocas in the entry block, so a stack allocated in a loop
  reuses one header.
- As a memref, a header passes through ``func.call``, the C interface and
  the argument marshalling exactly like an array; the element type stays
  visible in the names of the push and pop functions.
- A total pop keeps a pop harmless where nothing checks it first: the
  lowering reports an empty stack before the pop (and the run stops
  there), but the cursor machine of checkpointed gradients pops without
  asking.

A failed run may leak: a stack that is never freed (the verifier does not
require ``anc.stack_free``) keeps its buffer, and so does one whose
``anc.stack_free`` is not reached, as after a failed check, which leaves the
run at once (``revmlir.runtime.guard``).  Buffers of stacks freed holding values
(a failed, or an unchecked, ``anc.stack_free``) are released all the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

HEADER = MemRefType(i64, [3])
"""``[buffer address, size, capacity]``."""
DATA, SIZE, CAPACITY = range(3)
MIN_CAPACITY = 8
"""Elements in a buffer's first allocation; it doubles when full."""

PREFIX = "revmlir.stack."
PUSH, POP, FREE = "push", "pop", "free"

PTR = llvm.LLVMPointerType()
_Definition = tuple[list[Attribute], Attribute | None, Region]
"""A runtime function's inputs, output and body."""
_LIBC = {
    "realloc": llvm.LLVMFunctionType([PTR, i64], PTR),
    "free": llvm.LLVMFunctionType([PTR], None),
}
MALLOC = llvm.LLVMFunctionType([i64], PTR)
"""``memref.alloc`` (ancilla arrays) calls ``malloc``, ``memref.dealloc``
``free``."""
MEMORY_FUNCTIONS = (*_LIBC, "malloc")
"""The C allocator, which the runtime and ancilla arrays call: declared, but
not pure."""
_EQ = IntegerAttr(0, i64)  # llvm.icmp eq


def runtime_name(kind: str, element: Attribute | None = None) -> str:
    """``revmlir.stack.push.f64``, ``revmlir.stack.pop.complex_f64``,
    ``revmlir.stack.free``."""
    if element is None:
        return PREFIX + kind
    return f"{PREFIX}{kind}.{re.sub(r'[^A-Za-z0-9]+', '_', str(element)).strip('_')}"


class _Body:
    """Appends llvm ops to the current block of one runtime function."""

    def __init__(self, inputs: list[Attribute]):
        self.region = Region()
        self.block = self.new_block(inputs)

    def new_block(self, types: list[Attribute] | None = None) -> Block:
        block = Block(arg_types=types or [])
        self.region.add_block(block)
        return block

    def __call__(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def emit(self, op: Operation) -> None:
        self.block.add_op(op)

    def const(self, value: int) -> SSAValue:
        return self(llvm.ConstantOp(IntegerAttr(value, i64), i64))

    def zero(self, type: Attribute) -> SSAValue:
        """Zero of a scalar or of a struct of scalars (a complex number)."""
        if isinstance(type, llvm.LLVMStructType):
            value = self(llvm.UndefOp(type))
            for index, member in enumerate(type.types.data):
                position = DenseArrayBase.from_list(i64, [index])
                value = self(llvm.InsertValueOp(position, value, self.zero(member)))
            return value
        attr = FloatAttr(0.0, type) if isinstance(type, AnyFloat) else IntegerAttr(0, type)
        return self(llvm.ConstantOp(attr, type))

    def field(self, header: SSAValue, index: int) -> SSAValue:
        """The address of one header word."""
        base = self(llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [0]), header, PTR))
        return self(llvm.GEPOp(base, [index], i64, inbounds=True))

    def element(self, header: SSAValue, index: SSAValue, element: Attribute) -> SSAValue:
        """The address of element ``index`` of the buffer."""
        data = self(llvm.IntToPtrOp(self(llvm.LoadOp(self.field(header, DATA), i64))))
        return self(
            llvm.GEPOp(data, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[index], inbounds=True)
        )


def size_of(emit: Callable[[Operation], SSAValue], element: Attribute) -> SSAValue:
    """``sizeof(element)`` as LLVM lays it out: the address of element 1 of
    an array at null (a constant once folded)."""
    null = emit(llvm.ZeroOp(result_types=[PTR]))
    return emit(llvm.PtrToIntOp(emit(llvm.GEPOp(null, [1], element)), i64))


def _push(header_type: Attribute, element: Attribute) -> _Definition:
    body = _Body([header_type, element])
    header, value = body.block.args
    size_slot = body.field(header, SIZE)
    size = body(llvm.LoadOp(size_slot, i64))
    capacity_slot = body.field(header, CAPACITY)
    capacity = body(llvm.LoadOp(capacity_slot, i64))
    grow, store = body.new_block(), body.new_block()
    full = body(llvm.ICmpOp(size, capacity, _EQ))
    body.emit(llvm.CondBrOp(full, grow, [], store, []))

    body.block = grow
    empty = body(llvm.ICmpOp(capacity, body.const(0), _EQ))
    doubled = body(llvm.AddOp(capacity, capacity))
    larger = body(llvm.SelectOp(empty, body.const(MIN_CAPACITY), doubled))
    width = size_of(body, element)
    data_slot = body.field(header, DATA)
    old = body(llvm.IntToPtrOp(body(llvm.LoadOp(data_slot, i64))))
    new = body(llvm.CallOp("realloc", old, body(llvm.MulOp(larger, width)), return_type=PTR))
    body.emit(llvm.StoreOp(body(llvm.PtrToIntOp(new, i64)), data_slot))
    body.emit(llvm.StoreOp(larger, capacity_slot))
    body.emit(llvm.BrOp(store))

    body.block = store
    body.emit(llvm.StoreOp(value, body.element(header, size, element)))
    body.emit(llvm.StoreOp(body(llvm.AddOp(size, body.const(1))), size_slot))
    body.emit(llvm.ReturnOp())
    return [header_type, element], None, body.region


def _pop(header_type: Attribute, element: Attribute) -> _Definition:
    body = _Body([header_type])
    (header,) = body.block.args
    size_slot = body.field(header, SIZE)
    size = body(llvm.LoadOp(size_slot, i64))
    empty, take = body.new_block(), body.new_block()
    is_empty = body(llvm.ICmpOp(size, body.const(0), _EQ))
    body.emit(llvm.CondBrOp(is_empty, empty, [], take, []))

    body.block = empty
    body.emit(llvm.ReturnOp(body.zero(element)))

    body.block = take
    top = body(llvm.SubOp(size, body.const(1)))
    body.emit(llvm.StoreOp(top, size_slot))
    body.emit(llvm.ReturnOp(body(llvm.LoadOp(body.element(header, top, element), element))))
    return [header_type], element, body.region


def _free(header_type: Attribute, element: Attribute | None) -> _Definition:
    body = _Body([header_type])
    (header,) = body.block.args
    data_slot = body.field(header, DATA)
    data = body(llvm.IntToPtrOp(body(llvm.LoadOp(data_slot, i64))))
    body.emit(llvm.CallOp("free", data, return_type=None))
    zero = body.const(0)
    for index in (DATA, SIZE, CAPACITY):
        body.emit(llvm.StoreOp(zero, body.field(header, index)))
    body.emit(llvm.ReturnOp())
    return [header_type], None, body.region


_DEFINITIONS: dict[str, Callable[[Attribute, Attribute | None], _Definition]] = {
    PUSH: _push,
    POP: _pop,
    FREE: _free,
}


def runtime_kind(name: str) -> str | None:
    """``push``/``pop``/``free`` for a runtime function's name, else None."""
    if not name.startswith(PREFIX):
        return None
    kind = name[len(PREFIX) :].split(".", 1)[0]
    return kind if kind in _DEFINITIONS else None


def runtime_function(
    name: str, inputs: list[Attribute], output: Attribute | None
) -> tuple[llvm.FuncOp, dict[str, llvm.LLVMFunctionType]]:
    """The llvm definition of the runtime function ``name`` declared with
    llvm types ``inputs -> output``, and the C library functions it calls."""
    kind = runtime_kind(name)
    assert kind is not None, name
    element = {PUSH: inputs[-1], POP: output}.get(kind)
    inputs, output, body = _DEFINITIONS[kind](inputs[0], element)
    function = llvm.FuncOp(
        name, llvm.LLVMFunctionType(inputs, output), linkage=llvm.LinkageAttr("internal"), body=body
    )
    called = {op.callee.string_value() for op in body.walk() if isinstance(op, llvm.CallOp) and op.callee}
    return function, {callee: _LIBC[callee] for callee in sorted(called)}
