"""The GPU runtime and ``rv.cuda`` where no GPU is needed: what the array
protocols describe, how parameters are packed, how an error slot becomes the
CPU's error, streams, and the errors of a machine without a GPU.  The
launches themselves are in ``test_gpu.py`` (marked ``gpu``)."""

from __future__ import annotations

import ctypes
import re
import struct
import subprocess
import sys
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ComplexType, MemRefType, ModuleOp, f32, f64, i1, i8, i32, i64
from xdsl.ir import Attribute

import revmlir as rv
from python_examples import load_benchmark
from revmlir import semantics
from revmlir.dialects.anc import StackType
from revmlir.dialects.rev import LogType
from revmlir.errors import ExecutionError
from revmlir.gpu import arrays, runtime, toolkit
from revmlir.gpu import program as gpu_program
from revmlir.gpu.arrays import DeviceArray
from revmlir.gpu.trip_count import Arithmetic, Cast, Constant, Expression, LoopBounds, Scalar, Size
from revmlir.runtime import cache
from revmlir.runtime_checks import GPU_ERROR_WORDS, PAYLOAD_SLOTS

try:
    import torch
except ImportError:  # the torch extra
    torch = None


@rv.reversible
def shift(y, x, k: int):
    y[k] += x[0]


@rv.reversible
def scale(y, x, a: float):
    for i in range(len(x)):
        y[i] += a * x[i]


@rv.reversible
def scale_kernel(y, x, a: float):
    for i in rv.prange(len(x)):
        y[i] += a * x[i]


class FakeCudaArray:
    """An object exposing a device array the way CuPy, numba and PyTorch do;
    its memory is never touched here."""

    def __init__(self, **interface: Any):
        self.__cuda_array_interface__ = {"version": 3, "strides": None, "data": (4096, False), **interface}


def test_import_revmlir_imports_no_cuda_package() -> None:
    code = (
        "import sys, revmlir as rv\n"
        "rv.cuda.kernel\n"
        "import revmlir.gpu.runtime, revmlir.gpu.arrays\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('cuda', 'cupy', 'numba')]\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.skipif(runtime.unavailable_reason() is None, reason="a GPU is here")
def test_a_launch_without_gpu_says_what_is_missing() -> None:
    assert not rv.cuda.is_available()
    k = rv.cuda.kernel(scale_kernel)
    with pytest.raises(rv.cuda.CUDAUnavailableError) as error:
        k(np.zeros(3), np.ones(3), 2.0)
    assert str(error.value) == runtime.unavailable_reason()
    assert any(word in str(error.value) for word in ("CUDA", "GPU", "NVIDIA"))


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((np.zeros(3), np.ones(3)), TypeError, r"scale_kernel\(\) takes 3 argument\(s\) \(y, x, a\), got 2"),
        ((np.zeros(3), np.ones(3), "2"), TypeError, "argument 'a' has unsupported type str"),
        ((np.zeros(3, np.int8), np.ones(3), 2.0), TypeError, r"argument 'y' .* \(arrays of int8 are not supported\)"),
        ((np.zeros(6)[::2], np.ones(3), 2.0), TypeError, "^argument 'y' of scale_kernel must be a C-contiguous"),
        ((np.zeros(3), np.ones(3), 2.0), ValueError, "argument 'y' of scale_kernel is a read-only array"),
    ],
    ids=["count", "scalar", "dtype", "strided", "read-only"],
)
def test_a_launch_checks_its_arguments_before_the_device(args: tuple[Any, ...], error: type, message: str) -> None:
    """A mistake in the arguments is reported as such on any machine: the
    launch checks them (the specialisation's count and types, then the
    kernel's shapes, layout and what it writes) before it asks for the
    device, where a machine without a GPU said only that CUDA is missing."""
    if error is ValueError:
        args[0].flags.writeable = False
    with pytest.raises(error, match=message):
        rv.cuda.kernel(scale_kernel)(*args)


def test_missing_bindings_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("cuda", "cuda.bindings", "cuda.bindings.driver"):  # imported already where the extra is
        monkeypatch.setitem(sys.modules, name, None)
    runtime.driver.cache_clear()
    try:
        with pytest.raises(runtime.CUDAUnavailableError, match=r"pip install 'revmlir\[cuda\]'"):
            runtime.driver()
    finally:
        runtime.driver.cache_clear()


def test_missing_driver_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """cuda.bindings without libcuda raises its own error from ``cuInit``."""

    def cuInit(flags: int) -> Any:
        raise RuntimeError('"cuda" is an NVIDIA driver library and can only be found via system search')

    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = types.SimpleNamespace(cuInit=cuInit)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    runtime.driver.cache_clear()
    try:
        with pytest.raises(runtime.CUDAUnavailableError, match="no NVIDIA driver found: .*system search"):
            runtime.driver()
    finally:
        runtime.driver.cache_clear()


def test_kernel_takes_reversible_functions_only() -> None:
    with pytest.raises(TypeError, match="rv.cuda.kernel expects a @rv.reversible function"):
        rv.cuda.kernel(lambda x: x)  # type: ignore[arg-type]
    assert repr(rv.cuda.kernel(~scale)) == "<CUDA kernel of ~scale>"
    assert repr(rv.cuda.kernel(rv.adjoint(scale))) == "<CUDA kernel of rv.adjoint(scale)>"


def test_a_kernel_made_again_is_the_same_kernel() -> None:
    """``rv.cuda.kernel(f)`` made where it is launched keeps its compiled
    specialisations: the same function (``~f``, ``rv.adjoint(f)`` made
    again) and architecture give the same ``Kernel``."""
    for target in (lambda: scale_kernel, lambda: ~scale_kernel, lambda: rv.adjoint(scale_kernel)):
        assert rv.cuda.kernel(target()) is rv.cuda.kernel(target())
    assert rv.cuda.kernel(scale_kernel, arch="sm_80") is not rv.cuda.kernel(scale_kernel)
    assert rv.cuda.kernel(rv.adjoint(scale_kernel, lanes=2)) is not rv.cuda.kernel(rv.adjoint(scale_kernel))
    with pytest.raises(ValueError, match=r"unknown GPU architecture '\['sm_90'\]'"):
        rv.cuda.kernel(scale_kernel, arch=["sm_90"]).compile(np.zeros(3), np.ones(3), 2.0)  # type: ignore[arg-type]


def test_adjoint_kernel_counts_its_gradients() -> None:
    k = rv.cuda.kernel(rv.adjoint(scale))
    with pytest.raises(TypeError, match=r"takes 3 argument\(s\) and 3 gradient\(s\), got 4"):
        k.compile(np.zeros(3), np.ones(3), 2.0, np.zeros(3))


@rv.reversible
def add_square(e: float, x, i):
    e += x[i] * x[i]


@rv.reversible
def sum_of_squares(y, x):
    for i in rv.prange(len(y)):
        add_square(y[i], x, i)


@pytest.mark.parametrize("function", [sum_of_squares, ~sum_of_squares, rv.adjoint(sum_of_squares)], ids=str)
def test_a_kernel_compile_analyses_each_module_it_writes_once(function: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which arrays a kernel may write is asked once of the module a
    compile makes of an adjoint: its verifier, which asks it per function
    with a parallel loop, and the launch's record share one answer; ``f``
    and ``~f`` take the specialisation's (here already worked out, as a
    derivative on the CPU does), so that its module is not asked again.
    The two the lowering asks are of other IR: the module with the
    inverses added, and the device's."""
    monkeypatch.setenv(cache.ENABLE_ENV, "0")
    args = (np.zeros(3), np.ones(3))
    spec = sum_of_squares.specialization_for(*args)
    assert spec.written == (True, False)
    analysed: list[int] = []
    answer = semantics._argument_writes
    monkeypatch.setattr(semantics, "_argument_writes", lambda module: analysed.append(id(module)) or answer(module))
    gradients = args if isinstance(function, type(rv.adjoint(sum_of_squares))) else ()
    compiled = rv.cuda.kernel(function).specialise(*args, *gradients)
    assert id(spec.module) not in analysed and len(analysed) == (3 if gradients else 2)
    assert compiled.written == ({0, 2, 3} if gradients else {0})


@rv.reversible
def noisy(y, x):
    for i in rv.prange(len(x)):
        with rv.safe():
            print("x =", x[i])
        y[i] += x[i]


def test_a_kernel_that_prints_is_an_error_at_the_print() -> None:
    """The device has no host to format a print: the error is at the print
    and names the function as the source does (it named PTX's
    ``revmlir_$_print``); a ``NativeCompilationError``, as the CPU's
    ``backend="native"`` raises where native code cannot run a function (it
    was xDSL's ``PassFailedException``)."""
    expected = (
        r"the kernel of noisy cannot be compiled: .*test_gpu_runtime.py:\d+:13: GPU code cannot call "
        "revmlir.print: a print formats its values on the host"
    )
    with pytest.raises(rv.NativeCompilationError, match=expected):
        rv.cuda.kernel(noisy).compile(np.zeros(3), np.ones(3))
    with pytest.raises(rv.NativeCompilationError, match=r"test_gpu_runtime.py:\d+:13 cannot print a memref<\?xf64>"):
        rv.cuda.kernel(print_array).compile(np.zeros(3), np.ones(3))


@rv.reversible
def print_array(y, x):
    for i in rv.prange(len(x)):
        with rv.safe():
            print("x =", x)
        y[i] += x[i]


@rv.reversible
def serial(y, x):
    y[0] += x[0]


@rv.reversible
def two_loops(y, x):
    for i in rv.prange(len(x)):
        y[i] += x[i]
    for i in rv.prange(len(x)):
        y[i] += x[i]


@rv.reversible
def writes_first(y, x):
    y[0] += x[0]
    for i in rv.prange(len(x)):
        y[i] += x[i]


