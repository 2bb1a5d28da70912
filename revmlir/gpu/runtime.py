"""Launching compiled kernels (``revmlir.gpu`` programs) on NVIDIA GPUs.

The runtime talks to the CUDA driver through ``cuda.bindings.driver`` (the
``revmlir[cuda]`` extra), imported at the first launch so that ``import
revmlir`` works, and imports nothing of CUDA, where no GPU is.  A program's
PTX is loaded once per device by the driver's JIT.  Every kernel is a
grid-stride loop, so any grid runs it: a launch's grid and block come from
the driver's occupancy calculator (its register use) and, where the
kernel's loop bounds are known from its arguments, from the loop's trip
count (``revmlir.gpu.launch_shape``).

Arguments follow the kernel ABI of ``docs/gpu.md``: an array is its data
pointer and its sizes, a scalar its value (a complex number its two parts),
then the error slot, ``GPU_ERROR_WORDS`` words the kernel's first failing
thread fills with ``[check id, payload…, element, …]``.  The host
raises the error the CPU raises for that check, at the same source location,
with the element appended.  A kernel with ancilla arrays of a dynamic size
or stacks also takes a per-thread arena (``revmlir.gpu.arena``): the address of one
buffer of ``bytes per thread`` for every thread of the grid, then the bytes
per thread, which the launch allocates and frees.  Device arrays are used in place
(``revmlir.gpu.arrays``); host arrays are copied in and, when the kernel
writes them, back.

A launch without ``stream=`` is synchronous.  With a stream it is queued and
its error slot is read by ``synchronize()``, which waits for every pending
launch and raises the first error.
"""

from __future__ import annotations

