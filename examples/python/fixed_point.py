"""A harmonic oscillator integrated in fixed-point numbers, NiLang's
``Fixed43``: run backwards, it returns to its initial state bit for bit.

The symplectic Euler step ``x += dt·v; v -= dt·x`` updates each variable
by a function of the other, so it is reversible in any arithmetic where
``y -= e`` undoes ``y += e``.  On floats that holds only up to round-off (``(y
+ e) - e`` need not be ``y``); on fixed-point numbers ``+=`` and ``-=`` are
integer additions of the stored values, exact, so ``~oscillator`` after
``oscillator`` gives back the very integers it started from, after any
number of steps.  The products ``dt·v`` round (down, to the last of the 43
fraction bits), but the inverse recomputes the same rounded product and
subtracts it.

Called with floats, ``oscillator`` is the same function on f64: its
gradient (and the closed form, ``x(t) = x₀ cos t + v₀ sin t`` up to O(dt))
checks the fixed-point one, which is taken with respect to the real values.
"""

import revmlir as rv

Fixed43 = rv.Fixed[43]


def _steps(x, v, dt, n):
    for i in range(n):
        x += dt * v
        v -= dt * x


oscillator = rv.reversible(_steps)
"""Called with ``Fixed43`` numbers it is fixed-point, with floats f64."""


def run(x0: float, v0: float, dt: float, n: int):
    """The state after ``n`` steps and the state its inverse returns to."""
    start = (Fixed43(x0), Fixed43(v0), Fixed43(dt), n)
    end = oscillator(*start)
    return start, end, (~oscillator)(*end)


if __name__ == "__main__":
    start, end, back = run(1.0, 0.0, 0.01, 1000)
    print("after 1000 steps:", end[:2])
    print("back to the start bit for bit:", back == start)
    gradient = rv.gradient(oscillator, start, 0)
    print("d x(10) / d (x0, v0):", gradient[:2])
