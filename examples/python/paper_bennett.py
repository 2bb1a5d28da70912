"""Bennett's time-space trade-off for reverse computing, k = 4, in reversible
Python (seed 000, section 2 / Listing 3 and appendix A / Listing 12; the
.mlir twin is examples/bennett.mlir).

``step(s_out, s_in)`` is one unit step ``s_out += f(s_in)`` with
``f(x) = 2x`` (NiLang's ``PlusEq(f)``), and

    bennett(s_in, s_out, level)   computes   s_out += F^len(s_in),  len = k^level,

where ``F^len`` is ``len`` unit steps, so ``s_out += 2.0**len * s_in``.

NiLang keeps the states in a ``Dict``; here each state is a scalar, so the
k − 1 = 3 intermediate states of a sector are three ancillas ``t1, t2, t3``:

    P: bennett(s_in, t1), bennett(t1, t2), bennett(t2, t3), bennett(t3, s_out)
    Q: ~bennett(t2, t3), ~bennett(t1, t2), ~bennett(s_in, t1)

after which ``t1..t3`` are zero again and are freed (with a check).

The sector length is carried as its exponent ``level = log_k(len)`` and
updated in place — ``rv.dec(level)`` is ``len ÷= k`` for the sub-sectors and
``rv.inc(level)`` undoes it — so the only ancillas are the intermediate
states (an expression argument such as ``level - 1`` would live in an extra
ancilla for the call).  Hence, for ``len = k^n``:

* unit steps (calls + uncalls of ``step``): (2k − 1)^n, 7^4 = 2401 for n = 4;
* peak live ancillas: n(k − 1) = 12 for n = 4, i.e. NiLang's
  PEAK_MEM = n(k − 1) + 2 = 14 once the two endpoint states are counted.
"""

import revmlir as rv

K = 4


@rv.reversible
def step(s_out, s_in):
    s_out += s_in * 2.0


@rv.reversible
def bennett(s_in, s_out, level):
    if level == 0:  # len == 1 (postcondition omitted: level is restored)
        step(s_out, s_in)
    else:
        rv.dec(level)
        t1 = rv.ancilla(0.0)
        t2 = rv.ancilla(0.0)
        t3 = rv.ancilla(0.0)
        # the P process: k sectors forward
        bennett(s_in, t1, level)
        bennett(t1, t2, level)
        bennett(t2, t3, level)
        bennett(t3, s_out, level)
        # the Q process: k - 1 sectors backward, clearing t3, t2, t1
        (~bennett)(t2, t3, level)
        (~bennett)(t1, t2, level)
        (~bennett)(s_in, t1, level)
        rv.free(t3)
        rv.free(t2)
        rv.free(t1)
        rv.inc(level)


def run_counted(s_in: float, s_out: float, level: int, backward: bool = False):
    """Run ``bennett`` (or ``~bennett``) with fresh counters; returns
    ``(results, step invocations, peak live ancillas)``."""
    spec = bennett.specialization_for(s_in, s_out, level)
    spec.interpreter.reset_counters()
    results = spec.run((s_in, s_out, level), backward=backward, backend="interpreter")
    interp = spec.interpreter
    return results, interp.counters["step"].invocations, interp.peak_live_ancillas


if __name__ == "__main__":
    for n in range(1, 5):
        out, steps, peak = run_counted(1.0, 0.0, n)
        print(
            f"n={n}: s_out = 2^{K**n} (exact: {out[1] == 2.0**K**n}), "
            f"steps = {steps} = (2k-1)^n, peak states = {peak} + 2 = n(k-1)+2"
        )
