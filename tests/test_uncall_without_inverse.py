"""An uncall of a function without an inverse fails where a run reaches it,
on every engine, with the same located error; running one backwards from
Python is the inverter's error on both.

The interpreter inverts a callee when an uncall of it first runs, so it
runs every input that never reaches such an uncall and reports the
inverter's reason, at the uncall, for one that does.  Native code compiles
the module all the same and fails there and only there (docs/design.md,
the decision on uncalls without an inverse); so do GPU kernels, whose
lowering is native code's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from xdsl.context import Context

import revmlir as rv
from gpu_emulation import EmulatedKernel
from revmlir.errors import ExecutionError, InversionError, InvertibilityError, LocatedError
from revmlir.gpu.program import compile_kernels
from revmlir.gpu.runtime import raise_gpu_error
from revmlir.gpu.toolkit import emit_cubin
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime.native import NativeModule

SOURCE = """rev.func @hoard(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  anc.drop %s, %x : !anc.stack<f64>, f64
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}
rev.func @undo_if(%x: f64, %back: i1) {
  %y = rev.if (%x) : f64 pre {
  ^bb0(%a: f64):
    rev.cond %back
  } then {
  ^bb0(%b: f64):
    %c = rev.uncall @hoard(%b) : (f64) -> f64
    rev.yield %c : f64
  } else {
  ^bb0(%d: f64):
    %one = arith.constant 1.0 : f64
    %e = rev.add %d, %one : f64
    rev.yield %e : f64
  }
  rev.return %y, %back : f64, i1
}
rev.func @keep_if(%x: f64, %back: i1) {
  %y = rev.if (%x) : f64 pre {
  ^bb0(%a: f64):
    rev.cond %back
  } then {
  ^bb0(%b: f64):
    %c = rev.call @hoard(%b) : (f64) -> f64
    rev.yield %c : f64
  } else {
  ^bb0(%d: f64):
    rev.yield %d : f64
  }
  rev.return %y, %back : f64, i1
}
rev.func @undo_keep_if(%x: f64, %back: i1) {
  %y, %b = rev.uncall @keep_if(%x, %back) : (f64, i1) -> (f64, i1)
  rev.return %y, %b : f64, i1
}
"""
"""``@hoard`` holds a snapshot: it has no inverse.  ``@undo_if`` uncalls it
in one branch only; ``~@keep_if``, which ``@undo_keep_if`` runs, does too:
it is an uncall in the inverse of a call."""


def line_of(text: str) -> int:
    """The line of ``SOURCE`` that holds ``text``."""
    return next(n for n, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def failure(run: Callable[[], Any]) -> LocatedError:
    with pytest.raises(LocatedError) as raised:
        run()
    return raised.value


def assert_same_failure(native: LocatedError, interpreted: LocatedError) -> None:
    """The same class, message, op, location and function."""
    assert type(native) is type(interpreted) is ExecutionError
    assert vars(native) | {"__notes__": []} == vars(interpreted) | {"__notes__": []}
    assert str(native) == str(interpreted)


def test_a_module_uncalling_a_function_without_inverse_runs_natively_until_the_uncall():
    module = parse_module(SOURCE, "uncall.mlir")
    native, interpreter = NativeModule.compile(module), RevInterpreter(module)
    assert native.call("undo_if", 2.0, False) == interpreter.call("undo_if", 2.0, False) == (3.0, False)
    error = failure(lambda: native.call("undo_if", 2.0, True))
    assert_same_failure(error, failure(lambda: interpreter.call("undo_if", 2.0, True)))
    drop = f"'anc.drop' at uncall.mlir:{line_of('anc.drop')}:3 has no inverse"
    assert str(error) == f"uncall.mlir:{line_of('rev.uncall @hoard')}:5: 'rev.uncall' in @undo_if: {drop}"
    error = failure(lambda: native.call("undo_keep_if", 2.0, True))
    assert_same_failure(error, failure(lambda: interpreter.call("undo_keep_if", 2.0, True)))
    where = f"uncall.mlir:{line_of('rev.call @hoard')}:5"
    assert (error.op_name, error.location, error.function, error.message) == ("rev.uncall", where, "~keep_if", drop)
    assert native.call("undo_keep_if", 2.0, False) == interpreter.call("undo_keep_if", 2.0, False) == (2.0, False)


def test_running_backwards_from_python_follows_the_inverter_on_both_engines():
    """``~@undo_if`` calls ``@hoard`` forward and runs; ``~@keep_if``
    reaches its uncall only where ``%back`` holds; ``~@hoard`` has no
    inverse: the inverter's error on both engines."""
    module = parse_module(SOURCE, "uncall.mlir")
    native, interpreter = NativeModule.compile(module), RevInterpreter(module)
    for name, back in (("undo_if", False), ("undo_if", True), ("keep_if", False)):
        assert native.uncall(name, 3.0, back) == interpreter.uncall(name, 3.0, back)
    error = failure(lambda: native.uncall("keep_if", 2.0, True))
    assert_same_failure(error, failure(lambda: interpreter.uncall("keep_if", 2.0, True)))
    assert error.function == "~keep_if"
    no_inverse = []
    for engine in (native, interpreter):
        with pytest.raises(InversionError) as raised:
            engine.uncall("hoard", 2.0)
        no_inverse.append(str(raised.value))
    assert no_inverse == [f"'anc.drop' at uncall.mlir:{line_of('anc.drop')}:3 has no inverse"] * 2


