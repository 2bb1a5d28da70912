"""Seed 001's rotations example exactly as the seed states it
(examples/python/rotations.py): ``x₀ = (n, …, 1)``, outer iterations
``i = 1 … l`` of ``m(i)`` steps ``x = rot2(1.4‖x‖, rot1(1.2‖x‖, x))``, output
``‖x‖²/2``.  At the seed's ``n = 1000``, ``φ = 3`` the exact answer is
``f = 166916750`` and ``∇f = x₀``: the unannotated program's gradient
under ``rv.gradient(…, checkpoint=…)``'s policies meets 10⁻⁸ relative at
``l = 53`` and ``101`` both componentwise (``max_k |g_k − x₀_k| / x₀_k``) and
normwise (``‖g − x₀‖ / ‖x₀‖``); the interpreter agrees with native code, and
the steps it reverses and the snapshots it holds are the schedule's.

Of the policies, the seed's own (bisection) and Bennett's tape run here at
the seed's sizes (each checkpointed gradient of this program takes seconds
to compile); tests/test_checkpoint_anywhere.py checks that every policy's
gradient equals store-all's and JAX's, and
benchmarks/bench_checkpoint_anywhere.py checks every policy at the seed's
sizes.  The marked forms (``rv.checkpointed``) are checked by
tests/test_split_points.py on the same program at small sizes."""

import math

import numpy as np
import pytest

import revmlir as rv
from python_examples import load_benchmark, load_example
from revmlir.frontend.base.checkpoint_policy import CheckpointPolicy
from revmlir.frontend.base.derived import own_gradient

R = load_example("rotations")
X0 = R.seed_state()
BASE = 64
"""Segments to a checkpointed step at the seed's sizes: a rotation step is
about 2n = 2000 segments, and one segment per step takes 1.6 s (bisection)
to 8 s (store_all) per gradient at l = 101; single segments are checked on
the interpreter at a small size."""


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
@pytest.mark.parametrize("policy", ["bisection", "Bennett's tape"])
def test_seed_001_value_and_gradient_with_no_annotation(policy, l):
    """The seed's own sizes and inputs, unscaled and unmarked: f to 10⁻¹²
    and ∇f = x₀ to 10⁻⁸, in every component and as a vector (the errors
    are about 5·10⁻¹¹ and 1.5·10⁻¹⁰ at these sizes, a uniform scale, so
    both measures agree; at l = 3203 the float64 program's conditioning
    puts both above 10⁻⁸, as it does JAX's and the float64 reference's
    below, benchmarks/RESULTS.md).  (The accumulator of
    ‖x‖² reaches 3.3·10⁸ and its uncomputation ends ~10⁻⁷ off zero: the
    gradient used to fail with "ancilla freed holding -1.09e-07",
    docs/design.md, decision 25.)"""
    value = R.rotations(X0.copy(), l, R.PHI)
    assert value == pytest.approx(R.EXACT, rel=1e-12)
    assert value == pytest.approx(R.rotations_numpy(X0, l, R.PHI), rel=1e-12)
    options = R.POLICIES[policy] | ({"base": BASE} if R.POLICIES[policy] else {})
    g_x, g_l, g_phi = rv.gradient(R.rotations, (X0.copy(), l, R.PHI), **options)
    assert R.relative_error(g_x, X0) <= 1e-8
    assert R.normwise_error(g_x, X0) <= 1e-8
    assert (g_l, g_phi) == (0.0, 0.0)


def test_interpreter_agrees_with_native_code():
    """A small case (n = 4, l = 4) under bisection on both engines, one
    segment to a step on the interpreter, ``BASE`` in native code (compiled
    once with the test above): the same value and gradient, and the exact
    one.  The size still has what the seed's has: both rotation loops
    (two pairs from 0, one from 1), outer iterations of one, two and the
    longest, ``2^⌊lg l⌋ = 4``, steps, and 114 segments, which bisection
    splits many levels deep (a peak of 8 snapshots); the interpreter's
    time is proportional to the segments (169 at n = 6, l = 5).  On the interpreter the steps reversed are the program's segments,
    each run as the schedule says, and the snapshot records held peak at the
    schedule's peak, two records (index and f64 slots, the state x with
    them) per snapshot.  (One policy only: preparing the interpreter's
    resumable gradient takes most of this test's time; the policies share
    the machinery, tests/test_checkpoint_anywhere.py checks each.)"""
    interpreted = rv.ordinary(R.rotations.pyfunc, backend="interpreter")
    x, l = R.seed_state(4), 4
    options = R.POLICIES["bisection"]
    assert interpreted(x.copy(), l, R.PHI) == pytest.approx(R.rotations(x.copy(), l, R.PHI), rel=1e-14)
    spec = interpreted.specialization_for(x, l, R.PHI).resumable_gradient(
        CheckpointPolicy.of(**options, api="gradient").schedule(0), 1
    )
    run = own_gradient(spec)
    run.reset_counters()
    g = rv.gradient(interpreted, (x.copy(), l, R.PHI), **options, base=1)[0]
    native = rv.gradient(R.rotations, (x.copy(), l, R.PHI), **options, base=BASE)[0]
    np.testing.assert_allclose(g, native, rtol=1e-13)
    np.testing.assert_allclose(g, x, rtol=1e-13)
    steps = run.counters[f"{spec.name}.ckpt.step0.adj"].calls
    stats = rv.checkpoint.bisection(steps).stats()
    assert steps == R.segments(l, R.PHI, len(x))  # segments, about 2n to a rotation step
    step = f"{spec.name}.ckpt.step0"
    assert run.counters[step].calls == stats["taped"]  # taped, then reversed
    assert run.counters[f"{step}.plain"].calls == steps + stats["plain"]  # counted, recomputed: untaped
    assert run.peak_snapshots == 2 * stats["peak"]


def test_the_float64_reference_is_the_seeds_program_and_its_adjoint():
    """benchmarks/rotations_precision.py's references, which RESULTS.md sets
    beside our gradient's precision: the seed's Fortran with the adjoint a
    source transformer writes for it (float64) and the same in
    ``longdouble``.  Each is the seed's program (its value is numpy's) and
    its gradient is the exact one to the rounding of its precision, at a
    small size and at the seed's ``l = 53``."""
    P = load_benchmark("rotations_precision")
    x, l = R.seed_state(6), 5
    counts = np.array(R.durations(l, R.PHI))
    f, g = P.taped_gradient(x, counts)
    assert f == pytest.approx(R.rotations_numpy(x, l, R.PHI), rel=1e-14)
    np.testing.assert_allclose(g, x, rtol=1e-13)
    np.testing.assert_allclose(P.taped_gradient(x, counts, np.longdouble)[1].astype(float), x, rtol=1e-15)
    f, g = P.taped_gradient(X0, np.array(R.durations(53, R.PHI)))
    assert f == pytest.approx(R.EXACT, rel=1e-12)
    assert 1e-13 < R.relative_error(g, X0) < 1e-9
