"""Kernels launched on a GPU (marked ``gpu``: skipped where no GPU and no
``cuda`` extra are): every example's kernel against the same function run on
the CPU, adjoint kernels against the CPU's gradients, failing checks against
the CPU's located errors, and the array libraries, copies and streams."""

from __future__ import annotations

import importlib
import re
from typing import Any

import numpy as np
import pytest

import revmlir as rv
from gpu_examples import complex_values, examples, positive
from python_examples import load_example
from revmlir.errors import ExecutionError, InvertibilityError
from revmlir.gpu import runtime

pytestmark = pytest.mark.gpu

EX = examples()
elementwise, graph, ba, gmm = EX["elementwise"], EX["graph_embedding"], EX["ba"], EX["gmm"]
data = load_example("adbench_data")


def library(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        pytest.skip(f"needs {name}")


@rv.reversible
def gather(y, x, idx):
    for i in rv.prange(len(y)):
        y[i] += x[idx[i]]


def on_gpu(function: Any, *args: Any) -> None:
    rv.cuda.kernel(function)(*args)


def cpu_and_gpu(function: Any, *args: Any) -> tuple[list[Any], list[Any]]:
    """``function`` run on the CPU and as a kernel, each on its own copies
    of ``args``: the arguments after each run."""
    cpu, gpu = ([a.copy() if isinstance(a, np.ndarray) else a for a in args] for _ in range(2))
    function(*cpu)
    on_gpu(function, *gpu)
    return cpu, gpu


def assert_same(cpu: list[Any], gpu: list[Any], rtol: float) -> None:
    """libdevice's math against glibc's; atomic sums in another order."""
    for c, g in zip(cpu, gpu):
        if isinstance(c, np.ndarray) and c.dtype.kind in "fc":
            np.testing.assert_allclose(g, c, rtol=rtol, atol=rtol * 1e-2 * max(np.abs(c).max(initial=0.0), 1.0))


@pytest.mark.parametrize(
    "name, seeds",
    [
        ("log_sin", lambda x: (np.ones_like(x), np.zeros_like(x))),
        ("complex_log", lambda z: (np.full_like(z, 1 + 0.5j), np.zeros_like(z))),
    ],
)
def test_elementwise_forward_gradient_and_inverse(name: str, seeds: Any) -> None:
    """At trip counts that launch differently (``revmlir.gpu.launch_shape``):
    none (one warp), a few (blocks of 32 over the multiprocessors) and more
    than the device holds at once (one iteration per thread)."""
    function = getattr(elementwise, name)
    for n in (0, 37, 100_003, 1_000_003):
        x = positive(n) if name == "log_sin" else complex_values(n)
        cpu, gpu = cpu_and_gpu(function, np.zeros_like(x), x)
        assert_same(cpu, gpu, 1e-12)
        assert_same(*cpu_and_gpu(rv.adjoint(function), *cpu, *seeds(x)), 1e-12)
        on_gpu(~function, gpu[0], x)
        assert np.allclose(gpu[0], 0.0, atol=1e-12)


def test_batch_distances_and_shared_gradient() -> None:
    x, pairs = graph.random_batch(1000, 8, 200_000)
    cpu, gpu = cpu_and_gpu(graph.batch_distances, np.zeros(len(pairs)), x, pairs)
    assert_same(cpu, gpu, 1e-13)
    assert_same(*cpu_and_gpu(rv.adjoint(graph.batch_distances), *cpu, np.ones(len(pairs)), np.zeros_like(x)), 1e-10)


def test_ba_blocks() -> None:
    problem = ba.with_observations(data.read_ba("ba/ba1_n49_m7776_p31843.txt"), 20_000)
    p = len(problem.w)
    arrays = (np.zeros((p, 2, 15)), np.zeros(p), problem.cams, problem.X, problem.w, problem.obs, problem.feats)
    assert_same(*cpu_and_gpu(ba.ba_jacobian_blocks, *arrays), 1e-11)


def test_gmm_gradient() -> None:
    problem = data.read_gmm("gmm/10k/gmm_d10_K5.txt")
    args = (problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m)
    value, gradient = gmm.gmm_gradient(*args)
    value_gpu, gradient_gpu = gmm.gmm_gradient(*args, run=on_gpu)
    assert value_gpu == pytest.approx(value, rel=1e-11)
    for ours, expected in zip(gradient_gpu, gradient):
        assert np.allclose(ours, expected, rtol=1e-10, atol=1e-11 * np.abs(expected).max())


@pytest.mark.parametrize("cells", ["one", "three", "runs of 40"])
def test_shared_accumulations_aggregated_over_the_warp(cells: str) -> None:
    """The adjoint of a gather adds ``g_y[i]`` into ``g_x[idx[i]]``: into
    one cell from every thread (each full warp sums its 32 values and adds
    once), into cells that differ between neighbouring lanes (each lane
    adds its own), and into runs of one cell that change inside a warp;
    the trip count leaves the last warp partial.  Against numpy."""
    n = 100_003
    idx = {"one": np.zeros(n, np.int64), "three": np.arange(n) % 3, "runs of 40": np.arange(n) // 40 % 7}[cells]
    g_y = np.random.default_rng(5).uniform(0.5, 1.5, n)
    g_x = np.zeros(7)
    on_gpu(rv.adjoint(gather), np.zeros(n), np.ones(7), idx, g_y, g_x)
    expected = np.zeros(7)
    np.add.at(expected, idx, g_y)
    np.testing.assert_allclose(g_x, expected, rtol=1e-10)


@rv.reversible
def window_energy(y, x, m):
    """``y[i] += Σ_j x[(i+j) mod n]²`` over a window of ``m`` elements
    copied into an ``rv.zeros(m)`` of a run-time size."""
    for i in rv.prange(len(y)):
        with rv.routine() as r:
            w = rv.zeros(m)
            for j in range(m):
                w[j] += x[(i + j) % len(x)]
        for j in range(m):
            y[i] += w[j] * w[j]
        ~r


def test_dynamic_ancilla_arrays_in_the_arena_and_its_exhaustion() -> None:
    """An ``rv.zeros`` of a run-time size comes from the per-thread arena:
    exactly as large as one iteration needs (16 f64: 128 bytes) it gives the
    CPU's results on every thread, 16 bytes less per thread is the located
    error of the first thread that ran out, never an illegal address."""
    x = np.random.default_rng(0).normal(size=1000)
    cpu = np.zeros(100_000)
    window_energy(cpu, x, 16)
    kernel = rv.cuda.kernel(window_energy)
    gpu = np.zeros(len(cpu))
    kernel(gpu, x, 16, arena=128)
    assert_same([cpu], [gpu], 1e-13)
    with pytest.raises(
        ExecutionError,
        match=r"test_gpu_kernels.py:\d+:\d+: .* needs 128 bytes of per-thread arena, has 112 .*\(element \d+\)",
    ):
        kernel(np.zeros(len(cpu)), x, 16, arena=112)
    kernel(gpu, x, 16)  # the default arena, and the slot clean again
    kept = dict(runtime.device(0).arenas)
    assert kept  # the stream's arena buffer, kept for its next launches
    kernel(gpu, x, 16)
    assert runtime.device(0).arenas == kept
    rv.cuda.release_arenas()
    assert runtime.device(0).arenas == {}


def test_stacks_in_the_arena_their_checks_and_exhaustion() -> None:
    """Stacks per thread come from the per-thread arena: a stack per thread
    (the benchmark's kernel), one in a callee, two pushed in turn (buffers
    that move), an array freed below a live stack, and the adjoint of a
    kernel with a stack give the CPU's results on 10^5 threads; 16 floats
    need 128 bytes, and 112 is the located error at the push; a stack freed
    holding a value and a pop of an empty stack are the CPU's errors with
    the element."""
    import gpu_stack_kernels as stacks

    n = 100_000
    x = np.random.default_rng(1).uniform(0.5, 1.5, n)
    cases = [
        (stacks.stack_per_thread, (np.zeros(n), x, 16)),
        (stacks.stack_in_callee, (np.zeros(n), x)),
        (stacks.two_stacks, (np.zeros(n), x + 0.5j, x, np.arange(n, dtype=np.int64), 9)),
        (stacks.array_below_stack, (np.zeros(n), x, 3)),
        (rv.adjoint(stacks.stack_per_thread), (np.zeros(n), x, 16, np.ones(n), np.zeros(n))),
    ]
    for function, args in cases:
        assert_same(*cpu_and_gpu(function, *args), 1e-13)
    kernel = rv.cuda.kernel(stacks.stack_per_thread)
    y = np.zeros(n)
    with pytest.raises(
        ExecutionError,
        match=r"gpu_stack_kernels.py:21:13: .* needs 128 bytes of per-thread arena, has 112 \(a stack; .*\(element \d+\)$",
    ):
        kernel(y, x, 16, arena=112)
    assert not y.any()
    kernel(y, x, 16, arena=128)
    for pops in (0, 2):
        with pytest.raises(InvertibilityError) as cpu:
            stacks.unbalanced(np.zeros(n), x, pops)
        with pytest.raises(InvertibilityError) as gpu:
            on_gpu(stacks.unbalanced, np.zeros(n), x, pops)
        assert str(gpu.value).startswith(f"{cpu.value} (element ")


def test_failing_check_raises_the_cpus_error_at_its_element() -> None:
    x, idx = np.ones(10), np.zeros(100_000, dtype=np.int64)
    idx[26_624] = 10
    with pytest.raises(ExecutionError) as cpu:
        gather(np.zeros(len(idx)), x, idx)
    with pytest.raises(ExecutionError) as gpu:
        on_gpu(gather, np.zeros(len(idx)), x, idx)
    assert str(gpu.value) == f"{cpu.value} (element 26624)"
    y = np.zeros(len(idx))
    idx[26_624] = 3
    on_gpu(gather, y, x, idx)  # the slot is clean again
    assert np.all(y == 1.0)


def test_when_every_element_fails_the_report_is_one_threads() -> None:
    """``idx[i] = -(i + 1)``: every thread fails, each reading its own
    index.  The first thread's compare-and-swap takes the slot and the
    others write nothing, so the one report raised is one thread's: the
    index it read belongs to the element it names (the CPU's error for
    that element alone, with the element); the next launch finds the
    slot clean."""
    n, x = 4096, np.ones(4)
    idx = -np.arange(1, n + 1, dtype=np.int64)
    for _ in range(3):
        with pytest.raises(ExecutionError) as gpu:
            on_gpu(gather, np.zeros(n), x, idx)
        found = re.search(r"\(element (\d+)\)$", str(gpu.value))
        assert found is not None, str(gpu.value)
        element = int(found.group(1))
        with pytest.raises(ExecutionError) as cpu:
            gather(np.zeros(n), x, np.where(np.arange(n) == element, idx, 0))
        assert str(gpu.value) == f"{cpu.value} (element {element})"
    y = np.zeros(n)
    on_gpu(gather, y, x, np.zeros(n, dtype=np.int64))
    assert np.all(y == 1.0)


@rv.reversible
def shifted(y, x):
    for i in rv.prange(len(y)):
        y[i] += x[i + 1]


def test_a_versioned_loop_runs_unchecked_in_range_and_checked_past_it() -> None:
    """``y[i] += x[i + 1]``: with ``x`` one longer than ``y`` every index is
    in range at the loop's ends and the threads run the loop without its
    checks (docs/design.md, decision 58); with ``x`` as long as ``y`` they
    run the checked loop, which stops at the CPU's error, at the last
    element."""
    n = 100_000
    cpu, gpu = cpu_and_gpu(shifted, np.zeros(n), positive(n + 1))
    assert np.array_equal(gpu[0], cpu[0]) and np.array_equal(cpu[0], cpu[1][1:])
    with pytest.raises(ExecutionError) as cpu_error:
        shifted(np.zeros(n), positive(n))
    with pytest.raises(ExecutionError) as gpu_error:
        on_gpu(shifted, np.zeros(n), positive(n))
    assert str(gpu_error.value) == f"{cpu_error.value} (element {n - 1})"


def test_cupy_arrays_in_place_and_streams() -> None:
    cp = library("cupy")
    x = cp.asarray(positive(1 << 20))
    y = cp.zeros_like(x)
    assert rv.cuda.kernel(elementwise.log_sin)(y, x)[0] is y
    assert cp.allclose(y, cp.log(x) * cp.sin(x), rtol=1e-12)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        y2 = cp.zeros_like(x)
    rv.cuda.kernel(elementwise.log_sin)(y2, x, stream=stream)
    rv.cuda.synchronize()
    assert cp.array_equal(y2, y)
    x_cpu, idx = np.ones(4), np.zeros(1000, dtype=np.int64)
    idx[777] = -9
    rv.cuda.kernel(gather)(cp.zeros(1000), cp.asarray(x_cpu), cp.asarray(idx), stream=stream)
    with pytest.raises(ExecutionError, match=r"\(element 777\)$"):
        rv.cuda.synchronize()


def test_queued_launches_are_all_waited_for_and_their_slots_serve_again() -> None:
    """Launches queued on two streams, two of them failing: ``synchronize``
    waits for all, raises the error of the first queued failure, and the
    launches around it ran; the slots come back clean (error slots in
    mapped host memory, zeroed when a launch takes them)."""
    cp = library("cupy")
    k, first, second = rv.cuda.kernel(gather), cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    good = np.arange(1000) % 4
    bad, other_bad = good.copy(), good.copy()
    bad[777], other_bad[5] = -9, 4
    x, expected = cp.arange(4.0), cp.asarray(good, dtype=float)
    ys = [cp.zeros(1000) for _ in range(4)]
    indices = [cp.asarray(i) for i in (good, bad, other_bad)]
    cp.cuda.Device().synchronize()  # made on CuPy's stream, which the non-blocking ones do not wait for
    k(ys[0], x, indices[0], stream=first)
    k(ys[1], x, indices[1], stream=first)
    k(ys[2], x, indices[2], stream=second)
    k(ys[3], x, indices[0], stream=first)
    with pytest.raises(ExecutionError, match=r"index -9 is out of bounds .*\(element 777\)$"):
        rv.cuda.synchronize()
    assert cp.array_equal(ys[0], expected) and cp.array_equal(ys[3], expected)
    for y in ys:  # the four slots again, each clean
        k(y, x, indices[0], stream=second)
    rv.cuda.synchronize()
    assert cp.array_equal(ys[0], 2 * expected) and cp.array_equal(ys[3], 2 * expected)
    k(ys[0], x, indices[0])
    assert cp.array_equal(ys[0], 3 * expected)


def test_torch_tensors_in_place() -> None:
    torch = library("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    x = torch.from_numpy(positive(4096)).cuda()
    y = torch.zeros_like(x)
    rv.cuda.kernel(elementwise.log_sin)(y, x, stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    assert torch.allclose(y, torch.log(x) * torch.sin(x))
    # a float32 x specialises the kernel as the CPU would: its math in
    # float32, added into float64 y
    y.zero_()
    rv.cuda.kernel(elementwise.log_sin)(y, x.float())
    torch.cuda.synchronize()
    expected = np.zeros(4096)
    elementwise.log_sin(expected, positive(4096).astype(np.float32))
    assert np.allclose(y.cpu().numpy(), expected, rtol=1e-6, atol=1e-6)
    # an int64 y fails to compile with the CPU's located error
    with pytest.raises(rv.ReversibleSyntaxError) as cpu:
        elementwise.log_sin(np.zeros(4, np.int64), np.ones(4))
    with pytest.raises(rv.ReversibleSyntaxError) as gpu:
        rv.cuda.kernel(elementwise.log_sin)(torch.zeros_like(x, dtype=torch.int64), x)
    assert str(gpu.value) == str(cpu.value)


def test_jax_arrays_are_read_in_place_and_never_written() -> None:
    jax = library("jax")
    cp = library("cupy")
    jax.config.update("jax_enable_x64", True)
    x = jax.device_put(positive(4096), jax.devices("gpu")[0])
    y = cp.zeros(4096)
    rv.cuda.kernel(elementwise.log_sin)(y, x)
    assert np.allclose(cp.asnumpy(y), np.log(positive(4096)) * np.sin(positive(4096)))
    with pytest.raises(ValueError, match="JAX arrays are immutable"):
        rv.cuda.kernel(elementwise.log_sin)(x, cp.asarray(positive(4096)))


class DLPackOnly:
    """A device array that speaks DLPack alone (no CUDA Array Interface)."""

    def __init__(self, array: Any):
        self.array = array

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.array.__dlpack_device__()


def test_dlpack_arrays_in_place() -> None:
    cp = library("cupy")
    x = cp.asarray(positive(1000))
    y = cp.zeros_like(x)
    rv.cuda.kernel(elementwise.log_sin)(DLPackOnly(y), DLPackOnly(x))
    assert cp.allclose(y, cp.log(x) * cp.sin(x), rtol=1e-12)


def test_arrays_on_the_host_are_copied_in_and_back() -> None:
    x = positive(1000)
    y = np.zeros_like(x)
    x_before = x.copy()
    k = rv.cuda.kernel(elementwise.log_sin)
    assert k(y, x)[0] is y
    assert np.allclose(y, np.log(x) * np.sin(x)) and np.array_equal(x, x_before)
    empty = np.zeros(0)
    k(empty, np.zeros(0))  # nothing to run