def axpy(a: float, x: np.ndarray, y: np.ndarray) -> None:
    y += a * x


@rv.primitive(blas="daxpy", python=axpy, updates=["y"])
def daxpy_forward(a: float, x: NDArray[np.float64], y: NDArray[np.float64]) -> None: ...


@rv.reversible
def forward_only(a, x, y):
    daxpy_forward(a, x, y)


def undo_if(a, x, y, back: int):
    if back > 0:
        (~forward_only)(a, x, y)
    else:
        forward_only(a, x, y)


def test_a_python_function_uncalling_one_without_inverse_runs_natively_until_the_uncall():
    """``forward_only`` calls a primitive that declares no inverse rule."""
    native = rv.reversible(undo_if, backend="native")
    interpreted = rv.reversible(undo_if, backend="interpreter")
    results = [f(2.0, np.ones(2), np.ones(2), 0)[2].tolist() for f in (native, interpreted)]
    assert results == [[3.0, 3.0]] * 2
    assert native.specialization_for(2.0, np.ones(2), np.ones(2), 0).backend == "native"
    error = failure(lambda: native(2.0, np.ones(2), np.ones(2), 1))
    assert_same_failure(error, failure(lambda: interpreted(2.0, np.ones(2), np.ones(2), 1)))
    lines = undo_if.__code__.co_firstlineno
    assert error.location == f"{__file__}:{lines + 2}:9"
    assert error.message.endswith(
        "has no inverse: primitive @daxpy_forward updates arrays and declares no inverse rule"
    )


KERNEL = """rev.func @forget(%v: f64) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %v : f64
  anc.free %t1, %zero {rev.forgetful} : f64
  rev.return %v : f64
}
rev.func @bump(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %v = rev.take %y[%i] : memref<?xf64>
    %v1 = rev.if (%v) : f64 pre {
    ^bb0(%p: f64):
      %ten = arith.constant 10.0 : f64
      %big = arith.cmpf ogt, %p, %ten : f64
      rev.cond %big
    } then {
    ^bb0(%q: f64):
      %u = rev.uncall @forget(%q) : (f64) -> f64
      rev.yield %u : f64
    } else {
    ^bb0(%r: f64):
      %one = arith.constant 1.0 : f64
      %s = rev.add %r, %one : f64
      rev.yield %s : f64
    }
    rev.put %v1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}
"""
"""A kernel whose elements above 10 uncall a function without inverse."""

