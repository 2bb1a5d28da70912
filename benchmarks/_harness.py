"""Shared machinery of the benchmarks: machine description, interleaved
median timing, peak memory, a direct call of a compiled specialization's
machine code (no Python argument marshalling), LLVM IR inspection, and the
table printer.

Timing method (every script uses it):

* every candidate is called ``warmup`` times first (compilation, caches);
* a candidate's *sample* is a batch of ``number`` calls timed with
  ``time.perf_counter`` (``number`` is chosen so that a batch lasts at least
  ``min_sample_s``; the per-call time is batch time / ``number``);
* samples are taken round-robin — one sample of each candidate, then the next
  round — so that load from other processes on the (shared, 2-core) machine
  hits all candidates alike; the garbage collector is off inside a sample;
* ``repeat`` rounds (≥ 7); the table reports the median per-call time, the
  spread (min … max of the samples) and ratios of medians.
"""

from __future__ import annotations

import ctypes
import datetime
import gc
import math
import os
import platform
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES / "python"))

# --------------------------------------------------------------------------
# The machine
# --------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def machine_info() -> dict[str, Any]:
    import llvmlite
    import llvmlite.binding as llvm
    import numba
    import scipy

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        usable = os.cpu_count()
    flags = cpu_flags()
    simd = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f") if f in flags]
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "cores": f"{usable} usable ({os.cpu_count()} online)",
        "simd": " ".join(simd),
        "llvm host cpu": _host_cpu_name(llvm),
        "load average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "llvmlite": f"{llvmlite.__version__} (LLVM {'.'.join(map(str, llvm.llvm_version_info))})",
        "revmlir src": source_digest(),
    }


