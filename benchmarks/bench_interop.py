"""The per-call cost of a revmlir function inside JAX (``rv.to_jax``, under
``jax.jit``) and PyTorch (``rv.to_torch``), against the native call
``f(*args)`` and against the same math written in the framework itself.

The function is ``e += Σ w·x[i]² + sin(x[i])`` over ``n`` elements (small
``n``: the fixed cost; large ``n``: the work).  Rows:

* ``f(*args)``                  — revmlir's own native call;
* ``jit(to_jax(f)) [ffi]``      — the same under ``jax.jit``, lowered to an
                                  XLA FFI custom call whose generated
                                  handler calls the native entry point (the
                                  default for a native reversible function);
* ``jit(to_jax(f)) [callback]`` — the same with ``lowering="callback"``: a
                                  host callback (``jax.pure_callback``) from
                                  XLA into revmlir's Python;
* ``jit(pure_callback(id))``    — the floor of the callback: a jitted
                                  callback returning its argument;
* ``jit(ffi_call(copy))``       — what an XLA FFI custom call costs instead: a
                                  C++ handler copying its argument, built
                                  with the C++ compiler and jaxlib's FFI
                                  headers (the row is left out without them);
* ``jit(jax math)``             — the same math as a jitted JAX function;
* ``rv.gradient``, ``jit(grad(to_jax(f)))`` (both lowerings),
  ``jit(grad(jax math))`` — a gradient with respect to ``x`` and ``w``, from
  Python, inside JAX, and by JAX;
* ``to_torch(f)``, ``torch math`` — a call from PyTorch and the same math
  in eager PyTorch (on one thread, as revmlir runs); with ``+ backward``, a
  call and its ``torch.autograd.grad``.

Batches (``y[i] += w·x[i]² + sin(x[i])``, n = 16): ``jax.jacrev`` of ``y``
with respect to ``x`` (16 cotangent rows at one point) and ``jax.vmap``
over 64 rows of ``(y, x)``, each jitted, through both lowerings and as
JAX's own math; ``rv.jacobian(mode="reverse")`` is the same Jacobian from
Python (four rows per backward run).

Run:  .venv/bin/python benchmarks/bench_interop.py [--quick]   (torch rows need the torch extra)
"""

from __future__ import annotations

import argparse
import ctypes
import math
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import _harness as H
import revmlir as rv

jax.config.update("jax_enable_x64", True)


@rv.reversible
def energy(e, x, w):
    for i in range(len(x)):
        e += w * x[i] * x[i] + math.sin(x[i])


def energy_math(xp, e, x, w):
    return e + xp.sum(w * x * x + xp.sin(x))


@rv.reversible
def energies(y, x, w):
    for i in range(len(x)):
        y[i] += w * x[i] * x[i] + math.sin(x[i])


def energies_math(xp, y, x, w):
    return y + w * x * x + xp.sin(x), x, w


COPY_HANDLER = """
#include <cstring>
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
static ffi::Error Copy(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  std::memcpy(y->untyped_data(), x.untyped_data(), x.size_bytes());
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Copy_, Copy, ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());
"""


def ffi_copy() -> Callable[[jax.Array], jax.Array] | None:
    """A jitted XLA FFI custom call that copies its argument, or None
    without a C++ compiler."""
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        return None
    directory = Path(tempfile.mkdtemp(prefix="bench-interop-"))
    (directory / "copy.cc").write_text(COPY_HANDLER)
    library = directory / "libcopy.so"
    built = subprocess.run(
        [
            compiler,
            "-O2",
            "-std=c++17",
            "-shared",
            "-fPIC",
            "-w",
            f"-I{jax.ffi.include_dir()}",
            str(directory / "copy.cc"),
            "-o",
            str(library),
        ],
        capture_output=True,
    )
    if built.returncode != 0:
        return None
    handler = ctypes.cdll.LoadLibrary(str(library)).Copy_
    jax.ffi.register_ffi_target("bench_interop_copy", jax.ffi.pycapsule(handler), platform="cpu")
    return jax.jit(lambda x: jax.ffi.ffi_call("bench_interop_copy", jax.ShapeDtypeStruct(x.shape, x.dtype))(x))


