"""Arrays a GPU kernel takes, described without touching the driver.

A kernel runs on device memory.  Arrays that already live on a CUDA device
are used in place: anything with ``__cuda_array_interface__`` (CuPy, numba,
PyTorch) or with ``__dlpack__`` and a CUDA ``__dlpack_device__`` (JAX,
PyTorch, CuPy).  numpy arrays, and DLPack producers on the CPU, are host
arrays: the runtime copies them in before the launch and back after it.

The interface decides first, as its producers mean it: a CPU array of
PyTorch or JAX raises ``AttributeError`` when asked for it, numpy has
none, so an interface that is absent, raises ``AttributeError`` or is
None is not offered, and the object is what its DLPack device says (a
torch CPU tensor, a JAX CPU array: host arrays).  An interface that is
offered is a CUDA array whatever DLPack says; one that is no dict is a
``TypeError``.  Only CUDA and host DLPack devices are taken.
This module reads both protocols into one description, ``DeviceArray``, and
checks what a kernel needs of it (element type, rank, C-contiguity, write
access), so that everything but the launch itself is testable without a GPU.
What it finds wrong with a value is a ``RefusedArray`` (a ``TypeError``)
or, for values no array has, an ``ImpossibleArray`` (a ``ValueError``),
which the launch says again naming the argument the value was given for.
"""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from revmlir.runtime.arguments import ArgumentTypeError

DLPACK_CPU = 1
DLPACK_CUDA = 2
DLPACK_CUDA_HOST = 3
DLPACK_CUDA_MANAGED = 13
DEVICE_KINDS = (DLPACK_CUDA, DLPACK_CUDA_MANAGED)
"""DLPack device types whose memory a kernel reads in place."""
HOST_KINDS = (DLPACK_CPU, DLPACK_CUDA_HOST)
"""DLPack device types of host memory (pinned, for the second), which a
launch copies in as it does a numpy array's."""
LEGACY_DEFAULT_STREAM = 1
"""The stream number the array protocols use for CUDA's legacy default
stream (0 is reserved: it would be ambiguous)."""
_DLPACK_READ_ONLY = 1
_DLPACK_CODES = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}
"""DLPack type codes → numpy kinds (int, uint, float, complex, bool)."""


class RefusedArray(TypeError):
    """A value no kernel argument can be, said of the value ("a CuPy array
    is not C-contiguous"): it is described before the launch knows which
    argument it is for (``revmlir.gpu.runtime.describe`` names it)."""


class ImpossibleArray(ValueError):
    """An array whose description has the right types but values no array
    has (a negative extent, a pointer outside the address space), said of
    the value as a ``RefusedArray`` is; ``describe`` names the argument."""


@dataclass(slots=True)
class DeviceArray:
    """An array in device memory, as a kernel argument sees it.  One is made
    per device array a launch takes, so it is a plain record with slots
    (a frozen dataclass's ``__init__`` costs four times as much); nothing
    changes it once made."""

    pointer: int
    shape: tuple[int, ...]
    dtype: np.dtype
    readonly: bool
    device: int | None
    """The device ordinal where the producer says it (DLPack); None where
    the runtime asks the driver (``__cuda_array_interface__``)."""
    owner: Any
    """What keeps the memory alive while a launch uses it (the array, or its
    DLPack capsule, whose destructor gives the tensor back)."""
    producer: str
    """The array's library, for messages: "a CuPy array"."""
    stream: int | None = None
    """The producer's stream that must finish before the kernel reads the
    array (``__cuda_array_interface__`` version 3), if not the default."""

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def producer_name(value: Any) -> str:
    """ "a CuPy array", "a torch array"…: the library a value comes from."""
    return _producer_of(type(value).__module__)


@functools.cache
def _producer_of(module_path: str) -> str:
    module = module_path.split(".")[0]
    return "a " + {"cupy": "CuPy", "jaxlib": "JAX", "jax": "JAX"}.get(module, module) + " array"


def kernel_array(value: Any, stream: int) -> DeviceArray | np.ndarray | None:
    """``value`` as a kernel takes it: a device array (used in place) as a
    ``DeviceArray``, a host array (numpy, a DLPack producer on the CPU such
    as a torch CPU tensor) as the numpy array sharing its memory; None for
    anything else.  ``stream`` is the stream the kernel runs on, which a
    DLPack producer orders its own work before.  Each protocol is looked up
    once: a launch describes every array it takes."""
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is not None:
        if not isinstance(interface, dict):
            raise RefusedArray(
                f"{producer_name(value)}'s __cuda_array_interface__ is {type(interface).__name__}, not a dict"
            )
        return cuda_array(value, interface)
    if isinstance(value, np.ndarray):
        return value
    if not hasattr(value, "__dlpack_device__"):
        return None
    try:
        kind, _ = value.__dlpack_device__()
    except Exception:  # a producer that cannot say is no array a kernel takes
        return None
    if int(kind) in DEVICE_KINDS:
        return _from_dlpack(value, stream)
    if int(kind) not in HOST_KINDS:
        raise RefusedArray(
            f"{producer_name(value)} is on DLPack device type {int(kind)}: kernels take arrays in CUDA memory "
            "(used in place) or in host memory (copied)"
        )
    return np.from_dlpack(value)


