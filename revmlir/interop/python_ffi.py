"""XLA FFI handlers written in Python: a function of numpy arrays as a
custom call on the CPU.

``rv.to_jax`` runs what has no native handler (the interpreter backend, an
argument native code's custom call does not pass) in Python under
``jax.jit``.  Through ``jax.pure_callback`` a failed run-time check reached
the user as ``INTERNAL: CpuCallback error calling callback:`` and a Python
traceback, and JAX logged that traceback to stderr, where the native
handler's error is ``UNKNOWN: ExecutionError: file:line:col: …``.  A
handler here is a ctypes function with the C signature of XLA's handlers
(``revmlir.interop.xla_ffi``): it reads the call frame, runs the function on
numpy views of the argument buffers (read-only, as the callback's were),
copies its results into the result buffers and turns an exception into an
FFI error of the same form as the native handler's.
"""

from __future__ import annotations

import ctypes
import itertools
import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import jax
import numpy as np

from revmlir.interop.xla_ffi import (
    API_ERROR_CREATE,
    API_MAJOR,
    API_MINOR,
    API_VERSION_SIZE,
    BUFFER_DATA,
    BUFFER_DIMS,
    BUFFER_DTYPE,
    BUFFER_RANK,
    DTYPES,
    ERROR_CREATE_ARGS_SIZE,
    EXECUTE,
    EXTENSION_TYPE,
    FRAME_API,
    FRAME_ARGS,
    FRAME_ARGS_SIZE,
    FRAME_EXTENSION,
    FRAME_RETS,
    FRAME_RETS_SIZE,
    FRAME_STAGE,
    METADATA,
    METADATA_EXTENSION_METADATA,
    METADATA_TRAITS,
    METADATA_VERSION,
    UNKNOWN,
)

Run = Callable[[Any, list[np.ndarray], list[np.ndarray]], Sequence[Any]]
"""What a handler runs: its owner (``call``), the argument buffers and the
result buffers (read for their shapes) as numpy arrays in, one array per
result out."""

_HANDLER = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_ERROR_CREATE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_DTYPES = {code: dtype for dtype, code in DTYPES.items()}

_registered: dict[tuple[int, Hashable], str] = {}
"""The target name of every handler registered, by its owner's identity
and key."""
_handlers: list[Any] = []
"""Every ctypes function registered, with its owner and ``run``: XLA may
call it as long as a compiled computation names it, which a user may keep
after every Python object that made it is gone, so each is kept, and its
owner with it, for the rest of the process (one per ``rv.to_jax(f)``
signature and key; a batch's size is not in the key)."""
_registering = threading.Lock()
_numbers = itertools.count()

FAILED = "revmlir's Python handler failed"
"""The error of a handler that could not report what failed."""


def _pointer(address: int) -> int:
    return ctypes.c_void_p.from_address(address).value or 0


def _int32(address: int) -> ctypes.c_int32:
    return ctypes.c_int32.from_address(address)


def _buffers(frame: int, size_at: int, array_at: int, writable: bool) -> list[np.ndarray]:
    """The frame's argument or result buffers as numpy arrays over XLA's memory."""
    found = []
    array = _pointer(frame + array_at)
    for i in range(ctypes.c_int64.from_address(frame + size_at).value):
        buffer = _pointer(array + 8 * i)
        code = _int32(buffer + BUFFER_DTYPE).value
        if code not in _DTYPES:
            raise TypeError(f"an XLA buffer of data type {code}, which revmlir does not take")
        dtype = _DTYPES[code]
        dims = _pointer(buffer + BUFFER_DIMS)
        rank = ctypes.c_int64.from_address(buffer + BUFFER_RANK).value
        shape = tuple(ctypes.c_int64.from_address(dims + 8 * d).value for d in range(rank))
        size = int(np.prod(shape)) * dtype.itemsize
        if not size:
            found.append(np.zeros(shape, dtype))
            continue
        view = np.frombuffer((ctypes.c_char * size).from_address(_pointer(buffer + BUFFER_DATA)), dtype).reshape(shape)
        view.flags.writeable = writable
        found.append(view)
    return found


