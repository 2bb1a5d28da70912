"""Inverse accumulation (Pearlmutter and Siskind, "Inverse Accumulation
Mode"): derivatives of ``~f`` in every mode, ``J⁻¹·v`` (``@f.itan``,
``rv.inverse_jvp``) and ``J⁻ᵀ·w`` (``@f.iadj``, ``rv.inverse_vjp``) of
reversible programs, and Newton steps.

What they are checked against is independent of revmlir's derivatives: JAX's
Jacobian of the same function written with ``jax.numpy`` (inverted or solved
with numpy.linalg), finite differences of ``~f``, and the invariants of the
seed's section 4.7 on generated programs: ``⟨ȳ*, ẏ*⟩ = ⟨x̄*, ẋ*⟩`` and the
round trips ``J(J⁻¹v) = v``, ``Jᵀ(J⁻ᵀw) = w`` through the ordinary tangent
and adjoint."""

import copy
import math
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import revmlir as rv
from program_generator import F64, Program, arguments, programs
from python_examples import load_example
from revmlir.ad.adjoint import adjoint_name, generate_adjoints
from revmlir.ad.inverse_modes import (
    generate_inverse_adjoints,
    generate_inverse_tangents,
    inverse_adjoint_name,
    inverse_tangent_name,
)
from revmlir.ad.tangent import generate_tangents, tangent_name
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

jax.config.update("jax_enable_x64", True)

BACKENDS = ("interpreter", "native")
EXAMPLES = Path(__file__).parent.parent / "examples"


def make(backend: str, pyfunc: Any) -> rv.ReversibleFunction:
    return rv.reversible(pyfunc, backend=backend)


def flat(values: Any, positions: Any) -> np.ndarray:
    """The float entries of ``values`` at ``positions``, in ``rv.jacobian``'s
    layout (argument by argument, arrays in C order)."""
    return np.concatenate([np.ravel(np.asarray(values[i], dtype=float)) for i in positions])


def shaped(vector: np.ndarray, args: Any, positions: Any) -> list[Any]:
    """``vector`` in ``flat``'s layout as one entry per argument (``None``
    outside ``positions``)."""
    parts: list[Any] = [None] * len(args)
    start = 0
    for i in positions:
        size = int(np.size(args[i]))
        chunk = vector[start : start + size]
        parts[i] = chunk.reshape(np.shape(args[i])).copy() if isinstance(args[i], np.ndarray) else float(chunk[0])
        start += size
    return parts


def dense_jacobian(twin: Any, args: Any, positions: Any) -> np.ndarray:
    """JAX's Jacobian of ``twin`` (``f`` with ``jax.numpy``, returning every
    argument) over the float entries at ``positions``, ``flat``'s layout."""

    def function(vector: jnp.ndarray) -> jnp.ndarray:
        parts, start = list(args), 0
        for i in positions:
            size = int(np.size(args[i]))
            parts[i] = vector[start : start + size].reshape(np.shape(args[i]))
            start += size
        outputs = twin(*parts)
        return jnp.concatenate([jnp.ravel(jnp.asarray(outputs[i])) for i in positions])

    return np.asarray(jax.jit(jax.jacfwd(function))(jnp.asarray(flat(args, positions))))


# ---------------------------------------------------------------------------
# 1. Derivatives of ~f in every mode
# ---------------------------------------------------------------------------


def shear(y, x, a):
    y += math.sin(x) * a
    x += y * y


def shear_jax(y, x, a):
    y = y + jnp.sin(x) * a
    return y, x + y * y, a


def unshear_jax(y, x, a):
    """``~shear``, written by hand: the independent inverse."""
    x = x - y * y
    return y - jnp.sin(x) * a, x, a


