"""The ADBench problems (examples/python/adbench_{data,gmm,ba}.py) against
independent references.

The references (examples/python/array_references.py) are written from
ADBench's definitions (``src/cpp/shared/gmm.h`` and ``ba.h``) in array form,
once, for any array module: run with numpy they give the objective values
(float64), run with ``jax.numpy`` they give ``jax.grad``/``jax.jacrev``.
They share no code with the reversible programs.  The data files ship with
the repository (``data/adbench``, read through ``adbench_data.DATA_DIR``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from python_examples import load_example

jax.config.update("jax_enable_x64", True)

references = load_example("array_references")
gmm_reference, reproj_reference = references.gmm_reference, references.reproj_reference
data = load_example("adbench_data")
gmm = load_example("adbench_gmm")
ba = load_example("adbench_ba")

RTOL = 1e-12


# ---------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------


# The JAX twins, compiled once per shape (eager JAX dispatches op by op).
gmm_jax = jax.jit(partial(gmm_reference, jnp), static_argnums=5)
gmm_jax_gradient = jax.jit(jax.grad(partial(gmm_reference, jnp), argnums=(0, 1, 2, 3, 4)), static_argnums=5)
reproj_jax = jax.jit(partial(reproj_reference, jnp))
reproj_jax_jacobian = jax.jit(jax.jacrev(partial(reproj_reference, jnp), argnums=(0, 1, 2)))


# ---------------------------------------------------------------------------
# The data loader
# ---------------------------------------------------------------------------


def file_numbers(relative: str) -> list[float]:
    return [float(t) for t in data.data_path(relative).read_text().split()]


@pytest.mark.parametrize("relative", ["gmm/test.txt", "gmm/1k/gmm_d10_K5.txt"])
def test_gmm_reader_keeps_the_file_order(relative):
    numbers = file_numbers(relative)
    problem = data.read_gmm(relative)
    d, k, n = (int(v) for v in numbers[:3])
    assert (problem.d, problem.k, problem.n) == (d, k, n)
    flat = np.concatenate([problem.alphas, problem.means.ravel(), problem.icf.ravel(), problem.x.ravel()])
    assert flat.tolist() == numbers[3:-2]
    assert (problem.gamma, problem.m) == (numbers[-2], int(numbers[-1]))
    assert problem.icf.shape == (k, d * (d + 1) // 2)


def test_gmm_1k_points_are_the_first_of_10k():
    small, large = data.read_gmm("gmm/1k/gmm_d2_K10.txt"), data.read_gmm("gmm/10k/gmm_d2_K10.txt")
    assert np.array_equal(small.x, large.x[:1000])
    assert np.array_equal(small.icf, large.icf)


def test_gmm_reader_replicates_a_single_point(tmp_path, monkeypatch):
    (tmp_path / "gmm").mkdir()
    (tmp_path / "gmm" / "one.txt").write_text("2 1 4\n0.5\n1 2\n0.1 0.2 0.3\n7 8\n1.5 3\n")
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)
    problem = data.read_gmm("gmm/one.txt")
    assert problem.x.tolist() == [[7.0, 8.0]] * 4
    assert (problem.gamma, problem.m) == (1.5, 3)


def test_ba_reader_replicates_like_adbench():
    relative = "ba/ba1_n49_m7776_p31843.txt"
    numbers = file_numbers(relative)
    problem = data.read_ba(relative)
    n, m, p = (int(v) for v in numbers[:3])
    assert problem.cams.shape == (n, 11) and problem.X.shape == (m, 3)
    assert problem.w.shape == (p,) and problem.feats.shape == (p, 2)
    assert (problem.cams == numbers[3:14]).all()
    assert (problem.X == numbers[14:17]).all()
    assert (problem.w == numbers[17]).all()
    assert (problem.feats == numbers[18:20]).all()
    i = np.arange(p)
    assert (problem.obs[:, 0] == i % n).all() and (problem.obs[:, 1] == i % m).all()


def test_missing_data_names_the_path_and_sources(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "DATA_DIR", tmp_path / "absent")
    with pytest.raises(data.MissingDataError) as error:
        data.read_ba("ba/test.txt")
    message = str(error.value)
    assert str(tmp_path / "absent" / "ba" / "test.txt") in message
    assert "SOURCES.md" in message


# ---------------------------------------------------------------------------
# GMM
# ---------------------------------------------------------------------------

GMM_FILES = [
    "gmm/test.txt",
    "gmm/1k/gmm_d2_K5.txt",
    "gmm/1k/gmm_d10_K5.txt",
    "gmm/1k/gmm_d64_K5.txt",
    "gmm/10k/gmm_d2_K10.txt",
]


def gmm_args(problem: Any) -> tuple[Any, ...]:
    return (0.0, problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m)


@pytest.mark.parametrize("relative", GMM_FILES)
def test_gmm_objective_matches_numpy_and_jax(relative):
    problem = data.read_gmm(relative)
    found = gmm.gmm_objective(*gmm_args(problem))[0]
    inputs = (problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m)
    assert found == pytest.approx(gmm_reference(np, *inputs), rel=RTOL)
    assert found == pytest.approx(float(gmm_jax(*inputs)), rel=RTOL)


def test_gmm_runs_natively():
    args = gmm_args(data.read_gmm("gmm/test.txt"))
    assert gmm.gmm_objective.specialization_for(*args).native is not None


def test_gmm_inverse_restores_the_inputs():
    problem = data.read_gmm("gmm/1k/gmm_d10_K5.txt")
    args = gmm_args(problem)
    copies = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
    outputs = gmm.gmm_objective(*args)
    for out, before in zip(outputs[1:7], copies[1:7]):
        assert np.array_equal(out, before)  # the inputs are only read
    restored = (~gmm.gmm_objective)(*outputs)
    assert restored[0] == pytest.approx(0.0, abs=1e-15 * abs(outputs[0]) * problem.n)
    for out, before in zip(restored[1:], copies[1:]):
        np.testing.assert_allclose(out, before, atol=1e-9)


@pytest.mark.parametrize("relative", ["gmm/test.txt", "gmm/1k/gmm_d2_K5.txt", "gmm/1k/gmm_d10_K5.txt"])
def test_gmm_gradient_matches_jax(relative):
    problem = data.read_gmm(relative)
    gradient = rv.gradient(gmm.gmm_objective, gmm_args(problem), iloss=0)
    expected = gmm_jax_gradient(problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m)
    # alphas, means, icf, and also the points and the Wishart gamma
    for found, reference in zip(gradient[1:6], expected, strict=True):
        np.testing.assert_allclose(found, reference, rtol=1e-9, atol=1e-9 * np.abs(reference).max())


# ---------------------------------------------------------------------------
# BA
# ---------------------------------------------------------------------------

BA_FILES = [
    "ba/test.txt",
    "ba/ba1_n49_m7776_p31843.txt",
    "ba/ba2_n21_m11315_p36455.txt",
    "ba/ba3_n161_m48126_p182072.txt",
]


def ba_args(problem: Any) -> tuple[Any, ...]:
    p = len(problem.w)
    return np.zeros((p, 2)), np.zeros(p), problem.cams, problem.X, problem.w, problem.obs, problem.feats


def ba_references(problem: Any) -> list[tuple[Any, Any]]:
    """The residuals from numpy and from JAX."""
    cams, X = problem.cams[problem.obs[:, 0]], problem.X[problem.obs[:, 1]]
    return [
        (reproj(cams, X, problem.w, problem.feats), 1 - problem.w**2)
        for reproj in (partial(reproj_reference, np), reproj_jax)
    ]


def assert_residuals_close(found: np.ndarray, expected: Any) -> None:
    """Relative agreement, with an absolute floor at the residuals' scale: a
    residual is ``w·(projection − feature)``, which cancels when the
    projection lands near the feature, leaving the rounding of terms of the
    projection's size."""
    expected = np.asarray(expected)
    np.testing.assert_allclose(found, expected, rtol=RTOL, atol=RTOL * np.abs(expected).max())


