"""A coupling-layer flow (RealNVP's architecture, Dinh et al. 2017) as a
reversible program, and its inverse Jacobian products.

A coupling layer splits its state ``x`` in two halves and shifts one half by
a small network of the other:

    x[b] += W2 · tanh(W1 · x[a] + b1) + b2

so it is invertible whatever the network computes, and so is a stack of
layers alternating the halves.  Written as a ``@rv.reversible`` function the
network's hidden layer lives in an ancilla array, computed by a routine and
uncomputed after the shift: the layer is a *constant-width* program, every
step overwrites one of its inputs.  By Pearlmutter and Siskind's inverse
accumulation that makes ``J⁻¹·v`` (``rv.inverse_jvp``) and ``J⁻ᵀ·w``
(``rv.inverse_vjp``) cost what ``J·v`` and ``Jᵀ·w`` cost, where a dense
solve costs ``O(n³)``: what a normalizing flow needs to pull densities and
their gradients back through the layers.

RealNVP also scales the shifted half by ``exp(s(x[a]))``; multiplying a float
in place has no exact inverse (``y *= x`` is reversible on log numbers only),
so the layers here are the additive, volume-preserving couplings of NICE
(Dinh et al. 2015), the case RealNVP builds on.

Run it to see ``J⁻¹v`` from the inverse tangent agree with a dense solve.
"""

import math

import numpy as np

import revmlir as rv


@rv.reversible
def couple(x, layer, lower, upper, W1, b1, W2, b2):
    """Coupling layer ``l = layer``: ``x[upper:upper + h] += W2[l] ·
    tanh(W1[l] · x[lower:lower + h] + b1[l]) + b2[l]``, ``h = len(x) / 2``."""
    with rv.routine() as r:
        hidden = rv.zeros(b1.shape[1])
        for k in range(b1.shape[1]):
            hidden[k] += b1[layer, k]
            for j in range(b2.shape[1]):
                hidden[k] += W1[layer, k, j] * x[lower + j]
    for i in range(b2.shape[1]):
        x[upper + i] += b2[layer, i]
        for k in range(b1.shape[1]):
            x[upper + i] += W2[layer, i, k] * math.tanh(hidden[k])
    ~r


@rv.reversible
def flow(x, W1, b1, W2, b2):
    """Pairs of coupling layers, the first of each shifting the upper half
    of ``x`` by a network of the lower, the second the lower by the upper;
    layer ``l``'s weights are ``W1[l]`` (hidden × half), ``b1[l]``,
    ``W2[l]`` (half × hidden) and ``b2[l]``."""
    for pair in range(W1.shape[0] // 2):
        couple(x, 2 * pair, 0, b2.shape[1], W1, b1, W2, b2)
        couple(x, 2 * pair + 1, b2.shape[1], 0, W1, b1, W2, b2)


def random_flow(n: int, layers: int = 4, hidden: int = 8, seed: int = 0) -> tuple[np.ndarray, ...]:
    """A state of size ``n`` (even) and the weights of ``layers`` (even)
    layers."""
    rng = np.random.default_rng(seed)
    half = n // 2
    x = rng.normal(size=n)
    W1 = rng.normal(size=(layers, hidden, half)) / math.sqrt(half)
    b1 = rng.normal(size=(layers, hidden)) * 0.1
    W2 = rng.normal(size=(layers, half, hidden)) / math.sqrt(hidden)
    b2 = rng.normal(size=(layers, half)) * 0.1
    return x, W1, b1, W2, b2


def flow_numpy(x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray, xp=np) -> np.ndarray:
    """The same flow written with array operations (``xp`` is numpy or
    ``jax.numpy``): the independent reference of the tests."""
    half = x.shape[0] // 2
    for layer in range(W1.shape[0]):
        a, b = (x[:half], x[half:]) if layer % 2 == 0 else (x[half:], x[:half])
        b = b + W2[layer] @ xp.tanh(W1[layer] @ a + b1[layer]) + b2[layer]
        x = xp.concatenate([a, b]) if layer % 2 == 0 else xp.concatenate([b, a])
    return x


if __name__ == "__main__":
    x, *weights = random_flow(8)
    y = flow(x.copy(), *weights)[0]
    print("flow matches numpy:", np.allclose(y, flow_numpy(x, *weights)))
    v = np.linspace(-1.0, 1.0, len(x))
    _, (dx, *_) = rv.inverse_jvp(flow, (x, *weights), (v, None, None, None, None))
    J = rv.jacobian(flow, (x, *weights), wrt=[0], of=[0])
    print("J⁻¹v from the inverse tangent:", dx)
    print("max |J·(J⁻¹v) − v| =", float(np.abs(J @ dx - v).max()))
