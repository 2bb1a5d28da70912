"""Stacks in native code: the representation that ``rev-lower-to-std``,
``convert-std-to-llvm`` and the native runtime agree on.

A stack (``!anc.stack<T>``) becomes a *header* of three 64-bit words, a
``memref<3xi64>``: the address of a heap buffer of ``T`` elements, the number
of elements, and the buffer's capacity in elements.

- ``rev-lower-to-std`` allocates the header of a local stack with
  ``memref.alloca`` in the function's frame and zeroes it (no buffer yet),
  reads the size with ``memref.load`` for the run-time checks (and lowers
  it with ``memref.store`` to drop a record), which it
  reports through the error slot like every other check, and calls
  runtime functions for what needs the buffer: ``revmlir.stack.push.<T>``,
  ``revmlir.stack.pop.<T>`` and ``revmlir.stack.free``, private functions of
  the module (``define_runtime``), and for whole records (snapshots and
  zero-padded shadows) ``revmlir.stack.fill.<T>``, ``….put.<T>``,
  ``….get.<T>`` and ``revmlir.stack.copy``: push grows the buffer
  geometrically with ``realloc``, and
  leaves the stack as it was where it cannot (the caller checks the size),
  fill pushes many copies of a value after one growth; pop of an empty
  stack yields zero and leaves the stack empty; put and get write and read
  an element below the top, which the caller knows is there; copy moves a
  run of elements from one stack into another, one ``memmove`` after the
  growth it needs;
  free releases the buffer and zeroes the header.
- The bodies are std (func, scf, arith, memref, complex) but for the buffer
  itself, which only an address in the header points to: ``llvm`` ops
  convert the address (``llvm.inttoptr``), address, load and store elements
  and call ``realloc`` and ``free``.  ``convert-std-to-llvm`` translates
  them like any function, and upstream MLIR's ``convert-to-llvm`` too: std
  IR that uses stacks needs nothing but the C library, whichever pipeline
  lowers it.
- On the GPU a stack's buffer is the thread's per-thread arena, and pushes,
  fills, copies and frees are the arena's (``revmlir.gpu.stacks``): the
  header's ``CAPACITY`` word holds the bytes reserved there; pops, puts and
  gets are the same, and a fill or copy writes its elements as here
  (``fill_elements``, ``copy_elements``).
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

from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    i1,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from revmlir.implicit_builder import implicit_builder
from revmlir.safety import stack_limit

HEADER = MemRefType(i64, [3])
"""``[buffer address, size, capacity]``."""
DATA, SIZE, CAPACITY = range(3)
MIN_CAPACITY = 8
"""Elements in a buffer's first allocation; it doubles when full."""

PREFIX = "revmlir.stack."
PUSH, POP, FREE = "push", "pop", "free"
FILL, PUT, GET, COPY = "fill", "put", "get", "copy"
"""Whole records (``anc.snapshot``, ``anc.restore``, ``anc.zero_pad``): push
many copies of a value at once, write and read an element below the top,
copy a stack's elements into another (one function for every element type:
it takes the elements' bytes)."""
MEMMOVE = "llvm.memmove.p0.p0.i64"

PTR = llvm.LLVMPointerType()
_LIBC = {
    "realloc": llvm.LLVMFunctionType([PTR, i64], PTR),
    "free": llvm.LLVMFunctionType([PTR], None),
}
MALLOC = llvm.LLVMFunctionType([i64], PTR)
"""``memref.alloc`` (ancilla arrays) calls ``malloc``, ``memref.dealloc``
``free``."""
CALLOC = llvm.LLVMFunctionType([i64, i64], PTR)
"""A ``memref.alloc`` marked ``ZEROED_ATTR`` calls ``calloc``."""
MEMORY_FUNCTIONS = (*_LIBC, "malloc", "calloc")
"""The C allocator, which the runtime and ancilla arrays call: declared, but
not pure."""
ZEROED_ATTR = "rev.zeroed"
"""On a ``memref.alloc`` of native code: its memory is zeroed by the
allocator (``calloc``), so no fill follows it (``rev-host-safety`` marks the
heap allocation of an ancilla array so and removes its fill).  An array
``calloc`` gives is new pages of the kernel's, already zero, which a fill
would touch all of."""


