"""A kernel's inner loops are versioned on their index checks, as native
code's are (decision 47): where a loop's indices are in range at both ends,
the thread runs it without checks, so its loads are not separated by a
branch each; otherwise it runs the checked loop, which stops at the same
element with the same error, the arrays as it left them.  The kernel run
thread by thread on the CPU (``tests/gpu_emulation.py``) is compared with
the CPU function, including an index that fails in the middle of a loop."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import gpu, scf

import revmlir as rv
from gpu_emulation import EmulatedKernel
from revmlir.errors import ExecutionError
from revmlir.gpu.program import lower_kernels
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.lowering.checked_code import CheckOp


@rv.reversible
def swap_rows(a, b, m):
    """Each thread swaps the first ``m`` elements of its row of ``a`` with
    those of ``b``."""
    for i in rv.prange(a.shape[0]):
        for j in range(m):
            a[i, j], b[i, j] = b[i, j], a[i, j]


def _arguments(m: int) -> tuple[np.ndarray, np.ndarray, int]:
    return np.arange(12.0).reshape(4, 3), -np.arange(20.0).reshape(4, 5), m


def test_the_inner_loop_has_an_unchecked_copy() -> None:
    module, name = rv.cuda.kernel(swap_rows).rev_module(*_arguments(3))
    work, _, _ = lower_kernels(module, [name])
    (kernel,) = [op for op in work.walk() if isinstance(op, gpu.FuncOp)]
    loops = [op for op in kernel.walk() if isinstance(op, scf.ForOp)]
    checked = [loop for loop in loops if any(isinstance(op, CheckOp) for op in loop.body.walk())]
    # the grid-stride loop, the inner loop checked, and its copy without checks
    assert len(loops) == 3
    assert any(loop not in checked for loop in loops)


def test_an_inner_loop_in_range_is_the_cpu_function() -> None:
    expected = _arguments(3)
    swap_rows(*expected)
    got = _arguments(3)
    slot = EmulatedKernel(*rv.cuda.kernel(swap_rows).rev_module(*got)).launch(list(got), 2, 3)
    assert not slot.any()
    for g, e in zip(got[:2], expected[:2], strict=True):
        np.testing.assert_array_equal(g, e)


def test_an_index_failing_in_the_middle_of_an_inner_loop_is_the_cpu_functions_error() -> None:
    """``m = 4`` passes ``a``'s three columns: the checked loop swaps three
    elements of row 0 and stops at the fourth, on both engines."""
    expected = _arguments(4)
    with pytest.raises(ExecutionError) as cpu:
        swap_rows(*expected)
    got = _arguments(4)
    module, name = rv.cuda.kernel(swap_rows).rev_module(*got)
    emulated = EmulatedKernel(module, name)
    slot = emulated.launch(list(got), 1, 1)
    with pytest.raises(ExecutionError) as kernel:
        raise_gpu_error(emulated.check_table, slot)
    assert "index 3 is out of bounds for axis 1 with size 3" in cpu.value.message
    assert kernel.value.message == cpu.value.message + " (element 0)"
    assert kernel.value.location == cpu.value.location
    for g, e in zip(got[:2], expected[:2], strict=True):
        np.testing.assert_array_equal(g, e)
    assert got[0][0].tolist() == [-0.0, -1.0, -2.0]
