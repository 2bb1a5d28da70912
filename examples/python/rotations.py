"""Seed 001's adaptive-grid caricature (Siskind & Pearlmutter, section 2):
ordinary Python, differentiated with checkpointing split at outer
iterations or at arbitrary execution points.

The state ``x`` (length ``n``) is updated ``l`` times by an outer loop; the
``i``-th outer iteration runs an inner loop of
``m(i) = 2^(⌊lg l⌋ − ⌊lg(1 + (1013 ⌊3^φ⌋ i mod l))⌋)`` updates, small on most
iterations but about ``l`` on a few (``inner_count``).  An update rotates
the pairs of adjacent odd–even coordinates, then the even–odd ones, by an
angle proportional to ``|x|`` (``rotate``).  The output is ``y = Σ (k+1)
x_k`` of the final state.

Three forms of the same function:

* ``rotations``: unmarked, so its gradient keeps a tape of every update
  (store-all);
* ``rotations_iterations``: ``rv.checkpointed(range(l), snapshots=4)``: a
  snapshot may only be taken between outer iterations, so one long outer
  iteration is taped whole: memory grows like the longest inner loop, O(l);
* ``rotations_work``: ``split="work"``: split points anywhere between
  updates (the loop nest is flattened into one loop of primitive steps,
  counted before the reverse sweep, as the seed does), so memory is the 4
  snapshots plus the tape of one update, whatever ``l``.

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
def rotate(x):
    """Rotate odd–even, then even–odd pairs of ``x`` by ``0.01 |x|``."""
    n = len(x)
    norm = 0.0
    for k in range(n):
        norm += x[k] * x[k]
    theta = 0.01 * math.sqrt(norm)
    c = math.cos(theta)
    s = math.sin(theta)
    for k in range(0, n - 1, 2):
        a = x[k]
        x[k] = c * a - s * x[k + 1]
        x[k + 1] = s * a + c * x[k + 1]
    for k in range(1, n - 1, 2):
        a = x[k]
        x[k] = c * a - s * x[k + 1]
        x[k + 1] = s * a + c * x[k + 1]


@rv.ordinary
def output(x):
    y = 0.0
    for k in range(len(x)):
        y += x[k] * (k + 1.0)
    return y


@rv.ordinary
def rotations(x, l, phi):
    for i in range(l):
        for j in range(inner_count(i, l, phi)):
            rotate(x)
    return output(x)


@rv.ordinary
def rotations_iterations(x, l, phi):
    for i in rv.checkpointed(range(l), snapshots=4):
        for j in range(inner_count(i, l, phi)):
            rotate(x)
    return output(x)


@rv.ordinary
def rotations_work(x, l, phi):
    for i in rv.checkpointed(range(l), snapshots=4, split="work"):
        for j in range(inner_count(i, l, phi)):
            rotate(x)
    return output(x)


def durations(l: int, phi: float) -> list[int]:
    """``m(i)`` for every outer iteration."""
    return [inner_count.pyfunc(i, l, phi) for i in range(l)]


def rotations_numpy(x: np.ndarray, l: int, phi: float) -> float:
    x = np.array(x, dtype=float)
    for m in durations(l, phi):
        for _ in range(m):
            rotate.pyfunc(x)
    return output.pyfunc(x)


if __name__ == "__main__":
    x0 = np.linspace(0.1, 1.0, 8)
    print("durations:", durations(32, 1.0))
    for f in (rotations, rotations_iterations, rotations_work):
        g_x, _, _ = rv.gradient(f, (x0.copy(), 32, 1.0))
        print(f"{f.__name__:22s} dy/dx = {np.round(g_x, 6)}")
