"""Seed 001's adaptive-grid caricature (Siskind & Pearlmutter, sections 2 and
6), exactly as the seed states it, in ordinary Python: no annotation on the
program and no rescaling of its inputs.

The state ``x`` (length ``n``) starts at ``x₀ = (n, n − 1, …, 1)``.  An
outer loop runs ``i = 1 … l``; its ``i``-th iteration runs an inner loop of
``m(i) = 2^(⌊lg l⌋ − ⌊lg(1 + (1013 ⌊3^φ⌋ i mod l))⌋)`` steps, one on most
iterations but about ``l`` on a few (``inner_count``).  A step computes
``y = ‖x‖`` and then ``x = rot2(1.4 y, rot1(1.2 y, x))``: ``rot1(θ, x)``
rotates each pair ``(x[2j], x[2j+1])`` by ``θ``, ``rot2(θ, x)`` each pair
``(x[2j+1], x[2j+2])`` (``step``).  The output is ``‖x‖²/2`` of the final
state.  Rotations keep the norm and the angles depend only on the norm, so
in real arithmetic ``f(x₀) = ‖x₀‖²/2`` and ``∇f = x₀``: at the seed's
``n = 1000``, ``φ = 3``, ``f = 166916750`` for every ``l``.

``rotations`` is the program itself, unmarked, and its gradient under each
policy is ``rv.gradient(rotations, args, checkpoint=…)`` (``POLICIES``):
with no annotation the function is run as a state machine over its
primitive steps, the straight-line segments between control points
(docs/checkpointing.md, "Checkpointing anywhere, with no annotation"); a
rotation step is about ``2n`` of them (an iteration of ``norm``'s loop, of
each ``rotate_pairs`` loop).  ``checkpoint="bisection"`` is the seed's own
schedule, binary bisection over the counted steps (about ``log₂`` of their
number in snapshots); ``checkpoint="binomial", snapshots=4`` is Revolve
with 4 snapshots; ``checkpoint="store_all"`` keeps the state at every step,
the reference; and with no ``checkpoint=`` the gradient keeps Bennett's tape
of every step.  ``base=b`` makes ``b`` segments one checkpointed step.

The marked forms show what the no-annotation API does not:

* ``rotations_bisection`` and ``rotations_work``: the outer loop marked
  ``rv.checkpointed(range(1, l + 1), split="work")`` (bisection) or with
  ``snapshots=4`` (Revolve): the steps are the user's, one rotation step
  (an inner iteration) each, not a segment, so a step is ``2n`` times more
  work and there are ``2n`` times fewer of them;
* ``rotations_iterations``: ``snapshots=4`` alone, Revolve over the outer
  iterations only, as Tapenade's ``binomial-ckp`` pragma in the seed: a
  snapshot may only be taken between them, so one long outer iteration is
  taped whole and memory grows like the longest inner loop, O(l).

Precision.  The program is computed as the seed states it, in float64: the
norm as the square root of the sum of squares in order, the angles
``1.2 y`` and ``1.4 y`` unreduced (``y ≈ 1.8·10⁴``, so ``θ ≈ 2·10⁴`` rad;
``math.cos`` and ``math.sin`` reduce such arguments exactly, so reducing
them in the program would only add a rounding).  The value comes out
within 10⁻¹⁴ of 166916750.  The gradient's error is the program's own
conditioning, the same under every schedule (their gradients are bitwise
equal; the unannotated form's, equal under each of its policies, differ
from them by rounding alone, 5·10⁻¹¹ against 1.5·10⁻¹¹ at ``l = 53``): the
angle's sensitivity to the norm makes a step's Jacobian
``R + (∂R/∂θ x)(1.2 x/‖x‖)ᵀ`` of norm about ``1.2‖x‖ ≈ 2·10⁴``, so each
step's forward rounding (10⁻¹⁶ of ``‖x‖``) reaches the adjoint as a change
of scale of about 2·10⁻¹², and these add up over the ``W`` steps:
``∇f = (1 + ε) x₀`` with ``ε`` ≈ 10⁻¹¹ at ``l = 53``, 10⁻⁹ at ``l = 809``
and 4·10⁻⁸ at ``l = 3203``, a uniform relative error that JAX's float64
gradient of the same program shares (``benchmarks/RESULTS.md``, "Checkpointing
anywhere").  Being a uniform scale, it is the same number whether measured
componentwise, ``max_k |g_k − x₀_k| / x₀_k`` (``relative_error``), or
normwise, ``‖g − x₀‖ / ‖x₀‖`` (``normwise_error``, the usual meaning of a
gradient's relative error).  Both meet 10⁻⁸ up to ``l = 809`` under every
policy, up to ``l = 1601`` for the unannotated form with ``base=1024``
(1.3·10⁻⁹, where the marked forms and Bennett's tape give 1.3·10⁻⁸), and
neither does at ``l = 3203`` (5.6·10⁻⁸ unannotated, 4.3·10⁻⁸ marked, 7.1·10⁻⁸
for JAX).  Nor does the seed's own Fortran with the adjoint Tapenade would
write for it, in float64: 2.5·10⁻⁸ at ``l = 3203``, and 1.3·10⁻¹¹ with the
same code in 80-bit arithmetic (``benchmarks/rotations_precision.py``;
``benchmarks/RESULTS.md`` has every ``l``).

``rotations_numpy`` is the same computation in numpy, for references.
"""

import math
import sys

import numpy as np

import revmlir as rv


