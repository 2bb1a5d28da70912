"""The NiLang paper's programs (examples/*.mlir) run forward and backward.

Each test states the values the paper (or plain numpy/cmath) gives, runs the
example through the reference interpreter, and checks that ``f`` followed by
``~f`` gives the inputs back: exactly for integers, to rounding for floats.
The last group runs ``rev-invert`` on every example and checks that the
generated ``@f.inv`` does what the interpreter's ``uncall`` does.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from revmlir.dialects.rev import RoutineOp
from revmlir.errors import InvertibilityError
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.expand_routines import RevExpandRoutinesPass
from revmlir.passes.invert import RevInvertPass

EXAMPLES = Path(__file__).parent.parent / "examples"
ALL_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*.mlir"))


def load(name: str) -> RevInterpreter:
    path = EXAMPLES / name
    return RevInterpreter(parse_module(path.read_text(), str(path)))


# ---------------------------------------------------------------------------
# Listing 4: the multiplier
# ---------------------------------------------------------------------------


def test_multiplier_listing_4():
    interp = load("multiplier.mlir")
    assert interp.call("multiplier", 2, 3, 5) == (17, 3, 5)
    assert interp.uncall("multiplier", 17, 3, 5) == (2, 3, 5)


@pytest.mark.parametrize("y, a, b", [(0, 0, 0), (-7, 11, -13), (2**62, 2**31, 2**31), (-(2**63), -1, 1)])
def test_multiplier_round_trip_is_exact(y, a, b):
    interp = load("multiplier.mlir")
    out = interp.call("multiplier", y, a, b)
    # i64 arithmetic wraps (two's complement), and still inverts exactly.
    expected = (y + a * b + 2**63) % 2**64 - 2**63
    assert out == (expected, a, b)
    assert interp.uncall("multiplier", *out) == (y, a, b)


# ---------------------------------------------------------------------------
# Listing 11: Fibonacci (tested in test_interpreter_basics; one large case here)
# ---------------------------------------------------------------------------


def test_fibonacci_listing_11():
    interp = load("fibonacci.mlir")
    assert interp.call("rrfib", 0, 15) == (987, 15)
    assert interp.uncall("rrfib", 987, 15) == (0, 15)
    assert interp.live_ancillas == 0


# ---------------------------------------------------------------------------
# Listings 5 and 6: the complex logarithm, with and without rev.routine
# ---------------------------------------------------------------------------

COMPLEX_LOG = ["complex_log.mlir", "complex_log_routine.mlir"]
XS = [
    complex(3.0, -4.0),  # |x| = 5
    complex(1.0, 0.0),  # log 1 = 0
    complex(-2.0, 0.0),  # Arg = π
    complex(-1.0, -1e-3),  # Arg close to -π
    complex(0.0, 0.5),
    complex(1e-8, 2e5),
]


@pytest.mark.parametrize("example", COMPLEX_LOG)
@pytest.mark.parametrize("x", XS)
def test_complex_log_adds_cmath_log(example, x):
    interp = load(example)
    y = complex(0.5, -0.25)
    y_out, x_out = interp.call("complex_log", y, x)
    assert x_out == x
    expected = y + cmath.log(x)
    assert cmath.isclose(y_out, expected, rel_tol=1e-14, abs_tol=1e-14)
    # ~f restores y to rounding, and the ancilla n was freed both ways.
    y_back, x_back = interp.uncall("complex_log", y_out, x)
    assert x_back == x
    assert cmath.isclose(y_back, y, rel_tol=1e-12, abs_tol=1e-12)
    assert interp.live_ancillas == 0
    assert interp.peak_live_ancillas == 1  # only n


def test_complex_log_values_from_the_paper_identity():
    # y += log(|x|) + i Arg(x) with x = 3 - 4i and y = 0: log 5 - i atan(4/3)
    interp = load("complex_log.mlir")
    (y, _) = interp.call("complex_log", 0j, complex(3, -4))
    assert y.real == pytest.approx(math.log(5.0), abs=1e-15)
    assert y.imag == pytest.approx(-math.atan2(4.0, 3.0), abs=1e-15)


@pytest.mark.parametrize("x", XS)
def test_complex_log_versions_agree(x):
    y = complex(-1.5, 2.0)
    plain = load("complex_log.mlir").call("complex_log", y, x)
    routine = load("complex_log_routine.mlir").call("complex_log", y, x)
    assert plain == routine


def test_complex_log_of_zero():
    # log(0) = -inf (IEEE): y becomes infinite, and n is still cleared
    # (n -= |x| with |x| = 0), so the ancilla check passes.
    interp = load("complex_log_routine.mlir")
    y, _ = interp.call("complex_log", 1 + 1j, 0j)
    assert y.real == -math.inf
    assert interp.live_ancillas == 0


# ---------------------------------------------------------------------------
# Appendix A, Listing 12: Bennett's time-space trade-off, k = 4
# ---------------------------------------------------------------------------

K = 4


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_bennett_counts_steps_and_ancillas(n):
    interp = load("bennett.mlir")
    length = K**n  # len = k^n unit steps; @bennett takes the level n
    s_in, s_out, level = interp.call("bennett", 1.0, 0.0, n)
    assert (s_in, level) == (1.0, n)
    assert s_out == 2.0**length  # exact: every step doubles a power of two
    # (2k - 1)^n unit steps, forward and backward: 7^4 = 2401 for n = 4
    assert interp.counters["step"].invocations == (2 * K - 1) ** n
    calls, uncalls = _bennett_step_directions(n)
    assert interp.counters["step"].calls == calls
    assert interp.counters["step"].uncalls == uncalls
    # n(k - 1) intermediate states live at the peak (12 for n = 4); with the
    # two endpoint states passed in that is NiLang's PEAK_MEM = n(k - 1) + 2.
    assert interp.peak_live_ancillas == n * (K - 1)
    assert interp.live_ancillas == 0
    # ~bennett clears s_out again and has the same cost.
    interp.reset_counters()
    assert interp.uncall("bennett", s_in, s_out, level) == (1.0, 0.0, n)
    assert interp.counters["step"].invocations == (2 * K - 1) ** n
    assert interp.peak_live_ancillas == n * (K - 1)
    assert interp.live_ancillas == 0


def _bennett_step_directions(n: int) -> tuple[int, int]:
    """(calls, uncalls) of @step in a forward @bennett of level n.

    Forward, a sector runs k sub-sectors forward (P) and k - 1 backward (Q);
    backward, the mirror image: k - 1 forward and k backward.
    """
    forward, backward = 1, 0
    for _ in range(n):
        forward, backward = (
            K * forward + (K - 1) * backward,
            (K - 1) * forward + K * backward,
        )
    return forward, backward


def test_bennett_256_steps_paper_values():
    interp = load("bennett.mlir")
    s_in = 0.75
    out = interp.call("bennett", s_in, 0.0, 4)
    assert out == (s_in, 2.0**256 * s_in, 4)
    assert interp.counters["step"].invocations == 2401
    assert interp.peak_live_ancillas == 12  # + s_in, s_out = 14 live states
    assert interp.uncall("bennett", *out) == (s_in, 0.0, 4)


def test_bennett_accumulates_into_s_out():
    interp = load("bennett.mlir")
    out = interp.call("bennett", 3.0, 5.0, 2)
    assert out == (3.0, 5.0 + 2.0**16 * 3.0, 2)
    assert interp.uncall("bennett", *out) == (3.0, 5.0, 2)


def test_bennett_step_is_the_unit_step():
    interp = load("bennett.mlir")
    assert interp.call("step", 1.0, 3.0) == (7.0, 3.0)
    assert interp.uncall("step", 7.0, 3.0) == (1.0, 3.0)


# ---------------------------------------------------------------------------
# Appendix B.1, Listing 13: in-place affine map
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("rows, cols", [(3, 4), (1, 1), (5, 2)])
def test_affine_matches_numpy(rows, cols):
    rng = np.random.default_rng(rows * 10 + cols)
    W = rng.normal(size=(rows, cols))
    x = rng.normal(size=cols)
    b = rng.normal(size=rows)
    y = rng.normal(size=rows)
    y0, W0, x0, b0 = y.copy(), W.copy(), x.copy(), b.copy()
    interp = load("affine.mlir")
    out = interp.call("i_affine", y, W, b, x)
    assert out[0] is y  # updated in place and returned
    np.testing.assert_allclose(y, y0 + W0 @ x0 + b0, rtol=1e-13, atol=1e-13)
    for array, original in [(W, W0), (x, x0), (b, b0)]:
        np.testing.assert_array_equal(array, original)
    interp.uncall("i_affine", y, W, b, x)
    np.testing.assert_allclose(y, y0, rtol=1e-12, atol=1e-12)


def test_affine_small_exact_values():
    y = np.array([1.0, 2.0])
    W = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x = np.array([1.0, 0.0, -1.0])
    b = np.array([10.0, 20.0])
    interp = load("affine.mlir")
    interp.call("i_affine", y, W, b, x)
    np.testing.assert_array_equal(y, [1.0 - 2.0 + 10.0, 2.0 - 2.0 + 20.0])
    interp.uncall("i_affine", y, W, b, x)
    np.testing.assert_array_equal(y, [1.0, 2.0])


def test_affine_rejects_a_short_y():
    interp = load("affine.mlir")
    W = np.ones((3, 2))
    with pytest.raises(Exception, match="out of bounds"):
        interp.call("i_affine", np.zeros(2), W, np.zeros(3), np.zeros(2))


# ---------------------------------------------------------------------------
# Appendix B.2, Listing 14: a unitary from Givens rotations
# ---------------------------------------------------------------------------


def ummm_reference(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Listing 14 in numpy, 0-based: every rotation acts on column 0."""
    x = x.copy()
    M, N = x.shape
    k = 0
    for _ in range(N):
        for j in range(M):
            for i in range(M - 2, j - 1, -1):
                c, s = math.cos(theta[k]), math.sin(theta[k])
                a, b = x[i, 0], x[i + 1, 0]
                x[i, 0], x[i + 1, 0] = a * c - b * s, a * s + b * c
                k += 1
    assert k == len(theta)
    return x


