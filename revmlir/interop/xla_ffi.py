"""Handlers of XLA's FFI for native entry points, generated as LLVM IR.

An XLA FFI custom call calls a C function ``XLA_FFI_Error *handler(
XLA_FFI_CallFrame *)`` (``xla/ffi/api/c_api.h``, API 0.3): the frame holds
the argument and result buffers (``XLA_FFI_Buffer``: dtype, data, rank,
dims), the execution stage, and the ``XLA_FFI_Api`` whose
``XLA_FFI_Error_Create`` makes an error.  XLA also calls the handler once
with a metadata extension in the frame, where it answers the API version
it was built for.

``compile_handler`` generates one handler per entry point: it checks every
buffer's dtype, rank and the sizes that must agree, fills the entry's
argument array (``revmlir.runtime.native``: a pointer per argument's
storage, then the error slot's descriptor) from the buffers with no Python
in between, calls the entry and returns ``NULL``.  A batched handler
(``Entry.batched``, for ``jax.vmap`` and ``jax.jacrev``) does so once per
row of a leading batch axis, in a loop of its own: one custom call for the
whole batch.  A scalar lives in a
slot of the handler's frame, loaded from its argument buffer and stored to
its result buffer after the call.  An array the entry writes runs in its
result buffer, which XLA aliases to the argument buffer
(``input_output_aliases``); where XLA gave two buffers anyway, the handler
copies the argument first.  An array the entry only reads is passed as XLA's
argument buffer.  A failed run-time check leaves its id and values in the
error slot; the handler then asks ``describe`` (a Python callback, called
only on that path) for the located message of revmlir's error and returns it
as an FFI error, which JAX raises.
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from revmlir.runtime.jit import JITModule, define_symbol, jit
from revmlir.runtime_checks import ERROR_SLOT

# -- the C ABI of xla/ffi/api/c_api.h on 64-bit targets (byte offsets) ---------

CALL_FRAME_SIZE = 168
"""``XLA_FFI_CallFrame_STRUCT_SIZE``: the frame up to its ``attrs``."""
FRAME_EXTENSION, FRAME_API, FRAME_STAGE = 8, 16, 32
FRAME_ARGS_SIZE, FRAME_ARGS, FRAME_RETS_SIZE, FRAME_RETS = 56, 72, 96, 112
"""``XLA_FFI_Args``/``XLA_FFI_Rets`` are embedded at 40 and 80: their
``size`` and their array of buffer pointers."""
EXECUTE = 3
"""``XLA_FFI_ExecutionStage_EXECUTE``: the only stage the handler acts in."""
EXTENSION_TYPE, METADATA_EXTENSION_METADATA = 8, 24
METADATA = 1
"""``XLA_FFI_Extension_Metadata``."""
METADATA_VERSION, METADATA_TRAITS = 8, 32
"""``XLA_FFI_Metadata``: its ``XLA_FFI_Api_Version`` (struct_size,
extension_start, major, minor: 24 bytes) and its traits."""
API_VERSION_SIZE, API_MAJOR, API_MINOR = 24, 0, 3
BUFFER_DTYPE, BUFFER_DATA, BUFFER_RANK, BUFFER_DIMS = 16, 24, 32, 40
API_ERROR_CREATE = 48
"""``XLA_FFI_Api``: struct_size, extension_start, api_version (24 bytes),
internal_api, then ``XLA_FFI_Error_Create``."""
ERROR_CREATE_ARGS_SIZE = 28
"""``XLA_FFI_Error_Create_Args``: struct_size, extension_start, message,
errc (an ``int``)."""
INVALID_ARGUMENT, UNKNOWN = 3, 2
DTYPES = {
    np.dtype(np.bool_): 1,
    np.dtype(np.int32): 4,
    np.dtype(np.int64): 5,
    np.dtype(np.float32): 11,
    np.dtype(np.float64): 12,
}
"""``XLA_FFI_DataType`` of the dtypes a handler passes."""

MESSAGE_BYTES = 2048
"""The buffer in the handler's frame that ``describe`` writes a failed
check's message into (longer messages are cut)."""

I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
SLOT_WORDS = ERROR_SLOT.get_shape()[0]

