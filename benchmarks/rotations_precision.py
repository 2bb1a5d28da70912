"""How precise can a float64 gradient of seed 001's rotations example be?

The exact gradient is ``∇f = x₀`` (the rotations keep the norm), so every
digit a computed gradient misses is rounding.  This script sets ours beside
two references that do not use revmlir:

* **the seed's Fortran, adjoint in Tapenade's form**: the program of the
  seed's Fig. 8 in float64, loop for loop (``magsqr`` summing in order,
  ``rotate`` pair by pair), and the adjoint a source transformer writes for
  it: the state taped at every rotation step, ``rotate``'s adjoint pair by
  pair in reverse, accumulating ``c̄ = Σ x₁ x̄₁′ + x₂ x̄₂′`` and
  ``s̄ = Σ x₁ x̄₂′ − x₂ x̄₁′`` and giving ``θ̄ = cos θ s̄ − sin θ c̄``.  numpy
  runs it, over whole arrays where the loop's iterations are independent
  and with ``np.add.accumulate`` where they add up, so every rounding is
  the Fortran's, in its order;
* **the same in extended precision** (``--extended``): the same code in
  numpy's ``longdouble`` (x86's 80-bit format, 11 more bits of mantissa
  than float64), forward and reverse alike.

If the float64 reference misses a precision at some ``l`` that the
extended one meets by the factor of its extra bits, the miss is float64's,
not the differentiation's: no schedule can take it back.

    python benchmarks/rotations_precision.py [--extended] [--ours] [l ...]

``--ours`` adds ``rv.gradient(rotations, …, checkpoint="bisection")`` from
the same process (its compile takes seconds).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "python"))
import rotations as R


def _magsqr(x: np.ndarray) -> np.floating:
    """``y = y + x(k)*x(k)`` for ``k = 1 … n``: a left-to-right sum, which
    ``np.add.accumulate`` keeps (``np.sum`` would pair terms)."""
    return np.add.accumulate(x * x)[-1]


def _rot(theta: np.floating, x: np.ndarray, first: int) -> np.ndarray:
    """``rot1`` (``first = 0``) or ``rot2`` (``1``) of a copy of ``x``: each
    pair's update is independent of the others', so vectorising it keeps
    every rounding."""
    c, s = np.cos(theta), np.sin(theta)
    out = x.copy()
    x1, x2 = x[first:-1:2], x[first + 1 :: 2]
    out[first:-1:2], out[first + 1 :: 2] = c * x1 - s * x2, s * x1 + c * x2
    return out


def _rot_adjoint(theta: np.floating, x: np.ndarray, xb: np.ndarray, first: int) -> np.floating:
    """``rot``'s adjoint at input ``x``, pairs in reverse order as the
    reversed loop runs them: updates ``xb`` in place and returns ``θ̄``.
    ``cb = cb + x1*x1pb + x2*x2pb`` is two additions per pair, kept in order
    by accumulating the interleaved terms."""
    c, s = np.cos(theta), np.sin(theta)
    x1, x2 = x[first:-1:2][::-1], x[first + 1 :: 2][::-1]
    x1pb, x2pb = xb[first:-1:2][::-1].copy(), xb[first + 1 :: 2][::-1].copy()
    cb = np.add.accumulate(np.column_stack((x1 * x1pb, x2 * x2pb)).ravel())[-1]
    sb = np.add.accumulate(np.column_stack((x1 * x2pb, -(x2 * x1pb))).ravel())[-1]
    xb[first:-1:2], xb[first + 1 :: 2] = (c * x1pb + s * x2pb)[::-1], (c * x2pb - s * x1pb)[::-1]
    return c * sb - s * cb


def taped_gradient(x0: np.ndarray, counts: np.ndarray, dtype: type = np.float64) -> tuple[float, np.ndarray]:
    """``f`` and ``∇f`` of the seed's Fortran computed in ``dtype``, the
    state taped at every rotation step."""
    x = x0.astype(dtype)
    scales = dtype(1.2), dtype(1.4)
    tape = []
    for m in counts:
        for _ in range(m):
            tape.append(x)
            y = np.sqrt(_magsqr(x))
            x = _rot(scales[1] * y, _rot(scales[0] * y, x, 0), 1)
    f = _magsqr(x) / dtype(2)
    xb = x.copy()
    for x_in in reversed(tape):
        y = np.sqrt(_magsqr(x_in))
        yb = scales[1] * _rot_adjoint(scales[1] * y, _rot(scales[0] * y, x_in, 0), xb, 1)
        yb += scales[0] * _rot_adjoint(scales[0] * y, x_in, xb, 0)
        xb += dtype(2) * x_in * (yb / (dtype(2) * y))
    return float(f), xb


def errors(g: np.ndarray, x0: np.ndarray) -> str:
    g = np.asarray(g, dtype=np.longdouble)
    exact = x0.astype(np.longdouble)
    componentwise = float(np.max(np.abs(g - exact) / exact))
    normwise = float(np.sqrt(np.sum((g - exact) ** 2)) / np.sqrt(np.sum(exact**2)))
    return f"{componentwise:.1e} / {normwise:.1e}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=list(R.L))
    parser.add_argument("--extended", action="store_true", help="add the longdouble reference")
    parser.add_argument("--ours", action="store_true", help="add revmlir's checkpointed gradient")
    args = parser.parse_args(argv)
    import _harness as H

    x0 = R.seed_state()
    H.print_header("Precision of the rotations gradient", "error against the exact x0, componentwise / normwise")
    for l in args.sizes:
        counts = np.array(R.durations(l, R.PHI))
        f, g = taped_gradient(x0, counts)
        line = f"l = {l:5d} (W = {counts.sum():6d}): (f - exact)/exact = {(f - R.EXACT) / R.EXACT:+.1e}; Fortran float64 {errors(g, x0)}"
        if args.extended:
            line += f"; Fortran longdouble {errors(taped_gradient(x0, counts, np.longdouble)[1], x0)}"
        if args.ours:
            ours = R.gradient("bisection", x0.copy(), l, R.PHI)
            line += f"; ours (checkpoint='bisection') {errors(ours, x0)}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
