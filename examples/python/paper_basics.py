"""Section 3 of the NiLang paper (seed 000) in reversible Python.

* Listing 4  — ``multiplier``: y += a * b.
* Listing 5  — ``complex_log``: y += log|x| + i arg(x) with an explicit
  ancilla that is computed, used and uncomputed by hand.
* Listing 6  — ``complex_log_routine``: the same with compute–copy–uncompute
  (``with rv.routine() as r:`` … ``~r`` is NiLang's ``@routine`` … ``~@routine``).
* Listing 11 — ``rrfib``: Fibonacci numbers, recursively and reversibly.

Run ``python examples/python/paper_basics.py`` to see them both ways.
"""

import cmath
import math

import revmlir as rv


@rv.reversible
def multiplier(y, a, b):
    y += a * b


@rv.reversible
def complex_log(y: complex, x: complex):
    # n ← zero(T)
    n = rv.ancilla(0.0)
    n += abs(x)
    y.real += math.log(n)
    y.imag += cmath.phase(x)
    n -= abs(x)
    # n → zero(T)
    rv.free(n)


@rv.reversible
def complex_log_routine(y: complex, x: complex):
    with rv.routine() as r:
        n = rv.ancilla(0.0)
        n += abs(x)
    y.real += math.log(n)
    y.imag += cmath.phase(x)
    ~r


@rv.reversible
def rrfib(out, n):
    """``out += fib(n + 1)`` (fib(1) = fib(2) = 1): the paper's Listing 11.

    ``@invcheckoff if (n >= 1, ~)`` is the check-off block around an ``if``
    whose postcondition is omitted (the precondition is re-checked);
    ``while (counter > 1, counter != n)`` has a postcondition that is false
    only before the first iteration.
    """
    with rv.nocheck():
        if n >= 1:
            counter = rv.ancilla(0)
            counter += n
            while rv.cond(counter > 1, counter != n):
                rrfib(out, counter - 1)
                counter -= 2
            counter -= n % 2
            rv.free(counter)
    out += 1


if __name__ == "__main__":
    print("multiplier(2, 3, 5)      =", multiplier(2, 3, 5))
    print("(~multiplier)(17, 3, 5)  =", (~multiplier)(17, 3, 5))
    print("complex_log(0, 3-4j)     =", complex_log(0j, 3 - 4j), " cmath:", cmath.log(3 - 4j))
    y, x = complex_log_routine(0j, 3 - 4j)
    print("complex_log_routine      =", (y, x), " inverse:", (~complex_log_routine)(y, x))
    print("rrfib(0, n), n = 0..10   =", [rrfib(0, n)[0] for n in range(11)])
