"""Structs inside structs, and Jacobians and Hessians of calls with structs.

A field holding a dataclass or named tuple is flattened in turn, so
``s.body.spring.k`` is one parameter, updated in reversible code
(``s.body.x += …``), assigned in ordinary code, and a nested struct is
passed whole to a call (``kick(s.body, dt)``).  Calls must agree with plain
Python on both engines, and gradients, pullbacks, tangents, Hessian-vector
products and the blocks of Jacobians and Hessians come back in the
structs' classes, compared with JAX on the same structs (registered as
pytrees: ``jax.jacfwd`` and ``jax.hessian`` lay their blocks out as
revmlir does) and with central differences; each error names the field or
is located at the user's line (marked ``# E:name``)."""

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import jax
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

import revmlir as rv
from marked_lines import MarkedLines

jax.config.update("jax_enable_x64", True)

BACKENDS = ("native", "interpreter")
located = MarkedLines(Path(__file__)).located


class Spring(NamedTuple):
    k: float
    rest: float


@dataclass
class Body:
    x: float
    v: float
    spring: Spring


@dataclass
class System:
    body: Body
    trail: np.ndarray
    e: float


jax.tree_util.register_dataclass(Body, data_fields=["x", "v", "spring"], meta_fields=[])
jax.tree_util.register_dataclass(System, data_fields=["body", "trail", "e"], meta_fields=[])


def system() -> System:
    return System(Body(1.0, 0.5, Spring(2.0, 0.1)), np.array([0.25, -1.5]), 0.0)


@rv.reversible
def kick(b: Body, dt):
    b.v -= dt * b.spring.k * (b.x - b.spring.rest)


def _step(s: System, dt):
    kick(s.body, dt)  # a nested struct passed whole
    s.body.x += dt * s.body.v
    s.trail[0] += s.body.x * s.trail[1]
    s.e += s.body.x * s.body.spring.k


step = rv.reversible(_step)
STEP = {"native": step, "interpreter": rv.reversible(_step, backend="interpreter")}


def step_in_python(x, v, k, rest, trail0, trail1, e, dt):
    v = v - dt * k * (x - rest)
    x = x + dt * v
    return x, v, trail0 + x * trail1, e + x * k


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_fields_are_updated_and_come_back_in_new_instances(backend: str):
    s = system()
    trail = s.trail
    out, dt = STEP[backend](s, 0.1)
    x, v, trail0, e = step_in_python(1.0, 0.5, 2.0, 0.1, 0.25, -1.5, 0.0, 0.1)
    assert isinstance(out, System) and isinstance(out.body, Body) and isinstance(out.body.spring, Spring)
    assert (out.body.x, out.body.v, out.e, out.trail[0]) == pytest.approx((x, v, e, trail0), rel=1e-15)
    assert out.body.spring == Spring(2.0, 0.1) and s.body.x == 1.0 and out.trail is trail
    back, _ = (~STEP[backend])(out, dt)
    assert (back.body.x, back.body.v, back.e) == pytest.approx((1.0, 0.5, 0.0), abs=1e-15)
    assert trail[0] == pytest.approx(0.25, abs=1e-15)
    if backend == "native":
        assert "%s.body.spring.k: f64" in STEP[backend].mlir(system(), 0.1)


def step_jax(s: System, dt):
    b = s.body
    v = b.v - dt * b.spring.k * (b.x - b.spring.rest)
    x = b.x + dt * v
    return s.e + x * b.spring.k + (s.trail[0] + x * s.trail[1]) ** 2


