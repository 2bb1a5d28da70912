"""A failed run-time check stops the run at its line, and the arrays keep
what the run wrote before it, on both engines alike: also a write to the
element that the line after the check would have written again, which
LLVM's dead-store elimination dropped from native code while the failing
path was declared ``nounwind`` (``revmlir.runtime.guard.FAIL_ATTRIBUTES``).
A GPU kernel keeps it too: its PTX, compiled here without a GPU, stores
before the check (``revmlir.lowering.unwinding_asm``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import revmlir as rv


def straight(y, x, k: int):
    y[0] += x[0]
    y[0] += x[k]  # out of bounds


@rv.reversible
def _adds_an_element(y, k: int):
    y[0] += y[k]  # out of bounds


def across_a_call(y, k: int):
    y[0] += 1.0
    _adds_an_element(y, k)


def division_by_zero(n, k: int):
    n[0] += 5
    n[0] += 7 // k


def shift_by_the_width(n, k: int):
    n[0] += 5
    n[0] += 1 << k


def ancilla_not_freed(y, x):
    y[0] += 1.0
    a = rv.ancilla(x)
    rv.free(a, 0.0)  # x is not 0
    y[0] += 1.0


def loop(y, x, k: int):
    for i in range(len(y)):
        y[i] += x[i]
        y[i] += x[i + k]  # out of bounds in the last iterations


def parallel_loop(y, g, x, k: int):
    for i in rv.prange(len(y)):
        y[i] += x[i]
        g[0] += x[i] * 10.0
        y[i] += x[i + k]  # out of bounds in the last iterations


CASES: dict[str, tuple[Callable[..., None], Callable[[], list[Any]], list[list[float]]]] = {
    "straight": (straight, lambda: [np.zeros(1), np.array([1.0, 2.0]), 5], [[1.0], [1.0, 2.0]]),
    "across a call": (across_a_call, lambda: [np.zeros(2), 9], [[1.0, 0.0]]),
    "division by zero": (division_by_zero, lambda: [np.zeros(1, np.int64), 0], [[5]]),
    "shift by the width": (shift_by_the_width, lambda: [np.zeros(1, np.int64), 64], [[5]]),
    "ancilla not freed": (ancilla_not_freed, lambda: [np.zeros(1), 2.0], [[1.0]]),
    "loop": (loop, lambda: [np.zeros(4), np.arange(1.0, 6.0), 2], [[4.0, 6.0, 8.0, 4.0], [1.0, 2.0, 3.0, 4.0, 5.0]]),
    "parallel loop": (
        parallel_loop,
        lambda: [np.zeros(4), np.zeros(1), np.arange(1.0, 6.0), 2],
        [[4.0, 6.0, 8.0, 4.0], [100.0], [1.0, 2.0, 3.0, 4.0, 5.0]],
    ),
}


@pytest.mark.parametrize("engine", ["interpreter", "native"])
@pytest.mark.parametrize("case", list(CASES))
def test_arrays_keep_the_write_before_the_failed_check(case: str, engine: str):
    function, arguments, expected = CASES[case]
    values = arguments()
    with pytest.raises((rv.ExecutionError, rv.InvertibilityError)):
        rv.reversible(backend=engine)(function)(*values)
    assert [v.tolist() for v in values if isinstance(v, np.ndarray)] == expected


@pytest.mark.parametrize("printed", [True, False], ids=["printed", "converted"])
def test_a_kernel_keeps_the_write_before_a_failed_check(printed: bool, monkeypatch: pytest.MonkeyPatch):
    """The GPU's report ends the thread with PTX's ``exit``, which LLVM
    took as not unwinding: the kernel of ``loop`` over ``rv.prange``
    stored ``y[i]`` once per iteration, after both checks.  Its PTX stores
    ``y[i]`` once in the loop run without checks (every index checked
    before it) and twice in the checked loop, the first before
    ``x[i + k]``'s check; on both routes to LLVM IR, and ptxas accepts it."""
    from revmlir.gpu import nvptx, program
    from revmlir.gpu.toolkit import emit_cubin, find_ptxas

    if not printed:  # xDSL's backend converts the device code instead
        monkeypatch.setattr(nvptx, "llvm_text", lambda *args: None)
    kernel = rv.cuda.kernel(rv.reversible(parallel_twice))
    module, name = kernel.rev_module(np.zeros(4), np.zeros(6), 2)
    compiled = program._compile_kernels(module, [name], "sm_90", 3, None, owned=True)
    entry = compiled.ptx.split(f".entry {compiled.kernels[name].entry}(")[1]
    stores = entry.split("st.global")
    assert len(stores) == 4
    assert "bra" in stores[2]  # x[i + k]'s check, between the checked loop's two stores
    if find_ptxas() is not None:
        assert emit_cubin(compiled.ptx, "sm_90")[:4] == b"\x7fELF"


def parallel_twice(y, x, k: int):
    for i in rv.prange(len(y)):
        y[i] += x[i]
        y[i] += x[i + k]  # out of bounds in the last iterations