@pytest.mark.parametrize("relative", BA_FILES)
def test_ba_residuals_match_numpy_and_jax(relative):
    problem = data.read_ba(relative)
    reproj_err, w_err, *_ = ba.ba_objective(*ba_args(problem))
    for reproj_expected, w_expected in ba_references(problem):
        assert_residuals_close(reproj_err, reproj_expected)
        assert_residuals_close(w_err, w_expected)


def perturbed_problem(seed: int, zero_rotation: bool = False) -> Any:
    """ba/test.txt with every camera, point, weight and feature perturbed
    differently, so that observations are not all the same; optionally with
    the first camera's rotation exactly zero (Rodrigues' small-angle branch)."""
    problem = data.read_ba("ba/test.txt")
    rng = np.random.default_rng(seed)
    cams = problem.cams * (1 + 0.1 * rng.normal(size=problem.cams.shape))
    if zero_rotation:
        cams[0, 0:3] = 0.0
    return data.BAInstance(
        cams=cams,
        X=problem.X * (1 + 0.1 * rng.normal(size=problem.X.shape)),
        w=problem.w * (1 + 0.1 * rng.normal(size=problem.w.shape)),
        obs=problem.obs,
        feats=problem.feats * (1 + 0.1 * rng.normal(size=problem.feats.shape)),
    )


@pytest.mark.parametrize("zero_rotation", [False, True])
def test_ba_residuals_on_varied_observations(zero_rotation):
    problem = perturbed_problem(1, zero_rotation)
    reproj_err, w_err, *_ = ba.ba_objective(*ba_args(problem))
    for reproj_expected, w_expected in ba_references(problem):
        assert_residuals_close(reproj_err, reproj_expected)
        assert_residuals_close(w_err, w_expected)


def test_ba_runs_natively():
    args = ba_args(data.read_ba("ba/test.txt"))
    assert ba.ba_objective.specialization_for(*args).native is not None


