"""Inverse accumulation (Pearlmutter and Siskind): what ``J⁻¹·v`` (the
inverse tangent ``@f.itan``) and ``J⁻ᵀ·w`` (the inverse adjoint ``@f.iadj``)
cost next to ``J·v`` (``@f.tan``) and ``Jᵀ·w`` (``@f.adj``) on the same
function, and next to JAX forming the dense Jacobian (``jit(jacfwd)``) and
solving with it, at state sizes n = 10, 100, 1000.

Programs: the coupling-layer flow (``examples/python/coupling_layer.py``,
4 layers, 16 hidden units), the leapfrog integrator
(``examples/python/paper_leapfrog.py``, n / 6 bodies, 2 steps), and the
paper's affine map and Givens-rotation unitary (``examples/affine.mlir``,
``examples/unitary.mlir``, compiled with ``NativeModule.compile``; no JAX
twin: the unitary's rotations unroll into n² / 2 traced ops).

Each derived function is one pre-marshalled native call (``DirectCall``: the
generated code's own cost) on arrays restored before each call, the same
copies for every candidate.  The inverse products are checked against
``numpy.linalg.solve`` on JAX's Jacobian before timing.

Run:  .venv/bin/python benchmarks/bench_inverse.py [--quick] [--n 10 100 1000]
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import _harness as H
from coupling_layer import flow, flow_numpy, random_flow
from paper_leapfrog import G_SOLAR, leapfrog
from revmlir.ad.adjoint import adjoint_name, generate_adjoints
from revmlir.ad.inverse_modes import (
    generate_inverse_adjoints,
    generate_inverse_tangents,
    inverse_adjoint_name,
    inverse_tangent_name,
)
from revmlir.ad.tangent import generate_tangents, tangent_name
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

jax.config.update("jax_enable_x64", True)


def generate_all(module: Any, names: list[str]) -> None:
    for generate in (generate_tangents, generate_adjoints, generate_inverse_tangents, generate_inverse_adjoints):
        generate(module, names)


def derived_calls(
    native: NativeModule, name: str, x: list[Any], y: list[Any], seeds: list[Any]
) -> dict[str, Callable[[], None]]:
    """One run of each derived function on fresh copies of its arguments:
    ``@f.tan`` and ``@f.iadj`` start from ``x``, ``@f.adj`` and ``@f.itan``
    from ``y = f(x)``; the arrays (state and derivatives) are restored
    before every call, identically for all four."""
    calls = {}
    for label, function, start in (
        ("J·v    @f.tan", tangent_name(name), x),
        ("J⁻¹·v  @f.itan", inverse_tangent_name(name), y),
        ("Jᵀ·w   @f.adj", adjoint_name(name), y),
        ("J⁻ᵀ·w  @f.iadj", inverse_adjoint_name(name), x),
    ):
        saved = [*start, *seeds]
        args = copy.deepcopy(saved)
        call = H.DirectCall(native, function, args)
        pairs = [(a, s) for a, s in zip(args, saved) if isinstance(a, np.ndarray)]

        def run(call: H.DirectCall = call, pairs: list = pairs) -> None:
            for array, original in pairs:
                np.copyto(array, original)
            call()

        calls[label] = run
    return calls


def coupling_problem(n: int) -> tuple[Any, ...]:
    x, W1, b1, W2, b2 = random_flow(n, layers=4, hidden=16)
    spec = flow.specialization_for(x, W1, b1, W2, b2)
    args = [x, W1, b1, W2, b2]
    jacobian = jax.jit(jax.jacfwd(lambda x: flow_numpy(x, W1, b1, W2, b2, xp=jnp)))
    return spec, args, jacobian


def leapfrog_problem(n: int) -> tuple[Any, ...]:
    bodies = max(2, n // 6)
    rng = np.random.default_rng(0)
    x, v, m = rng.normal(size=(bodies, 3)) * 3, rng.normal(size=(bodies, 3)) * 0.3, rng.uniform(0.5, 1.0, bodies) * 1e-3
    dt, nsteps = 0.01, 2
    args = [x, v, m, G_SOLAR, dt, nsteps]
    spec = leapfrog.specialization_for(*args)

    def state_map(state: jnp.ndarray) -> jnp.ndarray:
        x, v = state[: 3 * bodies].reshape(bodies, 3), state[3 * bodies :].reshape(bodies, 3)

        def kick(x: jnp.ndarray, v: jnp.ndarray, h: float) -> jnp.ndarray:
            d = x[None, :, :] - x[:, None, :]
            apart = ~np.eye(bodies, dtype=bool)
            r = jnp.sqrt(jnp.where(apart, jnp.sum(d * d, axis=-1), 1.0))
            return v + h * jnp.sum(jnp.where(apart, G_SOLAR * m[None, :] / r**3, 0.0)[:, :, None] * d, axis=1)

        v = kick(x, v, dt / 2)
        for _ in range(nsteps):
            x = x + v * dt
            v = kick(x, v, dt)
        return jnp.concatenate([x.ravel(), v.ravel()])

    return spec, args, jax.jit(jax.jacfwd(state_map))


def example_problem(file: str, name: str, args: list[Any]) -> tuple[Any, ...]:
    path = H.EXAMPLES / file
    module = parse_module(path.read_text(), str(path))
    return module, name, args


def seeds_for(types: list[Any], args: list[Any], rng: np.random.Generator, state: int) -> list[Any]:
    """Random derivatives for the first ``state`` float entries (the
    state), zero for the parameters."""
    seeds = []
    for a in args:
        if isinstance(a, np.ndarray) and a.dtype == np.float64:
            seeds.append(rng.normal(size=a.shape) if state > 0 else np.zeros(a.shape))
            state -= a.size
        elif isinstance(a, float):
            seeds.append(0.0)
    return seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--n", nargs="*", type=int, default=[10, 100, 1000])
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 9
    H.print_header(
        "inverse accumulation: J⁻¹·v and J⁻ᵀ·w against J·v and Jᵀ·w, and against JAX's dense solve",
        """
