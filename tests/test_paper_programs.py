"""The NiLang paper's programs (seed 000) written in reversible Python
(``@rv.reversible``), run forward and backward on the interpreter, with the
values the paper states.  The programs live in examples/python/paper_*.py.

Section 3: multiplier (Listing 4), complex log (Listings 5 and 6), recursive
Fibonacci (Listing 11).  Appendix A: Bennett's algorithm (Listing 12).
Appendix B: affine map, unitary from rotations, power with log numbers
(Listings 13, 14, 16).  Appendix D.1: sparse matrix products (Listings 22,
23).  Appendix F: the leapfrog integrator and its round-off (Listings 25, 26).

The end of the file holds regression tests for frontend/builder fixes found
while writing these programs.
"""

from __future__ import annotations

import cmath
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import revmlir as rv
from python_examples import load_example as _load

basics = _load("paper_basics")
bennett_mod = _load("paper_bennett")
appendix_b = _load("paper_appendix_b")
sparse = _load("paper_sparse")
leapfrog_mod = _load("paper_leapfrog")


# ---------------------------------------------------------------------------
# Section 3.1, Listing 4: the multiplier
# ---------------------------------------------------------------------------


def test_multiplier_paper_values():
    multiplier = basics.multiplier
    assert multiplier(2, 3, 5) == (17, 3, 5)
    assert (~multiplier)(17, 3, 5) == (2, 3, 5)
    assert multiplier(2.0, 3.0, 5.0) == (17.0, 3.0, 5.0)
    assert multiplier.inverse(17.0, 3.0, 5.0) == (2.0, 3.0, 5.0)


# ---------------------------------------------------------------------------
# Section 3.2, Listings 5 and 6: complex log, by hand and with a routine
# ---------------------------------------------------------------------------

CLOG_POINTS = [3 - 4j, 3 + 4j, -1.5 + 0.25j, -2 - 1e-3j, 1e-3 + 0j, 7j, -0.5 + 0j]


@pytest.mark.parametrize("name", ["complex_log", "complex_log_routine"])
@pytest.mark.parametrize("x", CLOG_POINTS)
def test_complex_log_matches_cmath_and_inverts(name, x):
    clog = getattr(basics, name)
    y0 = 0.25 - 0.5j
    spec = clog.specialization_for(y0, x)
    y, x_out = clog(y0, x)
    assert x_out == x
    assert cmath.isclose(y, y0 + cmath.log(x), rel_tol=1e-14, abs_tol=1e-15)
    assert spec.interpreter.live_ancillas == 0  # n was uncomputed and freed
    back, x_back = (~clog)(y, x)
    assert x_back == x
    assert cmath.isclose(back, y0, abs_tol=1e-14)


def test_complex_log_listings_build_the_structure_they_name():
    hand = basics.complex_log.mlir(0j, 1j)
    routine = basics.complex_log_routine.mlir(0j, 1j)
    assert "anc.alloc" in hand and "anc.free" in hand and "rev.routine" not in hand
    assert "rev.routine" in routine
    # Listing 6 is Listing 5 with the uncompute written by the compiler.
    for x in CLOG_POINTS:
        assert basics.complex_log(0j, x) == basics.complex_log_routine(0j, x)


# ---------------------------------------------------------------------------
# Section 3.3, Listing 11: recursive Fibonacci
# ---------------------------------------------------------------------------


def _fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def test_rrfib_gives_fibonacci_numbers():
    rrfib = basics.rrfib
    # out! += fib(n + 1): rrfib(0, n) for n = 0, 1, 2, … is 1, 1, 2, 3, 5, 8, …
    values = [rrfib(0, n) for n in range(16)]
    assert values == [(_fib(n + 1), n) for n in range(16)]
    assert rrfib(0, 10) == (89, 10)
    assert rrfib(100, 5) == (108, 5)  # out! accumulates


@pytest.mark.parametrize("n", [0, 1, 2, 7, 12])
def test_rrfib_inverse_restores(n):
    out, n_out = basics.rrfib(0, n)
    assert (~basics.rrfib)(out, n_out) == (0, n)
    assert basics.rrfib.inverse(out + 3, n) == (3, n)


