"""``rv.to_jax``: revmlir functions inside JAX programs, checked against
JAX's own derivatives of the same math under ``jit``, ``grad``, ``jvp``,
``jacfwd``, ``jacrev`` and ``vmap``."""

from __future__ import annotations

import re
import sys
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from interop_programs import (
    Spring,
    affine,
    affine_reference,
    diffuse,
    energy,
    energy_reference,
    leaky,
    log_beta_sum,
    log_beta_sum_reference,
    relax,
    relax_reference,
    spring_energy,
    stash,
)
from jax_checks import close, loss

jax.config.update("jax_enable_x64", True)

energy_jax = partial(energy_reference, jnp)
affine_jax = partial(affine_reference, jnp)
relax_jax = partial(relax_reference, jnp)
log_beta_sum_jax = partial(log_beta_sum_reference, jax.scipy.special.gammaln, jnp)

rng = np.random.default_rng(7)
X = jnp.asarray(rng.normal(size=4))
W = jnp.asarray(rng.normal(size=(3, 4)))
B = jnp.asarray(rng.normal(size=3))
U = jnp.asarray(rng.normal(size=5))


@pytest.mark.parametrize(
    ("binding", "module", "message"),
    [
        ("to_jax", "jax", "rv.to_jax needs JAX: pip install jax"),
        ("to_torch", "torch", "rv.to_torch needs PyTorch: pip install 'revmlir[torch]'"),
    ],
)
def test_a_missing_framework_is_named_with_what_to_install(
    monkeypatch: pytest.MonkeyPatch, binding: str, module: str, message: str
):
    """Without the framework (``None`` in ``sys.modules`` is how Python
    spells a module that cannot be imported), the binding says what it needs
    instead of a bare ``No module named 'torch'`` from inside revmlir."""
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.delitem(sys.modules, f"revmlir.interop.{module}", raising=False)
    with pytest.raises(ModuleNotFoundError, match=re.escape(message)) as error:
        getattr(rv, binding)(affine)
    assert error.value.name == module


def test_call_returns_every_argument_updated():
    found = rv.to_jax(energy)(0.25, X, 1.5)
    assert len(found) == 3 and all(isinstance(v, jax.Array) for v in found)
    close(found, energy_jax(0.25, X, 1.5))
    close(jax.jit(rv.to_jax(energy))(0.25, X, 1.5), energy_jax(0.25, X, 1.5))


def test_ordinary_returns_results_then_arguments():
    found = jax.jit(rv.to_jax(relax), static_argnums=2)(U, 0.5, 3)
    assert [v.dtype for v in found] == [jnp.float64, jnp.float64, jnp.float64, jnp.float64, jnp.int64]
    close(found, relax_jax(U, 0.5, 3))


def test_jit_grad_of_scalar_and_array():
    grad = jax.jit(jax.grad(loss(rv.to_jax(energy)), argnums=(0, 1)))
    close(grad(X, 1.5), jax.grad(loss(energy_jax), argnums=(0, 1))(X, 1.5))


def test_grad_of_a_program_around_the_call():
    """The revmlir function is one step of a bigger JAX program."""

    def model(f, x, w):
        e, x2, _ = f(0.0, jnp.sin(x) * w, w * w)
        return jnp.log1p(e * e) + jnp.sum(x2)

    f, ref = rv.to_jax(energy), energy_jax
    close(
        jax.jit(jax.grad(lambda x, w: model(f, x, w), argnums=(0, 1)))(X, 0.7),
        jax.grad(lambda x, w: model(ref, x, w), argnums=(0, 1))(X, 0.7),
    )


def test_jvp():
    tangents = (jnp.asarray(rng.normal(size=4)), 0.3)
    found = jax.jvp(loss(rv.to_jax(energy)), (X, 1.5), tangents)
    close(found, jax.jvp(loss(energy_jax), (X, 1.5), tangents))
    close(jax.jit(lambda x, w, dx, dw: jax.jvp(loss(rv.to_jax(energy)), (x, w), (dx, dw)))(X, 1.5, *tangents), found)


def test_jacobians_of_array_outputs():
    f = rv.to_jax(affine)
    args = (jnp.zeros(3), W, B, X)
    for jacobian in (jax.jacfwd, jax.jacrev):
        found = jax.jit(jacobian(lambda W, x: f(args[0], W, args[2], x)[0], argnums=(0, 1)))(W, X)
        close(found, jacobian(lambda W, x: affine_jax(args[0], W, args[2], x)[0], argnums=(0, 1))(W, X))


