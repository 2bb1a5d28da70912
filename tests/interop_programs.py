"""revmlir functions that the JAX and PyTorch binding tests run inside
each framework, next to the same math written in that framework."""

from __future__ import annotations

import math
from typing import NamedTuple

import revmlir as rv
from python_examples import load_example

lgamma = load_example("user_primitives").lgamma
"""``math.lgamma`` as a user primitive whose rules give digamma."""


@rv.reversible
def energy(e, x, w):
    for i in range(len(x)):
        e += w * x[i] * x[i] + math.sin(x[i])


@rv.reversible
def affine(y, W, b, x):
    for j in range(W.shape[1]):
        for i in range(W.shape[0]):
            y[i] += W[i, j] * math.tanh(x[j])
    for i in range(len(y)):
        y[i] += b[i]


class Spring(NamedTuple):
    k: float
    x: float


@rv.reversible
def spring_energy(e, s: Spring):
    """Takes a struct, which neither framework passes."""
    e += 0.5 * s.k * s.x * s.x


@rv.reversible
def stash(s, x: float):
    """Takes a stack, which neither framework passes."""
    rv.copy_push(s, x)


@rv.ordinary
def relax(u, c, steps):
    """Overwrites u; returns its energy and c·u[0]."""
    for step in range(steps):
        for i in range(len(u)):
            u[i] = c * u[i] + math.cos(u[i])
    e = 0.0
    for i in range(len(u)):
        e += u[i] * u[i]
    return e, c * u[0]


@rv.ordinary
def diffuse(u, tmp, c, steps):
    """A checkpointed time loop; returns the energy of the final state."""
    for step in rv.checkpointed(range(steps), snapshots=3):
        for i in range(1, len(u) - 1):
            tmp[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, len(u) - 1):
            u[i] = tmp[i]
    e = 0.0
    for i in range(len(u)):
        e += u[i] * u[i]
    return e


@rv.ordinary
def log_beta_sum(a, b):
    """Σᵢ log B(aᵢ, b) through the lgamma primitive (decision 64: an
    ordinary function calls it through rev.apply)."""
    total = 0.0
    for i in range(len(a)):
        total += lgamma(a[i]) + lgamma(b) - lgamma(a[i] + b)
    return total


@rv.reversible
def leaky(y, x):
    """Frees an ancilla that still holds x: a run-time check fails."""
    a = rv.ancilla(0.0)
    a += x
    y += a
    rv.free(a)


# The same math in an array framework ``xp`` (jax.numpy or torch), whose
# own derivatives the bindings' are checked against.


def energy_reference(xp, e, x, w):
    return e + xp.sum(w * x * x + xp.sin(x)), x, w


def affine_reference(xp, y, W, b, x):
    return y + W @ xp.tanh(x) + b, W, b, x


def log_beta_sum_reference(gammaln, xp, a, b):
    return xp.sum(gammaln(a) + gammaln(b) - gammaln(a + b)), a, b


def relax_reference(xp, u, c, steps):
    for _ in range(steps):
        u = c * u + xp.cos(u)
    return xp.sum(u * u), c * u[0], u, c, steps
