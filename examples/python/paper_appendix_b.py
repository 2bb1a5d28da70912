"""Appendix B of the NiLang paper (seed 000) in reversible Python.

* B.1, Listing 13 — ``i_affine``: y += W x + b in place, checks off.
* B.2, Listing 14 — ``i_umm``: multiply by a real unitary (orthogonal)
  matrix given by its two-level (Givens) decomposition, with no extra memory:
  the ROT instructions are their own record.
* B.3, Listing 16 — ``mypower``: out += x^n with log numbers, whose ``*=`` is
  reversible, inside compute–copy–uncompute.

Differences from the listings, all deliberate:

* Listing 13's ``@safe @assert size(W) == (length(y), length(x)) && …`` is
  an ``assert`` in an ``rv.safe`` block, which a wrong shape stops with an
  ``rv.ExecutionError`` at the assertion.
* Listing 14 as printed rotates column 1 for every ``l`` and keeps one
  counter ``k`` over all columns, which only matches ``k → length(θ)`` when
  N = 1.  Here every column ``l`` is rotated by the same M(M−1)/2 angles
  (x ← U(θ) x), with a counter ``k ← 0`` … ``k → M(M−1)/2`` per column.
* Listing 16 as printed multiplies ``ly *= x`` and never uncomputes its
  routine; here ``ly *= lx`` and ``~r`` frees ``ly`` and ``lx``.
"""

import numpy as np

import revmlir as rv


@rv.reversible
def i_affine(y, W, b, x):
    with rv.safe():
        assert W.shape[0] == len(y) and W.shape[1] == len(x) and len(b) == len(y), "i_affine: shapes do not match"
    with rv.nocheck():
        for j in range(W.shape[1]):
            for i in range(W.shape[0]):
                y[i] += W[i, j] * x[j]
        for i in range(W.shape[0]):
            y[i] += b[i]


@rv.reversible
def i_umm(x, theta):
    for l in range(x.shape[1]):
        k = rv.ancilla(0)
        for j in range(x.shape[0]):
            for i in range(x.shape[0] - 2, j - 1, -1):
                rv.rot(x[i, l], x[i + 1, l], theta[k])
                rv.inc(k)
        rv.free(k, x.shape[0] * (x.shape[0] - 1) // 2)


@rv.reversible
def mypower(out, x, n):
    if x != 0:
        with rv.routine() as r:
            ly = rv.ancilla(rv.ulog(1.0))
            lx = rv.ancilla(rv.ulog(1.0))
            lx *= rv.ulog(x)
            for i in range(n):
                ly *= lx
        out += float(ly)
        ~r


def unitary_matrix(theta: np.ndarray, m: int) -> np.ndarray:
    """The M×M matrix ``i_umm`` applies to each column, built with numpy: the
    product of the Givens rotations in the order the program applies them."""
    u = np.eye(m)
    k = 0
    for j in range(m):
        for i in range(m - 2, j - 1, -1):
            c, s = np.cos(theta[k]), np.sin(theta[k])
            g = np.eye(m)
            g[i, i], g[i, i + 1], g[i + 1, i], g[i + 1, i + 1] = c, -s, s, c
            u = g @ u
            k += 1
    return u


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    W, b, x, y = rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=2), np.zeros(3)
    i_affine(y, W, b, x)
    print("affine:", y, "numpy:", W @ x + b)
    a = rng.normal(size=(4, 2))
    theta = rng.normal(size=6)
    expected = unitary_matrix(theta, 4) @ a
    i_umm(a, theta)
    print("unitary: max |x - U x0| =", np.abs(a - expected).max())
    print("power: mypower(0.0, 1.5, 7) =", mypower(0.0, 1.5, 7)[0], "1.5**7 =", 1.5**7)
