"""A kernel's inner loops are versioned on their index checks, as native
code's are (design decision 131): where a loop's indices are in range at
both ends, the thread runs it without checks, so its loads are not
separated by a branch each; otherwise it runs the checked loop, which stops
at the same element with the same error, the arrays as it left them.  The
interpreter, native code and the kernel run thread by thread on the CPU
(``tests/gpu_emulation.py``) give the same arrays and errors (the
kernel's naming the failing element too), for an index that fails in the
middle of a loop and for a row read through an index array that points past
the end; the kernel's PTX loads a row's elements without a branch between
them, which only the unchecked copy does."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import gpu, scf

import revmlir as rv
from gpu_emulation import EmulatedKernel
from revmlir.errors import ExecutionError
from revmlir.gpu.program import compile_kernels, lower_kernels
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.checked_code import CheckOp
from revmlir.runtime.native import NativeModule


@rv.reversible
def swap_rows(a, b, m):
    """Each thread swaps the first ``m`` elements of its row of ``a`` with
    those of ``b``."""
    for i in rv.prange(a.shape[0]):
        for j in range(m):
            a[i, j], b[i, j] = b[i, j], a[i, j]


@rv.reversible
def gather_rows(a, b, at):
    """Each thread adds row ``at[i]`` of ``b`` to its row of ``a``."""
    for i in rv.prange(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] += b[at[i], j]


def _swapped(m: int) -> tuple[Any, ...]:
    return np.arange(12.0).reshape(4, 3), -np.arange(20.0).reshape(4, 5), m


def _gathered(last: int) -> tuple[Any, ...]:
    return np.zeros((4, 3)), np.arange(12.0).reshape(4, 3), np.array([3, 1, last, 0])


def _outcomes(function: Any, args: tuple[Any, ...]) -> dict[str, tuple[list[np.ndarray], str | None]]:
    """Per engine, the arrays after a run on copies of ``args`` and its
    error's message and location.  One thread runs the kernel's loop, in
    order, as the other engines do."""
    module, name = rv.cuda.kernel(function).rev_module(*args)
    interpreter, native, kernel = RevInterpreter(module), NativeModule.compile(module), EmulatedKernel(module, name)

    def launched(*given: Any) -> None:
        slot = kernel.launch(list(given), 1, 1)
        if slot.any():
            raise_gpu_error(kernel.check_table, slot)

    runs: dict[str, Callable[..., object]] = {
        "interpreter": lambda *given: interpreter.call(name, *given),
        "native": lambda *given: native.call(name, *given),
        "kernel": launched,
    }
    outcomes = {}
    for engine, run in runs.items():
        given = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        message = None
        try:
            run(*given)
        except ExecutionError as error:
            message = f"{error.message} at {error.location}"
        outcomes[engine] = ([a for a in given if isinstance(a, np.ndarray)], message)
    return outcomes


def _agree(
    outcomes: dict[str, tuple[list[np.ndarray], str | None]], element: int | None = None
) -> tuple[list[np.ndarray], str | None]:
    """The interpreter's arrays and message, which every engine gives; the
    kernel's message also names the ``element`` (the parallel loop's
    iteration) that failed."""
    arrays, message = outcomes["interpreter"]
    for engine, (got, said) in outcomes.items():
        if engine == "kernel" and message is not None:
            text, location = message.rsplit(" at ", 1)
            assert said == f"{text} (element {element}) at {location}"
        else:
            assert said == message, engine
        for g, e in zip(got, arrays, strict=True):
            np.testing.assert_array_equal(g, e, err_msg=engine)
    return arrays, message


@pytest.mark.parametrize(("function", "args", "kept"), [(swap_rows, _swapped(3), 0), (gather_rows, _gathered(2), 1)])
def test_the_inner_loop_has_a_copy_without_its_affine_checks(function: Any, args: tuple[Any, ...], kept: int) -> None:
    """The inner loop checked as it was, and a copy that keeps only the
    checks of indices not affine in its variable (``b[at[i], j]``'s row,
    loaded in the loop)."""
    module, name = rv.cuda.kernel(function).rev_module(*args)
    work, _, _ = lower_kernels(module, [name])
    (kernel,) = [op for op in work.walk() if isinstance(op, gpu.FuncOp)]
    _, *inner = [op for op in kernel.walk() if isinstance(op, scf.ForOp)]  # the grid-stride loop first
    checks = sorted(sum(isinstance(op, CheckOp) for op in loop.body.walk()) for loop in inner)
    assert len(inner) == 2
    assert checks[0] == kept < checks[1]


def test_the_copy_without_checks_loads_its_elements_without_a_branch_between() -> None:
    """The kernel's PTX has a run of loads of ``a``'s and ``b``'s elements
    with no conditional branch between them: the unchecked copy, which the
    thread runs when the precondition holds.  In the checked loop every load
    follows a branch on its index, one load between two branches."""
    module, name = rv.cuda.kernel(swap_rows).rev_module(*_swapped(3))
    entry = compile_kernels(module, [name]).ptx.split(".entry ", 1)[1]
    runs = re.split(r"@!?%p\d+ bra", entry)
    assert max(run.count("ld.global") for run in runs) >= 2


def test_an_inner_loop_in_range_runs_alike_everywhere() -> None:
    arrays, message = _agree(_outcomes(swap_rows, _swapped(3)))
    assert message is None
    np.testing.assert_array_equal(arrays[0], -np.arange(20.0).reshape(4, 5)[:, :3])


def test_an_index_failing_in_the_middle_of_an_inner_loop_fails_alike_everywhere() -> None:
    """``m = 4`` passes ``a``'s three columns: the checked loop swaps three
    elements of row 0 and stops at the fourth."""
    arrays, message = _agree(_outcomes(swap_rows, _swapped(4)), element=0)
    assert message is not None and message.startswith("index 3 is out of bounds for axis 1 with size 3")
    assert arrays[0][0].tolist() == [-0.0, -1.0, -2.0]
    assert arrays[0][1].tolist() == [3.0, 4.0, 5.0]


@pytest.mark.parametrize("last", [2, 4])
def test_a_row_read_through_an_index_array_runs_alike_everywhere(last: int) -> None:
    """Row ``at[2]`` of ``b``: in range, or one past its end, where the
    thread's loop stops at its first element with rows 0 and 1 added."""
    arrays, message = _agree(_outcomes(gather_rows, _gathered(last)), element=2)
    if last == 2:
        assert message is None
        return
    assert message is not None and message.startswith("index 4 is out of bounds for axis 0 with size 4")
    assert arrays[0][1].tolist() == [3.0, 4.0, 5.0] and not arrays[0][2:].any()