Row = Callable[[ir.Value], None]
"""What the handler emits for one row of a batch (its index)."""


@dataclass(frozen=True)
class Parameter:
    """One argument of the entry point, as the handler fills it."""

    dtype: np.dtype
    shape: tuple[int, ...] | None
    """An array's shape; ``None`` for a scalar."""
    source: int | None
    """The argument buffer holding its value before the call; ``None``
    for zero (a gradient seed no cotangent gives)."""
    result: int | None
    """The result buffer that holds its value after the call (an array the
    entry writes runs in it); ``None`` when nothing reads it after."""
    mapped: bool = False
    """Whether its argument buffer has the batch axis of a batched entry
    (one value per row), or holds the one value every row starts from."""

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)


@dataclass(frozen=True)
class Entry:
    """A native entry point and how a handler calls it."""

    address: int
    parameters: tuple[Parameter, ...]
    describe: Callable[[list[int]], str]
    """The message of the failed check an error slot holds."""
    label: str
    """What the handler's own errors name (``rv.to_jax(f)``)."""
    batched: bool = False
    """Whether the handler runs the entry once per row of a leading batch
    axis, which every result buffer has and the argument buffers of the
    ``mapped`` parameters."""

    @property
    def arguments(self) -> list[tuple[np.dtype, int]]:
        """The dtype and rank of each argument buffer, by position."""
        found = {p.source: (p.dtype, (p.rank or 0) + p.mapped) for p in self.parameters if p.source is not None}
        return [found[i] for i in range(len(found))]

    @property
    def results(self) -> list[tuple[np.dtype, int]]:
        """The dtype and rank of each result buffer, by position."""
        found = {p.result: (p.dtype, (p.rank or 0) + self.batched) for p in self.parameters if p.result is not None}
        return [found[i] for i in range(len(found))]

    @property
    def mapped(self) -> list[int]:
        """The argument buffers with the batch axis."""
        return sorted(p.source for p in self.parameters if p.mapped and p.source is not None)


@dataclass(frozen=True)
class Handler:
    """A compiled handler: its address (for ``jax.ffi.pycapsule``) and what
    must stay alive while XLA may call it."""

    address: int
    machine_code: JITModule
    entry: Entry


_handlers: dict[int, Handler] = {}
"""Every handler made, by key: XLA keeps registered targets for the life
of the process, so they (and the machine code they call) stay too."""
_keys = itertools.count()


def compile_handler(entry: Entry, keep_alive: object) -> Handler:
    """Machine code of a handler calling ``entry``; ``keep_alive`` owns the
    entry's machine code."""
    key = next(_keys)
    symbol = f"revmlir.ffi.entry.{key}"
    define_symbol(symbol, entry.address)
    _describe_callback()
    module = ir.Module(name=f"revmlir.ffi.{key}")
    _HandlerBuilder(module, entry, key, symbol).build()
    machine_code = jit(str(module))
    handler = Handler(machine_code.address("revmlir_ffi_handler"), machine_code, entry)
    _handlers[key] = handler
    _alive.append(keep_alive)
    return handler


_alive: list[object] = []

_DESCRIBE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p)
DESCRIBE_SYMBOL = "revmlir.ffi.describe"


def _describe(key: int, slot: ctypes._Pointer[ctypes.c_int64], out: int) -> None:
    """Write the message of the failed check in ``slot`` into ``out`` (a
    C string of at most ``MESSAGE_BYTES``).  Nothing may escape into the
    handler's C frame: every error becomes the message."""
    try:
        message = _handlers[key].entry.describe([slot[i] for i in range(SLOT_WORDS)])
    except BaseException as error:  # noqa: BLE001 - a C frame cannot take an exception
        message = f"revmlir: the failed check could not be described ({type(error).__name__}: {error})"
    data = message.encode("utf-8", "replace")[: MESSAGE_BYTES - 1] + b"\0"
    ctypes.memmove(out, data, len(data))


_callback: list[object] = []


def _describe_callback() -> None:
    """Make ``describe`` callable from native code (once)."""
    if not _callback:
        function = _DESCRIBE(_describe)
        _callback.append(function)
        define_symbol(DESCRIBE_SYMBOL, ctypes.cast(function, ctypes.c_void_p).value or 0)


