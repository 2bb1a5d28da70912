"""One benchmark case in a fresh process: the resident memory one call adds
at its peak, and its timing samples.

A gradient whose memory is meant to stay flat cannot be measured in the
process that compiled it: compilation has already raised the peak RSS far
above what one call adds, so ``ru_maxrss`` differences read 0.  Each case
therefore runs in a fresh process (the calling script with ``--case``), which
returns freed heap memory to the system (``malloc_trim``), resets its peak
RSS to its current RSS (Linux: ``5 > /proc/self/clear_refs``) and reads
``VmHWM − VmRSS`` around the call.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import math
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from _harness import max_rss_mib

CASE_PREFIX = "CASE "


def status_mib(field: str) -> float:
    """``VmRSS`` (resident now) or ``VmHWM`` (its peak) of this process."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    raise OSError(f"no {field} in /proc/self/status")


def reset_peak() -> bool:
    """Return freed heap memory to the system and reset the process's peak
    RSS (``VmHWM``) to its current RSS.  False where that is not possible.
    (``ru_maxrss`` is not a reliable reader of the reset peak: it is also the
    maximum of the peaks recorded when threads of the process exited.)"""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def peak_increase(call: Callable[[], Any], result: dict) -> tuple[Any, float]:
    """Run ``call`` once; record by how much it raised the peak RSS over the
    RSS just before it (``rss_increase_mib``), and, as the plain ru_maxrss
    difference, over the peak the process had already reached
    (``maxrss_increase_mib``).  Returns the call's result and duration."""
    old_peak = max_rss_mib()
    reset = reset_peak()
    before = status_mib("VmRSS") if reset else old_peak
    out, once = timed(call)
    after = max_rss_mib()
    peak = status_mib("VmHWM") if reset else after
    result["rss_increase_mib"] = max(0.0, peak - before)
    result["maxrss_increase_mib"] = max(0.0, after - old_peak)
    result["peak_reset"] = reset
    return out, once


def sample(fn: Callable[[], Any], reps: int, once: float) -> tuple[list[float], int]:
    """``reps`` samples of per-call time; a sample is ``number`` calls lasting
    at least 20 ms (``once`` = the duration of one call)."""
    number = max(1, math.ceil(0.02 / max(once, 1e-7)))
    samples = []
    for _ in range(reps):
        gc.disable()
        try:
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples.append((time.perf_counter() - start) / number)
        finally:
            gc.enable()
    return samples, number


def print_case(result: dict) -> None:
    """The ``--case`` process's answer to ``spawn``."""
    print(CASE_PREFIX + json.dumps(result))


def spawn(script: Path, name: str, size: int, reps: int) -> dict:
    """Run ``script --case NAME SIZE REPS`` and return the dict it printed
    with ``print_case``; its output goes to stderr if it fails."""
    command = [sys.executable, str(script), "--case", name, str(size), str(reps)]
    process = subprocess.run(command, capture_output=True, text=True)
    if process.returncode:
        sys.stderr.write(process.stdout + process.stderr)
        raise RuntimeError(f"case {name!r} at size {size} failed (exit {process.returncode})")
    line = [x for x in process.stdout.splitlines() if x.startswith(CASE_PREFIX)][-1]
    return json.loads(line[len(CASE_PREFIX) :])


def plot_scaling(
    file: Path, title: str, xlabel: str, what: str, series: dict[str, tuple[list[int], list[float], tuple[str, str]]]
) -> None:
    """One PNG of time (``what="time"``, log-log) or of the memory a call
    adds (``"memory"``, symlog: linear below 1 MiB, where a flat line sits)
    against a size; ``series`` maps a label to (sizes, values, (color,
    style)).  Prints a note instead where matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: pip install -e .[bench] for the plots")
        return
    fig, ax = plt.subplots(figsize=(7.5, 5))
    top = 0.0
    for name, (xs, ys, (color, style)) in series.items():
        if xs:
            top = max(top, *ys)
            ax.plot(xs, ys, style, color=color, label=name)
    ax.set_xscale("log")
    if what == "time":
        ax.set_yscale("log")
        ax.set_ylabel("median time per call [s]")
    else:
        ax.set_yscale("symlog", linthresh=1.0)
        ax.set_ylim(0.0, max(2.0, 3.0 * top))
        ax.set_ylabel("peak RSS during one call − RSS before it [MiB]\n(symlog: linear below 1 MiB)")
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(file, dpi=110)
    plt.close(fig)
    print(f"wrote {file.name}")


def jax_case(
    result: dict, grad: Any, loss: Any, args: tuple, reps: int, objective: bool
) -> tuple[Any, Callable[[], Any], float]:
    """A JAX gradient case: ``grad`` (jitted) compiled ahead of time for
    ``args`` (``warmup_s``), one call measured by ``peak_increase``; with
    ``objective``, ``loss`` (jitted) is compiled and sampled too
    (``value``, ``objective_samples``).  Returns the gradient, the call
    and its duration, for ``sample``."""
    import jax

    compiled, result["warmup_s"] = timed(lambda: grad.lower(*args).compile())
    call = lambda: jax.block_until_ready(compiled(*args))  # noqa: E731
    grads, once = peak_increase(call, result)
    if objective:
        value_of = loss.lower(*args).compile()
        value, first = timed(lambda: jax.block_until_ready(value_of(*args)))
        result["value"] = float(value)
        result["objective_samples"], _ = sample(lambda: jax.block_until_ready(value_of(*args)), reps, first)
    return grads, call, once


def deviation(a: Any, b: Any) -> float:
    """Max-norm relative deviation of ``a`` from ``b``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def options_or_case(
    parser: argparse.ArgumentParser, run_case: Callable[[str, int, int], dict]
) -> argparse.Namespace | None:
    """The script's options; or, in a process ``spawn`` started (the hidden
    ``--case NAME SIZE REPS``), None after running that case and printing
    its result."""
    parser.add_argument("--case", nargs=3, metavar=("NAME", "SIZE", "REPS"), help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if not opts.case:
        return opts
    name, size, reps = opts.case
    print_case(run_case(name, int(size), int(reps)))
    return None