def test_vmap_of_call_and_of_grad():
    xs = jnp.asarray(rng.normal(size=(6, 4)))
    f = loss(rv.to_jax(energy))
    close(jax.vmap(f, in_axes=(0, None))(xs, 1.5), jax.vmap(loss(energy_jax), in_axes=(0, None))(xs, 1.5))
    ws = jnp.linspace(0.5, 1.0, 6)
    found = jax.jit(jax.vmap(jax.grad(f, argnums=(0, 1))))(xs, ws)
    close(found, jax.vmap(jax.grad(loss(energy_jax), argnums=(0, 1)))(xs, ws))


def test_grad_of_vmap_and_nested_vmaps():
    """A batch of a batch merges into one leading axis; the tangent and
    cotangent primitives stay transposable under it."""
    xs = jnp.asarray(rng.normal(size=(2, 3, 4)))
    f, ref = loss(rv.to_jax(energy)), loss(energy_jax)

    def total(g):
        batched = jax.vmap(jax.vmap(g, in_axes=(0, None)), in_axes=(0, None))
        return lambda xs, w: jnp.sum(jnp.sin(batched(xs, w)))

    close(jax.jit(jax.grad(total(f), argnums=(0, 1)))(xs, 1.5), jax.grad(total(ref), argnums=(0, 1))(xs, 1.5))
    close(jax.jacfwd(total(f), argnums=1)(xs, 1.5), jax.jacfwd(total(ref), argnums=1)(xs, 1.5))
    rows = [jax.jacrev(jax.vmap(g, in_axes=(0, None)))(xs[0], 1.5) for g in (f, ref)]
    close(rows[0], rows[1])


def test_an_empty_batch_runs_nothing():
    """A batch of size 0 gives empty results of the batched shapes, inside
    and outside ``jit``, for the call, its gradient and an inner batch (it
    was taken for no batch: an unbatched 2-d argument, or an IndexError
    under ``jit``)."""
    f, ref = loss(rv.to_jax(energy)), loss(energy_jax)
    empty = jnp.zeros((0, 4))
    for transform in (lambda g: g, jax.jit):
        close(transform(jax.vmap(f, in_axes=(0, None)))(empty, 1.5), jnp.zeros(0))
        found = transform(jax.vmap(jax.grad(f, argnums=(0, 1)), in_axes=(0, None)))(empty, 1.5)
        assert [v.shape for v in found] == [(0, 4), (0,)]
    nested = jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(0, None))
    assert nested(jnp.zeros((2, 0, 4)), 1.5).shape == (2, 0)
    assert nested(jnp.zeros((0, 2, 4)), 1.5).shape == (0, 2)
    total = jax.grad(lambda w, g: jnp.sum(jax.vmap(g, in_axes=(0, None))(empty, w)))
    close(total(1.5, f), total(1.5, ref))


def test_ordinary_reverse_mode():
    f = rv.to_jax(relax)
    for k in (0, 1):
        found = jax.jit(jax.grad(lambda u, c: f(u, c, 3)[k], argnums=(0, 1)))(U, 0.5)
        close(found, jax.grad(lambda u, c: relax_jax(u, c, 3)[k], argnums=(0, 1))(U, 0.5))
    found = jax.jacrev(lambda u: f(u, 0.5, 2)[2])(U)
    close(found, jax.jacrev(lambda u: relax_jax(u, 0.5, 2)[2])(U))
    us = jnp.stack([U, 2 * U])
    found = jax.vmap(jax.grad(lambda u: f(u, 0.5, 2)[0]))(us)
    close(found, jax.vmap(jax.grad(lambda u: relax_jax(u, 0.5, 2)[0]))(us))


