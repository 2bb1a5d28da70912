"""Native execution of reversible modules: the whole pipeline from rev IR to
machine code, and calls from Python with scalars and numpy arrays.

    rev ──rev-invert──► rev + @f.inv ──rev-lower-to-std──► func/scf/arith/…
        ──convert-std-to-llvm──► llvm dialect ──xdsl.backend.llvm──► LLVM IR
        ──llvmlite (-O3, host CPU)──► machine code

Arrays are passed by pointer (no copy) and updated in place; a stack (a
Python list) is copied into a ``malloc``'d buffer behind a header
(``revmlir.lowering.stacks``) and copied back into the same list after the
call, which frees the buffer.  Run-time checks report through the error slot
and surface as ``InvertibilityError`` at the op's source location.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.backend.llvm.convert import convert_module
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
from revmlir.dialects.rev import FuncOp, LogType
from revmlir.interpreter.values import normalize
from revmlir.inversion import inverse_name
from revmlir.lowering import stacks
from revmlir.lowering.rev_to_std import (
    ERROR_SLOT,
    RevLowerToStdPass,
    check_error_slot,
    stack_element,
)
from revmlir.lowering.std_to_llvm import CIFACE_SUFFIX, ConvertStdToLLVMPass
from revmlir.parsing import make_context
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime.arguments import converter, numpy_dtype
from revmlir.runtime.backend import Backend
from revmlir.runtime.jit import JITModule, c_function, jit
from revmlir.semantics import is_state_type

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
ERROR_SLOT_SIZE = ERROR_SLOT.get_shape()[0]


def _scalar_ctype(type: Attribute) -> Any:
    if isinstance(type, LogType):
        type = type.element_type
    if isinstance(type, Float64Type):
        return ctypes.c_double
    if isinstance(type, Float32Type):
        return ctypes.c_float
    if isinstance(type, IndexType):
        return ctypes.c_int64
    if isinstance(type, IntegerType):
        width = type.width.data
        return {1: ctypes.c_bool, 8: ctypes.c_int8, 16: ctypes.c_int16, 32: ctypes.c_int32, 64: ctypes.c_int64}[width]
    if isinstance(type, ComplexType):
        return _scalar_ctype(type.element_type) * 2
    raise TypeError(f"no native representation for {type}")


def lower_to_llvm_ir(module: ModuleOp, tolerance: float | None = None) -> tuple[str, ModuleOp]:
    """LLVM IR text for a verified rev module (every function and its inverse),
    and the module's run-time check table."""
    ctx = make_context()
    work = module.clone()
    RevInvertPass().apply(ctx, work)
    lower = RevLowerToStdPass() if tolerance is None else RevLowerToStdPass(tolerance)
    lower.apply(ctx, work)
    checks = ModuleOp([])
    checks.attributes.update(work.attributes)
    ConvertStdToLLVMPass().apply(ctx, work)
    work.attributes.clear()
    llvm_module = convert_module(work, fallback_target_triple=None)
    for function in llvm_module.functions:
        if stacks.runtime_kind(function.name) is not None:
            # one copy per object file: objects linked together do not clash
            function.linkage = "internal"
        elif function.is_declaration and function.name not in stacks.MEMORY_FUNCTIONS:
            # Apart from the allocator, only libm functions are declared (see
            # std_to_llvm): pure, so LLVM may share and hoist their calls.
            function.attributes.add("nounwind")
            function.attributes.add("readnone")
    return str(llvm_module), checks


@dataclass
class NativeModule(Backend):
    """A rev module compiled to machine code."""

    module: ModuleOp
    llvm_ir: str
    check_table: ModuleOp
    machine_code: JITModule

    @classmethod
    def compile(cls, module: ModuleOp, opt_level: int = 3, tolerance: float | None = None) -> NativeModule:
        text, checks = lower_to_llvm_ir(module, tolerance)
        return cls(module, text, checks, jit(text, opt_level))

    def _execute(self, func: FuncOp, values: list[Any], backward: bool) -> Sequence[Any]:
        plan = self._plan(func, backward)
        storage = [store(v) for store, v in zip(plan.stores, values)]
        error = np.zeros(ERROR_SLOT_SIZE, dtype=np.int64)
        error_slot = _descriptor(error)
        slots = (ctypes.c_void_p * (len(storage) + 1))(
            *[ctypes.addressof(s) for s in storage], ctypes.addressof(error_slot)
        )
        try:
            plan.entry(ctypes.addressof(slots))
        finally:
            for i in plan.stacks:
                storage[i].give_back(values[i])
        if error[0]:
            check_error_slot(self.check_table, error.tolist(), plan.label)
        return [load(storage[i]) for i, load in plan.loads]

    def _plan(self, func: FuncOp, backward: bool) -> _CallPlan:
        """How to marshal each argument of ``func``, worked out once."""
        plans: dict[tuple[str, bool], _CallPlan] = self.__dict__.setdefault("_plans", {})
        name = func.sym_name.data
        if (plan := plans.get((name, backward))) is None:
            types = list(func.function_type.inputs.data)
            symbol = (inverse_name(name) if backward else name) + CIFACE_SUFFIX
            plan = plans[(name, backward)] = _CallPlan(
                entry=_ENTRY(self.machine_code.address(symbol)),
                stores=[_storer(t, name, i) for i, t in enumerate(types)],
                loads=[(i, _loader(t)) for i, t in enumerate(types) if is_state_type(t)],
                stacks=[i for i, t in enumerate(types) if isinstance(t, StackType)],
                label=("~" if backward else "") + name,
            )
        return plan