ADDRESS_SPACE = 2**64
"""Device pointers and stream handles are 64-bit."""
LARGEST_EXTENT = 2**63 - 1
"""A kernel takes each size as an ``i64`` (the ABI of docs/gpu.md)."""


def cuda_array(value: Any, interface: dict[str, Any]) -> DeviceArray:
    """The description of ``value``, whose ``__cuda_array_interface__`` is
    ``interface`` (read once: CuPy builds it at each read), checked as the
    CUDA Array Interface (version 3) defines it: ``shape`` a tuple of
    non-negative integers, ``typestr`` numpy's type string, ``data`` a
    pointer and a read-only flag, ``version`` an integer, and the optional
    ``strides`` (one integer per dimension), ``stream`` (an integer handle,
    not 0) and ``mask``.  A field missing or of another type is a
    ``RefusedArray``, a value no array has an ``ImpossibleArray``, each
    naming the field: the kernel would take a negative extent as a huge
    unsigned size, and a pointer past 64 bits failed in the parameters'
    packing, naming nothing."""
    what = producer_name(value)
    if interface.get("mask") is not None:
        raise RefusedArray(f"{what} with a mask (__cuda_array_interface__) cannot be a kernel argument")
    try:
        shape, typestr, data, version = (
            interface["shape"],
            interface["typestr"],
            interface["data"],
            interface["version"],
        )
    except KeyError as missing:
        raise RefusedArray(
            f"{what}'s __cuda_array_interface__ has no {missing.args[0]!r}, which the protocol requires"
        ) from None
    if not _extents(shape):
        if _integers(shape):
            raise ImpossibleArray(_field(what, "shape", shape, "an extent is 0 to 2**63-1"))
        raise RefusedArray(_field(what, "shape", shape, "the protocol's shape is a tuple of integers"))
    dtype = _dtype_of(typestr) if type(typestr) is str else None
    if dtype is None:
        raise RefusedArray(_field(what, "typestr", typestr, "the protocol's typestr is a numpy type string ('<f8')"))
    if not (type(data) is tuple and len(data) == 2 and _integer(data[0]) and _flag(data[1])):
        raise RefusedArray(_field(what, "data", data, "the protocol's data is (pointer: int, read-only: bool)"))
    if not all(type(extent) is int for extent in shape):  # numpy's: no overflow in the product
        shape = tuple(map(int, shape))
    pointer, readonly = int(data[0]), data[1]
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes >= ADDRESS_SPACE:  # each extent in range, their product not
        raise ImpossibleArray(_field(what, "shape", shape, f"its {nbytes} bytes pass 2**64"))
    if pointer == 0 and nbytes:
        raise ImpossibleArray(_field(what, "data", data, f"a null pointer for {nbytes} bytes"))
    if pointer < 0:
        raise ImpossibleArray(_field(what, "data", data, "a pointer is 0 to 2**64-1"))
    if pointer + nbytes > ADDRESS_SPACE:
        raise ImpossibleArray(_field(what, "data", data, f"{nbytes} bytes from {pointer:#x} pass 2**64"))
    if not _integer(version):
        raise RefusedArray(_field(what, "version", version, "the protocol's version is an integer"))
    strides = interface.get("strides")
    if strides is not None:
        if not _integers(strides) or len(strides) != len(shape):
            rule = f"the protocol's strides are None or a tuple of {len(shape)} integers, one per dimension"
            raise RefusedArray(_field(what, "strides", strides, rule))
        if not _c_contiguous(shape, strides, dtype.itemsize):
            raise _not_contiguous(what)
    stream = interface.get("stream")
    if stream is not None and not (_integer(stream) and 0 < stream < ADDRESS_SPACE):
        if _integer(stream):
            rule = "a stream handle is 1 to 2**64-1 (the protocol disallows 0, which is ambiguous)"
            raise ImpossibleArray(_field(what, "stream", stream, rule))
        raise RefusedArray(_field(what, "stream", stream, "the protocol's stream is None or an integer handle"))
    return DeviceArray(pointer, shape, dtype, bool(readonly), None, value, what, stream)


def _integer(value: Any) -> bool:
    """An integer of Python or numpy, not a bool (which the protocol never
    means as a number; ``bool`` is no ``int`` by ``type``, ``np.bool_`` no
    ``np.integer``)."""
    return type(value) is int or isinstance(value, np.integer)