def test_checkpointed_ordinary_function():
    """Its gradient runs the checkpointing schedule; jacrev's rows share
    one forward run (pullback.batch)."""

    def reference(u, c, steps):
        for _ in range(steps):
            u = u.at[1:-1].set(u[1:-1] + c * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
        return jnp.sum(u * u), u

    f = rv.to_jax(diffuse)
    found = jax.jit(jax.grad(lambda u, c: f(u, jnp.zeros(5), c, 12)[0], argnums=(0, 1)))(U, 0.2)
    close(found, jax.grad(lambda u, c: reference(u, c, 12)[0], argnums=(0, 1))(U, 0.2))
    found = jax.jacrev(lambda u: f(u, jnp.zeros(5), 0.2, 12)[1])(U)
    close(found, jax.jacrev(lambda u: reference(u, 0.2, 12)[1])(U))


A = jnp.asarray([0.5, 1.5, 2.5, 7.0])


def test_a_user_primitive_in_an_ordinary_function():
    """``lgamma``'s calls run the C function, natively under ``jit`` (custom
    calls), and its derivatives go through its digamma rules under ``grad``,
    ``jvp`` and ``vmap``; checked against ``jax.scipy.special.gammaln``."""
    f, ref = (lambda a, b: g(a, b)[0] for g in (rv.to_jax(log_beta_sum), log_beta_sum_jax))
    close(jax.jit(jax.grad(f, argnums=(0, 1)))(A, 0.75), jax.grad(ref, argnums=(0, 1))(A, 0.75))
    tangents = (jnp.asarray(rng.normal(size=4)), 0.3)
    close(jax.jvp(f, (A, 0.75), tangents), jax.jvp(ref, (A, 0.75), tangents))
    batch, bs = jnp.stack([A, A + 1.0]), jnp.asarray([0.75, 2.0])
    close(jax.vmap(jax.grad(f))(batch, bs), jax.vmap(jax.grad(ref))(batch, bs))


relax_interpreted = rv.ordinary(relax.pyfunc, backend="interpreter")
"""``relax`` on the interpreter, whose checkpointed gradients are ready in
a fraction of the time native ones take to compile."""


def test_checkpoint_policies_give_the_store_all_gradient():
    """``checkpoint=`` reaches the pullback (a memory budget that holds no
    snapshot fails it), whose gradient equals the store-all one and JAX's.
    A checkpointed gradient reruns ``f`` through the callback, which
    ``lowering="ffi"`` refuses, saying so."""
    grad = lambda f: jax.jit(jax.grad(lambda u, c: f(u, c, 2)[0], argnums=(0, 1)))  # noqa: E731
    stored = grad(rv.to_jax(relax_interpreted))(U, 0.5)
    close(stored, jax.grad(lambda u, c: relax_jax(u, c, 2)[0], argnums=(0, 1))(U, 0.5))
    close(grad(rv.to_jax(relax_interpreted, checkpoint="bisection", base=1))(U, 0.5), stored)
    with pytest.raises(ValueError, match=r"memory=1 bytes holds no snapshot of the function's state"):
        jax.grad(lambda u: rv.to_jax(relax_interpreted, checkpoint="auto", memory=1)(u, 0.5, 2)[0])(U)
    with pytest.raises(NotImplementedError, match=r"no custom call, the gradient of a checkpointed @rv.ordinary"):
        grad(rv.to_jax(relax, lowering="ffi", checkpoint="bisection"))(U, 0.5)


def test_inputs_are_left_alone():
    x = np.array([1.0, 2.0])
    found = rv.to_jax(relax)(x, 0.5, 2)
    assert np.all(x == [1.0, 2.0]) and not np.allclose(found[2], x)


@rv.reversible
def add_squares(a, b):
    for i in range(len(a)):
        a[i] += b[i] * b[i]


def test_one_array_for_two_arguments_in_every_mode():
    """JAX's arrays are values: one passed for both arguments of a function
    that writes one of them runs on a copy, in a call and in each
    derivative, also where ``checkpoint`` hands the cotangent rule one
    buffer twice."""
    f = rv.to_jax(add_squares)
    x = jnp.arange(1.0, 5.0)

    def loss_of(g):
        return lambda x: jnp.sum(g(x, x)[0] ** 2)

    expected = jax.grad(loss_of(lambda a, b: (a + b * b,)))(x)
    for mode in (jax.grad, lambda h: jax.grad(jax.checkpoint(h)), lambda h: jax.jit(jax.grad(jax.checkpoint(h)))):
        close(mode(loss_of(f))(x), expected)
    _, tangent = jax.jvp(jax.checkpoint(loss_of(f)), (x,), (jnp.ones(4),))
    close(tangent, jnp.sum(expected))


# -- errors ----------------------------------------------------------------------


def test_not_a_revmlir_function():
    with pytest.raises(TypeError, match=r"rv.to_jax expects a @rv.reversible or @rv.ordinary function"):
        rv.to_jax(jnp.sin)
    with pytest.raises(TypeError, match=r"rv.to_jax expects"):
        rv.to_jax(~energy)


def test_checkpoint_options_are_checked_as_for_rv_gradient():
    for options, error, message in [
        ({"checkpoint": "bisection"}, TypeError, r"rv.to_jax: checkpoint= applies to @rv.ordinary functions"),
        ({"checkpoint": "revolve"}, ValueError, r"checkpoint must be one of 'bisection'"),
        ({"snapshots": 3}, ValueError, r"snapshots= needs checkpoint="),
        ({"checkpoint": "binomial"}, ValueError, r"snapshots=k is required by checkpoint='binomial'"),
        ({"checkpoint": "auto", "memory": "lots"}, ValueError, r"memory must be a number of bytes"),
        ({"checkpoint": "bisection", "base": 0}, ValueError, r"base must be >= 1, got 0"),
        ({"snapshot": 3}, TypeError, r"rv.to_jax\(\) got an unexpected keyword argument 'snapshot'"),
    ]:
        with pytest.raises(error, match=message):
            rv.to_jax(energy if error is TypeError and "checkpoint" in options else relax, **options)


def test_wrong_dtype_and_count():
    with pytest.raises(TypeError, match=r"rv.to_jax\(energy\): argument 'x' has dtype complex128"):
        jax.jit(rv.to_jax(energy))(0.0, X.astype(jnp.complex128), 1.0)
    with pytest.raises(TypeError, match=r"rv.to_jax\(energy\) takes 3 argument\(s\) \(e, x, w\), got 2"):
        rv.to_jax(energy)(0.0, X)


def test_a_struct_or_stack_argument_is_refused_naming_it():
    """JAX passes arrays and numbers (a struct was JAX's "dtype object is
    not a valid JAX array type", a stack "'s' is not a stack" at the push;
    under ``jit`` a named tuple arrives as a struct of tracers)."""
    passes = r"the framework passes arrays and numbers only, and argument 's' is"
    for transform in (lambda g: g, jax.jit):
        with pytest.raises(TypeError, match=rf"rv.to_jax\(spring_energy\): {passes} a struct \(Spring\)"):
            transform(rv.to_jax(spring_energy))(0.0, Spring(2.0, 1.0))
    with pytest.raises(TypeError, match=rf"rv.to_jax\(stash\): {passes} an rv.Stack"):
        rv.to_jax(stash)(rv.Stack(float), 1.0)


def test_arguments_by_name():
    """Arguments may be given by name, as to ``f`` itself (a keyword was
    "energy() got an unexpected keyword argument 'w'", of a function that
    has one)."""
    f = rv.to_jax(energy)
    close(jax.jit(f)(0.25, w=1.5, x=X), energy_jax(0.25, X, 1.5))
    close(jax.grad(lambda w: f(0.25, X, w=w)[0])(1.5), jax.grad(lambda w: energy_jax(0.25, X, w)[0])(1.5))
    for args, kwargs, problem in [
        ((0.0, X), {"x": X}, r"got argument 'x' twice, by position and by name"),
        ((0.0, X, 1.5), {"k": 1.0}, r"has no argument 'k'"),
        ((0.0,), {"w": 1.5}, r"is missing argument 'x'"),
    ]:
        with pytest.raises(TypeError, match=rf"rv.to_jax\(energy\) {problem} \(e, x, w\)"):
            f(*args, **kwargs)


def test_wrong_rank_is_reported_at_the_user_line_when_tracing():
    with pytest.raises(rv.ReversibleSyntaxError, match=r"interop_programs.py:\d+:\d+: 'W' has no dimension 1"):
        jax.jit(rv.to_jax(affine))(jnp.zeros(3), B, B, X)


def test_grad_with_respect_to_an_integer():
    f = rv.to_jax(relax)
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda steps: f(U, 0.5, steps)[0])(3)