def jax_rows(n: int, copy: Callable[[jax.Array], jax.Array] | None) -> dict[str, object]:
    x = np.random.default_rng(0).normal(size=n)
    xj = jnp.asarray(x)
    lowerings = ("ffi", "callback")
    inside = {how: jax.jit(lambda e, x, w, f=rv.to_jax(energy, how): f(e, x, w)[0]) for how in lowerings}
    pure = jax.jit(lambda e, x, w: energy_math(jnp, e, x, w))
    identity = jax.jit(
        lambda x: jax.pure_callback(lambda x: x, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential")
    )
    grad_inside = {
        how: jax.jit(jax.grad(lambda x, w, f=rv.to_jax(energy, how): f(0.0, x, w)[0], argnums=(0, 1)))
        for how in lowerings
    }
    grad_pure = jax.jit(jax.grad(lambda x, w: energy_math(jnp, 0.0, x, w), argnums=(0, 1)))
    expected = energy_math(np, 0.0, x, 1.5)
    assert math.isclose(energy(0.0, x, 1.5)[0], expected, rel_tol=1e-12)
    for how in lowerings:
        assert math.isclose(float(inside[how](0.0, xj, 1.5)), expected, rel_tol=1e-12)
        for found, reference in zip(grad_inside[how](xj, 1.5), grad_pure(xj, 1.5)):
            np.testing.assert_allclose(found, reference, rtol=1e-10)
    np.testing.assert_array_equal(identity(xj), x)
    ffi_row = {}
    if copy is not None:
        np.testing.assert_array_equal(copy(xj), x)
        ffi_row = {"jit(ffi_call(copy))": lambda: copy(xj).block_until_ready()}
    return {
        "f(*args)": lambda: energy(0.0, x, 1.5),
        **{
            f"jit(to_jax(f)) [{how}]": partial(lambda f: f(0.0, xj, 1.5).block_until_ready(), inside[how])
            for how in lowerings
        },
        "jit(pure_callback(id))": lambda: identity(xj).block_until_ready(),
        **ffi_row,
        "jit(jax math)": lambda: pure(0.0, xj, 1.5).block_until_ready(),
        "rv.gradient": lambda: rv.gradient(energy, (0.0, x, 1.5)),
        **{
            f"jit(grad(to_jax(f))) [{how}]": partial(lambda g: jax.block_until_ready(g(xj, 1.5)), grad_inside[how])
            for how in lowerings
        },
        "jit(grad(jax math))": lambda: jax.block_until_ready(grad_pure(xj, 1.5)),
    }


def batch_rows(n: int, batch: int) -> dict[str, object]:
    """``jacrev`` (n rows at one point) and ``vmap`` (``batch`` rows) of
    ``energies``, checked against JAX's own before they are timed."""
    rng = np.random.default_rng(1)
    y, x = jnp.asarray(rng.normal(size=n)), jnp.asarray(rng.normal(size=n))
    ys, xs = jnp.asarray(rng.normal(size=(batch, n))), jnp.asarray(rng.normal(size=(batch, n)))
    functions = {f"to_jax(f))) [{how}]": rv.to_jax(energies, how) for how in ("ffi", "callback")}
    functions["jax math))"] = partial(energies_math, jnp)
    jacrev = {f"jit(jacrev({k}": jax.jit(jax.jacrev(lambda x, f=f: f(y, x, 1.5)[0])) for k, f in functions.items()}
    vmap = {f"jit(vmap({k}": jax.jit(jax.vmap(lambda y, x, f=f: f(y, x, 1.5)[0])) for k, f in functions.items()}
    args = (np.asarray(y), np.asarray(x), 1.5)
    expected = jacrev["jit(jacrev(jax math))"](x)
    np.testing.assert_allclose(rv.jacobian(energies, args, wrt=[1], of=[0], mode="reverse"), expected, rtol=1e-10)
    for g in jacrev.values():
        np.testing.assert_allclose(g(x), expected, rtol=1e-10)
    for g in vmap.values():
        np.testing.assert_allclose(g(ys, xs), vmap["jit(vmap(jax math))"](ys, xs), rtol=1e-10)
    return {
        **{name: partial(lambda g: g(x).block_until_ready(), g) for name, g in jacrev.items()},
        'rv.jacobian(mode="reverse")': lambda: rv.jacobian(energies, args, wrt=[1], of=[0], mode="reverse"),
        **{name: partial(lambda g: g(ys, xs).block_until_ready(), g) for name, g in vmap.items()},
    }


def torch_rows(n: int) -> dict[str, object]:
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(1)
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
    copy = ffi_copy()
    for n in (16, 100_000):
        rows = {**jax_rows(n, copy), **torch_rows(n)}
        timings = H.measure(rows, repeat=7 if opts.quick else 11, min_sample_s=0.01)  # type: ignore[arg-type]
        H.report(f"n = {n}", timings, ["f(*args)", "jit(jax math)"])
    rows = batch_rows(16, 64)
    timings = H.measure(rows, repeat=7 if opts.quick else 11, min_sample_s=0.01)  # type: ignore[arg-type]
    H.report(
        "batches, n = 16: jacrev (16 rows), vmap (64 rows)", timings, ["jit(jacrev(jax math))", "jit(vmap(jax math))"]
    )


if __name__ == "__main__":
    sys.exit(main())
