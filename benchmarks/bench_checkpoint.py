"""Checkpointed gradients (issue 6): time and peak memory against the number
of time steps, beside JAX.

The problem is a 1-D explicit heat equation on 32 points, written as ordinary
Python (docs/python.md, "Checkpointed loops"): every step computes
``tmp[i] = u[i] + c*(u[i-1] - 2u[i] + u[i+1])`` for the interior points, then
copies ``u[i] = tmp[i]``; the loss is ``sum(u*u)`` at the end.  ``rv.gradient``
gives its gradient with respect to ``u`` and ``c``.  The diffusion time is
fixed (``c * steps = 20``, so ``c = 0.2`` at 100 steps and smaller beyond), so
that the state and its gradient stay O(1) at every step count: with a fixed
``c`` they decay below 1e-300 and denormal arithmetic would be timed.

Candidates, all compiled once and run natively:

* ours store-all: the loop unmarked: every value a step overwrites is pushed
  on a tape (memory linear in steps);
* ours bisection: ``rv.checkpointed(range(steps))``, about log2(steps)
  snapshots;
* ours binomial k=10 / k=30: ``rv.checkpointed(range(steps), snapshots=k)``
  (Revolve);
* ours Bennett k=10: the same loop as a reversible program (``@rv.reversible``):
  a step adds its result into a fresh state (``S[dst] += step(S[src])``) and
  Bennett's 10-ary pebble game (seed 000, section 2) computes the final state
  and uncomputes the intermediate ones; the gradient is reverse computing, no
  snapshot and no tape, with n·9 + 2 states for 10^n steps and 19^n step runs
  each way (so 10^n must be the step count);
* ours objective f(*args): the decorated function called (its ordinary code
  compiled as it is, no tape): the 1x of gradient/objective;
* JAX scan: ``jit(grad(loss))`` with ``lax.scan`` (JAX keeps every step's
  residuals) and JAX scan+checkpoint: ``jax.checkpoint(step)`` inside the scan
  (JAX keeps the carried state of every step and recomputes the step);
  CPU, float64; JAX objective = ``jit(loss)``;
* numba forward: the plain loop (no tape), a reference for the objective.

Method: every (candidate, steps) case runs in a fresh process (this script
with ``--case``).  It warms up (ours: a gradient at 10 steps, which compiles;
JAX: ahead-of-time ``lower(...).compile()`` at the target length, since the
length is static), returns freed heap memory to the system (``malloc_trim``)
and resets the process's peak RSS to its current RSS (Linux:
``5 > /proc/self/clear_refs``), reads the RSS (``VmRSS``), runs the gradient
once at the target steps and reads the peak RSS (``VmHWM``): the memory
column "peak" is that peak minus the RSS before the call, i.e. the resident
memory the call added at its peak (MiB, page granularity).  The plain
difference of ``getrusage(RUSAGE_SELF).ru_maxrss`` across the call (column
"Δmaxrss", printed for comparison) only shows what exceeds the peak that
compilation already reached (≈ 290 MiB for ours), so it reads 0.0 for all
but the largest cases.  Then it times further calls
(7 samples up to 10^4 steps, 5 at 10^5, 3 at 10^6; a sample is a batch of
calls lasting >= 20 ms for the short cases) and reports median, min and max.
Before that, the parent process checks for 10^2..10^4 steps that all our
gradients agree with each other and with JAX (rtol 1e-9), and every case's
gradient is compared with JAX scan's again afterwards.

Run:  .venv/bin/python benchmarks/bench_checkpoint.py [--quick]
      (--quick: up to 10^4 steps, no k=30, fewer samples)
Writes benchmarks/checkpoint_time.png and benchmarks/checkpoint_memory.png
(needs matplotlib: pip install -e .[bench]).
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import _harness as H
import revmlir as rv
from _fresh import deviation, jax_case, options_or_case, peak_increase, plot_scaling, sample, spawn, timed

HERE = Path(__file__).resolve().parent
N = 32  # grid points
DIFFUSION = 20.0  # c * steps
RTOL = 1e-9

# --------------------------------------------------------------------------
# The program, once per schedule (the marker is syntax in the body)
# --------------------------------------------------------------------------


@rv.ordinary
def step_in_place(u, tmp, c):
    for i in range(1, len(u) - 1):
        tmp[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    for i in range(1, len(u) - 1):
        u[i] = tmp[i]


@rv.ordinary
def energy(u):
    total = 0.0
    for i in range(len(u)):
        total += u[i] * u[i]
    return total


@rv.ordinary
def heat_store_all(u, tmp, c, steps):
    for step in range(steps):
        step_in_place(u, tmp, c)
    return energy(u)


@rv.ordinary
def heat_bisection(u, tmp, c, steps):
    for step in rv.checkpointed(range(steps)):
        step_in_place(u, tmp, c)
    return energy(u)


@rv.ordinary
def heat_binomial10(u, tmp, c, steps):
    for step in rv.checkpointed(range(steps), snapshots=10):
        step_in_place(u, tmp, c)
    return energy(u)


@rv.ordinary
def heat_binomial30(u, tmp, c, steps):
    for step in rv.checkpointed(range(steps), snapshots=30):
        step_in_place(u, tmp, c)
    return energy(u)


@rv.reversible
def heat_step(S, dst, src, c):
    """``S[dst] += step(S[src])``: one step, written out of place, so that
    it is reversible (``~heat_step`` clears ``S[dst]`` again)."""
    S[dst, 0] += S[src, 0]
    for i in range(1, S.shape[1] - 1):
        S[dst, i] += S[src, i] + c * (S[src, i - 1] - 2.0 * S[src, i] + S[src, i + 1])
    S[dst, S.shape[1] - 1] += S[src, S.shape[1] - 1]


@rv.reversible
def bennett(S, src, dst, level, k, c):
    """Bennett's k-ary pebble game (seed 000, section 2):
    ``S[dst] += step^(k^level)(S[src])``, through k - 1 intermediate states
    in the rows ``2 + level'·(k − 1) + j`` of this recursion level, computed
    forward and then uncomputed."""
    if level == 0:
        heat_step(S, dst, src, c)
    else:
        rv.dec(level)
        base = rv.ancilla(2 + level * (k - 1))
        last = rv.ancilla(k - 1)
        bennett(S, src, base, level, k, c)
        for j in range(1, last):
            bennett(S, base + j - 1, base + j, level, k, c)
        bennett(S, base + k - 2, dst, level, k, c)
        for j in reversed(range(1, last)):
            (~bennett)(S, base + j - 1, base + j, level, k, c)
        (~bennett)(S, src, base, level, k, c)
        rv.free(last, k - 1)
        rv.free(base, 2 + level * (k - 1))
        rv.inc(level)


@rv.reversible
def heat_bennett(energy, S, level, k, c):
    """The heat loop as a reversible program: ``S[0]`` is ``u``, ``S[1]``
    receives the state after ``k^level`` steps, the other rows are Bennett's
    intermediate states (zero before and after)."""
    bennett(S, 0, 1, level, k, c)
    for i in range(S.shape[1]):
        energy += S[1, i] * S[1, i]


BENNETT_K = 10
BENNETT = f"ours Bennett k={BENNETT_K}"


def bennett_gradient(u: np.ndarray, c: float, steps: int) -> tuple[np.ndarray, float]:
    """``rv.gradient`` of ``heat_bennett`` (reverse computing: no snapshot,
    no tape), as (g_u, g_c); ``steps`` must be a power of ``BENNETT_K``."""
    level = round(math.log(steps, BENNETT_K))
    assert BENNETT_K**level == steps, f"Bennett k={BENNETT_K} needs a power of {BENNETT_K} steps"
    S = np.zeros((2 + level * (BENNETT_K - 1), N))
    S[0] = u
    grads = rv.gradient(heat_bennett, (0.0, S, level, BENNETT_K, c), iloss=0)
    return grads[1][0], grads[4]


OURS = {
    "ours store-all": heat_store_all,
    "ours bisection": heat_bisection,
    "ours binomial k=10": heat_binomial10,
    "ours binomial k=30": heat_binomial30,
}
OURS_NAMES = [*OURS, BENNETT]
OBJECTIVE = "ours objective f(*args)"


def ours_gradient(name: str, u: np.ndarray, tmp: np.ndarray, c: float, steps: int) -> tuple[np.ndarray, float]:
    """(g_u, g_c) of candidate ``name`` (one of ``OURS_NAMES``)."""
    if name == BENNETT:
        return bennett_gradient(u, c, steps)
    grads = rv.gradient(OURS[name], (u, tmp, c, steps))
    return grads[0], grads[2]


JAX = {"JAX scan": False, "JAX scan+checkpoint": True}
JAX_OBJECTIVE = "JAX objective jit(loss)"
NUMBA = "numba forward (plain loop)"


def initial() -> tuple[np.ndarray, np.ndarray]:
    return np.sin(np.linspace(0.0, np.pi, N)) + np.linspace(0.0, 0.5, N), np.zeros(N)


def coefficient(steps: int) -> float:
    return min(0.2, DIFFUSION / steps)


def jax_functions(steps: int, checkpoint: bool):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def loss(u, c):
        def body(u, _):
            inner = u[1:-1] + c * (u[:-2] - 2.0 * u[1:-1] + u[2:])
            return u.at[1:-1].set(inner), None

        u, _ = jax.lax.scan(jax.checkpoint(body) if checkpoint else body, u, None, length=steps)
        return jnp.sum(u * u)

    return jax.jit(jax.grad(loss, argnums=(0, 1))), jax.jit(loss)


@functools.cache
def numba_forward():
    import numba

    @numba.njit(cache=False)
    def heat(u, tmp, c, steps):
        n = len(u)
        for _ in range(steps):
            for i in range(1, n - 1):
                tmp[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
            for i in range(1, n - 1):
                u[i] = tmp[i]
        energy = 0.0
        for i in range(n):
            energy += u[i] * u[i]
        return energy

    return heat


# --------------------------------------------------------------------------
# Schedules: recomputation counts (no run needed)
# --------------------------------------------------------------------------


@functools.cache
def bisection_plain(length: int) -> int:
    """Plain (untaped) forward steps of ``revmlir.checkpoint.bisection``."""
    if length <= 1:
        return 0
    half = length // 2
    return half + bisection_plain(length - half) + bisection_plain(half)


def schedule_note(name: str, steps: int) -> str:
    """Plain steps per step and snapshots held, from the schedule."""
    if name == "ours bisection":
        plain, peak = bisection_plain(steps), math.ceil(math.log2(steps)) + 1
    elif name.startswith("ours binomial"):
        k = int(name.rsplit("=", 1)[1])
        plain, peak = rv.checkpoint.binomial_optimum(steps, k), min(k, steps)
    elif name == BENNETT:
        level = round(math.log(steps, BENNETT_K))
        runs = (2 * BENNETT_K - 1) ** level  # calls and uncalls of the step, each way
        return f"{runs / steps:4.1f} step runs/step each way, {level * (BENNETT_K - 1) + 2} states"
    else:
        return ""
    return f"{plain / steps:4.1f} recomputed/step, {peak} snapshots"


# --------------------------------------------------------------------------
# One case in a fresh process
# --------------------------------------------------------------------------


def run_case(name: str, steps: int, reps: int) -> dict:
    u, tmp = initial()
    c = coefficient(steps)
    result: dict = {"name": name, "steps": steps}
    if name in OURS_NAMES:
        _, result["warmup_s"] = timed(lambda: ours_gradient(name, u, tmp, 0.2, 10))
        call = lambda: ours_gradient(name, u, tmp, c, steps)  # noqa: E731 - inputs are not written
        (g_u, g_c), once = peak_increase(call, result)
        result["g_u"], result["g_c"] = np.asarray(g_u).tolist(), float(g_c)
    elif name == OBJECTIVE:
        f = heat_store_all
        _, result["warmup_s"] = timed(lambda: f(u.copy(), tmp.copy(), 0.2, 10))
        call = lambda: f(u.copy(), tmp.copy(), c, steps)  # noqa: E731 - f writes u and tmp
        value, once = peak_increase(call, result)
        result["value"] = float(value)
    elif name in JAX:
        import jax

        grad, loss = jax_functions(steps, JAX[name])
        args = (jax.device_put(u), jax.device_put(np.float64(c)))
        grads, call, once = jax_case(result, grad, loss, args, reps, objective=not JAX[name])
        result["g_u"], result["g_c"] = np.asarray(grads[0]).tolist(), float(grads[1])
    else:
        raise ValueError(name)
    result["samples"], result["number"] = sample(call, reps, once)
    return result


# --------------------------------------------------------------------------
# Correctness, in this process
# --------------------------------------------------------------------------


def close(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.allclose(a, b, rtol=RTOL, atol=RTOL * float(np.max(np.abs(b)))))


def check(step_counts: list[int], names: list[str]) -> None:
    import jax

    for steps in step_counts:
        u, tmp = initial()
        c = coefficient(steps)
        grad, loss = jax_functions(steps, False)
        ref_u, ref_c = (np.asarray(g) for g in grad(jax.device_put(u), np.float64(c)))
        other = jax_functions(steps, True)[0](jax.device_put(u), np.float64(c))
        assert close(other[0], ref_u) and close(other[1], ref_c), f"JAX scan+checkpoint differs at {steps}"
        for name in names:
            g_u, g_c = ours_gradient(name, u, tmp, c, steps)
            assert close(g_u, ref_u) and close(g_c, ref_c), (
                f"{name} at {steps} steps: gradient differs from JAX by {deviation(g_u, ref_u):.1e} (u), "
                f"{deviation(g_c, ref_c):.1e} (c)"
            )
            assert np.array_equal(u, initial()[0]) and not tmp.any(), "rv.gradient wrote its inputs"
        value = heat_store_all(u.copy(), tmp.copy(), c, steps)
        expected = heat_store_all.pyfunc(u.copy(), tmp.copy(), c, steps)
        assert math.isclose(value, expected, rel_tol=1e-12), (value, expected)
        assert math.isclose(value, float(loss(u, c)), rel_tol=1e-12)
        assert math.isclose(numba_forward()(u.copy(), tmp.copy(), c, steps), expected, rel_tol=1e-12)
    for steps in (100, 1000, 1234):
        stats = rv.checkpoint.bisection(steps).stats()
        assert stats["plain"] == bisection_plain(steps) and stats["peak"] == math.ceil(math.log2(steps)) + 1
    print(
        f"checked at {', '.join(map(str, step_counts))} steps: the gradients (u and c) of "
        f"{', '.join(names)} equal JAX scan's and JAX scan+checkpoint's (rtol {RTOL:g}); "
        "f(*args), f.pyfunc, numba and JAX's loss agree (rtol 1e-12)"
    )


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def timing(result: dict, key: str = "samples") -> H.Timing:
    return H.Timing(result["name"], result[key], result.get("number", 1))


def exponent(steps: int) -> str:
    return f"10^{round(math.log10(steps))}"


def plots(step_counts: list[int], results: dict[tuple[str, int], dict], gradients: list[str]) -> None:
    styles = {
        "ours store-all": ("C0", "o-"),
        "ours bisection": ("C1", "s-"),
        "ours binomial k=10": ("C2", "^-"),
        "ours binomial k=30": ("C4", "v-"),
        BENNETT: ("C6", "P-"),
        "JAX scan": ("C3", "D--"),
        "JAX scan+checkpoint": ("C5", "x--"),
        OBJECTIVE: ("0.4", ".:"),
        NUMBA: ("0.7", "+:"),
        JAX_OBJECTIVE: ("C3", "+:"),
    }
    title = f"heat equation, {N} points: gradient w.r.t. u and c"
    for what, file in (("time", "checkpoint_time.png"), ("memory", "checkpoint_memory.png")):
        names = [*gradients, OBJECTIVE] + ([NUMBA, JAX_OBJECTIVE] if what == "time" else [])
        series = {}
        for name in names:
            xs = [s for s in step_counts if (name, s) in results]
            ys = [
                statistics.median(results[name, s]["samples"])
                if what == "time"
                else results[name, s]["rss_increase_mib"]
                for s in xs
            ]
            series[name] = (xs, ys, styles[name])
        plot_scaling(HERE / file, title, "time steps", what, series)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="up to 10^4 steps, no k=30, fewer samples")
    parser.add_argument("--max-steps", type=int, help="largest step count (default 10^6, --quick 10^4)")
    parser.add_argument("--store-all-max", type=int, default=10**6, help="cap on store-all's step count")
    opts = options_or_case(parser, run_case)
    if opts is None:
        return 0

    top = opts.max_steps or (10**4 if opts.quick else 10**6)
    step_counts = [10**e for e in range(2, 7) if 10**e <= top]
    gradients = [n for n in OURS_NAMES if not (opts.quick and n == "ours binomial k=30")] + list(JAX)
    H.print_header(
        "checkpointed gradients (issue 6): time and peak memory against time steps, vs JAX",
        __doc__.split("Method:")[0].split("\n", 2)[2],
    )
    import jax
    import jaxlib

    print(
        f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, backend {jax.default_backend()}, float64 "
        f"(jax_enable_x64); one snapshot of ours = the arrays the loop writes, u and tmp: {2 * N * 8} B"
    )
    check([s for s in step_counts if s <= 10**4], [n for n in gradients if n in OURS_NAMES])

    results: dict[tuple[str, int], dict] = {}
    started = time.perf_counter()
    for steps in step_counts:
        reps = 7 if steps <= 10**4 else 5 if steps <= 10**5 else 3
        if opts.quick:
            reps = min(reps, 5)
        for name in [*gradients, OBJECTIVE]:
            if name == "ours store-all" and steps > opts.store_all_max:
                continue
            results[name, steps] = spawn(Path(__file__).resolve(), name, steps, reps)
        jax_case = results["JAX scan", steps]
        results[JAX_OBJECTIVE, steps] = {"name": JAX_OBJECTIVE, "samples": jax_case["objective_samples"]}
        u, tmp = initial()
        nb = numba_forward()
        c = coefficient(steps)
        nb(u.copy(), tmp.copy(), c, 10)
        _, once = timed(lambda: nb(u.copy(), tmp.copy(), c, steps))
        samples, number = sample(lambda: nb(u.copy(), tmp.copy(), c, steps), max(reps, 7), once)
        results[NUMBA, steps] = {"name": NUMBA, "samples": samples, "number": number}
        report_steps(steps, results, gradients)
    print(f"\n(cases took {time.perf_counter() - started:.0f} s, each in a fresh process)")

    summary(step_counts, results, gradients)
    plots(step_counts, results, gradients)
    return 0


def report_steps(steps: int, results: dict[tuple[str, int], dict], gradients: list[str]) -> None:
    ref = results["JAX scan", steps]
    for name in gradients:
        if (name, steps) in results:
            r = results[name, steps]
            r["deviation"] = max(deviation(r["g_u"], ref["g_u"]), deviation([r["g_c"]], [ref["g_c"]]))
            if steps <= 10**4:
                assert r["deviation"] <= RTOL, (name, steps, r["deviation"])
    t = {
        name: timing(results[name, steps])
        for name in [*gradients, OBJECTIVE, JAX_OBJECTIVE, NUMBA]
        if (name, steps) in results
    }
    print(f"\n## {steps} steps (c = {coefficient(steps):g}), gradient w.r.t. u and c")
    head = (
        f"{'candidate':<28} {'median':>10} {'min … max':>23} {'peak':>10} {'Δmaxrss':>10} {'÷ JAX scan':>11} "
        f"{'÷ JAX+ckpt':>11} {'÷ objective':>12} {'dev. vs JAX':>11}  schedule"
    )
    print(head)
    print("-" * len(head))
    for name, tm in t.items():
        r = results[name, steps]
        memory = f"{r['rss_increase_mib']:.1f} MiB" if "rss_increase_mib" in r else ""
        plain = f"{r['maxrss_increase_mib']:.1f} MiB" if "maxrss_increase_mib" in r else ""
        line = (
            f"{name:<28} {H.fmt_time(tm.median):>10} {H.fmt_time(tm.low) + ' … ' + H.fmt_time(tm.high):>23}"
            f" {memory:>10} {plain:>10}"
        )
        if name in gradients:
            line += f" {tm.median / t['JAX scan'].median:>10.2f}× {tm.median / t['JAX scan+checkpoint'].median:>10.2f}×"
            base = t[JAX_OBJECTIVE] if name in JAX else t[OBJECTIVE]
            line += f" {tm.median / base.median:>11.2f}× {r['deviation']:>11.1e}  {schedule_note(name, steps)}"
        elif name == OBJECTIVE:
            line += f" {'':>11} {'':>11} {'1.00×':>12}"
        print(line)
    resets = {results[n, steps]["peak_reset"] for n in t if "peak_reset" in results[n, steps]}
    print(
        "(peak: peak RSS during the call − RSS before it"
        + (
            ""
            if resets == {True}
            else " — WARNING: the peak could not be reset here, so it is the plain ru_maxrss difference"
        )
        + "; Δmaxrss: ru_maxrss after − before, not reset; "
        f"÷ objective: ours ÷ ours objective f(*args), JAX ÷ {JAX_OBJECTIVE}; samples: "
        + ", ".join(f"{len(tm.samples)}×{tm.number}" for tm in t.values())
        + " (samples × calls per sample); "
        "first call at 10 steps (compile, ours) / AOT compile (JAX): "
        + ", ".join(
            f"{n.replace('ours ', '')} {results[n, steps]['warmup_s']:.2f} s"
            for n in t
            if "warmup_s" in results[n, steps]
        )
        + ")"
    )


def summary(step_counts: list[int], results: dict[tuple[str, int], dict], gradients: list[str]) -> None:
    names = [*gradients, OBJECTIVE, JAX_OBJECTIVE, NUMBA]
    cols = "".join(f" {exponent(s):>10}" for s in step_counts)
    print("\n## summary: median time per call")
    print(f"{'candidate':<28}{cols}")
    for name in names:
        cells = "".join(
            f" {H.fmt_time(statistics.median(results[name, s]['samples'])) if (name, s) in results else '—':>10}"
            for s in step_counts
        )
        print(f"{name:<28}{cells}")
    print("\n## summary: peak RSS during one call − RSS before it (MiB)")
    print(f"{'candidate':<28}{cols}")
    for name in [*gradients, OBJECTIVE]:
        cells = "".join(
            f" {results[name, s]['rss_increase_mib'] if (name, s) in results else math.nan:>10.1f}" for s in step_counts
        )
        print(f"{name:<28}{cells}")
    print("\n## summary: ratios of medians (ours ÷ JAX scan / ours ÷ JAX scan+checkpoint / ours ÷ ours objective)")
    print(f"{'candidate':<28}" + "".join(f" {exponent(s):>18}" for s in step_counts))
    for name in [n for n in gradients if n in OURS_NAMES]:
        cells = ""
        for s in step_counts:
            if (name, s) not in results:
                cells += f" {'—':>18}"
                continue
            m = statistics.median(results[name, s]["samples"])
            ratios = [m / statistics.median(results[b, s]["samples"]) for b in (*JAX, OBJECTIVE)]
            cells += f" {'/'.join(f'{x:.2f}' for x in ratios):>18}"
        print(f"{name:<28}{cells}")
    worst = max(r["deviation"] for (n, _), r in results.items() if "deviation" in r)
    print(f"\nlargest relative deviation of any gradient from JAX scan's (max-norm, all step counts): {worst:.1e}")


if __name__ == "__main__":
    sys.exit(main())