One native run of each derived function, pre-marshalled, arrays restored
before each call.  'jax jacfwd+solve' = jit(jacfwd) of the state map, then
numpy.linalg.solve (J⁻¹v) and solve of Jᵀ (J⁻ᵀw), block_until_ready.
Ratios: the inverse mode over its ordinary mode (target ≤ 1.5×).
""",
    )
    rng = np.random.default_rng(1)
    summary = []
    for n in opts.n:
        problems: list[tuple[str, Any, list[Any], Callable | None, int]] = []
        spec, args, jac = coupling_problem(n)
        problems.append(("coupling", spec, args, jac, n))
        spec, args, jac = leapfrog_problem(n)
        problems.append(("leapfrog", spec, args, jac, args[0].size + args[1].size))
        side = max(2, n // 2)
        affine = example_problem(
            "affine.mlir",
            "i_affine",
            [rng.normal(size=n), rng.normal(size=(n, side)), rng.normal(size=n), rng.normal(size=side)],
        )
        rows = max(2, int(round(n**0.5)))
        unitary = example_problem(
            "unitary.mlir", "i_ummm", [rng.normal(size=(rows, 1)), rng.normal(size=rows * (rows - 1) // 2)]
        )
        for label, spec_or_module, args, jac, state in problems + [
            ("affine", affine[0], affine[2], None, n),
            ("unitary", unitary[0], unitary[2], None, rows),
        ]:
            if jac is not None:
                module, name = spec_or_module.module.clone(), spec_or_module.name
            else:
                module, name = spec_or_module.clone(), affine[1] if label == "affine" else unitary[1]
            generate_all(module, [name])
            native = NativeModule.compile(module)
            x = copy.deepcopy(args)
            y = list(native.call(name, *copy.deepcopy(args)))
            seeds = seeds_for([], args, rng, state)
            calls = derived_calls(native, name, x, y, seeds)
            v = np.concatenate([np.ravel(s) for s in seeds if isinstance(s, np.ndarray)])[:state]
            if jac is not None:
                # correctness first: J⁻¹v and J⁻ᵀw against dense solves of JAX's Jacobian
                flat = jnp.asarray(
                    args[0].ravel() if label == "coupling" else np.concatenate([args[0].ravel(), args[1].ravel()])
                )
                J = np.asarray(jac(flat))
                full = [*y, *copy.deepcopy(seeds)]
                solved = native.call(inverse_tangent_name(name), *full)[len(args) :]
                found = np.concatenate([np.ravel(s) for s in solved if isinstance(s, np.ndarray)])[:state]
                assert np.allclose(found, np.linalg.solve(J, v), rtol=1e-8, atol=1e-10), label
                full = [*copy.deepcopy(x), *copy.deepcopy(seeds)]
                solved = native.call(inverse_adjoint_name(name), *full)[len(args) :]
                found = np.concatenate([np.ravel(s) for s in solved if isinstance(s, np.ndarray)])[:state]
                assert np.allclose(found, np.linalg.solve(J.T, v), rtol=1e-8, atol=1e-10), label

                def dense(jac: Callable = jac, flat: Any = flat, v: np.ndarray = v) -> None:
                    J = np.asarray(jax.block_until_ready(jac(flat)))
                    np.linalg.solve(J, v)
                    np.linalg.solve(J.T, v)

                calls["jax jacfwd+solve (both)"] = dense
            timings = H.measure(calls, repeat=repeat, min_sample_s=0.01)
            H.report(f"{label}, n = {n} (state entries {state})", timings, ["J·v    @f.tan", "Jᵀ·w   @f.adj"])
            summary.append((label, n, timings))

    print("\n## summary: inverse mode ÷ ordinary mode (medians), and ÷ JAX dense")
    print(f"{'program':<10} {'n':>5} {'itan ÷ tan':>11} {'iadj ÷ adj':>11} {'(itan+iadj) ÷ JAX':>18}")
    for label, n, t in summary:
        ratio_t = t["J⁻¹·v  @f.itan"].median / t["J·v    @f.tan"].median
        ratio_a = t["J⁻ᵀ·w  @f.iadj"].median / t["Jᵀ·w   @f.adj"].median
        jax_ratio = ""
        if "jax jacfwd+solve (both)" in t:
            both = t["J⁻¹·v  @f.itan"].median + t["J⁻ᵀ·w  @f.iadj"].median
            jax_ratio = f"{both / t['jax jacfwd+solve (both)'].median:.3f}"
        print(f"{label:<10} {n:>5} {ratio_t:>10.2f}× {ratio_a:>10.2f}× {jax_ratio:>18}")


if __name__ == "__main__":
    main()