@pytest.mark.parametrize("M, N", [(4, 3), (5, 1), (2, 2), (1, 3)])
def test_unitary_matches_numpy_and_preserves_the_norm(M, N):
    rng = np.random.default_rng(M * 7 + N)
    x = rng.normal(size=(M, N))
    theta = rng.uniform(-math.pi, math.pi, size=N * M * (M - 1) // 2)
    x0, theta0 = x.copy(), theta.copy()
    interp = load("unitary.mlir")
    interp.call("i_ummm", x, theta)
    np.testing.assert_allclose(x, ummm_reference(x0, theta0), rtol=1e-14, atol=1e-14)
    assert np.linalg.norm(x[:, 0]) == pytest.approx(np.linalg.norm(x0[:, 0]), rel=1e-14)
    np.testing.assert_array_equal(x[:, 1:], x0[:, 1:])  # only column 1 of x! moves
    np.testing.assert_array_equal(theta, theta0)
    assert interp.counters["i_ummm"].instructions >= N * M * (M - 1) // 2
    assert interp.live_ancillas == 0
    interp.uncall("i_ummm", x, theta)
    np.testing.assert_allclose(x, x0, rtol=1e-13, atol=1e-13)


def test_unitary_quarter_turns():
    # M = 2, N = 1: one rotation by π/2 maps (a, b) to (-b, a).
    x = np.array([[1.0], [2.0]])
    interp = load("unitary.mlir")
    interp.call("i_ummm", x, np.array([math.pi / 2]))
    np.testing.assert_allclose(x[:, 0], [-2.0, 1.0], atol=1e-15)


def test_unitary_checks_k_against_the_length_of_theta():
    # k → length(θ): a θ with one angle too many leaves k ≠ length(θ).
    x = np.ones((3, 1))
    interp = load("unitary.mlir")
    with pytest.raises(InvertibilityError, match="ancilla"):
        interp.call("i_ummm", x, np.zeros(4))


# ---------------------------------------------------------------------------
# Appendix B.3, Listing 16: power with log numbers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, n",
    [(2.0, 10), (1.5, 7), (0.3, 5), (3.0, 0), (7.0, 1), (1.0001, 200), (10.0, 20)],
)
def test_power_matches_x_to_the_n(x, n):
    interp = load("power.mlir")
    out0 = 0.25
    out, x_out, n_out = interp.call("mypower", out0, x, n)
    assert (x_out, n_out) == (x, n)
    assert out == pytest.approx(out0 + x**n, rel=1e-12)
    assert interp.live_ancillas == 0
    assert interp.peak_live_ancillas == 2  # ly and lx, whatever n is
    back = interp.uncall("mypower", out, x, n)
    assert back[1:] == (x, n)
    assert back[0] == pytest.approx(out0, rel=1e-9, abs=1e-9 * max(1.0, abs(out)))


