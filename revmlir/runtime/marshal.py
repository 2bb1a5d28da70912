"""Arguments stored into a native call's frame by machine code.

A native function that runs in a few microseconds used to spend most of its
call in Python, converting each argument into its ctypes storage (a
microsecond and a half per array on a slow machine).  The common arguments
(a float for an f64, an int for an integer, a bool for an i1, a C-contiguous,
writeable numpy array of the exact dtype and rank for a memref with dynamic
sizes) do
not need Python to be checked and stored: one function compiled once per
process reads them from the argument tuple the way a C extension would, and
writes them where ``revmlir.runtime.native``'s frame keeps them.  Whatever it
does not recognise it leaves to the Python converters, which convert it or
raise the diagnostic for a bad argument, so the fast path decides nothing
they would not.

The function reads CPython objects through the C API (``PyTuple_GetItem``,
``PyFloat_AsDouble``, ``PyLong_AsLongLongAndOverflow``) and numpy arrays
through the fields of ``PyArrayObject_fields``, whose offsets are part of
numpy's ABI; every offset is confirmed on probe objects first, and where one
does not hold (another Python implementation, an unusual build) or the
function does not compile, calls simply stay in Python.
"""

from __future__ import annotations

import ctypes
import enum
import functools
import logging
import sys
import sysconfig
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from revmlir.errors import LLVMRejected
from revmlir.runtime.jit import JITModule, jit

logger = logging.getLogger(__name__)


class Kind(enum.IntEnum):
    """What the machine code does with one argument."""

    PYTHON = 0
    """Left to the Python converter."""
    F64 = 1
    """A ``float`` stored as a double."""
    INTEGER = 2
    """An ``int`` that fits 64 bits, wrapped to the width in the row."""
    BOOL = 3
    """A ``bool`` stored as one byte."""
    ARRAY = 4
    """A C-contiguous ``numpy.ndarray`` of the row's dtype and rank: its data
    pointer, then its sizes."""


HEADER_WORDS = 6
"""The plan starts with the argument count, the addresses of ``float``,
``int``, ``bool`` and ``numpy.ndarray``, and that of the frame's
``Extents`` (0 without)."""

ROW_WORDS = 5
"""Per argument: kind, parameter (an integer's width, an array's rank), the
expected dtype object of an array, the address of the storage, and a word
the machine code sets to 1 when it stored the argument."""

_HANDLED = 4


@dataclass(frozen=True)
class ObjectLayout:
    """Where the fields the machine code reads sit in objects, in bytes."""

    type: int
    """``ob_type`` of every object."""
    array_data: int
    array_rank: int
    array_sizes: int
    array_dtype: int
    array_flags: int

    @staticmethod
    def probe() -> ObjectLayout | None:
        """The layout of this process's objects, each offset checked on
        arrays whose fields are known; None when one of them is not where
        numpy's headers put it."""
        if sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8:
            return None
        head = object.__basicsize__
        layout = ObjectLayout(
            type=head - 8,
            array_data=head,
            array_rank=head + 8,
            array_sizes=head + 16,
            array_dtype=head + 40,
            array_flags=head + 48,
        )
        return layout if layout._holds() else None

    def _holds(self) -> bool:
        def word(obj: Any, offset: int) -> int:
            return ctypes.c_uint64.from_address(id(obj) + offset).value

        def int32(obj: Any, offset: int) -> int:
            return ctypes.c_int32.from_address(id(obj) + offset).value

        read_only = np.empty(3)
        read_only.flags.writeable = False
        probes = [np.empty((2, 3, 4)), np.empty(5, dtype=np.int32), np.empty((4, 6))[:, ::2], read_only]
        for array in probes:
            sizes = (ctypes.c_int64 * array.ndim).from_address(word(array, self.array_sizes))
            if not (
                word(array, self.type) == id(np.ndarray)
                and word(array, self.array_data) == array.ctypes.data
                and int32(array, self.array_rank) == array.ndim
                and tuple(sizes) == array.shape
                and word(array, self.array_dtype) == id(array.dtype)
                and bool(int32(array, self.array_flags) & _C_CONTIGUOUS) == array.flags.c_contiguous
                and bool(int32(array, self.array_flags) & _WRITEABLE) == array.flags.writeable
            ):
                return False
        return all(word(value, self.type) == id(type(value)) for value in (1.5, 7, True, (1,)))


