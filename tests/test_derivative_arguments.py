"""What the derivative APIs refuse about the arguments that pick outputs and
inputs (``iloss``, ``wrt``, ``of``), and arrays that share memory: each
refusal names the API, the function and the parameter."""

from __future__ import annotations

import numpy as np
import pytest

import revmlir as rv


@rv.reversible
def scaled(y, x, n):
    y += x * n


@rv.reversible
def squares(y, x):
    for i in range(len(x)):
        y[i] += x[i] * x[i]


@rv.ordinary
def ordinary_square(x):
    return x * x


SCALED = (0.0, 2.0, 3)
SQUARES = (np.zeros(2), np.ones(2))


@pytest.mark.parametrize(
    ("iloss", "error", "message"),
    [
        (1.0, TypeError, r"rv.gradient: iloss must be an int \(a position among the 3 outputs of scaled\), got float"),
        ("y", TypeError, r"iloss must be an int .*, got str"),
        (True, TypeError, r"iloss must be an int .*, got bool"),
        (-1, ValueError, r"rv.gradient: iloss=-1 is negative; it is a position among the 3 outputs of scaled"),
        (3, IndexError, r"rv.gradient: iloss=3 is out of range for the 3 outputs of scaled"),
    ],
)
def test_iloss_is_a_position_from_zero(iloss, error, message):
    with pytest.raises(error, match=message):
        rv.gradient(scaled, SCALED, iloss=iloss)


@pytest.mark.parametrize("api", ["hessian", "hvp"])
def test_the_second_derivatives_check_iloss_as_the_gradient_does(api):
    call = {"hessian": rv.hessian, "hvp": lambda f, a, **k: rv.hvp(f, a, (1.0, 1.0, None), **k)}[api]
    with pytest.raises(TypeError, match=rf"rv.{api}: iloss must be an int .*, got bool"):
        call(scaled, SCALED, iloss=True)
    with pytest.raises(ValueError, match=rf"rv.{api}: iloss=-2 is negative"):
        call(scaled, SCALED, iloss=-2)
    with pytest.raises(TypeError, match=r"iloss must be an int .*ordinary_square\), got float"):
        rv.gradient(ordinary_square, (2.0,), iloss=0.0)


@pytest.mark.parametrize(
    ("selection", "error", "message"),
    [
        ({"wrt": (5,)}, IndexError, r"rv.jacobian: wrt=5 is out of range for the 2 arguments of squares"),
        ({"wrt": (1, 1)}, ValueError, r"rv.jacobian: wrt=\(1, 1\) names a position twice"),
        ({"wrt": (-1,)}, ValueError, r"rv.jacobian: wrt=-1 is negative"),
        ({"of": (True,)}, TypeError, r"rv.jacobian: of must be an int .*, got bool"),
        ({"wrt": 1}, TypeError, r"rv.jacobian: wrt must be a sequence of positions \(wrt=\(1,\)\), got int"),
        ({"of": "y"}, TypeError, r"rv.jacobian: of must be a sequence of positions, got str"),
    ],
)
def test_wrt_and_of_are_positions_each_given_once(selection, error, message):
    with pytest.raises(error, match=message):
        rv.jacobian(squares, SQUARES, **selection)


def test_the_hessian_refuses_a_repeated_wrt():
    with pytest.raises(ValueError, match=r"rv.hessian: wrt=\(1, 1\) names a position twice"):
        rv.hessian(scaled, (0.0, 2.0, 3.0), wrt=(1, 1))


@rv.reversible
def accumulate(s, y, x):
    for i in range(len(y)):
        y[i] += x[i] * x[i]
    for i in range(len(y)):
        s += y[i]


SHARED = "arguments 'y' and 'x' of accumulate share memory, and accumulate writes one of them"


@pytest.mark.parametrize(
    "derivative",
    [
        lambda a: rv.gradient(accumulate, (0.0, a, a)),
        lambda a: rv.vjp(accumulate, 0.0, a, a),
        lambda a: rv.jvp(accumulate, (0.0, a, a), (1.0, None, None)),
        lambda a: rv.jacobian(accumulate, (0.0, a, a)),
        lambda a: rv.hessian(accumulate, (0.0, a, a)),
        lambda a: rv.gradient(~accumulate, (0.0, a, a)),
    ],
)
def test_a_reversible_functions_derivatives_refuse_the_aliased_arrays_its_call_refuses(derivative):
    shared = np.ones(2)
    with pytest.raises(ValueError, match=SHARED):
        accumulate(0.0, shared, shared)
    with pytest.raises(ValueError, match=SHARED.replace("accumulate", "~?accumulate")):
        derivative(shared)
    # views of one buffer that do not overlap are distinct arrays
    halves = np.ones(4)
    assert rv.gradient(accumulate, (0.0, halves[:2], halves[2:]))[2].tolist() == [2.0, 2.0]
