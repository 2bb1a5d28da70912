"""Parallel loops (``rev.for parallel``): both engines run them and their
inverses with the same results, against numpy; at the std level
(``scf.parallel``, ``memref.atomic_rmw``) the interpreter and native code
agree too; the builder makes them."""

import numpy as np
import pytest
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, f64

from revmlir.builder import BuildError, ModuleBuilder
from revmlir.errors import ExecutionError
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.parsing import make_context, parse_module
from revmlir.runtime.native import NativeModule

GATHER = """
rev.func @gather(%x: memref<?xf64>, %y: memref<?xf64>, %g: memref<4xf64>, %idx: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xf64>
    %v = rev.take %y[%i] : memref<?xf64>
    %l = math.log %xi : f64
    %s = math.sin %xi : f64
    %p = arith.mulf %l, %s : f64
    %v2 = rev.add %v, %p : f64
    rev.put %v2, %y[%i] : memref<?xf64>
    %j = memref.load %idx[%i] : memref<?xindex>
    %w = rev.take %g[%j] : memref<4xf64>
    %w2 = rev.add %w, %xi : f64
    %w3 = rev.sub %w2, %l : f64
    rev.put %w3, %g[%j] : memref<4xf64>
    rev.yield
  }
  rev.return %n : index
}
"""

rng = np.random.default_rng(19)


def gather_arguments(n: int) -> list:
    return [rng.uniform(0.5, 2.0, n), rng.normal(size=n), rng.normal(size=4), rng.integers(0, 4, n), n]


def copies(values: list) -> list:
    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


def expected_gather(x, y, g, idx, n):
    g = g.copy()
    np.add.at(g, idx, x - np.log(x))
    return y + np.log(x) * np.sin(x), g