def runtime_name(kind: str, element: Attribute | None = None) -> str:
    """``revmlir.stack.push.f64``, ``revmlir.stack.pop.complex_f64``,
    ``revmlir.stack.free``."""
    if element is None:
        return PREFIX + kind
    return f"{PREFIX}{kind}.{re.sub(r'[^A-Za-z0-9]+', '_', str(element)).strip('_')}"


def size_of(emit: Callable[[Operation], SSAValue], element: Attribute) -> SSAValue:
    """``sizeof(element)`` as LLVM lays it out: the address of element 1 of
    an array at null (a constant once folded)."""
    null = emit(llvm.ZeroOp(result_types=[PTR]))
    return emit(llvm.PtrToIntOp(emit(llvm.GEPOp(null, [1], element)), i64))


def result(op: Operation) -> SSAValue:
    """``op``'s result (``implicit_builder`` has inserted ``op``)."""
    return op.results[0]


def constant(value: int, type: Attribute = i64) -> SSAValue:
    return result(arith.ConstantOp(IntegerAttr(value, type)))


def header_word(header: SSAValue, word: int) -> SSAValue:
    """Word ``DATA``, ``SIZE`` or ``CAPACITY`` of a stack's header."""
    return result(memref.LoadOp.get(header, [constant(word, IndexType())]))


def set_header_word(value: SSAValue, header: SSAValue, word: int) -> None:
    memref.StoreOp.get(value, header, [constant(word, IndexType())])


def _buffer(header: SSAValue) -> SSAValue:
    return result(llvm.IntToPtrOp(header_word(header, DATA)))


def slots(element: Attribute) -> tuple[Attribute, int]:
    """How the buffer holds an element: as ``count`` scalars of one type (a
    complex number as its two parts, an ``index`` as ``i64``)."""
    if isinstance(element, ComplexType):
        return element.element_type, 2
    return (i64 if isinstance(element, IndexType) else element), 1


def slot_addresses(header: SSAValue, position: SSAValue, element: Attribute) -> list[SSAValue]:
    """The addresses of the scalars of the element at ``position``."""
    return element_addresses(_buffer(header), position, element)


def element_addresses(data: SSAValue, position: SSAValue, element: Attribute) -> list[SSAValue]:
    """The addresses of the scalars of the element at ``position`` of the
    buffer at ``data``."""
    slot, count = slots(element)
    first = result(arith.MuliOp(position, constant(count)))
    indices = [first] + [result(arith.AddiOp(first, constant(j))) for j in range(1, count)]
    return [
        result(llvm.GEPOp(data, [llvm.GEP_USE_SSA_VAL], slot, ssa_indices=[index], inbounds=True)) for index in indices
    ]


def to_slots(value: SSAValue) -> list[SSAValue]:
    """A value as the scalars ``slots`` stores it as."""
    if isinstance(value.type, ComplexType):
        return [result(complexd.ReOp(value)), result(complexd.ImOp(value))]
    if isinstance(value.type, IndexType):
        return [result(arith.IndexCastOp(value, i64))]
    return [value]


def _from_slots(parts: list[SSAValue], element: Attribute) -> SSAValue:
    if isinstance(element, ComplexType):
        return result(complexd.CreateOp(*parts, result_type=element))
    if isinstance(element, IndexType):
        return result(arith.IndexCastOp(parts[0], element))
    return parts[0]


def _zero(element: Attribute) -> SSAValue:
    if isinstance(element, ComplexType):
        zero = _zero(element.element_type)
        return result(complexd.CreateOp(zero, zero, result_type=element))
    if isinstance(element, AnyFloat):
        return result(arith.ConstantOp(FloatAttr(0.0, element)))
    return constant(0, element)


