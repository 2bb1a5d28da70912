"""Section 5 of "Inverse Accumulation Mode" on a reversible integrator
(``examples/python/ode_inverse.py``): the four derivative programs converge
to the linear ODEs (5.11a–d), solved independently by scipy, at the
integrator's order, and satisfy the invariants (4.7a–d)."""

from __future__ import annotations

import numpy as np
import pytest

from python_examples import load_example

ode = load_example("ode_inverse")

STEPS = [20, 40, 80]


@pytest.mark.parametrize(("scheme", "expected_order"), [("symplectic Euler", 1.0), ("leapfrog", 2.0)])
def test_every_mode_converges_to_its_linear_ode_at_the_integrators_order(scheme, expected_order):
    z0, vector = ode.problem(3, seed=2)
    errors = ode.convergence(ode.SCHEMES[scheme], z0, vector, 1.5, STEPS)
    for name in ode.MODES:
        assert errors[name][-1] < errors[name][0], (name, errors[name])
        assert ode.order(STEPS, errors[name]) == pytest.approx(expected_order, abs=0.1), (name, errors[name])


def test_reference_inverse_modes_undo_the_forward_ones():
    """The reference itself: integrating (5.11a) forward and then (5.11c)
    backward from its result gives the seed back (J⁻¹ J u = u), and the
    same for the adjoint pair; this checks ``reference`` independently of
    revmlir."""
    z0, u = ode.problem(3, seed=3)
    forward = ode.reference(z0, u, 1.0)
    back = ode.reference(z0, forward["tangent"], 1.0)["inverse tangent"]
    np.testing.assert_allclose(back, u, rtol=1e-8, atol=1e-10)
    adjoint_then_inverse = ode.reference(z0, forward["inverse adjoint"], 1.0)["adjoint"]
    np.testing.assert_allclose(adjoint_then_inverse, u, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("scheme", list(ode.SCHEMES))
def test_invariants_4_7_hold_to_round_off(scheme):
    z0, _ = ode.problem(3, seed=4)
    rng = np.random.default_rng(5)
    run = ode.Run(ode.SCHEMES[scheme], z0, 1.0, 30)
    residuals = ode.invariants(run, rng.standard_normal(len(z0)), rng.standard_normal(len(z0)))
    assert max(residuals.values()) < 1e-12, residuals


def test_inverse_tangent_matches_a_dense_solve():
    """J⁻¹u from the program against numpy's solve on J assembled column by
    column from the tangent program."""
    z0, u = ode.problem(2, seed=6)
    run = ode.Run(ode.leapfrog, z0, 0.5, 10)
    jac = np.column_stack([run.mode("tangent", e) for e in np.eye(len(z0))])
    np.testing.assert_allclose(run.mode("inverse tangent", u), np.linalg.solve(jac, u), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(run.mode("inverse adjoint", u), np.linalg.solve(jac.T, u), rtol=1e-10, atol=1e-12)


def test_damped_euler_inverse_modes_grow_where_the_primal_decays():
    """The seed's stability remark on a dissipative primal (ordinary code,
    inverse modes through lumps): the adjoint shrinks like exp(−γT/2), both
    inverse modes grow like exp(γT/2), and all three stay within O(Δt) of
    the damped linear ODEs."""
    z0, vector = ode.problem(2, seed=7)
    gamma = 1.0
    found = ode.dissipative(z0, vector, 0.05, gamma, [1.0, 3.0])
    assert found["adjoint"][1] < found["adjoint"][0] < 1.0
    for name in ("inverse tangent", "inverse adjoint"):
        assert 1.0 < found[name][0] < found[name][1]
        assert found[name][1] / found["adjoint"][1] > 0.25 * np.exp(gamma * 3.0)
    assert max(found["error"]) < 0.1