def test_power_exact_small_case():
    interp = load("power.mlir")
    assert interp.call("mypower", 0.0, 2.0, 10) == (1024.0, 2.0, 10)
    assert interp.uncall("mypower", 1024.0, 2.0, 10) == (0.0, 2.0, 10)


def test_power_of_zero_takes_the_else_branch():
    interp = load("power.mlir")
    assert interp.call("mypower", 0.5, 0.0, 3) == (0.5, 0.0, 3)
    assert interp.peak_live_ancillas == 0  # the routine never ran
    assert interp.uncall("mypower", 0.5, 0.0, 3) == (0.5, 0.0, 3)


# ---------------------------------------------------------------------------
# rev-invert on every example: @f.inv is ~f
# ---------------------------------------------------------------------------

Args = Callable[[], tuple[Any, ...]]


def _affine_args() -> tuple[Any, ...]:
    rng = np.random.default_rng(1)
    return (
        rng.normal(size=3),
        rng.normal(size=(3, 2)),
        rng.normal(size=3),
        rng.normal(size=2),
    )


def _unitary_args() -> tuple[Any, ...]:
    rng = np.random.default_rng(2)
    return (rng.normal(size=(4, 2)), rng.uniform(-3, 3, size=12))


INVERT_CASES: dict[str, tuple[str, Args]] = {
    "multiplier.mlir": ("multiplier", lambda: (2, 3, 5)),
    "fibonacci.mlir": ("rrfib", lambda: (0, 9)),
    "complex_log.mlir": ("complex_log", lambda: (0.5 + 1j, complex(3, -4))),
    "complex_log_routine.mlir": ("complex_log", lambda: (0.5 + 1j, complex(-2, 1))),
    "bennett.mlir": ("bennett", lambda: (1.0, 0.0, 2)),
    "affine.mlir": ("i_affine", _affine_args),
    "unitary.mlir": ("i_ummm", _unitary_args),
    "power.mlir": ("mypower", lambda: (0.25, 1.5, 7)),
}


