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


model_adjoint, model_inverse = rv.adjoint(model), ~model


@rv.reversible
def through_names(y, x, a, gy, gx, ga):
    """``model``, its adjoint and an uncall of ``model``, each called by a
    global name bound to it: ``y`` holds ``model``'s output between them."""
    model(y, x, a)
    model_adjoint(y, x, a, gy, gx, ga)
    model(y, x, a)
    model_inverse(y, x, a)
    (~model_inverse)(y, x, a)


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_names_bound_to_an_adjoint_or_an_inverse_are_called_as_they_are(backend):
    f = rv.reversible(through_names.pyfunc, backend=backend)
    x, a = np.array([0.3, 2.0]), 1.5
    y, _, _, gy, gx, ga = f(0.0, x, a, 1.0, np.zeros(2), 0.0)
    gx_expected, ga_expected = expected_gradient(x, a)
    np.testing.assert_allclose(gx, gx_expected, rtol=1e-14)
    assert (y, gy, ga) == (model(0.0, x, a)[0], 1.0, pytest.approx(ga_expected, rel=1e-14))
    text = f.mlir(0.0, x, a, 1.0, np.zeros(2), 0.0)
    assert "rev.call @model.adj(" in text and "rev.uncall @model(" in text


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
        rv.adjoint(model)(y, x, a, 1.0)

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


@rv.reversible
def two_gradients_into(G, x, a, gx0, gx1):
    """Row r of ``G`` += ∂(lane r's seed · model)/∂(x, a): two lanes of
    ``@model.adj2`` in one backward run, seeds 1 and −2."""
    y = rv.ancilla(0.0)
    model(y, x, a)
    gy0 = rv.ancilla(1.0)
    gy1 = rv.ancilla(-2.0)
    ga0 = rv.ancilla(0.0)
    ga1 = rv.ancilla(0.0)
    rv.adjoint(model, lanes=2)(y, x, a, gy0, gx0, ga0, gy1, gx1, ga1)
    for i in range(len(gx0)):
        G[0, i], gx0[i] = gx0[i], G[0, i]
        G[1, i], gx1[i] = gx1[i], G[1, i]
    G[0, len(gx0)], ga0 = ga0, G[0, len(gx0)]
    G[1, len(gx0)], ga1 = ga1, G[1, len(gx0)]
    rv.free(ga0)
    rv.free(ga1)
    rv.free(gy0, 1.0)
    rv.free(gy1, -2.0)
    rv.free(y)


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_in_program_adjoint_calls_with_lanes(backend):
    f = rv.reversible(two_gradients_into.pyfunc, backend=backend)
    x, a = np.array([0.3, 2.0]), 1.5
    G, gx0, gx1 = np.zeros((2, 3)), np.zeros(2), np.zeros(2)
    f(G, x, a, gx0, gx1)
    gx_expected, ga_expected = expected_gradient(x, a)
    row = np.array([*gx_expected, ga_expected])
    np.testing.assert_allclose(G, [row, -2.0 * row], rtol=1e-14)
    assert not gx0.any() and not gx1.any()
    text = f.mlir(G, x, a, gx0, gx1)
    assert "rev.call @model.adj2" in text and "@model.adj(" not in text
    (~f)(G, x, a, gx0, gx1)
    np.testing.assert_allclose(G, 0.0, atol=1e-15)


def test_host_call_with_lanes():
    x, a = np.array([0.3, 2.0]), 1.5
    y = model(0.0, x, a)[0]
    out = rv.adjoint(model, lanes=2)(y, x, a, 1.0, np.zeros(2), 0.0, 0.5, np.zeros(2), 0.0)
    gx_expected, ga_expected = expected_gradient(x, a)
    np.testing.assert_allclose(out[4], gx_expected)
    np.testing.assert_allclose(out[7], 0.5 * np.array(gx_expected))
    assert out[5] == pytest.approx(ga_expected) and out[8] == pytest.approx(0.5 * ga_expected)


def test_lanes_are_checked():
    with pytest.raises(TypeError, match=r"3 gradient\(s\) per lane \(2 lanes\), got 6"):
        rv.adjoint(model, lanes=2)(0.0, np.ones(2), 1.0, 1.0, np.zeros(2), 0.0)
    with pytest.raises(TypeError, match="lanes must be an integer ≥ 1, got 0"):
        rv.adjoint(model, lanes=0)


@pytest.mark.parametrize(
    "lanes, message",
    [
        (0, "lanes must be an integer ≥ 1 known when compiling, got 'lanes'"),
        (2, r"one gradient for each of the 3 that carry one per lane \(2 lanes\), got 6"),
    ],
)
def test_lanes_are_checked_when_compiling(lanes, message):
    @rv.reversible
    def one_lane_of_gradients(y, x, a, gx):
        gy = rv.ancilla(0.0)
        ga = rv.ancilla(0.0)
        rv.adjoint(model, lanes=lanes)(y, x, a, gy, gx, ga)
        rv.free(ga)
        rv.free(gy)

    with pytest.raises(rv.ReversibleSyntaxError, match=message) as error:
        one_lane_of_gradients(0.0, np.ones(2), 1.0, np.zeros(2))
    assert "test_adjoint_calls.py" in str(error.value)


def test_pullback_batch_checks_its_lanes():
    _, pullback = rv.vjp(model, 0.0, np.array([0.3, 2.0]), 1.5)
    with pytest.raises(TypeError, match="needs at least one set of cotangents"):
        pullback.batch([])
    with pytest.raises(TypeError, match=r"takes 3 cotangent\(s\), one per output, got 1"):
        pullback.batch([(1.0, None, None), (1.0,)])
    one, two = pullback.batch([(1.0, None, None), (2.0, None, None)])
    np.testing.assert_allclose(two[1], 2.0 * one[1])