def _integers(values: Any) -> bool:
    return type(values) is tuple and all(_integer(v) for v in values)


def _extents(shape: Any) -> bool:
    """Whether ``shape`` is a tuple of integers a kernel takes as sizes."""
    return type(shape) is tuple and all(_integer(e) and 0 <= e <= LARGEST_EXTENT for e in shape)


def _flag(value: Any) -> bool:
    return type(value) is bool or isinstance(value, np.bool_)


def _field(what: str, key: str, value: Any, rule: str) -> str:
    return f"{what}'s __cuda_array_interface__ has {key}={value!r}: {rule}"


@functools.cache
def _dtype_of(typestr: str) -> np.dtype | None:
    """numpy's dtype of an interface's ``typestr``, parsed once per string;
    None for a string numpy does not read."""
    try:
        return np.dtype(typestr)
    except (TypeError, ValueError):
        return None


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(value: Any, stream: int) -> DeviceArray:
    what = producer_name(value)
    try:
        capsule = value.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:  # producers before DLPack 1.0 take no max_version
        capsule = value.__dlpack__(stream=stream)
    array, kind = dlpack_array(capsule, what)
    if kind not in DEVICE_KINDS:
        raise RefusedArray(f"{what} is not in CUDA memory (DLPack device type {kind})")
    return array


def dlpack_array(capsule: Any, what: str) -> tuple[DeviceArray, int]:
    """The array a DLPack capsule holds, and its DLPack device type.  The
    capsule is kept (not renamed "used_dltensor"), so that its destructor
    hands the tensor back once the launch no longer holds it."""
    name = _capsule_name(capsule)
    managed: _DLManagedTensorVersioned | _DLManagedTensor
    if name == b"dltensor_versioned":
        managed = _DLManagedTensorVersioned.from_address(_capsule_pointer(capsule, name))
        readonly = bool(managed.flags & _DLPACK_READ_ONLY)
    elif name == b"dltensor":
        managed = _DLManagedTensor.from_address(_capsule_pointer(capsule, name))
        readonly = False
    else:
        raise RefusedArray(f"{what}: __dlpack__ gave a capsule named {name!r}, not an unused DLPack tensor")
    tensor = managed.dl_tensor
    dtype = dlpack_dtype(tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes, what)
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[i] * dtype.itemsize for i in range(tensor.ndim))
        if not _c_contiguous(shape, strides, dtype.itemsize):
            raise _not_contiguous(what)
    pointer = (tensor.data or 0) + tensor.byte_offset
    array = DeviceArray(pointer, shape, dtype, readonly, tensor.device.device_id, capsule, what)
    return array, tensor.device.device_type


def dlpack_dtype(code: int, bits: int, lanes: int, what: str) -> np.dtype:
    """The numpy dtype of a DLPack element type (no vector lanes)."""
    kind = _DLPACK_CODES.get(code)
    if kind is None or lanes != 1 or bits % 8:
        raise RefusedArray(
            f"{what} has elements of DLPack type (code {code}, {bits} bits, {lanes} lanes), "
            "which no kernel argument takes"
        )
    return np.dtype("?") if kind == "b" else np.dtype(f"{kind}{bits // 8}")


def _c_contiguous(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> bool:
    """Whether byte ``strides`` lay ``shape`` out row-major without gaps
    (dimensions of extent 1 may have any stride, as numpy allows)."""
    expected = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True


def _not_contiguous(what: str) -> RefusedArray:
    return RefusedArray(f"{what} is not C-contiguous; kernels take C-contiguous arrays (copy it first)")


def check_array(array: DeviceArray | np.ndarray, dtype: np.dtype, rank: int, func: str, index: int) -> None:
    """A ``TypeError`` unless ``array`` has the element type and rank that
    argument ``index`` of kernel ``func`` was compiled for."""
    if array.dtype != dtype or len(array.shape) != rank:
        what = array.producer if isinstance(array, DeviceArray) else "a numpy array"
        raise ArgumentTypeError(
            "argument {0} of {function} must be a {rank}-d array of {dtype}, got {what} of {got} with shape {shape}",
            func,
            (index,),
            texts={
                "rank": str(rank),
                "dtype": str(dtype),
                "what": what,
                "got": str(array.dtype),
                "shape": str(list(array.shape)),
            },
        )


def overlapping_ranges(ranges: Sequence[tuple[int, int, int]], written: frozenset[int]) -> tuple[int, int] | None:
    """The positions of the first two byte ranges ``(position, start, end)``
    that overlap where one of them is written: device arrays share memory
    exactly when their ranges meet, since kernels take contiguous arrays."""
    for a, (i, start, end) in enumerate(ranges):
        for j, other_start, other_end in ranges[a + 1 :]:
            if (i in written or j in written) and start < other_end and other_start < end:
                return min(i, j), max(i, j)
    return None