_C_CONTIGUOUS = 0x1
"""``NPY_ARRAY_C_CONTIGUOUS``."""
_WRITEABLE = 0x400
"""``NPY_ARRAY_WRITEABLE``: read-only arrays are left to Python, which
refuses them where the function writes them."""

_C_API = {
    "PyTuple_GetItem": "ptr @PyTuple_GetItem(ptr, i64)",
    "PyFloat_AsDouble": "double @PyFloat_AsDouble(ptr)",
    "PyLong_AsLongLongAndOverflow": "i64 @PyLong_AsLongLongAndOverflow(ptr, ptr)",
}

MARSHAL_SYMBOL = "revmlir_marshal_arguments"


def _llvm_ir(layout: ObjectLayout) -> str:
    """``i64 marshal(PyObject *args, i64 *plan)``: stores what it can and
    returns how many arguments it left to Python; when it stored them all,
    it also checks the arrays for overlaps (``Extents``) and returns
    ``-2 - (i·n + j)`` for the first overlapping pair of which one is
    written.  Its first line names the Python and numpy ABI it was made
    for: the offsets it reads are checked in this process only, so the text
    (the disk cache's key) must differ wherever they might."""
    declarations = "\n".join(f"declare {signature}" for signature in _C_API.values())
    row = f"mul i64 %i, {ROW_WORDS}"
    abi = f"{sys.implementation.name} {sys.hexversion:#x} {sysconfig.get_config_var('SOABI')}"
    return f"""; for {abi}, numpy {np.__version__}
{declarations}
{_DISTINCT_IR}

define i64 @{MARSHAL_SYMBOL}(ptr %args, ptr %plan) {{
entry:
  %overflow = alloca i32
  %left = alloca i64
  store i64 0, ptr %left
  %n = load i64, ptr %plan
  %float_type = getelementptr i64, ptr %plan, i64 1
  %int_type = getelementptr i64, ptr %plan, i64 2
  %bool_type = getelementptr i64, ptr %plan, i64 3
  %array_type = getelementptr i64, ptr %plan, i64 4
  br label %loop

loop:
  %i = phi i64 [0, %entry], [%next, %stored], [%after_python, %python]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %argument, label %done

argument:
  %offset = {row}
  %start = add i64 %offset, {HEADER_WORDS}
  %row = getelementptr i64, ptr %plan, i64 %start
  %kind = load i64, ptr %row
  %param_at = getelementptr i64, ptr %row, i64 1
  %param = load i64, ptr %param_at
  %expected_at = getelementptr i64, ptr %row, i64 2
  %expected = load i64, ptr %expected_at
  %slot_at = getelementptr i64, ptr %row, i64 3
  %slot = load ptr, ptr %slot_at
  %object = call ptr @PyTuple_GetItem(ptr %args, i64 %i)
  %type_at = getelementptr i8, ptr %object, i64 {layout.type}
  %type = load i64, ptr %type_at
  switch i64 %kind, label %python [
    i64 {Kind.F64}, label %f64
    i64 {Kind.INTEGER}, label %integer
    i64 {Kind.BOOL}, label %bool
    i64 {Kind.ARRAY}, label %array
  ]

f64:
  %want_float = load i64, ptr %float_type
  %is_float = icmp eq i64 %type, %want_float
  br i1 %is_float, label %f64_store, label %python
f64_store:
  %double = call double @PyFloat_AsDouble(ptr %object)
  store double %double, ptr %slot
  br label %stored

integer:
  %want_int = load i64, ptr %int_type
  %is_int = icmp eq i64 %type, %want_int
  br i1 %is_int, label %integer_read, label %python
integer_read:
  store i32 0, ptr %overflow
  %value = call i64 @PyLong_AsLongLongAndOverflow(ptr %object, ptr %overflow)
  %overflowed = load i32, ptr %overflow
  %fits = icmp eq i32 %overflowed, 0
  br i1 %fits, label %integer_store, label %python
integer_store:
  switch i64 %param, label %python [
    i64 8, label %store8
    i64 16, label %store16
    i64 32, label %store32
    i64 64, label %store64
  ]
store8:
  %v8 = trunc i64 %value to i8
  store i8 %v8, ptr %slot
  br label %stored
store16:
  %v16 = trunc i64 %value to i16
  store i16 %v16, ptr %slot
  br label %stored
store32:
  %v32 = trunc i64 %value to i32
  store i32 %v32, ptr %slot
  br label %stored
store64:
  store i64 %value, ptr %slot
  br label %stored

bool:
  %want_bool = load i64, ptr %bool_type
  %is_bool = icmp eq i64 %type, %want_bool
  br i1 %is_bool, label %bool_store, label %python
bool_store:
  store i32 0, ptr %overflow
  %truth = call i64 @PyLong_AsLongLongAndOverflow(ptr %object, ptr %overflow)
  %byte = trunc i64 %truth to i8
  store i8 %byte, ptr %slot
  br label %stored

array:
  %want_array = load i64, ptr %array_type
  %is_array = icmp eq i64 %type, %want_array
  br i1 %is_array, label %array_dtype, label %python
array_dtype:
  %dtype_at = getelementptr i8, ptr %object, i64 {layout.array_dtype}
  %dtype = load i64, ptr %dtype_at
  %rank_at = getelementptr i8, ptr %object, i64 {layout.array_rank}
  %rank32 = load i32, ptr %rank_at
  %rank = sext i32 %rank32 to i64
  %flags_at = getelementptr i8, ptr %object, i64 {layout.array_flags}
  %flags = load i32, ptr %flags_at
  %contiguous = and i32 %flags, {_C_CONTIGUOUS | _WRITEABLE}
  %same_dtype = icmp eq i64 %dtype, %expected
  %same_rank = icmp eq i64 %rank, %param
  %is_contiguous = icmp eq i32 %contiguous, {_C_CONTIGUOUS | _WRITEABLE}
  %same = and i1 %same_dtype, %same_rank
  %fast = and i1 %same, %is_contiguous
  br i1 %fast, label %array_store, label %python
array_store:
  %data_at = getelementptr i8, ptr %object, i64 {layout.array_data}
  %data = load i64, ptr %data_at
  store i64 %data, ptr %slot
  %sizes_at = getelementptr i8, ptr %object, i64 {layout.array_sizes}
  %sizes = load ptr, ptr %sizes_at
  br label %size
size:
  %d = phi i64 [0, %array_store], [%d_next, %size_store]
  %more_sizes = icmp slt i64 %d, %rank
  br i1 %more_sizes, label %size_store, label %stored
size_store:
  %size_from = getelementptr i64, ptr %sizes, i64 %d
  %extent = load i64, ptr %size_from
  %d_next = add i64 %d, 1
  %size_to = getelementptr i64, ptr %slot, i64 %d_next
  store i64 %extent, ptr %size_to
  br label %size

stored:
  %handled_at = getelementptr i64, ptr %row, i64 {_HANDLED}
  store i64 1, ptr %handled_at
  %next = add i64 %i, 1
  br label %loop

python:
  %unhandled_at = getelementptr i64, ptr %row, i64 {_HANDLED}
  store i64 0, ptr %unhandled_at
  %count = load i64, ptr %left
  %count_next = add i64 %count, 1
  store i64 %count_next, ptr %left
  %after_python = add i64 %i, 1
  br label %loop

done:
  %result = load i64, ptr %left
  %all_stored = icmp eq i64 %result, 0
  %extents_at = getelementptr i64, ptr %plan, i64 5
  %extents = load ptr, ptr %extents_at
  %has_extents = icmp ne ptr %extents, null
  %check = and i1 %all_stored, %has_extents
  br i1 %check, label %overlaps, label %finish
overlaps:
  %pair = call i64 @{DISTINCT_SYMBOL}(ptr %extents)
  %clear = icmp slt i64 %pair, 0
  %code = sub i64 -2, %pair
  %outcome = select i1 %clear, i64 0, i64 %code
  ret i64 %outcome
finish:
  ret i64 %result
}}
"""


