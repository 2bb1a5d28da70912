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
thread fills with ``[check id, payload…, element, …]``, in mapped pinned
host memory (the host zeroes it before the launch and reads it after).
The host raises the error the CPU raises for that check, at the same
source location, with the element appended.  A kernel with ancilla arrays of a dynamic size
or stacks also takes a per-thread arena (``revmlir.gpu.arena``): the address of one
buffer of ``bytes per thread`` for every thread of the grid, then the bytes
per thread, which the launch allocates and frees.  Device arrays are used in place
(``revmlir.gpu.arrays``); host arrays are copied in and, when the kernel
writes them, back.

A launch without ``stream=`` is synchronous.  With a stream it is queued and
its error slot is read by ``synchronize()``, which waits for every pending
launch and raises the first error (a failed or interrupted wait leaves the
launches it did not finish queued).  A driver error that leaves the
context unusable (an illegal address in some kernel) drops the device's
queued launches, which the next ``synchronize`` reports, and makes every
later launch on it fail at once (``ContextLostError``).

Small kernels launched back to back are bound by the host's time per
launch, so everything that depends only on the kernel and its argument
types is worked out once per specialisation (``LaunchPlan``: the argument
checks, one ``struct.Struct`` for the parameters), and a launch of device
arrays makes two driver calls, ``cuCtxSetCurrent`` and ``cuLaunchKernel``
(the error slot needs neither a memset nor a copy back), where the driver
sees one device and each array's producer stream is none, the legacy
default stream or the launch's own.  Otherwise it also asks
``cuPointerGetAttribute`` once per ``__cuda_array_interface__`` array
(which device holds it) and ``cuStreamSynchronize`` once per array on
another stream.
"""

from __future__ import annotations

import ctypes
import functools
import numbers
import struct
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
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
    ImpossibleArray,
    RefusedArray,
    check_array,
    kernel_array,
    overlapping_ranges,
)
from revmlir.gpu.launch_shape import Occupancy
from revmlir.gpu.trip_count import LoopBounds
from revmlir.runtime.arguments import ArgumentTypeError, ArgumentValueError, converter, numpy_dtype, type_name
from revmlir.runtime.backend import not_contiguous_error, overlap_error, overlapping, read_only_error
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


class ContextLostError(CUDAError):
    """A driver call failed with an error that leaves the device's context
    unusable (``STICKY_ERRORS``: a kernel touched an illegal address, the
    launch failed…).  Every later call in that context fails the same way,
    so nothing queued on the device can finish: its launches are dropped
    (the next ``synchronize`` raises this error for them), and every later
    launch on it raises this error at once."""


STICKY_ERRORS = frozenset(
    {
        "CUDA_ERROR_CONTAINED",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_LAUNCH_TIMEOUT",
        "CUDA_ERROR_ASSERT",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "CUDA_ERROR_MISALIGNED_ADDRESS",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        "CUDA_ERROR_INVALID_PC",
        "CUDA_ERROR_LAUNCH_FAILED",
        "CUDA_ERROR_TENSOR_MEMORY_LEAK",
        "CUDA_ERROR_MPS_CLIENT_TERMINATED",
        "CUDA_ERROR_EXTERNAL_DEVICE",
    }
)
"""The driver's errors after which the context cannot be used again: the
documentation of each in ``cuda.h`` (CUDA 13.0) says that any further
CUDA work returns the same error, or that the context or the process
cannot be used again until it is relaunched."""


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
    if (result := returned[0]) != cuda.CUresult.CUDA_SUCCESS:
        name = _error_name(cuda, result)
        raise (ContextLostError if name in STICKY_ERRORS else CUDAError)(f"{call} failed: {name}")
    return returned[1] if len(returned) == 2 else returned[1:]


def _call(call: str, *args: Any) -> Any:
    cuda = driver()
    return _checked(cuda, call, getattr(cuda, call)(*args))


@functools.cache
def device_count() -> int:
    """How many devices the driver sees (at least one)."""
    cuda = driver()
    return int(_checked(cuda, "cuDeviceGetCount", cuda.cuDeviceGetCount()))


# ---------------------------------------------------------------------------
# Devices, loaded kernels, error slots
# ---------------------------------------------------------------------------


SLOT_BYTES = GPU_ERROR_WORDS * 8
SLOTS_PER_ALLOCATION = 64
"""Slots allocated together: one page of pinned memory, which is what an
allocation of one slot takes anyway."""


@dataclass
class _ErrorSlot:
    """An error slot in mapped pinned host memory: the kernel writes it
    through ``device`` (its address on the device), the host reads and
    zeroes ``words``, the same memory.  So a launch needs neither a memset
    nor a copy back: the host zeroes the slot when a launch takes it (no
    kernel uses it then) and reads it once the launch's stream has been
    synchronised (the kernel has finished and its writes are visible).

    The kernel's first failing thread takes the slot by a 64-bit
    compare-and-swap (``atom.sys.cas.b64``: system scope) and then stores
    its payload; host-mapped memory takes device atomics from sm_60, and
    only the device's threads touch the slot while the kernel runs."""

    device: int
    words: ctypes.Array[ctypes.c_int64]

    @classmethod
    def allocate(cls) -> list[_ErrorSlot]:
        """``SLOTS_PER_ALLOCATION`` zeroed slots (the driver's memory is
        not zeroed), in one allocation that is never freed: a device keeps
        its spare slots (an allocation the device cannot address is freed
        at once)."""
        nbytes = SLOTS_PER_ALLOCATION * SLOT_BYTES
        host = int(_call("cuMemHostAlloc", nbytes, driver().CU_MEMHOSTALLOC_DEVICEMAP))
        try:
            device = int(_call("cuMemHostGetDevicePointer", host, 0))
        except BaseException:
            _call("cuMemFreeHost", host)
            raise
        ctypes.memset(host, 0, nbytes)
        words = ctypes.c_int64 * GPU_ERROR_WORDS
        offsets = range(0, nbytes, SLOT_BYTES)
        return [cls(device + offset, words.from_address(host + offset)) for offset in offsets]


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
    lost: str | None = None
    """Why the context is unusable (``ContextLostError``), once it is."""
    dropped: int = 0
    """Queued launches dropped with the context that no ``synchronize``
    has reported yet: each is reported once, by the next one, so that a
    launch queued before the loss never passes as finished."""

    def lose(self, error: ContextLostError) -> ContextLostError:
        """The error to raise for ``error``, a call that left this device's
        context unusable.  The device's queued launches are dropped: none
        can finish, and their error slots will never be written (the next
        ``synchronize`` reports them, ``dropped``); its arenas are
        forgotten, their memory gone with the context.  A later launch on
        it raises the same error at once (``check_usable``)."""
        with _pending_lock:
            if self.lost is None:
                self.lost = (
                    f"{error}: the context of CUDA device {self.ordinal} is unusable (every later call in it fails "
                    "the same way), so its queued launches are dropped; restart the process to use the device "
                    "again"
                )
            # deleted in place, from the end: a launch another thread
            # appends meanwhile (without the lock) stays
            for index in reversed(range(len(_pending))):
                if _pending[index].device is self:
                    del _pending[index]
                    self.dropped += 1
        self.arenas.clear()
        return ContextLostError(self.lost)

    def report_dropped(self, launches: int) -> ContextLostError | None:
        """The error that reports this device's dropped launches, with
        ``launches`` more that a ``synchronize`` held when the context was
        lost; None where there are none."""
        with _pending_lock:
            launches, self.dropped = launches + self.dropped, 0
        return ContextLostError(self.lost) if launches and self.lost is not None else None

    def check_usable(self) -> None:
        """A ``ContextLostError`` where an earlier call lost the context."""
        if self.lost is not None:
            raise ContextLostError(self.lost)

    def arena(self, stream: int, nbytes: int) -> int:
        """A buffer of at least ``nbytes`` for a launch on ``stream``: the
        stream's own, replaced by a larger one when it is too small."""
        found = self.arenas.get(stream)
        if found is not None and found[1] >= nbytes:
            return found[0]
        if found is not None:
            _call("cuStreamSynchronize", stream)
            _call("cuMemFree", found[0])
            self.arenas.pop(stream, None)  # another thread losing the context may have emptied them
        pointer = int(_call("cuMemAlloc", max(nbytes, 1)))
        self.arenas[stream] = (pointer, nbytes)
        return pointer

    def release_arenas(self) -> None:
        """Free the arenas, after waiting for the launches that use them.
        A lost context's memory went with it; a call that loses it loses
        the device (``lose``)."""
        if self.lost is not None:
            return
        try:
            self.activate()
            for stream, (pointer, _) in list(self.arenas.items()):
                _call("cuStreamSynchronize", stream)
                _call("cuMemFree", pointer)
                self.arenas.pop(stream, None)  # another thread losing the context may have emptied them
        except ContextLostError as error:
            raise self.lose(error) from None

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
        """A zeroed slot for a launch: a spare one, or a new one.  A
        kernel writes the other words only after taking the first (its
        check id), so a slot whose first word is 0 is clean."""
        try:
            found = self.slots.pop()
        except IndexError:  # none spare (another thread may have taken the last)
            spare = _ErrorSlot.allocate()
            found = spare.pop()
            self.slots += spare
        if found.words[0]:
            ctypes.memset(found.words, 0, SLOT_BYTES)
        return found


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


