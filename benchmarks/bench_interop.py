"""The per-call cost of a revmlir function inside JAX (``rv.to_jax``, under
``jax.jit``) and PyTorch (``rv.to_torch``), against the native call
``f(*args)`` and against the same math written in the framework itself.

The function is ``e += Σ w·x[i]² + sin(x[i])`` over ``n`` elements (small
``n``: the fixed cost; large ``n``: the work).  Rows:

* ``f(*args)``                  — revmlir's own native call;
* ``jit(to_jax(f))``            — the same under ``jax.jit``: a host
                                  callback (``jax.pure_callback``) from XLA
                                  into revmlir;
* ``jit(pure_callback(id))``    — the floor of that path: a jitted callback
                                  returning its argument, which an XLA FFI
                                  custom call would save;
* ``jit(jax math)``             — the same math as a jitted JAX function;
* ``rv.gradient``, ``jit(grad(to_jax(f)))``, ``jit(grad(jax math))`` — a
  gradient with respect to ``x`` and ``w``, from Python, inside JAX, and by
  JAX;
* ``to_torch(f)``, ``torch math`` — a call from PyTorch and the same math
  in eager PyTorch; with ``+ backward``, a call and its
  ``torch.autograd.grad``.

Run:  .venv/bin/python benchmarks/bench_interop.py [--quick]   (torch rows need the torch extra)
"""

from __future__ import annotations

import argparse
import math
import sys

import _harness as H
import jax
import jax.numpy as jnp
import numpy as np

import revmlir as rv

jax.config.update("jax_enable_x64", True)


@rv.reversible
def energy(e, x, w):
    for i in range(len(x)):
        e += w * x[i] * x[i] + math.sin(x[i])


def energy_math(xp, e, x, w):
    return e + xp.sum(w * x * x + xp.sin(x))


def jax_rows(n: int) -> dict[str, object]:
    x = np.random.default_rng(0).normal(size=n)
    xj = jnp.asarray(x)
    inside = jax.jit(lambda e, x, w: rv.to_jax(energy)(e, x, w)[0])
    pure = jax.jit(lambda e, x, w: energy_math(jnp, e, x, w))
    identity = jax.jit(
        lambda x: jax.pure_callback(lambda x: x, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential")
    )
    grad_inside = jax.jit(jax.grad(lambda x, w: rv.to_jax(energy)(0.0, x, w)[0], argnums=(0, 1)))
    grad_pure = jax.jit(jax.grad(lambda x, w: energy_math(jnp, 0.0, x, w), argnums=(0, 1)))
    expected = energy_math(np, 0.0, x, 1.5)
    assert math.isclose(energy(0.0, x, 1.5)[0], expected, rel_tol=1e-12)
    assert math.isclose(float(inside(0.0, xj, 1.5)), expected, rel_tol=1e-12)
    for found, reference in zip(grad_inside(xj, 1.5), grad_pure(xj, 1.5)):
        np.testing.assert_allclose(found, reference, rtol=1e-10)
    return {
        "f(*args)": lambda: energy(0.0, x, 1.5),
        "jit(to_jax(f))": lambda: inside(0.0, xj, 1.5).block_until_ready(),
        "jit(pure_callback(id))": lambda: identity(xj).block_until_ready(),
        "jit(jax math)": lambda: pure(0.0, xj, 1.5).block_until_ready(),
        "rv.gradient": lambda: rv.gradient(energy, (0.0, x, 1.5)),
        "jit(grad(to_jax(f)))": lambda: jax.block_until_ready(grad_inside(xj, 1.5)),
        "jit(grad(jax math))": lambda: jax.block_until_ready(grad_pure(xj, 1.5)),
    }


def torch_rows(n: int) -> dict[str, object]:
    try:
        import torch
    except ImportError:
        return {}
    x = torch.from_numpy(np.random.default_rng(0).normal(size=n))
    e, w = torch.tensor(0.0, dtype=torch.float64), torch.tensor(1.5, dtype=torch.float64)
    f = rv.to_torch(energy)
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()

    def backward(call):
        return lambda: torch.autograd.grad(call(e, xg, wg), (xg, wg))

    for found, reference in zip(backward(lambda *a: f(*a)[0])(), backward(lambda *a: energy_math(torch, *a))()):
        np.testing.assert_allclose(found.numpy(), reference.numpy(), rtol=1e-10)
    return {
        "to_torch(f)": lambda: f(e, x, w),
        "torch math": lambda: energy_math(torch, e, x, w),
        "to_torch(f) + backward": backward(lambda *a: f(*a)[0]),
        "torch math + backward": backward(lambda *a: energy_math(torch, *a)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    H.print_header("revmlir inside JAX and PyTorch: per-call cost", __doc__.split("Run:")[0])
    print(f"jax {jax.__version__}")
    for n in (16, 100_000):
        rows = {**jax_rows(n), **torch_rows(n)}
        timings = H.measure(rows, repeat=7 if opts.quick else 11, min_sample_s=0.01)  # type: ignore[arg-type]
        H.report(f"n = {n}", timings, ["f(*args)", "jit(jax math)"])


if __name__ == "__main__":
    sys.exit(main())