@pytest.mark.parametrize(
    ("function", "line", "column", "reason"),
    [
        (serial, serial.pyfunc.__code__.co_firstlineno + 1, 1, "it has no rv.prange loop at its top level"),
        (two_loops, two_loops.pyfunc.__code__.co_firstlineno + 4, 5, "it has 2 rv.prange loops at its top level"),
        (
            writes_first,
            writes_first.pyfunc.__code__.co_firstlineno + 2,
            5,
            "it writes an array outside its rv.prange loop",
        ),
    ],
    ids=["no-loop", "two-loops", "top-level-write"],
)
def test_what_breaks_the_kernel_rule_is_a_syntax_error_in_the_source(
    function: rv.ReversibleFunction, line: int, column: int, reason: str
) -> None:
    """The kernel rule broken in Python is the source's mistake: a
    ``ReversibleSyntaxError`` at the line that breaks it, in Python's terms
    (it was a ``PassFailedException`` naming ``scf.parallel``); on IR,
    ``rev-opt`` keeps the IR's terms (``tests/filecheck/gpu/outline_errors.mlir``)."""
    with pytest.raises(rv.ReversibleSyntaxError) as error:
        rv.cuda.kernel(function).compile(np.zeros(3), np.ones(3))
    assert (error.value.filename, error.value.lineno, error.value.offset) == (__file__, line, column)
    assert str(error.value).startswith(f"{__file__}:{line}:{column}: {function.__name__} is not a kernel: {reason}")


@rv.reversible
def uncalls_first(y, x):
    (~helper_write)(y, x)
    for i in rv.prange(len(x)):
        y[i] += x[i]


@rv.reversible
def helper_write(y, x):
    y[0] += x[0]


@rv.reversible
def scaled_by(y, x, s):
    for i in rv.prange(len(x)):
        y[i] += x[i] * s


def test_a_kernel_calling_an_inverse_first_names_it_as_the_source_does() -> None:
    """The reason names a derived function as Python writes it (``~g``),
    not by its IR name (``g.inv``)."""
    with pytest.raises(rv.ReversibleSyntaxError, match=r"it calls ~helper_write outside its rv.prange loop"):
        rv.cuda.kernel(uncalls_first).compile(np.zeros(3), np.ones(3))


def test_an_adjoint_kernel_of_a_scalar_argument_is_not_a_kernel_yet() -> None:
    """The gradient of a scalar, which an adjoint kernel would return, is
    what kernels do not compute yet (as ``rv.to_torch`` says), not a syntax
    error naming the gradient's IR argument ``g_s``."""
    x = np.ones(3)
    gradient = rv.cuda.kernel(rv.adjoint(scaled_by))
    with pytest.raises(NotImplementedError, match=r"the gradient of scalar argument 's' is not a kernel yet"):
        gradient.compile(np.zeros(3), x, 2.0, np.ones(3), np.zeros(3), 0.0)


# -- array protocols ------------------------------------------------------------


def test_cuda_array_interface_is_read_in_place() -> None:
    value = FakeCudaArray(shape=(4, 5), typestr="<f8", data=(0xABC000, True))
    array = arrays.kernel_array(value, stream=0)
    assert isinstance(array, DeviceArray)
    assert (array.pointer, array.shape, array.dtype, array.readonly) == (0xABC000, (4, 5), np.dtype("f8"), True)
    assert array.nbytes == 160 and array.owner is value and array.device is None


def test_cuda_array_interface_strides() -> None:
    # C-contiguous strides spelled out, extent-1 dimensions with any stride
    contiguous = FakeCudaArray(shape=(2, 1, 3), typestr="<f4", strides=(12, 99, 4))
    assert isinstance(array := arrays.kernel_array(contiguous, 0), DeviceArray) and array.shape == (2, 1, 3)
    transposed = FakeCudaArray(shape=(3, 2), typestr="<f8", strides=(8, 24))
    with pytest.raises(TypeError, match="FakeCudaArray|is not C-contiguous"):
        arrays.kernel_array(transposed, 0)
    masked = FakeCudaArray(shape=(3,), typestr="<f8", mask=object())
    with pytest.raises(TypeError, match="with a mask"):
        arrays.kernel_array(masked, 0)


def test_dlpack_capsules_are_read_like_numpy() -> None:
    host = np.arange(12.0).reshape(3, 4)
    array, kind = arrays.dlpack_array(host.__dlpack__(max_version=(1, 0)), "a numpy array")
    assert kind == arrays.DLPACK_CPU
    assert array.pointer == host.ctypes.data and array.shape == (3, 4) and array.dtype == np.float64
    assert not array.readonly
    frozen = np.arange(3, dtype=np.int32)
    frozen.flags.writeable = False
    array, _ = arrays.dlpack_array(frozen.__dlpack__(max_version=(1, 0)), "a numpy array")
    assert array.readonly and array.dtype == np.int32
    sliced = host[1:, 1:]
    array, _ = arrays.dlpack_array(sliced[0].__dlpack__(), "a numpy array")  # byte_offset or data moved
    assert array.pointer == sliced[0].ctypes.data
    with pytest.raises(TypeError, match="is not C-contiguous"):
        arrays.dlpack_array(host[:, ::2].__dlpack__(), "a numpy array")


class Inconsistent:
    """A DLPack producer that says it is on the GPU and exports host memory."""

    def __init__(self) -> None:
        self.host = np.ones(3)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (arrays.DLPACK_CUDA, 0)

    def __dlpack__(self, stream: int | None = None) -> Any:  # before DLPack 1.0: no max_version
        return self.host.__dlpack__()


def test_dlpack_tensors_must_be_on_the_device() -> None:
    host = np.ones(3)
    assert arrays.kernel_array(host, 0) is host and arrays.kernel_array(2.0, 0) is None
    with pytest.raises(TypeError, match="a test_gpu_runtime array is not in CUDA memory .*device type 1"):
        arrays.kernel_array(Inconsistent(), 0)


class Producer:
    """An array of another library, as the protocols show it:
    ``__cuda_array_interface__`` as ``interface`` says (a value; "raises",
    as PyTorch's and JAX's CPU arrays do; "absent", as numpy's), and DLPack
    on ``device``, exporting a numpy array's memory."""

    def __init__(self, interface: Any, device: int, host: np.ndarray | None = None):
        self.interface, self.device = interface, device
        self.host = np.arange(3.0) if host is None else host

    def __getattr__(self, name: str) -> Any:
        if name != "__cuda_array_interface__" or self.interface == "absent":
            raise AttributeError(name)
        if self.interface == "raises":
            raise AttributeError("__cuda_array_interface__ is only defined for GPU buffers")
        return self.interface

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.device, 0)

    def __dlpack__(self, stream: int | None = None, **_: Any) -> Any:
        return self.host.__dlpack__()


@pytest.mark.parametrize("interface", [None, "raises", "absent"])
def test_an_array_without_an_interface_is_what_its_dlpack_device_says(interface: Any) -> None:
    """An interface that is None, raises ``AttributeError`` (a torch CPU
    tensor, a JAX CPU array) or is absent is not offered: a CPU DLPack
    producer is a host array sharing its memory, a CUDA one is read as a
    device array (which this one, exporting host memory, is not)."""
    host = np.arange(3.0)
    for kind in arrays.HOST_KINDS:  # the CPU's memory, pinned host memory
        array = arrays.kernel_array(Producer(interface, kind, host), 0)
        assert isinstance(array, np.ndarray) and array.ctypes.data == host.ctypes.data
    with pytest.raises(TypeError, match="is not in CUDA memory"):
        arrays.kernel_array(Producer(interface, arrays.DLPACK_CUDA), 0)


def test_an_offered_interface_decides_and_must_be_a_dict() -> None:
    """A dict is a CUDA array whatever DLPack says; any other value is no
    interface a kernel can read; DLPack devices other than CUDA and the
    CPU are refused, naming the device type; a producer's own error on
    reading the interface (PyTorch's for a tensor that requires grad) is
    its to say."""
    interface = {"version": 3, "shape": (3,), "typestr": "<f8", "data": (0x10000, False)}
    array = arrays.kernel_array(Producer(interface, arrays.DLPACK_CPU), 0)
    assert isinstance(array, DeviceArray) and array.pointer == 0x10000
    with pytest.raises(TypeError, match=r"a test_gpu_runtime array's __cuda_array_interface__ is str, not a dict"):
        arrays.kernel_array(Producer("(3,)", arrays.DLPACK_CPU), 0)
    with pytest.raises(
        TypeError, match="a test_gpu_runtime array is on DLPack device type 10: kernels take arrays in CUDA memory"
    ):
        arrays.kernel_array(Producer(None, 10), 0)

    class RequiresGrad:
        @property
        def __cuda_array_interface__(self) -> Any:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad.")

    with pytest.raises(RuntimeError, match="requires grad"):
        arrays.kernel_array(RequiresGrad(), 0)


@rv.reversible
def squares(y, x):
    for i in rv.prange(len(y)):
        y[i] += x[i] * x[i]


@rv.reversible
def with_stack(y, s: rv.Stack):
    for i in rv.prange(len(y)):
        y[i] += 1.0


@rv.reversible
def with_fixed(y, a: rv.Fixed[16, 32]):
    for i in rv.prange(len(y)):
        y[i] += float(a)


def device_vector(**interface: Any) -> FakeCudaArray:
    return FakeCudaArray(**{"shape": (3,), "typestr": "<f8", **interface})