@pytest.mark.parametrize("engine", ["interpreter", "native"])
def test_a_parallel_loop_and_its_inverse_run_on_both_engines(engine):
    module = parse_module(GATHER, "gather.mlir")
    program = RevInterpreter(module) if engine == "interpreter" else NativeModule.compile(module)
    args = gather_arguments(37)
    given = copies(args)
    program.call("gather", *args)
    y, g = expected_gather(*given)
    np.testing.assert_allclose(args[1], y, rtol=1e-14)
    np.testing.assert_allclose(args[2], g, rtol=1e-13)
    program.uncall("gather", *args)
    np.testing.assert_allclose(args[1], given[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(args[2], given[2], rtol=1e-12, atol=1e-13)


def test_interpreter_and_native_code_agree_on_a_parallel_loop():
    module = parse_module(GATHER, "gather.mlir")
    args = gather_arguments(50)
    interpreted, native = copies(args), copies(args)
    RevInterpreter(module).call("gather", *interpreted)
    NativeModule.compile(module).call("gather", *native)
    np.testing.assert_array_equal(interpreted[1], native[1])  # private elements: same roundings
    # A shared element gets each borrow's updates summed, then added at once.
    np.testing.assert_allclose(interpreted[2], native[2], rtol=1e-14)


def test_the_std_level_form_runs_on_the_interpreter_as_natively():
    """scf.parallel and memref.atomic_rmw on the interpreter (``call_lowered``)
    give native code's results."""
    module = parse_module(GATHER, "gather.mlir")
    lowered = module.clone()
    RevLowerToStdPass().apply(make_context(), lowered)
    assert "scf.parallel" in str(lowered) and "memref.atomic_rmw addf" in str(lowered)
    args = gather_arguments(23)
    interpreted, native = copies(args), copies(args)
    RevInterpreter(lowered).call_lowered("gather", *interpreted)
    NativeModule.compile(module).call("gather", *native)
    for a, b in zip(interpreted[:3], native[:3]):
        np.testing.assert_array_equal(a, b)


def test_a_shared_element_out_of_bounds_is_the_takes_located_error():
    module = parse_module(GATHER, "gather.mlir")
    args = gather_arguments(5)
    args[3][2] = 4
    for program in (RevInterpreter(module), NativeModule.compile(module)):
        with pytest.raises(
            ExecutionError,
            match=r"gather.mlir:15:5: 'rev.take' in @gather: index 4 is out of bounds for axis 0 with size 4",
        ):
            program.call("gather", *copies(args))


def test_integer_accumulations_count_a_histogram():
    module = parse_module("""
rev.func @histogram(%h: memref<8xi64>, %bins: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %b = memref.load %bins[%i] : memref<?xindex>
    %one = arith.constant 1 : i64
    %e = rev.take %h[%b] : memref<8xi64>
    %e1 = rev.add %e, %one : i64
    rev.put %e1, %h[%b] : memref<8xi64>
    rev.yield
  }
  rev.return %n : index
}
""")
    bins = rng.integers(0, 8, 100)
    for program in (RevInterpreter(module), NativeModule.compile(module)):
        h = np.zeros(8, dtype=np.int64)
        program.call("histogram", h, bins, 100)
        np.testing.assert_array_equal(h, np.bincount(bins, minlength=8))
        program.uncall("histogram", h, bins, 100)
        assert not h.any()


KERNEL = """
rev.func @norm(%acc: f64, %m: memref<3xf64>) {
  %c0 = arith.constant 0 : index
  %a = memref.load %m[%c0] : memref<3xf64>
  %p = arith.mulf %a, %a : f64
  %acc1 = rev.add %acc, %p : f64
  rev.return %acc1 : f64
}

rev.func @kernel(%a: memref<?x3xf64>, %w: memref<3xf64>, %g: memref<3xf64>, %out: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %t = anc.array_alloc() : memref<3xf64>
    rev.for %c0 to %c3 step %c1 : index () {
    ^bb0(%k: index):
      %wk = memref.load %w[%k] : memref<3xf64>
      %aik = rev.take %a[%i, %k] : memref<?x3xf64>
      %aik1 = rev.add %aik, %wk : f64
      rev.put %aik1, %a[%i, %k] : memref<?x3xf64>
      %ai = memref.load %a[%i, %k] : memref<?x3xf64>
      %tk = rev.take %t[%k] : memref<3xf64>
      %tk1 = rev.add %tk, %ai : f64
      rev.put %tk1, %t[%k] : memref<3xf64>
      %gk = rev.take %g[%k] : memref<3xf64>
      %gk1 = rev.sub %gk, %wk : f64
      rev.put %gk1, %g[%k] : memref<3xf64>
      rev.yield
    }
    %o = rev.take %out[%i] : memref<?xf64>
    %o1 = rev.call @norm(%o, %w) : (f64, memref<3xf64>) -> f64
    rev.put %o1, %out[%i] : memref<?xf64>
    rev.for reverse %c0 to %c3 step %c1 : index () {
    ^bb0(%k: index):
      %ai = memref.load %a[%i, %k] : memref<?x3xf64>
      %tk = rev.take %t[%k] : memref<3xf64>
      %tk1 = rev.sub %tk, %ai : f64
      rev.put %tk1, %t[%k] : memref<3xf64>
      rev.yield
    }
    anc.array_free %t() : memref<3xf64>
    rev.yield
  }
  rev.return %n : index
}
"""


@pytest.mark.parametrize("engine", ["interpreter", "native"])
def test_a_kernel_within_the_footprint_rule_runs_against_numpy(engine):
    """Private rows written by a nested sequential loop, a private ancilla
    array, a callee reading a shared array, a shared accumulation."""
    module = parse_module(KERNEL, "kernel.mlir")
    program = RevInterpreter(module) if engine == "interpreter" else NativeModule.compile(module)
    n = 9
    a, w, g, out = rng.normal(size=(n, 3)), rng.normal(size=3), rng.normal(size=3), rng.normal(size=n)
    args = [a.copy(), w.copy(), g.copy(), out.copy(), n]
    program.call("kernel", *args)
    np.testing.assert_allclose(args[0], a + w, rtol=1e-15)
    np.testing.assert_allclose(args[2], g - n * w, rtol=1e-13)
    np.testing.assert_allclose(args[3], out + w[0] ** 2, rtol=1e-15)
    program.uncall("kernel", *args)
    for before, after in zip((a, w, g, out), args):
        np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-14)


vector = MemRefType(f64, [DYNAMIC_INDEX])


def test_the_builder_makes_parallel_loops():
    mb = ModuleBuilder()
    fn = mb.function("scale", [("y", vector), ("x", vector), ("n", IndexType())])
    fn.for_(0, fn["n"], 1, lambda i: fn.add(fn.at("y", i), lambda: fn.load("x", [i]) * 2.0), parallel=True)
    fn.finish()
    module = mb.finish()
    assert "rev.for parallel" in str(module)
    x, y = np.arange(6.0), np.ones(6)
    NativeModule.compile(module).call("scale", y, x, 6)
    np.testing.assert_array_equal(y, 1 + 2 * x)


def test_the_builder_rejects_a_parallel_loop_that_updates_a_variable():
    fn = ModuleBuilder().function("f", [("s", f64), ("n", IndexType())])
    with pytest.raises(BuildError, match="a parallel loop updates 's', defined outside it"):
        fn.for_(0, fn["n"], 1, lambda i: fn.add("s", 1.0), parallel=True)
