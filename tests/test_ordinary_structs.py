"""Struct arguments of ``@rv.ordinary`` functions: a dataclass or named
tuple is taken as its fields, as by a reversible function.  Calls must agree
with the undecorated Python function on both engines; gradients, pullbacks
and tangents come back per field in the struct's class and are compared
with JAX on the same program written over the fields and with central
differences; each error names the field or is located at the user's line
(marked ``# E:name``)."""

import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from marked_lines import MarkedLines

jax.config.update("jax_enable_x64", True)


@dataclass
class Body:
    x: float
    v: float
    trail: np.ndarray


class Spring(NamedTuple):
    steps: int
    k: float


@rv.ordinary
def push(b: Body, k):
    """Writes an array field in place, reads a scalar one."""
    for i in range(len(b.trail)):
        b.trail[i] = b.trail[i] * k + b.x


@rv.ordinary
def kinetic(b: Body):
    return 0.5 * b.v * b.v


def motion(b: Body, s: Spring):
    """Scalar fields re-assigned as variables of the call, a struct passed
    whole to other ordinary functions (in a statement and in an
    expression), fields read in the returned values."""
    e = 0.0
    for step in range(s.steps):
        b.v = b.v - 0.1 * s.k * b.x
        b.x = b.x + 0.1 * b.v
        e = e + b.x * b.x
    push(b, s.k)
    e = e + kinetic(b)
    return e + b.trail[0] * b.v, b.x


def motion_jax(x, v, trail, k, steps):
    e = 0.0
    for _ in range(steps):
        v = v - 0.1 * k * x
        x = x + 0.1 * v
        e = e + x * x
    trail = trail * k + x
    e = e + 0.5 * v * v
    return e + trail[0] * v


BACKENDS = ("native", "interpreter")
MOTION = {backend: rv.ordinary(motion, backend=backend) for backend in BACKENDS}


def body() -> Body:
    return Body(0.8, 0.3, np.array([1.0, -0.5, 2.0]))


