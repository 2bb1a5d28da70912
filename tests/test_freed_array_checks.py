"""A freed ancilla array's zero check.  Where the array's sizes are known
at compile time and it has at most ``FREED_AT_ONCE`` elements, it is made
at once: every element is tested, the results combined, and only when one
fails are the elements checked again in order, so that the first non-zero
element in row-major order is the one reported; a larger array, or one of
run-time size, is checked element by element.  Every engine reports the
same failure with the same message, values and element: the interpreter
(which checks element by element), native code, and a GPU kernel run
thread by thread on the CPU, for every element type, in code run forwards,
backwards and in an adjoint; the kernel's PTX branches once for the whole
array."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import revmlir as rv
from gpu_emulation import EmulatedKernel
from revmlir.errors import ExecutionError, InvertibilityError
from revmlir.gpu.program import compile_kernels
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.rev_to_std import FREED_AT_ONCE
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

ROWS, COLUMNS = 2, 3
TOLERANCE = 1e-8
"""The tolerance of a float's zero check (``rev-lower-to-std``'s default)."""


def _swaps(shape: tuple[int, ...], type: str) -> str:
    """Each element of ``%a`` (of ``shape``, typed ``type``) swapped with
    its element, in row-major order, of the row ``%i`` of ``%x``."""
    row = f"memref<?x{math.prod(shape)}xT>"
    lines = []
    for n, at in enumerate(np.ndindex(shape)):
        lines += [f"    %c{n}_{axis} = arith.constant {k} : index" for axis, k in enumerate(at)]
        indices = ", ".join(f"%c{n}_{axis}" for axis in range(len(at)))
        lines += [
            f"    %cx{n} = arith.constant {n} : index",
            f"    %e{n} = rev.take %x[%i, %cx{n}] : {row}",
            f"    %z{n} = rev.take %a[{indices}] : {type}",
            f"    rev.put %e{n}, %a[{indices}] : {type}",
            f"    rev.put %z{n}, %x[%i, %cx{n}] : {row}",
        ]
    return "\n".join(lines)


SIZES = ("static", "constant", "run-time")
"""How the freed array's sizes are given: in its type (``2x3``), by a
constant (``?x3``: the Python frontend's arrays), or by an argument."""


def _source(element: str, sizes: str, shape: tuple[int, ...] = (ROWS, COLUMNS)) -> str:
    """``@swap_out``: each of ``n`` threads (a parallel loop) swaps its row
    of ``x`` into a fresh ancilla array of ``shape`` (whose first size is
    known at compile time unless ``sizes`` is ``run-time``, and is then
    ``m``) and frees it, so the free checks the row's old values."""
    static = "".join(f"{size}x" for size in shape)
    type = f"memref<{static}T>" if sizes == "static" else f"memref<?x{static.split('x', 1)[1]}T>"
    given = {"static": "", "constant": "%rows", "run-time": "%m"}[sizes]
    rows = f"    %rows = arith.constant {shape[0]} : index\n" if sizes == "constant" else ""
    text = f"""rev.func @swap_out(%x: memref<?x{math.prod(shape)}xT>, %n: index, %m: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {{
  ^bb0(%i: index):
{rows}    %a = anc.array_alloc({given}) : {type}
{_swaps(shape, type)}
    anc.array_free %a({given}) : {type}
    rev.yield
  }}
  rev.return %n, %m : index, index
}}
"""
    return text.replace("T>", f"{element}>")


def _free_line(source: str) -> int:
    return 1 + next(n for n, line in enumerate(source.splitlines()) if "anc.array_free" in line)


NONZERO = {
    "first": {(1, 0): 0.5},
    "middle": {(1, 2): -2.0},
    "last": {(2, 5): 3.0},
    "two, the second first": {(1, 4): 7.0, (1, 1): 0.25},
    "nan last": {(0, 5): math.nan},
    "infinity": {(2, 3): -math.inf},
}
"""Old values of ``x`` (row, column: the element ``[column // 3, column %
3]`` of that row's array) that its free must report."""


Engines = tuple[RevInterpreter, NativeModule, EmulatedKernel, int]
"""The interpreter, native code and the emulated kernel of one module, and
the line of its free."""


@pytest.fixture(params=SIZES, scope="module")
def engines(request: pytest.FixtureRequest) -> Engines:
    source = _source("f64", request.param)
    module = parse_module(source, "free.mlir")
    return RevInterpreter(module), NativeModule.compile(module), EmulatedKernel(module, "swap_out"), _free_line(source)


def _failures(engines: Engines, x: np.ndarray) -> tuple[InvertibilityError, InvertibilityError, InvertibilityError]:
    """The interpreter's, native code's and the emulated kernel's errors on
    ``x`` (each on its own copy)."""
    interpreter, native, kernel, _ = engines
    raised = []
    for run in (
        lambda: interpreter.call("swap_out", x.copy(), len(x), ROWS),
        lambda: native.call("swap_out", x.copy(), len(x), ROWS),
        lambda: raise_gpu_error(kernel.check_table, kernel.launch([x.copy(), len(x), ROWS], 1, len(x))),
    ):
        with pytest.raises(InvertibilityError) as error:
            run()
        raised.append(error.value)
    first, second, third = raised
    return first, second, third


@pytest.mark.parametrize("values", NONZERO.values(), ids=NONZERO.keys())
def test_the_first_nonzero_element_is_reported_alike_on_every_engine(engines, values) -> None:
    x = np.zeros((3, ROWS * COLUMNS))
    for at, value in values.items():
        x[at] = value
    interpreted, native, gpu = _failures(engines, x)
    # the first element in row-major order of the first thread whose row fails
    row, column = min(values)
    shown = f"{values[row, column]}"
    expected = f"array freed holding {shown} at [{column // COLUMNS}, {column % COLUMNS}], expected zeros"
    assert str(interpreted).endswith(expected)
    assert interpreted.location == f"free.mlir:{engines[3]}:5"
    assert str(native) == str(interpreted)
    assert str(gpu) == f"{interpreted} (element {row})"


def test_zeros_and_values_within_the_tolerance_pass_on_every_engine(engines) -> None:
    interpreter, native, kernel, _ = engines
    x = np.zeros((3, ROWS * COLUMNS))
    x[0, 0], x[1, 5], x[2, 2] = -0.0, 1e-12, -1e-9
    for result in (interpreter.call("swap_out", x.copy(), 3, ROWS)[0], native.call("swap_out", x.copy(), 3, ROWS)[0]):
        assert not result.any()
    copy = x.copy()
    assert not kernel.launch([copy, 3, ROWS], 1, 3).any()
    assert not copy.any()


def test_a_value_at_the_tolerance_passes_and_one_just_above_it_fails_on_every_engine(engines) -> None:
    """``|v| ≤ 1e-8`` passes: 1e-8 itself, and −1e-8; the next double
    above it fails."""
    interpreter, native, kernel, _ = engines
    x = np.zeros((2, ROWS * COLUMNS))
    x[0, 1], x[1, 4] = TOLERANCE, -TOLERANCE
    for result in (interpreter.call("swap_out", x.copy(), 2, ROWS)[0], native.call("swap_out", x.copy(), 2, ROWS)[0]):
        assert not result.any()
    assert not kernel.launch([x.copy(), 2, ROWS], 1, 2).any()
    x[1, 2] = np.nextafter(TOLERANCE, 1.0)
    interpreted, native_error, gpu = _failures(engines, x)
    assert str(interpreted).endswith(f"array freed holding {x[1, 2].item()} at [0, 2], expected zeros")
    assert str(native_error) == str(interpreted)
    assert str(gpu) == f"{interpreted} (element 1)"


OTHER_ELEMENTS = {
    "i64": (np.int64, 9, "9"),
    "f32": (np.float32, 0.5, "0.5"),
    "i32": (np.int32, -3, "-3"),
}
"""Element types besides ``f64``: a value its free must report, and how the
report shows it."""


@pytest.mark.parametrize("element", OTHER_ELEMENTS, ids=OTHER_ELEMENTS.keys())
def test_the_first_nonzero_element_of_other_types_is_reported_alike(element: str) -> None:
    """Integers are compared exactly."""
    dtype, value, shown = OTHER_ELEMENTS[element]
    module = parse_module(_source(element, "static"), "free.mlir")
    x = np.zeros((2, ROWS * COLUMNS), dtype=dtype)
    x[1, 3], x[1, 4] = value, 2 * value
    engines = (RevInterpreter(module), NativeModule.compile(module), EmulatedKernel(module, "swap_out"), 0)
    interpreted, native, gpu = _failures(engines, x)
    assert str(interpreted).endswith(f"array freed holding {shown} at [1, 0], expected zeros")
    assert str(native) == str(interpreted)
    assert str(gpu) == f"{interpreted} (element 1)"


SHAPES = {
    "rank 0": (),
    "one": (1,),
    "the limit": (FREED_AT_ONCE,),
    "one past the limit": (FREED_AT_ONCE + 1,),
    "5x6": (5, 6),
}
"""Shapes on both sides of ``FREED_AT_ONCE``: tested at once up to it,
element by element past it."""


@pytest.mark.parametrize("position", ["first", "last"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_the_first_and_last_element_of_arrays_of_any_size_are_reported_alike(shape, position) -> None:
    """The element at either end of the array, in row-major order, is
    reported with its indices on every engine, whichever form checks it."""
    module = parse_module(_source("f64", "static", shape), "free.mlir")
    engines = (RevInterpreter(module), NativeModule.compile(module), EmulatedKernel(module, "swap_out"), 0)
    elements = math.prod(shape)
    x = np.zeros((2, elements))
    at = 0 if position == "first" else elements - 1
    x[1, at] = 0.5
    interpreted, native, gpu = _failures(engines, x)
    shown = ", ".join(str(k) for k in np.unravel_index(at, shape))
    assert str(interpreted).endswith(f"array freed holding 0.5 at [{shown}], expected zeros")
    assert str(native) == str(interpreted)
    assert str(gpu) == f"{interpreted} (element 1)"


@pytest.mark.parametrize("sizes", ["static", "constant"])
def test_a_kernels_freed_array_of_known_size_is_checked_with_one_branch(sizes: str) -> None:
    """From the loads of the array's old values on, the six elements' bits
    are or-ed and, but for the sign, compared with 0 before one
    conditional branch, which leads to the element-by-element checks: no
    absolute value, no float comparison, one ``setp``."""
    ptx = compile_kernels(parse_module(_source("f64", sizes), "free.mlir"), ["swap_out"]).ptx
    elements = ROWS * COLUMNS
    start = ptx.index("ld.global")
    fast = ptx[start : start + re.search(r"@%p\d+ bra", ptx[start:]).start()]
    assert fast.count("ld.global") == elements and fast.count("or.b64") == elements - 1
    assert "abs.f64" not in fast and fast.count("setp") == 1


def _uncomputed(elements: int) -> str:
    """``@fill``: each of ``n`` threads adds its row of ``x`` into a fresh
    array of ``elements``, adds their squares to ``y[i]``, takes the row
    away again and frees the array."""
    return f"""rev.func @fill(%x: memref<?x{elements}xf64>, %y: memref<?xf64>, %n: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant {elements} : index
  rev.for parallel %c0 to %n step %c1 : index () {{
  ^bb0(%i: index):
    %a = anc.array_alloc() : memref<{elements}xf64>
    rev.for %c0 to %m step %c1 : index () {{
    ^bb1(%j: index):
      %e = memref.load %x[%i, %j] : memref<?x{elements}xf64>
      %old = rev.take %a[%j] : memref<{elements}xf64>
      %new = rev.add %old, %e : f64
      rev.put %new, %a[%j] : memref<{elements}xf64>
      rev.yield
    }}
    rev.for %c0 to %m step %c1 : index () {{
    ^bb1(%j: index):
      %e = memref.load %a[%j] : memref<{elements}xf64>
      %s = arith.mulf %e, %e : f64
      %old = rev.take %y[%i] : memref<?xf64>
      %new = rev.add %old, %s : f64
      rev.put %new, %y[%i] : memref<?xf64>
      rev.yield
    }}
    rev.for %c0 to %m step %c1 : index () {{
    ^bb1(%j: index):
      %e = memref.load %x[%i, %j] : memref<?x{elements}xf64>
      %old = rev.take %a[%j] : memref<{elements}xf64>
      %new = rev.sub %old, %e : f64
      rev.put %new, %a[%j] : memref<{elements}xf64>
      rev.yield
    }}
    anc.array_free %a() : memref<{elements}xf64>
    rev.yield
  }}
  rev.return %n : index
}}
"""


def test_a_large_freed_array_is_checked_element_by_element_in_few_registers() -> None:
    """A kernel's array of 64 elements is checked element by element, in a
    loop (unrolled eight times over): tested at once, every element's load
    was held until the one branch, and ptxas gave the kernel 148 registers
    instead of 32 (42 since its loops over ``x``'s row run without their
    index checks where the row is in range, eight loads at a time: design
    decision 131)."""
    from revmlir.gpu.cache import resource_usage
    from revmlir.gpu.toolkit import find_ptxas

    elements = 64
    assert elements > FREED_AT_ONCE
    program = compile_kernels(parse_module(_uncomputed(elements), "fill.mlir"), ["fill"])
    if find_ptxas() is not None:
        usage = resource_usage(program.ptx, "sm_90")[program.kernels["fill"].entry]
        assert usage.registers <= 48 and usage.spill_stores == 0, usage
    assert program.ptx.count("abs.f64") < elements  # not every element's test in a row


def test_the_free_of_code_run_backwards_checks_alike(engines) -> None:
    """Run backwards, ``@swap_out``'s allocation is the free: it checks
    the row swapped back into the array, ``x``'s values on entry."""
    interpreter, native, _, _ = engines
    x = np.zeros((2, ROWS * COLUMNS))
    assert not interpreter.uncall("swap_out", x.copy(), 2, ROWS)[0].any()
    assert not native.uncall("swap_out", x.copy(), 2, ROWS)[0].any()
    x[1, 4] = 0.5
    raised = []
    for engine in (interpreter, native):
        with pytest.raises(InvertibilityError) as error:
            engine.uncall("swap_out", x.copy(), 2, ROWS)
        raised.append(str(error.value))
    assert raised[0].endswith("array freed holding 0.5 at [1, 1], expected zeros")
    assert raised[1] == raised[0]


def _swap_out(x):
    """Each element of ``x`` (6) swapped into a fresh ``2 × 3`` array,
    which is freed."""
    a = rv.zeros((2, 3))
    for k in range(2):
        for j in range(3):
            a[k, j], x[3 * k + j] = x[3 * k + j], a[k, j]
    rv.free(a)


def test_the_free_of_an_adjoint_checks_alike_and_none_checks_without_checks() -> None:
    """The adjoint's forward sweep frees the array as the function does:
    both backends report its element; with ``checks=False`` neither
    does."""
    x = np.zeros(ROWS * COLUMNS)
    x[4] = 0.5
    raised = []
    for backend in ("interpreter", "native"):
        adjoint = rv.adjoint(rv.reversible(_swap_out, backend=backend))
        with pytest.raises(InvertibilityError) as error:
            adjoint(x.copy(), np.ones_like(x))
        raised.append(str(error.value))
        unchecked = rv.reversible(_swap_out, checks=False, backend=backend)
        assert not unchecked(x.copy())[0].any()
    assert "array freed holding 0.5 at [1, 1], expected zeros" in raised[0]
    assert raised[1] == raised[0]


SMALL = """rev.func @box(%x: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %a = anc.array_alloc() : memref<f64>
  %e = rev.take %x[%c0] : memref<1xf64>
  %z = rev.take %a[] : memref<f64>
  rev.put %e, %a[] : memref<f64>
  rev.put %z, %x[%c0] : memref<1xf64>
  anc.array_free %a() : memref<f64>
  rev.return
}
rev.func @empty(%y: f64) {
  %a = anc.array_alloc() : memref<0x3xf64>
  anc.array_free %a() : memref<0x3xf64>
  rev.return %y : f64
}
"""
"""A rank-0 array freed holding ``x[0]``, and an array of no elements."""


def test_rank_0_and_empty_arrays_are_checked_alike() -> None:
    """A rank-0 array's element is shown at ``[]``; an array of no elements
    has nothing to check."""
    module = parse_module(SMALL, "small.mlir")
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    raised = []
    for engine in (interpreter, native):
        assert engine.call("empty", 2.0) == (2.0,)
        assert not engine.call("box", np.zeros(1))[0].any()
        with pytest.raises(InvertibilityError) as error:
            engine.call("box", np.array([2.5]))
        raised.append(str(error.value))
    assert raised[0] == "small.mlir:8:3: 'anc.array_free' in @box: array freed holding 2.5 at [], expected zeros"
    assert raised[1] == raised[0]


NEGATIVE = """rev.func @negative(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %m = arith.constant -1 : index
    %a = anc.array_alloc(%m) : memref<?xf64>
    anc.array_free %a(%m) : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}
"""
"""An array given a negative constant size, in a loop of ``n`` threads."""


def test_an_array_of_negative_constant_size_compiles_and_reports_its_size_on_every_engine() -> None:
    """Its free is checked element by element (a negative size has no
    elements to test at once): nothing runs for no threads, and its
    allocation reports the size where it runs."""
    module = parse_module(NEGATIVE, "negative.mlir")
    interpreter, native, kernel = (
        RevInterpreter(module),
        NativeModule.compile(module),
        EmulatedKernel(module, "negative"),
    )
    x = np.zeros(2)
    assert interpreter.call("negative", x, 0) == native.call("negative", x, 0) == (x, 0)
    assert not kernel.launch([x, 0], 1, 1).any()
    raised = []
    for run in (
        lambda: interpreter.call("negative", x, 1),
        lambda: native.call("negative", x, 1),
        lambda: raise_gpu_error(kernel.check_table, kernel.launch([x, 1], 1, 1)),
    ):
        with pytest.raises(ExecutionError) as error:
            run()
        raised.append(str(error.value))
    assert raised[0] == "negative.mlir:7:5: 'anc.array_alloc' in @negative: array size -1 is negative"
    assert raised[1] == raised[0]
    assert raised[2] == f"{raised[0]} (element 0)"


ROWS_GIVEN = -2
"""A negative number of rows, as a program may compute it."""


def _negative_rows(x, n):
    for _ in range(n):
        a = rv.zeros((ROWS_GIVEN, 3))
        b = rv.zeros((-1, -1))  # a positive number of "elements"
        rv.free(b)
        rv.free(a)


def test_a_frontend_array_of_negative_size_compiles_and_reports_it_on_both_backends() -> None:
    x = np.zeros(2)
    raised = []
    for backend in ("interpreter", "native"):
        function = rv.reversible(_negative_rows, backend=backend)
        assert function(x, 0)[1] == 0
        with pytest.raises(ExecutionError) as error:
            function(x, 1)
        raised.append(str(error.value))
    assert raised[0].endswith("'anc.array_alloc' in @_negative_rows: array size -2 is negative")
    assert raised[1] == raised[0]
