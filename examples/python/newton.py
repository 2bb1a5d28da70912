"""Newton's method with the inverse tangent: each step ``δ = −J(x)⁻¹F(x)``
costs about one run of ``F`` and one of its tangent, and ``J`` is never
formed or factored (Pearlmutter and Siskind, "Inverse Accumulation Mode").

``residual`` maps ``x`` to ``F(x)`` in place: a chain of shears, each
element shifted by a nonlinear function of its neighbour, closed by a shift
of the first by the last.  That is a *constant-width* computation (every
step overwrites one of its inputs), so ``rv.newton_step`` gets ``J⁻¹F(x)``
from the tangent program of ``~F`` run backwards from ``F(x)``.

Because ``F`` is reversible its root is also ``(~F)(0)``: running the
program backwards from a zero residual, which is the independent check of
the test (``tests/test_inverse_accumulation.py``).  Newton's method is what
carries over to systems where only part of the state is the unknown; here
it is compared with ``scipy.optimize.root`` (Powell's hybrid method, its
Jacobian estimated by finite differences): run the file to see iterations,
solutions and times.
"""

import math
import time

import numpy as np

import revmlir as rv


@rv.reversible
def residual(x, p):
    """``x ↦ F(x)``: ``x[i+1] += sin(x[i]) / 2 + x[i]³ / 10 − p[i]``, then
    ``x[0] += tanh(x[n−1]) − p[n−1]``; ``p`` is a parameter."""
    for i in range(len(x) - 1):
        x[i + 1] += math.sin(x[i]) * 0.5 + x[i] * x[i] * x[i] * 0.1 - p[i]
    x[0] += math.tanh(x[len(x) - 1]) - p[len(x) - 1]


def solve(x: np.ndarray, p: np.ndarray, tolerance: float = 1e-12, iterations: int = 50) -> tuple[np.ndarray, int]:
    """Newton's method from ``x`` until ``max |F(x)| ≤ tolerance``: the
    root and the number of steps taken."""
    for step in range(iterations):
        (value, _), (delta, _) = rv.newton_step(residual, (x, p), wrt=[0])
        if np.abs(value).max() <= tolerance:
            return x, step
        x = x + delta
    raise RuntimeError(f"Newton's method did not converge in {iterations} steps")


def problem(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A starting point and parameters for ``n`` unknowns."""
    rng = np.random.default_rng(seed)
    return np.zeros(n), rng.uniform(-1.0, 1.0, size=n)


if __name__ == "__main__":
    from scipy.optimize import root

    for n in (4, 32, 256):
        x0, p = problem(n)
        solve(x0, p)  # compile first
        start = time.perf_counter()
        x, steps = solve(x0, p)
        ours = time.perf_counter() - start
        start = time.perf_counter()
        found = root(lambda x: residual(x.copy(), p)[0], x0, tol=1e-12)
        theirs = time.perf_counter() - start
        exact = (~residual)(np.zeros(n), p)[0]
        print(
            f"n={n}: rv.newton_step {steps} steps, {ours * 1e3:.2f} ms, max|x - (~F)(0)| = "
            f"{np.abs(x - exact).max():.1e}; scipy.optimize.root {found.nfev} evaluations, "
            f"{theirs * 1e3:.2f} ms, max|x - (~F)(0)| = {np.abs(found.x - exact).max():.1e}"
        )
