"""A leapfrog integrator on BLAS: ``daxpy`` and ``ddot`` from the CBLAS that
numpy bundles, declared as user primitives with hand-written adjoints.

Each step of the harmonic oscillator ``q̈ = −q`` is two shears,
``q += h·p`` then ``p −= h·q``: two ``daxpy`` calls, each a reversible
instruction whose inverse rule calls ``daxpy`` with ``−a``.  The energy
``½ (q·q + p·p)`` after the steps is two ``ddot`` calls, pure expressions.
The adjoint rules are BLAS calls too: ``ddot``'s adds ``ḡ·y`` to ``x̄`` and
``ḡ·x`` to ``ȳ``; ``daxpy``'s adds ``a·ȳ`` to ``x̄`` (``ȳ`` passes through
``y += a·x`` unchanged) and returns ``ā = x·ȳ``.  So are the tangent rules
of forward mode: ``daxpy``'s adds ``ȧ·x + a·ẋ`` to ``ẏ`` in place, ``ddot``'s
returns ``ẋ·y + x·ẏ``.

``main`` compares the gradient of the energy with respect to ``h``, ``q``
and ``p`` with JAX's and with central differences, and a directional
derivative (``rv.jvp``) with JAX's, runs the integrator
backwards (``~leapfrog``) to the initial state, and runs it on the
interpreter, whose ``python=`` implementations are numpy's;
``tests/test_examples.py`` runs it.
"""

import numpy as np
from numpy.typing import NDArray

import revmlir as rv

Vector = NDArray[np.float64]


def axpy(a: float, x: np.ndarray, y: np.ndarray) -> None:
    """``y += a·x`` in place, the interpreter's daxpy."""
    y += a * x


@rv.ordinary
def daxpy_inverse(a: float, x, y):
    daxpy(-a, x, y)


@rv.ordinary
def daxpy_adjoint(a: float, x, y, gx, gy):
    daxpy(a, gy, gx)
    return ddot(x, gy)


@rv.ordinary
def daxpy_tangent(a: float, x, y, da: float, dx, dy):
    daxpy(da, x, dy)
    daxpy(a, dx, dy)


@rv.primitive(
    blas="daxpy", python=axpy, updates=["y"], inverse=daxpy_inverse, adjoint=daxpy_adjoint, tangent=daxpy_tangent
)
def daxpy(a: float, x: Vector, y: Vector) -> None: ...


@rv.ordinary
def ddot_adjoint(x, y, g: float, gx, gy):
    daxpy(g, y, gx)
    daxpy(g, x, gy)


@rv.ordinary
def ddot_tangent(x, y, dx, dy):
    return ddot(dx, y) + ddot(x, dy)


@rv.primitive(blas="ddot", python=np.dot, adjoint=ddot_adjoint, tangent=ddot_tangent)
def ddot(x: Vector, y: Vector) -> float: ...


@rv.reversible
def leapfrog(energy, h, q, p, steps: int):
    """``steps`` leapfrog steps of size ``h`` from ``(q, p)``, in place;
    ``energy += ½ (q·q + p·p)`` at the end."""
    for _ in range(steps):
        daxpy(h, p, q)
        daxpy(-h, q, p)
    energy += 0.5 * (ddot(q, q) + ddot(p, p))


def energy_gradient(h: float, q: np.ndarray, p: np.ndarray, steps: int) -> tuple[float, np.ndarray, np.ndarray]:
    _, g_h, g_q, g_p, _ = rv.gradient(leapfrog, (0.0, h, q, p, steps))
    return g_h, g_q, g_p


def energy_jvp(
    h: float, q: np.ndarray, p: np.ndarray, steps: int, dh: float, dq: np.ndarray, dp: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """The tangents of the energy, ``q`` and ``p`` along ``(dh, dq, dp)``."""
    _, (d_energy, _, d_q, d_p, _) = rv.jvp(leapfrog, (0.0, h, q, p, steps), (0.0, dh, dq, dp, 0))
    return d_energy, d_q, d_p


def jax_leapfrog(steps: int):  # type: ignore[no-untyped-def]
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def integrate(h, q, p):  # type: ignore[no-untyped-def]
        for _ in range(steps):
            q = q + h * p
            p = p - h * q
        return 0.5 * (jnp.dot(q, q) + jnp.dot(p, p)), q, p

    return jax, jnp, integrate


def jax_gradient(h: float, q: np.ndarray, p: np.ndarray, steps: int) -> tuple[float, np.ndarray, np.ndarray]:
    jax, jnp, integrate = jax_leapfrog(steps)
    energy = lambda h, q, p: integrate(h, q, p)[0]  # noqa: E731
    g_h, g_q, g_p = jax.grad(energy, argnums=(0, 1, 2))(h, jnp.asarray(q), jnp.asarray(p))
    return float(g_h), np.asarray(g_q), np.asarray(g_p)


def jax_jvp(
    h: float, q: np.ndarray, p: np.ndarray, steps: int, dh: float, dq: np.ndarray, dp: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    jax, jnp, integrate = jax_leapfrog(steps)
    _, (d_energy, d_q, d_p) = jax.jvp(
        integrate, (h, jnp.asarray(q), jnp.asarray(p)), (dh, jnp.asarray(dq), jnp.asarray(dp))
    )
    return float(d_energy), np.asarray(d_q), np.asarray(d_p)


def central_difference(h: float, q: np.ndarray, p: np.ndarray, steps: int, step: float = 1e-6) -> float:
    """∂energy/∂h by central differences."""

    def energy(h: float) -> float:
        return leapfrog(0.0, h, q.copy(), p.copy(), steps)[0]

    return (energy(h + step) - energy(h - step)) / (2 * step)


def initial_state(n: int = 6, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n)


def main() -> None:
    q, p = initial_state()
    h, steps = 0.1, 20
    g_h, g_q, g_p = energy_gradient(h, q, p, steps)
    j_h, j_q, j_p = jax_gradient(h, q, p, steps)
    print("∂E/∂h:", g_h, "JAX:", j_h, "central differences:", central_difference(h, q, p, steps))
    print("largest difference from JAX in ∂E/∂q, ∂E/∂p:", np.max(np.abs(g_q - j_q)), np.max(np.abs(g_p - j_p)))
    dq, dp = initial_state(seed=4)
    d_energy, _, _ = energy_jvp(h, q, p, steps, 1.0, dq, dp)
    print("tangent of E along (1, dq, dp):", d_energy, "JAX:", jax_jvp(h, q, p, steps, 1.0, dq, dp)[0])
    state = leapfrog(0.0, h, q.copy(), p.copy(), steps)
    back = (~leapfrog)(*state)
    print("~leapfrog after leapfrog restores q, p:", np.allclose(back[2], q), np.allclose(back[3], p))


if __name__ == "__main__":
    main()
