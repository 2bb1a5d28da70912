"""(c) Bennett's time–space trade-off, k = 4 (NiLang paper, section 2 and
appendix A; examples/python/paper_bennett.py and examples/bennett.mlir).

``bennett(s_in, s_out, n)`` computes ``s_out += F^(k^n)(s_in)`` with the unit
step ``F: s_out += 2 s_in`` by Bennett's k-ary pebble game: (2k − 1)^n unit
steps (forward and backward) instead of the k^n of a plain forward loop, with
n(k − 1) + 2 live states instead of k^n + 1.  The expected recomputation
factor is therefore (2k − 1)^n / k^n = (7/4)^n.

Baselines, both numba:

* ``numba plain loop`` — the k^n steps one after another (what an ordinary,
  irreversible program does); total-time ratios against it include the
  (7/4)^n recomputation, so the per-step column is the code-quality measure;
* ``numba same schedule`` — the same recursive pebble game (7 calls per
  level, the Q process uncomputing the intermediate states); its uncomputed
  states are summed into a returned residual so that LLVM cannot delete the
  uncomputation as dead code.

Run:  .venv/bin/python benchmarks/bench_bennett.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys

import numba

import _harness as H
import paper_bennett
import revmlir as rv

K = 4


def make(checks: bool):
    """examples/python/paper_bennett.py with ``checks=`` on every function."""

    @rv.reversible(checks=checks)
    def step(s_out, s_in):
        s_out += s_in * 2.0

    @rv.reversible(checks=checks)
    def bennett(s_in, s_out, level):
        if level == 0:
            step(s_out, s_in)
        else:
            rv.dec(level)
            t1 = rv.ancilla(0.0)
            t2 = rv.ancilla(0.0)
            t3 = rv.ancilla(0.0)
            bennett(s_in, t1, level)
            bennett(t1, t2, level)
            bennett(t2, t3, level)
            bennett(t3, s_out, level)
            (~bennett)(t2, t3, level)
            (~bennett)(t1, t2, level)
            (~bennett)(s_in, t1, level)
            rv.free(t3)
            rv.free(t2)
            rv.free(t1)
            rv.inc(level)

    return bennett


@numba.njit(cache=False)
def nb_bennett(x, y, level, sign):
    """(y ± F^(4^level)(x), residual): the pebble game; ``residual`` sums the
    intermediate states after their uncomputation (all 0.0)."""
    if level == 0:
        return y + sign * (x * 2.0), 0.0
    l = level - 1
    t1, r1 = nb_bennett(x, 0.0, l, 1.0)
    t2, r2 = nb_bennett(t1, 0.0, l, 1.0)
    t3, r3 = nb_bennett(t2, 0.0, l, 1.0)
    y, r4 = nb_bennett(t3, y, l, sign)
    t3, r5 = nb_bennett(t2, t3, l, -1.0)
    t2, r6 = nb_bennett(t1, t2, l, -1.0)
    t1, r7 = nb_bennett(x, t1, l, -1.0)
    return y, t1 + t2 + t3 + r1 + r2 + r3 + r4 + r5 + r6 + r7


@numba.njit(cache=False)
def nb_plain(x, y, steps, sign):
    """y ± F^steps(x): the steps in a plain loop, one state at a time."""
    s = x
    for _ in range(steps):
        s = 0.0 + s * 2.0
    return y + sign * s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--levels", type=int, nargs="*", default=[4, 5])
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 15
    H.print_header(
        "(c) Bennett's pebble game, k = 4: time per unit step vs numba",
        """
