"""Split points anywhere (seed 001): ``rv.checkpointed(…, split="work")``
flattens a loop nest into one loop of primitive steps, so checkpointing can
split inside an outer iteration.  On seed 001's adaptive-grid example
(examples/python/rotations.py) the gradient equals the store-all one, the
checkpointed one at outer iterations and central finite differences; the
steps it reverses are the primitive steps, counted first, and the snapshots
it holds are the schedule's."""

import numpy as np
import pytest

import revmlir as rv
from python_examples import load_example
from revmlir.frontend.base.derived import own_gradient

R = load_example("rotations")

X = np.linspace(0.1, 1.0, 8)


@pytest.mark.parametrize("l", [4, 16])
def test_gradients_agree_with_store_all_and_finite_differences(l):
    reference = rv.gradient(R.rotations, (X.copy(), l, 1.0))[0]
    for f in (R.rotations_iterations, R.rotations_work):
        np.testing.assert_allclose(rv.gradient(f, (X.copy(), l, 1.0))[0], reference, rtol=1e-12, atol=1e-13)
    h = 1e-6
    central = [
        (R.rotations_numpy(X + h * e, l, 1.0) - R.rotations_numpy(X - h * e, l, 1.0)) / (2 * h) for e in np.eye(len(X))
    ]
    np.testing.assert_allclose(reference, central, rtol=1e-7, atol=1e-8)


def test_the_steps_are_primitive_steps():
    """Each outer iteration is 2 + m(i) steps (begin, m updates, end); every
    step is taped once; plain steps are the count plus Revolve's optimum; the
    snapshots held are the schedule's peak, in two stores (index words and
    f64 state)."""
    f = rv.ordinary(R.rotations_work.pyfunc, backend="interpreter")
    x, l = np.linspace(0.1, 1.0, 4), 8
    np.testing.assert_allclose(
        rv.gradient(f, (x.copy(), l, 1.0))[0], rv.gradient(R.rotations, (x.copy(), l, 1.0))[0], rtol=1e-12
    )
    spec = f.specialization_for(x, l, 1.0).checkpointed_gradient
    run = own_gradient(spec)
    steps = sum(R.durations(l, 1.0)) + 2 * l
    stats = rv.checkpoint.binomial(steps, 4).stats()
    name = f"{spec.name}.ckpt.step0"
    assert run.counters[f"{name}.adj"].calls == stats["taped"] == steps
    assert run.counters[name].calls == stats["taped"]  # plain steps run the untaped copy
    assert run.counters[f"{name}.plain"].calls == steps + stats["plain"]
    assert run.peak_snapshots == 2 * stats["peak"]
    assert max(R.durations(l, 1.0)) == l  # one outer iteration is as long as all others


def test_split_needs_one_inner_loop():
    def two_loops(x, l):
        for i in rv.checkpointed(range(l), snapshots=2, split="work"):
            for j in range(2):
                x[0] = x[0] * 0.5
            for j in range(2):
                x[1] = x[1] * 0.5
        return x[0] + x[1]

    f = rv.ordinary(two_loops)
    assert f(np.ones(2), 1) == 0.5
    with pytest.raises(rv.ReversibleSyntaxError, match="exactly one inner for loop"):
        rv.gradient(f, (np.ones(2), 1))


def test_split_must_be_a_known_literal():
    def bad(x, l):
        for i in rv.checkpointed(range(l), split="anywhere"):
            x[0] = x[0] * 0.5
        return x[0]

    with pytest.raises(rv.ReversibleSyntaxError, match="split must be 'iterations' or 'work'"):
        rv.ordinary(bad)(np.ones(2), 3)
