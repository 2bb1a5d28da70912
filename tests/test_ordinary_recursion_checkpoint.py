"""``checkpoint=`` on recursive ``@rv.ordinary`` functions: the resumable
machine calls the functions of a recursive cycle through frame stacks
(docs/checkpointing.md, "Recursion: frames on a stack"), so ``rv.gradient``
and ``rv.vjp`` checkpoint them under every policy with no annotation.

``composite`` calls, from a loop, a recursion as deep as its data say with
a loop inside (``settle``), and a mutual recursion writing an array
(``hop``/``skip``); divide and conquer over an array is checked on the IR
(tests/test_resumable_recursion.py, tests/filecheck/passes/make_resumable_recursion.mlir).
Its gradient under every policy equals the store-all one (its Bennett
form on a tape), which equals JAX's of the same program in ``jax.numpy``
(whose tracing unrolls the recursion, its depth taken from a float run).
The store-all schedule is checked on the IR (tests/test_resumable_recursion.py).
``dive``, compiled once per engine with a small frame limit, checks native
code against the interpreter, the limit's error on both, what ``auto``'s
budget counts, and forward mode over the checkpointed gradient.
"""

import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from revmlir.frontend.base.derived import own_gradient
from revmlir.reversibilize import resumable
from revmlir.safety import RECURSION_TOO_DEEP

jax.config.update("jax_enable_x64", True)


@rv.ordinary(backend="interpreter")
def settle(x, a):
    """As deep as ``x`` says, a loop after the recursive call."""
    y = x * a
    if x > 0.2:
        y = settle(0.5 * x, a)
        for k in range(2):
            y = y + 0.1 * math.sin(y * a)
    return y


@rv.ordinary(backend="interpreter")
def hop(u, x, n):
    """Mutual recursion with ``skip``, writing ``u`` on the way down."""
    if n > 0:
        u[n] = u[n] + 0.3 * x
        x = skip(u, x * u[n], n - 1)
    return x


@rv.ordinary(backend="interpreter")
def skip(u, x, n):
    if n > 0:
        x = hop(u, math.cos(x) + u[n - 1], n - 1)
    return x + 0.1


@rv.ordinary(backend="interpreter")
def composite(x, u, n, l):
    s = 0.0
    for i in range(l):
        s = s + settle(x + 0.1 * s, 0.9)
    return s * hop(u, x, n)


def settle_depth(x: float) -> int:
    return 0 if x <= 0.2 else 1 + settle_depth(0.5 * x)


def settle_jax(x, a, depth):
    if depth == 0:
        return x * a
    y = settle_jax(0.5 * x, a, depth - 1)
    for _ in range(2):
        y = y + 0.1 * jnp.sin(y * a)
    return y


def hop_jax(u, x, n):
    if n == 0:
        return x, u
    u = u.at[n].add(0.3 * x)
    return skip_jax(u, x * u[n], n - 1)


def skip_jax(u, x, n):
    if n > 0:
        x, u = hop_jax(u, jnp.cos(x) + u[n - 1], n - 1)
    return x + 0.1, u


X, U, N, L = 0.9, np.array([0.4, -0.3, 0.5]), 2, 3


def depths() -> list[int]:
    """``settle``'s depth in each iteration of ``composite``'s loop, from a
    float run (JAX traces the recursion for the depths it is given)."""
    s, found = 0.0, []
    for _ in range(L):
        found.append(settle_depth(X + 0.1 * s))
        s = s + float(settle_jax(X + 0.1 * s, 0.9, found[-1]))
    return found


DEPTHS = depths()


def composite_jax(x, u):
    """``composite``'s result and ``u`` as it leaves it."""
    s = 0.0
    for depth in DEPTHS:
        s = s + settle_jax(x + 0.1 * s, 0.9, depth)
    y, u = hop_jax(u, x, N)
    return s * y, u


def arguments() -> tuple:
    return (X, U.copy(), N, L)


@pytest.fixture(scope="module")
def store_all():
    found = rv.gradient(composite, arguments())
    expected = jax.grad(lambda x, u: composite_jax(x, u)[0], argnums=(0, 1))(X, jnp.asarray(U))
    for got, reference in zip(found[:2], expected, strict=True):
        np.testing.assert_allclose(got, reference, rtol=1e-12, atol=1e-14)
    return found


@pytest.mark.parametrize(
    "policy",
    [
        {"checkpoint": "bisection"},
        {"checkpoint": "auto", "memory": "512B", "base": 2},
    ],
    ids=["bisection", "binomial"],
)
def test_every_policy_equals_store_all_and_jax(store_all, policy):
    """Binomial is the policy ``auto`` chooses, with as many snapshots as
    the budget holds; two segments a step end steps inside the recursion."""
    found = rv.gradient(composite, arguments(), **policy)
    for got, reference in zip(found[:2], store_all[:2], strict=True):
        np.testing.assert_allclose(got, reference, rtol=1e-12, atol=1e-14)


def test_vjp_pulls_back_through_the_frames(store_all):
    """``rv.vjp`` under bisection: the outputs are ``composite``'s (JAX's),
    and the pullback of a cotangent of the result scales the gradient."""
    outputs, pullback = rv.vjp(composite, *arguments(), checkpoint="bisection")
    expected = composite_jax(X, jnp.asarray(U))
    assert outputs[0] == pytest.approx(float(expected[0]), rel=1e-12)
    np.testing.assert_allclose(outputs[2], np.asarray(expected[1]), rtol=1e-12)
    got = pullback(2.0, None, None, None, None)
    for found, reference in zip(got[:2], store_all[:2], strict=True):
        np.testing.assert_allclose(found, 2.0 * np.asarray(reference), rtol=1e-12, atol=1e-14)