class _HandlerBuilder:
    """The LLVM IR of one handler."""

    def __init__(self, module: ir.Module, entry: Entry, key: int, symbol: str):
        self.module, self.entry, self.key = module, entry, key
        self.function = ir.Function(module, ir.FunctionType(PTR, [PTR]), "revmlir_ffi_handler")
        self.callee = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), symbol)
        self.describe = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64, PTR, PTR]), DESCRIBE_SYMBOL)
        self.memcpy = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64]), "memcpy")
        self.memset = ir.Function(module, ir.FunctionType(PTR, [PTR, I32, I64]), "memset")
        self.builder = ir.IRBuilder(self.function.append_basic_block("entry"))
        self.frame = self.function.args[0]
        self.strings = 0

    # -- helpers -------------------------------------------------------------

    def load(self, base: ir.Value, offset: int | ir.Value, type: ir.Type) -> ir.Value:
        return self.builder.load(self.address(base, offset), typ=type)

    def address(self, base: ir.Value, offset: int | ir.Value) -> ir.Value:
        index = ir.Constant(I64, offset) if isinstance(offset, int) else offset
        return self.builder.gep(base, [index], source_etype=I8)

    def alloca(self, type: ir.Type) -> ir.Value:
        """Memory in the handler's frame, as an opaque pointer (which
        llvmlite's bitcast does not give: ``revmlir.runtime.guard``)."""
        b = self.builder
        return b.inttoptr(b.ptrtoint(b.alloca(type), I64), PTR)

    def store(self, value: ir.Value, base: ir.Value, offset: int) -> None:
        self.builder.store(value, self.address(base, offset))

    def string(self, text: str) -> ir.Value:
        data = bytearray(text.encode("utf-8") + b"\0")
        constant = ir.Constant(ir.ArrayType(I8, len(data)), data)
        variable = ir.GlobalVariable(self.module, constant.type, f"message.{self.strings}")
        variable.global_constant, variable.linkage, variable.initializer = True, "internal", constant
        self.strings += 1
        return variable

    def error(self, code: int, message: ir.Value) -> None:
        """Return an FFI error carrying ``message`` (a C string)."""
        b = self.builder
        api = self.load(self.frame, FRAME_API, PTR)
        create = self.load(api, API_ERROR_CREATE, ir.FunctionType(PTR, [PTR]).as_pointer())
        args = self.alloca(ir.ArrayType(I8, 32))
        self.store(ir.Constant(I64, ERROR_CREATE_ARGS_SIZE), args, 0)
        self.store(ir.Constant(PTR, None), args, 8)
        self.store(message, args, 16)
        self.store(ir.Constant(I32, code), args, 24)
        b.ret(b.call(create, [args]))

    def require(self, condition: ir.Value, message: str) -> None:
        """Return an invalid-argument error unless ``condition``."""
        with self.builder.if_then(self.builder.not_(condition), likely=False):
            self.error(INVALID_ARGUMENT, self.string(f"{self.entry.label}: {message}"))

    def buffers(
        self, count_offset: int, array_offset: int, types: list[tuple[np.dtype, int]], what: str
    ) -> list[ir.Value]:
        """The frame's argument (result) buffers, checked against ``types``."""
        b = self.builder
        count = self.load(self.frame, count_offset, I64)
        self.require(
            b.icmp_signed("==", count, ir.Constant(I64, len(types))), f"the custom call takes {len(types)} {what}s"
        )
        pointers = self.load(self.frame, array_offset, PTR)
        found = []
        for i, (dtype, rank) in enumerate(types):
            buffer = self.load(pointers, 8 * i, PTR)
            matches = b.and_(
                b.icmp_signed("==", self.load(buffer, BUFFER_DTYPE, I32), ir.Constant(I32, DTYPES[dtype])),
                b.icmp_signed("==", self.load(buffer, BUFFER_RANK, I64), ir.Constant(I64, rank)),
            )
            self.require(matches, f"{what} #{i} must be a buffer of {dtype} of rank {rank}")
            found.append(buffer)
        return found

    def dims(self, buffer: ir.Value, rank: int) -> list[ir.Value]:
        dims = self.load(buffer, BUFFER_DIMS, PTR)
        return [self.load(dims, 8 * d, I64) for d in range(rank)]

    # -- the handler ---------------------------------------------------------------

    def build(self) -> None:
        b = self.builder
        self.answer_metadata()
        size = self.load(self.frame, 0, I64)
        self.require(
            b.icmp_unsigned(">=", size, ir.Constant(I64, CALL_FRAME_SIZE)), "XLA's call frame is older than XLA FFI 0.3"
        )
        with b.if_then(b.icmp_signed("!=", self.load(self.frame, FRAME_STAGE, I32), ir.Constant(I32, EXECUTE))):
            b.ret(ir.Constant(PTR, None))
        arguments = self.buffers(FRAME_ARGS_SIZE, FRAME_ARGS, self.entry.arguments, "argument")
        results = self.buffers(FRAME_RETS_SIZE, FRAME_RETS, self.entry.results, "result")
        rows = self.rows(arguments, results)
        parameters = self.entry.parameters
        pointers = self.alloca(ir.ArrayType(PTR, len(parameters) + 1))
        before: list[Row] = []
        after: list[Row] = []
        for i, p in enumerate(parameters):
            if p.rank is None:
                storage = self.scalar(p, arguments, results, before, after)
            else:
                storage = self.array(p, arguments, results, before)
            self.store(storage, pointers, 8 * i)
        slot = self.alloca(ir.ArrayType(I64, SLOT_WORDS))
        for word in range(SLOT_WORDS):
            self.store(ir.Constant(I64, 0), slot, 8 * word)  # the jump word too: no run context
        descriptor = self.alloca(ir.ArrayType(I64, 2))
        self.store(b.ptrtoint(slot, I64), descriptor, 0)
        self.store(ir.Constant(I64, SLOT_WORDS), descriptor, 8)
        self.store(descriptor, pointers, 8 * len(parameters))

        def run(row: ir.Value) -> None:
            for fill in before:
                fill(row)
            b.call(self.callee, [pointers])
            # a failed check leaves the slot set and ends the handler, so a
            # slot still zero after a run is ready for the next row
            failed = b.icmp_signed("!=", self.load(slot, 0, I64), ir.Constant(I64, 0))
            with b.if_then(failed, likely=False):
                message = self.alloca(ir.ArrayType(I8, MESSAGE_BYTES))
                b.call(self.describe, [ir.Constant(I64, self.key), slot, message])
                self.error(UNKNOWN, message)
            for store in after:
                store(row)

        self.loop(rows, run)
        b.ret(ir.Constant(PTR, None))

    def rows(self, arguments: list[ir.Value], results: list[ir.Value]) -> ir.Value:
        """How many times the entry runs: the size of the leading batch axis
        that the mapped argument buffers and every result buffer share, or
        once."""
        entry = self.entry
        if not entry.batched:
            return ir.Constant(I64, 1)
        batched = [(f"argument #{i}", arguments[i]) for i in entry.mapped] + [
            (f"result #{i}", buffer) for i, buffer in enumerate(results)
        ]
        (first, buffer), *others = batched
        rows = self.dims(buffer, 1)[0]
        for what, other in others:
            same = self.builder.icmp_signed("==", self.dims(other, 1)[0], rows)
            self.require(same, f"{what} must have the batch size of {first}")
        return rows

    def loop(self, rows: ir.Value, body: Row) -> None:
        """``body`` for each row, 0 to ``rows`` - 1."""
        b = self.builder
        counter = self.alloca(I64)
        b.store(ir.Constant(I64, 0), counter)
        head, step, done = (self.function.append_basic_block(name) for name in ("row", "run", "done"))
        b.branch(head)
        b.position_at_end(head)
        row = b.load(counter, typ=I64)
        b.cbranch(b.icmp_signed("<", row, rows), step, done)
        b.position_at_end(step)
        body(row)
        b.store(b.add(row, ir.Constant(I64, 1)), counter)
        b.branch(head)
        b.position_at_end(done)

    def at(self, data: ir.Value, batched: bool, row_bytes: ir.Value, row: ir.Value) -> ir.Value:
        """Where a buffer's row starts (the buffer itself when it has no
        batch axis)."""
        return self.address(data, self.builder.mul(row, row_bytes)) if batched else data

    def answer_metadata(self) -> None:
        """The metadata query: the API version the handler speaks, no traits."""
        b = self.builder
        extension = self.load(self.frame, FRAME_EXTENSION, PTR)
        with b.if_then(b.icmp_unsigned("!=", extension, ir.Constant(PTR, None)), likely=False):
            with b.if_then(b.icmp_signed("==", self.load(extension, EXTENSION_TYPE, I32), ir.Constant(I32, METADATA))):
                metadata = self.load(extension, METADATA_EXTENSION_METADATA, PTR)
                self.store(ir.Constant(I64, API_VERSION_SIZE), metadata, METADATA_VERSION)
                self.store(ir.Constant(PTR, None), metadata, METADATA_VERSION + 8)
                self.store(ir.Constant(I32, API_MAJOR), metadata, METADATA_VERSION + 16)
                self.store(ir.Constant(I32, API_MINOR), metadata, METADATA_VERSION + 20)
                self.store(ir.Constant(I32, 0), metadata, METADATA_TRAITS)
                b.ret(ir.Constant(PTR, None))

    def scalar(
        self,
        p: Parameter,
        arguments: list[ir.Value],
        results: list[ir.Value],
        before: list[Row],
        after: list[Row],
    ) -> ir.Value:
        """A slot holding the scalar, loaded (or zeroed) before each run
        and stored to its result after it: every row starts afresh, as the
        arrays do."""
        b = self.builder
        slot = self.alloca(I64)  # 8 bytes, aligned for any scalar
        width = ir.Constant(I64, p.dtype.itemsize)
        if p.source is None:
            before.append(lambda row: b.store(ir.Constant(I64, 0), slot))
        else:
            given = self.load(arguments[p.source], BUFFER_DATA, PTR)
            before.append(lambda row: b.call(self.memcpy, [slot, self.at(given, p.mapped, width, row), width]))
        if p.result is not None:
            target = self.load(results[p.result], BUFFER_DATA, PTR)
            batched = self.entry.batched
            after.append(lambda row: b.call(self.memcpy, [self.at(target, batched, width, row), slot, width]))
        return slot

    def array(self, p: Parameter, arguments: list[ir.Value], results: list[ir.Value], before: list[Row]) -> ir.Value:
        """The descriptor ``[data, dims…]`` of the buffer (the row of it)
        the entry runs on."""
        b = self.builder
        rank = p.rank or 0
        if p.result is not None:
            home, batched = results[p.result], self.entry.batched
        else:
            # The handler gives every array without a source a result buffer.
            assert p.source is not None, p
            home, batched = arguments[p.source], p.mapped
        dims = self.dims(home, rank + batched)[batched:]
        data = self.load(home, BUFFER_DATA, PTR)
        nbytes = ir.Constant(I64, p.dtype.itemsize)
        for d in dims:
            nbytes = b.mul(nbytes, d)
        descriptor = self.alloca(ir.ArrayType(I64, 1 + rank))
        for d, value in enumerate(dims):
            self.store(value, descriptor, 8 * (1 + d))
        given: ir.Value | None = None
        if p.result is not None and p.source is not None:
            source = arguments[p.source]
            same = ir.Constant(ir.IntType(1), 1)
            for d, e in zip(dims, self.dims(source, rank + p.mapped)[p.mapped :]):
                same = b.and_(same, b.icmp_signed("==", d, e))
            self.require(same, f"result #{p.result} must have the shape of argument #{p.source}")
            given = self.load(source, BUFFER_DATA, PTR)

        def fill(row: ir.Value) -> None:
            at = self.at(data, batched, nbytes, row)
            self.store(b.ptrtoint(at, I64), descriptor, 0)
            if p.result is not None and given is None:
                b.call(self.memset, [at, ir.Constant(I32, 0), nbytes])
            elif given is not None:
                start = self.at(given, p.mapped, nbytes, row)
                with b.if_then(b.icmp_unsigned("!=", start, at)):
                    b.call(self.memcpy, [at, start, nbytes])

        before.append(fill)
        return descriptor