def element_width(emit: Callable[[Operation], SSAValue], element: Attribute) -> SSAValue:
    """The bytes of an element in the buffer, its stride: the one width
    the runtime grows buffers and finds positions by, and the width code
    that copies elements (``revmlir.stack.copy``) passes."""
    slot, count = slots(element)
    return emit(arith.MuliOp(size_of(emit, slot), emit(arith.ConstantOp(IntegerAttr(count, i64)))))


def _grow(header: SSAValue, needed: SSAValue, width: SSAValue) -> None:
    """Grow the buffer of elements of ``width`` bytes, if it holds fewer
    than ``needed`` elements, to ``MIN_CAPACITY`` elements, then to twice
    its capacity, or to ``needed`` where that is more, with ``realloc``,
    but to no more than ``most_elements``.  A buffer that cannot grow
    (``realloc`` fails, or ``needed`` passes ``most_elements``: the size is
    then ``SIZE_MAX``, which ``realloc`` refuses) stays as it was."""
    capacity = header_word(header, CAPACITY)
    full = result(arith.CmpiOp(needed, capacity, "ugt"))
    grow = scf.IfOp(full, [], Region(Block()), Region(Block()))
    with implicit_builder(grow.true_region):
        empty = result(arith.CmpiOp(capacity, constant(0), "eq"))
        doubled = result(arith.AddiOp(capacity, capacity))
        wanted = result(arith.MaxUIOp(result(arith.SelectOp(empty, constant(MIN_CAPACITY), doubled)), needed))
        most = result(arith.DivUIOp(constant(stack_limit()), width))
        larger = result(arith.MinUIOp(wanted, most))
        fits = result(arith.CmpiOp(needed, most, "ule"))
        bytes = result(arith.SelectOp(fits, result(arith.MuliOp(larger, width)), constant(-1)))
        grown = result(llvm.PtrToIntOp(result(llvm.CallOp("realloc", _buffer(header), bytes, return_type=PTR)), i64))
        moved = result(arith.CmpiOp(grown, constant(0), "ne"))
        set_header_word(result(arith.SelectOp(moved, grown, header_word(header, DATA))), header, DATA)
        set_header_word(result(arith.SelectOp(moved, larger, capacity)), header, CAPACITY)
        scf.YieldOp()
    with implicit_builder(grow.false_region):
        scf.YieldOp()


def most_elements(width: int, limit: int) -> int:
    """The most elements of ``width`` bytes that a stack holds: as many as
    ``limit`` bytes (``stack_limit()``) take.  ``_grow`` stops its
    doubling there, so that a stack fails to grow where it would pass them
    and nowhere else, whatever pushes, fills and copies grew it: the
    interpreter, whose stacks are lists, stops its pushes and records at
    the same size (a doubling that passed the bound failed while the
    elements needed still fit, at a size that depended on how the buffer
    had grown)."""
    return limit // width


def _push(function: func.FuncOp, element: Attribute | None) -> None:
    """Grows a full buffer (``_grow``), then stores the value at the top.
    Where the buffer cannot grow the stack stays as it was, the value not
    pushed: the caller sees the size unchanged and stops the run
    (``revmlir.lowering.host_safety``)."""
    assert element is not None
    header, value = function.body.block.args
    size = header_word(header, SIZE)
    _grow(header, result(arith.AddiOp(size, constant(1))), element_width(result, element))
    room = result(arith.CmpiOp(size, header_word(header, CAPACITY), "ult"))
    store = scf.IfOp(room, [], Region(Block()), Region(Block()))
    with implicit_builder(store.true_region):
        for part, address in zip(to_slots(value), slot_addresses(header, size, element), strict=True):
            llvm.StoreOp(part, address)
        set_header_word(result(arith.AddiOp(size, constant(1))), header, SIZE)
        scf.YieldOp()
    with implicit_builder(store.false_region):
        scf.YieldOp()
    func.ReturnOp()