import ctypes
import functools
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from xdsl.dialects.builtin import (
    ComplexType,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute

from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import LogType
from revmlir.errors import LocatedError
from revmlir.gpu.arrays import (
    LEGACY_DEFAULT_STREAM,
    DeviceArray,
    check_array,
    device_array,
    host_array,
    is_device_array,
    overlapping_ranges,
)
from revmlir.gpu.launch_shape import Occupancy
from revmlir.gpu.trip_count import LoopBounds
from revmlir.runtime.arguments import converter, numpy_dtype, type_name
from revmlir.runtime.backend import overlap_error, read_only_error
from revmlir.runtime_checks import ELEMENT_WORD, GPU_ERROR_WORDS, check_error_slot

DEFAULT_ARENA = 4096
"""Bytes of per-thread arena a kernel gets without ``arena=``."""
ARENA_ALIGNMENT = 16
"""Each thread's part starts at a multiple of this (``revmlir.gpu.arena``)."""
ARENA_LIMIT = 1 << 30
"""The most device memory one launch's arena takes: the grid shrinks to fit
it, which a grid-stride loop allows."""
INSTALL_HINT = "pip install 'revmlir[cuda]'"


class CUDAUnavailableError(RuntimeError):
    """No GPU can run a kernel here: the CUDA packages, the driver or a
    device is missing.  Raised at the first launch, never at import."""


class CUDAError(RuntimeError):
    """A CUDA driver call failed (out of memory, a bad PTX image…)."""


class KernelInfo(Protocol):
    """What the runtime needs of one kernel of a compiled program."""

    @property
    def entry(self) -> str: ...

    @property
    def arguments(self) -> tuple[Attribute, ...]: ...

    @property
    def arena(self) -> bool: ...

    @property
    def bounds(self) -> LoopBounds | None: ...


class Program(Protocol):
    """What the runtime needs of a compiled program (``GPUProgram``)."""

    @property
    def ptx(self) -> str: ...

    @property
    def kernels(self) -> dict[str, Any]: ...

    @property
    def check_table(self) -> ModuleOp: ...


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------


@functools.cache
def driver() -> Any:
    """``cuda.bindings.driver``, initialised, with at least one device; a
    ``CUDAUnavailableError`` that says what is missing otherwise."""
    try:
        from cuda.bindings import driver as cuda
    except ImportError as error:
        raise CUDAUnavailableError(
            f"running kernels needs the CUDA Python bindings ({INSTALL_HINT}): {error}"
        ) from None
    try:
        (result,) = cuda.cuInit(0)
    except Exception as error:  # the bindings raise their own error when libcuda is missing
        raise CUDAUnavailableError(f"no NVIDIA driver found: {error}") from None
    if result != cuda.CUresult.CUDA_SUCCESS:
        raise CUDAUnavailableError(f"the CUDA driver does not start: {_error_name(cuda, result)}")
    count = _checked(cuda, "cuDeviceGetCount", cuda.cuDeviceGetCount())
    if count == 0:
        raise CUDAUnavailableError("the CUDA driver sees no GPU")
    return cuda


def unavailable_reason() -> str | None:
    """Why no kernel can run here, or None where a GPU is ready."""
    try:
        driver()
    except (CUDAUnavailableError, CUDAError) as error:
        return str(error)
    return None


def _error_name(cuda: Any, result: Any) -> str:
    found, name = cuda.cuGetErrorName(result)
    return name.decode() if found == cuda.CUresult.CUDA_SUCCESS else str(result)


def _checked(cuda: Any, call: str, returned: tuple[Any, ...]) -> Any:
    """The value of a driver call (``(result, value…)``), or a ``CUDAError``."""
    result, *values = returned
    if result != cuda.CUresult.CUDA_SUCCESS:
        raise CUDAError(f"{call} failed: {_error_name(cuda, result)}")
    return values[0] if len(values) == 1 else tuple(values)


def _call(call: str, *args: Any) -> Any:
    cuda = driver()
    return _checked(cuda, call, getattr(cuda, call)(*args))


# ---------------------------------------------------------------------------
# Devices, loaded kernels, error slots
# ---------------------------------------------------------------------------


@dataclass
class _ErrorSlot:
    """An error slot in device memory and the pinned host words it is
    copied back to (asynchronously, for launches on a stream)."""

    device: int
    host: ctypes.Array[ctypes.c_int64]

    @classmethod
    def allocate(cls) -> _ErrorSlot:
        nbytes = GPU_ERROR_WORDS * 8
        device = int(_call("cuMemAlloc", nbytes))
        pinned = int(_call("cuMemAllocHost", nbytes))
        return cls(device, (ctypes.c_int64 * GPU_ERROR_WORDS).from_address(pinned))


@dataclass(frozen=True)
class LoadedKernel:
    """A kernel loaded on one device, with its launch configuration."""

    function: Any
    occupancy: Occupancy
    """What the device holds of it, which shapes its launches."""
    registers: int


@dataclass
class _Device:
    """A device's primary context (the one CuPy, PyTorch and JAX use, so
    their pointers are valid here), its loaded programs, and spare slots."""

    ordinal: int
    context: Any
    processors: int
    """Its multiprocessors, which every loaded kernel's ``Occupancy`` counts."""
    modules: dict[int, tuple[Program, Any]] = field(default_factory=dict)
    kernels: dict[tuple[int, str], LoadedKernel] = field(default_factory=dict)
    slots: list[_ErrorSlot] = field(default_factory=list)
    arenas: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Per stream, the arena buffer its launches share: ``(address, bytes)``.
    Launches on one stream run one after another, so they can share it;
    allocating and freeing up to ``ARENA_LIMIT`` at every launch cost more
    than small kernels themselves (``cuMemFree`` waits for the device)."""

    def arena(self, stream: int, nbytes: int) -> int:
        """A buffer of at least ``nbytes`` for a launch on ``stream``: the
        stream's own, replaced by a larger one when it is too small."""
        found = self.arenas.get(stream)
        if found is not None and found[1] >= nbytes:
            return found[0]
        if found is not None:
            _call("cuStreamSynchronize", stream)
            _call("cuMemFree", found[0])
            del self.arenas[stream]
        pointer = int(_call("cuMemAlloc", max(nbytes, 1)))
        self.arenas[stream] = (pointer, nbytes)
        return pointer

    def release_arenas(self) -> None:
        self.activate()
        for stream, (pointer, _) in list(self.arenas.items()):
            _call("cuStreamSynchronize", stream)
            _call("cuMemFree", pointer)
            del self.arenas[stream]

    def activate(self) -> None:
        _call("cuCtxSetCurrent", self.context)

    def kernel(self, program: Program, entry: str, parameter_bytes: int) -> LoadedKernel:
        key = (id(program), entry)
        if (found := self.kernels.get(key)) is None:
            if (loaded := self.modules.get(id(program))) is None:
                # the driver's JIT reads NUL-terminated PTX text
                module = _call("cuModuleLoadData", program.ptx.encode() + b"\0")
                loaded = self.modules[id(program)] = (program, module)
            function = _call("cuModuleGetFunction", loaded[1], entry.encode())
            _check_parameters(function, entry, parameter_bytes)
            cuda = driver()
            grid, block = _call("cuOccupancyMaxPotentialBlockSize", function, None, 0, 0)
            occupancy = Occupancy.of(
                self.processors,
                lambda size: int(_call("cuOccupancyMaxActiveBlocksPerMultiprocessor", function, size, 0)),
                int(block),
                int(grid),
            )
            registers = _call("cuFuncGetAttribute", cuda.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, function)
            found = self.kernels[key] = LoadedKernel(function, occupancy, int(registers))
        return found

    def slot(self) -> _ErrorSlot:
        return self.slots.pop() if self.slots else _ErrorSlot.allocate()


def _check_parameters(function: Any, entry: str, expected: int) -> None:
    """A ``CUDAError`` unless the kernel's parameters take ``expected``
    bytes, as the arguments are packed: a mismatch would launch on garbage."""
    cuda = driver()
    end, index = 0, 0
    while True:
        result, offset, size = cuda.cuFuncGetParamInfo(function, index)
        if result != cuda.CUresult.CUDA_SUCCESS:
            break
        end, index = offset + size, index + 1
    if index and end != expected:
        raise CUDAError(
            f"kernel {entry} takes {end} bytes of parameters, but its arguments pack to {expected}: "
            "the program and the runtime disagree on the kernel ABI"
        )


_devices: dict[int, _Device] = {}


def device(ordinal: int) -> _Device:
    if (found := _devices.get(ordinal)) is not None:
        return found
    cuda = driver()
    count = _checked(cuda, "cuDeviceGetCount", cuda.cuDeviceGetCount())
    if not 0 <= ordinal < count:
        raise ValueError(f"no CUDA device {ordinal} (this machine has {count})")
    handle = _call("cuDeviceGet", ordinal)
    processors = _call("cuDeviceGetAttribute", cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle)
    found = _devices[ordinal] = _Device(ordinal, _call("cuDevicePrimaryCtxRetain", handle), int(processors))
    return found


def _ordinal_of(array: DeviceArray) -> int | None:
    if array.device is not None:
        return array.device
    if not array.pointer:
        return None
    cuda = driver()
    attribute = cuda.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    return int(_call("cuPointerGetAttribute", attribute, array.pointer))


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------


def stream_handle(stream: Any) -> int:
    """The ``CUstream`` of ``stream=``: a CUDA stream handle (an int, a
    ``cuda.bindings`` ``CUstream``), anything with ``__cuda_stream__``
    (``cuda.core``), a PyTorch stream (``.cuda_stream``) or a CuPy stream
    (``.ptr``); None is the legacy default stream."""
    if stream is None:
        return 0
    if isinstance(stream, bool):
        raise TypeError(f"stream= takes a CUDA stream, got {stream!r}")
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    for attribute in ("cuda_stream", "ptr"):
        if isinstance(handle := getattr(stream, attribute, None), int):
            return handle
    try:
        return int(stream)
    except (TypeError, ValueError):
        raise TypeError(
            f"stream= takes a CUDA stream (a handle, a cuda.core, CuPy or PyTorch stream), got {type(stream).__name__}"
        ) from None


_SCALAR_FORMATS: dict[tuple[type, int], str] = {
    (Float64Type, 64): "d",
    (Float32Type, 32): "f",
    (IndexType, 64): "q",
    (IntegerType, 64): "q",
    (IntegerType, 32): "i",
    (IntegerType, 16): "h",
    (IntegerType, 8): "b",
    (IntegerType, 1): "?",
}


def scalar_format(type: Attribute) -> str:
    """The ``struct`` format of a scalar parameter (a complex number is its
    two parts; a log number its logarithm)."""
    if isinstance(type, LogType):
        return scalar_format(type.element_type)
    if isinstance(type, ComplexType):
        return scalar_format(type.element_type) * 2
    width = type.width.data if isinstance(type, IntegerType) else 32 if isinstance(type, Float32Type) else 64
    found = _SCALAR_FORMATS.get((type.__class__, width))
    if found is None:
        raise TypeError(f"kernels take no arguments of type {type}")
    return found


def scalar_pieces(type: Attribute, value: Any) -> list[tuple[str, Any]]:
    """A converted scalar as the parameters the kernel takes for it."""
    form = scalar_format(type)
    if isinstance(type, ComplexType):
        return [(form[0], value.real), (form[1], value.imag)]
    return [(form, value)]


def array_pieces(pointer: int, shape: Sequence[int]) -> list[tuple[str, Any]]:
    """An array as the kernel takes it: its data pointer, then its sizes."""
    return [("Q", pointer), *(("q", int(d)) for d in shape)]


def check_arena(bytes_per_thread: Any) -> None:
    """A ``TypeError`` or ``ValueError`` unless ``bytes_per_thread`` is an
    arena size one block of threads can have within ``ARENA_LIMIT``."""
    if isinstance(bytes_per_thread, bool) or not isinstance(bytes_per_thread, int):
        raise TypeError(f"arena= must be a number of bytes per thread, got {type_name(bytes_per_thread)}")
    if not 0 <= bytes_per_thread <= ARENA_LIMIT // 1024:
        raise ValueError(
            f"arena={bytes_per_thread} bytes per thread is outside 0..{ARENA_LIMIT // 1024} "
            f"(a launch's arena is at most {ARENA_LIMIT} bytes, for at least one block of 1024 threads)"
        )


def arena_plan(bytes_per_thread: int | None, wave: int) -> tuple[int, int]:
    """The threads an arena is for and its bytes per thread, for a kernel
    whose one wave has ``wave`` threads (``Occupancy.wave``): the bytes
    rounded up to ``ARENA_ALIGNMENT``; the threads one wave's whatever the
    launch's trip count, so that a stream's launches of growing counts
    share its buffer rather than replace it (a wait for the stream) each
    time, cut to keep the arena within ``ARENA_LIMIT``, which leaves at
    least one block of 1024 (``check_arena``)."""
    wanted = DEFAULT_ARENA if bytes_per_thread is None else bytes_per_thread
    check_arena(wanted)
    rounded = -(-wanted // ARENA_ALIGNMENT) * ARENA_ALIGNMENT
    return min(wave, ARENA_LIMIT // max(rounded, 1)), rounded


def arena_pieces(pointer: int, bytes_per_thread: int) -> list[tuple[str, Any]]:
    """The arena as the kernel takes it, after the error slot: its address,
    then the bytes per thread."""
    return [("Q", pointer), ("q", bytes_per_thread)]


def pack_parameters(pieces: Sequence[tuple[str, Any]]) -> bytes:
    """The kernel's parameter buffer: each value at the next offset aligned
    to its size, as the driver lays parameters out."""
    buffer = bytearray()
    for form, value in pieces:
        size = struct.calcsize(form)
        buffer += bytes(-len(buffer) % size)
        buffer += struct.pack("<" + form, value)
    return bytes(buffer)


def raise_gpu_error(check_table: ModuleOp, words: Sequence[int]) -> None:
    """Raise the CPU's error for the check a kernel's error slot names
    (same class, message and location) with the failing element appended
    (a check outside the parallel loop has none: element -1)."""
    element = int(words[ELEMENT_WORD])
    try:
        check_error_slot(check_table, list(words[:ELEMENT_WORD]))
    except LocatedError as error:
        raise type(error)(
            error.message + (f" (element {element})" if element >= 0 else ""),
            op_name=error.op_name,
            location=error.location,
            function=error.function,
        ) from None


@dataclass
class _Copy:
    """A host array's device copy."""

    array: np.ndarray
    pointer: int
    back: bool


@dataclass
class _Launch:
    """A launch on a stream whose error slot is not read yet."""

    device: _Device
    stream: int
    slot: _ErrorSlot
    check_table: ModuleOp
    keep: list[Any]
    """The device arrays' owners (DLPack capsules), alive while the kernel
    runs."""


_pending: list[_Launch] = []


def describe(args: Sequence[Any], stream: int) -> list[Any]:
    """``args`` with each device array read as a ``DeviceArray`` and each
    host array as the numpy array sharing its memory; scalars as they are.
    ``stream``: the launch's stream, which DLPack producers order their work
    before."""
    described: list[Any] = []
    for value in args:
        if is_device_array(value):
            described.append(device_array(value, stream or LEGACY_DEFAULT_STREAM))
        else:
            host = host_array(value)
            described.append(value if host is None else host)
    return described


def stand_in(value: Any) -> Any:
    """What a described argument specialises a function like: a device
    array like an (empty) numpy array of its element type and rank."""
    if isinstance(value, DeviceArray):
        return np.empty((0,) * len(value.shape), value.dtype)
    return value


def launch(
    program: Program,
    name: str,
    args: Sequence[Any],
    written: frozenset[int],
    stream: int,
    wait: bool = True,
    arena: int | None = None,
) -> None:
    """Run kernel ``name`` of ``program`` on described ``args`` (``describe``;
    in the order of the rev function's arguments; ``written``: the positions
    of the arrays it may write): device arrays are updated in place, host
    arrays copied in and back.  ``wait=False`` leaves a launch that copies
    no host array queued on ``stream``, for ``synchronize``.  ``arena``: the
    bytes per thread of a kernel's per-thread arena, if it takes one
    (default ``DEFAULT_ARENA``).  Every argument is checked before the
    driver is asked for a device: a mistake in them is the error on a
    machine without a GPU too, not ``CUDAUnavailableError``."""
    info = program.kernels[name]
    types = info.arguments
    label = f"kernel @{name}"
    if len(args) != len(types):
        raise TypeError(f"{label} takes {len(types)} argument(s), got {len(args)}")
    arrays: dict[int, DeviceArray] = {}
    hosts: dict[int, np.ndarray] = {}
    scalars: dict[int, Any] = {}
    for i, (type, value) in enumerate(zip(types, args)):
        where = f"argument #{i} of {label}"
        if isinstance(type, StackType):
            raise TypeError(f"{where} is a stack; kernels take arrays and scalars")
        if not isinstance(type, MemRefType):
            scalars[i] = converter(type, name, i)(value)
            continue
        dtype, rank = numpy_dtype(type.element_type), type.get_num_dims()
        if isinstance(value, DeviceArray):
            check_array(value, dtype, rank, where)
            if value.readonly and i in written:
                raise ValueError(
                    f"{where} is {value.producer} marked read-only (JAX arrays are immutable), and "
                    f"@{name} writes it; pass a writeable device array (CuPy, PyTorch) or a numpy array"
                )
            arrays[i] = value
            continue
        elif isinstance(value, np.ndarray):
            check_array(value, dtype, rank, where)
            if not value.flags.c_contiguous:
                raise TypeError(f"{where} must be a C-contiguous array (use numpy.ascontiguousarray)")
            if not value.flags.writeable and i in written:
                raise read_only_error(name, i, None)
            hosts[i] = value
        else:
            raise TypeError(f"{where} must be an array (CuPy, JAX, PyTorch, numpy), got {type_name(value)}")
    ranges = [(i, a.pointer, a.pointer + a.nbytes) for i, a in arrays.items() if a.nbytes]
    if (pair := overlapping_ranges(ranges, written)) is not None:
        raise overlap_error(name, pair)
    ordinals = {o for a in arrays.values() if (o := _ordinal_of(a)) is not None}
    if len(ordinals) > 1:
        raise ValueError(f"the arrays passed to {label} are on different devices ({sorted(ordinals)})")
    target = device(ordinals.pop() if ordinals else 0)
    target.activate()
    for array in arrays.values():
        if array.stream not in (None, LEGACY_DEFAULT_STREAM, stream):
            _call("cuStreamSynchronize", array.stream)
    copies = {i: _copy_in(host, i in written, stream) for i, host in hosts.items()}
    try:
        pieces: list[tuple[str, Any]] = []
        for i, type in enumerate(types):
            if i in scalars:
                pieces += scalar_pieces(type, scalars[i])
            elif i in arrays:
                pieces += array_pieces(arrays[i].pointer, arrays[i].shape)
            else:
                pieces += array_pieces(copies[i].pointer, hosts[i].shape)
        slot = target.slot()
        pieces += array_pieces(slot.device, (GPU_ERROR_WORDS,))
        size = len(pack_parameters([*pieces, *(arena_pieces(0, 0) if info.arena else [])]))
        try:
            kernel = target.kernel(program, info.entry, size)
            trip = None if info.bounds is None else info.bounds.trip_count({**arrays, **hosts}, scalars)
            grid, block = kernel.occupancy.shape(trip, info.arena)
            if info.arena:
                threads, per_thread = arena_plan(arena, kernel.occupancy.wave)
                grid = min(grid, threads // block)
                pieces += arena_pieces(target.arena(stream, threads * per_thread), per_thread)
            _enqueue(kernel, grid, block, pack_parameters(pieces), slot, stream)
        except BaseException:
            target.slots.append(slot)
            raise
        record = _Launch(target, stream, slot, program.check_table, [a.owner for a in arrays.values()])
        for copy in copies.values():
            if copy.back:
                _call("cuMemcpyDtoHAsync", copy.array.ctypes.data, copy.pointer, copy.array.nbytes, stream)
        if wait or copies:
            _call("cuStreamSynchronize", stream)
            _finish(record)
        else:
            _pending.append(record)
    finally:
        for copy in copies.values():
            _call("cuMemFree", copy.pointer)


def _copy_in(host: np.ndarray, back: bool, stream: int) -> _Copy:
    pointer = int(_call("cuMemAlloc", max(host.nbytes, 1)))
    if host.nbytes:
        _call("cuMemcpyHtoDAsync", pointer, host.ctypes.data, host.nbytes, stream)
    return _Copy(host, pointer, back and host.nbytes > 0)


def _enqueue(kernel: LoadedKernel, grid: int, block: int, parameters: bytes, slot: _ErrorSlot, stream: int) -> None:
    """Zero the error slot, launch ``grid`` blocks of ``block`` threads
    with the packed parameters, and queue the slot's copy back to the
    host."""
    buffer = ctypes.create_string_buffer(parameters, len(parameters))
    size = ctypes.c_size_t(len(parameters))
    # CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END
    extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(buffer), 2, ctypes.addressof(size), 0)
    _call("cuMemsetD8Async", slot.device, 0, GPU_ERROR_WORDS * 8, stream)
    _call(
        "cuLaunchKernel",
        kernel.function,
        grid,
        1,
        1,
        block,
        1,
        1,
        0,
        stream,
        None,
        ctypes.addressof(extra),
    )
    _call("cuMemcpyDtoHAsync", ctypes.addressof(slot.host), slot.device, GPU_ERROR_WORDS * 8, stream)


def _finish(record: _Launch) -> None:
    """Give a finished launch's slot back and raise the error the slot
    holds."""
    words = list(record.slot.host)
    record.device.slots.append(record.slot)
    if words[0]:
        raise_gpu_error(record.check_table, words)


def synchronize() -> None:
    """Wait for every launch queued on a stream, then raise the first error
    one of them reported (all are waited for)."""
    launches, _pending[:] = list(_pending), []
    first: Exception | None = None
    for record in launches:
        record.device.activate()
        _call("cuStreamSynchronize", record.stream)
        try:
            _finish(record)
        except LocatedError as error:
            first = first or error
    if first is not None:
        raise first


def release_arenas() -> None:
    """Free the arena buffers kept for later launches (each stream keeps
    the largest one its launches needed, at most ``ARENA_LIMIT``), after
    waiting for the launches that use them."""
    for found in _devices.values():
        found.release_arenas()