def test_gradients_pullbacks_and_tangents_of_nested_structs_match_jax():
    """The loss e after a step and a second one reading the trail; the
    gradient with respect to the whole System comes back as a System."""

    @rv.reversible(backend="interpreter")
    def loss(out, s: System, dt):
        step(s, dt)
        out += s.e + s.trail[0] * s.trail[0]

    s = system()
    direction = System(Body(1.0, 0.0, Spring(0.0, 1.0)), np.array([0.0, 1.0]), 0.0)
    expected, slope = jax.jit(
        lambda s, d: (jax.grad(step_jax)(s, 0.1), jax.jvp(lambda s: step_jax(s, 0.1), (s,), (d,))[1])
    )(s, direction)
    g_out, g_s, g_dt = rv.gradient(loss, (0.0, s, 0.1))
    assert g_out == 1.0 and isinstance(g_s.body.spring, Spring) and s.trail[0] == 0.25
    for found, wanted in zip(jax.tree.leaves(g_s), jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(found, wanted, rtol=1e-12)
    _, pullback = rv.vjp(loss, 0.0, s, 0.1)
    # a cotangent with a nested None: zero for every field under it
    assert pullback(2.0, System(None, np.zeros(2), 0.0), None)[1].body.spring.k == pytest.approx(2 * g_s.body.spring.k)
    _, tangents = rv.jvp(loss, (0.0, s, 0.1), (None, direction, None))
    assert tangents[0] == pytest.approx(float(slope), rel=1e-12)
    assert isinstance(tangents[1].body, Body) and tangents[1].body.x != 0.0
    h = 1e-6

    def loss_of(rest: float) -> float:
        _, _, trail0, e = step_in_python(1.0, 0.5, 2.0, rest, 0.25, -1.5, 0.0, 0.1)
        return e + trail0 * trail0

    assert g_s.body.spring.rest == pytest.approx((loss_of(0.1 + h) - loss_of(0.1 - h)) / (2 * h), rel=1e-7)


@rv.ordinary
def spring_energy(b: Body):
    return 0.5 * b.spring.k * (b.x - b.spring.rest) ** 2


def _ordinary_step(s: System, dt):
    """Nested scalar fields assigned as variables of the call, a nested
    struct passed whole in an expression, an array field written in place."""
    s.body.v = s.body.v - dt * s.body.spring.k * (s.body.x - s.body.spring.rest)
    s.body.x = s.body.x + dt * s.body.v
    s.trail[0] = s.trail[0] + s.body.x * s.trail[1]
    return s.e + s.body.x * s.body.spring.k + s.trail[0] * s.trail[0] + spring_energy(s.body)


def ordinary_step_jax(s: System, dt):
    b = s.body
    v = b.v - dt * b.spring.k * (b.x - b.spring.rest)
    x = b.x + dt * v
    trail0 = s.trail[0] + x * s.trail[1]
    return s.e + x * b.spring.k + trail0 * trail0 + 0.5 * b.spring.k * (x - b.spring.rest) ** 2


ORDINARY_STEP = rv.ordinary(_ordinary_step, backend="interpreter")


def test_ordinary_functions_take_nested_structs():
    """On the interpreter only: the flattening is the reversible one's,
    compared between the engines above."""
    s = system()
    value = ORDINARY_STEP(s, 0.1)
    assert value == pytest.approx(_ordinary_step(system(), 0.1), rel=1e-14)  # the undecorated function
    assert s.body.x == 1.0 and s.trail[0] != 0.25  # scalar fields: variables of the call; arrays: in place


def test_ordinary_gradients_of_nested_structs_match_jax():
    g_s, g_dt = rv.gradient(ORDINARY_STEP, (system(), 0.1))
    expected_s, expected_dt = jax.jit(jax.grad(ordinary_step_jax, argnums=(0, 1)))(system(), 0.1)
    assert isinstance(g_s.body.spring, Spring) and g_dt == pytest.approx(float(expected_dt), rel=1e-12)
    for found, wanted in zip(jax.tree.leaves(g_s), jax.tree.leaves(expected_s), strict=True):
        np.testing.assert_allclose(found, wanted, rtol=1e-12)


# -- Jacobians and Hessians in blocks ------------------------------------------------


def jax_reference(transform, f, args: tuple, raveled):
    """JAX's ``transform`` (``jax.jacfwd`` or ``jax.hessian``) of ``f`` over
    every argument: the layout of its blocks (traced, not compiled) and its
    matrix over the raveled arguments, of ``raveled`` (``f`` of them, its
    outputs raveled for a Jacobian): one small program for XLA to compile
    where the blocks would be many."""
    layout = jax.eval_shape(transform(f, argnums=tuple(range(len(args)))), *args)
    flat, unravel = ravel_pytree(args)
    return layout, np.atleast_2d(jax.jit(transform(lambda v: raveled(*unravel(v))))(flat))


def close_to_jax(found, layout, matrix: np.ndarray, args: tuple) -> None:
    """``found`` holds JAX's blocks where JAX lays them out (``None``, no
    derivative, is no leaf, as an integer held fixed is none of JAX's) and
    tiles JAX's matrix: row fields outside, column fields (the leaves of
    ``args``) inside."""
    leaves = jax.tree.leaves(found)
    assert [np.shape(leaf) for leaf in leaves] == [leaf.shape for leaf in jax.tree.leaves(layout)]
    columns = [np.size(leaf) for leaf in jax.tree.leaves(args)]
    tiles = [np.reshape(leaf, (-1, n)) for leaf, n in zip(leaves, itertools.cycle(columns))]
    rows = [np.hstack(tiles[i : i + len(columns)]) for i in range(0, len(tiles), len(columns))]
    np.testing.assert_allclose(np.vstack(rows), matrix, rtol=1e-12, atol=1e-14)


def step_outputs_jax(s: System, dt):
    """What the reversible step returns: the System after it, and dt."""
    b = s.body
    v = b.v - dt * b.spring.k * (b.x - b.spring.rest)
    x = b.x + dt * v
    trail = s.trail.at[0].add(x * s.trail[1])
    return System(Body(x, v, b.spring), trail, s.e + x * b.spring.k), dt


def test_jacobians_of_structs_come_in_blocks_as_jax_lays_them_out():
    """Outputs outside, arguments inside, a block per pair of fields, in
    forward and reverse mode, on both engines."""
    s = system()
    layout, matrix = jax_reference(
        jax.jacfwd, step_outputs_jax, (s, 0.1), lambda s, dt: ravel_pytree(step_outputs_jax(s, dt))[0]
    )
    forward = rv.jacobian(STEP["interpreter"], (s, 0.1), mode="forward")
    assert isinstance(forward[0].body.spring, Spring) and isinstance(forward[0].body.x[0].body, Body)
    assert forward[0].trail[0].trail.shape == (2, 2) and forward[0].trail[0].e.shape == (2,)
    close_to_jax(forward, layout, matrix, (s, 0.1))
    close_to_jax(rv.jacobian(STEP["native"], (s, 0.1), mode="reverse"), layout, matrix, (s, 0.1))
    # of=, wrt= choose outputs and arguments, in their order
    only = rv.jacobian(STEP["interpreter"], (s, 0.1), wrt=(1,), of=(0,))
    by_dt = jax.tree.map(lambda blocks: (blocks[1],), forward[0], is_leaf=lambda x: type(x) is tuple)
    assert jax.tree.structure(only) == jax.tree.structure((by_dt,))
    np.testing.assert_array_equal(ravel_pytree(only)[0], ravel_pytree((by_dt,))[0])
    h = 1e-6
    e_after = lambda dt: step_in_python(1.0, 0.5, 2.0, 0.1, 0.25, -1.5, 0.0, dt)[3]  # noqa: E731
    assert only[0].e[0] == pytest.approx((e_after(0.1 + h) - e_after(0.1 - h)) / (2 * h), rel=1e-7)
    assert s.body.x == 1.0 and s.trail[0] == 0.25  # the arguments are left alone


class Weights(NamedTuple):
    n: int
    scale: float


@rv.ordinary(backend="interpreter")
def potential(s: System, p: Weights):
    """Straight-line, so that its Hessian is quick to derive."""
    d = s.body.x - s.body.spring.rest
    return p.scale * (s.body.spring.k * d * d + s.body.v * s.trail[1] * s.trail[0]) + p.n * s.e * s.e


def potential_jax(s: System, scale):
    d = s.body.x - s.body.spring.rest
    return scale * (s.body.spring.k * d * d + s.body.v * s.trail[1] * s.trail[0]) + 2 * s.e * s.e


def test_hessians_and_hvps_of_structs_match_jax():
    """A Hessian block per pair of fields, ``None`` for the integer field
    (JAX's: a hessian over the float leaves, the integer fixed)."""
    s, p = System(Body(1.0, 0.5, Spring(2.0, 0.1)), np.array([0.25, -1.5]), 0.75), Weights(2, 1.5)
    layout, matrix = jax_reference(jax.hessian, potential_jax, (s, 1.5), potential_jax)
    H = rv.hessian(potential, (s, p))
    assert H[1].n is None and isinstance(H[1].scale[0].body.spring, Spring) and H[1].scale[1].n is None
    close_to_jax(H, layout, matrix, (s, 1.5))
    direction = System(Body(1.0, -1.0, Spring(0.5, None)), np.array([0.0, 2.0]), 0.0)
    product = rv.hvp(potential, (s, p), (direction, Weights(0, 1.0)))
    assert isinstance(product[0].body.spring, Spring) and product[1].n == 0.0
    along = ravel_pytree((System(Body(1.0, -1.0, Spring(0.5, 0.0)), np.array([0.0, 2.0]), 0.0), 1.0))[0]
    np.testing.assert_allclose(ravel_pytree((product[0], product[1].scale))[0], matrix @ along, rtol=1e-12)
    checkpointed = rv.hvp(potential, (s, p), (direction, None), checkpoint="binomial", snapshots=2)
    store_all = rv.hvp(potential, (s, p), (direction, None))
    np.testing.assert_allclose(ravel_pytree(checkpointed)[0], ravel_pytree(store_all)[0], rtol=1e-12)


def test_struct_matrix_errors_name_what_is_wrong():
    s, p = system(), Weights(2, 1.5)
    expected = "rv.jacobian: argument #2 of potential does not exist (potential takes 2 argument(s): 's', 'p')"
    with pytest.raises(IndexError, match=f"^{re.escape(expected)}$"):
        rv.jacobian(potential, (s, p), wrt=(2,))
    expected = (
        "rv.jacobian: output #4 of potential does not exist "
        "(potential has 3 output(s): 1 returned, then 's', 'p' as the call leaves them)"
    )
    with pytest.raises(IndexError, match=f"^{re.escape(expected)}$"):
        rv.jacobian(potential, (s, p), of=(4,))
    with pytest.raises(ValueError, match=r"^rv.jacobian: of=-1 is negative; it is a position among the outputs"):
        rv.jacobian(potential, (s, p), of=(-1,))
    with pytest.raises(ValueError, match=r"^rv.hessian: wrt=\(1, 1\) names a position twice$"):
        rv.hessian(potential, (s, p), wrt=(1, 1))
    with pytest.raises(TypeError, match=r"output #1 is a System, not a number"):
        rv.hessian(potential, (s, p), iloss=1)
    with pytest.raises(TypeError, match=r"the vector of a Spring is one, or None, not Weights"):
        rv.hvp(potential, (s, p), (System(Body(0.0, 0.0, p), np.zeros(2), 0.0), None))
    with pytest.raises(TypeError, match=r"takes 2 argument\(s\), so 2 vectors"):
        rv.hvp(potential, (s, p), (None,))


@rv.ordinary(backend="interpreter")
def weighted(p: Weights, n: int):
    return p.scale * n


@pytest.mark.parametrize(
    ("api", "options", "which"),
    [
        (rv.jacobian, {"wrt": (1,)}, "argument 'n'"),
        (rv.jacobian, {"of": (2,)}, "output 'n'"),
        (rv.hessian, {"wrt": (1,)}, "argument 'n'"),
    ],
)
def test_a_struct_call_names_the_integer_it_cannot_differentiate(api, options, which):
    """As a call without structs says it (the block was None, unasked)."""
    name = api.__name__
    expected = f"rv.{name}: {which} of weighted is not a float scalar, an array of floats or a struct"
    with pytest.raises(TypeError, match=f"^{re.escape(expected)}$"):
        api(weighted, (Weights(2, 1.5), 3), **options)


# -- errors ----------------------------------------------------------------------------


def nested_struct_in_an_expression(b: Body):
    return abs(b.spring) + b.x  # E:nested-whole


def unknown_nested_field(b: Body):
    return b.spring.stiffness * b.x  # E:nested-unknown


def nested_struct_assigned(b: Body):
    b.spring = b.spring  # E:nested-assigned
    return b.x


def nested_update_of_itself(b: Body):
    b.spring.k -= b.spring.k  # E:nested-alias


@pytest.mark.parametrize(
    ("function", "decorator", "marker", "fragments"),
    [
        (
            nested_struct_in_an_expression,
            rv.ordinary,
            "# E:nested-whole",
            ("'b.spring' is a struct field", "g(b.spring)"),
        ),
        (unknown_nested_field, rv.ordinary, "# E:nested-unknown", ("'b.spring' has no field 'stiffness'", "k, rest")),
        (nested_struct_assigned, rv.ordinary, "# E:nested-assigned", ("'b.spring' is a struct field",)),
        (nested_update_of_itself, rv.reversible, "# E:nested-alias", ("b.spring.k",)),
    ],
)
def test_nested_struct_errors_in_the_code_are_located(function, decorator, marker: str, fragments: tuple[str, ...]):
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        decorator(function)(Body(1.0, 0.5, Spring(2.0, 0.1)))
    located(caught.value, marker, *fragments)


@dataclass
class Chain:
    x: float
    next: object


def first_link(c: Chain):
    return c.x


def test_nested_struct_errors_at_the_call_name_the_field():
    with pytest.raises(TypeError, match=r"argument 'b.spring' is declared Spring, got no struct"):
        spring_energy(Body(1.0, 0.5, 2.0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"argument 'b.x' is declared float, got Spring"):
        spring_energy(Body(Spring(1.0, 2.0), 0.5, Spring(2.0, 0.1)))  # type: ignore[arg-type]
    looped = Chain(1.0, None)
    looped.next = Chain(2.0, looped)
    with pytest.raises(TypeError, match=r"argument 'c.next.next' is a struct holding itself"):
        rv.ordinary(first_link)(looped)
    _, pullback = rv.vjp(spring_energy, Body(1.0, 0.5, Spring(2.0, 0.1)))
    with pytest.raises(TypeError, match="the cotangent of a Spring is one, or None, not Body"):
        pullback(1.0, Body(0.0, 0.0, Body(0.0, 0.0, None)))