@dataclass(frozen=True)
class _CallPlan:
    entry: Any
    stores: list[Callable[[Any], Any]]
    loads: list[tuple[int, Callable[[Any], Any]]]
    stacks: list[int]
    label: str


@functools.cache
def _allocator() -> tuple[Callable[[int], int | None], Callable[[int | None], None]]:
    """``malloc`` and ``free``, the very ones native code reallocs and frees with."""
    return (
        c_function("malloc", ctypes.c_void_p, ctypes.c_size_t),
        c_function("free", None, ctypes.c_void_p),
    )


class _StackArgument(ctypes.Structure):
    """A list passed as a stack: the memref descriptor of a header
    ``[buffer, size, capacity]`` over a ``malloc``'d copy of the elements."""

    _fields_ = [("header", ctypes.c_void_p), ("words", ctypes.c_int64)]

    def __init__(self, elements: np.ndarray):
        words = stacks.HEADER.get_shape()[0]
        self.fields = (ctypes.c_int64 * words)()
        super().__init__(ctypes.addressof(self.fields), words)
        self.dtype = elements.dtype
        if size := len(elements):
            malloc, _ = _allocator()
            if (buffer := malloc(elements.nbytes)) is None:
                raise MemoryError(f"cannot allocate a stack of {size} elements")
            ctypes.memmove(buffer, elements.ctypes.data, elements.nbytes)
            self.fields[stacks.DATA] = buffer
            self.fields[stacks.SIZE] = self.fields[stacks.CAPACITY] = size

    def give_back(self, target: list[Any]) -> None:
        """Copy the stack's elements into ``target`` and free the buffer."""
        _, free = _allocator()
        buffer, size = self.fields[stacks.DATA], self.fields[stacks.SIZE]
        nbytes = size * self.dtype.itemsize
        raw = (ctypes.c_char * nbytes).from_address(buffer) if size else b""
        target[:] = np.frombuffer(raw, dtype=self.dtype, count=size).tolist()
        free(buffer or None)
        self.fields[stacks.DATA] = self.fields[stacks.SIZE] = self.fields[stacks.CAPACITY] = 0


def _storer(type: Attribute, name: str, index: int) -> Callable[[Any], Any]:
    if isinstance(type, StackType):
        element = stack_element(type)
        dtype = numpy_dtype(element)
        convert = converter(element, name, index)

        def store_stack(values: list[Any]) -> _StackArgument:
            return _StackArgument(np.array([convert(v) for v in values], dtype=dtype))

        return store_stack
    if isinstance(type, MemRefType):

        def store_array(value: np.ndarray) -> Any:
            if not value.flags["C_CONTIGUOUS"]:
                raise TypeError(
                    f"argument #{index} of @{name} must be a C-contiguous array "
                    "(use numpy.ascontiguousarray)"
                )
            return _descriptor(value)

        return store_array
    ctype = _scalar_ctype(type)
    if isinstance(type, ComplexType):
        return lambda value: ctype(value.real, value.imag)
    return ctype


def _loader(type: Attribute) -> Callable[[Any], Any]:
    if isinstance(type, ComplexType):
        return lambda storage: normalize(type, complex(storage[0], storage[1]))
    return lambda storage: normalize(type, storage.value)


def _descriptor(array: np.ndarray) -> ctypes.Array[ctypes.c_int64]:
    """``{ptr, i64 sizes…}``: how a memref is passed."""
    return (ctypes.c_int64 * (1 + array.ndim))(array.ctypes.data, *array.shape)
