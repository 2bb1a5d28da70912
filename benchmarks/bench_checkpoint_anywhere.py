"""Checkpointing anywhere (issue 22, seed 001 sections 2 and 6): time and
peak memory of the gradient of seed 001's rotations example, at the seed's
own sizes, under store-all, bisection and binomial schedules.

The program is examples/python/rotations.py, exactly as the seed states it:
``n`` = 1000 numbers ``x₀ = (n, …, 1)``, φ = 3, ``l`` outer iterations, the
``i``-th running ``m(i)`` steps ``x = rot2(1.4‖x‖, rot1(1.2‖x‖, x))``
(one on most iterations, ``2^⌊lg l⌋`` on a few; ``W`` steps in all), output
``‖x‖²/2``.  The exact gradient is ``x₀``; every gradient is checked
against it.

Policies (``POLICIES``, one line each: how the gradient is made):

* store-all: ``rv.gradient(rotations, args)`` with no ``checkpoint=``:
  Bennett's tape of every step;
* bisection: ``rv.gradient(rotations, args, checkpoint="bisection")``:
  the unannotated program run as a state machine over its primitive steps
  (segments: a rotation step is about ``2n`` of them), the default
  ``base="auto"`` segments to a checkpointed step (``AUTO_BASE``, 4096
  here, asserted: four per word of a snapshot, about two rotation steps),
  reversed under binary bisection over the counted steps (the seed's
  checkpointVLAD schedule);
* bisection, base=1024: as bisection with ``BASE`` segments to a
  checkpointed step (about half a rotation step);
* binomial: ``checkpoint="binomial", snapshots=4, base=BASE``: Revolve
  over the same steps with 4 snapshots;
* bisection, marked: ``rotations_bisection`` (outer loop marked
  ``rv.checkpointed(…, split="work")``): bisection over the ``W + 2l``
  steps of the flattened loop nest, one rotation step each;
* binomial at outer iterations: ``rotations_iterations`` (marked
  ``snapshots=4``): Revolve over the ``l`` outer iterations only, as
  Tapenade's ``binomial-ckp`` pragma in the seed: the longest iteration is
  taped whole.

Beside them: the primal (``rotations`` called: its ordinary code compiled as
it is, no tape), and JAX (float64, ``jit(grad)``) of ``lax.scan`` over the
``W`` steps, plain and with ``jax.checkpoint`` on the step: JAX cannot
reverse a loop whose trip count is data, but the inner counts depend only on
``i``, ``l`` and φ, so Python computes ``W`` and JAX gets a static scan.

Method: as bench_checkpoint.py (benchmarks/_fresh.py), but each candidate
runs every ``l`` in one fresh process (compiling takes most of a case's
time on a shared machine): it warms up (ours: one call at l = 53, which
compiles; JAX: ahead-of-time compile at each target W), and for each ``l``,
smallest first, resets its peak RSS, reports the peak RSS during one call
minus the RSS before it, then the median wall time of further calls and
their CPU time per call.  Counted snapshot bytes are the schedule's peak
number of stored states (``rv.checkpoint``'s simulation of the same
schedule the compiled code runs) times the bytes of one snapshot record as
the compiled gradient's ``anc.snapshot`` ops declare it (the state ``x``
and the loop's index words).

Run:  .venv/bin/python benchmarks/bench_checkpoint_anywhere.py [--large] [--reps N] [--max-l L] [--quick]
      (--large adds l = 10⁴ and 10⁵, one sample each; ``LARGEST_L`` says
      where each candidate stops; benchmarks/RESULTS.md's run is
      ``--max-l 3203 --reps 1``, the seed's sizes)
Writes benchmarks/checkpoint_anywhere_time.png and
benchmarks/checkpoint_anywhere_memory.png (needs matplotlib).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import Float64Type, IndexType, MemRefType

import _harness as H
import revmlir as rv
from _fresh import (
    jax_case,
    options_or_case,
    peak_increase,
    plot_scaling,
    sample,
    spawn,
    timed,
)
from revmlir.dialects import anc
from revmlir.frontend.base.checkpoint_policy import CheckpointPolicy

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(H.ROOT / "examples" / "python"))
import rotations as R

PHI = R.PHI
SIZES = R.L
LARGE = (10_000, 100_000)
LARGEST_L = {
    "store-all": 3203,
    "JAX scan": 3203,
    "JAX scan+checkpoint": 10_000,
    "binomial": 3203,
    "binomial at outer iterations": 10_000,
}
"""Where a candidate stops: memory linear in W (store-all's tape is about
1 GiB at l = 3203, JAX's checkpointed scan keeps W states), or time
(binomial with 4 snapshots recomputes some 15 steps per step at l = 3203)."""
SNAPSHOTS = 4
BASE = 1024
"""Segments to a checkpointed step under ``checkpoint=``: about half a
rotation step."""
AUTO_BASE = 4096
"""What ``base="auto"``, the default, gives the rotations (four segments per
word of a snapshot of 8 080 bytes, rounded up to a power of two; asserted
by ``main``): about two rotation steps to a checkpointed step."""

Gradient = Callable[[np.ndarray, int], np.ndarray]
POLICIES: dict[str, Gradient] = {
    "store-all": lambda x, l: R.gradient("Bennett's tape", x, l, PHI),
    "bisection": lambda x, l: R.gradient("bisection", x, l, PHI),
    "bisection, base=1024": lambda x, l: R.gradient("bisection", x, l, PHI, base=BASE),
    "binomial": lambda x, l: R.gradient("binomial", x, l, PHI, base=BASE),
    "bisection, marked": lambda x, l: R.gradient("bisection, marked", x, l, PHI),
    "binomial at outer iterations": lambda x, l: R.gradient("binomial at outer iterations, marked", x, l, PHI),
}
"""Policy → how its gradient is made: ``rv.gradient(rotations, …,
checkpoint=…)`` of the unannotated program, or a marked form."""

BASES = {"bisection": AUTO_BASE, "bisection, base=1024": BASE, "binomial": BASE}
"""The policies of ``checkpoint=`` and their segments to a checkpointed step."""

PRIMAL = "primal (compiled, no tape)"
JAX = {"JAX scan": False, "JAX scan+checkpoint": True}
JAX_PRIMAL = "JAX primal jit(scan)"
STYLES = {
    "store-all": ("C0", "o-"),
    "bisection": ("C2", "^-"),
    "binomial": ("C1", "s-"),
    "bisection, base=1024": ("C8", ">-"),
    "bisection, marked": ("C6", "<-"),
    "binomial at outer iterations": ("C4", "v-"),
    PRIMAL: ("0.4", ".:"),
    "JAX scan": ("C3", "D--"),
    "JAX scan+checkpoint": ("C5", "x--"),
    JAX_PRIMAL: ("C3", "+:"),
    "Tapenade binomial (paper's machine)": ("C4", "v:"),
    "checkpointVLAD bisection (paper's machine)": ("C2", "^:"),
}
SEED_ROWS = {
    "Tapenade binomial (paper's machine)": {"time_s": (0.05, 6.9), "memory_mib": (3.0, 34.0)},
    "checkpointVLAD bisection (paper's machine)": {"time_s": (48.0, 8495.0), "memory_mib": (11.0, 17.0)},
}
"""Seed 001's recorded endpoints at l = 53 and l = 3203, n = 1000 (Fig. 30,
``/usr/bin/time --verbose`` on the paper's machine): references, not ours."""


def work(l: int) -> int:
    """W, the steps of all outer iterations."""
    return sum(R.durations(l, PHI))


def schedule_steps(policy: str, l: int) -> int:
    """The steps a policy's schedule reverses: checkpointed steps of
    ``BASE`` segments, primitive steps of the flattened loop nest (W
    updates plus the begin and end of each outer iteration) or outer
    iterations."""
    if policy in BASES:
        return -(-R.segments(l, PHI) // BASES[policy])
    return l if policy == "binomial at outer iterations" else work(l) + 2 * l


def schedule_stats(policy: str, l: int) -> dict[str, int]:
    steps = schedule_steps(policy, l)
    if policy.startswith("bisection"):
        return rv.checkpoint.bisection(steps).stats()
    return rv.checkpoint.binomial(steps, SNAPSHOTS).stats()


def snapshot_record_bytes(f: Any, n: int) -> int:
    """The bytes one snapshot of a marked form stores, from the compiled
    gradient's first ``anc.snapshot`` of each stack: index words 8 bytes,
    an f64 array of length ``n`` (the state) 8n."""
    x = R.seed_state(n)
    module = f.specialization_for(x, 53, PHI).checkpointed_gradient.module
    records: dict[str, int] = {}
    for op in module.walk():
        if isinstance(op, anc.SnapshotOp):
            store = str(op.operands[0].type)
            if store not in records:
                records[store] = sum(8 * n if isinstance(v.type, MemRefType) else 8 for v in op.operands[1:])
    assert all(
        isinstance(v.type, IndexType | MemRefType | Float64Type)
        for op in module.walk()
        if isinstance(op, anc.SnapshotOp)
        for v in op.operands[1:]
    ), "a snapshot of another type"
    return sum(records.values())


def resumable_record_bytes(n: int) -> int:
    """The bytes one snapshot of the unannotated program's state machine
    stores: its slots and the array it writes."""
    x = R.seed_state(n)
    return R.rotations.specialization_for(x, 53, PHI).snapshot_bytes((x, 53, PHI))


def jax_functions(updates: int, checkpoint: bool):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def step(x, _):
        y = jnp.sqrt(jnp.sum(x * x))
        for theta, first in ((1.2 * y, 0), (1.4 * y, 1)):
            c, s = jnp.cos(theta), jnp.sin(theta)
            a, b = x[first:-1:2], x[first + 1 :: 2]
            x = x.at[first:-1:2].set(c * a - s * b).at[first + 1 :: 2].set(s * a + c * b)
        return x, None

    def output(x):
        x, _ = jax.lax.scan(jax.checkpoint(step) if checkpoint else step, x, None, length=updates)
        return 0.5 * jnp.sum(x * x)

    return jax.jit(jax.grad(output)), jax.jit(output)


def measure(name: str, l: int, reps: int) -> dict:
    """One candidate at one ``l``, in a process where it is already
    compiled: the memory one call adds at its peak, then wall-clock samples
    and the CPU time per call."""
    x = R.seed_state()
    result: dict = {"name": name, "l": l}
    if name in POLICIES:
        gradient = POLICIES[name]
        call = lambda: gradient(x.copy(), l)
        g, once = peak_increase(call, result)
        result["error"] = R.relative_error(np.asarray(g), x)
        result["normwise"] = R.normwise_error(np.asarray(g), x)
    elif name == PRIMAL:
        call = lambda: R.rotations(x.copy(), l, PHI)
        value, once = peak_increase(call, result)
        result["value_error"] = abs(value - R.EXACT) / R.EXACT
    elif name in JAX:
        import jax

        grad, output = jax_functions(work(l), JAX[name])
        g, call, once = jax_case(result, grad, output, (jax.device_put(x),), reps, objective=JAX[name])
        result["error"] = R.relative_error(np.asarray(g), x)
        result["normwise"] = R.normwise_error(np.asarray(g), x)
    else:
        raise ValueError(name)
    cpu = time.process_time()
    result["samples"], result["number"] = sample(call, reps, once)
    result["cpu_s"] = (time.process_time() - cpu) / (reps * result["number"])
    return result


def run_case(name: str, top: int, reps: int) -> dict:
    """A candidate at every ``l`` up to ``top``, smallest first, in one fresh
    process: compiled once (ours: a call at l = 53), its peak RSS reset
    before each measured call."""
    x = R.seed_state()
    if name in POLICIES:
        _, warmup = timed(lambda: POLICIES[name](x.copy(), 53))
    elif name == PRIMAL:
        _, warmup = timed(lambda: R.rotations(x.copy(), 53, PHI))
    else:
        warmup = 0.0
    results = {}
    for l in sizes_up_to(top):
        if name in candidates(l):
            results[str(l)] = measure(name, l, reps if l in SIZES else 1)
            results[str(l)].setdefault("warmup_s", warmup)
    return {"name": name, "by_l": results}


def sizes_up_to(top: int) -> list[int]:
    return [l for l in (*SIZES, *LARGE) if l <= top]


def candidates(l: int) -> list[str]:
    return [name for name in [*POLICIES, PRIMAL, *JAX] if l <= LARGEST_L.get(name, l)]


def median(results: dict, name: str, l: int) -> float:
    return statistics.median(results[name, l]["samples"]) if (name, l) in results else math.nan


def cpu(results: dict, name: str, l: int) -> float:
    return results[name, l]["cpu_s"] if (name, l) in results else math.nan


def report(l: int, results: dict, counted: dict) -> None:
    primal = cpu(results, PRIMAL, l)
    print(
        f"\n## l = {l}: W = {work(l)} steps, longest outer iteration {max(R.durations(l, PHI))} steps; "
        f"primal {H.fmt_time(primal)} CPU"
    )
    head = (
        f"{'candidate':<30} {'wall median':>11} {'CPU/call':>9} {'CPU ÷ primal':>12} {'peak RSS':>10} "
        f"{'snapshots':>9} {'snapshot bytes':>14} {'max|g-x0|/x0':>12} {'‖g-x0‖/‖x0‖':>12}"
    )
    print(head)
    print("-" * len(head))
    for name in candidates(l):
        r = results[name, l]
        peak, nbytes = counted.get((name, l), ("", ""))
        error = (
            f"{r['error']:>12.1e} {r['normwise']:>12.1e}"
            if "error" in r
            else f"{'f: ' + format(r['value_error'], '.0e'):>12}"
        )
        ratio = f"{cpu(results, name, l) / primal:11.1f}×" if name not in JAX else ""
        print(
            f"{name:<30} {H.fmt_time(median(results, name, l)):>11} {H.fmt_time(cpu(results, name, l)):>9} "
            f"{ratio:>12} {r['rss_increase_mib']:>6.1f} MiB {peak!s:>9} {nbytes!s:>14} {error}"
        )
    if (JAX_PRIMAL, l) in results:
        print(f"{JAX_PRIMAL:<30} {H.fmt_time(median(results, JAX_PRIMAL, l)):>11}")
    print(
        "(samples × calls: "
        + ", ".join(f"{n} {len(results[n, l]['samples'])}×{results[n, l]['number']}" for n in candidates(l))
        + ")",
        flush=True,
    )


def check(results: dict) -> None:
    """The primal's value is the exact f to 10⁻¹², and every gradient is the
    exact x₀ to 10⁻⁸, in every component and as a vector, where the
    program's float64 conditioning allows it (l ≤ 809; the example's
    docstring)."""
    for (name, l), r in results.items():
        if "value_error" in r:
            assert r["value_error"] <= 1e-12, f"{name} at l = {l}: f off by {r['value_error']:.1e}"
        if "error" in r and l <= 809:
            assert max(r["error"], r["normwise"]) <= 1e-8, f"{name} at l = {l}: gradient off by {r['error']:.1e}"
    print(
        "checked: f = 166916750 to 1e-12 at every l; every gradient = x0 to 1e-8, componentwise and "
        "normwise, at l <= 809"
    )


def targets(sizes: list[int], results: dict, counted: dict) -> None:
    """The issue's two targets, on CPU time (the machine is shared: wall
    time counts other processes' work)."""
    print("\n## targets")
    if ("bisection", 3203) in counted:
        low, high = counted["bisection", 53][1], counted["bisection", 3203][1]
        print(
            f"memory flat under bisection: counted snapshot bytes at l = 3203 {high} B, at l = 53 {low} B: "
            f"{high / low:.2f}× ({'met' if high <= 2 * low else 'MISSED'}: target at most 2×)"
        )
    for name in ("bisection", "bisection, base=1024"):
        for l in sizes:
            if (name, l) not in results:
                continue
            steps = R.segments(l, PHI)
            ratio = cpu(results, name, l) / cpu(results, PRIMAL, l)
            bound = math.log2(steps)
            print(
                f"time under {name} at l = {l:>6}: {ratio:5.1f}× the primal's CPU time, "
                f"log₂(steps = {steps}) = {bound:4.1f}: {'met' if ratio <= bound else 'MISSED'}"
            )


def seed_rows() -> None:
    print("\n## seed 001's recorded rows (Fig. 30, n = 1000, the paper's machine: references, not ours)")
    for name, row in SEED_ROWS.items():
        (t0, t1), (m0, m1) = row["time_s"], row["memory_mib"]
        print(f"{name:<44} l = 53 → 3203: time {t0:g} → {t1:g} s, memory {m0:g} → {m1:g} MB")


def plot(sizes: list[int], results: dict) -> None:
    title = f"seed 001's rotations, n = {R.N}, φ = {PHI:g}: gradient w.r.t. x₀"
    for what, file in (("time", "checkpoint_anywhere_time.png"), ("memory", "checkpoint_anywhere_memory.png")):
        names = [*POLICIES, PRIMAL, *JAX] + ([JAX_PRIMAL] if what == "time" else [])
        series = {}
        for name in names:
            xs = [l for l in sizes if (name, l) in results]
            ys = [median(results, name, l) if what == "time" else results[name, l]["rss_increase_mib"] for l in xs]
            series[name] = (xs, ys, STYLES[name])
        for name, row in SEED_ROWS.items():
            series[name] = ([53, 3203], list(row["time_s" if what == "time" else "memory_mib"]), STYLES[name])
        plot_scaling(HERE / file, title, "outer iterations l", what, series)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--large", action="store_true", help="also l = 10^4 and 10^5")
    parser.add_argument("--reps", type=int, default=3, help="timed samples per case (default 3)")
    parser.add_argument("--max-l", type=int, help="only the sizes up to this l")
    parser.add_argument("--quick", action="store_true", help="l up to 401, one sample each")
    opts = options_or_case(parser, run_case)
    if opts is None:
        return 0
    if opts.quick:
        opts.max_l, opts.reps = opts.max_l or 401, 1
    sizes = sizes_up_to(opts.max_l or (LARGE[-1] if opts.large else SIZES[-1]))
    H.print_header(
        "checkpointing anywhere (issue 22): seed 001's rotations example against l",
        __doc__.split("Method:")[0].split("\n", 2)[2],
    )
    import jax

    print(f"jax {jax.__version__}, backend {jax.default_backend()}, float64 (jax_enable_x64)")
    record = {
        name: snapshot_record_bytes(f, R.N)
        for name, f in (
            ("bisection, marked", R.rotations_bisection),
            ("binomial at outer iterations", R.rotations_iterations),
        )
    }
    record.update(dict.fromkeys(BASES, resumable_record_bytes(R.N)))
    auto = CheckpointPolicy.of("bisection").steps_per_base(record["bisection"])
    assert auto == AUTO_BASE, f"base='auto' gives {auto} segments to a step, not {AUTO_BASE}"
    print("one snapshot record: " + ", ".join(f"{name} {size} B" for name, size in record.items()))
    results: dict[tuple[str, int], dict] = {}
    started = time.perf_counter()
    for name in [*POLICIES, PRIMAL, *JAX]:
        for l, result in spawn(Path(__file__).resolve(), name, sizes[-1], opts.reps)["by_l"].items():
            results[name, int(l)] = result
    counted: dict[tuple[str, int], tuple[int, int]] = {}
    for l in sizes:
        for name in candidates(l):
            if name in record:
                peak = schedule_stats(name, l)["peak"]
                counted[name, l] = (peak, peak * record[name])
            elif name == "store-all":
                counted[name, l] = (0, 0)
        if ("JAX scan+checkpoint", l) in results:
            results[JAX_PRIMAL, l] = {
                "name": JAX_PRIMAL,
                "samples": results["JAX scan+checkpoint", l]["objective_samples"],
            }
        report(l, results, counted)
    print(f"\n(cases took {time.perf_counter() - started:.0f} s, one fresh process per candidate)")
    check(results)
    targets(sizes, results, counted)
    seed_rows()
    plot(sizes, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
