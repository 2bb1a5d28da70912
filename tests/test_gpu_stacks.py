"""Stacks on the GPU (``revmlir.gpu.stacks``), without a GPU: kernels with
stacks compile to PTX that ptxas accepts, and run thread by thread on the
CPU (``gpu_emulation``, a grid smaller than the trip count, so threads
reuse their arena) they give what the CPU function gives, the CPU's errors
with the element appended, and the arena's own errors at the push."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import revmlir as rv
from gpu_emulation import EmulatedKernel
from gpu_stack_kernels import (
    array_below_stack,
    stack_in_callee,
    stack_per_thread,
    two_stacks,
    unbalanced,
)
from revmlir.errors import ExecutionError, InvertibilityError
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

N = 11
X = np.linspace(0.5, 1.5, N)
FUNCTIONS = {f.__name__: f for f in (stack_per_thread, stack_in_callee, two_stacks, array_below_stack, unbalanced)}
FUNCTIONS["stack_per_thread.adj"] = rv.adjoint(stack_per_thread)
ARGS: dict[str, tuple[Any, ...]] = {
    "stack_per_thread": (np.zeros(N), X, 5),
    "stack_in_callee": (np.zeros(N), X),
    "two_stacks": (np.zeros(N), X + 0.5j, X, np.arange(N, dtype=np.int64) * 7, 7),
    "array_below_stack": (np.zeros(N), X, 3),
    "unbalanced": (np.zeros(N), X, 0),
    "stack_per_thread.adj": (np.zeros(N), X, 5, np.linspace(1.0, 2.0, N), np.zeros(N)),
}


def _copies(args: tuple[Any, ...]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@functools.cache
def emulated(name: str) -> EmulatedKernel:
    """Each kernel compiled for the host once."""
    return EmulatedKernel(*rv.cuda.kernel(FUNCTIONS[name]).rev_module(*ARGS[name]))


def run(name: str, args: list[Any], arena: int = 4096) -> None:
    """``name``'s kernel on a 2 × 3 grid, raising the error a launch would."""
    kernel = emulated(name)
    raise_gpu_error(kernel.check_table, kernel.launch(args, 2, 3, arena=arena))


@pytest.mark.parametrize(
    "name", ["stack_per_thread", "stack_in_callee", "two_stacks", "array_below_stack", "stack_per_thread.adj"]
)
def test_stack_kernels_thread_by_thread_are_the_cpu_functions(name: str) -> None:
    """A stack per thread, in a callee, two pushed in turn (their buffers
    move past each other, elements copied), an array freed below a live
    stack's buffer (a larger array after it must not take the buffer's
    bytes: the popped value would fail its free), and the adjoint of a
    kernel with a stack (its tape and the stack pushed in turn)."""
    expected, got = _copies(ARGS[name]), _copies(ARGS[name])
    FUNCTIONS[name](*expected)
    run(name, got)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
    assert np.asarray(got[0]).any()


@pytest.mark.parametrize("pops", [0, 2])
def test_a_stacks_checks_are_the_cpus_errors_with_the_element(pops: int) -> None:
    """A stack freed holding a value, a pop of an empty stack: the CPU's
    error (class, message, location) with the first failing element."""
    args = (np.zeros(N), X, pops)
    with pytest.raises(InvertibilityError) as cpu:
        unbalanced(*_copies(args))
    assert ("stack freed holding 1 value(s)" if pops == 0 else "pop from an empty stack") in str(cpu.value)
    with pytest.raises(InvertibilityError) as gpu:
        run("unbalanced", _copies(args))
    assert str(gpu.value) == f"{cpu.value} (element 0)"


def test_an_exhausted_arena_is_a_located_error_at_the_push_and_enough_arena_runs() -> None:
    """16 floats take 128 bytes of arena: with 112 each thread stops at the
    push that needed the 128, before writing anything; with 128 the kernel
    gives the CPU's results."""
    args = (np.zeros(N), X, 16)
    got = _copies(args)
    with pytest.raises(ExecutionError) as error:
        run("stack_per_thread", got, arena=112)
    assert str(error.value).endswith(
        "in @stack_per_thread: needs 128 bytes of per-thread arena, has 112 (a stack; launch with a larger arena=) "
        "(element 0)"
    )
    assert error.value.location is not None and "gpu_stack_kernels.py:21:" in error.value.location
    assert not got[0].any()
    expected, got = _copies(args), _copies(args)
    stack_per_thread(*expected)
    run("stack_per_thread", got, arena=128)
    np.testing.assert_array_equal(got[0], expected[0])


