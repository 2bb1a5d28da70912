"""The loops of the functions a kernel calls are versioned, as native
code's are (design decision 135): ADBench's packed triangle,
``icf[ik, d + i·(2d − i − 1) // 2 + j − i − 1]``, read in a device
function, runs without its index checks where the row is in range, and
otherwise stops at the same element with the same error as the CPU
function, the kernel's element number added, forward and backward.  The
kernel runs thread by thread on the CPU (``tests/gpu_emulation.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func, gpu, scf
from xdsl.ir import Operation

import revmlir as rv
from gpu_emulation import EmulatedKernel
from revmlir.errors import ExecutionError
from revmlir.gpu import outline
from revmlir.gpu.program import lower_kernels
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.lowering import loop_versioning
from revmlir.lowering.checked_code import reported_check
from revmlir.runtime.native import NativeModule

D, K = 4, 3
COLUMNS = D + D * (D - 1) // 2
"""``icf``'s columns: the diagonal's ``d``, then the strict lower triangle."""


@rv.reversible
def triangle(total, icf, ik, d):
    """``total +=`` the strict lower triangle packed in row ``ik`` of
    ``icf`` after its diagonal's ``d`` elements (``qtimesx``'s index)."""
    for i in range(d):
        for j in range(i + 1, d):
            total += icf[ik, d + i * (2 * d - i - 1) // 2 + j - i - 1]


@rv.reversible
def triangles(out, icf):
    """``out[ik, 0] +=`` row ``ik``'s triangle, in ``d = out.shape[1]``
    dimensions."""
    for ik in rv.prange(out.shape[0]):
        triangle(out[ik, 0], icf, ik, out.shape[1])


@rv.reversible
def row_sums(out, icf):
    """A grid-stride loop with a loop inside it, and a call."""
    for ik in rv.prange(out.shape[0]):
        for j in range(icf.shape[1]):
            out[ik, 0] += icf[ik, j]
        triangle(out[ik, 1], icf, ik, out.shape[1])


def _forward(rows: int, columns: int) -> list[Any]:
    return [np.zeros((K, D)), np.arange(rows * columns, dtype=float).reshape(rows, columns)]


def _backward(rows: int, columns: int) -> list[Any]:
    out, icf = _forward(rows, columns)
    return [out, icf, np.arange(1.0, K * D + 1).reshape(K, D), np.zeros((rows, columns))]


FUNCTIONS = {"forward": (triangles, _forward), "adjoint": (rv.adjoint(triangles), _backward)}


def _callee_loops(function: Any, args: list[np.ndarray]) -> list[tuple[int, int]]:
    """The index checks of the two versions of each versioned loop of the
    ``gpu.module``'s ``triangle`` (or its adjoint): (unchecked, checked)."""
    module, name = rv.cuda.kernel(function).rev_module(*args)
    work, _, _ = lower_kernels(module, [name])
    (device,) = [op for op in work.ops if isinstance(op, gpu.ModuleOp)]
    callees = [f for f in device.body.ops if isinstance(f, func.FuncOp) and f.sym_name.data.startswith("triangle")]
    versions = [
        op
        for f in callees
        for op in f.walk()
        if isinstance(op, scf.IfOp) and isinstance(op.true_region.ops.first, scf.ForOp)
    ]
    return [
        (_index_checks(v.true_region.block.first_op), _index_checks(v.false_region.block.first_op))
        for v in versions
        if reported_check(v) is None
    ]


def _index_checks(loop: Operation | None) -> int:
    assert isinstance(loop, scf.ForOp)
    return sum(1 for op in loop.walk() if reported_check(op) is not None)


@pytest.mark.parametrize("direction", FUNCTIONS)
def test_the_callees_triangle_loop_has_a_version_without_its_index_checks(direction: str) -> None:
    """The triangle's loop over ``j`` checks row ``ik`` and the packed
    column of ``icf`` (of ``g_icf`` too in the adjoint) in every
    iteration; its unchecked version keeps only the division's check of
    its constant 2."""
    function, make = FUNCTIONS[direction]
    ((unchecked, checked),) = _callee_loops(function, make(K, COLUMNS))
    assert unchecked == 1 < checked


def _outcomes(function: Any, args: list[np.ndarray]) -> list[tuple[list[np.ndarray], str | None]]:
    """The arrays after the CPU function's run and the kernel's (one thread
    over every row, in order) on copies of ``args``, and their errors."""
    module, name = rv.cuda.kernel(function).rev_module(*args)
    native, kernel = NativeModule.compile(module), EmulatedKernel(module, name)

    def launched(*given: np.ndarray) -> None:
        slot = kernel.launch(list(given), 1, 1)
        if slot.any():
            raise_gpu_error(kernel.check_table, slot)

    outcomes = []
    for run in (lambda *given: native.call(name, *given), launched):
        given = [a.copy() for a in args]
        message = None
        try:
            run(*given)
        except ExecutionError as error:
            message = str(error)
        outcomes.append((given, message))
    return outcomes


@pytest.mark.parametrize("direction", FUNCTIONS)
@pytest.mark.parametrize(
    ("rows", "columns", "error"),
    [
        (K, COLUMNS, None),
        (K, COLUMNS - 1, f"index {COLUMNS - 1} is out of bounds for axis 1 with size {COLUMNS - 1}"),
        (K - 1, COLUMNS, f"index {K - 1} is out of bounds for axis 0 with size {K - 1}"),
    ],
    ids=["in range", "a column short", "a row short"],
)
def test_the_kernel_runs_the_triangle_as_the_cpu_does(direction: str, rows: int, columns: int, error: str | None):
    """In range, the same arrays; one column short, the last element of
    row 0's triangle fails in thread 0; one row short, row ``K − 1``'s
    first element fails in thread ``K − 1``, after the other rows ran: the
    same error and arrays, the kernel's with its element."""
    function, make = FUNCTIONS[direction]
    (cpu_arrays, cpu), (gpu_arrays, kernel) = _outcomes(function, make(rows, columns))
    for got, expected in zip(gpu_arrays, cpu_arrays, strict=True):
        np.testing.assert_array_equal(got, expected)
    if error is None:
        assert cpu is kernel is None
        assert cpu_arrays[0].any()
        return
    assert cpu is not None and error in cpu
    element = 0 if rows == K else K - 1
    assert kernel == f"{cpu} (element {element})"


def test_a_kernels_grid_loop_and_each_loop_inside_it_are_tried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The outline tries the grid-stride loop, then the loops inside it
    (decision 131), and each device function's loops: no loop twice."""
    tried: list[scf.ForOp] = []
    version_loop = loop_versioning.version_loop

    def recording(loop: scf.ForOp, entries: list[str]) -> scf.ForOp | None:
        tried.append(loop)
        return version_loop(loop, entries)

    monkeypatch.setattr(loop_versioning, "version_loop", recording)
    monkeypatch.setattr(outline, "version_loop", recording)
    module, name = rv.cuda.kernel(row_sums).rev_module(*_forward(K, COLUMNS))
    lower_kernels(module, [name])
    assert len(tried) == len({id(loop) for loop in tried}) == 4  # the grid's, the row's, the triangle's two