@pytest.mark.parametrize(
    ("function", "args", "error", "message"),
    [
        (scale_kernel, (device_vector(strides=(16,)), np.ones(3), 2.0), TypeError, "'y' of scale_kernel: a test_gpu"),
        (scale_kernel, (np.zeros(3), device_vector(mask=1), 2.0), TypeError, "'x' of scale_kernel: .* with a mask"),
        (scale_kernel, (Producer(3, 1), np.ones(3), 2.0), TypeError, "'y' of scale_kernel: .*interface__ is int"),
        (scale_kernel, (device_vector(data=(64, True)), np.ones(3), 2.0), ValueError, "'y' of scale_kernel is a test"),
        (~scale_kernel, (np.zeros(6)[::2], np.ones(3), 2.0), TypeError, "'y' of ~scale_kernel must be a C-contiguous"),
        (with_stack, (np.zeros(3), rv.Stack(float)), TypeError, "'s' of with_stack is a stack"),
        (
            with_fixed,
            (np.zeros(3), 1.0),
            TypeError,
            r"'a' of with_fixed is of a type no kernel takes \(!rev.fixed<32, 16>\); kernels take",
        ),
        (
            rv.adjoint(squares),
            (np.zeros(3), np.ones(3), np.zeros(3), np.zeros(6)[::2]),
            TypeError,
            r"#3 \(the gradient of 'x'\) of rv.adjoint\(squares\) must be a C-contiguous",
        ),
        (
            rv.adjoint(squares),
            (np.zeros(3), np.ones(3), np.zeros(3), device_vector(strides=(16,))),
            TypeError,
            r"#3 \(the gradient of 'x'\) of rv.adjoint\(squares\): a test_gpu_runtime array is not C-contiguous",
        ),
    ],
    ids=["strided", "masked", "interface", "read-only", "inverse", "stack", "fixed", "gradient", "device-gradient"],
)
def test_a_launch_names_the_argument_it_refuses(
    function: Any, args: tuple[Any, ...], error: type, message: str
) -> None:
    """Every argument a launch refuses, whatever finds it (the array
    protocols, the layout and types a kernel takes, what it writes), is
    named as a call on the CPU names it: by its parameter and the
    function's Python name, a gradient of an adjoint by its position and
    whose gradient it is; before the device is asked for."""
    with pytest.raises(error, match="^argument " + message) as raised:
        rv.cuda.kernel(function)(*args)
    assert type(raised.value) is error  # the frontend's, not the runtime's positions


def test_an_adjoints_gradient_is_named_from_what_the_launch_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal of a gradient is named from ``f``'s specialisation the
    launch looked up, not from a second description and lookup of ``f``'s
    arguments inside the ``except``."""
    looked_up = []
    original = squares.specialization_for

    def counted(*args: Any) -> Any:
        looked_up.append(args)
        return original(*args)

    monkeypatch.setattr(squares, "specialization_for", counted)
    with pytest.raises(TypeError, match=r"^argument #3 \(the gradient of 'x'\)") as raised:
        rv.cuda.kernel(rv.adjoint(squares))(np.zeros(3), np.ones(3), np.zeros(3), np.zeros(6)[::2])
    assert len(looked_up) == 1 and raised.value.__suppress_context__


@rv.reversible
def add_integers(y, x):
    for i in rv.prange(len(y)):
        y[i] += x[i]


@pytest.mark.parametrize(
    ("function", "args", "message"),
    [
        (scale_kernel, (np.zeros(3), np.ones(3), 2.0, device_vector(mask=1)), r"scale_kernel\(\) takes 3 argument"),
        (scale_kernel, (np.zeros(3), np.ones(3), 2.0, np.ones(3)), r"scale_kernel\(\) takes 3 argument"),
        (
            rv.adjoint(squares),
            (np.zeros(3), np.ones(3), np.zeros(3), np.zeros(3), device_vector(mask=1)),
            r"rv.adjoint\(squares\) takes 2 argument\(s\) and 2 gradient\(s\), got 5 value\(s\)",
        ),
        (
            rv.adjoint(squares),
            (np.zeros(3), np.ones(3), device_vector(mask=1)),
            r"rv.adjoint\(squares\) takes 2 argument\(s\) and 2 gradient\(s\), got 3 value\(s\)",
        ),
        (
            rv.adjoint(add_integers),
            (np.zeros(3, np.int64), np.ones(3, np.int64), device_vector(mask=1)),
            r"rv.adjoint\(add_integers\) takes 2 argument\(s\) and 0 gradient\(s\), got 3 value\(s\)",
        ),
    ],
    ids=["extra-refused", "extra", "adjoint-extra", "adjoint-short", "adjoint-without-gradients"],
)
def test_a_launch_counts_its_arguments_before_it_looks_at_them(
    function: Any, args: tuple[Any, ...], message: str
) -> None:
    """Too many or too few values are said as a count, as a call on the CPU
    says them, before any value is described: an extra one is no argument
    to name (it was "argument #3 of scale_kernel"), nor a gradient to name
    by ``f``'s parameters ("the gradient of 'y'" for a fifth value of
    ``rv.adjoint(squares)``, a ``ZeroDivisionError`` for a function with no
    gradients)."""
    with pytest.raises(TypeError, match="^" + message) as raised:
        rv.cuda.kernel(function)(*args)
    assert raised.value.__context__ is None


def test_dlpack_element_types() -> None:
    assert arrays.dlpack_dtype(2, 64, 1, "x") == np.float64
    assert arrays.dlpack_dtype(0, 32, 1, "x") == np.int32
    assert arrays.dlpack_dtype(5, 128, 1, "x") == np.complex128
    assert arrays.dlpack_dtype(6, 8, 1, "x") == np.bool_
    with pytest.raises(TypeError, match="bfloat|code 4"):
        arrays.dlpack_dtype(4, 16, 1, "a JAX array")
    with pytest.raises(TypeError, match="4 lanes"):
        arrays.dlpack_dtype(2, 32, 4, "a JAX array")


@pytest.mark.skipif(torch is None, reason="needs PyTorch (the torch extra)")
def test_host_tensors_share_memory_with_their_numpy_copy_target() -> None:
    tensor = torch.zeros(4, dtype=torch.float64)
    host = arrays.kernel_array(tensor, 0)
    assert isinstance(host, np.ndarray)
    host[2] = 7.0  # what a kernel's copy back does
    assert tensor[2].item() == 7.0


def test_array_checks() -> None:
    array = DeviceArray(64, (3,), np.dtype("f4"), False, 0, None, "a CuPy array")
    with pytest.raises(
        TypeError, match=r"argument #1 of @k must be a 1-d array of float64, got a CuPy array of float32"
    ):
        arrays.check_array(array, np.dtype("f8"), 1, "k", 1)
    with pytest.raises(
        TypeError, match=r"must be a 2-d array of float64, got a numpy array of float64 with shape \[3\]"
    ):
        arrays.check_array(np.zeros(3), np.dtype("f8"), 2, "k", 0)


def test_overlapping_ranges() -> None:
    ranges = [(0, 0, 80), (1, 80, 160), (2, 40, 48)]
    assert arrays.overlapping_ranges(ranges, frozenset({0})) == (0, 2)
    assert arrays.overlapping_ranges(ranges, frozenset({1})) is None
    assert arrays.overlapping_ranges(ranges, frozenset()) is None


# -- parameters ---------------------------------------------------------------


def test_parameters_are_laid_out_as_c_does() -> None:
    """The packed buffer against ctypes' own layout of the same fields."""

    class Expected(ctypes.Structure):
        _fields_ = [
            ("flag", ctypes.c_bool),
            ("x", ctypes.c_double),
            ("n", ctypes.c_int32),
            ("b", ctypes.c_int8),
            ("data", ctypes.c_uint64),
            ("size", ctypes.c_int64),
            ("re", ctypes.c_float),
            ("im", ctypes.c_float),
            ("slot", ctypes.c_uint64),
            ("words", ctypes.c_int64),
        ]

    layout = runtime.parameter_struct([i1, f64, i32, i8, VECTOR, ComplexType(f32)], arena=False)
    packed = layout.pack(True, 1.5, -3, 5, 0xDEAD0, 7, 0.5, -2.0, 0xBEEF0, GPU_ERROR_WORDS)
    assert packed == bytes(Expected(True, 1.5, -3, 5, 0xDEAD0, 7, 0.5, -2.0, 0xBEEF0, GPU_ERROR_WORDS))


@rv.reversible
def window_sums(y, x, m):
    """``y[i] +=`` the sum of a window of ``m`` entries of ``x``, copied into
    an ``rv.zeros(m)`` of a run-time size (so the kernel takes an arena)."""
    for i in rv.prange(len(y)):
        with rv.routine() as r:
            w = rv.zeros(m)
            for j in range(m):
                w[j] += x[i % x.shape[0], j % x.shape[1]]
        for j in range(m):
            y[i] += w[j]
        ~r


def test_arena_parameters_follow_the_error_slot_as_the_ptx_declares_them() -> None:
    """A kernel with ancilla arrays of a dynamic size says it takes an
    arena; its packed parameters (arrays, error slot, arena address, bytes
    per thread) are as many and as large as its PTX entry's."""
    compiled = rv.cuda.kernel(window_sums).specialise(np.zeros(8), np.ones((6, 3)), 4)
    info = compiled.program.kernels[compiled.name]
    assert info.arena
    assert (
        not rv.cuda.kernel(scale_kernel).specialise(np.zeros(3), np.ones(3), 2.0).program.kernels["scale_kernel"].arena
    )
    layout = compiled.plan.struct
    packed = layout.pack(0xA0, 8, 0xB0, 6, 3, 4, 0xD0, GPU_ERROR_WORDS, 0xE0, 4096)
    entry = compiled.program.ptx.split(f".entry {info.entry}(")[1].split(")")[0]
    declared = re.findall(r"\.param \.u64", entry)
    assert len(declared) == 10 and len(packed) == layout.size == 8 * len(declared)

    class Expected(ctypes.Structure):
        _fields_ = [
            ("slot", ctypes.c_uint64),
            ("words", ctypes.c_int64),
            ("arena", ctypes.c_uint64),
            ("bytes", ctypes.c_int64),
        ]

    assert packed[-32:] == bytes(Expected(0xD0, GPU_ERROR_WORDS, 0xE0, 4096))