def _current_device() -> _Device | None:
    """The device whose context is the thread's current one, as the driver
    says: CuPy and PyTorch make a context current without this runtime
    seeing it, so the last one it made current may not be.  None where it
    is no device this runtime uses, or the driver cannot say."""
    try:
        context = int(_call("cuCtxGetCurrent"))
    except CUDAError:
        return None
    return next((found for found in list(_devices.values()) if int(found.context) == context), None)


def device(ordinal: int) -> _Device:
    if (found := _devices.get(ordinal)) is not None:
        return found
    count = device_count()
    if not 0 <= ordinal < count:
        raise ValueError(f"no CUDA device {ordinal} (this machine has {count})")
    handle = _call("cuDeviceGet", ordinal)
    attribute = driver().CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    processors = _call("cuDeviceGetAttribute", attribute, handle)
    found = _devices[ordinal] = _Device(ordinal, _call("cuDevicePrimaryCtxRetain", handle), int(processors))
    return found


def _ordinals(arrays: Mapping[int, DeviceArray]) -> dict[int, int]:
    """The device of each of ``arrays`` (by position) that is on one: where
    its producer says (DLPack), else the driver's answer for its pointer,
    which is asked only where there is more than one device (an empty
    array is on none)."""
    ordinals: dict[int, int] = {}
    for i, array in arrays.items():
        if array.device is not None:
            ordinals[i] = array.device
        elif array.pointer:
            ordinals[i] = 0 if device_count() == 1 else _ordinal_of(array.pointer)
    return ordinals