SPRING = Spring(4, 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_calls_agree_with_python(backend: str):
    b, expected = body(), body()
    trail = b.trail
    assert MOTION[backend](b, SPRING) == pytest.approx(motion(expected, SPRING), rel=1e-13)
    assert b.trail is trail and np.allclose(trail, expected.trail, rtol=1e-13)  # arrays: in place
    # scalar fields are variables of the call, as scalar arguments are (Python's own motion set expected.x)
    assert (b.x, b.v) == (0.8, 0.3) and expected.x != 0.8
    if backend == "native":
        assert "func.func @push(%b.x: f64, %b.v: f64, %b.trail: memref<?xf64>, %k: f64)" in MOTION[backend].mlir(
            b, SPRING, form="ordinary"
        )


def test_gradients_come_back_per_field():
    b = body()
    g_b, g_s = rv.gradient(MOTION["native"], (b, SPRING))
    assert isinstance(g_b, Body) and isinstance(g_s, Spring) and g_s.steps == 0.0
    assert b.x == 0.8 and b.trail.tolist() == [1.0, -0.5, 2.0]  # the arguments are left alone
    expected = jax.grad(motion_jax, argnums=(0, 1, 2, 3))(0.8, 0.3, jnp.array(b.trail), 2.0, 4)
    assert (g_b.x, g_b.v, g_s.k) == pytest.approx([float(expected[i]) for i in (0, 1, 3)], rel=1e-12)
    assert np.allclose(g_b.trail, expected[2], rtol=1e-12)
    h = 1e-6
    loss = lambda k: motion(body(), Spring(4, k))[0]  # noqa: E731
    assert g_s.k == pytest.approx((loss(2.0 + h) - loss(2.0 - h)) / (2 * h), rel=1e-7)
    # output 1 (the returned b.x) as the loss; on the interpreter too
    g1 = rv.gradient(MOTION["interpreter"], (b, SPRING), iloss=1)[0]
    x_after = lambda x: motion(Body(x, 0.3, np.zeros(3)), SPRING)[1]  # noqa: E731
    assert g1.x == pytest.approx((x_after(0.8 + h) - x_after(0.8 - h)) / (2 * h), rel=1e-7)


def test_pullback_takes_and_gives_structs():
    b = body()
    outputs, pullback = rv.vjp(MOTION["interpreter"], b, SPRING)
    loss, x, b_after, s_after = outputs  # returned values, then the arguments as motion left them
    assert (loss, x) == pytest.approx(MOTION["native"](body(), SPRING), rel=1e-13)
    assert isinstance(b_after, Body) and b_after.x == 0.8 and s_after == SPRING
    assert np.allclose(b_after.trail, np.array([1.0, -0.5, 2.0]) * 2.0 + x, rtol=1e-13)
    assert b.trail.tolist() == [1.0, -0.5, 2.0]
    # the cotangent of the trail left: Σ trail_after = Σ (trail · k + x_after)
    g_b, g_s = pullback(None, None, Body(0.0, 0.0, np.ones(3)), None)
    assert isinstance(g_b, Body) and np.allclose(g_b.trail, 2.0)
    x_after = lambda k: motion(body(), Spring(4, k))[1]  # noqa: E731
    h = 1e-6
    assert g_s.k == pytest.approx(2.5 + 3 * (x_after(2.0 + h) - x_after(2.0 - h)) / (2 * h), rel=1e-7)
    with pytest.raises(TypeError, match="the cotangent of a Body is one, or None, not Spring"):
        pullback(1.0, None, SPRING, None)
    with pytest.raises(TypeError, match=r"takes 4 cotangent\(s\), one per output, got 2"):
        pullback(1.0, None)


def test_tangents_come_back_per_field():
    b = body()
    outputs, tangents = rv.jvp(MOTION["interpreter"], (b, SPRING), (Body(1.0, 0.0, np.array([0.0, 1.0, 0.0])), None))
    assert outputs[:2] == pytest.approx(MOTION["native"](body(), SPRING), rel=1e-13)
    assert isinstance(tangents[2], Body) and isinstance(tangents[3], Spring) and tangents[3].k == 0.0
    _, expected = jax.jvp(
        lambda x, trail: motion_jax(x, 0.3, trail, 2.0, 4),
        (0.8, jnp.array(b.trail)),
        (1.0, jnp.array([0.0, 1.0, 0.0])),
    )
    assert tangents[0] == pytest.approx(float(expected), rel=1e-12)
    # trail_after = trail · k + x_after, and b.x is left as it came in
    assert tangents[2].trail[1] - tangents[2].trail[0] == pytest.approx(2.0) and tangents[2].x == 1.0


def test_checkpointed_gradients_equal_store_all():
    b = body()
    g_b, g_s = rv.gradient(MOTION["interpreter"], (b, SPRING), checkpoint="binomial", snapshots=2)
    r_b, r_s = rv.gradient(MOTION["interpreter"], (b, SPRING))
    assert isinstance(g_b, Body) and (g_b.x, g_b.v, g_s.k) == pytest.approx((r_b.x, r_b.v, r_s.k), rel=1e-12)
    assert np.allclose(g_b.trail, r_b.trail, rtol=1e-12)
    _, pullback = rv.vjp(MOTION["interpreter"], b, SPRING, checkpoint="binomial", snapshots=2)
    assert pullback(1.0, None, None, None)[0].v == pytest.approx(r_b.v, rel=1e-12)


# -- errors ----------------------------------------------------------------------------


located = MarkedLines(Path(__file__)).located


def unknown_field(b: Body):
    return b.y * 2.0  # E:unknown-field


def whole_struct_in_an_expression(b: Body):
    return math.sqrt(b) + b.x  # E:whole-struct


def wrong_struct_passed(b: Body, s: Spring):
    push(s, b.x)  # E:wrong-struct


@pytest.mark.parametrize(
    ("function", "marker", "fragments"),
    [
        (unknown_field, "# E:unknown-field", ("'b' has no field 'y'", "its fields are x, v, trail")),
        (whole_struct_in_an_expression, "# E:whole-struct", ("'b' is a struct argument", "g(b)")),
        (wrong_struct_passed, "# E:wrong-struct", ("push(): argument 'b' is declared Body, got Spring",)),
    ],
)
def test_struct_errors_in_the_code_are_located(function, marker: str, fragments: tuple[str, ...]):
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.ordinary(function)(body(), SPRING) if function is wrong_struct_passed else rv.ordinary(function)(body())
    located(caught.value, marker, *fragments)


def scaled(x: float, n: int):
    return x * n


def test_parameter_annotations_are_checked_at_the_call():
    """As a field's: the same check, for a parameter of its own."""
    f = rv.ordinary(scaled)
    with pytest.raises(TypeError, match=r"scaled\(\): argument 'n' is declared int64, got float"):
        f(1.0, 2.5)
    with pytest.raises(TypeError, match=r"argument 'x' is declared float, got a 1-d array of float"):
        f(np.zeros(2), 2)


def test_struct_errors_at_the_call_name_the_field():
    f = MOTION["native"]
    with pytest.raises(TypeError, match=r"argument 'b.x' has unsupported type str"):
        f(Body("0.8", 0.3, np.zeros(3)), SPRING)  # type: ignore[arg-type]
    # a field's annotation is checked as a parameter's: x: float, trail: np.ndarray, steps: int
    with pytest.raises(TypeError, match=r"argument 'b.x' is declared float, got a 1-d array of float"):
        f(Body(np.zeros(2), 0.3, np.zeros(3)), SPRING)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"argument 'b.trail' is declared an array, got float"):
        f(Body(0.8, 0.3, 1.0), SPRING)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"argument 's.steps' is declared int64, got float"):
        f(body(), Spring(4.0, 2.0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"argument 'b.v' is declared float, got Spring"):
        rv.gradient(f, (Body(0.8, SPRING, np.zeros(3)), SPRING))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="argument 'b' is declared Body, got Spring"):
        f(SPRING, SPRING)
    with pytest.raises(TypeError, match="argument 'b' is declared Body, got no struct"):
        rv.gradient(f, (0.8, SPRING))
    with pytest.raises(TypeError, match=r"output #2 is a Body, not a number"):
        rv.gradient(f, (body(), SPRING), iloss=2)