FORGOTTEN = """      %zero = arith.constant 0.0 : f64
      %t = anc.alloc %zero : f64
      anc.free %t, %zero {rev.forgetful} : f64
"""
"""An ancilla freed as forgotten: no inverse, though it holds zero forward
(a snapshot needs a stack, which no kernel has)."""


def test_a_kernel_uncalling_a_function_without_inverse_fails_at_the_element_that_reaches_it():
    """Thread by thread on the CPU: the CPU's results where no element
    reaches the uncall, the CPU's error and the element where one does;
    ptxas accepts the kernel."""
    module = parse_module(KERNEL, "kernel.mlir")
    assert emit_cubin(compile_kernels(module, ["bump"]).ptx)[:4] == b"\x7fELF"
    kernel, interpreter = EmulatedKernel(module, "bump"), RevInterpreter(module)
    y = np.arange(6.0)
    expected = interpreter.call("bump", y.copy(), 6)[0]
    assert not kernel.launch([y, 6], 2, 2).any()
    assert y.tolist() == expected.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    y[4] = 11.0
    cpu = failure(lambda: interpreter.call("bump", y.copy(), 6))
    with pytest.raises(ExecutionError) as gpu:
        raise_gpu_error(kernel.check_table, kernel.launch([y, 6], 2, 2))
    assert str(gpu.value) == f"{cpu} (element 4)"
    assert "'rev.uncall' in @bump: 'anc.free' at kernel.mlir:5:3 forgets the value it frees" in str(cpu)


@pytest.mark.parametrize(
    "backward",
    [
        "%u = rev.inv (%q) : f64 {\n    ^bb0(%w: f64):\n" + FORGOTTEN + "      rev.yield %w : f64\n    }",
        "%u = rev.routine (%q) : f64 compute {\n    ^bb0(%w: f64):\n" + FORGOTTEN + "      rev.yield %w : f64\n"
        "    } do {\n    ^bb0(%w: f64):\n      rev.yield %w : f64\n    }",
    ],
    ids=["inv", "routine"],
)
def test_a_kernel_running_a_region_without_inverse_fails_at_the_element_that_reaches_it(backward: str):
    """As an uncall of a function without an inverse: the CPU's results
    where no element reaches the construct, the CPU's error and the element
    where one does; ptxas accepts the kernel."""
    module = parse_module(KERNEL.replace("%u = rev.uncall @forget(%q) : (f64) -> f64", backward), "kernel.mlir")
    assert emit_cubin(compile_kernels(module, ["bump"]).ptx)[:4] == b"\x7fELF"
    kernel, interpreter = EmulatedKernel(module, "bump"), RevInterpreter(module)
    y = np.arange(6.0)
    assert not kernel.launch([y, 6], 2, 2).any()
    assert y.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    y[4] = 11.0
    cpu = failure(lambda: interpreter.call("bump", y.copy(), 6))
    with pytest.raises(ExecutionError) as gpu:
        raise_gpu_error(kernel.check_table, kernel.launch([y, 6], 2, 2))
    assert str(gpu.value) == f"{cpu} (element 4)"
    assert cpu.location == "kernel.mlir:21:7"
    assert cpu.message.startswith("'anc.free' at kernel.mlir:25:7 forgets the value it frees")


