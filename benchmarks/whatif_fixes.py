"""What the fixes suggested in RESULTS.md would buy, measured.

Each fix is applied *inside this process only* — by rewriting the LLVM IR
text before -O3, or by wrapping one lowering/front-end function for the
duration of the run — and the same programs as in the other benchmarks are
re-compiled and timed (direct calls, i.e. the generated code alone) beside
the unmodified code and numba.  revmlir's sources are not changed.

  F1  checks=False / rv.nocheck() also marks anc.alloc `nocheck`, so the
      anc.free that inverting an alloc creates (in f.inv, in every uncall,
      in a routine's ~r) is unchecked as well.  Today it is checked.
  F2  external libm functions (hypot, atan2, …) declared
      `memory(none) nounwind willreturn` (clang's -fno-math-errno), so LLVM
      may CSE and delete their calls.
  F3  cheaper float ancilla checks: when the known value is the constant
      0.0, test |a| ≤ tol (the same predicate for tol < 1, NaN included)
      instead of |a−b| ≤ max(tol·max(|a|,|b|), tol); and read the error
      slot only on the failure path.

Run:  .venv/bin/python benchmarks/whatif_fixes.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import _harness as H
import bench_bennett
import bench_complex_log
import bench_leapfrog
import bench_sparse
import numpy as np
import paper_leapfrog
import scipy.sparse as sp
from paper_sparse import csr_arrays

import revmlir as rv


def apply_f3() -> str | None:
    """Wrap FunctionLowering.same/check (F3); returns why not, if it cannot."""
    try:
        from xdsl.dialects import arith, math, memref, scf
        from xdsl.dialects.builtin import FloatAttr, IndexType, i1, i64
        from xdsl.ir import Block, Region
        from xdsl.rewriter import InsertPoint

        import revmlir.lowering.rev_to_std as lowering

        cls = lowering.FunctionLowering
        original_same = cls.same
        for name in ("same", "check", "no_error", "emit", "const", "_bits"):
            getattr(cls, name)
    except (ImportError, AttributeError) as error:
        return f"revmlir internals changed ({error})"

    def same(self: Any, a: Any, b: Any, like: Any) -> Any:
        owner = getattr(b, "owner", None)
        if (isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr)
                and owner.value.value.data == 0.0 and self.tolerance < 1.0):
            gap = self.emit(math.AbsFOp(a), like).results[0]
            return self.emit(arith.CmpfOp(gap, self.const(self.tolerance, gap.type, like), "ole"), like).results[0]
        return original_same(self, a, b, like)

    def check(self: Any, ok: Any, op: Any, message: str, payload: Any = ()) -> None:
        kinds = [lowering._payload_kind(v.type) for v in payload]
        identifier = self.checks.register(op, message, kinds)
        bad = self.emit(arith.XOrIOp(ok, self.const(True, i1, op)), op).results[0]
        saved = self.builder.insertion_point
        outer, inner = Block(), Block()
        try:
            self.builder.insertion_point = InsertPoint.at_end(inner)
            for slot, value in enumerate([self.const(identifier, i64, op), *payload]):
                self.emit(memref.StoreOp.get(self._bits(value, op), self.error,
                                             [self.const(slot, IndexType(), op)]), op)
            self.emit(scf.YieldOp(), op)
            self.builder.insertion_point = InsertPoint.at_end(outer)
            self.emit(scf.IfOp(self.no_error(op), [], Region(inner)), op)
            self.emit(scf.YieldOp(), op)
        finally:
            self.builder.insertion_point = saved
        self.emit(scf.IfOp(bad, [], Region(outer)), op)

    cls.same, cls.check = same, check
    return None


def _uncomputed(y, x):
    n = rv.ancilla(0.0)
    n += x
    y += n * 2.0
    n -= x
    rv.free(n)


def inverse_frees() -> list[str]:
    """The anc.free lines of @_uncomputed and @_uncomputed.inv (checks=False)
    after rev-invert, as compiled now."""
    from revmlir.parsing import make_context
    from revmlir.passes.invert import RevInvertPass

    f = rv.reversible(_uncomputed, checks=False)
    module = f.specialization_for(1.0, 2.0).module.clone()
    RevInvertPass().apply(make_context(), module)
    return [line.strip() for line in str(module).splitlines() if "anc.free" in line]


def ir_evidence(natives: dict[str, dict[str, tuple[Any, str]]], frees_today: list[str]) -> None:
    """What F1 changes in the IR: the inverse's anc.free, and inlining."""
    print("\n## F1 in the IR")
    for label, frees in (("today", frees_today), ("+ F1", inverse_frees())):
        print(f"checks=False, after rev-invert, {label:<5}: @_uncomputed: {frees[0]}  @_uncomputed.inv: {frees[1]}")
    for label in ("checks=off  (today)", "checks=off  + F1"):
        native, _name = natives["leapfrog 3 bodies"][label]
        ir = str(native.machine_code.module)
        kick, acc = H.function_body(ir, "kick"), H.function_body(ir, "acceleration")
        print(f"leapfrog {label:<20}: @kick calls @acceleration {H.count_calls(kick, 'acceleration')}x per pair, "
              f"sqrt in @kick: {kick.count('call double @llvm.sqrt')}; @acceleration {len(acc.splitlines())} lines, "
              f"anc.free tolerance checks {acc.count('llvm.maximum.f64') // 2}")


