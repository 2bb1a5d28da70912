"""Host time of a kernel launch: ``rv.cuda.kernel(log_sin)(y, x, stream=s)``
on two 1-element device arrays, launched again and again without waiting,
as back-to-back launches of small kernels are.  What is timed is the
Python path from the call to the driver's launch: describing the arrays,
finding the specialisation, the argument checks, the parameters, the
error slot.

On a machine with a GPU (and CuPy) the launches are real, on CuPy arrays
and a CuPy stream, and the figure is what a caller waits for per launch.
Elsewhere, or with ``--fake``, the driver is ``FakeDriver``: its calls
return at once, so the figure is revmlir's own Python (the real driver's
calls add their own time).  ``--profile`` prints the functions
that take the time.

    python benchmarks/launch_overhead.py [--fake] [--launches N] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import ctypes
import enum
import pstats
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import revmlir as rv
from revmlir.gpu import runtime

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "python"))


class FakeDriver:
    """The calls of ``cuda.bindings.driver`` the runtime makes, answered
    without a GPU: each returns ``(CUDA_SUCCESS, value…)`` at once.  Host
    memory it allocates is real (an error slot's words can be read and
    written), mapped at another address on the device, as a GPU maps it
    (``MAPPED``: a kernel given the host's address would fail);
    device memory is addresses only.  ``calls`` lists the calls
    made, by name; ``on_launch(parameters)``, if set, sees each launch's
    packed parameter buffer, as a kernel would (and may write its error
    slot)."""

    class CUresult(enum.IntEnum):
        CUDA_SUCCESS = 0
        CUDA_ERROR_INVALID_VALUE = 1
        CUDA_ERROR_INVALID_HANDLE = 400
        CUDA_ERROR_ILLEGAL_ADDRESS = 700
        CUDA_ERROR_LAUNCH_FAILED = 719

    class CUfunction_attribute(enum.IntEnum):
        CU_FUNC_ATTRIBUTE_NUM_REGS = 4

    class CUpointer_attribute(enum.IntEnum):
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9

    class CUdevice_attribute(enum.IntEnum):
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16

    CU_MEMHOSTALLOC_DEVICEMAP = 2
    MAPPED = 1 << 46
    """How far above its host address mapped host memory is on the device."""

    def __init__(self, devices: int = 1, on_launch: Callable[[bytes], None] | None = None):
        self.devices = devices
        self.on_launch = on_launch
        self.calls: list[str] = []
        self.host: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self.next_device_address = 0x7F00_0000_0000
        self.current = threading.local()
        """Each thread's current context, as the driver keeps it."""

    def _ok(self, name: str, *values: Any) -> tuple[Any, ...]:
        self.calls.append(name)
        return (self.CUresult.CUDA_SUCCESS, *values)

    def cuGetErrorName(self, result: Any) -> tuple[Any, bytes]:
        return self.CUresult.CUDA_SUCCESS, self.CUresult(result).name.encode()

    def cuDeviceGetCount(self) -> tuple[Any, ...]:
        return self._ok("cuDeviceGetCount", self.devices)

    def cuDeviceGet(self, ordinal: int) -> tuple[Any, ...]:
        return self._ok("cuDeviceGet", ordinal)

    def cuDevicePrimaryCtxRetain(self, device: int) -> tuple[Any, ...]:
        return self._ok("cuDevicePrimaryCtxRetain", 0xC0 + device)

    def cuCtxSetCurrent(self, context: Any) -> tuple[Any, ...]:
        self.current.context = context
        return self._ok("cuCtxSetCurrent")

    def cuCtxGetCurrent(self) -> tuple[Any, ...]:
        return self._ok("cuCtxGetCurrent", getattr(self.current, "context", 0))

    def cuModuleLoadData(self, image: bytes) -> tuple[Any, ...]:
        return self._ok("cuModuleLoadData", object())

    def cuModuleGetFunction(self, module: Any, name: bytes) -> tuple[Any, ...]:
        return self._ok("cuModuleGetFunction", name)

    def cuFuncGetParamInfo(self, function: Any, index: int) -> tuple[Any, ...]:
        return self.CUresult.CUDA_ERROR_INVALID_VALUE, 0, 0  # the driver does not say: no size check

    def cuOccupancyMaxPotentialBlockSize(self, function: Any, *_: Any) -> tuple[Any, ...]:
        return self._ok("cuOccupancyMaxPotentialBlockSize", 264, 640)

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, function: Any, block: int, shared: int) -> tuple[Any, ...]:
        # an H200 with 44 registers a thread (the occupancy block's 640)
        return self._ok(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor", min(32, 65536 // (48 * block), 64 // -(-block // 32))
        )

    def cuDeviceGetAttribute(self, attribute: Any, device: int) -> tuple[Any, ...]:
        assert attribute == self.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        return self._ok("cuDeviceGetAttribute", 132)

    def cuFuncGetAttribute(self, attribute: Any, function: Any) -> tuple[Any, ...]:
        return self._ok("cuFuncGetAttribute", 44)

    def cuPointerGetAttribute(self, attribute: Any, pointer: int) -> tuple[Any, ...]:
        return self._ok("cuPointerGetAttribute", pointer >> 40)  # device d's addresses start at d·2⁴⁰

    def cuMemAlloc(self, nbytes: int) -> tuple[Any, ...]:
        address, self.next_device_address = self.next_device_address, self.next_device_address + nbytes + 256
        return self._ok("cuMemAlloc", address)

    def cuMemFree(self, pointer: int) -> tuple[Any, ...]:
        return self._ok("cuMemFree")

    def _host_memory(self, nbytes: int) -> int:
        # not zeroed, as the driver's is not; garbage whose every 64-byte
        # line starts with a zero word, as a slot's check id may by chance
        garbage = (bytes(8) + b"\xa5" * 56) * (nbytes // 64 + 1)
        buffer = ctypes.create_string_buffer(garbage[:nbytes], nbytes)
        self.host[ctypes.addressof(buffer)] = buffer
        return ctypes.addressof(buffer)

    def cuMemHostAlloc(self, nbytes: int, flags: int) -> tuple[Any, ...]:
        return self._ok("cuMemHostAlloc", self._host_memory(nbytes))

    def cuMemHostGetDevicePointer(self, pointer: int, flags: int) -> tuple[Any, ...]:
        return self._ok("cuMemHostGetDevicePointer", pointer + self.MAPPED)

    def cuMemFreeHost(self, pointer: int) -> tuple[Any, ...]:
        del self.host[pointer]
        return self._ok("cuMemFreeHost")

    def host_address(self, device: int) -> int:
        """The host address of ``device``, an address of mapped host
        memory on the device: what a kernel's writes to it reach."""
        host = device - self.MAPPED
        assert any(start <= host < start + len(memory) for start, memory in self.host.items()), hex(device)
        return host

    def cuMemcpyHtoDAsync(self, device: int, host: int, nbytes: int, stream: int) -> tuple[Any, ...]:
        return self._ok("cuMemcpyHtoDAsync")

    def cuMemcpyDtoHAsync(self, host: int, device: int, nbytes: int, stream: int) -> tuple[Any, ...]:
        return self._ok("cuMemcpyDtoHAsync")

    def cuStreamSynchronize(self, stream: int) -> tuple[Any, ...]:
        return self._ok("cuStreamSynchronize")

    def cuCtxSynchronize(self) -> tuple[Any, ...]:
        return self._ok("cuCtxSynchronize")

    def cuLaunchKernel(self, function: Any, *configuration: Any) -> tuple[Any, ...]:
        extra = configuration[-1]
        if self.on_launch is not None:
            # CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END
            words = (ctypes.c_void_p * 5).from_address(extra)
            size = ctypes.c_size_t.from_address(words[3]).value
            self.on_launch(ctypes.string_at(words[1], size))
        return self._ok("cuLaunchKernel")


class FakeDeviceArray:
    """A device array as CuPy shows one (``__cuda_array_interface__``
    version 3); its memory is never touched."""

    def __init__(self, pointer: int, shape: tuple[int, ...], typestr: str = "<f8"):
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": shape,
            "typestr": typestr,
            "data": (pointer, False),
            "strides": None,
            "stream": 1,
        }