def test_every_example_has_an_inversion_case():
    assert sorted(INVERT_CASES) == ALL_EXAMPLES


def _copy(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(v.copy() if isinstance(v, np.ndarray) else v for v in values)


def _assert_same(actual: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(a, e)
        else:
            assert a == e


@pytest.mark.parametrize("example", ALL_EXAMPLES)
def test_rev_invert_matches_uncall(example):
    func, make_args = INVERT_CASES[example]
    path = EXAMPLES / example
    ctx = make_context()
    module = parse_module(path.read_text(), str(path), ctx)
    RevInvertPass().apply(ctx, module)
    module.verify()
    interp = RevInterpreter(module)

    args = make_args()
    forward = interp.call(func, *_copy(args))
    via_uncall = interp.uncall(func, *_copy(forward))
    via_inv = interp.call(func + ".inv", *_copy(forward))
    _assert_same(via_inv, via_uncall)
    # and both give the inputs back (to rounding for floats)
    for got, want in zip(via_inv, args):
        if isinstance(want, int):
            assert got == want
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # ~(f.inv) is f
    _assert_same(interp.uncall(func + ".inv", *_copy(args)), forward)


@pytest.mark.parametrize("example", ALL_EXAMPLES)
def test_inverting_twice_in_place_gives_f_back(example):
    func, make_args = INVERT_CASES[example]
    path = EXAMPLES / example
    ctx = make_context()
    module = parse_module(path.read_text(), str(path), ctx)
    forward = RevInterpreter(module.clone()).call(func, *make_args())
    for _ in range(2):
        RevInvertPass(in_place=True).apply(ctx, module)
        module.verify()
    _assert_same(RevInterpreter(module).call(func, *make_args()), forward)


@pytest.mark.parametrize("example", ["complex_log_routine.mlir", "power.mlir"])
def test_expanded_routines_compute_the_same(example):
    func, make_args = INVERT_CASES[example]
    path = EXAMPLES / example
    ctx = make_context()
    module = parse_module(path.read_text(), str(path), ctx)
    forward = RevInterpreter(module.clone()).call(func, *make_args())
    RevExpandRoutinesPass().apply(ctx, module)
    module.verify()
    assert not any(isinstance(op, RoutineOp) for op in module.walk())
    interp = RevInterpreter(module)
    _assert_same(interp.call(func, *make_args()), forward)
    back = interp.uncall(func, *forward)
    for got, want in zip(back, make_args()):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("example", ALL_EXAMPLES)
def test_rev_opt_inverts_the_example(served, example):
    result = served("rev-opt", str(EXAMPLES / example), "-p", "rev-invert")
    assert result.returncode == 0, result.stderr
    func = INVERT_CASES[example][0]
    assert f"rev.func @{func}.inv(" in result.stdout
    # and the printed module parses back
    parse_module(result.stdout, example)


@pytest.mark.parametrize("example", ALL_EXAMPLES)
def test_example_cites_its_listing(example):
    text = (EXAMPLES / example).read_text()
    assert text.startswith("//")
    header = "".join(text.splitlines(keepends=True)[:3])
    assert "seed 000" in header and "Listing" in header


def test_fixed_point_oscillator_returns_bit_for_bit():
    """examples/python/fixed_point.py: 2000 fixed-point steps and back give
    the initial integers; the state and its gradient follow the closed form
    (tests/test_fixed_point.py compares gradients with the f64 program's)."""
    from python_examples import load_example

    example = load_example("fixed_point")
    dt, n = 0.005, 2000
    start, end, back = example.run(0.6, -0.8, dt, n)
    assert back == start and end != start
    t = dt * n
    x = 0.6 * math.cos(t) - 0.8 * math.sin(t)
    assert float(end[0]) == pytest.approx(x, abs=5 * dt)
    gradient = example.rv.gradient(example.oscillator, start)
    np.testing.assert_allclose(gradient[:2], [math.cos(t), math.sin(t)], atol=5 * dt)


# ---------------------------------------------------------------------------
# examples/python/user_primitives.py: lgamma as a user primitive
# ---------------------------------------------------------------------------


def test_user_primitives_example_fits_a_gamma_distribution():
    """The gradient through the lgamma primitive equals JAX's and central
    differences, and the fit it drives is scipy's maximum-likelihood fit."""
    import scipy.stats

    from python_examples import load_example

    example = load_example("user_primitives")
    x = example.samples(n=100)
    ours = example.gradient(2.0, 1.0, x)
    assert ours == pytest.approx(example.jax_gradient(2.0, 1.0, x), rel=1e-12)
    assert ours == pytest.approx(example.central_differences(2.0, 1.0, x), rel=1e-6)
    k, theta = example.fit(x, steps=40)
    shape, _, scale = scipy.stats.gamma.fit(x, floc=0)
    assert (k, theta) == pytest.approx((shape, scale), rel=1e-4)


# ---------------------------------------------------------------------------
# examples/python/blas_primitives.py: BLAS ddot/daxpy as array primitives
# ---------------------------------------------------------------------------


def test_blas_primitives_example_differentiates_and_inverts_a_leapfrog():
    """The example's gradient of the leapfrog energy through the
    hand-written BLAS adjoints equals JAX's, and ~leapfrog undoes it
    (tests/test_array_primitives.py checks more)."""
    from python_examples import load_example

    example = load_example("blas_primitives")
    q, p = example.initial_state()
    ours = example.energy_gradient(0.1, q, p, 20)
    reference = example.jax_gradient(0.1, q, p, 20)
    assert ours[0] == pytest.approx(reference[0], rel=1e-12)
    for mine, theirs in zip(ours[1:], reference[1:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)
    energy, _, q1, p1, _ = example.leapfrog(0.0, 0.1, q.copy(), p.copy(), 20)
    back = (~example.leapfrog)(energy, 0.1, q1, p1, 20)
    np.testing.assert_allclose(back[2:4], [q, p], atol=1e-13)