def _leaky(x):
    t = rv.ancilla(0.0)
    t += x
    rv.free(t)  # wrong unless x == 0: must raise with checks on


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    repeat = 7 if opts.quick else 9
    H.print_header("What-if: the suggested fixes, measured (direct calls; revmlir unchanged on disk)", __doc__.split("Run:")[0])

    # -- inputs ------------------------------------------------------------------------
    A = sp.random(1000, 1000, density=0.05, format="csr", random_state=1)
    B = sp.random(1000, 1000, density=0.05, format="csr", random_state=2)
    a, b = csr_arrays(A), csr_arrays(B)
    keeper = np.zeros(2000, dtype=bool)
    dot_args = (0.0, *a, *b, keeper)
    n = 10**5 if opts.quick else 10**6
    rng = np.random.default_rng(0)
    zx = rng.normal(size=n) + 1j * rng.normal(size=n)
    zy = np.zeros(n, dtype=np.complex128)
    log_args = (zy, zx)
    s_in = 2.0**-1000
    x0, v0, m = paper_leapfrog.solar_system()
    lf_args = (x0.copy(), v0.copy(), m, paper_leapfrog.G_SOLAR, 0.01, 20_000)

    makers: dict[str, Callable[[bool], Any]] = {
        "csr_dot": lambda checks: rv.reversible(bench_sparse.csr_dot, checks=checks),
        "complex-log loop": lambda checks: bench_complex_log.make(checks)[1],
        "bennett n=5": lambda checks: bench_bennett.make(checks),
        "leapfrog 3 bodies": lambda checks: bench_leapfrog.make(checks),
    }
    argsets = {"csr_dot": dot_args, "complex-log loop": log_args,
               "bennett n=5": (s_in, 0.0, 5), "leapfrog 3 bodies": lf_args}
    numba_fns: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "csr_dot": (lambda: bench_sparse.nb_csr_dot_schedule(1.0, *a, *b, keeper),
                    lambda: bench_sparse.nb_csr_dot_schedule(-1.0, *a, *b, keeper)),
        "complex-log loop": (lambda: bench_complex_log.nb_log(zy, zx), lambda: bench_complex_log.nb_log_inv(zy, zx)),
        "bennett n=5": (lambda: bench_bennett.nb_bennett(s_in, 0.0, 5, 1.0),
                        lambda: bench_bennett.nb_bennett(s_in, 0.0, 5, -1.0)),
        "leapfrog 3 bodies": (lambda: bench_leapfrog.nb_leapfrog(*lf_args), lambda: bench_leapfrog.nb_leapfrog_inv(*lf_args)),
    }
    numba_label = {"csr_dot": "numba same schedule", "complex-log loop": "numba loop",
                   "bennett n=5": "numba same schedule", "leapfrog 3 bodies": "numba leapfrog"}

    # -- compile every variant (order matters: patches apply to later compiles) -------
    natives: dict[str, dict[str, tuple[Any, str]]] = {case: {} for case in makers}

    def compile_into(label: str, checks: bool, transform: Callable[[str], str] | None = None) -> None:
        for case, make in makers.items():
            f = make(checks)
            spec = f.specialization_for(*argsets[case])
            native = spec.native if transform is None else H.rejit(spec.native, transform)
            natives[case][label] = (native, spec.name)

    frees_today = inverse_frees()
    compile_into("checks=off  (today)", False)
    compile_into("checks=off  + F2", False, H.readnone_libm)
    compile_into("checks=on   (today)", True)
    compile_into("checks=on   + F2", True, H.readnone_libm)
    H.checks_off_in_inverses()
    compile_into("checks=off  + F1", False)
    compile_into("checks=off  + F1 + F2", False, H.readnone_libm)
    why = apply_f3()
    if why is None:
        compile_into("checks=on   + F3", True)
        compile_into("checks=on   + F2 + F3", True, H.readnone_libm)
    else:
        print(f"F3 skipped: {why}")

    # -- IR evidence -------------------------------------------------------------------
    ir_evidence(natives, frees_today)

    # -- the fixes keep the semantics: same results, failing checks still fire ----------
    print("\nchecked: every variant gives the same results as today's code; "
          "a wrongly freed ancilla still raises with checks on:", end=" ")
    for case in makers:
        outs = []
        for label, (native, name) in natives[case].items():
            args = [x.copy() if isinstance(x, np.ndarray) else x for x in argsets[case]]
            if case == "leapfrog 3 bodies":
                args[-1] = 50
            if case == "complex-log loop":
                args = [np.zeros(64, dtype=np.complex128), zx[:64].copy()]
            call = H.DirectCall(native, name, args)
            call()
            outs.append((call.scalars(), [x.copy() for x in args if isinstance(x, np.ndarray)]))
        for scalars, arrays in outs[1:]:
            assert np.allclose(scalars, outs[0][0]) and all(np.array_equal(p, q) for p, q in zip(arrays, outs[0][1])), case
    leaky = rv.reversible(_leaky)  # compiled with F1 and F3 in effect
    try:
        leaky(3.0)
        print("NO (the what-if broke the check)")
    except rv.InvertibilityError:
        print("yes")

    # -- timings ---------------------------------------------------------------------------
    summary = []
    for case in makers:
        for backward in (False, True):
            cands: dict[str, Any] = {}
            for label, (native, name) in natives[case].items():
                cands[label] = H.DirectCall(native, name, argsets[case], backward)
            base = numba_label[case]
            cands[base] = numba_fns[case][1 if backward else 0]
            big = case in ("complex-log loop",)
            timings = H.measure(cands, repeat=repeat, warmup=1, min_sample_s=0.0 if big else 0.02)
            title = f"{case}, {'inverse' if backward else 'forward'}"
            H.report(title, timings, [base])
            for label in natives[case]:
                summary.append((title, label, timings[label], timings[base]))
    print("\n## summary: ratio to numba (direct calls); targets ≤ 1.2× checks off, ≤ 2× checks on")
    for title, label, ours, base in summary:
        print(f"{title:<32} {label:<24}" + H.verdict(ours, base, 1.2 if "off" in label else 2.0))


if __name__ == "__main__":
    sys.exit(main())