@pytest.mark.parametrize("name", ["stack_per_thread", "stack_in_callee"])
def test_stack_kernels_take_an_arena_and_ptxas_accepts_them(name: str) -> None:
    """No realloc or free: the kernel takes a per-thread arena."""
    from revmlir.gpu.toolkit import emit_cubin, find_ptxas

    compiled = rv.cuda.kernel(FUNCTIONS[name]).specialise(*ARGS[name])
    info = compiled.program.kernels[compiled.name]
    assert info.arena and f".entry {info.entry}(" in compiled.program.ptx
    assert "realloc" not in compiled.program.ptx and "free" not in compiled.program.ptx
    if find_ptxas() is not None:
        assert emit_cubin(compiled.program.ptx, "sm_90")[:4] == b"\x7fELF"


@pytest.mark.parametrize("check_ops", [True, False], ids=["compiled", "printed"])
def test_the_arenas_checks_take_the_form_of_the_pipelines_checks(check_ops: bool) -> None:
    """The arena's checks (arrays and a stack's buffer past the arena's
    end) are built as every other check: one ``CheckOp`` each where the
    kernel compiler lowers (``lower_kernels``), the std form where
    ``rev-gpu-outline`` prints."""
    from xdsl.dialects import gpu

    from revmlir.gpu.arena import EXHAUSTED
    from revmlir.gpu.outline import outline
    from revmlir.lowering.checked_code import CheckOp, reported_check
    from revmlir.lowering.rev_to_std import lower_to_std
    from revmlir.runtime_checks import CHECKS_ATTR

    module, name = rv.cuda.kernel(array_below_stack).rev_module(*ARGS["array_below_stack"])
    lower_to_std(module, check_ops=check_ops)
    outline(module, [name], check_ops=check_ops)
    entries = [entry.data for entry in module.attributes[CHECKS_ATTR].data]  # type: ignore[attr-defined]  # id 1 first
    arena = EXHAUSTED.format(what="")[: EXHAUSTED.index(",")]  # "needs {0} bytes of per-thread arena"
    (device,) = [op for op in module.ops if isinstance(op, gpu.ModuleOp)]
    checks = [op for op in device.walk() if (found := reported_check(op)) and arena in entries[found[0] - 1]]
    assert len(checks) == 3  # the two arrays' and the push's
    assert all(isinstance(op, CheckOp) == check_ops for op in checks)


SNAPSHOTS = Path(__file__).parent / "filecheck" / "gpu" / "snapshot.mlir"
"""A kernel calling a function that snapshots a stack and restores it."""


def test_snapshots_in_a_kernel_thread_by_thread_are_the_cpus() -> None:
    """A snapshot's record and its stack part, and the restore, in the
    arena: the interpreter's and native code's results, thread by thread;
    ptxas accepts the kernel."""
    from revmlir.gpu.program import compile_kernels
    from revmlir.gpu.toolkit import emit_cubin, find_ptxas

    module = parse_module(SNAPSHOTS.read_text(), str(SNAPSHOTS))
    y, x = np.linspace(-1.0, 1.0, N), X
    expected = [float(value) for value in y + 2 * x * x]
    for engine in (RevInterpreter(module), NativeModule.compile(module)):
        assert [engine.call("frames", a, b)[0] for a, b in zip(y, x, strict=True)] == pytest.approx(expected)
    kernel, got = EmulatedKernel(module, "kernel"), y.copy()
    assert kernel.arena
    raise_gpu_error(kernel.check_table, kernel.launch([got, x.copy()], 2, 3))
    assert got.tolist() == pytest.approx(expected)
    program = compile_kernels(module, ["kernel"])
    assert program.kernels["kernel"].arena and "realloc" not in program.ptx
    if find_ptxas() is not None:
        assert emit_cubin(program.ptx, "sm_90")[:4] == b"\x7fELF"


def test_a_snapshot_past_the_arena_is_a_located_error_at_the_snapshot() -> None:
    """The stack takes 16 bytes; the record's room, 4 elements, moves the
    empty store to the top with twice that: 80 bytes in all, which an
    arena of 32 cannot hold.  The arena's error, at the snapshot, before
    anything is written."""
    module = parse_module(SNAPSHOTS.read_text(), str(SNAPSHOTS))
    kernel, y = EmulatedKernel(module, "kernel"), np.zeros(N)
    with pytest.raises(ExecutionError) as error:
        raise_gpu_error(kernel.check_table, kernel.launch([y, X.copy()], 2, 3, arena=32))
    assert "needs 80 bytes of per-thread arena, has 32 (a stack; launch with a larger arena=) (element 0)" in str(
        error.value
    )
    assert error.value.location == f"{SNAPSHOTS}:33:3"  # anc.snapshot
    assert not y.any()
