"""GPU kernels (``rv.cuda.kernel``) against CuPy, JAX and one CPU core, on
an NVIDIA GPU (issue 19's targets).

Cases (n elements or observations):

* elementwise: ``y += log(x)·sin(x)`` and the complex log (routine form),
  with their gradients (``rv.adjoint``), 10⁷ elements; against CuPy
  ElementwiseKernels of the same math, and as a fraction of the measured
  device-to-device copy bandwidth (bytes: each array argument read once,
  and each array whose contents a call changes written once; the complex
  log's routine form writes ``x`` and restores it, which is no traffic a
  kernel needs);
* BA Jacobian blocks (``examples/python/gpu_ba.py``), 10⁶ and 10⁷
  observations; against JAX ``jit(vmap(jacrev))`` of the reprojection error
  plus ``vmap(grad)`` of the weight error, on gathered inputs;
* a graph-embedding batch (``gpu_graph_embedding.py``): the distances of
  10⁶ vertex pairs of a 10⁴-vertex embedding in 8 dimensions, one pair a
  thread, and their gradient with respect to the embedding (pairs share
  vertices: the adjoint kernel's accumulations are atomic); the forward and
  adjoint kernels on device arrays against JAX ``jit(value_and_grad)`` of
  the summed distances, in float64;
* GMM gradient on the ADBench 10k files (``gpu_gmm.py``): the two point
  kernels alone (forward and adjoint, device arrays) and the whole
  ``gmm_gradient`` (with its small CPU parts and copies); against JAX
  ``jit(value_and_grad)`` in float64;
* a stack of floats and an ancilla array per thread, 10⁶ threads, against
  the same function natively on one CPU core;
* source to PTX for the BA kernel (a fresh function: parsing, rev IR,
  adjoints, lowering, LLVM, PTX), on the CPU, each way in fresh processes:
  uncached (``REVMLIR_CACHE=0``) the first compile of a process (cold) and
  the CPU-time median of fresh functions compiled after it (warm process);
  the first compile into an empty disk cache; and cached, a fresh process
  that compiles what an earlier one stored (the frontend, then the program
  loaded), labelled as such: it is not a compile time.

GPU times are CUDA-event medians around ``inner`` launches queued on one
stream (ours with ``stream=``, CuPy in the same stream); JAX, whose streams
are its own, is timed by the wall clock around ``inner`` calls and one
``block_until_ready``.  CPU times are wall-clock medians of native calls.
Every case first checks the GPU's results against the CPU's.

Run (on a machine with a GPU, CuPy and JAX; ``--cases ptx`` alone needs
none of them):
    python benchmarks/bench_gpu.py --out DIR [--quick] [--cases elementwise,BA,memory,graph,ptx,GMM]
It prints progress and writes DIR/bench_gpu.md and DIR/bench_gpu.json after
every case; ``--cases`` runs only the cases named (default: all, GMM last).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "python"))

import revmlir as rv

ROWS: list[dict[str, Any]] = []
CASES = ("elementwise", "BA", "memory", "graph", "ptx", "GMM")
"""The cases, in the order they run: GMM, the slowest to set up, last, so
that the others' numbers are written first."""
STARTED = time.perf_counter()


def progress(message: str) -> None:
    print(f"[{time.perf_counter() - STARTED:6.1f} s] {message}", flush=True)


def record(case: str, candidate: str, ms: float | None, **extra: Any) -> None:
    ROWS.append({"case": case, "candidate": candidate, "ms": ms, **extra})
    shown = "–" if ms is None else f"{ms:.4g} ms"
    notes = ", ".join(f"{k} {v}" for k, v in extra.items())
    progress(f"{case} | {candidate}: {shown}" + (f" ({notes})" if notes else ""))


# -- timing -------------------------------------------------------------------


def gpu_ms(cp: Any, stream: Any, launch: Callable[[], Any], repeat: int, inner: int) -> float:
    """The CUDA-event median per launch of ``inner`` launches on ``stream``."""
    launch()
    rv.cuda.synchronize()
    stream.synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    samples = []
    for _ in range(repeat):
        start.record(stream)
        for _ in range(inner):
            launch()
        end.record(stream)
        end.synchronize()
        rv.cuda.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end) / inner)
    return statistics.median(samples)


