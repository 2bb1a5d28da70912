"""Appendix F of the NiLang paper (seed 000): a reversible leapfrog integrator
for the N-body problem, and the round-off it leaves when run forward and then
backward.

    a_i       = Σ_{j≠i} G m_j (x_j − x_i) / |x_i − x_j|³          (8)
    v_{i+1/2} = v_{i−1/2} + a_i Δt                                (9)
    x_{i+1}   = x_i + v_{i+1/2} Δt                                (10)

with the first velocity v_{1/2} = v_0 + a_0 Δt/2.  Positions ``x`` and
velocities ``v`` are (N, 3) numpy arrays updated in place, ``m`` holds the
masses.

``acceleration`` is Listing 25: ``v[i] += Δt · G m_j (x_j − x_i)/|x_i − x_j|³``
with the distance, its powers, ``G m_j``, their quotient and the difference
vector ``rc = x_j − x_i`` computed into ancillas in a routine (checks off, as
``@routine @invcheckoff``) and uncomputed by ``~r``: the round-off of the
uncompute is left in the ancillas, which are discarded, not in the state.
(The listing adds the acceleration itself into ``y!``; here the kick's
``Δt`` is folded into the same instruction, ``v += anc4 * rc * Δt``, so no
acceleration array is needed.)

``acceleration_cumulative`` is Listing 26: the difference vector is computed
in place, ``rb -= ra`` on ``x_j`` itself, and restored by ``rb += ra`` when
the routine is uncomputed — which is not exact in floating point, so the
error accumulates in the positions.
"""

import math

import numpy as np

import revmlir as rv


@rv.reversible
def acceleration(v, x, m, i, j, G, dt):
    """``v[i] += dt * (acceleration of body i due to body j)`` (Listing 25)."""
    with rv.nocheck():
        with rv.routine() as r:
            d = rv.ancilla(0.0)
            anc1 = rv.ancilla(0.0)
            anc2 = rv.ancilla(0.0)
            anc3 = rv.ancilla(0.0)
            anc4 = rv.ancilla(0.0)
            rc0 = rv.ancilla(0.0)
            rc1 = rv.ancilla(0.0)
            rc2 = rv.ancilla(0.0)
            d += (x[i, 0] - x[j, 0]) ** 2 + (x[i, 1] - x[j, 1]) ** 2 + (x[i, 2] - x[j, 2]) ** 2
            anc1 += math.sqrt(d)
            anc2 += anc1**3
            anc3 += G * m[j]
            anc4 += anc3 / anc2
            rc0 += x[j, 0] - x[i, 0]
            rc1 += x[j, 1] - x[i, 1]
            rc2 += x[j, 2] - x[i, 2]
        v[i, 0] += anc4 * rc0 * dt
        v[i, 1] += anc4 * rc1 * dt
        v[i, 2] += anc4 * rc2 * dt
        ~r


@rv.reversible
def acceleration_cumulative(v, x, m, i, j, G, dt):
    """Listing 26: as ``acceleration``, but ``rb -= ra`` on ``x[j]`` itself."""
    with rv.nocheck():
        with rv.routine() as r:
            d = rv.ancilla(0.0)
            anc1 = rv.ancilla(0.0)
            anc2 = rv.ancilla(0.0)
            anc3 = rv.ancilla(0.0)
            anc4 = rv.ancilla(0.0)
            d += (x[i, 0] - x[j, 0]) ** 2 + (x[i, 1] - x[j, 1]) ** 2 + (x[i, 2] - x[j, 2]) ** 2
            anc1 += math.sqrt(d)
            anc2 += anc1**3
            anc3 += G * m[j]
            anc4 += anc3 / anc2
            x[j, 0] -= x[i, 0]
            x[j, 1] -= x[i, 1]
            x[j, 2] -= x[i, 2]
        v[i, 0] += anc4 * x[j, 0] * dt
        v[i, 1] += anc4 * x[j, 1] * dt
        v[i, 2] += anc4 * x[j, 2] * dt
        ~r  # x[j] is not recovered rigorously!


