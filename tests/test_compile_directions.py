"""A call compiles the direction it runs: a forward call no inverse, the
first backward call the inverses, once, beside the forward code, and each
direction runs natively where it compiles (docs/design.md, "A call compiles
the direction it runs")."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

import revmlir as rv
from revmlir.errors import InversionError
from revmlir.naming import INVERSE_SUFFIX, inverse_name
from revmlir.parsing import parse_module
from revmlir.runtime import native
from revmlir.runtime.native import Direction, LLVMModule, NativeModule
from revmlir.tools import rev_run
from test_adjoint_inverse import ANCILLA, adjoint_module
from test_native_cache import EXAMPLES
from test_uncall_without_inverse import SOURCE, assert_same_failure, failure

Compiles = list[tuple[Direction, set[str]]]


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> Compiles:
    """Each native compile: its direction and the functions it compiles,
    with an entry point or as a private copy (none where it fails)."""
    found: Compiles = []
    lower = native.lower_to_llvm_ir

    def counted(
        module: ModuleOp,
        tolerance: float | None = None,
        direction: Direction = Direction.BOTH,
        beside: LLVMModule | None = None,
    ) -> LLVMModule:
        held: set[str] = set()
        found.append((direction, held))  # a compile that fails counts too
        lowered = lower(module, tolerance, direction, beside)
        held.update(lowered.writes, lowered.copies)
        return lowered

    monkeypatch.setattr(native, "lower_to_llvm_ir", counted)
    return found


def functions(compiled: set[str]) -> set[str]:
    """The compiled functions that are the program's (not the runtime's)."""
    return {name for name in compiled if not name.startswith("revmlir.")}


def scaled_sum(backend: str) -> rv.ReversibleFunction:
    @rv.reversible(backend=backend)
    def add_scaled(y, x):
        y += 2.0 * x

    @rv.reversible(backend=backend)
    def scaled_sum(y, v):
        for i in range(len(v)):
            add_scaled(y, v[i])
            v[i] += y

    return scaled_sum


def test_a_forward_call_compiles_no_inverse_and_the_first_backward_call_compiles_them_once(compiles: Compiles):
    f, reference = scaled_sum("native"), scaled_sum("interpreter")
    v = np.array([1.0, -2.0, 0.5])
    y, w = f(0.25, v.copy())
    assert (y, list(w)) == (reference(0.25, v.copy())[0], list(reference(0.25, v.copy())[1]))
    ((direction, forward),) = compiles
    assert direction is Direction.FORWARD and len(functions(forward)) == 2
    assert not any(name.endswith(INVERSE_SUFFIX) for name in forward)

    back_y, back_v = (~f)(y, w.copy())
    expected_y, expected_v = (~reference)(y, w.copy())
    assert back_y == expected_y and list(back_v) == list(expected_v)
    assert back_y == pytest.approx(0.25) and list(back_v) == pytest.approx(list(v))  # f then ~f restores
    direction, backward = compiles[1]
    assert direction is Direction.BACKWARD
    assert functions(backward) == {inverse_name(name) for name in functions(forward)}

    f(0.25, v.copy())
    (~f)(y, w.copy())
    assert len(compiles) == 2  # each direction once, the forward code kept
    spec = f.specialization_for(0.25, v)
    assert spec.native is not None and spec.backward is spec.native and spec.native.rest.direction is Direction.BACKWARD


def test_a_backward_call_first_compiles_only_the_inverses(compiles: Compiles):
    f = scaled_sum("native")
    y, v = scaled_sum("interpreter")(0.25, np.array([1.5, 3.0]))
    back_y, back_v = (~f)(y, v)
    assert back_y == pytest.approx(0.25) and list(back_v) == pytest.approx([1.5, 3.0])
    ((direction, backward),) = compiles
    assert direction is Direction.BACKWARD and all(name.endswith(INVERSE_SUFFIX) for name in functions(backward))
    assert f(back_y, back_v)[0] == pytest.approx(y)
    assert [d for d, _ in compiles] == [Direction.BACKWARD, Direction.FORWARD]


def test_an_uncall_in_forward_code_compiles_its_inverse_with_it(compiles: Compiles):
    """Forward code that runs a function backwards holds that inverse: an
    uncall of it needs no second compile; of another function, one."""
    compiled = NativeModule.compile(parse_module(SOURCE, "uncall.mlir"))
    ((_, forward),) = compiles
    assert "keep_if.inv" in forward and "undo_if.inv" not in forward  # @undo_keep_if uncalls @keep_if
    assert compiled.uncall("keep_if", 2.0, False) == (2.0, False)
    assert len(compiles) == 1
    assert compiled.uncall("undo_if", 3.0, False) == (2.0, False)
    assert compiled.uncall("undo_if", 4.0, False) == (3.0, False)
    assert [d for d, _ in compiles] == [Direction.FORWARD, Direction.BACKWARD]


def test_the_native_module_compiles_the_other_direction_at_its_first_call(compiles: Compiles):
    module = parse_module((EXAMPLES / "multiplier.mlir").read_text())
    backward = NativeModule.compile(module, direction=Direction.BACKWARD)
    assert functions(compiles[0][1]) == {"multiplier.inv"}
    assert backward.uncall("multiplier", 17, 3, 5) == (2, 3, 5)
    assert len(compiles) == 1
    assert backward.call("multiplier", 2, 3, 5) == (17, 3, 5)
    assert [(d, functions(names)) for d, names in compiles[1:]] == [(Direction.FORWARD, {"multiplier"})]
    both = NativeModule.compile(module, direction=Direction.BOTH)
    assert both.uncall("multiplier", *both.call("multiplier", 2, 3, 5)) == (2.0, 3.0, 5.0)
    assert functions(compiles[2][1]) == {"multiplier", "multiplier.inv"} and len(compiles) == 3


def test_uncalling_a_function_without_an_inverse_compiles_nothing(compiles: Compiles):
    module = adjoint_module(ANCILLA)
    compiled = NativeModule.compile(module)
    after = compiled.call("f.adj", 3.0, 2.0, 6.0, 0.0)
    with pytest.raises(InversionError, match=r"^'anc.free' at adjoint.mlir:3:\d+ forgets the value it frees"):
        compiled.uncall("f.adj", *after)
    assert [d for d, _ in compiles] == [Direction.FORWARD]
    assert compiled.uncall("f", *compiled.call("f", 3.0, 2.0)) == (3.0, 2.0)  # its other functions have one


def forgets(backend: str) -> rv.ReversibleFunction:
    @rv.reversible(backend=backend)
    def shifted(y, x):
        t = rv.ancilla(0.0)
        t += x
        y += t
        t -= x
        rv.free(t)

    @rv.reversible(backend=backend)
    def forgets(y, x, g_y, g_x):
        rv.adjoint(shifted)(y, x, g_y, g_x)

    return forgets


def test_the_inverse_of_a_function_uncalling_one_without_an_inverse_fails_at_that_uncall_as_interpreted(
    compiles: Compiles,
):
    """``~forgets`` uncalls ``shifted.adj``, which has no inverse
    (decision 89): it compiles, once, and fails at that uncall as the
    interpreter does."""
    f, reference = forgets("native"), forgets("interpreter")
    after = f(3.0, 2.0, 6.0, 0.0)
    assert after == reference(3.0, 2.0, 6.0, 0.0) == (1.0, 2.0, 6.0, 6.0)
    for _ in range(2):  # every call, not only the first
        error = failure(lambda: (~f)(*after))
        assert_same_failure(error, failure(lambda: (~reference)(*after)))
        assert (error.op_name, error.function) == ("rev.uncall", "~forgets")
        assert "'anc.free' at " in error.message and "forgets the value it frees" in error.message
    assert [d for d, _ in compiles] == [Direction.FORWARD, Direction.BACKWARD]


def prints_backwards(backend: str) -> rv.ReversibleFunction:
    @rv.reversible(backend=backend)
    def prints_backwards(x, v):
        x += 1.0
        with rv.safe(when="inverse"):
            print(v)  # a whole array: numpy formats it, on the interpreter

    return prints_backwards


def test_a_function_whose_inverse_native_code_cannot_run_runs_forward_natively(capsys: pytest.CaptureFixture[str]):
    f = prints_backwards("auto")
    v = np.array([1.0, 2.0])
    with pytest.warns(rv.InterpreterFallbackWarning) as record:
        assert f(1.0, v)[0] == 2.0
        assert f.specialization_for(1.0, v).backend == "native"
        assert capsys.readouterr().out == ""
        assert not record
        assert (~f)(2.0, v)[0] == 1.0
    (warning,) = record
    assert str(warning.message).startswith("the inverse of prints_backwards runs on the interpreter")
    assert "'printf.print_format' at " in str(warning.message) and warning.filename == __file__
    assert capsys.readouterr().out == "[1. 2.]\n"
    assert (~f)(2.0, v)[0] == 1.0  # decided once: no second warning


def test_the_native_backend_refuses_only_the_direction_it_cannot_compile():
    f = prints_backwards("native")
    assert f(1.0, np.zeros(2))[0] == 2.0
    with pytest.raises(
        rv.NativeCompilationError,
        match=r"the inverse of prints_backwards cannot run natively: .*cannot print a memref<.xf64> in native code",
    ):
        (~f)(2.0, np.zeros(2))


def prints_forwards(backend: str) -> rv.ReversibleFunction:
    @rv.reversible(backend=backend)
    def prints_forwards(x, v):
        x += 1.0
        with rv.safe():
            print(v)

    return prints_forwards


def test_a_function_whose_forward_code_native_code_cannot_run_runs_backwards_natively(
    capsys: pytest.CaptureFixture[str],
):
    f, v = prints_forwards("auto"), np.array([3.0])
    with pytest.warns(rv.InterpreterFallbackWarning, match="prints_forwards runs on the interpreter"):
        assert f(1.0, v)[0] == 2.0
    assert capsys.readouterr().out == "[3.]\n"
    assert (~f)(2.0, v)[0] == 1.0
    assert isinstance(f.specialization_for(2.0, v).backward, NativeModule)
    native = prints_forwards("native")
    assert (~native)(2.0, v)[0] == 1.0
    with pytest.raises(rv.NativeCompilationError, match="prints_forwards cannot run natively"):
        native(1.0, v)


@pytest.mark.parametrize("inverse", [False, True])
def test_rev_run_compiles_the_direction_it_runs(inverse: bool, compiles: Compiles, capsys: pytest.CaptureFixture[str]):
    arguments = ["17", "3", "5"] if inverse else ["2", "3", "5"]
    options = ["--inverse"] if inverse else []
    path = str(EXAMPLES / "multiplier.mlir")
    assert rev_run.main([path, "-e", "multiplier", *options, "--args", *arguments]) == 0
    assert capsys.readouterr().out.split()[0] == ("2" if inverse else "17")
    ((direction, compiled),) = compiles
    assert direction is (Direction.BACKWARD if inverse else Direction.FORWARD)
    assert functions(compiled) == {"multiplier.inv" if inverse else "multiplier"}


PRINTS_BACKWARDS = (
    SOURCE[: SOURCE.index("rev.func @undo_if")]
    + """rev.func @shows(%x: f64, %v: memref<?xf64>) {
  rev.safe inverse {
    printf.print_format "{}", %v : memref<?xf64>
  }
  rev.return %x : f64
}
"""
)
"""``@hoard`` (``SOURCE``'s) has no inverse; the inverse of ``@shows``
prints an array, which native code cannot."""


def test_a_direction_that_does_not_compile_fails_as_compiled_alone_once(compiles: Compiles):
    module = parse_module(PRINTS_BACKWARDS, "prints.mlir")
    with pytest.raises(PassFailedException) as alone:
        NativeModule.compile(module, direction=Direction.BACKWARD)
    compiled = NativeModule.compile(module)
    for _ in range(3):
        with pytest.raises(PassFailedException) as raised:
            compiled.uncall("shows", 1.0, np.ones(2))
        assert type(raised.value) is type(alone.value) and str(raised.value) == str(alone.value)
        assert "cannot print a memref<?xf64> in native code" in str(raised.value)
    assert [d for d, _ in compiles] == [Direction.BACKWARD, Direction.FORWARD, Direction.BACKWARD]


def test_the_native_backend_compiles_an_inverse_that_does_not_compile_once(compiles: Compiles):
    f = prints_backwards("native")
    for _ in range(2):
        with pytest.raises(rv.NativeCompilationError, match="the inverse of prints_backwards cannot run natively"):
            (~f)(2.0, np.zeros(2))
    assert [d for d, _ in compiles] == [Direction.BACKWARD]


def test_rev_run_compiles_only_what_its_entry_reaches(
    tmp_path: Path, compiles: Compiles, capsys: pytest.CaptureFixture[str]
):
    """An unrelated function whose inverse native code cannot compile
    changes nothing: each backend reports the entry's own error."""
    path = tmp_path / "prints.mlir"
    path.write_text(PRINTS_BACKWARDS)
    errors = []
    for backend in ("native", "interpreter"):
        assert rev_run.main([str(path), "-e", "hoard", "--inverse", "--backend", backend, "--args", "1.0"]) == 1
        errors.append(capsys.readouterr().err)
    assert errors[0] == errors[1] and "'anc.drop' at " in errors[0] and "has no inverse" in errors[0]
    assert not compiles  # refused before compiling
    assert rev_run.main([str(path), "-e", "hoard", "--args", "1.0"]) == 0
    assert capsys.readouterr().out == "1.0 : f64\n"
    ((direction, compiled),) = compiles
    assert direction is Direction.FORWARD and functions(compiled) == {"hoard"}


@pytest.mark.parametrize("through", ["specialization", "module"])
def test_concurrent_first_calls_compile_each_direction_once(through: str, compiles: Compiles):
    """ctypes releases the GIL: calls from several threads may all find a
    direction uncompiled; one of them compiles it.  (The specialization is
    built first: building one is not what this tests.)"""
    f = scaled_sum("native")
    f.specialization_for(1.0, np.ones(3))
    module = parse_module((EXAMPLES / "multiplier.mlir").read_text())
    compiled = NativeModule.compile(module) if through == "module" else None
    start = threading.Barrier(6)
    results: list[Any] = []

    def run(k: int) -> None:
        start.wait()
        if compiled is not None:
            results.append(compiled.uncall("multiplier", 17, 3, 5))
        else:
            results.append((f if k % 2 else ~f)(1.0, np.ones(3))[0])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 6
    assert sorted(d.value for d, _ in compiles) == ["backward", "forward"]