def wall_ms(call: Callable[[], Any], repeat: int, inner: int = 1, finish: Callable[[Any], Any] = lambda r: r) -> float:
    finish(call())
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            result = call()
        finish(result)
        samples.append((time.perf_counter() - t) * 1e3 / inner)
    return statistics.median(samples)


def copy_bandwidth(cp: Any, stream: Any, nbytes: int, repeat: int) -> float:
    """Bytes per second of a device-to-device copy, reads and writes counted."""
    src, dst = cp.ones(nbytes // 8), cp.empty(nbytes // 8)
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    copy = partial(cp.cuda.runtime.memcpyAsync, dst.data.ptr, src.data.ptr, nbytes, kind, stream.ptr)
    ms = gpu_ms(cp, stream, copy, repeat, 5)
    return 2 * nbytes / (ms * 1e-3)


# -- cases ----------------------------------------------------------------------


def elementwise(cp: Any, stream: Any, n: int, repeat: int, bandwidth: float) -> None:
    import gpu_elementwise as ex

    rng = np.random.default_rng(0)
    x = cp.asarray(rng.uniform(0.1, 10.0, n))
    z = cp.asarray(rng.uniform(0.1, 10.0, n) * np.exp(1j * rng.uniform(-3.0, 3.0, n)))
    cupy_kernels = {
        "log_sin": cp.ElementwiseKernel("float64 x", "float64 y", "y += log(x) * sin(x)", "log_sin"),
        "log_sin gradient": cp.ElementwiseKernel(
            "float64 x, float64 gy",
            "float64 y, float64 gx",
            "y -= log(x) * sin(x); gx += gy * (sin(x) / x + log(x) * cos(x))",
            "log_sin_adj",
        ),
        "complex log": cp.ElementwiseKernel("complex128 x", "complex128 y", "y += log(x)", "clog"),
        "complex log gradient": cp.ElementwiseKernel(
            "complex128 x, complex128 gy",
            "complex128 y, complex128 gx",
            "y -= log(x); gx += gy / conj(x)",
            "clog_adj",
        ),
    }
    cases = {
        "log_sin": (ex.log_sin, lambda: (cp.zeros(n), x), lambda a: (a[1], a[0])),
        "log_sin gradient": (
            rv.adjoint(ex.log_sin),
            lambda: (cp.zeros(n), x, cp.ones(n), cp.zeros(n)),
            lambda a: (a[1], a[2], a[0], a[3]),
        ),
        "complex log": (ex.complex_log, lambda: (cp.zeros(n, complex), z), lambda a: (a[1], a[0])),
        "complex log gradient": (
            rv.adjoint(ex.complex_log),
            lambda: (cp.zeros(n, complex), z, cp.ones(n, complex), cp.zeros(n, complex)),
            lambda a: (a[1], a[2], a[0], a[3]),
        ),
    }
    for name, (function, make, cupy_order) in cases.items():
        case = f"{name}, n = {n:.0e}"
        ours, theirs = make(), make()
        kernel = rv.cuda.kernel(function)
        kernel(*ours)
        cupy_kernels[name](*cupy_order(theirs))
        assert all(cp.allclose(a, b, rtol=1e-10, atol=1e-12) for a, b in zip(ours, theirs)), name
        nbytes = traffic(make(), lambda *a: kernel(*a))
        ms = gpu_ms(cp, stream, lambda: kernel(*ours, stream=stream), repeat, 10)
        record(case, "ours (GPU)", ms, bandwidth=f"{nbytes / (ms * 1e-3) / bandwidth:.0%} of copy")
        with stream:
            ms = gpu_ms(cp, stream, lambda: cupy_kernels[name](*cupy_order(theirs)), repeat, 10)
        record(case, "CuPy ElementwiseKernel", ms, bandwidth=f"{nbytes / (ms * 1e-3) / bandwidth:.0%} of copy")
        host = [cp.asnumpy(a) for a in make()]
        record(case, "ours (CPU, one core)", wall_ms(lambda: function(*host), max(3, repeat // 4)))


def traffic(arrays: list[Any], call: Callable[..., Any]) -> int:
    """The bytes a call must move at least: every array read once, and
    every array whose contents it changes written once (an array written and
    restored, as the complex log's routine form does with ``x``, counts as
    read only)."""
    before = [a.copy() for a in arrays]
    call(*arrays)
    changed = [not bool((a == b).all()) for a, b in zip(arrays, before)]
    return sum(a.nbytes * (2 if c else 1) for a, c in zip(arrays, changed))


def ba(cp: Any, stream: Any, sizes: list[int], repeat: int) -> None:
    import jax
    import jax.numpy as jnp

    from adbench_data import read_ba
    from array_references import reproj_reference
    from gpu_ba import ba_jacobian_blocks, with_observations

    jacobian = jax.jit(jax.vmap(jax.jacrev(partial(reproj_reference, jnp), argnums=(0, 1, 2))))
    weight_jacobian = jax.jit(jax.vmap(jax.grad(lambda w: 1.0 - w * w)))
    base = read_ba("ba/ba1_n49_m7776_p31843.txt")
    kernel = rv.cuda.kernel(ba_jacobian_blocks)
    resources(kernel, "BA Jacobian-blocks kernel", base)
    # the kernel is latency-bound at one block per multiprocessor: fewer
    # registers (more threads) and no checks, each measured beside it
    unchecked = rv.reversible(ba_jacobian_blocks.pyfunc, checks=False)
    variants = {
        **{f"ours (GPU), max_registers={r}": rv.cuda.kernel(ba_jacobian_blocks, max_registers=r) for r in (128, 96)},
        "ours (GPU), checks off": rv.cuda.kernel(unchecked),
        "ours (GPU), checks off, max_registers=128": rv.cuda.kernel(unchecked, max_registers=128),
    }
    for p in sizes:
        case = f"BA Jacobian blocks, {p:.0e} observations"
        problem = with_observations(base, p)
        inputs = [cp.asarray(a) for a in (problem.cams, problem.X, problem.w, problem.obs, problem.feats)]
        J, wJ = cp.zeros((p, 2, 15)), cp.zeros(p)
        kernel(J, wJ, *inputs)
        gathered = [
            jnp.asarray(a)
            for a in (problem.cams[problem.obs[:, 0]], problem.X[problem.obs[:, 1]], problem.w, problem.feats)
        ]
        blocks = jacobian(*gathered)
        reference = np.concatenate([blocks[0], blocks[1], np.asarray(blocks[2])[..., None]], axis=-1)
        assert np.allclose(cp.asnumpy(J), reference, rtol=1e-9, atol=1e-9 * np.abs(reference).max())
        assert np.allclose(cp.asnumpy(wJ), weight_jacobian(gathered[2]))
        del blocks, reference

        def ours(kernel: Any = kernel) -> None:
            J.fill(0.0)  # the blocks are swapped in: they start at zero
            wJ.fill(0.0)
            kernel(J, wJ, *inputs, stream=stream)

        with stream:
            record(case, "ours (GPU)", gpu_ms(cp, stream, ours, repeat, 3))
            expected = cp.asnumpy(J)
            for label, variant in variants.items():
                ours(variant)
                rv.cuda.synchronize()
                assert np.allclose(cp.asnumpy(J), expected, rtol=1e-12)
                record(case, label, gpu_ms(cp, stream, partial(ours, variant), repeat, 3))
        record(
            case,
            "JAX jit(vmap(jacrev)) (GPU)",
            wall_ms(
                lambda: (jacobian(*gathered), weight_jacobian(gathered[2])),
                repeat,
                3,
                jax.block_until_ready,
            ),
        )


def resources(kernel: Any, case: str, base: Any) -> None:
    """What ptxas reports for the BA kernel for sm_90: registers (they bound
    occupancy), local memory (its stack frame) and spills."""
    from revmlir.gpu.cache import resource_usage

    args = (np.zeros((1, 2, 15)), np.zeros(1), base.cams, base.X, base.w[:1], base.obs[:1], base.feats[:1])
    compiled = kernel.specialise(*args)
    info = compiled.program.kernels[compiled.name]
    usage = resource_usage(compiled.program.ptx, "sm_90")[info.entry]
    record(
        case,
        "ptxas -v, sm_90",
        None,
        registers=usage.registers,
        stack_frame=f"{usage.stack_frame} B",
        spills=f"{usage.spill_stores} B stored, {usage.spill_loads} B loaded",
        arena=info.arena,
    )


def gmm(cp: Any, stream: Any, files: list[str], repeat: int) -> None:
    import jax
    import jax.numpy as jnp

    from adbench_data import read_gmm
    from array_references import gmm_reference
    from gpu_elementwise import run
    from gpu_gmm import gmm_gradient, gmm_points

    value_and_grad = jax.jit(jax.value_and_grad(partial(gmm_reference, jnp), argnums=(0, 1, 2)), static_argnums=(5,))
    forward, adjoint = rv.cuda.kernel(gmm_points), rv.cuda.kernel(rv.adjoint(gmm_points))
    for name in files:
        case = f"GMM gradient, {name}"
        problem = read_gmm(name)
        args = (problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m)
        value, gradient = gmm_gradient(*args, run=run)
        jax_args = (*(jnp.asarray(a) for a in args[:4]), problem.gamma, problem.m)
        jax_value, jax_gradient = value_and_grad(*jax_args)
        assert math.isclose(value, float(jax_value), rel_tol=1e-9)
        for ours, theirs in zip(gradient, jax_gradient):
            assert np.allclose(ours, theirs, rtol=1e-8, atol=1e-9 * np.abs(theirs).max())
        (k, d), n = problem.means.shape, problem.x.shape[0]
        qdiags, sum_qs = cp.asarray(np.exp(problem.icf[:, :d])), cp.asarray(problem.icf[:, :d].sum(axis=1))
        device = [cp.asarray(a) for a in args[:4]]
        point_err = cp.zeros(n)
        gradients = [
            cp.ones(n),
            cp.zeros(k),
            cp.zeros((k, d)),
            cp.zeros(problem.icf.shape),
            cp.zeros((n, d)),
            cp.zeros((k, d)),
            cp.zeros(k),
        ]

        def kernels() -> None:
            forward(point_err, *device, qdiags, sum_qs, stream=stream)
            adjoint(point_err, *device, qdiags, sum_qs, *gradients, stream=stream)

        with stream:
            record(case, "ours: point kernels, forward + adjoint (GPU)", gpu_ms(cp, stream, kernels, repeat, 5))
        # the whole gradient as a user calls it: numpy in and out, the kernels
        # made by gpu_elementwise.run at every call (compiled at the first
        # file's check above, then cached); few repeats, each is a few launches
        # with their copies
        record(
            case,
            "ours: gmm_gradient, with its CPU parts",
            wall_ms(
                lambda: gmm_gradient(*args, run=run),
                max(3, repeat // 4),
            ),
        )
        record(
            case,
            "JAX jit(value_and_grad), float64 (GPU)",
            wall_ms(
                lambda: value_and_grad(*jax_args),
                repeat,
                5,
                jax.block_until_ready,
            ),
        )


@rv.reversible
def ancilla_array_per_thread(y, x, m: int):
    """Each thread fills an ancilla array of ``m`` entries, adds them up,
    and uncomputes it."""
    for i in rv.prange(len(y)):
        with rv.routine() as r:
            a = rv.zeros(m)
            for j in range(m):
                a[j] += x[i] * j
        for j in range(m):
            y[i] += a[j]
        ~r


@rv.reversible
def stack_per_thread(y, x, m: int):
    """Each thread pushes ``m`` floats on a stack of its own and pops them."""
    for i in rv.prange(len(y)):
        s = rv.stack(float)
        for j in range(m):
            v = rv.ancilla(x[i] + j)
            rv.push(s, v)
        for j in range(m):
            v = rv.pop(s)
            y[i] += v
            rv.free(v, x[i] + (m - 1 - j))
        rv.free(s)


def per_thread_memory(cp: Any, stream: Any, n: int, m: int, repeat: int) -> None:
    x = np.random.default_rng(0).uniform(0.0, 1.0, n)
    for function in (ancilla_array_per_thread, stack_per_thread):
        case = f"{function.__name__}, {n:.0e} threads × {m}"
        y_cpu = np.zeros(n)
        cpu = wall_ms(lambda: function(y_cpu, x, m), max(3, repeat // 4))
        record(case, "ours (CPU, one core)", cpu)
        kernel = rv.cuda.kernel(function)
        y, x_device = cp.zeros(n), cp.asarray(x)
        try:
            kernel(y, x_device, m)
        except Exception as error:  # a kernel the device cannot run: its row says why
            record(case, "ours (GPU)", None, unsupported=str(error).splitlines()[0][:200])
            continue
        expected = np.zeros(n)
        function(expected, x, m)
        assert cp.allclose(y, cp.asarray(expected), rtol=1e-12)
        ms = gpu_ms(cp, stream, lambda: kernel(y, x_device, m, stream=stream), repeat, 3)
        record(case, "ours (GPU)", ms, speedup=f"{cpu / ms:.0f}× one CPU core")


def graph_embedding(cp: Any, stream: Any, pairs: int, repeat: int) -> None:
    import jax
    import jax.numpy as jnp

    from gpu_graph_embedding import batch_distances, random_batch

    case = f"graph embedding, {pairs:.0e} pairs, 10⁴ vertices, k = 8"
    x_host, pairs_host = random_batch(10_000, 8, pairs)
    first, second = jnp.asarray(pairs_host[:, 0]), jnp.asarray(pairs_host[:, 1])
    value_and_grad = jax.jit(jax.value_and_grad(lambda x: jnp.sum(jnp.linalg.norm(x[first] - x[second], axis=1))))
    x_jax = jnp.asarray(x_host)
    value, gradient = value_and_grad(x_jax)
    forward, adjoint = rv.cuda.kernel(batch_distances), rv.cuda.kernel(rv.adjoint(batch_distances))
    x, index = cp.asarray(x_host), cp.asarray(pairs_host)
    dist, g_dist, g_x = cp.zeros(pairs), cp.ones(pairs), cp.zeros_like(x)
    forward(dist, x, index)
    assert math.isclose(float(cp.sum(dist)), float(value), rel_tol=1e-12)
    adjoint(dist, x, index, g_dist, g_x)  # uncomputes dist
    assert float(cp.max(cp.abs(dist))) == 0.0
    assert np.allclose(cp.asnumpy(g_x), np.asarray(gradient), rtol=1e-10, atol=1e-12)

    def kernels() -> None:
        forward(dist, x, index, stream=stream)
        adjoint(dist, x, index, g_dist, g_x, stream=stream)

    with stream:
        record(case, "ours: forward + adjoint kernels (GPU)", gpu_ms(cp, stream, kernels, repeat, 5))
    record(
        case,
        "JAX jit(value_and_grad), float64 (GPU)",
        wall_ms(lambda: value_and_grad(x_jax), repeat, 5, jax.block_until_ready),
    )


PTX_CASE = "source to PTX, BA kernel"


def ptx_compiles(repeat: int) -> dict[str, Any]:
    """In this process: the BA kernel compiled from a fresh function (the
    frontend's parsing, rev IR and adjoints, then ``compile_kernels``:
    lowering, LLVM, PTX; or the frontend and the disk cache's entry), 1 +
    ``repeat`` times.  Each compile's CPU time (the process's, so that
    other programs on the machine weigh less) and wall time in ms and how
    many modules the GPU compiler lowered for it (0: the program came from
    the cache), and the PTX's SHA-256.  The first compile's time includes importing
    the kernel compiler, as a process's first compile does."""
    from adbench_data import read_ba
    from gpu_ba import ba_jacobian_blocks

    cpu, wall = time.process_time(), time.perf_counter()
    from revmlir.gpu import program  # to count its lowerings; imported at the first compile otherwise

    imported = ((time.process_time() - cpu) * 1e3, (time.perf_counter() - wall) * 1e3)
    problem = read_ba("ba/ba1_n49_m7776_p31843.txt")
    args = (
        np.zeros((1, 2, 15)),
        np.zeros(1),
        problem.cams,
        problem.X,
        problem.w[:1],
        problem.obs[:1],
        problem.feats[:1],
    )
    lowered = 0
    lower = program.lower_kernels

    def counted(*arguments: Any, **options: Any) -> Any:
        nonlocal lowered
        lowered += 1
        return lower(*arguments, **options)

    program.lower_kernels = counted
    samples, digests = [], set()
    for _ in range(1 + repeat):
        cpu, wall, before = time.process_time(), time.perf_counter(), lowered
        fresh = rv.reversible(ba_jacobian_blocks.pyfunc, backend="interpreter")
        ptx = rv.cuda.kernel(fresh).compile(*args).ptx
        samples.append(((time.process_time() - cpu) * 1e3, (time.perf_counter() - wall) * 1e3, lowered - before))
        digests.add(hashlib.sha256(ptx.encode()).hexdigest())
    (digest,) = digests
    samples[0] = (samples[0][0] + imported[0], samples[0][1] + imported[1], samples[0][2])
    return {"samples": samples, "ptx": digest}


def fresh_process(repeat: int, environment: dict[str, str]) -> dict[str, Any]:
    """``ptx_compiles`` in a new Python process with ``environment`` added
    to this one's."""
    code = (
        f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_gpu; "
        f"print(json.dumps(bench_gpu.ptx_compiles({repeat})))"
    )
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **environment}, capture_output=True, text=True, check=True
    )
    return {**json.loads(done.stdout.splitlines()[-1]), "load": load}


def source_to_ptx(repeat: int) -> None:
    """The BA kernel from source to PTX on the CPU, each way in fresh
    processes (imports of the kernel compiler included in a process's first
    compile), and the disk cache (``revmlir.gpu.cache``) told apart:

    * uncached: ``REVMLIR_CACHE=0``, the process's first compile (cold),
      then the median of ``repeat`` fresh functions after it (warm process);
    * into an empty cache: the first compile with a cache, which compiles
      and stores (what the cache adds to a miss);
    * cached: ``repeat`` fresh processes compiling the same kernel with
      that cache (the frontend, then the stored program loaded: no
      lowering, LLVM or NVPTX), the median of their first compiles.

    Every compile must give the same PTX, and the cached ones must lower
    nothing: a cached number is never a compile time."""

    def recorded(candidate: str, runs: list[dict[str, Any]], samples: list[list[float]]) -> None:
        cpu = [c for c, _, _ in samples]
        record(
            PTX_CASE,
            candidate,
            statistics.median(cpu),
            wall=f"{statistics.median(w for _, w, _ in samples):.4g} ms",
            range=f"{min(cpu):.4g}–{max(cpu):.4g} ms" if len(samples) > 1 else "–",
            lowered=f"{sum(n for _, _, n in samples)} of {len(samples)} compiles",
            load=", ".join(f"{r['load']:.1f}" for r in runs),
        )

    with tempfile.TemporaryDirectory() as home:
        uncached = fresh_process(repeat, {"REVMLIR_CACHE": "0"})
        recorded("ours, uncached cold: cache off, a fresh process (CPU time)", [uncached], uncached["samples"][:1])
        recorded("ours, uncached warm process: cache off (CPU time)", [uncached], uncached["samples"][1:])
        stored = fresh_process(0, {"XDG_CACHE_HOME": home})
        recorded(
            "ours, into an empty cache: compiled and stored, a fresh process (CPU time)", [stored], stored["samples"]
        )
        cached = [fresh_process(0, {"XDG_CACHE_HOME": home}) for _ in range(repeat)]
        recorded(
            "ours, cached: the frontend and the stored program, a fresh process (CPU time; not a compile time)",
            cached,
            [run["samples"][0] for run in cached],
        )
    assert {run["ptx"] for run in (uncached, stored, *cached)} == {uncached["ptx"]}, "the PTX differs"
    lowered = [[n for _, _, n in run["samples"]] for run in (uncached, stored, *cached)]
    assert lowered == [[1] * (1 + repeat), [1], *[[0]] * repeat], f"not a compile, or not cached: {lowered}"


# -- the report -------------------------------------------------------------------


def write(out: Path, device: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_gpu.json").write_text(
        json.dumps({"device": device, "command": " ".join(sys.argv), "rows": ROWS}, indent=1)
    )
    lines = [
        f"GPU: {device}; command: `{' '.join(sys.argv)}`",
        "",
        "| case | candidate | median | notes |",
        "|---|---|---|---|",
    ]
    for row in ROWS:
        notes = ", ".join(f"{k} {v}" for k, v in row.items() if k not in ("case", "candidate", "ms"))
        shown = "–" if row["ms"] is None else f"{row['ms']:.4g} ms"
        lines.append(f"| {row['case']} | {row['candidate']} | {shown} | {notes} |")
    (out / "bench_gpu.md").write_text("\n".join(lines) + "\n")


def parse_cases(text: str) -> list[str]:
    """The cases ``--cases`` names (comma separated, any case), as
    ``CASES`` spells them."""
    known = {c.lower(): c for c in CASES}
    asked = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in asked if c.lower() not in known]
    if unknown or not asked:
        raise argparse.ArgumentTypeError(
            f"unknown case(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(CASES)}"
        )
    return [known[c.lower()] for c in asked]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="directory for bench_gpu.md and bench_gpu.json")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer samples")
    parser.add_argument(
        "--cases",
        type=parse_cases,
        default=list(CASES),
        help=f"comma-separated cases to run, any case (default: {','.join(CASES)})",
    )
    opts = parser.parse_args()
    selected = set(opts.cases)
    if selected == {"ptx"}:
        # compiling needs no GPU: the case runs first in a process of its own
        source_to_ptx(3)
        write(opts.out, "none (source to PTX on the CPU)")
        return
    if not rv.cuda.is_available():
        sys.exit(f"bench_gpu.py needs a GPU: {rv.cuda.unavailable_reason()}")
    import cupy as cp
    import jax

    jax.config.update("jax_enable_x64", True)
    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    progress(f"device: {device}")
    repeat = 5 if opts.quick else 15
    stream = cp.cuda.Stream(non_blocking=True)
    bandwidth = copy_bandwidth(cp, stream, (1 << 28) if opts.quick else (1 << 32), repeat)
    record("device-to-device copy", "cudaMemcpyAsync", None, bandwidth=f"{bandwidth / 1e12:.3f} TB/s")
    cases: dict[str, Callable[[], None]] = {
        "elementwise": lambda: elementwise(cp, stream, 10**6 if opts.quick else 10**7, repeat, bandwidth),
        "BA": lambda: ba(cp, stream, [10**5] if opts.quick else [10**6, 10**7], repeat),
        "memory": lambda: per_thread_memory(cp, stream, 10**5 if opts.quick else 10**6, 16, repeat),
        "graph": lambda: graph_embedding(cp, stream, 10**5 if opts.quick else 10**6, repeat),
        "ptx": lambda: source_to_ptx(3),
        "GMM": lambda: gmm(
            cp,
            stream,
            ["gmm/10k/gmm_d10_K5.txt"]
            if opts.quick
            else ["gmm/10k/gmm_d2_K5.txt", "gmm/10k/gmm_d10_K5.txt", "gmm/10k/gmm_d20_K5.txt"],
            repeat,
        ),
    }
    for name, run in cases.items():
        if name not in selected:
            continue
        progress(f"-- {name}")
        try:
            run()
        except Exception as error:  # one failing case must not hide the others' numbers
            traceback.print_exc()
            record(name, "FAILED", None, error=f"{type(error).__name__}: {str(error).splitlines()[0][:200]}")
        write(opts.out, device)
    progress(f"done; wrote {opts.out / 'bench_gpu.md'} and {opts.out / 'bench_gpu.json'}")


if __name__ == "__main__":
    main()