@rv.reversible
def kick(v, x, m, G, dt):
    """(9): v += a(x) dt."""
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            if j != i:
                acceleration(v, x, m, i, j, G, dt)


@rv.reversible
def kick_cumulative(v, x, m, G, dt):
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            if j != i:
                acceleration_cumulative(v, x, m, i, j, G, dt)


@rv.reversible
def drift(x, v, dt):
    """(10): x += v dt."""
    for i in range(x.shape[0]):
        for k in range(3):
            x[i, k] += v[i, k] * dt


@rv.reversible
def leapfrog(x, v, m, G, dt, nsteps):
    kick(v, x, m, G, dt / 2)  # v_{1/2} = v_0 + a_0 dt/2
    for step in range(nsteps):
        drift(x, v, dt)
        kick(v, x, m, G, dt)


@rv.reversible
def leapfrog_cumulative(x, v, m, G, dt, nsteps):
    kick_cumulative(v, x, m, G, dt / 2)
    for step in range(nsteps):
        drift(x, v, dt)
        kick_cumulative(v, x, m, G, dt)


def leapfrog_regular(x: np.ndarray, v: np.ndarray, m: np.ndarray, G: float, dt: float, nsteps: int):
    """The ordinary (irreversible) program, same arithmetic in the same order."""
    x, v = x.copy(), v.copy()

    def kick_(h: float) -> None:
        n = x.shape[0]
        for i in range(n):
            for j in range(n):
                if j == i:
                    continue
                d = (x[i, 0] - x[j, 0]) ** 2 + (x[i, 1] - x[j, 1]) ** 2 + (x[i, 2] - x[j, 2]) ** 2
                r = math.sqrt(d)
                a = G * m[j] / (r * r * r)
                for k in range(3):
                    v[i, k] += a * (x[j, k] - x[i, k]) * h

    kick_(dt / 2)
    for _ in range(nsteps):
        x += v * dt
        kick_(dt)
    return x, v


# The Sun, Jupiter and Saturn (units: AU, years, solar masses), on circular
# orbits of their mean radii in the ecliptic, Saturn a quarter turn ahead.
G_SOLAR = 4 * math.pi**2


def solar_system() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    masses = np.array([1.0, 9.547919e-4, 2.858860e-4])
    radii = np.array([0.0, 5.2044, 9.5826])
    x = np.zeros((3, 3))
    v = np.zeros((3, 3))
    for body, (r, phase) in enumerate(zip(radii, (0.0, 0.0, math.pi / 2))):
        if r == 0.0:
            continue
        speed = math.sqrt(G_SOLAR * masses[0] / r)
        x[body, :2] = r * math.cos(phase), r * math.sin(phase)
        v[body, :2] = -speed * math.sin(phase), speed * math.cos(phase)
        x[body, 2] = 0.01 * r  # a little out of the plane, so z is exercised
    return x, v, masses


if __name__ == "__main__":
    import time

    x0, v0, m = solar_system()
    for nsteps in (100, 1000):
        x, v = x0.copy(), v0.copy()
        start = time.perf_counter()
        leapfrog(x, v, m, G_SOLAR, 0.01, nsteps)
        xr, vr = leapfrog_regular(x0, v0, m, G_SOLAR, 0.01, nsteps)
        agree = max(abs(x - xr).max(), abs(v - vr).max())
        leapfrog.inverse(x, v, m, G_SOLAR, 0.01, nsteps)
        print(
            f"{nsteps} steps: max|reversible - regular| = {agree:.1e}; round trip: "
            f"max|x - x0| = {abs(x - x0).max():.2e}, max|v - v0| = {abs(v - v0).max():.2e} "
            f"({time.perf_counter() - start:.1f} s)"
        )
