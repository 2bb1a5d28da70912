"""Seed 001's rotations example exactly as the seed states it
(examples/python/rotations.py): ``x₀ = (n, …, 1)``, outer iterations
``i = 1 … l`` of ``m(i)`` steps ``x = rot2(1.4‖x‖, rot1(1.2‖x‖, x))``, output
``‖x‖²/2``.  At the seed's ``n = 1000``, ``φ = 3`` the exact answer is
``f = 166916750`` and ``∇f = x₀``, under every schedule; the interpreter
agrees with native code, and the snapshots it holds are the schedule's."""

import math

import numpy as np
import pytest
from python_examples import load_example

import revmlir as rv
from revmlir.frontend.gradient import own_gradient

R = load_example("rotations")
X0 = R.seed_state()


def seed_inner_count(i: int, l: int, phi: float) -> int:
    """The seed's Fortran: ``2**(ilog2(l) - ilog2(1 + int(mod(1013·3**phi·i,
    l))))``, with ``ilog2`` as integer bit lengths."""
    return 2 ** ((l.bit_length() - 1) - (1 + int(math.fmod(1013.0 * 3.0**phi * i, l))).bit_length() + 1)


@pytest.mark.parametrize("l", R.L)
def test_inner_counts_are_the_seeds(l):
    """i runs 1 … l: the last iteration (``i = l``, ``mod`` 0) is one of the
    longest, ``2^⌊lg l⌋`` steps."""
    counts = R.durations(l, R.PHI)
    assert counts == [seed_inner_count(i, l, R.PHI) for i in range(1, l + 1)]
    assert counts[-1] == max(counts) == 2 ** (l.bit_length() - 1)


def test_seed_state_and_its_exact_objective():
    assert len(X0) == R.N == 1000 and X0[0] == 1000.0 and X0[-1] == 1.0
    assert 0.5 * X0 @ X0 == R.EXACT == 166916750.0


@pytest.mark.parametrize("l", [53, 101])
@pytest.mark.parametrize("schedule", list(R.SCHEDULES))
def test_seed_001_value_and_gradient_under_every_schedule(schedule, l):
    """The seed's own sizes and inputs, unscaled: f to 10⁻¹² and ∇f = x₀ to
    10⁻⁸ in every component.  (The accumulator of ‖x‖² reaches 3.3·10⁸ and
    its uncomputation ends ~10⁻⁷ off zero: the gradient used to fail with
    "ancilla freed holding -1.09e-07", docs/design.md, decision 25.)"""
    f = R.SCHEDULES[schedule]
    value = f(X0.copy(), l, R.PHI)
    assert value == pytest.approx(R.EXACT, rel=1e-12)
    assert value == pytest.approx(R.rotations_numpy(X0, l, R.PHI), rel=1e-12)
    g_x, g_l, g_phi = rv.gradient(f, (X0.copy(), l, R.PHI))
    assert R.relative_error(g_x, X0) <= 1e-8
    assert (g_l, g_phi) == (0.0, 0.0)


@pytest.mark.parametrize("form", ["rotations", "rotations_bisection"])
def test_interpreter_agrees_with_native_code(form):
    """A small case (n = 6, l = 5) on both engines: the same value and
    gradient, and the exact one.  Under bisection the interpreter's snapshot
    records are the schedule's peak over the primitive steps, two records
    (index words, the state x) per snapshot."""
    native = getattr(R, form)
    interpreted = rv.ordinary(native.pyfunc, backend="interpreter")
    x, l = R.seed_state(6), 5
    assert interpreted(x.copy(), l, R.PHI) == pytest.approx(native(x.copy(), l, R.PHI), rel=1e-14)
    g = rv.gradient(interpreted, (x.copy(), l, R.PHI))[0]
    np.testing.assert_allclose(g, rv.gradient(native, (x.copy(), l, R.PHI))[0], rtol=1e-13)
    np.testing.assert_allclose(g, x, rtol=1e-13)
    if form == "rotations_bisection":
        spec = interpreted.specialization_for(x, l, R.PHI).checkpointed_gradient
        run = own_gradient(spec)
        steps = sum(R.durations(l, R.PHI)) + 2 * l
        assert run.peak_snapshots == 2 * rv.checkpoint.bisection(steps).stats()["peak"]