@rv.ordinary
def inner_count(i, l, phi):
    """The duration of outer iteration ``i``."""
    top = int(math.log2(l))
    return 2 ** (top - int(math.log2(1 + (1013 * int(3.0**phi) * i) % l)))


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
    """One rotation step: ``x = rot2(1.4 y, rot1(1.2 y, x))``, ``y = |x|``."""
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
    for i in range(1, l + 1):
        for j in range(inner_count(i, l, phi)):
            step(x)
    return output(x)


@rv.ordinary
def rotations_bisection(x, l, phi):
    for i in rv.checkpointed(range(1, l + 1), split="work"):
        for j in range(inner_count(i, l, phi)):
            step(x)
    return output(x)


@rv.ordinary
def rotations_iterations(x, l, phi):
    for i in rv.checkpointed(range(1, l + 1), snapshots=4):
        for j in range(inner_count(i, l, phi)):
            step(x)
    return output(x)


@rv.ordinary
def rotations_work(x, l, phi):
    for i in rv.checkpointed(range(1, l + 1), snapshots=4, split="work"):
        for j in range(inner_count(i, l, phi)):
            step(x)
    return output(x)


POLICIES = {
    "bisection": {"checkpoint": "bisection"},
    "binomial": {"checkpoint": "binomial", "snapshots": 4},
    "store_all": {"checkpoint": "store_all"},
    "Bennett's tape": {},
}
"""``checkpoint=`` options of ``rv.gradient(rotations, …)``, by policy."""

MARKED = {
    "bisection, marked": rotations_bisection,
    "binomial, marked": rotations_work,
    "binomial at outer iterations, marked": rotations_iterations,
}
"""The marked forms, by the schedule their (plain) gradient runs."""


def gradient(policy: str, x: np.ndarray, l: int, phi: float, base: int | None = None) -> np.ndarray:
    """``∇f`` with respect to ``x`` under a policy of ``POLICIES`` (``base``
    segments to a checkpointed step) or a form of ``MARKED``."""
    if policy in MARKED:
        return rv.gradient(MARKED[policy], (x, l, phi))[0]
    options = POLICIES[policy] | ({"base": base} if base is not None else {})
    return rv.gradient(rotations, (x, l, phi), **options)[0]


N, PHI = 1000, 3.0
L = (53, 101, 211, 401, 809, 1601, 3203)
"""The seed's sizes: ``n``, ``φ`` and the outer trip counts."""
EXACT = 166916750.0
"""``f(x₀) = ‖x₀‖²/2`` at ``n = 1000``."""


def seed_state(n: int = N) -> np.ndarray:
    """The seed's ``x₀ = (n, n − 1, …, 1)``."""
    return np.arange(n, 0, -1, dtype=float)


def durations(l: int, phi: float) -> list[int]:
    """``m(i)`` for every outer iteration ``i = 1 … l``."""
    return [inner_count.pyfunc(i, l, phi) for i in range(1, l + 1)]


def segments(l: int, phi: float, n: int = N) -> int:
    """The primitive steps (segments) the unannotated ``rotations`` runs as
    a state machine, ``W (2n + 3) + 2l + n + 3`` for ``W`` rotation steps:
    each is ``n`` iterations of ``norm``'s loop, ``n − 1`` pair rotations
    and 4 segments around the loops; each outer iteration adds its begin
    and end, the output its norm (tests/test_rotations_seed.py counts them
    on the interpreter)."""
    return sum(durations(l, phi)) * (2 * n + 3) + 2 * l + n + 3


def rotations_numpy(x: np.ndarray, l: int, phi: float) -> float:
    x = np.array(x, dtype=float)
    for m in durations(l, phi):
        for _ in range(m):
            y = np.sqrt(np.dot(x, x))
            for theta, first in ((1.2 * y, 0), (1.4 * y, 1)):
                c, s = np.cos(theta), np.sin(theta)
                a, b = x[first:-1:2].copy(), x[first + 1 :: 2].copy()
                x[first:-1:2], x[first + 1 :: 2] = c * a - s * b, s * a + c * b
    return 0.5 * float(np.dot(x, x))


def relative_error(g: np.ndarray, x0: np.ndarray) -> float:
    """``max_k |g_k − x0_k| / x0_k``: the gradient's error against the exact
    ``∇f = x₀``, component by component (the seed's ``x₀`` has no zero)."""
    return float(np.max(np.abs(g - x0) / np.abs(x0)))


def normwise_error(g: np.ndarray, x0: np.ndarray) -> float:
    """``‖g − x0‖ / ‖x0‖``: the gradient's error against the exact
    ``∇f = x₀`` as a vector, the usual relative error of a gradient."""
    return float(np.linalg.norm(g - x0) / np.linalg.norm(x0))


def main(sizes: tuple[int, ...] = L[:2]) -> None:
    """f and the gradient's error under every policy and marked form at the
    seed's ``n``, ``φ`` and the given ``l``."""
    x0 = seed_state()
    print(f"n = {N}, x0 = (n, ..., 1), phi = {PHI:g}: exact f = {EXACT:.0f}, exact gradient x0")
    for l in sizes:
        value = rotations(x0.copy(), l, PHI)
        print(f"l = {l:4d}: f = {value:.6f} (|f - exact|/f = {abs(value - EXACT) / EXACT:.1e})")
        for policy in (*POLICIES, *MARKED):
            g = gradient(policy, x0.copy(), l, PHI)
            print(
                f"  {policy:38s} max_k |g_k - x0_k|/x0_k = {relative_error(g, x0):.1e}, "
                f"|g - x0|/|x0| = {normwise_error(g, x0):.1e}"
            )


if __name__ == "__main__":
    main(tuple(int(a) for a in sys.argv[1:]) or L[:2])