def test_ba_inverse_restores_the_inputs():
    problem = perturbed_problem(2, zero_rotation=True)
    args = ba_args(problem)
    copies = [np.array(a) for a in args]
    restored = (~ba.ba_objective)(*ba.ba_objective(*args))
    for out, before in zip(restored, copies):
        np.testing.assert_allclose(out, before, atol=1e-12)


def reprojection_jacobian(problem: Any, i: int) -> np.ndarray:
    """The 2 × 15 block ``∂err_i / ∂(camera, point, weight)`` from two
    gradients of ``compute_reproj_error``, one per residual."""
    c, p = (int(v) for v in problem.obs[i])
    args = (0.0, 0.0, problem.cams, c, problem.X, p, problem.w[i], *problem.feats[i])
    rows = []
    for component in (0, 1):
        gradient = rv.gradient(ba.compute_reproj_error, args, iloss=component)
        cams_gradient, X_gradient = gradient[2], gradient[4]
        # only the observed camera and point carry gradient
        assert not np.delete(cams_gradient, c, axis=0).any()
        assert not np.delete(X_gradient, p, axis=0).any()
        rows.append(np.concatenate([cams_gradient[c], X_gradient[p], [gradient[6]]]))
    return np.array(rows)


def reprojection_jacobian_reference(problem: Any, i: int) -> np.ndarray:
    c, p = problem.obs[i]
    blocks = reproj_jax_jacobian(problem.cams[c], problem.X[p], problem.w[i], problem.feats[i])
    return np.concatenate([blocks[0], blocks[1], blocks[2][:, None]], axis=1)


@pytest.mark.parametrize(
    "problem, observations",
    [
        (data.read_ba("ba/ba1_n49_m7776_p31843.txt"), [0, 48, 7776, 31842]),
        (perturbed_problem(3), range(10)),
        (perturbed_problem(4, zero_rotation=True), [0, 2]),  # camera 0: θ = 0
    ],
    ids=["ba1", "ba_test_perturbed", "small_angle"],
)
def test_ba_jacobian_blocks_match_jax(problem, observations):
    for i in observations:
        found = reprojection_jacobian(problem, i)
        expected = reprojection_jacobian_reference(problem, i)
        np.testing.assert_allclose(found, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
        w = problem.w[i]
        weight_block = rv.gradient(ba.compute_zach_weight_error, (0.0, w), iloss=0)[1]
        assert weight_block == pytest.approx(float(jax.grad(lambda v: 1 - v * v)(w)), rel=1e-14)


reproj_jax_block_jacobians = jax.jit(jax.vmap(jax.jacrev(partial(reproj_reference, jnp), argnums=(0, 1, 2))))


@pytest.mark.parametrize(
    "problem",
    [data.read_ba("ba/ba1_n49_m7776_p31843.txt"), perturbed_problem(5), perturbed_problem(6, zero_rotation=True)],
    ids=["ba1", "ba_test_perturbed", "small_angle"],
)
def test_ba_jacobian_program_matches_jax_on_every_observation(problem):
    """``ba_jacobian`` computes every block natively with in-program adjoint
    calls (``rv.adjoint``); JAX's ``vmap(jacrev)`` of the reference is the
    check."""
    p = len(problem.w)
    J, wJ = np.zeros((p, 2, 15)), np.zeros(p)
    shadows = [
        np.zeros_like(problem.cams),
        np.zeros_like(problem.X),
        np.zeros_like(problem.cams),
        np.zeros_like(problem.X),
    ]
    args = (J, wJ, problem.cams, problem.X, problem.w, problem.obs, problem.feats, *shadows)
    assert ba.ba_jacobian.specialization_for(*args).native is not None
    ba.ba_jacobian(*args)
    c, x = problem.cams[problem.obs[:, 0]], problem.X[problem.obs[:, 1]]
    blocks = reproj_jax_block_jacobians(c, x, problem.w, problem.feats)
    expected = np.concatenate([blocks[0], blocks[1], np.asarray(blocks[2])[..., None]], axis=-1)
    np.testing.assert_allclose(J, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
    np.testing.assert_allclose(wJ, -2 * problem.w, rtol=1e-15)
    assert not any(s.any() for s in shadows)  # the shadow workspaces come back zero


# ---------------------------------------------------------------------------
# Regression test for a fix made while writing these programs
# ---------------------------------------------------------------------------


@rv.reversible
def _add_indexed(out, i, v):
    out += v[i]


@rv.reversible
def _nested_read_then_call(y, i, v, work):
    with rv.routine() as r:
        for j in range(len(work)):
            work[j] += v[i]
        _add_indexed(y, i, v)
    y += work[0]
    ~r


def test_a_read_nested_in_a_region_that_later_passes_the_variable_to_a_call():
    # The for loop read the function's %i while the routine, which passes i
    # to a call (and so carries it), consumed that version: the builder
    # imported outer state into the innermost region only (main_term in
    # adbench_gmm.py has this shape).
    v, work = np.array([1.5, 2.5]), np.zeros(3)
    assert _nested_read_then_call(0.25, 1, v, work)[0] == 0.25 + 2.5
    assert (work == 0).all()