def test_forward_mode_of_an_ordinary_function():
    """``jax.jvp`` of an ordinary function runs ``rv.jvp``."""
    f = rv.to_jax(relax)
    _, found = jax.jvp(lambda u: f(u, 0.5, 2)[:3], (U,), (U,))
    _, expected = jax.jvp(lambda u: relax_jax(u, 0.5, 2)[:3], (U,), (U,))
    for value, reference in zip(found, expected, strict=True):
        np.testing.assert_allclose(value, reference, rtol=1e-12, atol=1e-15)


def test_second_derivatives():
    with pytest.raises(NotImplementedError, match=r"rv.to_jax\(energy\): second derivatives are not supported"):
        jax.hessian(loss(rv.to_jax(energy)))(X, 1.5)


def test_failed_run_time_check():
    """Eagerly the revmlir error itself; under jit JAX reports the custom
    call's error with revmlir's message in it (tests/test_interop_jax_ffi.py
    checks both lowerings)."""
    with pytest.raises(rv.InvertibilityError, match="ancilla freed holding 2.0"):
        rv.to_jax(leaky)(0.0, 2.0)
    with pytest.raises(jax.errors.JaxRuntimeError, match="ancilla freed holding 2.0"):
        jax.jit(rv.to_jax(leaky))(0.0, 2.0)