DISTINCT_SYMBOL = "revmlir_overlapping_arrays"

_DISTINCT_IR = f"""
; array k's bytes [start, end), or [0, 0) when it has none
define {{i64, i64}} @revmlir_array_extent(ptr %table, i64 %k) {{
entry:
  %row_at = mul i64 %k, 3
  %row_word = add i64 %row_at, 2
  %row = getelementptr i64, ptr %table, i64 %row_word
  %slot = load ptr, ptr %row
  %rank_at = getelementptr i64, ptr %row, i64 1
  %rank = load i64, ptr %rank_at
  %itemsize_at = getelementptr i64, ptr %row, i64 2
  %itemsize = load i64, ptr %itemsize_at
  br label %loop
loop:
  %d = phi i64 [0, %entry], [%d_next, %body]
  %bytes = phi i64 [%itemsize, %entry], [%bytes_next, %body]
  %more = icmp slt i64 %d, %rank
  br i1 %more, label %body, label %done
body:
  %d_next = add i64 %d, 1
  %size_at = getelementptr i64, ptr %slot, i64 %d_next
  %size = load i64, ptr %size_at
  %bytes_next = mul i64 %bytes, %size
  br label %loop
done:
  %data = load i64, ptr %slot
  %nonempty = icmp sgt i64 %bytes, 0
  %start = select i1 %nonempty, i64 %data, i64 0
  %end_data = add i64 %data, %bytes
  %end = select i1 %nonempty, i64 %end_data, i64 0
  %with_start = insertvalue {{i64, i64}} undef, i64 %start, 0
  %extent = insertvalue {{i64, i64}} %with_start, i64 %end, 1
  ret {{i64, i64}} %extent
}}

; the first of the written arrays (rows 0 to w - 1) that overlaps a later row
define i64 @{DISTINCT_SYMBOL}(ptr %table) {{
entry:
  %n = load i64, ptr %table
  %w_at = getelementptr i64, ptr %table, i64 1
  %w = load i64, ptr %w_at
  br label %outer
outer:
  %i = phi i64 [0, %entry], [%i_next, %outer_next]
  %more_i = icmp slt i64 %i, %w
  br i1 %more_i, label %outer_body, label %none
outer_body:
  %extent_i = call {{i64, i64}} @revmlir_array_extent(ptr %table, i64 %i)
  %start_i = extractvalue {{i64, i64}} %extent_i, 0
  %end_i = extractvalue {{i64, i64}} %extent_i, 1
  %j_first = add i64 %i, 1
  br label %inner
inner:
  %j = phi i64 [%j_first, %outer_body], [%j_next, %inner_next]
  %more_j = icmp slt i64 %j, %n
  br i1 %more_j, label %inner_body, label %outer_next
inner_body:
  %extent_j = call {{i64, i64}} @revmlir_array_extent(ptr %table, i64 %j)
  %start_j = extractvalue {{i64, i64}} %extent_j, 0
  %end_j = extractvalue {{i64, i64}} %extent_j, 1
  %before = icmp ult i64 %start_i, %end_j
  %after = icmp ult i64 %start_j, %end_i
  %overlap = and i1 %before, %after
  br i1 %overlap, label %found, label %inner_next
inner_next:
  %j_next = add i64 %j, 1
  br label %inner
outer_next:
  %i_next = add i64 %i, 1
  br label %outer
found:
  %code = mul i64 %i, %n
  %pair = add i64 %code, %j
  ret i64 %pair
none:
  ret i64 -1
}}
"""


