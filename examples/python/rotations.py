"""Seed 001's adaptive-grid caricature (Siskind & Pearlmutter, section 2):
ordinary Python, differentiated with checkpointing split at outer
iterations or at arbitrary execution points.

The state ``x`` (length ``n``) is updated by an outer loop of ``l``
iterations; the ``i``-th runs an inner loop of
``m(i) = 2^(⌊lg l⌋ − ⌊lg(1 + (1013 ⌊3^φ⌋ i mod l))⌋)`` steps, one on most
iterations but about ``l`` on a few (``inner_count``).  A step computes
``y = |x|`` and then ``x = rot2(1.4 y, rot1(1.2 y, x))``: ``rot1(θ, x)``
rotates each pair ``(x[2j], x[2j+1])`` by ``θ``, ``rot2(θ, x)`` each pair
``(x[2j+1], x[2j+2])`` (``step``).  The output is ``|x|²/2`` of the final
state.  Rotations keep the norm and the angles depend only on the norm, so
in real arithmetic ``f(x₀) = |x₀|²/2`` and ``∇f = x₀``: an exact answer to
check every schedule against, at any size.

Four forms of the same function:

* ``rotations``: unmarked, so its gradient keeps a tape of every step
  (store-all);
* ``rotations_bisection``: ``rv.checkpointed(range(l))``: the seed's binary
  bisection over the outer iterations;
* ``rotations_iterations``: ``rv.checkpointed(range(l), snapshots=4)``:
  binomial (Revolve) over the outer iterations; a snapshot may only be taken
  between them, so one long outer iteration is taped whole: memory grows
  like the longest inner loop, O(l);
* ``rotations_work``: ``split="work"``: split points anywhere between
  steps (the loop nest is flattened into one loop of primitive steps,
  counted before the reverse sweep, as the seed does), so memory is the 4
  snapshots plus the tape of one step, whatever ``l``.

``rotations_numpy`` is the same computation in numpy, for references.
"""

import math

import numpy as np

import revmlir as rv


@rv.ordinary
def inner_count(i, l, phi):
    """The duration of outer iteration ``i``."""
    top = int(math.log2(l))
    return 2 ** (top - int(math.log2(1 + (1013 * int(3.0 ** phi) * i) % l)))


@rv.ordinary
def norm(x):
    """``|x|``."""
    s = 0.0
    for k in range(len(x)):
        s += x[k] * x[k]
    return math.sqrt(s)


@rv.ordinary
def rotate_pairs(theta, x, first):
    """Rotate each pair ``(x[k], x[k+1])``, ``k = first, first + 2, …``, by
    ``theta``: ``rot1`` from 0, ``rot2`` from 1."""
    c = math.cos(theta)
    s = math.sin(theta)
    for k in range(first, len(x) - 1, 2):
        a = x[k]
        x[k] = c * a - s * x[k + 1]
        x[k + 1] = s * a + c * x[k + 1]


@rv.ordinary
def step(x):
    """One primitive step: ``x = rot2(1.4 y, rot1(1.2 y, x))``, ``y = |x|``."""
    y = norm(x)
    rotate_pairs(1.2 * y, x, 0)
    rotate_pairs(1.4 * y, x, 1)


@rv.ordinary
def output(x):
    """``|x|²/2``."""
    y = norm(x)
    return 0.5 * y * y


@rv.ordinary
def rotations(x, l, phi):
    for i in range(l):
        for j in range(inner_count(i, l, phi)):
            step(x)
    return output(x)


@rv.ordinary
def rotations_bisection(x, l, phi):
    for i in rv.checkpointed(range(l)):
        for j in range(inner_count(i, l, phi)):
            step(x)
    return output(x)


@rv.ordinary
def rotations_iterations(x, l, phi):
    for i in rv.checkpointed(range(l), snapshots=4):
        for j in range(inner_count(i, l, phi)):
            step(x)
    return output(x)


@rv.ordinary
def rotations_work(x, l, phi):
    for i in rv.checkpointed(range(l), snapshots=4, split="work"):
        for j in range(inner_count(i, l, phi)):
            step(x)
    return output(x)


SCHEDULES = {"store-all": rotations, "bisection": rotations_bisection,
             "binomial": rotations_iterations, "binomial, split anywhere": rotations_work}
"""Every form, by the schedule its gradient runs."""

N, PHI = 1000, 3.0
L = (53, 101, 211, 401, 809, 1601, 3203)
"""The seed's sizes: ``n``, ``φ`` and the outer trip counts."""


def seed_state(n: int = N) -> np.ndarray:
    """The seed's ``x₀ = (n, n − 1, …, 1)``."""
    return np.arange(n, 0, -1, dtype=float)


def durations(l: int, phi: float) -> list[int]:
    """``m(i)`` for every outer iteration."""
    return [inner_count.pyfunc(i, l, phi) for i in range(l)]


def rotations_numpy(x: np.ndarray, l: int, phi: float) -> float:
    x = np.array(x, dtype=float)
    for m in durations(l, phi):
        for _ in range(m):
            y = np.sqrt(np.dot(x, x))
            for theta, first in ((1.2 * y, 0), (1.4 * y, 1)):
                c, s = np.cos(theta), np.sin(theta)
                a, b = x[first:-1:2].copy(), x[first + 1::2].copy()
                x[first:-1:2], x[first + 1::2] = c * a - s * b, s * a + c * b
    return 0.5 * float(np.dot(x, x))


if __name__ == "__main__":
    x0 = seed_state()
    print(f"f(x0) = |x0|^2/2 = {0.5 * x0 @ x0:.0f}; the gradient is x0")
    for l in L[:2]:
        for schedule, f in SCHEDULES.items():
            value = f(x0.copy(), l, PHI)
            g = rv.gradient(f, (x0.copy(), l, PHI))[0]
            print(f"l = {l:4d} {schedule:26s} f = {value:.6f}, max |g - x0|/|x0| = "
                  f"{np.max(np.abs(g - x0) / x0):.1e}")
