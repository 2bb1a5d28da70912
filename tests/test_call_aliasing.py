"""One array passed for two parameters of a call (rule ``call``, decision
163): the calls the verifier accepts run alike on both engines, derived
code among them, and the analysis it asks is computed once per
verification, not once per call."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context

import revmlir.semantics
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module, verify_module
from revmlir.passes.adjoint import AdAdjointPass
from revmlir.runtime.native import NativeModule
from revmlir.tools import rev_opt

READ_TWICE = """
rev.func @dot(%y: f64, %p: memref<?xf64>, %q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.load %p[%c0] : memref<?xf64>
  %b = memref.load %q[%c1] : memref<?xf64>
  %c = memref.load %p[%c1] : memref<?xf64>
  %m = arith.mulf %a, %b : f64
  %m2 = arith.mulf %m, %c : f64
  %y1 = rev.add %y, %m2 : f64
  rev.return %y1 : f64
}
rev.func @f(%y: f64, %x: memref<?xf64>) {
  %y1 = rev.call @dot(%y, %x, %x) : (f64, memref<?xf64>, memref<?xf64>) -> f64
  rev.return %y1 : f64
}
"""

ACCUMULATE_TWICE = """
rev.func @bump(%p: memref<?xf64>, %q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %e = rev.take %p[%c0] : memref<?xf64>
  %e1 = rev.add %e, %one : f64
  rev.put %e1, %p[%c0] : memref<?xf64>
  %f = rev.take %q[%c0] : memref<?xf64>
  %twice = arith.mulf %two, %one : f64
  %f1 = rev.add %f, %twice : f64
  rev.put %f1, %q[%c0] : memref<?xf64>
  rev.return
}
rev.func @f(%x: memref<?xf64>) {
  rev.call @bump(%x, %x) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}
"""


def both(text: str, name: str, *args: Any, inverse: bool = False) -> tuple[Any, Any]:
    """``name`` run (or uncalled) on the interpreter and natively."""
    module = parse_module(text)
    engines = (RevInterpreter(module), NativeModule.compile(module))
    return tuple(  # type: ignore[return-value]
        (engine.uncall if inverse else engine.call)(name, *copy.deepcopy(args)) for engine in engines
    )


def test_a_callee_reading_one_array_twice_runs_alike():
    interpreted, native = both(READ_TWICE, "f", 0.0, np.array([2.0, 3.0]))
    assert interpreted[0] == native[0] == 2.0 * 3.0 * 3.0


@pytest.mark.parametrize("inverse", [False, True])
def test_a_callee_accumulating_into_one_array_twice_by_adjacent_borrows_runs_alike(inverse: bool):
    interpreted, native = both(ACCUMULATE_TWICE, "f", np.array([10.0]), inverse=inverse)
    expected = 7.0 if inverse else 13.0
    assert interpreted[0].tolist() == native[0].tolist() == [expected]


def test_the_adjoint_of_a_call_reading_one_array_twice_verifies_and_runs_alike():
    """``@dot.adj`` accumulates into the one gradient array through both of
    its gradient parameters, by adjacent take/add/put."""
    module = parse_module(READ_TWICE)
    AdAdjointPass(functions=("f",)).apply(Context(), module)
    verify_module(module)
    x = np.array([2.0, 3.0])
    engines = (RevInterpreter(module), NativeModule.compile(module))
    results = [engine.call("f.adj", 0.0, x.copy(), 1.0, np.zeros(2)) for engine in engines]
    for result in results:
        # d(x0 x1²) = (x1², 2 x0 x1)
        assert result[3].tolist() == [9.0, 12.0]


def aliased_calls(functions: int) -> str:
    """A module of ``functions`` functions, each calling ``@dot`` with one
    array twice."""
    head, _, _ = READ_TWICE.partition("rev.func @f")
    calls = "".join(
        f"rev.func @f{i}(%y: f64, %x: memref<?xf64>) {{\n"
        f"  %y1 = rev.call @dot(%y, %x, %x) : (f64, memref<?xf64>, memref<?xf64>) -> f64\n"
        f"  rev.return %y1 : f64\n}}\n"
        for i in range(functions)
    )
    return head + calls


def test_a_pipeline_computes_the_writes_of_a_module_once_per_verification(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys: pytest.CaptureFixture[str]
):
    """Each function holding a call that passes one array twice asks the
    module's ``argument_writes``; the verification between passes keeps the
    answer, so a pipeline's count does not grow with the functions."""
    computed = 0
    question = revmlir.semantics._argument_writes

    def counted(module: Any) -> Any:
        nonlocal computed
        computed += 1
        return question(module)

    monkeypatch.setattr(revmlir.semantics, "_argument_writes", counted)
    counts = []
    for functions in (2, 12):
        path = tmp_path / f"m{functions}.mlir"
        path.write_text(aliased_calls(functions))
        computed = 0
        assert rev_opt.main([str(path), "-p", "rev-strip-checks,rev-invert"]) == 0
        counts.append(computed)
    capsys.readouterr()
    assert counts[0] == counts[1]
