"""Split points anywhere (issue 6, seed 001 sections 2 and 6): the gradient of
the adaptive-grid rotations example against its outer iteration count.

Time and peak memory against ``l``, checkpointed at outer iterations and at
primitive steps, beside store-all and JAX.

The program is examples/python/rotations.py, ordinary Python: ``l`` outer
iterations, the ``i``-th running ``m(i)`` steps ``x = rot2(1.4|x|, rot1(1.2|x|,
x))`` of a state of ``N`` = 100 numbers (seed 001 uses 1000; 100 keeps
store-all's tape in memory up to the largest ``l``); ``m(i)`` is 1 on most
iterations but ``l`` on a few, and the steps total W ≈ l·(lg l + 1).  The
gradient is that of ``|x|²/2`` with respect to the initial state ``x``,
which is ``x`` itself in real arithmetic.

Candidates, all compiled once and run natively:

* ours store-all: ``rotations``, unmarked: a tape of every update (memory
  linear in W);
* ours split at iterations, k=4: ``rotations_iterations``,
  ``rv.checkpointed(range(l), snapshots=4)``: Revolve over the ``l`` outer
  iterations, each taped whole when reversed, so the longest one (``l``
  updates) sets the memory: linear in ``l`` (seed 001's Tapenade column);
* ours split anywhere, k=4: ``rotations_work``, ``split="work"``: Revolve over
  the W + 2l primitive steps of the flattened loop nest (counted by a first
  sweep): 4 snapshots and one update's tape whatever ``l``;
* JAX scan / JAX scan+checkpoint: ``jit(grad)`` of ``lax.scan`` of one update,
  ``jax.checkpoint``-ed or not, over the W updates (JAX cannot reverse a loop
  whose trip count is data, so it is given W, computed in Python from ``l``
  and ``phi``, and keeps W carried states at least);
* ours objective f(*args): ``rotations`` called (its ordinary code compiled
  as it is, no tape: the 1x of gradient/objective); JAX objective: ``jit``
  of the scan.

Method: as bench_checkpoint.py (benchmarks/_fresh.py): each (candidate, l)
runs in a fresh process that warms up (ours: a gradient at l = 16, which
compiles; JAX: ahead-of-time compile at the target W), resets its peak RSS
and reports the peak RSS during one call minus the RSS before it, then the
median of further calls.  The parent process first checks, for the smaller
``l``, that all gradients agree with JAX's (rtol 1e-9) and with central
finite differences of the numpy form (rtol 1e-6).

``--seed`` runs seed 001's own sizes instead (n = 1000, x = (n, …, 1),
φ = 3, l = 53 … 3203): every schedule's gradient (store-all, bisection,
binomial, binomial split anywhere) against the exact ∇f = x₀, beside JAX's,
and f against 166916750; no timing.

Run:  .venv/bin/python benchmarks/bench_rotations.py [--quick | --seed]
      (--quick: l up to 2^10, fewer samples)
Writes benchmarks/rotations_time.png and benchmarks/rotations_memory.png
(needs matplotlib: pip install -e .[bench]).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import _harness as H
import numpy as np
from _fresh import deviation, jax_case, options_or_case, peak_increase, plot_scaling, sample, spawn, timed

import revmlir as rv

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(H.ROOT / "examples" / "python"))
import rotations as R  # noqa: E402 - the example, from its folder

N = 100
PHI = 1.0
RTOL = 1e-9

OURS = {
    "ours store-all": R.rotations,
    "ours split at iterations, k=4": R.rotations_iterations,
    "ours split anywhere, k=4": R.rotations_work,
}
JAX = {"JAX scan": False, "JAX scan+checkpoint": True}
OBJECTIVE = "ours objective f(*args)"
JAX_OBJECTIVE = "JAX objective jit(scan)"
STYLES = {"ours store-all": ("C0", "o-"), "ours split at iterations, k=4": ("C1", "s-"),
          "ours split anywhere, k=4": ("C2", "^-"), "JAX scan": ("C3", "D--"), "JAX scan+checkpoint": ("C5", "x--"),
          OBJECTIVE: ("0.4", ".:"), JAX_OBJECTIVE: ("C3", "+:")}


def initial() -> np.ndarray:
    return np.linspace(0.1, 1.0, N)


def work(l: int, phi: float = PHI) -> int:
    """W, the updates of all outer iterations."""
    return sum(R.durations(l, phi))


def jax_functions(updates: int, checkpoint: bool):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def step(x, _):
        y = jnp.sqrt(jnp.sum(x * x))
        for theta, first in ((1.2 * y, 0), (1.4 * y, 1)):
            c, s = jnp.cos(theta), jnp.sin(theta)
            a, b = x[first:-1:2], x[first + 1::2]
            x = x.at[first:-1:2].set(c * a - s * b).at[first + 1::2].set(s * a + c * b)
        return x, None

    def output(x):
        x, _ = jax.lax.scan(jax.checkpoint(step) if checkpoint else step, x, None, length=updates)
        return 0.5 * jnp.sum(x * x)

    return jax.jit(jax.grad(output)), jax.jit(output)


def schedule_note(name: str, l: int) -> str:
    """Plain (recomputed) updates per update and the longest taped stretch,
    from the schedules."""
    updates = work(l)
    if name == "ours split at iterations, k=4":
        plain = rv.checkpoint.binomial_optimum(l, 4)
        return f"Revolve over {l} iterations ({plain / l:.1f} recomputed/iteration), tapes up to {l} updates"
    if name == "ours split anywhere, k=4":
        steps = updates + 2 * l
        plain = rv.checkpoint.binomial_optimum(steps, 4)
        return f"Revolve over {steps} steps ({plain / steps:.1f} recomputed/step), tapes 1 update"
    return ""


def run_case(name: str, l: int, reps: int) -> dict:
    x = initial()
    result: dict = {"name": name, "l": l}
    if name in OURS:
        f = OURS[name]
        _, result["warmup_s"] = timed(lambda: rv.gradient(f, (x, 16, PHI)))
        call = lambda: rv.gradient(f, (x, l, PHI))[0]  # noqa: E731 - x is not written
        g, once = peak_increase(call, result)
        result["g"] = np.asarray(g).tolist()
    elif name == OBJECTIVE:
        _, result["warmup_s"] = timed(lambda: R.rotations(x.copy(), 16, PHI))
        call = lambda: R.rotations(x.copy(), l, PHI)  # noqa: E731 - f writes x
        value, once = peak_increase(call, result)
        result["value"] = float(value)
    elif name in JAX:
        import jax

        grad, output = jax_functions(work(l), JAX[name])
        g, call, once = jax_case(result, grad, output, (jax.device_put(x),), reps, objective=not JAX[name])
        result["g"] = np.asarray(g).tolist()
    else:
        raise ValueError(name)
    result["samples"], result["number"] = sample(call, reps, once)
    return result


def check(sizes: list[int]) -> None:
    x = initial()
    for l in sizes:
        reference = np.asarray(jax_functions(work(l), False)[0](x))
        assert deviation(jax_functions(work(l), True)[0](x), reference) <= RTOL
        for name, f in OURS.items():
            g = rv.gradient(f, (x, l, PHI))[0]
            assert deviation(g, reference) <= RTOL, f"{name} at l={l}: {deviation(g, reference):.1e} from JAX"
        assert math.isclose(R.rotations(x.copy(), l, PHI), R.rotations_numpy(x, l, PHI), rel_tol=1e-12)
    l, h = sizes[0], 1e-6
    central = [(R.rotations_numpy(x + h * e, l, PHI) - R.rotations_numpy(x - h * e, l, PHI)) / (2 * h)
               for e in np.eye(N)[::17]]
    g = rv.gradient(R.rotations_work, (x, l, PHI))[0][::17]
    np.testing.assert_allclose(g, central, rtol=1e-6)
    print(f"checked at l = {', '.join(map(str, sizes))}: the three gradients of ours equal JAX scan's and "
          f"JAX scan+checkpoint's (rtol {RTOL:g}); at l = {l}, split anywhere equals central differences "
          "(rtol 1e-6); f(*args) equals the numpy form (rtol 1e-12)")


def report(l: int, results: dict[tuple[str, int], dict], gradients: list[str]) -> None:
    ref = results["JAX scan", l]
    names = [n for n in [*gradients, OBJECTIVE, JAX_OBJECTIVE] if (n, l) in results]
    t = {n: H.Timing(n, results[n, l]["samples"], results[n, l].get("number", 1)) for n in names}
    print(f"\n## l = {l}: W = {work(l)} updates, longest outer iteration {max(R.durations(l, PHI))} updates")
    head = (f"{'candidate':<31} {'median':>10} {'min … max':>23} {'peak':>10} {'÷ JAX scan':>11} "
            f"{'÷ JAX+ckpt':>11} {'÷ objective':>12} {'dev. vs JAX':>11}  schedule")
    print(head)
    print("-" * len(head))
    for name, tm in t.items():
        r = results[name, l]
        memory = f"{r['rss_increase_mib']:.1f} MiB" if "rss_increase_mib" in r else ""
        line = f"{name:<31} {H.fmt_time(tm.median):>10} {H.fmt_time(tm.low) + ' … ' + H.fmt_time(tm.high):>23} {memory:>10}"
        if name in gradients:
            r["deviation"] = deviation(r["g"], ref["g"])
            base = t[JAX_OBJECTIVE] if name in JAX else t[OBJECTIVE]
            line += (f" {tm.median / t['JAX scan'].median:>10.2f}× {tm.median / t['JAX scan+checkpoint'].median:>10.2f}×"
                     f" {tm.median / base.median:>11.2f}× {r['deviation']:>11.1e}  {schedule_note(name, l)}")
        print(line)
    print("(samples × calls per sample: " + ", ".join(f"{len(tm.samples)}×{tm.number}" for tm in t.values())
          + "; first call at l = 16 (compile, ours) / AOT compile (JAX): "
          + ", ".join(f"{n} {results[n, l]['warmup_s']:.2f} s" for n in t if "warmup_s" in results[n, l]) + ")")


def summary(sizes: list[int], results: dict[tuple[str, int], dict], gradients: list[str]) -> None:
    cols = "".join(f" {'2^' + str(int(math.log2(l))):>10}" for l in sizes)
    print("\n## summary: median time per call")
    print(f"{'candidate':<31}{cols}")
    for name in [*gradients, OBJECTIVE, JAX_OBJECTIVE]:
        print(f"{name:<31}" + "".join(
            f" {H.fmt_time(statistics.median(results[name, l]['samples'])) if (name, l) in results else '—':>10}"
            for l in sizes))
    print("\n## summary: peak RSS during one call − RSS before it (MiB)")
    print(f"{'candidate':<31}{cols}")
    for name in [*gradients, OBJECTIVE]:
        print(f"{name:<31}" + "".join(f" {results[name, l]['rss_increase_mib'] if (name, l) in results else math.nan:>10.1f}"
                                      for l in sizes))
    worst = max(r["deviation"] for r in results.values() if "deviation" in r)
    print(f"\nlargest relative deviation of any gradient from JAX scan's (max-norm, all l): {worst:.1e}")


def seed_sizes() -> None:
    """Seed 001's own sizes: every schedule's gradient against the exact
    answer, JAX's beside it."""
    x0 = R.seed_state()
    exact = 0.5 * float(x0 @ x0)
    print(f"seed 001: n = {R.N}, x0 = (n, ..., 1), phi = {R.PHI:g}; exact f = {exact:.0f}, exact gradient x0")
    print(f"{'l':>5} {'W':>6} {'schedule':<27} {'|f - exact|/f':>14} {'max |g - x0|/x0':>16} {'time':>8}")
    for l in R.L:
        for schedule, f in R.SCHEDULES.items():
            value = f(x0.copy(), l, R.PHI)
            g, seconds = timed(lambda f=f: rv.gradient(f, (x0.copy(), l, R.PHI))[0])
            print(f"{l:>5} {work(l, R.PHI):>6} {schedule:<27} {abs(value - exact) / exact:>14.1e} "
                  f"{np.max(np.abs(g - x0) / x0):>16.1e} {seconds:>7.2f}s", flush=True)
        updates = work(l, R.PHI)
        g = np.asarray(jax_functions(updates, False)[0](x0))
        print(f"{l:>5} {updates:>6} {'JAX scan (float64)':<27} {'':>14} {np.max(np.abs(g - x0) / x0):>16.1e}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="l up to 2^10, fewer samples")
    parser.add_argument("--seed", action="store_true", help="seed 001's sizes against the exact gradient")
    parser.add_argument("--max-l", type=int, help="largest l (default 2^14, --quick 2^10)")
    opts = options_or_case(parser, run_case)
    if opts is None:
        return 0
    if opts.seed:
        seed_sizes()
        return 0

    top = opts.max_l or (2**10 if opts.quick else 2**14)
    sizes = [2**e for e in range(6, 15, 2) if 2**e <= top]
    gradients = [*OURS, *JAX]
    H.print_header("split points anywhere (issue 6): the rotations example against l, vs JAX",
                   __doc__.split("Method:")[0].split("\n", 2)[2])
    import jax

    print(f"jax {jax.__version__}, backend {jax.default_backend()}, float64 (jax_enable_x64)")
    check([l for l in sizes if l <= 2**8])
    results: dict[tuple[str, int], dict] = {}
    started = time.perf_counter()
    for l in sizes:
        reps = 3 if l >= 2**12 and not opts.quick else 5
        for name in [*gradients, OBJECTIVE]:
            results[name, l] = spawn(Path(__file__).resolve(), name, l, reps)
        results[JAX_OBJECTIVE, l] = {"name": JAX_OBJECTIVE, "samples": results["JAX scan", l]["objective_samples"]}
        report(l, results, gradients)
    print(f"\n(cases took {time.perf_counter() - started:.0f} s, each in a fresh process)")
    summary(sizes, results, gradients)
    title = f"seed 001's rotations, {N} numbers, phi = {PHI:g}: gradient w.r.t. x"
    for what, file in (("time", "rotations_time.png"), ("memory", "rotations_memory.png")):
        names = [*gradients, OBJECTIVE] + ([JAX_OBJECTIVE] if what == "time" else [])
        series = {}
        for name in names:
            xs = [l for l in sizes if (name, l) in results]
            ys = [statistics.median(results[name, l]["samples"]) if what == "time"
                  else results[name, l]["rss_increase_mib"] for l in xs]
            series[name] = (xs, ys, STYLES[name])
        plot_scaling(HERE / file, title, "outer iterations l", what, series)
    return 0


if __name__ == "__main__":
    sys.exit(main())
