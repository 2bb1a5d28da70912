"""``rv.adjoint(f)``: the gradient program as a function, from Python and
inside reversible functions (``rev.call @f.adj``), so a program can compute
many gradients natively.  Checked against ``rv.gradient`` and closed forms."""

import math

import numpy as np
import pytest

import revmlir as rv


@rv.reversible
def model(y, x, a):
    y += math.sin(x[0]) * a * x[1]


def expected_gradient(x, a):
    return [math.cos(x[0]) * a * x[1], math.sin(x[0]) * a], math.sin(x[0]) * x[1]


@rv.reversible
def gradient_into(G, x, a, gx):
    """``G += ∂model/∂(x, a)`` with ``gx`` a zeroed shadow workspace."""
    y = rv.ancilla(0.0)
    model(y, x, a)
    gy = rv.ancilla(1.0)
    ga = rv.ancilla(0.0)
    rv.adjoint(model)(y, x, a, gy, gx, ga)
    for i in range(len(gx)):
        G[i], gx[i] = gx[i], G[i]
    G[len(gx)], ga = ga, G[len(gx)]
    rv.free(ga)
    rv.free(gy, 1.0)
    rv.free(y)


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_in_program_adjoint_calls(backend):
    f = rv.reversible(gradient_into.pyfunc, backend=backend)
    x, a = np.array([0.3, 2.0]), 1.5
    G, gx = np.zeros(3), np.zeros(2)
    f(G, x, a, gx)
    gx_expected, ga_expected = expected_gradient(x, a)
    np.testing.assert_allclose(G, [*gx_expected, ga_expected], rtol=1e-14)
    assert not gx.any()
    assert "rev.call @model.adj" in f.mlir(G, x, a, gx)
    (~f)(G, x, a, gx)  # and backwards: the gradient is uncomputed
    np.testing.assert_allclose(G, 0.0, atol=1e-15)


def test_host_call_runs_the_adjoint():
    x, a = np.array([0.3, 2.0]), 1.5
    y = model(0.0, x, a)[0]
    out = rv.adjoint(model)(y, x, a, 1.0, np.zeros(2), 0.0)
    assert out[0] == 0.0  # y uncomputed
    gx_expected, ga_expected = expected_gradient(x, a)
    np.testing.assert_allclose(out[4], gx_expected)
    assert out[5] == pytest.approx(ga_expected)
    assert out[5] == rv.gradient(model, (0.0, x, a))[2]


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="takes 3 argument.* and 3 gradient"):
        rv.adjoint(model)(0.0, np.ones(2), 1.0, 1.0)
    with pytest.raises(TypeError, match="expects a @rv.reversible function"):
        rv.adjoint(math.sin)

    @rv.reversible
    def too_few(y, x, a):
        rv.adjoint(model)(y, x, a, y)

    with pytest.raises(rv.ReversibleSyntaxError, match=r"takes 3 argument\(s\) \(y, x, a\) and then one gradient"):
        too_few(0.0, np.ones(2), 1.0)

    @rv.reversible
    def wrong_type(y, x, a, g):
        gy = rv.ancilla(0.0)
        ga = rv.ancilla(0.0)
        rv.adjoint(model)(y, x, a, gy, g, ga)
        rv.free(ga)
        rv.free(gy)

    with pytest.raises(rv.ReversibleSyntaxError, match="gradient of rv.adjoint.model. must be"):
        wrong_type(0.0, np.ones(2), 1.0, 0.0)