n levels: 4^n unit steps of F (s_out += 2 s_in) computed with 7^n step
executions.  s_in = 2^-1000 so that 2^(4^n) s_in stays finite for n = 5.
'f(*args)' = public eDSL call; 'direct' = the machine code alone; 'bennett.mlir'
= examples/bennett.mlir compiled by NativeModule.compile (its checks are on).
""",
    )
    from revmlir.parsing import parse_module
    from revmlir.runtime.native import NativeModule

    mlir_native = NativeModule.compile(parse_module((H.EXAMPLES / "bennett.mlir").read_text(), "bennett.mlir"))
    variants = {"off": make(False), "on": make(True)}

    # -- counts from the interpreter: the (2k-1)^n claim and the memory ---------
    print("\n## step counts and peak states (reference interpreter counters, paper_bennett.run_counted)")
    print(
        f"{'n':>2} {'unit steps k^n':>15} {'executed (2k-1)^n':>18} {'factor (7/4)^n':>15} {'peak states':>12} {'n(k-1)+2':>9}"
    )
    for level in range(1, 5):
        _, steps, peak = paper_bennett.run_counted(1.0, 0.0, level)
        assert steps == (2 * K - 1) ** level and peak == level * (K - 1)
        print(
            f"{level:>2} {K**level:>15} {steps:>18} {steps / K**level:>15.2f} {peak + 2:>12} {level * (K - 1) + 2:>9}"
        )

    summary = []
    for level in opts.levels:
        s_in = 2.0**-1000 if level >= 5 else 1.0
        expected = math.ldexp(s_in, K**level)
        for mode, f in variants.items():
            assert f(s_in, 0.0, level)[1] == expected
            assert (~f)(s_in, expected, level)[1] == 0.0
        assert mlir_native.call("bennett", s_in, 0.0, level)[1] == expected
        assert nb_bennett(s_in, 0.0, level, 1.0) == (expected, 0.0)
        assert nb_plain(s_in, 0.0, K**level, 1.0) == expected
        executed, unit = (2 * K - 1) ** level, K**level
        for backward in (False, True):
            sign = -1.0 if backward else 1.0
            y0 = expected if backward else 0.0
            args = (s_in, y0, level)
            cands: dict[str, object] = {}
            for mode, f in variants.items():
                g = ~f if backward else f
                cands[f"rev checks={mode}  f(*args)"] = lambda g=g, args=args: g(*args)
                cands[f"rev checks={mode}  direct"] = H.direct(f, args, backward)
            cands["bennett.mlir (checks=on) direct"] = H.DirectCall(mlir_native, "bennett", args, backward)
            cands["numba same schedule"] = lambda s_in=s_in, y0=y0, level=level, sign=sign: nb_bennett(
                s_in, y0, level, sign
            )
            cands["numba plain loop"] = lambda s_in=s_in, y0=y0, unit=unit, sign=sign: nb_plain(s_in, y0, unit, sign)
            # the plain loop's rate per step without numba's call overhead:
            # the same loop over 1000x as many steps (from 0.0: no overflow)
            cands["numba plain loop x1000 (rate)"] = lambda unit=unit, sign=sign: nb_plain(0.0, 0.0, unit * 1000, sign)
            timings = H.measure(cands, repeat=repeat)
            rate = timings.pop("numba plain loop x1000 (rate)")
            memory = {k: H.peak_alloc(fn) for k, fn in cands.items()}
            label = f"n={level}, {'inverse (~bennett)' if backward else 'forward'}"
            H.report(
                f"{label}: {unit} unit steps, {executed} executed",
                timings,
                ["numba same schedule", "numba plain loop"],
                memory,
                per=("exec. step", executed),
            )
            plain_per_step = rate.median / (unit * 1000)
            print(
                f"numba plain loop per step (loop of {unit * 1000} steps, no call overhead): "
                f"{H.fmt_time(plain_per_step)}; recomputation factor (2k-1)^n/k^n = (7/4)^{level} = "
                f"{executed / unit:.2f}"
            )
            for mode in ("off", "on"):
                t = timings[f"rev checks={mode}  direct"].median
                summary.append(
                    (
                        label,
                        mode,
                        t / executed / plain_per_step,
                        t / timings["numba same schedule"].median,
                        t / timings["numba plain loop"].median,
                        executed / unit,
                        timings[f"rev checks={mode}  direct"],
                        timings["numba same schedule"],
                    )
                )

    print("\n## summary (direct calls): per-step ratio = (time / 7^n) / (plain-loop time per step)")
    print(
        f"{'case':<28} {'checks':<6} {'÷ same sched.':>14} {'per-step ÷ plain':>17} {'total ÷ plain':>14} {'(7/4)^n':>8}"
    )
    for label, mode, per_step, same, total, factor, _, _ in summary:
        print(f"{label:<28} {mode:<6} {same:>13.2f}× {per_step:>16.2f}× {total:>13.2f}× {factor:>8.2f}")
    print("\n## targets (direct call vs numba same schedule: ≤ 1.2× checks off, ≤ 2× checks on)")
    for label, mode, per_step, same, total, factor, ours, base in summary:
        print(f"{label:<28} checks={mode:<3}" + H.verdict(ours, base, 1.2 if mode == "off" else 2.0))
    ir_evidence(variants)
    print(f"\nmax RSS of this process: {H.max_rss_mib():.0f} MiB")


def ir_evidence(variants) -> None:
    """Calls left per level in the -O3 code, and the checks in it."""
    print("\n## optimized LLVM IR per level (recursive calls kept; run-time checks present?)")
    for mode, f in variants.items():
        spec = f.specialization_for(1.0, 0.0, 3)
        for name in ("bennett", "bennett.inv"):
            body = H.function_body(H.optimized_ir(H.compiled_ir(spec.native, name)), name)
            calls = H.count_calls(body, "bennett") + H.count_calls(body, "bennett.inv")
            checks = body.count("llvm.maximum.f64") // 2
            print(f"checks={mode:<3} @{name:<12} calls per level: {calls}, anc.free tolerance checks: {checks}")


if __name__ == "__main__":
    sys.exit(main())