def test_rrfib_is_recursive_and_has_the_checkoff_block():
    text = basics.rrfib.mlir(0, 5)
    assert "rev.call @rrfib" in text
    assert "rev.while" in text and "nocheck" in text
    spec = basics.rrfib.specialization_for(0, 10)
    spec.interpreter.reset_counters()
    spec.run((0, 10), backward=False, backend="interpreter")
    # every invocation adds exactly 1 to out!, so the recursion tree
    # (top-level call included) has fib(n + 1) = 89 nodes for n = 10
    assert spec.interpreter.counters["rrfib"].invocations == _fib(11)


# ---------------------------------------------------------------------------
# Appendix A, Listing 12: Bennett's time-space trade-off, k = 4
# ---------------------------------------------------------------------------

K = bennett_mod.K


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_bennett_values_steps_and_peak_memory(n):
    s_in = 0.75
    (a, b, level), steps, peak = bennett_mod.run_counted(s_in, 0.0, n)
    assert (a, level) == (s_in, n)
    assert b == 2.0 ** (K**n) * s_in  # exact: every step doubles
    assert steps == (2 * K - 1) ** n  # 7, 49, 343, 2401
    # NiLang's PEAK_MEM counts the two endpoint states as well
    assert peak + 2 == n * (K - 1) + 2
    spec = bennett_mod.bennett.specialization_for(s_in, 0.0, n)
    assert spec.interpreter.live_ancillas == 0
    # ~bennett clears s_out again, at the same cost
    back, steps_back, peak_back = bennett_mod.run_counted(a, b, level, backward=True)
    assert back == (s_in, 0.0, n)
    assert (steps_back, peak_back) == (steps, peak)


def test_bennett_paper_values_k4_n4():
    (a, b, level), steps, peak = bennett_mod.run_counted(1.0, 0.0, 4)
    assert b == 2.0**256  # state[N+1] ≈ 2.0^N, N = k^n = 256
    assert steps == 2401  # PROG_COUNTER == (2k-1)^n
    assert peak + 2 == 14  # PEAK_MEM == n(k-1)+2


def test_bennett_accumulates_and_matches_the_mlir_version():
    out = bennett_mod.bennett(3.0, 5.0, 2)
    assert out == (3.0, 5.0 + 2.0**16 * 3.0, 2)
    assert (~bennett_mod.bennett)(*out) == (3.0, 5.0, 2)
    text = bennett_mod.bennett.mlir(1.0, 0.0, 1)
    assert text.count("rev.call @bennett") == 4 and text.count("rev.uncall @bennett") == 3
    assert text.count("anc.alloc") == 3  # t1, t2, t3: no other ancillas


# ---------------------------------------------------------------------------
# Appendix B.1, Listing 13: in-place affine map
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1, 1), (3, 2), (4, 7), (9, 5)])
def test_affine_matches_numpy_and_inverts(shape):
    rng = np.random.default_rng(sum(shape))
    m, n = shape
    W, b, x = rng.normal(size=(m, n)), rng.normal(size=m), rng.normal(size=n)
    y0 = rng.normal(size=m)
    y = y0.copy()
    out = appendix_b.i_affine(y, W, b, x)
    assert out[0] is y  # arrays are updated in place and returned
    np.testing.assert_allclose(y, y0 + W @ x + b, rtol=1e-13, atol=1e-14)
    appendix_b.i_affine.inverse(y, W, b, x)
    np.testing.assert_allclose(y, y0, rtol=0, atol=1e-14)


def test_affine_asserts_its_shapes():
    # Listing 13's @safe @assert, a run-time check at the assertion
    with pytest.raises(rv.ExecutionError, match="'cf.assert' in @i_affine: i_affine: shapes do not match"):
        appendix_b.i_affine(np.zeros(2), np.zeros((3, 2)), np.zeros(3), np.zeros(2))


# ---------------------------------------------------------------------------
# Appendix B.2, Listing 14: unitary matrix from rotations
# ---------------------------------------------------------------------------