def _fill(function: func.FuncOp, element: Attribute | None) -> None:
    """Pushes ``count`` copies of the value at once: one growth for all of
    them (``_grow``) and a loop of stores that LLVM makes a ``memset`` for
    zeros.  Where the buffer cannot grow the stack stays as it was; the
    caller checks the size."""
    assert element is not None
    header, count, value = function.body.block.args
    size = header_word(header, SIZE)
    end = result(arith.AddiOp(size, count))
    _grow(header, end, element_width(result, element))
    room = result(arith.CmpiOp(end, header_word(header, CAPACITY), "ule"))
    store = scf.IfOp(room, [], Region(Block()), Region(Block()))
    with implicit_builder(store.true_region):
        fill_elements(header, size, end, value, element)
        scf.YieldOp()
    with implicit_builder(store.false_region):
        scf.YieldOp()
    func.ReturnOp()


def fill_elements(header: SSAValue, size: SSAValue, end: SSAValue, value: SSAValue, element: Attribute) -> None:
    """Store ``value`` at the positions from ``size``, the stack's, to
    ``end``, which the buffer has room for, and make ``end`` the size: a
    loop of stores that LLVM makes a ``memset`` for zeros (a fill, on the
    host and on the GPU alike)."""
    data = _buffer(header)
    first, last = (result(arith.IndexCastOp(v, IndexType())) for v in (size, end))
    loop = scf.ForOp(first, last, constant(1, IndexType()), [], Region(Block(arg_types=[IndexType()])))
    with implicit_builder(loop.body.block):
        position = result(arith.IndexCastOp(loop.body.block.args[0], i64))
        for part, address in zip(to_slots(value), element_addresses(data, position, element), strict=True):
            llvm.StoreOp(part, address)
        scf.YieldOp()
    set_header_word(end, header, SIZE)


def _put(function: func.FuncOp, element: Attribute | None) -> None:
    """Overwrites the element at a position below the size (the caller
    knows it is there)."""
    assert element is not None
    header, position, value = function.body.block.args
    for part, address in zip(to_slots(value), slot_addresses(header, position, element), strict=True):
        llvm.StoreOp(part, address)
    func.ReturnOp()


def _get(function: func.FuncOp, element: Attribute | None) -> None:
    """The element at a position below the size, left in place."""
    assert element is not None
    header, position = function.body.block.args
    slot, _ = slots(element)
    parts = [result(llvm.LoadOp(a, slot)) for a in slot_addresses(header, position, element)]
    func.ReturnOp(_from_slots(parts, element))


def _copy(function: func.FuncOp, element: Attribute | None) -> None:
    """Writes ``count`` elements of ``width`` bytes from position ``first``
    of a source stack at position ``at`` of the target, with one
    ``memmove``, after growing the target where they pass its capacity
    (``_grow``), and raises the target's size to ``at + count`` where it was
    less.  Where the buffer cannot grow the stack stays as it was; the
    caller checks the size.  The source's elements are below its size (the
    caller knows they are there)."""
    target, at, source, first, count, width = function.body.block.args
    end = result(arith.AddiOp(at, count))
    _grow(target, end, width)
    room = result(arith.CmpiOp(end, header_word(target, CAPACITY), "ule"))
    store = scf.IfOp(room, [], Region(Block()), Region(Block()))
    with implicit_builder(store.true_region):
        copy_elements(target, at, source, first, count, width)
        scf.YieldOp()
    with implicit_builder(store.false_region):
        scf.YieldOp()
    func.ReturnOp()


def copy_elements(
    target: SSAValue, at: SSAValue, source: SSAValue, first: SSAValue, count: SSAValue, width: SSAValue
) -> None:
    """Write ``count`` elements of ``width`` bytes from position ``first``
    of ``source``'s buffer at position ``at`` of ``target``'s, which has
    room for them, with one ``memmove``, and raise the target's size to
    ``at + count`` where it was less (a copy, on the host and on the GPU
    alike)."""
    to, start = (
        result(
            llvm.GEPOp(
                _buffer(header),
                [llvm.GEP_USE_SSA_VAL],
                i8,
                ssa_indices=[result(arith.MuliOp(position, width))],
                inbounds=True,
            )
        )
        for header, position in ((target, at), (source, first))
    )
    bytes = result(arith.MuliOp(count, width))
    llvm.CallIntrinsicOp(MEMMOVE, [to, start, bytes, result(arith.ConstantOp(IntegerAttr(0, i1)))], [])
    end = result(arith.AddiOp(at, count))
    set_header_word(result(arith.MaxUIOp(header_word(target, SIZE), end)), target, SIZE)