REGIONS = """rev.func @inv_if(%x: f64, %back: i1) {
  %y = rev.if (%x) : f64 pre {
  ^bb0(%a: f64):
    rev.cond %back
  } then {
  ^bb0(%b: f64):
    %c = rev.inv (%b) : f64 {
    ^bb0(%q: f64):
      %s = anc.stack_alloc : !anc.stack<f64>
      anc.snapshot %s, %q : !anc.stack<f64>, f64
      anc.drop %s, %q : !anc.stack<f64>, f64
      anc.stack_free %s : !anc.stack<f64>
      rev.yield %q : f64
    }
    rev.yield %c : f64
  } else {
  ^bb0(%d: f64):
    rev.yield %d : f64
  }
  rev.return %y, %back : f64, i1
}
rev.func @routine(%x: f64, %y: f64) {
  %x1, %y1 = rev.routine (%x, %y) : f64, f64 compute {
  ^bb0(%cx: f64, %cy: f64):
    %s = anc.stack_alloc : !anc.stack<f64>
    anc.snapshot %s, %cx : !anc.stack<f64>, f64
    anc.drop %s, %cx : !anc.stack<f64>, f64
    anc.stack_free %s : !anc.stack<f64>
    rev.yield %cx, %cy : f64, f64
  } do {
  ^bb0(%dx: f64, %dy: f64):
    %zero = arith.constant 0.0 : f64
    %t = anc.alloc %zero : f64
    %t1 = rev.add %t, %dx : f64
    anc.free %t1, %zero : f64
    rev.yield %dx, %dy : f64, f64
  }
  rev.return %x1, %y1 : f64, f64
}
"""
"""A ``rev.inv`` whose body holds a snapshot, in one branch only, and a
routine whose compute does: neither region has an inverse, which the
interpreter finds where a run reaches it (a routine's after its compute
and body ran)."""


def test_a_region_without_inverse_runs_natively_until_a_run_reaches_it():
    module = parse_module(REGIONS, "regions.mlir")
    native, interpreter = NativeModule.compile(module), RevInterpreter(module)
    assert native.call("inv_if", 2.0, False) == interpreter.call("inv_if", 2.0, False) == (2.0, False)
    error = failure(lambda: native.call("inv_if", 2.0, True))
    assert_same_failure(error, failure(lambda: interpreter.call("inv_if", 2.0, True)))
    assert str(error) == "regions.mlir:7:5: 'rev.inv' in @inv_if: 'anc.drop' at regions.mlir:11:7 has no inverse"
    error = failure(lambda: native.call("routine", 0.0, 3.0))
    assert_same_failure(error, failure(lambda: interpreter.call("routine", 0.0, 3.0)))
    assert str(error) == "regions.mlir:23:3: 'rev.routine' in @routine: 'anc.drop' at regions.mlir:27:5 has no inverse"
    # the body runs before the uncompute: its own error comes first
    error = failure(lambda: native.call("routine", 1.0, 3.0))
    assert type(error) is InvertibilityError
    assert vars(error) | {"__notes__": []} == vars(failure(lambda: interpreter.call("routine", 1.0, 3.0))) | {
        "__notes__": []
    }
    assert error.op_name == "anc.free"


REGION_ARRAYS = """rev.func @routine_arrays(%y: memref<2xf64>, %x: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x1 = rev.routine (%x) : f64 compute {
  ^bb0(%cx: f64):
    %v = rev.take %y[%c0] : memref<2xf64>
    %v1 = rev.add %v, %cx : f64
    rev.put %v1, %y[%c0] : memref<2xf64>
    %s = anc.stack_alloc : !anc.stack<f64>
    anc.snapshot %s, %cx : !anc.stack<f64>, f64
    anc.drop %s, %cx : !anc.stack<f64>, f64
    anc.stack_free %s : !anc.stack<f64>
    rev.yield %cx : f64
  } do {
  ^bb0(%dx: f64):
    %w = rev.take %y[%c1] : memref<2xf64>
    %w1 = rev.add %w, %dx : f64
    rev.put %w1, %y[%c1] : memref<2xf64>
    rev.yield %dx : f64
  }
  rev.return %x1 : f64
}
"""
"""A routine whose compute adds ``%x`` to ``y[0]`` and has no inverse;
its body adds ``%x`` to ``y[1]``."""