def _answer_metadata(extension: int) -> None:
    """The metadata query: the API version the handler speaks, no traits
    (as the native handlers answer it)."""
    metadata = _pointer(extension + METADATA_EXTENSION_METADATA)
    ctypes.c_int64.from_address(metadata + METADATA_VERSION).value = API_VERSION_SIZE
    ctypes.c_void_p.from_address(metadata + METADATA_VERSION + 8).value = None
    _int32(metadata + METADATA_VERSION + 16).value = API_MAJOR
    _int32(metadata + METADATA_VERSION + 20).value = API_MINOR
    _int32(metadata + METADATA_TRAITS).value = 0


def _error(frame: int, message: str) -> int:
    """An FFI error (``UNKNOWN``, as the native handlers' run-time checks)
    carrying ``message``; XLA copies the message."""
    # a message may hold surrogate escapes (of a file name not in UTF-8)
    text = ctypes.create_string_buffer(message.encode("utf-8", "backslashreplace"))
    args = (ctypes.c_char * ERROR_CREATE_ARGS_SIZE)()
    ctypes.c_int64.from_buffer(args, 0).value = ERROR_CREATE_ARGS_SIZE
    ctypes.c_void_p.from_buffer(args, 16).value = ctypes.addressof(text)
    ctypes.c_int32.from_buffer(args, 24).value = UNKNOWN
    create = _ERROR_CREATE(_pointer(_pointer(frame + FRAME_API) + API_ERROR_CREATE))
    return create(ctypes.addressof(args)) or 0


def _handler(owner: Any, run: Run) -> Any:
    """The ctypes function XLA calls for ``run``.  Nothing escapes it: ctypes
    would print an exception and return as if the call had succeeded, or
    hand XLA an invalid error (which ends the process)."""

    def handle(frame: int) -> int | None:
        try:
            try:
                return _handle(frame, owner, run)
            except BaseException as error:  # noqa: BLE001 - the message is what crosses XLA
                return _error(frame, f"{type(error).__name__}: {error}")
        except BaseException:  # noqa: BLE001 - last resort: a message that cannot fail
            return _error(frame, FAILED)

    return _HANDLER(handle)


def _handle(frame: int, owner: Any, run: Run) -> int | None:
    """Answer XLA's call with ``frame``: the metadata query, or at the
    execute stage ``run`` on the buffers."""
    extension = _pointer(frame + FRAME_EXTENSION)
    if extension and _int32(extension + EXTENSION_TYPE).value == METADATA:
        _answer_metadata(extension)
        return None
    if _int32(frame + FRAME_STAGE).value != EXECUTE:
        return None
    arguments = _buffers(frame, FRAME_ARGS_SIZE, FRAME_ARGS, writable=False)
    results = _buffers(frame, FRAME_RETS_SIZE, FRAME_RETS, writable=True)
    for result, value in zip(results, run(owner, arguments, results), strict=True):
        np.copyto(result, value)
    return None


def call(owner: Any, key: Hashable, run: Run, results: Sequence[jax.ShapeDtypeStruct], *operands: Any) -> list[Any]:
    """A custom call running ``run`` on ``owner`` and the operands' buffers
    (to lower under ``jax.jit`` on the CPU), with results of the shapes and
    dtypes of ``results``.  ``owner`` and ``key`` say what ``run`` runs, so
    that a computation lowered again calls the handler registered the first
    time; the key holds only what the buffers do not tell (``run`` reads
    shapes from them).  The handler holds the owner for the rest of the
    process: a compiled computation the user keeps may call it after every
    other reference is gone."""
    with _registering:
        if (name := _registered.get((id(owner), key))) is None:
            handler = _handler(owner, run)
            name = f"revmlir_python_{next(_numbers)}"
            address = ctypes.cast(handler, ctypes.c_void_p).value
            jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(address), platform="cpu")
            _handlers.append(handler)
            _registered[id(owner), key] = name
    return list(jax.ffi.ffi_call(name, list(results))(*operands))