def _apart(name: str, ordinals: Mapping[int, int]) -> ArgumentValueError:
    """The error of a launch whose arrays are on several devices
    (``ordinals``, by position): the first two that are apart."""
    (i, first), *others = ordinals.items()
    j, second = next((j, o) for j, o in others if o != first)
    return ArgumentValueError(
        "arguments {0} and {1} of {function} are on different devices ({devices}); a kernel runs on one",
        name,
        (i, j),
        texts={"devices": f"{first} and {second}"},
    )


def _ordinal_of(pointer: int) -> int:
    """The device of ``pointer``.  The query runs in the thread's current
    context, so an error that loses a context loses that device's."""
    attribute = driver().CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    try:
        return int(_call("cuPointerGetAttribute", attribute, pointer))
    except ContextLostError as error:
        if (current := _current_device()) is None:  # a context this runtime does not use
            raise
        raise current.lose(error) from None


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------


def stream_handle(stream: Any) -> int:
    """The ``CUstream`` of ``stream=``: a CUDA stream handle (an integer,
    numpy's too, or an object that converts to one, as a ``cuda.bindings``
    ``CUstream`` does), anything with ``__cuda_stream__`` (``cuda.core``),
    a PyTorch stream (``.cuda_stream``) or a CuPy stream (``.ptr``); None
    is the legacy default stream.  A number that is no integer (``1.9``
    was the legacy stream, handle 1), a string (``"16"`` was handle 16) or a
    bool is a ``TypeError`` (a numpy array of one too, and an object whose
    ``__int__`` fails), and a handle outside 0..2**64-1 (a
    ``CUstream`` is a pointer) a ``ValueError``, before the launch."""
    if stream is None:
        return 0
    handle = _stream_number(stream)
    if handle is None:
        raise TypeError(
            "stream= takes a CUDA stream (a handle, a cuda.core, CuPy or PyTorch stream), "
            f"got {type(stream).__name__} {stream!r}"
        )
    if not 0 <= handle < 2**64:
        raise ValueError(f"stream={stream!r} is no CUDA stream handle, which is 0 to 2**64-1")
    return handle