def _pop(function: func.FuncOp, element: Attribute | None) -> None:
    """The top element, removed; zero from an empty stack, which stays
    empty."""
    assert element is not None
    (header,) = function.body.block.args
    size = header_word(header, SIZE)
    empty = result(arith.CmpiOp(size, constant(0), "eq"))
    take = scf.IfOp(empty, [element], Region(Block()), Region(Block()))
    with implicit_builder(take.true_region):
        scf.YieldOp(_zero(element))
    with implicit_builder(take.false_region):
        top = result(arith.SubiOp(size, constant(1)))
        set_header_word(top, header, SIZE)
        slot, _ = slots(element)
        parts = [result(llvm.LoadOp(a, slot)) for a in slot_addresses(header, top, element)]
        scf.YieldOp(_from_slots(parts, element))
    func.ReturnOp(take.results[0])


def _free(function: func.FuncOp, element: Attribute | None) -> None:
    """Releases the buffer and zeroes the header."""
    (header,) = function.body.block.args
    llvm.CallOp("free", _buffer(header), return_type=None)
    zero = constant(0)
    for word in (DATA, SIZE, CAPACITY):
        set_header_word(zero, header, word)
    func.ReturnOp()


_DEFINITIONS: dict[str, Callable[[func.FuncOp, Attribute | None], None]] = {
    PUSH: _push,
    POP: _pop,
    FREE: _free,
    FILL: _fill,
    PUT: _put,
    GET: _get,
    COPY: _copy,
}


def runtime_kind(name: str) -> str | None:
    """``push``, ``pop``, ``free``, ``fill``, ``put``, ``get`` or ``copy`` for a
    runtime function's name, else None."""
    if not name.startswith(PREFIX):
        return None
    kind = name[len(PREFIX) :].split(".", 1)[0]
    return kind if kind in _DEFINITIONS else None


def define_runtime(module: ModuleOp) -> None:
    """Give every stack runtime function ``module`` declares its body, and
    declare the C library functions the bodies call (``llvm.func``, which
    upstream's ``convert-to-llvm`` also uses for them), so that the module
    needs nothing but the C library, whichever pipeline lowers it."""
    called: set[str] = set()
    for declaration in list(module.ops):
        if not isinstance(declaration, func.FuncOp) or not declaration.is_declaration:
            continue
        kind = runtime_kind(declaration.sym_name.data)
        if kind is None:
            continue
        inputs, outputs = declaration.function_type.inputs.data, declaration.function_type.outputs.data
        element = outputs[0] if kind in (POP, GET) else inputs[-1] if kind in (PUSH, FILL, PUT) else None
        function = func.FuncOp(declaration.sym_name.data, declaration.function_type, visibility="private")
        hints = (
            ("header", "count" if kind == FILL else "position", "value")
            if kind in (FILL, PUT, GET)
            else ("target", "at", "source", "first", "count", "width")
            if kind == COPY
            else ("header", "value")
        )
        for arg, hint in zip(function.body.block.args, hints):
            arg.name_hint = hint
        with implicit_builder(function.body):
            _DEFINITIONS[kind](function, element)
        called |= {op.callee.string_value() for op in function.walk() if isinstance(op, llvm.CallOp) and op.callee}
        module.body.block.insert_op_before(function, declaration)
        declaration.detach()
        declaration.erase()
    present = {op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp)}
    for name in sorted(called - present):
        declaration = llvm.FuncOp(name, _LIBC[name], linkage=llvm.LinkageAttr("external"))
        module.body.block.insert_op_before(declaration, module.body.block.first_op)
