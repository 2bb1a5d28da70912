"""revmlir in one screen: a reversible Python function, its rev IR, the inverse
derived by rev-invert, native code running it both ways, and a gradient
obtained by running the inverse with gradient bookkeeping.

Run with ``python3 tools/dev.py demo``.
"""

import math

import numpy as np

import revmlir as rv
from revmlir.parsing import make_context
from revmlir.passes.invert import RevInvertPass


@rv.reversible
def rotate_and_log(y, x, theta):
    """y[i] += log|x[i]| for every i, then rotate the first two entries of x."""
    for i in range(len(x)):
        with rv.routine() as r:
            size = rv.ancilla(0.0)
            size += abs(x[i])
        y[i] += math.log(size)
        ~r
    rv.rot(x[0], x[1], theta)


@rv.reversible
def potential(energy, x, y):
    """energy += x²·y + sin(x·y), through an ancilla computed and uncomputed."""
    with rv.routine() as r:
        xy = rv.ancilla(0.0)
        xy += x * y
    energy += x * xy + math.sin(xy)
    ~r


def show(title: str, text: str) -> None:
    print(f"== {title} ==")
    print(text.rstrip())
    print()


def main() -> None:
    x = np.array([3.0, -4.0, 0.5])
    y = np.zeros(3)
    spec = rotate_and_log.specialization_for(y, x, 0.3)
    show("rev IR of rotate_and_log", spec.text())

    inverted = spec.module.clone()
    RevInvertPass(functions=("rotate_and_log",)).apply(make_context(), inverted)
    show("its inverse, derived by rev-invert", str(inverted.ops.last))

    x0, y0 = x.copy(), y.copy()
    rotate_and_log(y, x, 0.3)
    print(f"forward ({spec.backend} code):  y = {y}, x = {x}")
    (~rotate_and_log)(y, x, 0.3)
    print(f"backward:             y = {y}, x = {x}")
    assert np.allclose(y, y0) and np.allclose(x, x0)
    print("the inputs are restored:", np.max(np.abs(x - x0)), "max difference in x")
    print()

    gradient = rv.gradient(potential, (0.0, 0.7, -1.2), iloss=0)
    h = 1e-6
    numeric = [
        (potential(0.0, 0.7 + h, -1.2)[0] - potential(0.0, 0.7 - h, -1.2)[0]) / (2 * h),
        (potential(0.0, 0.7, -1.2 + h)[0] - potential(0.0, 0.7, -1.2 - h)[0]) / (2 * h),
    ]
    print("gradient of energy w.r.t. (energy, x, y), by reverse computing:", gradient)
    print("central finite differences for x and y:                         ", numeric)
    assert np.allclose(gradient[1:], numeric, rtol=1e-6)
    print()

    # arrays: the pullback of Σ y after rotate_and_log, w.r.t. x and theta
    _, pullback = rv.vjp(rotate_and_log, y, x, 0.3)
    _, g_x, g_theta = pullback(np.ones(3), None, None)
    print("∂(Σ y)/∂x by the adjoint (a shadow array):", g_x, " ∂/∂θ:", g_theta)
    print("closed form 1/x:                          ", 1 / x)
    assert np.allclose(g_x, 1 / x) and g_theta == 0.0


if __name__ == "__main__":
    main()