def source_digest() -> str:
    """sha256 of revmlir/**/*.py (paths and contents): which code was measured."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((ROOT / "revmlir").rglob("*.py")):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return f"sha256:{digest.hexdigest()[:16]} over revmlir/**/*.py"


def _host_cpu_name(llvm: Any) -> str:
    try:
        llvm.initialize_native_target()
        return llvm.get_host_cpu_name()
    except Exception:  # noqa: BLE001 - informational only
        return "?"


def print_header(title: str, what: str) -> None:
    print("=" * 78)
    print(title)
    print("-" * 78)
    print(what.strip())
    print("-" * 78)
    for key, value in machine_info().items():
        print(f"{key:>14}: {value}")
    print(
        f"{'command':>14}: {Path(sys.executable).relative_to(ROOT) if _under_root(sys.executable) else sys.executable} "
        f"{' '.join(_script_args())}"
    )
    print("=" * 78)


def _under_root(path: str) -> bool:
    try:
        Path(path).relative_to(ROOT)
        return True
    except ValueError:
        return False


def _script_args() -> list[str]:
    args = list(sys.argv)
    if args and _under_root(str(Path(args[0]).resolve())):
        args[0] = str(Path(args[0]).resolve().relative_to(ROOT))
    return args


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------


@dataclass
class Timing:
    name: str
    samples: list[float]  # seconds per call, one per round
    number: int  # calls per sample

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def low(self) -> float:
        return min(self.samples)

    @property
    def high(self) -> float:
        return max(self.samples)


def measure(
    candidates: dict[str, Callable[[], Any]],
    *,
    repeat: int = 9,
    warmup: int = 2,
    min_sample_s: float = 0.02,
    max_number: int = 100_000,
) -> dict[str, Timing]:
    """Median per-call time of each zero-argument callable, sampled
    round-robin (see the module docstring)."""
    assert repeat >= 7, "report medians of at least 7 samples"
    numbers: dict[str, int] = {}
    for name, fn in candidates.items():
        for _ in range(warmup):
            fn()
        once = math.inf
        for _ in range(3):
            start = time.perf_counter()
            fn()
            once = min(once, time.perf_counter() - start)
            if once > 0.05:
                break
        once = max(once, 1e-7)
        numbers[name] = max(1, min(max_number, math.ceil(min_sample_s / once)))
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    names = list(candidates)
    for round_ in range(repeat):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            fn, number = candidates[name], numbers[name]
            gc.disable()
            try:
                start = time.perf_counter()
                for _ in range(number):
                    fn()
                elapsed = time.perf_counter() - start
            finally:
                gc.enable()
            samples[name].append(elapsed / number)
    return {name: Timing(name, samples[name], numbers[name]) for name in names}


def peak_alloc(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated through Python's allocators (numpy included)
    during one call, measured with tracemalloc (native stack and LLVM
    allocations are invisible to it)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return max(0, peak - base)


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def fmt_time(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e9:.1f} ns"


def fmt_bytes(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.1f} KiB"
    return f"{n} B"


def report(
    title: str,
    timings: dict[str, Timing],
    baselines: Sequence[str],
    memory: dict[str, int] | None = None,
    per: tuple[str, float] | None = None,
) -> None:
    """One table: median, spread, ratio to each baseline (ours / baseline:
    > 1 means slower than the baseline), peak memory of one call.  ``per``
    = (unit, count) adds a column of median time per unit."""
    print(f"\n## {title}")
    head = f"{'candidate':<34} {'median':>11} {'min … max':>23}"
    if per:
        head += f" {'per ' + per[0]:>11}"
    for b in baselines:
        head += f" {'÷ ' + b:>14}"
    if memory is not None:
        head += f" {'peak alloc':>11}"
    print(head)
    print("-" * len(head))
    for name, t in timings.items():
        line = f"{name:<34} {fmt_time(t.median):>11} {fmt_time(t.low) + ' … ' + fmt_time(t.high):>23}"
        if per:
            line += f" {fmt_time(t.median / per[1]):>11}"
        for b in baselines:
            line += f" {t.median / timings[b].median:>13.2f}×"
        if memory is not None:
            line += f" {fmt_bytes(memory[name]) if name in memory else '':>11}"
        print(line)
    print(
        f"(median of {len(next(iter(timings.values())).samples)} round-robin samples; "
        f"calls per sample: {', '.join(f'{k}={t.number}' for k, t in timings.items())})"
    )


def verdict(ours: Timing, base: Timing, target: float) -> str:
    """' 1.07× (min 1.02×) vs ≤ 1.2× → met': the ratio of medians decides;
    the ratio of the fastest samples is shown as a noise-robust cross-check."""
    ratio = ours.median / base.median
    best = ours.low / base.low
    ok = "met" if ratio <= target else "NOT met"
    return f" {ratio:5.2f}× (min {best:5.2f}×) vs ≤ {target:.1f}× → {ok}"


# --------------------------------------------------------------------------
# Calling compiled code directly
# --------------------------------------------------------------------------


class DirectCall:
    """The machine code of a compiled specialization, called with
    pre-marshalled arguments.

    ``f(*args)`` converts every argument on every call (type signature,
    ctypes storage, error slot, results); this object does that once, so a
    call is one ctypes call plus a read of the error slot — the cost of the
    generated code itself.  It uses the ABI documented in
    ``revmlir/lowering/std_to_llvm.py``: ``@<name>_ciface(ptr)`` takes an
    array of pointers to each argument's storage (a scalar, two doubles for a
    complex, ``{ptr, i64 sizes…}`` for an array) and to the error slot.
    Scalars live in ctypes storage and are updated in place by each call
    (like a C caller's variables); arrays are the caller's numpy arrays.  A
    failed run-time check raises the same ``InvertibilityError`` as
    ``f(*args)`` would.
    """

    def __init__(self, native: Any, name: str, args: Sequence[Any], backward: bool = False):
        from xdsl.dialects.builtin import (
            ComplexType,
            Float64Type,
            IndexType,
            IntegerType,
            MemRefType,
        )

        from revmlir.naming import inverse_name

        func = native.function(name)
        types = list(func.function_type.inputs.data)
        assert len(types) == len(args)
        self._storage: list[Any] = []
        for type, value in zip(types, args):
            if isinstance(type, MemRefType):
                assert isinstance(value, np.ndarray) and value.flags["C_CONTIGUOUS"]
                self._storage.append(_array_descriptor(value))
            elif isinstance(type, ComplexType):
                self._storage.append((ctypes.c_double * 2)(complex(value).real, complex(value).imag))
            elif isinstance(type, Float64Type):
                self._storage.append(ctypes.c_double(float(value)))
            elif isinstance(type, IndexType) or (isinstance(type, IntegerType) and type.width.data == 64):
                self._storage.append(ctypes.c_int64(int(value)))
            elif isinstance(type, IntegerType) and type.width.data == 1:
                self._storage.append(ctypes.c_bool(bool(value)))
            else:
                raise TypeError(f"DirectCall does not handle {type}")
        self._arrays = [a for a in args if isinstance(a, np.ndarray)]  # keep alive
        self.error = np.zeros(_error_slot_size(), dtype=np.int64)
        self._error_descriptor = _array_descriptor(self.error)
        self._slots = (ctypes.c_void_p * (len(self._storage) + 1))(
            *[ctypes.addressof(s) for s in self._storage], ctypes.addressof(self._error_descriptor)
        )
        symbol = (inverse_name(name) if backward else name) + "_ciface"
        code = native.holding(name, backward)  # an inverse is in the backward compile
        self._entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(code.machine_code.address(symbol))
        self._pointer = ctypes.addressof(self._slots)
        self._native = code

    def __call__(self) -> None:
        self._entry(self._pointer)
        if self.error[0]:
            from revmlir.runtime_checks import check_error_slot

            check_error_slot(self._native.check_table, self.error.tolist())

    def scalars(self) -> list[Any]:
        out: list[Any] = []
        for s in self._storage:
            if hasattr(s, "value"):
                out.append(s.value)
            elif isinstance(s, ctypes.Array) and s._type_ is ctypes.c_double:
                out.append(complex(s[0], s[1]))
        return out


def _array_descriptor(array: np.ndarray) -> Any:
    return (ctypes.c_int64 * (1 + array.ndim))(array.ctypes.data, *array.shape)


def _error_slot_size() -> int:
    try:
        from revmlir.runtime_checks import ERROR_SLOT

        return ERROR_SLOT.get_shape()[0]
    except ImportError:  # pragma: no cover
        return 3


def direct(function: Any, args: Sequence[Any], backward: bool = False) -> DirectCall:
    """``DirectCall`` for ``function``'s specialization for ``args``."""
    spec = function.specialization_for(*args)
    if spec.native is None:
        raise RuntimeError(f"{function.__name__} did not compile to native code")
    return DirectCall(spec.native, spec.name, args, backward)


# --------------------------------------------------------------------------
# LLVM IR inspection
# --------------------------------------------------------------------------


def optimized_ir(llvm_ir: str) -> str:
    """The module after the same -O3 pipeline the JIT runs."""
    from revmlir.runtime.jit import host_target_machine, optimize

    return str(optimize(llvm_ir, host_target_machine(3), 3))


def compiled_ir(native: Any, name: str) -> str:
    """The LLVM IR, before -O3, of the compile of ``native`` that holds
    ``@name``: an inverse's is the backward compile's."""
    from revmlir.naming import INVERSE_SUFFIX, inverse_name

    backward = name.endswith(INVERSE_SUFFIX)
    return native.holding(inverse_name(name) if backward else name, backward).llvm_ir


def function_body(ir: str, name: str) -> str:
    """The text of ``define … @name(…) { … }`` in an LLVM module."""
    lines = ir.splitlines()
    out: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("define") and (f"@{name}(" in line or f'@"{name}"(' in line):
            inside = True
        if inside:
            out.append(line)
            if line.startswith("}"):
                break
    return "\n".join(out)


def count_calls(body: str, callee: str) -> int:
    return sum(1 for line in body.splitlines() if "call" in line and (f"@{callee}(" in line or f'@"{callee}"(' in line))


def has_vector_ops(body: str) -> bool:
    return "<2 x double>" in body or "<4 x double>" in body or "<8 x double>" in body