@contextlib.contextmanager
def fake_driver(fake: FakeDriver) -> Iterator[FakeDriver]:
    """The runtime launching through ``fake`` in the block, on devices,
    contexts and pending launches of its own; as it was after."""
    saved = runtime.driver, dict(runtime._devices), list(runtime._pending)
    runtime.driver = lambda: fake  # type: ignore[assignment]
    runtime._devices.clear()
    runtime._pending.clear()
    runtime.device_count.cache_clear()
    try:
        yield fake
    finally:
        runtime.driver, devices, pending = saved  # type: ignore[assignment]
        runtime._devices.clear()
        runtime._devices.update(devices)
        runtime._pending[:] = pending
        runtime.device_count.cache_clear()


def per_launch(launch: Callable[[], Any], launches: int, clock: Callable[[], float]) -> float:
    """``launches`` calls' time by ``clock``, in µs per call."""
    start = clock()
    for _ in range(launches):
        launch()
    return (clock() - start) / launches * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fake", action="store_true", help="time against FakeDriver even where a GPU is")
    parser.add_argument("--launches", type=int, default=2000, help="launches per timed repeat (default 2000)")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats; their median is reported (default 7)")
    parser.add_argument("--profile", action="store_true", help="print the profile of one repeat")
    options = parser.parse_args(argv)
    import gpu_elementwise

    kernel = rv.cuda.kernel(gpu_elementwise.log_sin)
    with contextlib.ExitStack() as context:
        if not options.fake and rv.cuda.is_available():
            import cupy as cp

            x, y = cp.full(1, 2.0), cp.zeros(1)
            stream: Any = cp.cuda.Stream(non_blocking=True)
            cp.cuda.Device().synchronize()  # the arrays are made on a stream the launches' does not wait for
            print("real driver, CuPy arrays")
        else:
            context.enter_context(fake_driver(FakeDriver()))
            x, y, stream = FakeDeviceArray(0x1000, (1,)), FakeDeviceArray(0x2000, (1,)), 0x77
            print("fake driver (revmlir's Python alone)")

        def launch() -> None:
            kernel(y, x, stream=stream)

        per_launch(launch, options.launches, time.perf_counter)  # compiles, loads, allocates the slots
        rv.cuda.synchronize()
        for clock_name, clock in (("wall", time.perf_counter), ("cpu", time.process_time)):
            figures = []
            for _ in range(options.repeats):
                figures.append(per_launch(launch, options.launches, clock))
                rv.cuda.synchronize()
            print(
                f"{clock_name}: {statistics.median(figures):.2f} µs per launch "
                f"(median of {options.repeats} × {options.launches}; range {min(figures):.2f}–{max(figures):.2f})"
            )
        if options.profile:
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(options.launches):
                launch()
            profile.disable()
            rv.cuda.synchronize()
            pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