def test_arena_sizes() -> None:
    """The default, rounded up to whole 16-byte units, for one wave's
    threads, cut to keep the arena within the limit (never below a block
    of 1024); sizes that are no byte counts are errors before any GPU is
    needed."""
    wave = 256 * 528
    assert runtime.arena_plan(None, wave) == (wave, runtime.DEFAULT_ARENA)
    assert runtime.arena_plan(100, wave) == (wave, 112)
    assert runtime.arena_plan(0, wave) == (wave, 0)
    threads, per_thread = runtime.arena_plan(1 << 20, 1024 * 528)
    assert (threads, per_thread) == (1024, 1 << 20) and threads * per_thread == runtime.ARENA_LIMIT
    assert runtime.arena_plan((1 << 20) - 1, 1024 * 528) == (1024, 1 << 20)
    assert runtime.arena_plan(65536, wave) == (runtime.ARENA_LIMIT // 65536, 65536)
    for wrong, error in ((-1, ValueError), (runtime.ARENA_LIMIT, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="arena"):
            runtime.arena_bytes(wrong)
    with pytest.raises(ValueError, match=r"arena=-16 bytes per thread is outside"):
        rv.cuda.kernel(scale_kernel)(np.zeros(3), np.ones(3), 2.0, arena=-16)


def test_scalar_formats() -> None:
    assert runtime.scalar_format(ComplexType(f64)) == "dd"
    assert runtime.scalar_format(LogType(f64)) == "d"
    assert runtime.scalar_format(i64) == "q"
    assert runtime.scalar_format(StackType(f64)) is None


@dataclass(frozen=True)
class Info:
    entry: str
    arguments: tuple[Attribute, ...]
    arena: bool = False
    bounds: LoopBounds | None = None


@dataclass(frozen=True)
class Program:
    """A program as ``compile_kernels`` describes it, for the argument
    checks that come before the driver: its PTX is never loaded."""

    kernels: dict[str, Info]
    ptx: str = ""
    check_table: Any = None


VECTOR = MemRefType(f64, [-1])
SCALE = Program({"scale": Info("scale", (VECTOR, VECTOR, f64))})


def described(*args: Any) -> list[Any]:
    return runtime.describe(args, 0, "scale")


def launch(program: Program, name: str, args: list[Any], written: frozenset[int]) -> None:
    runtime.launch(runtime.LaunchPlan.of(program, name, written), args, 0)


@pytest.mark.parametrize(
    "bound, reads",
    [
        (Size(2, 0), "dimension 0 of argument #2"),
        (Size(0, 1), "dimension 1 of argument #0"),
        (Arithmetic("add", Scalar(0, 64), Constant(1, 64), 64), "argument #0 as an integer of 64 bits"),
        (Cast(Scalar(3, 32), 64, False), "argument #3 of 3"),
    ],
)
def test_compiling_refuses_bounds_that_read_an_argument_as_what_it_is_not(
    monkeypatch: pytest.MonkeyPatch, bound: Expression, reads: str
) -> None:
    """An internal error where the lowered kernel's loop bounds and the
    program's argument types disagree, before any launch reads an array's
    size off a scalar."""
    one = Constant(1, 64)
    lowered = (ModuleOp([]), {"scale": SCALE.kernels["scale"].arguments}, {"scale": LoopBounds(one, bound, one)})
    monkeypatch.setenv(cache.ENABLE_ENV, "0")
    monkeypatch.setattr(gpu_program, "lower_kernels", lambda module, names, **options: lowered)
    with pytest.raises(AssertionError, match=re.escape(f"the loop bounds of kernel @scale read {reads}")):
        gpu_program.compile_kernels(ModuleOp([]), ["scale"])


def test_launch_checks_arguments_before_the_driver() -> None:
    written = frozenset({0})
    with pytest.raises(TypeError, match=r"kernel @scale takes 3 argument\(s\), got 2"):
        launch(SCALE, "scale", described(np.zeros(3), np.ones(3)), written)
    with pytest.raises(TypeError, match="argument #1 of @scale must be an array .*got list"):
        launch(SCALE, "scale", described(np.zeros(3), [1.0], 2.0), written)
    with pytest.raises(TypeError, match="must be a real number"):
        launch(SCALE, "scale", described(np.zeros(3), np.ones(3), 2j), written)
    with pytest.raises(TypeError, match="must be a C-contiguous array"):
        launch(SCALE, "scale", described(np.zeros(6)[::2], np.ones(3), 2.0), written)
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="argument #0 of @scale is a read-only array, and @scale writes it"):
        launch(SCALE, "scale", described(frozen, np.ones(3), 2.0), written)
    readonly = FakeCudaArray(shape=(3,), typestr="<f8", data=(4096, True))
    with pytest.raises(ValueError, match="argument #0 of @scale is a test_gpu_runtime array marked read-only"):
        launch(SCALE, "scale", described(readonly, np.ones(3), 2.0), written)
    shared = FakeCudaArray(shape=(3,), typestr="<f8")
    with pytest.raises(ValueError, match="arguments #0 and #1 of @scale share memory"):
        launch(SCALE, "scale", described(shared, shared, 2.0), written)
    stacks = Program({"s": Info("s", (StackType(f64),))})
    with pytest.raises(TypeError, match="is a stack; kernels take arrays and scalars"):
        launch(stacks, "s", described([]), frozenset())


def test_device_arrays_specialise_like_numpy_arrays() -> None:
    device = runtime.describe([FakeCudaArray(shape=(5,), typestr="<f8")], 0, "f")[0]
    standin = runtime.stand_in(device)
    assert isinstance(standin, np.ndarray) and standin.dtype == np.float64 and standin.ndim == 1
    assert scale.specialization_for(standin, standin, 1.0) is scale.specialization_for(np.ones(9), np.ones(9), 1.0)


# -- errors -------------------------------------------------------------------


def test_error_slot_raises_the_cpus_error_with_the_element() -> None:
    y, x = np.zeros(3), np.ones(3)
    with pytest.raises(ExecutionError) as cpu:
        shift(y, x, 10)
    spec = shift.specialization_for(y, x, 10)
    assert spec.native is not None
    table = spec.native.check_table
    entries = [e.data for e in table.attributes["rev.checks"].data]  # type: ignore[attr-defined]
    check = 1 + next(i for i, e in enumerate(entries) if e.split("|")[1:4:2] == ["rev.take", "shift"])
    unused = [0] * (PAYLOAD_SLOTS - 2)  # the payload words after the index and the size
    with pytest.raises(ExecutionError) as gpu:
        runtime.raise_gpu_error(table, [check, 10, 3, *unused, 26624, 0, 0])
    assert str(gpu.value) == f"{cpu.value} (element 26624)"
    assert (gpu.value.location, gpu.value.op_name) == (cpu.value.location, cpu.value.op_name)
    with pytest.raises(ExecutionError) as outside:
        runtime.raise_gpu_error(table, [check, 10, 3, *unused, -1, 0, 0])
    assert str(outside.value) == str(cpu.value)


# -- streams ------------------------------------------------------------------


def test_stream_handles() -> None:
    class TorchStream:
        cuda_stream = 0x1234

    class CupyStream:
        ptr = 0x5678

    class CoreStream:
        def __cuda_stream__(self) -> tuple[int, int]:
            return (0, 0x9ABC)

    class Handle:
        def __int__(self) -> int:
            return 0xDEF0

    class Unconvertible:
        def __int__(self) -> int:
            raise ValueError("no handle")

        def __repr__(self) -> str:
            return "<unconvertible>"

    assert runtime.stream_handle(None) == 0
    assert runtime.stream_handle(np.array(7)) == 7
    assert runtime.stream_handle(77) == 77
    assert runtime.stream_handle(TorchStream()) == 0x1234
    assert runtime.stream_handle(CupyStream()) == 0x5678
    assert runtime.stream_handle(CoreStream()) == 0x9ABC
    assert runtime.stream_handle(Handle()) == 0xDEF0
    assert runtime.stream_handle(np.int64(5)) == 5 and type(runtime.stream_handle(np.uint64(2**64 - 1))) is int
    for wrong, shown in [
        (True, "bool True"),
        (np.True_, r"bool np.True_"),
        ("default", "str 'default'"),
        ("16", "str '16'"),  # was handle 16
        (1.9, "float 1.9"),  # was handle 1, the legacy default stream
        (np.float64(2.5), r"float64 np.float64\(2.5\)"),  # was handle 2, the per-thread stream
        (Fraction(3, 1), r"Fraction Fraction\(3, 1\)"),
        (np.array(1.9), r"ndarray array\(1\.9\)"),  # was handle 1
        (np.array(True), r"ndarray array\(True\)"),  # was handle 1
        (np.array([1, 2]), r"ndarray array\(\[1, 2\]\)"),  # was numpy's TypeError, naming no option
        (Unconvertible(), "Unconvertible <unconvertible>"),  # was its ValueError, naming no option
    ]:
        with pytest.raises(TypeError, match=rf"^stream= takes a CUDA stream \(a handle, .*\), got {shown}$"):
            runtime.stream_handle(wrong)

    class NegativeCupyStream:
        ptr = -5

    for wrong in (-1, 2**64, NegativeCupyStream()):
        with pytest.raises(ValueError, match=r"^stream=.* is no CUDA stream handle, which is 0 to 2\*\*64-1$"):
            runtime.stream_handle(wrong)


def test_launch_options_are_refused_before_the_device_or_taken_as_integers(fake: Any) -> None:
    """Runs without a GPU, on the fake driver.  ``stream=`` and ``arena=``
    take integers, numpy's too (``arena=np.prod(shape) * 8`` is one), and
    refuse other numbers, naming the option and the value, before the
    driver is asked for anything."""
    k, args = rv.cuda.kernel(gather), gather_arrays()
    k(*args)
    for options, error, message in [
        ({"stream": 1.9}, TypeError, r"^stream= takes a CUDA stream .*, got float 1.9$"),
        ({"stream": -1}, ValueError, r"^stream=-1 is no CUDA stream handle"),
        ({"arena": np.float64(8192)}, TypeError, r"^arena= must be a number of bytes per thread, got float64 np"),
        ({"arena": np.int64(-16)}, ValueError, r"^arena=-16 bytes per thread is outside 0\.\.1048576"),
    ]:
        fake.calls.clear()
        with pytest.raises(error, match=message):
            k(*args, **options)
        assert fake.calls == []
    fake.calls.clear()
    k(*args, stream=np.int64(5), arena=np.int64(8192))
    rv.cuda.synchronize()
    assert fake.calls.count("cuLaunchKernel") == 1


def test_no_pending_launch_synchronizes_at_once() -> None:
    runtime.synchronize()  # nothing queued: no driver needed


def test_parameters_are_padded_to_each_ones_size() -> None:
    layout = runtime.parameter_struct([i64, i1, f64], arena=True)
    assert layout.format == "<q?7xdQqQq"
    assert layout.pack(1, True, 2.0, 3, 4, 5, 6) == struct.pack("<q?7xdQqQq", 1, True, 2.0, 3, 4, 5, 6)


def test_each_stream_keeps_one_arena_buffer_and_grows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Launches on a stream share its arena buffer (stream order keeps them
    apart); a larger need replaces it after the stream has drained; other
    streams get their own; ``release_arenas`` frees them all."""
    calls: list[tuple[Any, ...]] = []
    addresses = iter(range(0x1000, 0x100000, 0x1000))

    def fake_call(name: str, *args: Any) -> Any:
        calls.append((name, *args))
        return next(addresses) if name == "cuMemAlloc" else None

    monkeypatch.setattr(runtime, "_call", fake_call)
    device = runtime._Device(0, context=None, processors=132)
    first = device.arena(7, 4096)
    assert device.arena(7, 1024) == first and device.arena(7, 4096) == first
    assert [c[0] for c in calls] == ["cuMemAlloc"]
    grown = device.arena(7, 8192)
    assert grown != first
    assert calls[1:] == [("cuStreamSynchronize", 7), ("cuMemFree", first), ("cuMemAlloc", 8192)]
    other = device.arena(9, 16)
    assert other not in (first, grown)
    calls.clear()
    device.release_arenas()
    assert ("cuMemFree", grown) in calls and ("cuMemFree", other) in calls
    assert device.arenas == {}


# -- launches through a fake driver -------------------------------------------

launch_overhead = load_benchmark("launch_overhead")


@rv.reversible
def gather(y, x, idx):
    for i in rv.prange(len(y)):
        y[i] += x[idx[i]]


@pytest.fixture
def fake() -> Iterator[Any]:
    """The runtime on ``launch_overhead.FakeDriver``: one device whose
    kernels run ``fake.on_launch`` on their parameters, if set."""
    with launch_overhead.fake_driver(launch_overhead.FakeDriver()) as driver:
        yield driver


def gather_arrays(n: int = 4, device: int = 0) -> tuple[Any, Any, Any]:
    """``y``, ``x`` (3 elements), ``idx`` as device arrays; the fake driver
    says an address is on device ``address >> 40``."""
    base = device << 40
    return (
        FakeCudaArray(shape=(n,), typestr="<f8", data=(base + 0x10000, False)),
        FakeCudaArray(shape=(3,), typestr="<f8", data=(base + 0x20000, False)),
        FakeCudaArray(shape=(n,), typestr="<i8", data=(base + 0x30000, False)),
    )


def slot_words(fake: Any, parameters: bytes) -> Any:
    """The error slot of a ``gather`` launch, from its parameters (the
    words after the three arrays' pointers and sizes): the host memory
    its device address maps."""
    address, words = struct.unpack_from("<Qq", parameters, 48)
    assert words == GPU_ERROR_WORDS
    return (ctypes.c_int64 * GPU_ERROR_WORDS).from_address(fake.host_address(address))


def fake_kernel(fake: Any, taken: list[int], failure: tuple[int, int, int] | None = None) -> Callable[[bytes], None]:
    """A ``gather`` kernel for ``fake.on_launch``: it records the
    address of its error slot in ``taken`` and checks that the host zeroed
    the slot; given ``(element, check, index)``, its thread at ``element``
    fails check ``check`` reading ``x[index]``, writing the slot as the
    device's report does: the check id, the payload (the index, the size
    3), the element."""

    def run(parameters: bytes) -> None:
        slot = slot_words(fake, parameters)
        taken.append(ctypes.addressof(slot))
        assert list(slot) == [0] * GPU_ERROR_WORDS
        if failure is not None:
            element, check, index = failure
            slot[:] = [check, index, 3, *[0] * (PAYLOAD_SLOTS - 2), element, 0, 0]

    return run


def cpu_error() -> tuple[ExecutionError, int]:
    """``gather``'s error on the CPU for ``idx[2] = 7`` and the id of the
    check that raises it."""
    with pytest.raises(ExecutionError) as cpu:
        gather(np.zeros(4), np.ones(3), np.array([0, 1, 7, 0]))
    table = rv.cuda.kernel(gather).compile(np.zeros(4), np.ones(3), np.zeros(4, np.int64)).check_table
    entries = [e.data.split("|") for e in table.attributes["rev.checks"].data]
    check = 1 + next(i for i, e in enumerate(entries) if str(cpu.value).startswith(f"{e[2]}: '{e[1]}'"))
    return cpu.value, check


def test_a_launch_of_device_arrays_makes_two_driver_calls(fake: Any) -> None:
    """The slot is mapped host memory, taken zeroed: no memset and no copy
    back per launch; one device: no question about where each array is."""
    k, args = rv.cuda.kernel(gather), gather_arrays()
    k(*args, stream=5)
    rv.cuda.synchronize()
    assert "cuMemHostAlloc" in fake.calls and "cuMemAlloc" not in fake.calls
    fake.calls.clear()
    k(*args, stream=5)
    assert fake.calls == ["cuCtxSetCurrent", "cuLaunchKernel"]
    rv.cuda.synchronize()
    fake.calls.clear()
    k(*args)
    assert fake.calls == ["cuCtxSetCurrent", "cuLaunchKernel", "cuStreamSynchronize"]


def test_a_launch_refuses_numpy_arrays_that_share_memory(fake: Any) -> None:
    """Runs without a GPU, on the fake driver.  Numpy arrays that share
    memory where the kernel writes one are the CPU's ``ValueError`` at the
    launch, before the driver is asked for anything (their device copies
    were made apart and the kernel ran, where the CPU refuses the call);
    distinct numpy arrays, and a numpy array beside a device array (whose
    memory it cannot share), launch."""
    k = rv.cuda.kernel(gather)
    k(*gather_arrays())  # compiled, and the device set up
    whole, idx = np.zeros(5), np.zeros(4, dtype=np.int64)
    for y, x in [(whole[:4], whole[:4]), (whole[:4], whole[1:])]:
        with pytest.raises(ValueError, match="arguments 'y' and 'x' of gather share memory") as cpu:
            gather(y, x, idx)
        fake.calls.clear()
        with pytest.raises(ValueError, match="arguments 'y' and 'x' of gather share memory") as gpu:
            k(y, x, idx)
        assert fake.calls == []
        assert str(gpu.value) == str(cpu.value)
    device_y, _, _ = gather_arrays()
    fake.calls.clear()
    k(np.zeros(4), np.ones(3), idx)
    k(device_y, whole[:3], idx)
    assert fake.calls.count("cuLaunchKernel") == 2


MALFORMED_INTERFACES = [
    ({"data": None}, TypeError, "has no 'data', which the protocol requires"),
    ({"version": None}, TypeError, "has no 'version', which the protocol requires"),
    ({"shape": (-4,)}, ValueError, r"has shape=\(-4,\): an extent is 0 to 2\*\*63-1"),
    ({"shape": (2**63,)}, ValueError, r"has shape=\(9223372036854775808,\): an extent is 0 to 2\*\*63-1"),
    ({"shape": (4.5,)}, TypeError, r"has shape=\(4.5,\): the protocol's shape is a tuple of integers"),
    ({"shape": [4]}, TypeError, r"has shape=\[4\]: the protocol's shape is a tuple of integers"),
    ({"shape": (True,)}, TypeError, r"has shape=\(True,\): the protocol's shape is a tuple of integers"),
    ({"typestr": "zz"}, TypeError, r"has typestr='zz': the protocol's typestr is a numpy type string"),
    ({"typestr": 8}, TypeError, r"has typestr=8: the protocol's typestr is a numpy type string"),
    ({"data": ("abc", False)}, TypeError, r"has data=\('abc', False\): the protocol's data is \(pointer: int, read-"),
    ({"data": (0x10000,)}, TypeError, r"has data=\(65536,\): the protocol's data is \(pointer: int, read-only"),
    ({"data": (0x10000, "no")}, TypeError, r"has data=\(65536, 'no'\): the protocol's data is \(pointer"),
    ({"data": (-16, False)}, ValueError, r"has data=\(-16, False\): a pointer is 0 to 2\*\*64-1$"),
    ({"data": (2**64 - 16, False)}, ValueError, r"=\(18446744073709551600, False\): 32 bytes from 0xf+0 pass"),
    ({"data": (0, False)}, ValueError, r"has data=\(0, False\): a null pointer for 32 bytes$"),
    ({"shape": (2**62, 4)}, ValueError, r"has shape=\(4611686018427387904, 4\): its 147573952589676412928 bytes pass"),
    ({"version": "3"}, TypeError, r"has version='3': the protocol's version is an integer"),
    ({"strides": (8, 8)}, TypeError, r"has strides=\(8, 8\): the protocol's strides are None or a tuple of 1 int"),
    ({"stream": 1.5}, TypeError, r"has stream=1.5: the protocol's stream is None or an integer handle"),
    ({"stream": 0}, ValueError, r"has stream=0: a stream handle is 1 to 2\*\*64-1 \(the protocol disallows 0"),
    ({"stream": 2**64}, ValueError, r"has stream=18446744073709551616: a stream handle is 1 to 2\*\*64-1"),
]


@pytest.mark.parametrize(("fields", "error", "message"), MALFORMED_INTERFACES)
def test_a_malformed_cuda_array_interface_is_refused_naming_the_field_before_the_driver(
    fake: Any, fields: dict[str, Any], error: type, message: str
) -> None:
    """Runs without a GPU, on the fake driver.  An interface the CUDA Array
    Interface (version 3) does not allow is refused naming the argument and
    the field, before the driver is asked for anything: a missing field was
    a ``KeyError``, a pointer past 64 bits a ``struct.error`` in the
    parameters' packing, and a negative extent reached the kernel as a huge
    unsigned size."""
    k, (y, x, idx) = rv.cuda.kernel(gather), gather_arrays()
    k(y, x, idx)  # compiled, and the device set up
    interface = {**y.__cuda_array_interface__, **fields}
    y.__cuda_array_interface__ = {key: v for key, v in interface.items() if v is not None or key == "strides"}
    fake.calls.clear()
    with pytest.raises(error, match=r"^argument 'y' of gather: a test_gpu_runtime array's __cuda_array_interface__ "):
        k(y, x, idx)
    with pytest.raises(error, match=message):
        k(y, x, idx)
    assert fake.calls == []


def test_a_cuda_array_interface_of_numpy_integers_and_an_empty_array_at_null_is_read() -> None:
    """Integers of numpy count as the protocol's integers, counted as
    Python's (no wrapping around), and an empty array's pointer is 0, as the
    protocol says it is."""
    value = FakeCudaArray(shape=(np.int64(2), 3), typestr="<f4", data=(np.uint64(0x20000), np.bool_(True)))
    array = arrays.kernel_array(value, 0)
    assert isinstance(array, DeviceArray) and (array.pointer, array.shape, array.readonly) == (0x20000, (2, 3), True)
    assert all(type(extent) is int for extent in array.shape)
    wrapping = FakeCudaArray(shape=(3,), typestr="<f8", data=(np.uint64(2**64 - 16), False))
    with pytest.raises(ValueError, match=r"has data=\(np.uint64\(18446744073709551600\), False\): 24 bytes from 0x"):
        arrays.kernel_array(wrapping, 0)  # numpy's sum of the pointer and the size wraps around
    huge = FakeCudaArray(shape=(np.int64(2**62), np.int64(4)), typestr="<f8", data=(0x20000, False))
    with pytest.raises(ValueError, match=r"has shape=\(4611686018427387904, 4\): its 147573952589676412928 bytes pass"):
        arrays.kernel_array(huge, 0)  # numpy's product of the extents wraps around
    empty = arrays.kernel_array(FakeCudaArray(shape=(0,), typestr="<f8", data=(0, False), stream=2), 0)
    assert isinstance(empty, DeviceArray) and (empty.pointer, empty.nbytes, empty.stream) == (0, 0, 2)


@pytest.mark.parametrize("producer, waited", [(None, []), (1, []), (5, []), (9, [9, 9, 9])])
def test_a_launch_waits_once_for_each_array_made_on_another_stream(
    fake: Any, producer: int | None, waited: list[int]
) -> None:
    """The two driver calls hold for arrays whose producer stream is none,
    the legacy default stream or the launch's; an array on another stream
    costs one wait."""
    y, x, idx = (
        FakeCudaArray(shape=(4,), typestr=t, data=(address, False), stream=producer)
        for t, address in (("<f8", 0x10000), ("<f8", 0x20000), ("<i8", 0x30000))
    )
    rv.cuda.kernel(gather)(y, x, idx, stream=5)
    fake.calls.clear()
    asked = waits(fake, {})
    rv.cuda.kernel(gather)(y, x, idx, stream=5)
    assert asked == waited and fake.calls == ["cuCtxSetCurrent", "cuLaunchKernel"]


def test_a_kernel_gets_its_arguments_and_a_zeroed_slot(fake: Any) -> None:
    seen: list[bytes] = []

    def run(parameters: bytes) -> None:
        seen.append(parameters)
        assert list(slot_words(fake, parameters)) == [0] * GPU_ERROR_WORDS  # the driver's memory was not zero

    fake.on_launch = run
    rv.cuda.kernel(gather)(*gather_arrays(n=5))
    (page,) = fake.host  # one allocation of slots, the kernel given its device address
    slot = fake.MAPPED + page + (runtime.SLOTS_PER_ALLOCATION - 1) * runtime.SLOT_BYTES  # the last, taken first
    assert seen == [struct.pack("<8q", 0x10000, 5, 0x20000, 3, 0x30000, 5, slot, GPU_ERROR_WORDS)]


def test_a_failing_launch_raises_the_cpus_error_and_its_slot_serves_the_next(fake: Any) -> None:
    cpu, check = cpu_error()
    k, args, taken = rv.cuda.kernel(gather), gather_arrays(), []
    fake.on_launch = fake_kernel(fake, taken, (2, check, 7))
    with pytest.raises(ExecutionError) as gpu:
        k(*args)
    assert str(gpu.value) == f"{cpu} (element 2)" and gpu.value.location == cpu.location
    fake.on_launch = fake_kernel(fake, taken)
    k(*args)  # the same slot, zeroed again
    assert taken[0] == taken[1] and fake.calls.count("cuMemHostAlloc") == 1


def test_synchronize_waits_for_each_stream_once_and_raises_the_first_error(fake: Any) -> None:
    cpu, check = cpu_error()
    k, args, taken = rv.cuda.kernel(gather), gather_arrays(), []
    fake.on_launch = fake_kernel(fake, taken)
    k(*args, stream=5)
    for stream, element in ((5, 1), (6, 3)):
        fake.on_launch = fake_kernel(fake, taken, (element, check, 7))
        k(*args, stream=stream)
    fake.on_launch = fake_kernel(fake, taken)
    k(*args, stream=5)
    fake.calls.clear()
    with pytest.raises(ExecutionError) as gpu:
        rv.cuda.synchronize()
    assert str(gpu.value) == f"{cpu} (element 1)"
    assert fake.calls.count("cuStreamSynchronize") == 2 and not runtime._pending
    assert len(runtime.device(0).slots) == runtime.SLOTS_PER_ALLOCATION  # every one back
    for _ in range(runtime.SLOTS_PER_ALLOCATION + 1):  # the failed ones zeroed again, and one more allocation
        k(*args, stream=5)
    rv.cuda.synchronize()
    assert len(set(taken[4:])) == runtime.SLOTS_PER_ALLOCATION + 1 and set(taken[:4]) < set(taken[4:])
    assert len(fake.host) == 2


def waits(fake: Any, failing: dict[int, BaseException | None]) -> list[int]:
    """The streams ``fake`` is asked to wait for, in order; the wait for a
    stream in ``failing`` raises its exception, or fails (None)."""
    waited: list[int] = []

    def wait(stream: int) -> tuple[Any, ...]:
        waited.append(stream)
        if stream not in failing:
            return (fake.CUresult.CUDA_SUCCESS,)
        if (raised := failing[stream]) is not None:
            raise raised
        return (fake.CUresult.CUDA_ERROR_INVALID_VALUE,)

    fake.cuStreamSynchronize = wait
    return waited


@pytest.mark.parametrize(
    "failure, waited, left",
    [(None, [5, 6, 7], [6]), (KeyboardInterrupt(), [5, 6], [6, 7])],
    ids=["driver error", "interrupt"],
)
def test_a_failed_wait_leaves_its_launches_queued_and_loses_no_error(
    fake: Any, failure: BaseException | None, waited: list[int], left: list[int]
) -> None:
    """Stream 5's launch fails a check, the wait for stream 6 fails, stream
    7 has a launch too: a driver error leaves stream 6's launch queued and
    still waits for stream 7; an interrupt stops there, leaving 6 and 7
    queued, their arrays' owners kept.  What is raised is the driver's
    error or the interrupt, with the check's error as its context; the
    launches waited for give their slots back, and a later ``synchronize``
    finishes the rest."""
    cpu, check = cpu_error()
    k, args, taken = rv.cuda.kernel(gather), gather_arrays(), []
    for stream in (5, 6, 7):
        fake.on_launch = fake_kernel(fake, taken, (1, check, 7) if stream == 5 else None)
        k(*args, stream=stream)
    asked = waits(fake, {6: failure})
    raised = runtime.CUDAError if failure is None else KeyboardInterrupt
    with pytest.raises(raised) as error:
        rv.cuda.synchronize()
    assert asked == waited and [record.stream for record in runtime._pending] == left
    assert isinstance(error.value.__context__, ExecutionError) and str(error.value.__context__) == f"{cpu} (element 1)"
    assert len(runtime.device(0).slots) == runtime.SLOTS_PER_ALLOCATION - len(left)
    asked = waits(fake, {})
    rv.cuda.synchronize()
    assert asked == left and not runtime._pending and len(runtime.device(0).slots) == runtime.SLOTS_PER_ALLOCATION


def test_a_driver_error_after_an_interrupted_wait_is_the_interrupts_context(fake: Any) -> None:
    """Stream 5's wait fails and stream 6's is interrupted: the interrupt
    is raised, the driver's error its context."""
    k, args = rv.cuda.kernel(gather), gather_arrays()
    for stream in (5, 6):
        k(*args, stream=stream)
    waits(fake, {5: None, 6: KeyboardInterrupt()})
    with pytest.raises(KeyboardInterrupt) as error:
        rv.cuda.synchronize()
    assert isinstance(error.value.__context__, runtime.CUDAError) and error.value.__context__.__context__ is None
    assert [record.stream for record in runtime._pending] == [5, 6]


def test_launches_on_another_threads_per_thread_stream_are_waited_for_with_the_context(fake: Any) -> None:
    """Stream 2 is the per-thread default stream of the thread that names
    it: this thread's launch on it is waited for on it, another thread's
    by synchronising the context."""
    k, args = rv.cuda.kernel(gather), gather_arrays()
    k(*args, stream=runtime.PER_THREAD_STREAM)
    worker = threading.Thread(target=lambda: k(*args, stream=runtime.PER_THREAD_STREAM))
    worker.start()
    worker.join()
    asked = waits(fake, {})
    fake.calls.clear()
    rv.cuda.synchronize()
    assert asked == [runtime.PER_THREAD_STREAM] and fake.calls.count("cuCtxSynchronize") == 1
    assert not runtime._pending and len(runtime.device(0).slots) == runtime.SLOTS_PER_ALLOCATION


class RacedQueue(list):  # type: ignore[type-arg]
    """A queue of launches to which another thread appends one just after
    ``synchronize`` has copied it."""

    def __init__(self, launch: Callable[[], None]):
        super().__init__()
        self.launch: Callable[[], None] | None = launch

    def raced(self) -> None:
        if (launch := self.launch) is not None:
            self.launch = None
            worker = threading.Thread(target=launch)
            worker.start()
            worker.join()

    def __iter__(self) -> Any:
        copied = list(super().__iter__())
        self.raced()
        return iter(copied)

    def __getitem__(self, index: Any) -> Any:
        copied = super().__getitem__(index)
        self.raced()
        return copied


def test_a_launch_queued_while_synchronize_takes_the_queue_stays_queued(
    fake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    k, args = rv.cuda.kernel(gather), gather_arrays()
    k(*args, stream=5)
    queue = RacedQueue(lambda: k(*args, stream=6))
    queue += runtime._pending
    monkeypatch.setattr(runtime, "_pending", queue)
    rv.cuda.synchronize()
    assert [record.stream for record in runtime._pending] == [6]
    rv.cuda.synchronize()
    assert not runtime._pending and len(runtime.device(0).slots) == runtime.SLOTS_PER_ALLOCATION


def test_slots_the_device_cannot_address_are_freed(fake: Any) -> None:
    """``cuMemHostGetDevicePointer`` failing after ``cuMemHostAlloc``: the
    pinned memory is given back and the launch raises the driver's error;
    the next launch allocates again."""
    fake.cuMemHostGetDevicePointer = lambda pointer, flags: (fake.CUresult.CUDA_ERROR_INVALID_VALUE, 0)
    k, args = rv.cuda.kernel(gather), gather_arrays()
    with pytest.raises(runtime.CUDAError, match="cuMemHostGetDevicePointer failed: CUDA_ERROR_INVALID_VALUE"):
        k(*args)
    assert "cuMemFreeHost" in fake.calls and not fake.host and "cuLaunchKernel" not in fake.calls
    del fake.cuMemHostGetDevicePointer
    k(*args)
    assert len(fake.host) == 1 and fake.calls.count("cuLaunchKernel") == 1


def test_where_there_are_two_devices_the_driver_says_where_each_array_is() -> None:
    with launch_overhead.fake_driver(launch_overhead.FakeDriver(devices=2)) as fake:
        k = rv.cuda.kernel(gather)
        k(*gather_arrays(device=1))
        assert fake.calls.count("cuPointerGetAttribute") == 3 and "cuDevicePrimaryCtxRetain" in fake.calls
        y, x, idx = gather_arrays(device=1)
        fake.calls.clear()
        with pytest.raises(ValueError, match=r"^arguments 'y' and 'x' of gather are on different devices \(1 and 0\)"):
            k(y, gather_arrays()[1], idx)
        assert "cuLaunchKernel" not in fake.calls


def test_host_arrays_are_passed_as_their_device_copies(fake: Any) -> None:
    """numpy arrays: each copied in, its copy's address in the parameters,
    the written one copied back, every copy freed."""
    seen: list[bytes] = []
    fake.on_launch = seen.append
    rv.cuda.kernel(gather)(np.zeros(4), np.ones(3), np.zeros(4, np.int64))
    assert fake.calls.count("cuMemAlloc") == fake.calls.count("cuMemcpyHtoDAsync") == fake.calls.count("cuMemFree") == 3
    assert fake.calls.count("cuMemcpyDtoHAsync") == 1  # y alone is written
    y, n, x, m, idx, k = struct.unpack_from("<6q", seen[0])
    assert (n, m, k) == (4, 3, 4) and len({y, x, idx}) == 3 and min(y, x, idx) >= 0x7F00_0000_0000


class CountedCudaArray(FakeCudaArray):
    """A device array whose interface is built at each read, as CuPy's is."""

    reads = 0

    def __init__(self, **interface: Any):
        self.interface = {"version": 3, "strides": None, **interface}

    @property  # type: ignore[override]
    def __cuda_array_interface__(self) -> dict[str, Any]:
        CountedCudaArray.reads += 1
        return self.interface


def test_a_launch_reads_each_array_interface_once(fake: Any) -> None:
    args = [
        CountedCudaArray(shape=(4,), typestr="<f8", data=(0x10000, False)),
        CountedCudaArray(shape=(3,), typestr="<f8", data=(0x20000, False)),
        CountedCudaArray(shape=(4,), typestr="<i8", data=(0x30000, False)),
    ]
    CountedCudaArray.reads = 0
    rv.cuda.kernel(gather)(*args)
    assert CountedCudaArray.reads == 3


# -- a lost context -------------------------------------------------------------

CONTEXT_CALLS = (
    "cuStreamSynchronize",
    "cuCtxSynchronize",
    "cuLaunchKernel",
    "cuMemAlloc",
    "cuMemFree",
    "cuMemcpyHtoDAsync",
    "cuMemcpyDtoHAsync",
    "cuMemHostAlloc",
)
"""The calls that run in a context, which fail once it is lost."""


def lose_context(fake: Any, error: str = "CUDA_ERROR_ILLEGAL_ADDRESS", after: int = 0) -> None:
    """Make ``fake``'s context fail with the sticky ``error`` from the call
    of ``CONTEXT_CALLS`` after the first ``after`` of them on: a kernel
    touched an illegal address, and every later call in the context says
    so, as the driver's do."""
    made = [0]

    def failing(name: str) -> Callable[..., tuple[Any, ...]]:
        working = getattr(fake, name)

        def call(*args: Any) -> tuple[Any, ...]:
            made[0] += 1
            if made[0] <= after:
                return working(*args)
            fake.calls.append(name)
            return (fake.CUresult[error], 0)

        return call

    for name in CONTEXT_CALLS:
        setattr(fake, name, failing(name))


LOST = r"cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS: the context of CUDA device 0 is unusable"


def test_a_lost_context_drops_its_launches_and_later_launches_fail_at_once(fake: Any) -> None:
    """A kernel on stream 5 touched an illegal address: the wait for it
    fails, so does every later call.  ``synchronize`` drops the device's
    launches (stream 6's is not waited for: it cannot finish) and says
    the context is unusable; a later launch, queued or not, raises the
    same error before any driver call, and nothing is left queued."""
    k, args = rv.cuda.kernel(gather), gather_arrays()
    for stream in (5, 6):
        k(*args, stream=stream)
    lose_context(fake)
    fake.calls.clear()
    with pytest.raises(rv.cuda.ContextLostError, match=LOST):
        rv.cuda.synchronize()
    assert fake.calls == ["cuCtxSetCurrent", "cuStreamSynchronize"] and not runtime._pending
    fake.calls.clear()
    for stream in (5, None):
        with pytest.raises(rv.cuda.ContextLostError, match=LOST + r".* restart the process"):
            k(*args, stream=stream)
    with pytest.raises(runtime.CUDAError, match="CUDA_ERROR_ILLEGAL_ADDRESS"):  # a ContextLostError is a CUDAError
        k(np.zeros(4), np.ones(3), np.zeros(4, np.int64))
    rv.cuda.synchronize()  # nothing queued
    rv.cuda.release_arenas()  # the arenas went with the context
    assert fake.calls == [] and not runtime._pending


def test_a_launch_that_loses_the_context_drops_the_queued_ones_and_frees_nothing(fake: Any) -> None:
    """The kernel of a launch that waits (it copies a numpy array back)
    fails: the error names the failed wait, the launch queued before on
    stream 5 is dropped, and the copies' device memory, gone with the
    context, is not freed (``cuMemFree`` would fail and hide the error)."""
    k = rv.cuda.kernel(gather)
    k(*gather_arrays(), stream=5)
    copied = 3 + 3 + 1  # an allocation and a copy per array, a copy back
    lose_context(fake, after=copied + 1)  # the launch itself works
    fake.calls.clear()
    with pytest.raises(rv.cuda.ContextLostError, match=LOST):
        k(np.zeros(4), np.ones(3), np.zeros(4, np.int64))
    assert fake.calls[-1] == "cuStreamSynchronize" and "cuMemFree" not in fake.calls and not runtime._pending


def test_a_lost_context_is_raised_before_an_ordinary_driver_error() -> None:
    """Two devices: the wait on device 0 fails as a driver call may
    (its launch stays queued), device 1's context is lost (its launch is
    dropped).  The lost context is raised, the ordinary error its
    context; the next ``synchronize`` waits for device 0 again."""
    with launch_overhead.fake_driver(launch_overhead.FakeDriver(devices=2)) as fake:
        k = rv.cuda.kernel(gather)
        k(*gather_arrays(device=0), stream=5)
        k(*gather_arrays(device=1), stream=6)
        codes = {5: "CUDA_ERROR_INVALID_VALUE", 6: "CUDA_ERROR_LAUNCH_FAILED"}
        fake.cuStreamSynchronize = lambda stream: (fake.CUresult[codes[stream]],)
        with pytest.raises(
            rv.cuda.ContextLostError, match="CUDA_ERROR_LAUNCH_FAILED: the context of CUDA device 1"
        ) as lost:
            rv.cuda.synchronize()
        ordinary = lost.value.__context__
        assert isinstance(ordinary, runtime.CUDAError) and "CUDA_ERROR_INVALID_VALUE" in str(ordinary)
        assert [(record.device.ordinal, record.stream) for record in runtime._pending] == [(0, 5)]
        with pytest.raises(runtime.CUDAError, match="CUDA_ERROR_INVALID_VALUE") as error:
            rv.cuda.synchronize()
        assert not isinstance(error.value, rv.cuda.ContextLostError)
        with pytest.raises(rv.cuda.ContextLostError, match="device 1"):
            k(*gather_arrays(device=1))


def test_synchronize_reports_the_launches_a_lost_context_dropped(fake: Any) -> None:
    """A launch queued on stream 5, then a launch that loses the context:
    that launch raises the lost context, and the next ``synchronize``
    reports the queued launch it dropped (it never ran); the one after
    has nothing to report."""
    k, args = rv.cuda.kernel(gather), gather_arrays()
    k(*args, stream=5)
    lose_context(fake)
    with pytest.raises(rv.cuda.ContextLostError, match="cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS"):
        k(*args, stream=6)
    assert not runtime._pending
    with pytest.raises(rv.cuda.ContextLostError, match="cuLaunchKernel failed: .* queued launches are dropped"):
        rv.cuda.synchronize()
    rv.cuda.synchronize()


def test_a_context_lost_by_another_thread_during_synchronize_is_reported_there(fake: Any) -> None:
    """``synchronize`` holds the launches of streams 5 and 6; while it
    waits for stream 5 (whose kernel failed a check), another thread's
    launch loses the context.  Stream 5 was waited for: its error is read
    and its slot given back; stream 6's launch is dropped, and reported
    as the lost context, with the check's error as its context."""
    cpu, check = cpu_error()
    k, args, taken = rv.cuda.kernel(gather), gather_arrays(), []
    fake.on_launch = fake_kernel(fake, taken, (1, check, 7))
    k(*args, stream=5)
    fake.on_launch = fake_kernel(fake, taken)
    k(*args, stream=6)
    lost: list[BaseException] = []

    def launch_elsewhere() -> None:
        try:
            k(*args, stream=7)
        except rv.cuda.ContextLostError as error:
            lost.append(error)

    def wait(stream: int) -> tuple[Any, ...]:
        lose_context(fake)
        worker = threading.Thread(target=launch_elsewhere)
        worker.start()
        worker.join()
        return (fake.CUresult.CUDA_SUCCESS,)

    fake.cuStreamSynchronize = wait
    with pytest.raises(rv.cuda.ContextLostError, match="cuLaunchKernel failed") as error:
        rv.cuda.synchronize()
    assert len(lost) == 1 and not runtime._pending
    assert isinstance(error.value.__context__, ExecutionError) and str(error.value.__context__) == f"{cpu} (element 1)"
    assert len(runtime.device(0).slots) == runtime.SLOTS_PER_ALLOCATION - 1  # stream 6's never comes back


def test_release_arenas_loses_a_context_and_releases_every_device() -> None:
    """Device 0's context is lost while its arena is released: the error
    says so, the device is lost (its queued launch dropped, reported by
    ``synchronize``), and device 1's arena is still freed."""
    with launch_overhead.fake_driver(launch_overhead.FakeDriver(devices=2)) as fake:
        k = rv.cuda.kernel(gather)
        k(*gather_arrays(device=0), stream=5)
        runtime.device(0).arenas[7] = (0x1000, 16)
        runtime.device(1).arenas[8] = (0x2000, 16)
        codes = {7: fake.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, 8: fake.CUresult.CUDA_SUCCESS}
        fake.cuStreamSynchronize = lambda stream: (codes[stream],)
        fake.calls.clear()
        with pytest.raises(rv.cuda.ContextLostError, match="cuStreamSynchronize failed: .* CUDA device 0 is unusable"):
            rv.cuda.release_arenas()
        assert runtime.device(0).lost and not runtime.device(1).lost and not runtime._pending
        assert runtime.device(1).arenas == {} and fake.calls.count("cuMemFree") == 1
        with pytest.raises(rv.cuda.ContextLostError, match="device 0"):
            rv.cuda.synchronize()


def test_a_pointer_query_that_loses_the_context_loses_its_device() -> None:
    """Two devices: the query of where an array is runs in the context
    the last launch made current (device 1's), and loses it."""
    with launch_overhead.fake_driver(launch_overhead.FakeDriver(devices=2)) as fake:
        k = rv.cuda.kernel(gather)
        k(*gather_arrays(device=1))
        fake.cuPointerGetAttribute = lambda attribute, pointer: (fake.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, 0)
        with pytest.raises(
            rv.cuda.ContextLostError, match="cuPointerGetAttribute failed: .* CUDA device 1 is unusable"
        ):
            k(*gather_arrays(device=1))
        assert runtime.device(1).lost and not runtime.device(0).lost


def test_a_launch_whose_copy_in_fails_frees_the_copies_made(fake: Any) -> None:
    """The second host array's copy fails: both allocations are freed."""
    copies = [fake.CUresult.CUDA_SUCCESS, fake.CUresult.CUDA_ERROR_INVALID_VALUE]
    fake.cuMemcpyHtoDAsync = lambda *args: (copies.pop(0),)
    with pytest.raises(runtime.CUDAError, match="cuMemcpyHtoDAsync failed: CUDA_ERROR_INVALID_VALUE"):
        rv.cuda.kernel(gather)(np.zeros(4), np.ones(3), np.zeros(4, np.int64))
    assert fake.calls.count("cuMemAlloc") == fake.calls.count("cuMemFree") == 2


STICKY_TEXT = re.compile(
    r"any further CUDA\s+work\s+will\s+return the same error|process must\s+be\s+terminated|context\s+cannot be used"
)
"""What ``cuda.h`` says of an error after which the context is unusable."""


def test_sticky_errors_are_those_cuda_h_documents_as_leaving_the_context_unusable() -> None:
    """Every ``CUresult`` whose documentation in the toolkit's ``cuda.h``
    (the test extra's wheel) says that further work returns the same error
    or that the context or process cannot be used again is in
    ``STICKY_ERRORS``, and nothing else is."""
    header = next(
        (root / "include" / "cuda.h" for root in toolkit._roots() if (root / "include" / "cuda.h").is_file()), None
    )
    if header is None:
        pytest.skip("no cuda.h (the nvidia-cuda-nvcc wheel of the test extra)")
    text = header.read_text()
    enum = text[text.index("typedef enum cudaError_enum") : text.index("} CUresult;")]
    documented = {
        name
        for doc, name in re.findall(r"/\*\*((?:(?!\*/).)*)\*/\s*(CUDA_ERROR_\w+)\s*=", enum, re.S)
        if STICKY_TEXT.search(" ".join(doc.replace("*", " ").split()))
    }
    assert documented == runtime.STICKY_ERRORS


def test_a_pointer_query_loses_the_device_whose_context_the_driver_says_is_current() -> None:
    """The last launch made device 1's context current, then another
    library (CuPy, PyTorch) made device 0's: the failed query ran in
    device 0's context, which the driver names, and device 1 stays
    usable."""
    with launch_overhead.fake_driver(launch_overhead.FakeDriver(devices=2)) as fake:
        k = rv.cuda.kernel(gather)
        k(*gather_arrays(device=1))
        fake.cuCtxSetCurrent(runtime.device(0).context)
        fake.cuPointerGetAttribute = lambda attribute, pointer: (fake.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, 0)
        with pytest.raises(rv.cuda.ContextLostError, match="CUDA device 0 is unusable"):
            k(*gather_arrays(device=1))
        assert runtime.device(0).lost and not runtime.device(1).lost


def test_a_free_that_loses_the_context_loses_the_device(fake: Any) -> None:
    """The first free of a launch's copies of host arrays loses the
    context: the device is lost (the launch queued before is dropped,
    reported by ``synchronize``), and the other copies, gone with the
    context, are not freed."""
    k = rv.cuda.kernel(gather)
    k(*gather_arrays(), stream=5)
    fake.cuMemFree = lambda pointer: (fake.calls.append("cuMemFree"), fake.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS)[1:]
    with pytest.raises(rv.cuda.ContextLostError, match="cuMemFree failed: .* CUDA device 0 is unusable"):
        k(np.zeros(4), np.ones(3), np.zeros(4, np.int64))
    assert runtime.device(0).lost and not runtime._pending and fake.calls.count("cuMemFree") == 1
    with pytest.raises(rv.cuda.ContextLostError, match="queued launches are dropped"):
        rv.cuda.synchronize()


def test_a_failing_free_does_not_hide_the_launchs_error(fake: Any) -> None:
    """The second copy in fails, and so does every free: the copy's error
    is raised, the first free's error its context, and both copies are
    still asked to be freed."""
    copies = [fake.CUresult.CUDA_SUCCESS, fake.CUresult.CUDA_ERROR_INVALID_VALUE]
    fake.cuMemcpyHtoDAsync = lambda *args: (copies.pop(0),)
    fake.cuMemFree = lambda pointer: (fake.calls.append("cuMemFree"), fake.CUresult.CUDA_ERROR_INVALID_HANDLE)[1:]
    with pytest.raises(runtime.CUDAError, match="cuMemcpyHtoDAsync failed: CUDA_ERROR_INVALID_VALUE") as error:
        rv.cuda.kernel(gather)(np.zeros(4), np.ones(3), np.zeros(4, np.int64))
    freed = error.value.__context__
    assert isinstance(freed, runtime.CUDAError) and "cuMemFree failed: CUDA_ERROR_INVALID_HANDLE" in str(freed)
    assert fake.calls.count("cuMemFree") == 2 and not runtime.device(0).lost


def test_release_arenas_of_a_context_another_thread_loses_meanwhile() -> None:
    """While device 0's arena is freed, another thread loses its context
    (which forgets the arenas): releasing it is no ``KeyError``, and
    device 1's arena is still freed."""
    with launch_overhead.fake_driver(launch_overhead.FakeDriver(devices=2)) as fake:
        runtime.device(0).arenas[7] = (0x1000, 16)
        runtime.device(1).arenas[8] = (0x2000, 16)

        def free(pointer: int) -> tuple[Any, ...]:
            if pointer == 0x1000:
                runtime.device(0).lose(rv.cuda.ContextLostError("lost by another thread"))
            return (fake.CUresult.CUDA_SUCCESS,)

        fake.cuMemFree = free
        rv.cuda.release_arenas()
        assert runtime.device(0).lost and runtime.device(0).arenas == runtime.device(1).arenas == {}


def test_release_arenas_raises_a_lost_context_before_an_ordinary_error() -> None:
    """Device 0's release fails as a driver call may, device 1's loses its
    context: the lost context is raised, the ordinary error its context."""
    with launch_overhead.fake_driver(launch_overhead.FakeDriver(devices=2)) as fake:
        runtime.device(0).arenas[7] = (0x1000, 16)
        runtime.device(1).arenas[8] = (0x2000, 16)
        codes = {7: fake.CUresult.CUDA_ERROR_INVALID_VALUE, 8: fake.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS}
        fake.cuStreamSynchronize = lambda stream: (codes[stream],)
        with pytest.raises(rv.cuda.ContextLostError, match="CUDA device 1 is unusable") as lost:
            rv.cuda.release_arenas()
        ordinary = lost.value.__context__
        assert isinstance(ordinary, runtime.CUDAError) and "CUDA_ERROR_INVALID_VALUE" in str(ordinary)
        assert not lost.value.__suppress_context__ and runtime.device(1).lost and not runtime.device(0).lost
