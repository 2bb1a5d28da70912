"""Elementwise kernels on the GPU: ``y += log(x)·sin(x)``, the complex
logarithm in its routine form (``examples/complex_log_routine.mlir``,
``paper_basics.complex_log_routine``), and their gradients.

Each function's body is one ``rv.prange`` loop, so ``rv.cuda.kernel``
makes it a GPU kernel (every element a thread) and ``rv.adjoint`` of it a
gradient kernel; called directly, the same function runs natively on the
CPU, the loop in order.  ``run`` picks the GPU where one is.
"""

import math

import numpy as np

import revmlir as rv
from paper_basics import complex_log_routine


@rv.reversible
def log_sin(y, x):
    """``y[i] += log(x[i])·sin(x[i])``."""
    for i in rv.prange(len(x)):
        y[i] += math.log(x[i]) * math.sin(x[i])


@rv.reversible
def complex_log(y, x):
    """``y[i] += log(x[i])`` for complex arrays: each element by the
    compute–copy–uncompute form of the paper's Listing 6."""
    for i in rv.prange(len(x)):
        complex_log_routine(y[i], x[i])


def run(function, *args):
    """``function(*args)`` on the GPU when one is here, on the CPU otherwise
    (arrays are updated in place either way)."""
    if rv.cuda.is_available():
        return rv.cuda.kernel(function)(*args)
    return function(*args)


if __name__ == "__main__":
    n = 1_000_000
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 10.0, n)
    y = np.zeros(n)
    run(log_sin, y, x)
    print("log_sin: max error", np.max(np.abs(y - np.log(x) * np.sin(x))))
    g_y, g_x = np.ones(n), np.zeros(n)
    run(rv.adjoint(log_sin), y, x, g_y, g_x)
    print("its gradient: max error", np.max(np.abs(g_x - (np.sin(x) / x + np.log(x) * np.cos(x)))))
    z = x * np.exp(1j * rng.uniform(-3.0, 3.0, n))
    w = np.zeros(n, dtype=complex)
    run(complex_log, w, z)
    print("complex_log: max error", np.max(np.abs(w - np.log(z))))
    print("on", "the GPU" if rv.cuda.is_available() else "the CPU")