def _givens_reference(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Listing 14 (column per column) reimplemented with numpy."""
    x = x.copy()
    m, n = x.shape
    for col in range(n):
        k = 0
        for j in range(m):
            for i in range(m - 2, j - 1, -1):
                c, s = np.cos(theta[k]), np.sin(theta[k])
                a, b = x[i, col], x[i + 1, col]
                x[i, col], x[i + 1, col] = c * a - s * b, s * a + c * b
                k += 1
    return x


@pytest.mark.parametrize("shape", [(2, 1), (4, 3), (6, 2), (8, 4)])
def test_unitary_matches_numpy_preserves_norm_and_inverts(shape):
    rng = np.random.default_rng(10 * shape[0] + shape[1])
    m, _ = shape
    x0 = rng.normal(size=shape)
    theta = rng.uniform(-math.pi, math.pi, size=m * (m - 1) // 2)
    x = x0.copy()
    appendix_b.i_umm(x, theta)
    np.testing.assert_allclose(x, _givens_reference(x0, theta), rtol=0, atol=1e-14)
    u = appendix_b.unitary_matrix(theta, m)
    np.testing.assert_allclose(u.T @ u, np.eye(m), atol=1e-14)
    np.testing.assert_allclose(x, u @ x0, atol=1e-13)
    np.testing.assert_allclose(np.linalg.norm(x, axis=0), np.linalg.norm(x0, axis=0), rtol=1e-14)
    appendix_b.i_umm.inverse(x, theta)
    np.testing.assert_allclose(x, x0, rtol=0, atol=1e-14)


# ---------------------------------------------------------------------------
# Appendix B.3, Listing 16: power with log numbers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("x, n", [(2.0, 10), (1.5, 3), (0.5, 7), (3.25, 0), (1.01, 100), (1e-3, 5)])
def test_power_with_log_numbers(x, n):
    out0 = 0.125
    out, x_out, n_out = appendix_b.mypower(out0, x, n)
    assert (x_out, n_out) == (x, n)
    assert out == pytest.approx(out0 + x**n, rel=1e-13)
    back = appendix_b.mypower.inverse(out, x, n)
    assert back[0] == pytest.approx(out0, abs=1e-12)
    assert back[1:] == (x, n)


def test_power_of_zero_takes_the_other_branch():
    assert appendix_b.mypower(0.0, 0.0, 3) == (0.0, 0.0, 3)
    assert appendix_b.mypower(2.0, 2.0, 10) == (1026.0, 2.0, 10)


# ---------------------------------------------------------------------------
# Appendix D.1, Listings 22 and 23: sparse matrices (CSR arrays)
# ---------------------------------------------------------------------------

SPARSE_CASES = [  # (rows, cols, density, seed)
    (1, 1, 1.0, 0),
    (5, 7, 0.3, 1),
    (12, 9, 0.5, 2),
    (30, 20, 0.1, 3),
    (40, 40, 0.05, 4),
]


def _random_csr(m: int, n: int, density: float, seed: int, dtype=np.float64) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    matrix = sp.random(m, n, density=density, format="csr", random_state=rng, dtype=np.float64)
    if np.dtype(dtype).kind == "c":
        matrix = matrix + 1j * sp.random(m, n, density=density, format="csr", random_state=rng, dtype=np.float64)
    return sp.csr_matrix(matrix, dtype=dtype)


@pytest.mark.parametrize("m, n, density, seed", SPARSE_CASES)
def test_sparse_matvec_matches_scipy_and_inverts(m, n, density, seed):
    A = _random_csr(m, n, density, seed)
    rng = np.random.default_rng(100 + seed)
    x = rng.normal(size=n)
    y0 = rng.normal(size=m)
    alpha = 1.75
    data, indices, indptr = sparse.csr_arrays(A)
    y = y0.copy()
    sparse.csr_mul(y, data, indices, indptr, x, alpha)
    np.testing.assert_allclose(y, y0 + alpha * (A @ x), rtol=1e-13, atol=1e-13)
    sparse.csr_mul.inverse(y, data, indices, indptr, x, alpha)
    np.testing.assert_allclose(y, y0, rtol=0, atol=1e-13)


@pytest.mark.parametrize("m, n, density, seed", SPARSE_CASES[1:4])
def test_sparse_csc_listing_23_matches_scipy_and_inverts(m, n, density, seed):
    A = _random_csr(m, n, density, seed).tocsc()
    A.sort_indices()
    rng = np.random.default_rng(200 + seed)
    B = rng.normal(size=(n, 3))
    C0 = rng.normal(size=(m, 3))
    nzval, rowval, colptr = A.data, A.indices, A.indptr  # CSC arrays, scipy's int32
    C = C0.copy()
    sparse.csc_mul(C, nzval, rowval, colptr, B, 0.5)
    np.testing.assert_allclose(C, C0 + 0.5 * (A @ B), rtol=1e-13, atol=1e-13)
    sparse.csc_mul.inverse(C, nzval, rowval, colptr, B, 0.5)
    np.testing.assert_allclose(C, C0, rtol=0, atol=1e-13)


def _dot_args(A: sp.csr_matrix, B: sp.csr_matrix) -> tuple[np.ndarray, ...]:
    keeper = np.zeros(2 * A.shape[1], dtype=bool)
    return (*sparse.csr_arrays(A), *sparse.csr_arrays(B), keeper)


@pytest.mark.parametrize("m, n, density, seed", SPARSE_CASES)
def test_sparse_dot_matches_scipy_and_inverts(m, n, density, seed):
    A = _random_csr(m, n, density, seed)
    B = _random_csr(m, n, density, seed + 50)
    args = _dot_args(A, B)
    keeper = args[-1]
    r0 = -0.375
    r, *rest = sparse.csr_dot(r0, *args)
    assert r == pytest.approx(r0 + A.multiply(B).sum(), rel=1e-13, abs=1e-13)
    assert not keeper.any()  # branch_keeper → zeros(Bool, 2m)
    back, *_ = sparse.csr_dot.inverse(r, *args)
    assert back == pytest.approx(r0, abs=1e-13)
    assert not keeper.any()


def test_sparse_dot_of_overlapping_patterns_and_empty_rows():
    # Same pattern (every entry matches), a row empty in A only, one empty in
    # B only, one empty in both, and interleaved patterns.
    A = sp.csr_matrix(np.array([[1.0, 2, 0, 3], [0, 0, 0, 0], [4, 0, 0, 0], [0, 0, 0, 0], [0, 5, 0, 6]]))
    B = sp.csr_matrix(np.array([[7.0, 8, 0, 9], [1, 0, 2, 0], [0, 0, 0, 0], [0, 0, 0, 0], [3, 0, 4, 0]]))
    r, *_ = sparse.csr_dot(0.0, *_dot_args(A, B))
    assert r == 1 * 7 + 2 * 8 + 3 * 9
    r, *_ = sparse.csr_dot(0.0, *_dot_args(A, A))
    assert r == (A.toarray() ** 2).sum()


def test_sparse_dot_complex_conjugates_a():
    A = _random_csr(10, 8, 0.4, 7, dtype=np.complex128)
    B = _random_csr(10, 8, 0.4, 8, dtype=np.complex128)
    r, *_ = sparse.csr_dot(0j, *_dot_args(A, B))
    expected = (A.conj().multiply(B)).sum()  # Julia's A.nzval[ia]' * B.nzval[ib]
    assert cmath.isclose(r, expected, rel_tol=1e-13)
    back, *_ = sparse.csr_dot.inverse(r, *_dot_args(A, B))
    assert abs(back) < 1e-13


def test_sparse_programs_take_scipy_int32_and_int64_indices():
    # scipy stores indices as int32; csr_dot mixes them with int literals
    # (i32 - 1 widens through arith.extsi, which must count as pure).
    A = _random_csr(9, 7, 0.4, 9)
    B = _random_csr(9, 7, 0.4, 10)
    assert A.indices.dtype == np.int32
    expected = A.multiply(B).sum()
    for dtype in (np.int32, np.int64):
        keeper = np.zeros(14, dtype=bool)
        arrays = (*sparse.csr_arrays(A, dtype), *sparse.csr_arrays(B, dtype))
        assert arrays[1].dtype == dtype
        r, *_ = sparse.csr_dot(0.0, *arrays, keeper)
        assert r == pytest.approx(expected, rel=1e-13)
        x = np.arange(7.0)
        y = np.zeros(9)
        sparse.csr_mul(y, *sparse.csr_arrays(A, dtype), x, 1.0)
        np.testing.assert_allclose(y, A @ x, rtol=1e-14)


# ---------------------------------------------------------------------------
# Appendix F, Listings 25 and 26: leapfrog round-off
# ---------------------------------------------------------------------------

LEAPFROG_DT = 0.01  # years


def _leapfrog_round_trip(program, nsteps: int):
    x0, v0, m = leapfrog_mod.solar_system()
    x, v = x0.copy(), v0.copy()
    program(x, v, m, leapfrog_mod.G_SOLAR, LEAPFROG_DT, nsteps)
    forward = x.copy(), v.copy()
    program.inverse(x, v, m, leapfrog_mod.G_SOLAR, LEAPFROG_DT, nsteps)
    x_regular, v_regular = leapfrog_mod.leapfrog_regular(x0, v0, m, leapfrog_mod.G_SOLAR, LEAPFROG_DT, nsteps)
    return {
        "forward": forward,
        "regular": (x_regular, v_regular),
        "vs_regular": max(abs(forward[0] - x_regular).max(), abs(forward[1] - v_regular).max()),
        "round_trip_x": abs(x - x0).max(),
        "round_trip_v": abs(v - v0).max(),
    }


def test_leapfrog_1000_steps_forward_then_backward_restores_the_state(record_property):
    nsteps = 1000
    result = _leapfrog_round_trip(leapfrog_mod.leapfrog, nsteps)
    rx, rv_ = result["round_trip_x"], result["round_trip_v"]
    report = (
        f"leapfrog (Listing 25), Sun+Jupiter+Saturn, {nsteps} steps of {LEAPFROG_DT} yr: "
        f"max round-off after forward+inverse: |x - x0| = {rx:.3e} AU, "
        f"|v - v0| = {rv_:.3e} AU/yr; max |reversible - regular| = {result['vs_regular']:.3e}"
    )
    print(report)
    record_property("leapfrog_round_off_x", float(rx))
    record_property("leapfrog_round_off_v", float(rv_))
    # The orbits moved: Jupiter went most of the way round.
    x_end = result["forward"][0]
    assert abs(x_end[1] - leapfrog_mod.solar_system()[0][1]).max() > 1.0, report
    # Reversible and regular programs agree (the paper's overlapping lines).
    np.testing.assert_allclose(result["forward"][0], result["regular"][0], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(result["forward"][1], result["regular"][1], rtol=1e-13, atol=1e-13)
    # Forward then backward: the initial state comes back to round-off
    # (positions are up to ~10 AU, speeds ~3 AU/yr).
    assert rx < 1e-12 and rv_ < 1e-12, report


def test_leapfrog_cumulative_uncompute_accumulates_more_error(record_property):
    # Listing 26 uncomputes into the positions themselves (rb -= ra; rb += ra),
    # so its forward run drifts from the regular program and its round trip
    # is less exact than Listing 25's — the paper's "(cumulative)" curve.
    nsteps = 50
    clean = _leapfrog_round_trip(leapfrog_mod.leapfrog, nsteps)
    cumulative = _leapfrog_round_trip(leapfrog_mod.leapfrog_cumulative, nsteps)
    report = (
        f"{nsteps} steps: Listing 25 round trip |x - x0| = {clean['round_trip_x']:.3e}, "
        f"vs regular {clean['vs_regular']:.3e}; Listing 26 round trip "
        f"|x - x0| = {cumulative['round_trip_x']:.3e}, vs regular {cumulative['vs_regular']:.3e}"
    )
    print(report)
    record_property("leapfrog_cumulative_round_off_x", float(cumulative["round_trip_x"]))
    assert cumulative["vs_regular"] > clean["vs_regular"], report
    assert cumulative["round_trip_x"] > clean["round_trip_x"], report
    assert cumulative["round_trip_x"] < 1e-10, report  # still restored


# ---------------------------------------------------------------------------
# Regression tests for fixes made while writing these programs
# ---------------------------------------------------------------------------


@rv.reversible
def _count_rows(x, k):
    c = rv.ancilla(0)
    for i in range(x.shape[0]):
        rv.inc(c)
    k += c
    rv.free(c, x.shape[0])  # index-typed value for an i64 ancilla


def test_free_checks_an_ancilla_against_a_value_of_another_integer_type():
    # builder.free used to emit anc.free %c, %idx with mismatched types
    # (index vs i64), rejected by the verifier with an empty message.
    x = np.zeros((5, 2))
    assert _count_rows(x, 0)[1] == 5
    assert _count_rows.inverse(x, 5)[1] == 0


@rv.reversible
def _conj_of_real(y, x):
    y += np.conj(x) * 2.0


def test_conj_of_a_real_value_is_the_value():
    # np.conj(x) on a float used to fail with "'conj' is not defined on f64".
    assert _conj_of_real(1.0, 3.0) == (7.0, 3.0)


@rv.reversible
def _shape_reads(total, a):
    for i in range(len(a)):
        for j in range(a.shape[1]):
            total += a[i, j]


def test_array_dimensions_compile_without_deprecation_warnings():
    # x.shape[d] and len(x) used memref.DimOp.from_source_and_index, which
    # xDSL 0.74 deprecates; pytest runs with warnings as errors.
    a = np.arange(6.0).reshape(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _shape_reads(0.0, a)[0] == 15.0
