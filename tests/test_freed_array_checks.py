"""A freed ancilla array's zero check.  Where the array's sizes are known
at compile time it is made at once: every element is tested, the results
combined, and only when one fails are the elements checked again in order,
so that the first non-zero element in row-major order is the one reported;
an array of run-time size is checked element by element.  Every engine
reports the same failure with the same message, values and element: the
interpreter (which checks element by element), native code, and a GPU
kernel run thread by thread on the CPU; the kernel's PTX branches once for
the whole array."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from gpu_emulation import EmulatedKernel
from revmlir.errors import InvertibilityError
from revmlir.gpu.program import compile_kernels
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

ROWS, COLUMNS = 2, 3


def _swaps(shape: str) -> str:
    """Each element of ``%a`` swapped with the row ``%i`` of ``%x``."""
    lines = []
    for k in range(ROWS):
        for j in range(COLUMNS):
            at = f"{k}_{j}"
            lines += [
                f"    %ck{at} = arith.constant {k} : index",
                f"    %cj{at} = arith.constant {j} : index",
                f"    %cx{at} = arith.constant {k * COLUMNS + j} : index",
                f"    %e{at} = rev.take %x[%i, %cx{at}] : memref<?x{ROWS * COLUMNS}xT>",
                f"    %z{at} = rev.take %a[%ck{at}, %cj{at}] : {shape}",
                f"    rev.put %e{at}, %a[%ck{at}, %cj{at}] : {shape}",
                f"    rev.put %z{at}, %x[%i, %cx{at}] : memref<?x{ROWS * COLUMNS}xT>",
            ]
    return "\n".join(lines)


SIZES = ("static", "constant", "run-time")
"""How the freed array's sizes are given: in its type (``2x3``), by a
constant (``?x3``: the Python frontend's arrays), or by an argument."""


def _source(element: str, sizes: str) -> str:
    """``@swap_out``: each of ``n`` threads (a parallel loop) swaps its row
    of ``x`` into a fresh ``m × 3`` ancilla array (``m`` is 2, known at
    compile time unless ``sizes`` is ``run-time``) and frees it, so the free
    checks the row's old values."""
    shape = f"memref<{ROWS}x{COLUMNS}xT>" if sizes == "static" else f"memref<?x{COLUMNS}xT>"
    given = {"static": "", "constant": "%rows", "run-time": "%m"}[sizes]
    rows = f"    %rows = arith.constant {ROWS} : index\n" if sizes == "constant" else ""
    text = f"""rev.func @swap_out(%x: memref<?x{ROWS * COLUMNS}xT>, %n: index, %m: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {{
  ^bb0(%i: index):
{rows}    %a = anc.array_alloc({given}) : {shape}
{_swaps(shape)}
    anc.array_free %a({given}) : {shape}
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
    with pytest.raises(InvertibilityError) as interpreted:
        RevInterpreter(module).call("swap_out", x.copy(), 2, ROWS)
    with pytest.raises(InvertibilityError) as native:
        NativeModule.compile(module).call("swap_out", x.copy(), 2, ROWS)
    assert str(interpreted.value).endswith(f"array freed holding {shown} at [1, 0], expected zeros")
    assert str(native.value) == str(interpreted.value)


@pytest.mark.parametrize("sizes", ["static", "constant"])
def test_a_kernels_freed_array_of_known_size_is_checked_with_one_branch(sizes: str) -> None:
    """Between the loads of the array's old values and the element-by-element
    checks (``|v| > tol``, NaN included) are the six elements' tests,
    combined, and one branch over those checks."""
    ptx = compile_kernels(parse_module(_source("f64", sizes), "free.mlir"), ["swap_out"]).ptx
    elements = ROWS * COLUMNS
    fast = ptx[ptx.index("ld.global") : ptx.index("setp.gtu.f64")]
    assert fast.count("ld.global") == fast.count("setp.le.f64") == elements
    assert fast.count("and.pred") == elements - 1
    assert len(re.findall(r"\bbra\b", fast)) == 1
    assert ptx.count("setp.gtu.f64") == elements