def test_a_routine_without_inverse_leaves_its_compute_and_body_in_the_callers_arrays():
    """The run fails where the uncompute starts, after compute and body
    wrote the caller's array: both engines leave it so."""
    module = parse_module(REGION_ARRAYS, "arrays.mlir")
    errors: list[LocatedError] = []
    for engine in (NativeModule.compile(module), RevInterpreter(module)):
        y = np.ones(2)
        errors.append(failure(lambda engine=engine, y=y: engine.call("routine_arrays", y, 2.0)))
        assert y.tolist() == [3.0, 3.0]
    assert_same_failure(*errors)
    assert str(errors[0]) == (
        "arrays.mlir:4:3: 'rev.routine' in @routine_arrays: 'anc.drop' at arrays.mlir:11:5 has no inverse"
    )


def routine_if(a, x, y, back: int):
    if back > 0:
        with rv.routine() as r:
            daxpy_forward(a, x, y)
        ~r


def test_a_python_routine_whose_compute_has_no_inverse_runs_natively_until_the_routine():
    """``~r`` runs a compute block backwards that invokes a primitive
    without an inverse rule: the message names the primitive as the
    program does, on both engines."""
    native = rv.reversible(routine_if, backend="native")
    interpreted = rv.reversible(routine_if, backend="interpreter")
    results = [f(2.0, np.ones(2), np.ones(2), 0)[2].tolist() for f in (native, interpreted)]
    assert results == [[1.0, 1.0]] * 2
    assert native.specialization_for(2.0, np.ones(2), np.ones(2), 0).backend == "native"
    error = failure(lambda: native(2.0, np.ones(2), np.ones(2), 1))
    assert_same_failure(error, failure(lambda: interpreted(2.0, np.ones(2), np.ones(2), 1)))
    lines = routine_if.__code__.co_firstlineno
    assert (error.op_name, error.location) == ("rev.routine", f"{__file__}:{lines + 2}:9")
    assert error.message.endswith("primitive @daxpy_forward updates arrays and declares no inverse rule")


def undone_routine(a, x, y, s: float):
    with rv.routine() as r:
        daxpy_forward(a, x, y)
    ~r
    s += a


def test_the_gradient_of_a_routine_whose_compute_has_no_inverse_is_refused_at_the_routine():
    """Derived code runs the compute backwards whatever the input: the
    refusal names the routine, then the inverter's reason."""
    with pytest.raises(InversionError) as raised:
        rv.gradient(rv.reversible(undone_routine), (2.0, np.ones(2), np.ones(2), 0.0), iloss=3)
    lines = undone_routine.__code__.co_firstlineno
    assert str(raised.value) == (
        f"'rev.routine' at {__file__}:{lines + 1}:5: its backward region has no inverse: "
        f"'rev.invoke' at {__file__}:{lines + 2}:9 has no inverse: "
        "primitive @daxpy_forward updates arrays and declares no inverse rule"
    )


@pytest.mark.parametrize("in_place", [True, False])
def test_rev_invert_refusing_a_named_function_leaves_the_module_as_it_was(in_place: bool):
    """``@caller`` is inverted before ``@forget`` is refused: nothing of it
    is kept (in place, ``@caller`` would be ``~caller`` while ``@user``
    still calls it)."""
    source = KERNEL.split("rev.func @bump")[0] + (
        "rev.func @caller(%x: f64) {\n  %y = rev.call @forget(%x) : (f64) -> f64\n  rev.return %y : f64\n}\n"
        "rev.func @user(%x: f64) {\n  %y = rev.call @caller(%x) : (f64) -> f64\n  rev.return %y : f64\n}\n"
    )
    module = parse_module(source, "named.mlir")
    before = str(module)
    refusing = RevInvertPass(in_place=in_place, where_possible=True, functions=("caller", "forget"))
    with pytest.raises(InversionError, match="'anc.free' at named.mlir:5:3 forgets the value it frees"):
        refusing.apply(Context(), module)
    assert str(module) == before
    RevInvertPass(in_place=in_place, where_possible=True, functions=("caller",)).apply(Context(), module)
    assert "rev.uncall @forget(%x)" in str(module)  # ~caller, which the refusal did not keep