@rv.ordinary(backend="interpreter")
def swap(u, v, n):
    y = u[0]
    if n > 0:
        y = y * swap(v, u, n - 1)  # E:swap
    return y


def test_a_recursive_call_passing_another_array_is_refused_there():
    """A function of a recursive cycle is laid out once in the resumable
    form, so its array parameters are one array at every call."""
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.gradient(swap, (np.ones(2), np.ones(2), 2), checkpoint="bisection")
    lines = Path(__file__).read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if text.endswith("# E:swap"))
    assert f"{__file__}:{line}:{lines[line - 1].index('swap(') + 1}: " in caught.value.reason
    assert "cannot pass another array as argument #0 of @swap" in caught.value.reason
    assert caught.value.hint.startswith("leave out checkpoint=")


@rv.ordinary(backend="interpreter")
def dive(x, n):
    """``n`` calls deep."""
    y = x
    if n > 0:
        y = x * math.sin(dive(0.5 * x + 0.1, n - 1))  # E:dive
    return y


def dive_jax(x, n):
    return x if n == 0 else x * jnp.sin(dive_jax(0.5 * x + 0.1, n - 1))


DIVE = (0.8, 3)


@pytest.fixture(scope="module")
def dives():
    """``dive`` natively and on the interpreter, compiled with a frame limit
    of 4 (monkeypatched before either compiles), the policy both run
    (``auto`` with a budget of two snapshots of the machine's slots), their
    gradients and the interpreter's peak snapshot bytes."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(resumable, "MAX_FRAME_DEPTH", 4)
        native, interpreted = rv.ordinary(dive.pyfunc), rv.ordinary(dive.pyfunc, backend="interpreter")
        size = interpreted.specialization_for(*DIVE).snapshot_bytes(DIVE)
        policy = {"checkpoint": "auto", "memory": 2 * size, "base": 1}
        found = [rv.gradient(f, DIVE, **policy)[0] for f in (native, interpreted)]
    (gradient,) = interpreted.specialization_for(*DIVE).resumable.values()
    return native, interpreted, policy, found, own_gradient(gradient).peak_snapshot_bytes


def test_native_code_checkpoints_a_recursion_as_the_interpreter_does(dives):
    """The checkpointed gradient of a recursive function compiles natively
    (no fallback to the interpreter) and gives the interpreter's numbers and
    JAX's.  The frames' depth limit stops both at the recursive call with
    the same located error, so a recursion without end stops there instead
    of growing its frames until memory runs out."""
    native, interpreted, policy, (found, reference), _ = dives
    (gradient,) = native.specialization_for(*DIVE).resumable.values()
    assert gradient.native is not None
    assert found == pytest.approx(reference, rel=1e-14)
    assert found == pytest.approx(float(jax.grad(dive_jax)(*DIVE)), rel=1e-12)
    errors = []
    for f in (native, interpreted):
        with pytest.raises(rv.ExecutionError) as caught:
            rv.gradient(f, (0.8, 9), **policy)
        errors.append(str(caught.value))
    lines = Path(__file__).read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if text.endswith("# E:dive"))
    assert errors[0] == errors[1]
    assert errors[0].startswith(f"{__file__}:{line}:") and RECURSION_TOO_DEEP in errors[0]


def test_auto_budgets_the_slots_and_the_frames_come_on_top(dives):
    """``checkpoint="auto"`` keeps ``memory // snapshot_bytes`` snapshots,
    the size counting the machine's slots and written arrays, not the
    frames, whose depth is known only at run time (docs/checkpointing.md):
    a record taken inside the recursion holds 8 bytes more per frame word
    live there, ``dive``'s frame is a float and a program point, and each
    stack's length is a word of its record."""
    _, interpreted, policy, _, peak = dives
    spec = interpreted.specialization_for(*DIVE)
    size = spec.snapshot_bytes(DIVE)
    assert size == 8 * spec.resumable_slots
    assert list(spec.resumable) == [("binomial", policy["memory"] // size, 1)]
    frames = peak - policy["memory"]
    assert 0 < frames <= 2 * 8 * (2 * DIVE[1] + 2)


def test_hessian_vector_products_of_a_checkpointed_recursion(dives):
    """``rv.hvp`` and ``rv.hessian`` with ``checkpoint=`` differentiate the
    checkpointed gradient in forward mode.  One segment a step: every call
    and return of ``dive`` ends a step, so steps resume from snapshots taken
    inside the recursion, whose frames hold ``x``; the snapshots, restores
    and drops of the frame stacks must carry the frames' tangents.  The
    product equals the store-all gradient's tangent and JAX's forward over
    reverse; ``rv.jvp`` runs ``f`` forward, with no schedule to compose."""
    _, interpreted, policy, (gradient, _), _ = dives
    (found, _) = rv.hvp(interpreted, DIVE, (1.0, None), **policy)
    assert found == pytest.approx(rv.hvp(interpreted, DIVE, (1.0, None))[0], rel=1e-12)
    loss = jax.grad(lambda x: dive_jax(x, DIVE[1]))
    assert found == pytest.approx(float(jax.jvp(loss, (DIVE[0],), (1.0,))[1]), rel=1e-12)
    np.testing.assert_allclose(rv.hessian(interpreted, DIVE, **policy), [[found]], rtol=1e-14)
    _, tangents = rv.jvp(interpreted, DIVE, (1.0, None))
    assert tangents[0] == pytest.approx(gradient, rel=1e-12)  # JAX's (the native test)