def _stream_number(stream: Any) -> int | None:
    """The handle ``stream`` gives as ``stream_handle`` takes them, or None."""
    if isinstance(stream, bool | np.bool_):
        return None
    if isinstance(stream, int | np.integer):
        return int(stream)
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    for attribute in ("cuda_stream", "ptr"):
        if isinstance(handle := getattr(stream, attribute, None), int):
            return handle
    if isinstance(stream, np.ndarray | np.generic) and not (
        stream.ndim == 0 and np.issubdtype(stream.dtype, np.integer)
    ):
        return None  # a 0-d array of 1.9 or True converts, to handles 1
    if isinstance(stream, numbers.Number | str | bytes) or not hasattr(type(stream), "__int__"):
        return None
    try:
        return int(stream)
    except (TypeError, ValueError):
        return None


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


def scalar_format(type: Attribute) -> str | None:
    """The ``struct`` format of a scalar parameter (a complex number is its
    two parts; a log number its logarithm); None for a type no kernel
    takes."""
    if isinstance(type, LogType):
        return scalar_format(type.element_type)
    if isinstance(type, ComplexType):
        part = scalar_format(type.element_type)
        return None if part is None else part * 2
    width = type.width.data if isinstance(type, IntegerType) else 32 if isinstance(type, Float32Type) else 64
    return _SCALAR_FORMATS.get((type.__class__, width))


def arena_bytes(bytes_per_thread: Any) -> int:
    """``bytes_per_thread`` (``arena=``: an integer, numpy's too, not a
    bool) as the arena size one block of threads can have within
    ``ARENA_LIMIT``; else a ``TypeError`` or ``ValueError``."""
    if isinstance(bytes_per_thread, bool | np.bool_) or not isinstance(bytes_per_thread, int | np.integer):
        raise TypeError(
            f"arena= must be a number of bytes per thread, got {type_name(bytes_per_thread)} {bytes_per_thread!r}"
        )
    size = int(bytes_per_thread)
    if not 0 <= size <= ARENA_LIMIT // 1024:
        raise ValueError(
            f"arena={size} bytes per thread is outside 0..{ARENA_LIMIT // 1024} "
            f"(a launch's arena is at most {ARENA_LIMIT} bytes, for at least one block of 1024 threads)"
        )
    return size