class Extents:
    """One frame's arrays for the machine code's overlap check: their count,
    how many the function writes, then per array (written ones first) the
    address of its descriptor (data pointer, then sizes), its rank and its
    element size.  An array a native function writes must share no memory
    with another argument (``revmlir.lowering.aliasing``); only pairs with
    a written array are compared, each written array with the arrays after
    it.  ``revmlir.runtime.backend.overlapping`` checks the arguments Python
    stores."""

    def __init__(
        self,
        positions: Sequence[int],
        storage: Sequence[Any],
        shapes: Sequence[tuple[int, int]],
        written: Collection[int],
    ):
        rows = sorted(zip(positions, shapes, strict=True), key=lambda row: row[0] not in written)
        self.positions = [position for position, _ in rows]
        words = [len(rows), sum(position in written for position in positions)]
        for position, (rank, itemsize) in rows:
            words += [ctypes.addressof(storage[position]), rank, itemsize]
        self.words = (ctypes.c_int64 * len(words))(*words)
        self.address = ctypes.addressof(self.words)

    def pair(self, code: int) -> tuple[int, int] | None:
        """The argument positions, in order, of an ``i·n + j`` pair (none
        below 0)."""
        count = len(self.positions)
        if code < 0:
            return None
        first, second = self.positions[code // count], self.positions[code % count]
        return min(first, second), max(first, second)


_MARSHAL = ctypes.PYFUNCTYPE(ctypes.c_int64, ctypes.py_object, ctypes.c_void_p)


class Marshal(Protocol):
    """The compiled ``marshal(args, plan address)``: stores the arguments
    of a call into a frame by ``Plan``, returns what the caller reads (how
    many it left to Python, or the code of an overlapping pair)."""

    def __call__(self, args: tuple[Any, ...], plan: int, /) -> int: ...


_machine_code: list[JITModule] = []
"""The machine code of the cached marshaller, alive as long as the process."""


@functools.cache
def marshaller() -> Marshal | None:
    """The compiled function, or None where calls stay in Python."""
    import llvmlite.binding as llvm

    layout = ObjectLayout.probe()
    if layout is None:
        return None
    for name in _C_API:
        llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)
    try:
        machine_code = jit(_llvm_ir(layout))
    except (RuntimeError, LLVMRejected) as reason:  # an LLVM that rejects it leaves calls in Python
        logger.warning("native argument marshalling unavailable: %s", reason)
        return None
    _machine_code.append(machine_code)
    function: Marshal = _MARSHAL(machine_code.address(MARSHAL_SYMBOL))
    return function


@dataclass(frozen=True)
class Row:
    """How the machine code treats one argument position of a function."""

    kind: Kind
    parameter: int = 0
    dtype: np.dtype | None = None


IN_PYTHON = Row(Kind.PYTHON)


class Plan:
    """One frame's instructions to the machine code: the rows of its
    function, with the addresses of this frame's storage and ``Extents``."""

    def __init__(self, rows: Sequence[Row], storage: Sequence[Any], extents: Extents | None):
        words = [len(rows), id(float), id(int), id(bool), id(np.ndarray), extents.address if extents else 0]
        for row, slot in zip(rows, storage, strict=True):
            expected = id(row.dtype) if row.dtype is not None else 0
            words += [row.kind, row.parameter, expected, ctypes.addressof(slot), 0]
        self.words = (ctypes.c_int64 * len(words))(*words)
        self.address = ctypes.addressof(self.words)
        self._dtypes = [row.dtype for row in rows]  # the ids above stay valid

    def left_to_python(self) -> list[int]:
        """The positions the last run did not store."""
        words = self.words
        count = words[0]
        return [i for i in range(count) if not words[HEADER_WORDS + ROW_WORDS * i + _HANDLED]]