def finite_gradient(run: Any, args: tuple[float, ...], output: int, h: float = 1e-6) -> np.ndarray:
    found = []
    for i in range(len(args)):
        plus, minus = list(args), list(args)
        plus[i] += h
        minus[i] -= h
        found.append((run(*plus)[output] - run(*minus)[output]) / (2 * h))
    return np.array(found)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_mode_differentiates_the_inverse(backend):
    f = make(backend, shear)
    x = (0.3, 0.7, 1.3)
    y = f(*x)
    J = dense_jacobian(shear_jax, x, (0, 1, 2))
    inverse = np.linalg.inv(J)  # the Jacobian of ~f at y
    np.testing.assert_allclose(rv.jacobian(~f, y), inverse, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(rv.jacobian(~f, y, mode="reverse"), inverse, rtol=1e-12, atol=1e-14)
    for output in range(3):
        gradient = rv.gradient(~f, y, iloss=output)
        np.testing.assert_allclose(gradient, inverse[output], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(gradient, finite_gradient(~f, y, output), rtol=1e-6, atol=1e-8)
    v, w = np.array([0.4, -1.2, 0.5]), np.array([2.0, 0.3, -0.7])
    outputs, tangents = rv.jvp(~f, y, tuple(v))
    np.testing.assert_allclose(outputs, x, rtol=1e-12)
    np.testing.assert_allclose(tangents, inverse @ v, rtol=1e-12)
    outputs, pullback = rv.vjp(~f, *y)
    np.testing.assert_allclose(pullback(*w), inverse.T @ w, rtol=1e-12)
    # second derivatives of ~f against JAX's of the inverse written by hand
    for output in range(2):
        hessian = np.asarray(jax.jit(jax.hessian(lambda p: unshear_jax(*p)[output]))(jnp.asarray(y)))
        np.testing.assert_allclose(rv.hessian(~f, y, iloss=output), hessian, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(rv.hvp(~f, y, tuple(v), iloss=output), hessian @ v, rtol=1e-10, atol=1e-12)


def cascade(x, a):
    for i in range(len(x) - 1):
        x[i + 1] += a * math.sin(x[i])
    x[0] += math.tanh(x[len(x) - 1]) * 0.5


def cascade_jax(x, a):
    for i in range(x.shape[0] - 1):
        x = x.at[i + 1].add(a * jnp.sin(x[i]))
    return x.at[0].add(jnp.tanh(x[-1]) * 0.5), a


@pytest.mark.parametrize("backend", BACKENDS)
def test_inverse_of_an_array_program(backend):
    f = make(backend, cascade)
    x = (np.array([0.1, -0.4, 0.9, 0.3]), 0.8)
    y = f(x[0].copy(), x[1])
    inverse = np.linalg.inv(dense_jacobian(cascade_jax, x, (0, 1)))
    np.testing.assert_allclose(rv.jacobian(~f, y), inverse, rtol=1e-12, atol=1e-14)
    w = np.array([0.2, 1.0, -0.3, 0.5, 0.7])
    _, pullback = rv.vjp(~f, *y)
    np.testing.assert_allclose(flat(pullback(*shaped(w, y, (0, 1))), (0, 1)), inverse.T @ w, rtol=1e-12)


def test_derivatives_of_the_inverse_reject_bad_arguments():
    f = make("interpreter", shear)
    with pytest.raises(TypeError, match="or its inverse"):
        rv.jvp(shear, (1.0, 2.0, 3.0), (None, None, None))
    with pytest.raises(TypeError, match=r"~shear takes 3 argument\(s\), so 3 tangents"):
        rv.jvp(~f, (1.0, 2.0, 3.0), (None, None))
    with pytest.raises(TypeError, match="not a float scalar"):
        rv.gradient(~make("interpreter", cascade), (np.zeros(3), 0.5), iloss=0)


# ---------------------------------------------------------------------------
# 2. J⁻¹·v and J⁻ᵀ·w from Python, against dense solves of JAX's Jacobian
# ---------------------------------------------------------------------------


def check_inverse_products(
    f: Any, args: tuple[Any, ...], J: np.ndarray, rng: np.random.Generator, rtol: float = 1e-9
) -> None:
    positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray | float)]
    v, w = rng.normal(size=J.shape[0]), rng.normal(size=J.shape[0])
    expected_outputs = f(*copy.deepcopy(args))
    outputs, tangents = rv.inverse_jvp(f, args, shaped(v, args, positions))
    np.testing.assert_allclose(flat(tangents, positions), np.linalg.solve(J, v), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(flat(outputs, positions), flat(expected_outputs, positions), rtol=1e-14)
    outputs, cotangents = rv.inverse_vjp(f, args, shaped(w, args, positions))
    np.testing.assert_allclose(flat(cotangents, positions), np.linalg.solve(J.T, w), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(flat(outputs, positions), flat(expected_outputs, positions), rtol=1e-14)


@rv.reversible
def mix(y, x, c):
    """``y += c·tanh(x)``: a callee updating one element."""
    y += c * math.tanh(x)


def smooth_mix(y, x, a):
    """Each ``y[i]`` takes in a weighted sine of ``x``'s next element, held
    in an ancilla array for the length of the update (computed in a
    routine, uncomputed after); elements with a positive weight also take in
    a call (an ``if`` on ``a``, which the program never writes)."""
    with rv.routine() as r:
        t = rv.zeros(len(x))
        for i in range(len(x)):
            t[i] += math.sin(x[(i + 1) % len(x)]) * a[i]
    for i in range(len(y)):
        y[i] += t[i] * 0.5
        if a[i] > 0.0:
            mix(y[i], x[i], a[i])
    ~r


def smooth_mix_jax(y, x, a):
    t = jnp.sin(jnp.roll(x, -1)) * a
    y = y + t * 0.5 + jnp.where(a > 0.0, a * jnp.tanh(x), 0.0)
    return y, x, a


SMOOTH_MIX = make("native", smooth_mix)
"""One function for every example below: they differ in the point, the
weights and the length, not in the program, whose one specialisation (its
arrays have dynamic sizes) and derived inverse products are compiled once
instead of once per example."""


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 4).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(-1.5, 1.5), min_size=n, max_size=n),
            # no subnormal weights: XLA on the CPU flushes them to zero, so
            # JAX would take the other side of the branch on a > 0
            st.lists(st.floats(-1.0, 1.0, allow_subnormal=False), min_size=n, max_size=n),
        )
    ),
    st.integers(0, 2**32 - 1),
)
def test_inverse_products_with_ancilla_arrays_calls_and_branches(data, seed):
    """J⁻¹v and J⁻ᵀw of a program with an ancilla array, a call and a
    branch, at random points and weights, against numpy's solve on JAX's
    dense Jacobian: the structural generator has no ancilla arrays, so this
    family covers them."""
    x, a = (np.array(v) for v in data)
    args = (np.cos(x), x, a)
    J = dense_jacobian(smooth_mix_jax, args, (0, 1, 2))
    assume(np.linalg.cond(J) < 1e8)
    check_inverse_products(SMOOTH_MIX, args, J, np.random.default_rng(seed), 1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_inverse_products_of_scalar_and_array_programs(backend):
    rng = np.random.default_rng(1)
    x = (0.3, 0.7, 1.3)
    check_inverse_products(make(backend, shear), x, dense_jacobian(shear_jax, x, (0, 1, 2)), rng, 1e-12)
    x = (np.array([0.1, -0.4, 0.9, 0.3]), 0.8)
    check_inverse_products(make(backend, cascade), x, dense_jacobian(cascade_jax, x, (0, 1)), rng, 1e-12)
    # the arguments are left alone
    assert x[0].tolist() == [0.1, -0.4, 0.9, 0.3]


def leapfrog_jax(x, v, m, G, dt, nsteps):
    def kick(x, v, h):
        d = x[None, :, :] - x[:, None, :]  # x_j - x_i
        apart = ~np.eye(x.shape[0], dtype=bool)
        r = jnp.sqrt(jnp.where(apart, jnp.sum(d * d, axis=-1), 1.0))
        scale = jnp.where(apart, G * m[None, :] / r**3, 0.0)
        return v + h * jnp.sum(scale[:, :, None] * d, axis=1)

    v = kick(x, v, dt / 2)
    for _ in range(nsteps):
        x = x + v * dt
        v = kick(x, v, dt)
    return x, v, m, G, dt, nsteps


@pytest.mark.parametrize("backend", BACKENDS)
def test_leapfrog(backend):
    example = load_example("paper_leapfrog")
    f = example.leapfrog if backend == "native" else rv.reversible(example.leapfrog.pyfunc, backend=backend)
    x, v, m = example.solar_system()
    args = (x, v, m, example.G_SOLAR, 0.01, 3)
    J = dense_jacobian(leapfrog_jax, args, (0, 1, 2, 3, 4))
    check_inverse_products(f, args, J, np.random.default_rng(2))


def test_coupling_layer():
    example = load_example("coupling_layer")
    x, *weights = example.random_flow(6, layers=4, hidden=5)
    args = (x, *weights)
    y = example.flow(x.copy(), *weights)[0]
    np.testing.assert_allclose(y, example.flow_numpy(x, *weights), rtol=1e-13)

    def twin(x, W1, b1, W2, b2):
        return example.flow_numpy(x, W1, b1, W2, b2, xp=jnp), W1, b1, W2, b2

    J = dense_jacobian(twin, args, range(5))
    check_inverse_products(example.flow, args, J, np.random.default_rng(3))
    # the state's own block: J_xx⁻¹ (the weights are parameters, unchanged)
    v = np.linspace(-1.0, 1.0, 6)
    _, (dx, *rest) = rv.inverse_jvp(example.flow, args, (v, None, None, None, None))
    np.testing.assert_allclose(dx, np.linalg.solve(J[:6, :6], v), rtol=1e-12)
    assert all(not np.any(r) for r in rest)


def affine_jax(y, W, b, x):
    return y + W @ x + b, W, b, x


def unitary_jax(x, theta):
    k = 0
    M = x.shape[0]
    for _ in range(x.shape[1]):
        for j in range(M):
            for i in reversed(range(j, M - 1)):
                a, b = x[i, 0], x[i + 1, 0]
                c, s = jnp.cos(theta[k]), jnp.sin(theta[k])
                x = x.at[i, 0].set(a * c - b * s).at[i + 1, 0].set(a * s + b * c)
                k += 1
    return x, theta


MLIR_EXAMPLES = {
    "affine.mlir": (
        "i_affine",
        affine_jax,
        lambda rng: (rng.normal(size=3), rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=2)),
    ),
    "unitary.mlir": ("i_ummm", unitary_jax, lambda rng: (rng.normal(size=(3, 2)), rng.normal(size=6))),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("example", sorted(MLIR_EXAMPLES))
def test_passes_on_the_paper_examples(example, backend):
    """``@f.itan`` and ``@f.iadj`` built by the passes, run on the
    interpreter and natively, against dense solves."""
    name, twin, draw = MLIR_EXAMPLES[example]
    path = EXAMPLES / example
    module = parse_module(path.read_text(), str(path))
    generate_inverse_tangents(module, [name])
    generate_inverse_adjoints(module, [name])
    module.verify()
    runner = RevInterpreter(module) if backend == "interpreter" else NativeModule.compile(module)
    rng = np.random.default_rng(4)
    args = draw(rng)
    every = range(len(args))
    J = dense_jacobian(twin, args, every)
    outputs = runner.call(name, *copy.deepcopy(args))
    v, w = rng.normal(size=len(J)), rng.normal(size=len(J))
    # arrays: @f.itan overwrites the tangents in place, from ẏ to ẋ
    dots = shaped(v, args, every)
    back = runner.call(inverse_tangent_name(name), *copy.deepcopy(outputs), *dots)
    np.testing.assert_allclose(flat(back[: len(args)], every), flat(args, every), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(flat(back[len(args) :], every), np.linalg.solve(J, v), rtol=1e-10, atol=1e-12)
    bars = shaped(w, args, every)
    forward = runner.call(inverse_adjoint_name(name), *copy.deepcopy(args), *bars)
    np.testing.assert_allclose(flat(forward[: len(args)], every), flat(outputs, every), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(flat(forward[len(args) :], every), np.linalg.solve(J.T, w), rtol=1e-10, atol=1e-12)


def test_api_errors():
    f = make("interpreter", shear)
    with pytest.raises(TypeError, match="or its inverse"):
        rv.inverse_jvp(shear, (1.0, 2.0, 3.0), (None, None, None))
    with pytest.raises(TypeError, match="3 output tangents"):
        rv.inverse_jvp(f, (1.0, 2.0, 3.0), (1.0,))
    with pytest.raises(TypeError, match="3 input cotangents"):
        rv.inverse_vjp(f, (1.0, 2.0, 3.0), ())
    g = make("interpreter", cascade)
    with pytest.raises(
        TypeError, match=r"the cotangent of argument 'x' of cascade must have the argument's shape \(3,\)"
    ):
        rv.inverse_vjp(g, (np.zeros(3), 0.5), (np.zeros(2), None))
    with pytest.raises(TypeError, match="must be a real number"):
        rv.inverse_jvp(f, (1.0, 2.0, 3.0), (np.zeros(2), None, None))


def test_inverse_of_the_inverse():
    """The inverse modes of ``~f`` are the ordinary modes of ``f``."""
    f = make("interpreter", shear)
    x = (0.3, 0.7, 1.3)
    y = f(*x)
    v = (0.4, -1.2, 0.5)
    outputs, tangents = rv.inverse_jvp(~f, y, v)
    np.testing.assert_allclose(outputs, x, rtol=1e-12)
    np.testing.assert_allclose(tangents, rv.jvp(f, x, v)[1], rtol=1e-12)
    _, cotangents = rv.inverse_vjp(~f, y, v)
    np.testing.assert_allclose(cotangents, rv.vjp(f, *x)[1](*v), rtol=1e-12)


# ---------------------------------------------------------------------------
# 3. The invariants of section 4.7 on generated programs
# ---------------------------------------------------------------------------

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def derivative_entries(func: Any, values: Any) -> np.ndarray:
    """The float entries of per-carrying-argument derivatives (scalars and
    arrays of f64), in argument order."""
    carrying = [p for p in func.params if p.elem == F64]
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for p, v in zip(carrying, values, strict=True)])


def directions(func: Any, args: Any, rng: np.random.Generator) -> list[Any]:
    """A random derivative per float scalar, float array and float stack
    argument."""
    return [
        rng.normal()
        if p.kind == "scalar"
        else rng.normal(size=len(a)).tolist()
        if p.kind == "stack"  # a stack's tangent is a list
        else rng.normal(size=np.shape(a))
        for p, a in zip(func.params, args)
        if p.elem == F64
    ]


@SETTINGS
@given(programs(floats=True, stacks=True), st.data())
def test_invariants_on_generated_programs(program: Program, data: st.DataObject):
    func = data.draw(st.sampled_from(program.functions), label="function")
    assume(func.bidirectional and any(p.elem == F64 for p in func.params))
    module = parse_module(program.text)
    for generate in (generate_tangents, generate_adjoints, generate_inverse_tangents, generate_inverse_adjoints):
        generate(module, [func.name])
    module.verify()
    run = RevInterpreter(module)
    args = data.draw(arguments(func), label="args")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    n = len(args)
    y = run.call(func.name, *copy.deepcopy(args))
    v, w = directions(func, args, rng), directions(func, args, rng)

    # J⁻¹v by the inverse tangent, run backwards from y: it gives x back
    back = run.call(inverse_tangent_name(func.name), *copy.deepcopy(y), *copy.deepcopy(v))
    for a, b in zip(args, back[:n]):
        np.testing.assert_allclose(np.asarray(b, dtype=float), np.asarray(a, dtype=float), rtol=1e-8, atol=1e-8)
    solved = back[n:]
    # J⁻ᵀw by the inverse adjoint, run forwards from x: it gives y
    forward = run.call(inverse_adjoint_name(func.name), *copy.deepcopy(args), *copy.deepcopy(w))
    for a, b in zip(y, forward[:n]):
        np.testing.assert_allclose(np.asarray(b, dtype=float), np.asarray(a, dtype=float), rtol=1e-12, atol=1e-12)
    transposed = forward[n:]

    def close(found: Any, expected: Any, what: str) -> None:
        found, expected = derivative_entries(func, found), derivative_entries(func, expected)
        scale = 1.0 + np.abs(expected).max(initial=0.0) + np.abs(found).max(initial=0.0)
        assert np.abs(found - expected).max(initial=0.0) <= 1e-7 * scale, f"{what}: {found} != {expected}"

    # round trips: J(J⁻¹v) = v by the tangent at x, Jᵀ(J⁻ᵀw) = w by the adjoint at y
    tangent = run.call(tangent_name(func.name), *copy.deepcopy(args), *copy.deepcopy(solved))
    close(tangent[n:], v, "J(J⁻¹v)")
    adjoint = run.call(adjoint_name(func.name), *copy.deepcopy(y), *copy.deepcopy(transposed))
    close(adjoint[n:], w, "Jᵀ(J⁻ᵀw)")
    # (4.7) ⟨ȳ*, ẏ*⟩ = ⟨x̄*, ẋ*⟩ for the inverse pair, ⟨ȳ, ẏ⟩ = ⟨x̄, ẋ⟩ for the ordinary one
    inverse_pair = (
        derivative_entries(func, transposed) @ derivative_entries(func, v),
        derivative_entries(func, w) @ derivative_entries(func, solved),
    )
    ordinary = run.call(tangent_name(func.name), *copy.deepcopy(args), *copy.deepcopy(v))[n:]
    pulled = run.call(adjoint_name(func.name), *copy.deepcopy(y), *copy.deepcopy(w))[n:]
    ordinary_pair = (
        derivative_entries(func, w) @ derivative_entries(func, ordinary),
        derivative_entries(func, pulled) @ derivative_entries(func, v),
    )
    for left, right in (inverse_pair, ordinary_pair):
        assert math.isclose(left, right, rel_tol=1e-7, abs_tol=1e-7 * (1 + abs(left)))


# ---------------------------------------------------------------------------
# 4. Newton steps
# ---------------------------------------------------------------------------


def residual_jax(x, p):
    for i in range(x.shape[0] - 1):
        x = x.at[i + 1].add(jnp.sin(x[i]) * 0.5 + x[i] ** 3 * 0.1 - p[i])
    return x.at[0].add(jnp.tanh(x[-1]) - p[-1]), p


def test_newton_step_against_a_dense_solve():
    newton = load_example("newton")
    x, p = newton.problem(6, seed=1)
    x = x + 0.3
    (value, p_after), (delta, p_step) = rv.newton_step(newton.residual, (x, p), wrt=[0])
    J = dense_jacobian(residual_jax, (x, p), (0,))
    np.testing.assert_allclose(value, np.asarray(residual_jax(jnp.asarray(x), jnp.asarray(p))[0]), rtol=1e-13)
    np.testing.assert_allclose(delta, -np.linalg.solve(J, value), rtol=1e-12, atol=1e-14)
    assert np.array_equal(p_after, p) and not np.any(p_step)


def test_newton_example_finds_the_root():
    from scipy.optimize import root

    newton = load_example("newton")
    x0, p = newton.problem(8)
    x, steps = newton.solve(x0, p)
    exact = (~newton.residual)(np.zeros(8), p)[0]  # F is reversible: its root is ~F(0)
    np.testing.assert_allclose(x, exact, rtol=1e-12, atol=1e-14)
    assert np.abs(newton.residual(x.copy(), p)[0]).max() <= 1e-12
    assert 2 <= steps <= 8  # quadratic convergence from zero
    found = root(lambda x: newton.residual(x.copy(), p)[0], x0, tol=1e-12)
    np.testing.assert_allclose(x, found.x, rtol=1e-10, atol=1e-12)


def drifting(x, p, n):
    x += math.sin(p)
    p += 1.0


def test_newton_step_errors():
    f = make("interpreter", drifting)
    with pytest.raises(TypeError, match="argument 'n' of drifting is not a float scalar"):
        rv.newton_step(f, (0.5, 0.2, 3), wrt=[0, 2])
    with pytest.raises(ValueError, match=r"drifting changes argument\(s\) 'p', which are not in wrt=\[0\]"):
        rv.newton_step(f, (0.5, 0.2, 3), wrt=[0])
    with pytest.raises(TypeError, match="or its inverse"):
        rv.newton_step(drifting, (0.5, 0.2, 3))
    # every float argument is the unknown by default: J = [[1, cos p], [0, 1]]
    (value, _, _), step = rv.newton_step(f, (0.5, 0.2, 3))
    np.testing.assert_allclose(step[:2], -np.linalg.solve([[1, math.cos(0.2)], [0, 1]], [value, 1.2]), rtol=1e-12)


def scale_by(y: rv.ULog, x):
    y *= rv.ulog(x * x + 1.0)
    x += float(y) * 0.1


def test_log_number_arguments():
    """A log number's derivatives are taken with respect to its value, as
    ``rv.jvp``'s and ``rv.vjp``'s: the round trips through them hold."""
    f = make("interpreter", scale_by)
    x = (2.0, 0.5)
    v = (0.3, -0.2)
    _, solved = rv.inverse_jvp(f, x, v)
    np.testing.assert_allclose(rv.jvp(f, x, solved)[1], v, rtol=1e-12)
    outputs, transposed = rv.inverse_vjp(f, x, v)
    np.testing.assert_allclose(rv.vjp(f, *x)[1](*transposed), v, rtol=1e-12)
    y = f(*x)
    np.testing.assert_allclose(outputs, y, rtol=1e-14)


def masked_residual(x, y, c, p):
    """Only ``x`` and ``y`` are unknowns; ``c`` and ``p`` are parameters it
    never writes, so that any value of theirs, NaN or ``-0.0``, comes back
    as it was."""
    y += x * x - 2.0
    x += y * 0.5


def masked_residual_jax(x, y, c, p):
    y = y + x * x - 2.0
    return x + y * 0.5, y, c, p


@pytest.mark.parametrize("backend", BACKENDS)
def test_newton_step_parameters_are_unchanged_when_bit_identical(backend):
    """A NaN parameter (a masked entry) comes back NaN: unchanged (``==``
    called it changed), and so does ``-0.0``; the step is then the dense
    solve's, with JAX's Jacobian over the unknowns."""
    F = make(backend, masked_residual)
    for c, p in [(math.nan, np.array([math.nan, 1.0])), (-0.0, np.array([-0.0]))]:
        args = (1.0, 0.0, c, p)
        outputs, step = rv.newton_step(F, args, wrt=[0, 1])
        J = dense_jacobian(masked_residual_jax, args, (0, 1))
        np.testing.assert_allclose(step[:2], -np.linalg.solve(J, outputs[:2]), rtol=1e-13)
        assert np.array_equal(outputs[3], p, equal_nan=True) and step[2] == 0.0 and not np.any(step[3])
        # a parameter's step is +0.0, as rv.jvp's zero (it was negated to -0.0)
        assert math.copysign(1.0, step[2]) == 1.0 and not np.any(np.signbit(step[3]))


def resigned(x, p):
    """Adds ``0.0`` to ``p``: a ``-0.0`` comes back ``0.0``, equal by
    ``==`` but not the same bits."""
    x += p * 0.5 - 1.0
    p += 0.0


def test_newton_step_calls_a_changed_sign_of_zero_a_change():
    f = make("interpreter", resigned)
    assert rv.newton_step(f, (0.5, 0.0), wrt=[0])[0][1] == 0.0
    with pytest.raises(
        ValueError, match=r"resigned changes argument\(s\) 'p', which are not in wrt=\[0\]; .*bit-identical"
    ):
        rv.newton_step(f, (0.5, -0.0), wrt=[0])
    with pytest.raises(ValueError, match=r"which are not in wrt=\[0\];"):  # not [np.int64(0)]
        rv.newton_step(f, (0.5, -0.0), wrt=np.array([0]))


def counting(x, n):
    x -= 1.0
    n += 1


def test_newton_step_names_the_default_unknowns_when_a_parameter_changes():
    with pytest.raises(
        ValueError, match=r"'n', which are not in wrt \(by default every float argument but log numbers\)"
    ):
        rv.newton_step(make("interpreter", counting), (0.5, 3))


@pytest.mark.parametrize(
    ("wrt", "error", "message"),
    [
        ([-1], ValueError, r"rv.newton_step: wrt=-1 is negative; it is a position among the 3 arguments of drifting"),
        ([5], IndexError, r"rv.newton_step: wrt=5 is out of range for the 3 arguments of drifting"),
        (0, TypeError, r"rv.newton_step: wrt must be a sequence of positions \(wrt=\(0,\)\), got int"),
        (["x"], TypeError, r"rv.newton_step: wrt must be an int \(a position among .*\), got str 'x'"),
        ([True], TypeError, r"rv.newton_step: wrt must be an int .*, got bool True"),
        ([0, 0], ValueError, r"rv.newton_step: wrt=\(0, 0\) names a position twice"),
    ],
)
def test_newton_step_checks_wrt(wrt, error, message):
    """Each entry as ``rv.hessian``'s ``wrt`` (decision 147): ``-1`` was
    read as the last argument and then called "not a float", ``5`` "not a
    float", and ``0`` and ``["x"]`` Python's own errors."""
    with pytest.raises(error, match=message):
        rv.newton_step(make("interpreter", drifting), (0.5, 0.2, 3), wrt=wrt)


F43 = rv.Fixed[43]


def fixed_residual(y: F43, x: F43):
    y += x * x
    x += y * 0.5


def fixed_residual_jax(y, x):
    y = y + x * x
    return y, x + y * 0.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_newton_step_of_fixed_point_numbers_takes_their_real_values(backend):
    """The residual of a fixed-point unknown is its real value, as its
    tangents are (it was passed on as a ``FixedPoint`` tangent and
    refused)."""
    args = (F43(0.5), F43(1.25))
    outputs, step = rv.newton_step(make(backend, fixed_residual), args)
    residual = [float(o) for o in outputs]
    J = dense_jacobian(fixed_residual_jax, (0.5, 1.25), (0, 1))
    np.testing.assert_allclose(step, -np.linalg.solve(J, residual), rtol=1e-12)
    assert all(isinstance(d, float) for d in step)


def tropical_residual(y: rv.Tropical, x: rv.Tropical):
    y *= x * x


def test_newton_step_of_tropical_numbers_and_log_numbers():
    """A tropical number is a real (``y *= x * x`` is ``y + 2x``), so its
    step is that of the real function, found in one step; a log number is
    never 0, so it cannot be an unknown, only a parameter."""
    f = make("interpreter", tropical_residual)
    (y, x), step = rv.newton_step(f, (1.0, 2.0), wrt=[0])
    assert (y, x) == (5.0, 2.0) and step == (-5.0, 0.0)
    (y, x), step = rv.newton_step(f, (1.0, 2.0))  # J = [[1, 2], [0, 1]]
    np.testing.assert_allclose(step, -np.linalg.solve([[1.0, 2.0], [0.0, 1.0]], [5.0, 2.0]), rtol=1e-15)
    g = make("interpreter", scale_by)
    with pytest.raises(TypeError, match=r"rv.newton_step: argument 'y' of scale_by is a log number, which is never 0"):
        rv.newton_step(g, (2.0, 0.5), wrt=[0, 1])
    # by default the log number is a parameter, which scale_by changes
    with pytest.raises(
        ValueError, match=r"changes argument\(s\) 'y', which are not in wrt \(by default every float argument but log"
    ):
        rv.newton_step(g, (2.0, 0.5))


class Point(NamedTuple):
    x: float
    y: float


def on_a_point(p: Point, z):
    z += p.x * p.y
    p.x += z * 0.5 - 1.0


def on_fields(x, y, z):
    """``on_a_point`` over the fields, written with ``jax.numpy``."""
    z = z + x * y
    return x + z * 0.5 - 1.0, y, z


@pytest.mark.parametrize("backend", BACKENDS)
def test_inverse_products_and_newton_steps_take_structs(backend):
    """As ``rv.jvp`` does: tangents and cotangents of a struct are
    instances of its class, checked against the dense solve over the fields
    (the struct was refused with advice, "pass the fields", that a function
    taking a struct cannot follow)."""
    f = make(backend, on_a_point)
    args = (Point(1.0, 2.0), 0.5)
    J = dense_jacobian(on_fields, (1.0, 2.0, 0.5), (0, 1, 2))
    outputs, dots = rv.inverse_jvp(f, args, (Point(1.0, -1.0), 0.25))
    assert outputs == f(*args) and isinstance(dots[0], Point)
    np.testing.assert_allclose([*dots[0], dots[1]], np.linalg.solve(J, [1.0, -1.0, 0.25]), rtol=1e-13)
    _, bars = rv.inverse_vjp(f, args, (Point(0.5, None), 2.0))
    assert isinstance(bars[0], Point)
    np.testing.assert_allclose([*bars[0], bars[1]], np.linalg.solve(J.T, [0.5, 0.0, 2.0]), rtol=1e-13)
    # the unknowns: the struct (its two fields) and z
    (p, z), step = rv.newton_step(f, args, wrt=[0, 1])
    np.testing.assert_allclose([*step[0], step[1]], -np.linalg.solve(J, [p.x, p.y, z]), rtol=1e-13)
    # z alone: ∂z/∂z = 1, and p must come back unchanged, which it does not
    with pytest.raises(ValueError, match=r"on_a_point changes argument\(s\) 'p.x', which are not in wrt=\[1\]"):
        rv.newton_step(f, args, wrt=[1])
    with pytest.raises(IndexError, match=r"rv.newton_step: argument #2 of on_a_point does not exist"):
        rv.newton_step(f, args, wrt=[2])
    with pytest.raises(TypeError, match=r"rv.newton_step: wrt must be a sequence of positions"):
        rv.newton_step(f, args, wrt=0)
    with pytest.raises(TypeError, match=r"on_a_point takes 2 argument\(s\), so 2 output tangents"):
        rv.inverse_jvp(f, args, (1.0, 0.0, 1.0))
    with pytest.raises(TypeError, match=r"the output tangent of a Point is one, or None, not float"):
        rv.inverse_jvp(f, args, (1.0, 0.0))


def shifted_by(x, y: rv.ULog, z: F43):
    x += float(y) * 0.5 + float(z) - 1.0


def test_newton_step_parameters_of_number_types_are_what_the_call_made_of_them():
    """A real given for a log or fixed-point parameter is held as the
    number nearest it (``3.7`` comes back ``3.7000000000000006`` through
    its logarithm): unchanged when that comes back, as it does here (it
    was refused as changed).  The step is ``-F(x)``, ``∂F/∂x = 1``."""
    f = make("interpreter", shifted_by)
    for y, z in [(3.7, 0.3), (1e-5, F43(0.1))]:
        (x, y_after, z_after), step = rv.newton_step(f, (0.5, y, z), wrt=[0])
        assert y_after == pytest.approx(y, rel=1e-15) and float(z_after) == pytest.approx(float(z), abs=2**-43)
        assert step[0] == -x and x == 0.5 + float(y_after) * 0.5 + float(z_after) - 1.0


def keeps_a_log_stack(x, y, s: rv.Stack):
    y += x * 0.5
    x += y * 0.5 - 1.0


def pops_and_pushes_back(x, y, s: rv.Stack):
    y += x * 0.5
    t = rv.pop(s)
    x += y * 0.5 - 1.0
    rv.push(s, t)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("pyfunc", [keeps_a_log_stack, pops_and_pushes_back])
def test_a_log_stack_parameter_given_back_is_unchanged(backend, pyfunc):
    """A stack's elements come back as given (``3.7``, not the nearest log
    number ``3.7000000000000006``), so they are compared as given: the
    stack was called changed.  ``J = [[1.25, 0.5], [0.5, 1]]``."""
    F = make(backend, pyfunc)
    (x, y, s), step = rv.newton_step(F, (0.5, 0.2, rv.Stack(rv.ULog, [3.7])), wrt=[0, 1])
    assert list(s) == [3.7]
    np.testing.assert_allclose(step[:2], -np.linalg.solve([[1.25, 0.5], [0.5, 1.0]], [x, y]), rtol=1e-13)


class Logged(NamedTuple):
    x: float
    l: rv.ULog


def with_a_log_field(p: Logged, z):
    z += p.x * 0.5 + float(p.l) * 0.0
    p.x += z * 0.5 - 1.0


def with_a_log_argument(x, z, l: rv.ULog):
    z += x * 0.5 + float(l) * 0.0
    x += z * 0.5 - 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_log_numbers_not_named_in_wrt_are_parameters_of_a_newton_step(backend):
    """A log number cannot be an unknown, so one the user did not name (the
    default ``wrt``, a struct's field) is a parameter: both were refused,
    the struct with no ``wrt`` that could pass.  ``J = [[1.25, 0.5],
    [0.5, 1]]`` over ``x`` and ``z``."""
    J = [[1.25, 0.5], [0.5, 1.0]]
    F = make(backend, with_a_log_field)
    args = (Logged(0.5, 3.7), 0.2)
    for wrt in (None, [0, 1]):
        (p, z), step = rv.newton_step(F, args, wrt=wrt)
        np.testing.assert_allclose([step[0].x, step[1]], -np.linalg.solve(J, [p.x, z]), rtol=1e-13)
        assert p.l == pytest.approx(3.7, rel=1e-15) and step[0].l == 0.0
    with pytest.raises(ValueError, match=r"changes argument\(s\) 'p.x', which are not in wrt=\[1\]"):
        rv.newton_step(F, args, wrt=[1])
    G = make(backend, with_a_log_argument)
    (x, z, _), step = rv.newton_step(G, (0.5, 0.2, 3.7))
    np.testing.assert_allclose(step[:2], -np.linalg.solve(J, [x, z]), rtol=1e-13)
    with pytest.raises(TypeError, match=r"argument 'l' of with_a_log_argument is a log number, .*leave it out of wrt"):
        rv.newton_step(G, (0.5, 0.2, 3.7), wrt=[0, 1, 2])