def arena_plan(bytes_per_thread: int | None, wave: int) -> tuple[int, int]:
    """The threads an arena is for and its bytes per thread, for a kernel
    whose one wave has ``wave`` threads (``Occupancy.wave``): the bytes
    rounded up to ``ARENA_ALIGNMENT``; the threads one wave's whatever the
    launch's trip count, so that a stream's launches of growing counts
    share its buffer rather than replace it (a wait for the stream) each
    time, cut to keep the arena within ``ARENA_LIMIT``, which leaves at
    least one block of 1024 (``arena_bytes``).

    A launch's grid is cut to these threads over its block, whatever block
    its trip count takes (``Occupancy.shape``): each thread of the grid
    owns a part of the arena, so an iteration per thread would need up to
    ``ARENA_LIMIT`` bytes where the resident threads need a fraction of
    it.  Small blocks can hold more threads at once than the occupancy's
    block does (a kernel of 130 registers: 15 blocks of 32 on a
    multiprocessor, one of 384), so the cut applies at every block size,
    not only to counts the device cannot hold."""
    wanted = arena_bytes(DEFAULT_ARENA if bytes_per_thread is None else bytes_per_thread)
    rounded = -(-wanted // ARENA_ALIGNMENT) * ARENA_ALIGNMENT
    return min(wave, ARENA_LIMIT // max(rounded, 1)), rounded


def parameter_struct(types: Sequence[Attribute], arena: bool) -> struct.Struct:
    """The kernel's parameter buffer for arguments of ``types``: each value
    at the next offset aligned to its size, as the driver lays parameters
    out.  An array is its data pointer, then its sizes; a scalar its value
    (a complex number its two parts); then the error slot's address and
    words, and, for a kernel with a per-thread arena, the arena's address
    and bytes per thread.  A stack, or a scalar of a type without a
    ``scalar_format``, takes no parameters (``LaunchPlan.of`` refuses
    them)."""
    fields: list[str] = []
    for type in types:
        if isinstance(type, MemRefType):
            fields += ["Q", *"q" * type.get_num_dims()]
        elif (form := scalar_format(type)) is not None:
            fields += form
    fields += ["Q", "q", *(["Q", "q"] if arena else [])]
    form, offset = "<", 0
    for piece in fields:
        size = struct.calcsize(piece)
        padding = -offset % size
        form += f"{padding}x{piece}" if padding else piece
        offset += padding + size
    return struct.Struct(form)


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


_Queue = tuple[int, int, int | None]
"""Launches one wait finishes: a device's stream, and the thread whose
stream it is for ``PER_THREAD_STREAM`` (``_Launch.queue``)."""

PER_THREAD_STREAM = 2
"""``CU_STREAM_PER_THREAD``: the default stream of whichever thread names
it, so a launch on it is waited for as its launching thread's."""


@dataclass(slots=True)
class _Launch:
    """A launch on a stream whose error slot is not read yet."""

    device: _Device
    stream: int
    slot: _ErrorSlot
    check_table: ModuleOp
    keep: list[Any]
    """The device arrays' owners (DLPack capsules), alive while the kernel
    runs."""
    thread: int | None
    """On ``PER_THREAD_STREAM``, the launching thread (``threading.get_ident``),
    whose stream it is; else None."""

    @property
    def queue(self) -> _Queue:
        return self.device.ordinal, self.stream, self.thread


_pending: list[_Launch] = []
"""Launches queued on a stream, in launch order.  Threads append to it
(``list.append`` is atomic); ``synchronize`` takes and puts back launches
under ``_pending_lock`` only."""
_pending_lock = threading.Lock()

_SCALARS = (int, float, complex, bool)
"""Python's own numbers: arguments that need no description."""


def describe(args: Sequence[Any], stream: int, name: str, first: int = 0) -> list[Any]:
    """``args`` with each device array read as a ``DeviceArray`` and each
    host array as the numpy array sharing its memory; scalars as they are.
    ``stream``: the launch's stream, which DLPack producers order their work
    before.  A value no kernel takes is an ``ArgumentTypeError`` naming its
    position among the arguments of ``name``, where ``args`` start at
    ``first``."""
    dlpack_stream = stream or LEGACY_DEFAULT_STREAM
    described: list[Any] = []
    for i, value in enumerate(args, first):
        try:
            array = None if type(value) in _SCALARS else kernel_array(value, dlpack_stream)
        except RefusedArray as refused:
            raise ArgumentTypeError(
                "argument {0} of {function}: {problem}", name, (i,), texts={"problem": str(refused)}
            ) from None
        except ImpossibleArray as impossible:
            raise ArgumentValueError(
                "argument {0} of {function}: {problem}", name, (i,), texts={"problem": str(impossible)}
            ) from None
        described.append(value if array is None else array)
    return described


@functools.cache
def _empty(dtype: np.dtype, rank: int) -> np.ndarray:
    return np.empty((0,) * rank, dtype)


def stand_in(value: Any) -> Any:
    """What a described argument specialises a function like: a device
    array like an (empty) numpy array of its element type and rank."""
    if isinstance(value, DeviceArray):
        return _empty(value.dtype, len(value.shape))
    return value


@dataclass(frozen=True)
class _Parameter:
    """What a launch checks of one argument: an array's element type and
    rank, or a scalar's conversion."""

    dtype: np.dtype | None
    """The element type of an array; None for a scalar."""
    rank: int
    convert: Callable[[Any], Any] | None
    """A scalar's check and conversion; None for an array."""
    complex: bool
    """A complex scalar: two parameters, its parts."""


@dataclass(frozen=True)
class LaunchPlan:
    """What launching kernel ``name`` of ``program`` takes, worked out once
    per specialisation (``LaunchPlan.of``): each argument's check, the
    parameters' ``struct.Struct``.  A launch then reads the arrays' pointers
    and shapes, checks them, and packs."""

    program: Program
    name: str
    written: frozenset[int]
    """The positions of the arrays the kernel may write."""
    entry: str
    arena: bool
    parameters: tuple[_Parameter, ...]
    """Per argument."""
    struct: struct.Struct
    bounds: LoopBounds | None
    """The kernel loop's bounds, whose trip count shapes the launch."""

    @classmethod
    def of(cls, program: Program, name: str, written: frozenset[int]) -> LaunchPlan:
        """The plan of kernel ``name``.  Its loop bounds read only what its
        arguments' types have: compiling checks those it records
        (``compile_kernels``), reading a cache entry those it reads
        (``LoopBounds.decode``).  A kernel a function compiles to may take
        what no launch can give it (a stack, a fixed-point number): that
        argument is an ``ArgumentTypeError`` here, at its first launch."""
        info = program.kernels[name]
        parameters: list[_Parameter] = []
        for i, type in enumerate(info.arguments):
            if isinstance(type, MemRefType):
                dtype = numpy_dtype(type.element_type)
                parameters.append(_Parameter(dtype, type.get_num_dims(), None, False))
            elif isinstance(type, StackType):
                raise ArgumentTypeError(
                    "argument {0} of {function} is a stack; kernels take arrays and scalars", name, (i,)
                )
            elif scalar_format(type) is None:
                raise ArgumentTypeError(
                    "argument {0} of {function} is of a type no kernel takes ({type}); kernels take arrays, "
                    "and scalars that are integers, floats, complex numbers or rv.ULog",
                    name,
                    (i,),
                    texts={"type": str(type)},
                )
            else:
                convert = converter(type, name, i)
                parameters.append(_Parameter(None, 0, convert, isinstance(type, ComplexType)))
        struct = parameter_struct(info.arguments, info.arena)
        return cls(program, name, written, info.entry, info.arena, tuple(parameters), struct, info.bounds)


def launch(plan: LaunchPlan, args: Sequence[Any], stream: int, wait: bool = True, arena: int | None = None) -> None:
    """Run the kernel of ``plan`` on described ``args`` (``describe``; in
    the order of the rev function's arguments): device arrays are updated
    in place, host arrays copied in and back.  ``wait=False`` leaves a
    launch that copies no host array queued on ``stream``, for
    ``synchronize``.  ``arena``: the bytes per thread of a kernel's
    per-thread arena, if it takes one (default ``DEFAULT_ARENA``).  Every
    argument is checked before the driver is asked for a device: a mistake
    in them is the error on a machine without a GPU too, not
    ``CUDAUnavailableError``."""
    name, written = plan.name, plan.written
    if len(args) != len(plan.parameters):
        raise TypeError(f"kernel @{name} takes {len(plan.parameters)} argument(s), got {len(args)}")
    arrays: dict[int, DeviceArray] = {}
    hosts: dict[int, tuple[int, np.ndarray]] = {}
    """Per host array, where its device copy's pointer goes in ``values``."""
    values: list[Any] = []
    for i, (parameter, value) in enumerate(zip(plan.parameters, args)):
        if parameter.convert is not None:
            converted = parameter.convert(value)
            values += (converted.real, converted.imag) if parameter.complex else (converted,)
            continue
        assert parameter.dtype is not None
        if isinstance(value, DeviceArray):
            check_array(value, parameter.dtype, parameter.rank, name, i)
            if value.readonly and i in written:
                raise ArgumentValueError(
                    "argument {0} of {function} is {producer} marked read-only (JAX arrays are immutable), and "
                    "{function} writes it; pass a writeable device array (CuPy, PyTorch) or a numpy array",
                    name,
                    (i,),
                    texts={"producer": value.producer},
                )
            arrays[i] = value
            values.append(value.pointer)
        elif isinstance(value, np.ndarray):
            check_array(value, parameter.dtype, parameter.rank, name, i)
            if not value.flags.c_contiguous:
                raise not_contiguous_error(name, i)
            if not value.flags.writeable and i in written:
                raise read_only_error(name, i, None)
            hosts[i] = (len(values), value)
            values.append(0)
        else:
            raise ArgumentTypeError(
                "argument {0} of {function} must be an array (CuPy, JAX, PyTorch, numpy), got {got}",
                name,
                (i,),
                texts={"got": type_name(value)},
            )
        values += value.shape
    # device arrays meet by their ranges, host arrays as the CPU finds
    # them (numpy views of one buffer); a host array and a device array
    # never share memory
    ranges = [(i, a.pointer, a.pointer + n) for i, a in arrays.items() if (n := a.nbytes)]
    pair = overlapping_ranges(ranges, written) or overlapping([(i, host) for i, (_, host) in hosts.items()], written)
    if pair is not None:
        raise overlap_error(name, pair)
    ordinals = _ordinals(arrays)
    devices = set(ordinals.values())
    if len(devices) > 1:
        raise _apart(name, ordinals)
    target = device(devices.pop() if devices else 0)
    target.check_usable()
    copies: dict[int, _Copy] = {}
    try:
        target.activate()
        for array in arrays.values():
            if array.stream not in (None, LEGACY_DEFAULT_STREAM, stream):
                _call("cuStreamSynchronize", array.stream)
        for i, (index, host) in hosts.items():
            copy = copies[i] = _Copy(host, int(_call("cuMemAlloc", max(host.nbytes, 1))), i in written)
            values[index] = copy.pointer
            if host.nbytes:
                _call("cuMemcpyHtoDAsync", copy.pointer, host.ctypes.data, host.nbytes, stream)
        slot = target.slot()
        values += (slot.device, GPU_ERROR_WORDS)
        try:
            kernel = target.kernel(plan.program, plan.entry, plan.struct.size)
            trip = None if plan.bounds is None else plan.bounds.trip_count(args)
            grid, block = kernel.occupancy.shape(trip)
            if plan.arena:
                threads, per_thread = arena_plan(arena, kernel.occupancy.wave)
                grid = min(grid, threads // block)
                values += (target.arena(stream, threads * per_thread), per_thread)
            _enqueue(kernel, grid, block, plan.struct, values, stream)
        except BaseException:
            target.slots.append(slot)
            raise
        thread = threading.get_ident() if stream == PER_THREAD_STREAM else None
        record = _Launch(target, stream, slot, plan.program.check_table, [a.owner for a in arrays.values()], thread)
        for copy in copies.values():
            if copy.back and copy.array.nbytes:
                _call("cuMemcpyDtoHAsync", copy.array.ctypes.data, copy.pointer, copy.array.nbytes, stream)
        if wait or copies:
            _call("cuStreamSynchronize", stream)
            _finish(record)
        else:
            _pending.append(record)
    except BaseException as error:
        failure = target.lose(error) if isinstance(error, ContextLostError) else error
        _free(target, copies.values(), failure)
        if failure is error:
            raise
        raise failure from None
    _free(target, copies.values(), None)


def _free(target: _Device, copies: Iterable[_Copy], failure: BaseException | None) -> None:
    """Free a launch's device copies of host arrays, each whatever freeing
    the others did; a lost context's memory is gone with it, and a free
    that loses the context loses the device (``lose``).  A free's error (a
    lost context first) is raised once the others are freed, unless the
    launch is already raising ``failure``: it is then the last of that
    error's contexts, so that it neither replaces nor hides it."""
    error: CUDAError | None = None
    for copy in copies:
        if target.lost is not None:
            break
        try:
            _call("cuMemFree", copy.pointer)
        except ContextLostError as lost:
            error = target.lose(lost)
        except CUDAError as other:
            error = error or other
    if error is None:
        return
    if failure is None:
        raise error
    last = failure  # the end of the chain a traceback shows
    while last.__context__ is not None and not last.__suppress_context__:
        last = last.__context__
    last.__context__, last.__suppress_context__ = error, False


@dataclass
class _Copy:
    """A host array's device copy, recorded as soon as it is allocated so
    that a launch failing later (a copy in, another allocation) frees it."""

    array: np.ndarray
    pointer: int
    back: bool
    """The kernel writes the array: it is copied back."""


class _ParameterBuffer:
    """A parameter buffer of one size and the ``extra`` array of
    ``cuLaunchKernel`` that points the driver at it.  Making the two
    ctypes objects cost more than the rest of a launch's packing, so each
    thread keeps one per size (``_buffers``) and packs into it: the driver
    copies the parameters before ``cuLaunchKernel`` returns, and a thread
    launches one kernel at a time."""

    def __init__(self, size: int):
        self.buffer = (ctypes.c_char * size)()
        self.size = ctypes.c_size_t(size)
        # CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END
        self.extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(self.buffer), 2, ctypes.addressof(self.size), 0)
        self.address = ctypes.addressof(self.extra)


class _ThreadBuffers(threading.local):
    """A thread's ``_ParameterBuffer`` of each size, by size."""

    def __init__(self) -> None:
        self.by_size: dict[int, _ParameterBuffer] = {}


_buffers = _ThreadBuffers()


def _enqueue(
    kernel: LoadedKernel, grid: int, block: int, parameters: struct.Struct, values: Sequence[Any], stream: int
) -> None:
    """Launch ``grid`` blocks of ``block`` threads with ``values`` packed by
    ``parameters``."""
    buffers = _buffers.by_size
    if (buffer := buffers.get(parameters.size)) is None:
        buffer = buffers[parameters.size] = _ParameterBuffer(parameters.size)
    parameters.pack_into(buffer.buffer, 0, *values)
    _call("cuLaunchKernel", kernel.function, grid, 1, 1, block, 1, 1, 0, stream, None, buffer.address)


def _finish(record: _Launch) -> None:
    """Give a finished launch's slot back and raise the error the slot
    holds."""
    words = list(record.slot.words) if record.slot.words[0] else None
    record.device.slots.append(record.slot)
    if words is not None:
        raise_gpu_error(record.check_table, words)


def synchronize() -> None:
    """Wait for every launch queued on a stream, then raise the first error
    one of them reported (all are waited for).  Each stream is
    synchronised once, however many launches it holds.

    A wait that fails (a ``CUDAError``) leaves its stream's launches queued
    for a later call, and the other streams are still waited for; an
    interrupt (Ctrl-C) stops the waiting, leaving the streams not waited
    for queued.  A device whose context is lost (``ContextLostError``, by
    a wait here or by any call before, in any thread) has its launches
    dropped instead: none of them can finish, and each is reported once,
    by the ``ContextLostError`` of the first ``synchronize`` after the
    loss.  The launches of the streams waited for are finished either way
    (their slots given back, their errors read), and what is raised is the
    most pressing of the interrupt, a lost context, the first other driver
    error and the first check's error, each with the next as its
    ``__context__``, so that none is lost."""
    with _pending_lock:
        launches = _pending[:]
        del _pending[: len(launches)]  # what other threads queue meanwhile stays
    finished, driver_error, interrupt = _wait(launches)
    first: LocatedError | None = None
    unfinished: list[_Launch] = []
    dropped: dict[int, int] = {}
    """Per device ordinal, the launches taken here that its lost context dropped."""
    for record in launches:
        if record.queue in finished:
            try:
                _finish(record)
            except LocatedError as error:
                first = first or error
        elif record.device.lost is not None:  # dropped: it can never finish
            dropped[record.device.ordinal] = dropped.get(record.device.ordinal, 0) + 1
        else:
            unfinished.append(record)
    with _pending_lock:
        _pending[:0] = unfinished
    lost = [found.report_dropped(dropped.get(o, 0)) for o, found in list(_devices.items()) if found.lost is not None]
    raised: BaseException | None = None
    for pressing in (first, driver_error, *reversed(lost), interrupt):
        if pressing is not None:
            pressing.__context__ = raised
            raised = pressing
    if raised is not None:
        raise raised


def _wait(launches: Sequence[_Launch]) -> tuple[set[_Queue], Exception | None, BaseException | None]:
    """Wait for each queue of ``launches`` once (``_Launch.queue``): the
    queues waited for, the first driver error that did not lose a context
    (one that does loses its device, ``_Device.lose``) and an interrupt
    that stopped the waiting.  Another thread's per-thread stream is not
    this thread's to name: its launches are waited for with the whole
    context."""
    finished: set[_Queue] = set()
    driver_error: Exception | None = None
    here = threading.get_ident()
    for queue, record in {record.queue: record for record in launches}.items():
        if record.device.lost is not None:
            continue
        try:
            record.device.activate()
            if record.thread in (None, here):
                _call("cuStreamSynchronize", record.stream)
            else:
                _call("cuCtxSynchronize")
        except ContextLostError as error:
            record.device.lose(error)
        except Exception as error:
            driver_error = driver_error or error
        except BaseException as interrupt:
            return finished, driver_error, interrupt
        else:
            finished.add(queue)
    return finished, driver_error, None


def release_arenas() -> None:
    """Free the arena buffers kept for later launches (each stream keeps
    the largest one its launches needed, at most ``ARENA_LIMIT``), after
    waiting for the launches that use them.  Every device is released;
    then a lost context is raised first, as ``synchronize`` does, with the
    other errors each the next one's ``__context__``, so that an ordinary
    error of one device does not hide another's lost context."""
    errors: list[CUDAError] = []
    for found in list(_devices.values()):
        try:
            found.release_arenas()
        except CUDAError as error:
            errors.append(error)
    raised: CUDAError | None = None
    for pressing in sorted(errors, key=lambda found: isinstance(found, ContextLostError)):
        if raised is not None:  # a lost context was raised ``from None``
            pressing.__context__, pressing.__suppress_context__ = raised, False
        raised = pressing
    if raised is not None:
        raise raised
