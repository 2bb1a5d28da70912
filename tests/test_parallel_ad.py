"""Derivatives of parallel loops: the adjoint turns shared reads into shared
accumulations, the gradients of outer scalars into shared sums, and keeps the
loop parallel.  The gradients equal those of the same function with a plain
loop and JAX's, on both engines; the tangent, Jacobian, Hessian and inverse
modes keep the loop parallel too."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.adjoint import AdAdjointPass
from revmlir.passes.inverse_modes import AdInverseAdjointPass, AdInverseTangentPass
from revmlir.passes.tangent import AdHessianPass, AdJacobianPass, AdTangentPass
from revmlir.passes.verify import RevVerifyPass
from revmlir.runtime.native import NativeModule

jax.config.update("jax_enable_x64", True)

# y[i] += log(x[i]) * sin(x[i]);  g[i] += a * x[idx[i]]  (a gather: x[idx[i]]
# is a shared read, its gradient a shared accumulation; a is an outer scalar).
KERNEL = """
rev.func @k(%x: memref<?xf64>, %y: memref<?xf64>, %idx: memref<?xindex>, %g: memref<?xf64>, %a: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for MODE %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xf64>
    %l = math.log %xi : f64
    %s = math.sin %xi : f64
    %p = arith.mulf %l, %s : f64
    %v = rev.take %y[%i] : memref<?xf64>
    %v1 = rev.add %v, %p : f64
    rev.put %v1, %y[%i] : memref<?xf64>
    %j = memref.load %idx[%i] : memref<?xindex>
    %xj = memref.load %x[%j] : memref<?xf64>
    %q = arith.mulf %xj, %a : f64
    %w = rev.take %g[%i] : memref<?xf64>
    %w1 = rev.add %w, %q : f64
    rev.put %w1, %g[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %a, %n : f64, index
}
"""

rng = np.random.default_rng(5)
N = 12


def kernel(parallel: bool):
    module = parse_module(KERNEL.replace("MODE", "parallel" if parallel else ""), "kernel.mlir")
    AdAdjointPass(functions=("k",)).apply(make_context(), module)
    RevVerifyPass().apply(make_context(), module)
    return module


def inputs():
    return rng.uniform(0.5, 2.0, N), rng.normal(size=N), rng.integers(0, N, N), rng.normal(size=N), 0.7


def jax_vjp(x, y, idx, g, a, y_bar, g_bar):
    def f(x, y, g, a):
        return y + jnp.log(x) * jnp.sin(x), g + a * x[idx]

    _, pullback = jax.vjp(f, x, y, g, a)
    return pullback((y_bar, g_bar))


def gradient(program, x, y, idx, g, a, y_bar, g_bar):
    """Run the kernel forward, then its adjoint seeded with the cotangents."""
    x, y, g = x.copy(), y.copy(), g.copy()
    program.call("k", x, y, idx, g, a, N)
    g_x, g_y, g_g = np.zeros(N), y_bar.copy(), g_bar.copy()
    *_, g_a = program.call("k.adj", x, y, idx, g, a, N, g_x, g_y, g_g, 0.0)
    return g_x, g_y, g_g, g_a


def test_the_adjoint_keeps_the_loop_parallel_and_accumulates_shared_reads():
    text = str(kernel(True))
    adjoint = text[text.index("@k.adj") :]
    assert "rev.for parallel reverse" in adjoint
    assert "%g_a_sum = anc.array_alloc() : memref<1xf64>" in adjoint  # the outer scalar's gradient


@pytest.mark.parametrize("engine", ["interpreter", "native"])
def test_parallel_gradients_equal_the_plain_loops_and_jax(engine):
    x, y, idx, g, a = inputs()
    y_bar, g_bar = rng.normal(size=N), rng.normal(size=N)
    found = {}
    for parallel in (True, False):
        module = kernel(parallel)
        program = RevInterpreter(module) if engine == "interpreter" else NativeModule.compile(module)
        found[parallel] = gradient(program, x, y, idx, g, a, y_bar, g_bar)
    want_x, want_y, want_g, want_a = jax_vjp(x, y, idx, g, a, y_bar, g_bar)
    for got in found.values():
        np.testing.assert_allclose(got[0], want_x, rtol=1e-12)
        np.testing.assert_allclose(got[1], want_y, rtol=1e-15)
        np.testing.assert_allclose(got[2], want_g, rtol=1e-15)
        np.testing.assert_allclose(got[3], want_a, rtol=1e-12)
    for p, s in zip(found[True], found[False]):
        np.testing.assert_allclose(p, s, rtol=1e-13)


def test_interpreter_and_native_adjoints_agree():
    module = kernel(True)
    x, y, idx, g, a = inputs()
    y_bar, g_bar = rng.normal(size=N), rng.normal(size=N)
    interpreted = gradient(RevInterpreter(module), x, y, idx, g, a, y_bar, g_bar)
    native = gradient(NativeModule.compile(module), x, y, idx, g, a, y_bar, g_bar)
    for i, n in zip(interpreted, native):
        np.testing.assert_allclose(n, i, rtol=1e-14)


def _function(text: str, name: str) -> str:
    start = text.index(f"rev.func {name}(")
    end = text.find("rev.func @", start + 1)
    return text[start:] if end < 0 else text[start:end]


@pytest.mark.parametrize(
    "apply, derived, differentiated",
    [
        (AdTangentPass, "@k.tan", "@k.tan"),
        (AdJacobianPass, "@k.jacobian", "@k.tan"),  # the Jacobian runs the tangent per column
        (AdHessianPass, "@k.adj.tan", "@k.adj.tan"),
        (AdInverseTangentPass, "@k.itan", "@k.itan"),
        (AdInverseAdjointPass, "@k.iadj", "@k.iadj"),
    ],
)
def test_every_mode_keeps_the_loop_parallel(apply, derived, differentiated):
    module = parse_module(KERNEL.replace("MODE", "parallel"), "kernel.mlir")
    apply(functions=("k",)).apply(make_context(), module)
    RevVerifyPass().apply(make_context(), module)
    text = str(module)
    assert f"rev.func {derived}(" in text
    assert "rev.for parallel" in _function(text, differentiated)
    NativeModule.compile(module)  # lowers and compiles


@pytest.mark.parametrize("engine", ["interpreter", "native"])
def test_the_parallel_tangent_equals_jax(engine):
    module = parse_module(KERNEL.replace("MODE", "parallel"), "kernel.mlir")
    AdTangentPass(functions=("k",)).apply(make_context(), module)
    program = RevInterpreter(module) if engine == "interpreter" else NativeModule.compile(module)
    x, y, idx, g, a = inputs()
    dx, dy, dg, da = rng.normal(size=N), rng.normal(size=N), rng.normal(size=N), 0.3
    args = [x.copy(), y.copy(), idx, g.copy(), a, N, dx.copy(), dy.copy(), dg.copy(), da]
    program.call("k.tan", *args)

    def f(x, y, g, a):
        return y + jnp.log(x) * jnp.sin(x), g + a * x[idx]

    (out_y, out_g), (dot_y, dot_g) = jax.jvp(f, (x, y, g, a), (dx, dy, dg, da))
    np.testing.assert_allclose(args[1], out_y, rtol=1e-14)
    np.testing.assert_allclose(args[3], out_g, rtol=1e-14)
    np.testing.assert_allclose(args[7], dot_y, rtol=1e-12)
    np.testing.assert_allclose(args[8], dot_g, rtol=1e-12)
