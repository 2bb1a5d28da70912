"""The GPU examples on the CPU, where their ``rv.prange`` loops run in
order: against closed forms, numpy, and the sequential programs they
parallelise (``adbench_ba.ba_jacobian``, ``rv.gradient`` of
``adbench_gmm.gmm_objective``).  Their kernels compile to PTX without a
GPU.  ``test_gpu_kernels.py`` runs them on a GPU."""

from __future__ import annotations

import re

import numpy as np
import pytest

import revmlir as rv
from gpu_examples import complex_values, examples, positive
from python_examples import load_example
from revmlir import collector
from revmlir.collector import check_dropped_whole

EX = examples()
elementwise, graph, ba, gmm = EX["elementwise"], EX["graph_embedding"], EX["ba"], EX["gmm"]
data, adbench_ba, adbench_gmm = (load_example(name) for name in ("adbench_data", "adbench_ba", "adbench_gmm"))


def test_log_sin_and_its_gradient() -> None:
    x = positive(1000)
    y = np.zeros_like(x)
    elementwise.log_sin(y, x)
    assert np.allclose(y, np.log(x) * np.sin(x), rtol=1e-14, atol=1e-15)
    g_y, g_x = np.ones_like(x), np.zeros_like(x)
    rv.adjoint(elementwise.log_sin)(y, x, g_y, g_x)
    assert np.allclose(g_x, np.sin(x) / x + np.log(x) * np.cos(x), rtol=1e-13, atol=1e-14)
    assert np.allclose(y, 0.0, atol=1e-14)  # uncomputed


def test_complex_log() -> None:
    z = complex_values(1000)
    w = np.zeros_like(z)
    elementwise.complex_log(w, z)
    assert np.allclose(w, np.log(z), rtol=1e-14, atol=1e-15)


def test_batch_distances_and_their_gradient() -> None:
    x, pairs = graph.random_batch(50, 4, 400)
    dist = np.zeros(len(pairs))
    graph.batch_distances(dist, x, pairs)
    difference = x[pairs[:, 0]] - x[pairs[:, 1]]
    assert np.allclose(dist, np.linalg.norm(difference, axis=1), rtol=1e-14)
    g_x = np.zeros_like(x)
    rv.adjoint(graph.batch_distances)(dist, x, pairs, np.ones(len(pairs)), g_x)
    expected = np.zeros_like(x)
    unit = difference / np.linalg.norm(difference, axis=1)[:, None]
    np.add.at(expected, pairs[:, 0], unit)
    np.add.at(expected, pairs[:, 1], -unit)
    assert np.allclose(g_x, expected, rtol=1e-12, atol=1e-13)


def test_ba_blocks_equal_the_sequential_jacobian() -> None:
    problem = ba.with_observations(data.read_ba("ba/ba1_n49_m7776_p31843.txt"), 300)
    p = len(problem.w)
    J, wJ = np.zeros((p, 2, 15)), np.zeros(p)
    ba.ba_jacobian_blocks(J, wJ, problem.cams, problem.X, problem.w, problem.obs, problem.feats)
    J2, wJ2 = np.zeros_like(J), np.zeros_like(wJ)
    shadows = [np.zeros_like(a) for a in (problem.cams, problem.X, problem.cams, problem.X)]
    adbench_ba.ba_jacobian(J2, wJ2, problem.cams, problem.X, problem.w, problem.obs, problem.feats, *shadows)
    assert np.array_equal(J, J2) and np.array_equal(wJ, wJ2)
    assert np.abs(J).max() > 1.0


def test_gmm_gradient_equals_the_whole_objectives_and_compiles_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``gmm_gradient`` equals ``rv.gradient`` of the whole objective.  It
    makes ``rv.adjoint(…)`` and ``rv.gradient`` of its CPU parts at every
    call, and ``gpu_elementwise.run`` makes ``rv.cuda.kernel(f)`` at every
    call: with a ``run`` that compiles each kernel as a launch does, then
    runs it on the CPU, a second call compiles no kernel and no native
    code, and gives the first's result."""
    from revmlir.gpu import program
    from revmlir.runtime.native import NativeModule

    compiled: list[str] = []
    compile_kernels, native_compile = program.compile_kernels, NativeModule.compile.__func__

    def counting_kernels(module: object, names: list[str], **options: object) -> object:
        compiled.extend(names)
        return compile_kernels(module, names, **options)

    def counting_native(cls: type, *args: object, **options: object) -> object:
        compiled.append("native")
        return native_compile(cls, *args, **options)

    monkeypatch.setattr(program, "compile_kernels", counting_kernels)
    monkeypatch.setattr(NativeModule, "compile", classmethod(counting_native))

    def run(function: object, *args: object) -> object:
        assert rv.cuda.kernel(function).specialise(*args).program.ptx
        return function(*args)

    problem = data.read_gmm("gmm/1k/gmm_d2_K5.txt")
    objective = adbench_gmm.gmm_objective
    args = (0.0, problem.alphas, problem.means, problem.icf, problem.x, problem.gamma, problem.m)
    value, gradient = gmm.gmm_gradient(*args[1:], run=run)
    assert value == pytest.approx(objective(*args)[0], rel=1e-13)
    reference = rv.gradient(objective, args, iloss=0)[1:4]
    for ours, expected in zip(gradient, reference):
        assert np.allclose(ours, expected, rtol=1e-11, atol=1e-12 * np.abs(expected).max())
    first = len(compiled)
    again, gradient_again = gmm.gmm_gradient(*args[1:], run=run)
    assert compiled[first:] == []
    assert again == value and all(np.array_equal(a, b) for a, b in zip(gradient, gradient_again))


def _kernel_cases(only: tuple[str, ...] = ()) -> list[object]:
    x, z = positive(8), complex_values(8)
    xs, pairs = graph.random_batch(6, 3, 8)
    problem = ba.with_observations(data.read_ba("ba/ba1_n49_m7776_p31843.txt"), 4)
    gmm_problem = data.read_gmm("gmm/1k/gmm_d2_K5.txt")
    k, d = gmm_problem.means.shape
    gmm_args = (
        np.zeros(8),
        gmm_problem.alphas,
        gmm_problem.means,
        gmm_problem.icf,
        gmm_problem.x[:8],
        np.ones((k, d)),
        np.zeros(k),
    )
    gmm_gradients = tuple(np.zeros_like(a) for a in gmm_args)
    cases = [
        ("log_sin", elementwise.log_sin, (np.zeros(8), x)),
        ("~log_sin", ~elementwise.log_sin, (np.zeros(8), x)),
        ("log_sin.adj", rv.adjoint(elementwise.log_sin), (np.zeros(8), x, np.ones(8), np.zeros(8))),
        ("complex_log", elementwise.complex_log, (np.zeros_like(z), z)),
        (
            "complex_log.adj",
            rv.adjoint(elementwise.complex_log),
            (np.zeros_like(z), z, np.ones_like(z), np.zeros_like(z)),
        ),
        ("batch_distances", graph.batch_distances, (np.zeros(8), xs, pairs)),
        (
            "batch_distances.adj",
            rv.adjoint(graph.batch_distances),
            (np.zeros(8), xs, pairs, np.ones(8), np.zeros_like(xs)),
        ),
        (
            "ba_jacobian_blocks",
            ba.ba_jacobian_blocks,
            (np.zeros((4, 2, 15)), np.zeros(4), problem.cams, problem.X, problem.w, problem.obs, problem.feats),
        ),
        ("gmm_points", gmm.gmm_points, gmm_args),
        ("gmm_points.adj", rv.adjoint(gmm.gmm_points), gmm_args + gmm_gradients),
    ]
    return [pytest.param(function, args, id=label) for label, function, args in cases if not only or label in only]


COMPILED_ALONE = ("ba_jacobian_blocks",)
"""Kernels whose compilation a test of their own checks further (BA's takes
seconds: it is compiled once)."""


@pytest.mark.parametrize(
    "function, args",
    [c for c in _kernel_cases() if c.id not in COMPILED_ALONE],  # type: ignore[attr-defined]
)
def test_example_kernels_compile_to_ptx(function: object, args: tuple) -> None:
    """Every example's kernel, its gradient kernel (and an inverse) compile
    to PTX without a GPU, and ptxas accepts it where it is installed."""
    from revmlir.gpu.toolkit import emit_cubin, find_ptxas

    compiled = rv.cuda.kernel(function).specialise(*args)
    entry = compiled.program.kernels[compiled.name].entry
    assert f".entry {entry}(" in compiled.program.ptx
    if find_ptxas() is not None:
        assert emit_cubin(compiled.program.ptx, "sm_90")


@pytest.mark.parametrize("function, args", _kernel_cases())
def test_example_kernels_take_apart_only_what_they_drop_whole(
    function: object, args: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every tree a kernel's compile takes apart (the rev functions an owned
    lowering replaces, the modules it drops) is its own: no op outside it
    uses its values (``REVMLIR_CHECK_TAKEN_APART``'s check)."""
    monkeypatch.setenv("REVMLIR_CACHE", "0")
    monkeypatch.setattr(collector, "_CHECK", True)
    # rv.cuda.kernel would hand back a kernel an earlier test compiled
    assert rv.cuda.Kernel(function).specialise(*args).program.ptx


@pytest.mark.parametrize("function, args", [c for c in _kernel_cases() if c.id.endswith(".adj")])  # type: ignore[attr-defined]
def test_example_adjoints_leave_no_op_outside_the_module_using_it(function: object, args: tuple) -> None:
    """The module the adjoint kernels are derived in has no op outside it
    using its values: a loop body's adjoint built again assuming fewer zeros
    erases the round it drops."""
    module, _ = rv.cuda.Kernel(function).rev_module(*args)
    check_dropped_whole(module)


LOOP_LENGTHS = {
    "log_sin": lambda args: len(args[1]),
    "~log_sin": lambda args: len(args[1]),
    "log_sin.adj": lambda args: len(args[1]),
    "complex_log": lambda args: len(args[1]),
    "complex_log.adj": lambda args: len(args[1]),
    "batch_distances": lambda args: len(args[0]),
    "batch_distances.adj": lambda args: len(args[0]),
    "ba_jacobian_blocks": lambda args: args[5].shape[0],
    "gmm_points": lambda args: args[4].shape[0],
    "gmm_points.adj": lambda args: args[4].shape[0],
}
"""Each example kernel's ``rv.prange`` as its source writes it, of the
kernel's arguments."""


@pytest.mark.parametrize(
    "label, function, args",
    [pytest.param(c.id, *c.values, id=c.id) for c in _kernel_cases()],  # type: ignore[attr-defined]
)
def test_example_kernels_record_their_trip_counts(label: str, function: object, args: tuple) -> None:
    """Every example kernel's loop bounds are recorded, and give its
    ``rv.prange``'s length for its arguments and for arrays of other
    lengths, each argument's its own (a count read from the wrong array or
    dimension differs)."""
    compiled = rv.cuda.kernel(function).specialise(*args)
    bounds = compiled.program.kernels[compiled.name].bounds
    assert bounds is not None
    arrays = {i: a for i, a in enumerate(args) if isinstance(a, np.ndarray)}
    assert bounds.trip_count(arrays) == LOOP_LENGTHS[label](args) > 0
    for length in (0, 1, 1000, 10**6):
        resized = [np.empty((length + i, *a.shape[1:])) if isinstance(a, np.ndarray) else a for i, a in enumerate(args)]
        shapes = {i: a for i, a in enumerate(resized) if isinstance(a, np.ndarray)}
        assert bounds.trip_count(shapes) == LOOP_LENGTHS[label](resized)


def test_ba_kernel_keeps_its_arrays_in_registers() -> None:
    """BA's blocks kernel allocates 73 f64 of ancilla arrays per observation
    (``rv.zeros`` of constant sizes: its copies of the camera and point,
    their gradient shadows, the block): they are the thread's own, not the
    per-thread arena's (global memory, each thread's ``arena`` bytes apart),
    and after unrolling LLVM keeps them in registers: the kernel's local
    memory is its error slot, context and the call of the failure report,
    and nothing spills.  The arrays it only reads are loaded through the
    read-only cache (``ld.global.nc``); ``J``, which it swaps blocks into,
    is not."""
    from revmlir.gpu.cache import resource_usage
    from revmlir.gpu.toolkit import find_ptxas

    ((function, args),) = (p.values for p in _kernel_cases(COMPILED_ALONE))
    compiled = rv.cuda.kernel(function).specialise(*args)
    info = compiled.program.kernels[compiled.name]
    assert not info.arena
    entry = compiled.program.ptx.split(f".entry {info.entry}(")[1].split("\n.func")[0]
    assert "ld.local" not in entry
    assert entry.count("ld.global.nc.") >= 14  # the camera's 11 and the point's 3 entries, at least
    assert "ld.global.b64" in entry
    # its rotation, the rotation's inverse and their adjoints call sin and
    # cos ten times each, two to four times in each of these functions:
    # calls of one angle within a function are merged, one sin and one cos
    # left in each (all twenty were inlined, each with the slow reduction,
    # while libdevice's functions were all alwaysinline)
    assert entry.count("call.uni (retval0), __internal_trig_reduction_slowpathd") <= 8
    if find_ptxas() is not None:
        usage = resource_usage(compiled.program.ptx, "sm_90")[info.entry]
        assert usage.spill_stores == usage.spill_loads == 0
        assert usage.stack_frame <= 176 < 73 * 8, usage  # the 48-byte error slot among it


@pytest.mark.parametrize("function, args", _kernel_cases(("log_sin", "log_sin.adj", "complex_log")))
def test_elementwise_kernels_load_before_they_compute(function: object, args: tuple) -> None:
    """An iteration's loads leave together, in program order, before its
    math: ``y[i]`` (read, then written: ``ld.global``) before ``x[i]``
    (read only: ``ld.global.nc``), not sunk past ``x[i]``'s check and the
    logarithm's branches to where the sum needs it, which made two memory
    latencies of each iteration; in the gradient, ``g_x[i]`` too, which the
    adjoint reads where it adds to it, after the logarithm, sine and cosine
    (``revmlir.gpu.load_order``).  A complex element is two loads."""
    compiled = rv.cuda.kernel(function).specialise(*args)
    entry = compiled.program.ptx.split(f".entry {compiled.program.kernels[compiled.name].entry}(")[1]
    entry = entry.split("\n.func")[0]
    first_read_only = re.search(r"ld\.global\.nc\.b64\s", entry)
    assert first_read_only is not None
    assert "ld.global.b64" in entry[: first_read_only.start()]
    iteration = entry[entry.index("ld.global.b64") :]
    math = re.search(r"\n\t(fma|mul|add|sub|div)\.rn\.f64", iteration)
    assert math is not None
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    assert iteration[: math.start()].count("ld.global.") == sum(2 if a.dtype.kind == "c" else 1 for a in arrays)


ARENA_KERNELS = ("gmm_points", "gmm_points.adj")
"""The kernels with ancilla arrays of a run-time size (the GMM's per-point
work arrays in the callee): the per-thread arena holds those."""


@pytest.mark.parametrize("function, args", _kernel_cases(ARENA_KERNELS + COMPILED_ALONE))
def test_kernels_with_ancilla_arrays_thread_by_thread_are_the_cpu_functions(function: object, args: tuple) -> None:
    """The kernels with ancilla arrays, run thread by thread (a grid smaller
    than the trip count: threads reuse their arena part and their local
    arrays), give what the CPU function gives.  Those with arrays of a
    dynamic size take a per-thread arena."""
    from gpu_emulation import EmulatedKernel

    kernel = rv.cuda.kernel(function)
    module, name = kernel.rev_module(*args)
    if name in ARENA_KERNELS:
        assert kernel.specialise(*args).program.kernels[name].arena
    expected = [a.copy() for a in args]
    function(*expected)
    got = [a.copy() for a in args]
    slot = EmulatedKernel(module, name).launch(got, 2, 3)
    assert not slot.any()
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


def test_an_exhausted_arena_is_the_located_error_of_the_thread_that_ran_out() -> None:
    """``needs N bytes of per-thread arena, has M``, at the ``rv.zeros`` that
    needed it, with the element, as a launch raises it; nothing is written
    past the arena (the thread ends at the check)."""
    from gpu_emulation import EmulatedKernel
    from revmlir.errors import ExecutionError
    from revmlir.gpu.runtime import raise_gpu_error

    ((function, args),) = (p.values for p in _kernel_cases(("gmm_points",)))
    module, name = rv.cuda.kernel(function).rev_module(*args)
    emulated = EmulatedKernel(module, name)
    got = [a.copy() for a in args]
    slot = emulated.launch(got, 1, 2, arena=16)
    with pytest.raises(ExecutionError, match=r"needs \d+ bytes of per-thread arena, has 16 .* \(element 0\)") as error:
        raise_gpu_error(emulated.check_table, slot)
    assert error.value.location is not None and "adbench_gmm.py" in error.value.location
    assert not got[0].any()  # no thread got past its first allocation


def test_a_shared_gradient_through_a_call_is_atomic_in_the_callee() -> None:
    """The adjoint of a call that reads a shared array whole accumulates
    into its gradient from every iteration: the callee's accumulations are
    atomic in the kernel's PTX, and the gradient equals the sequential one."""
    x, pairs = graph.random_batch(6, 3, 8)
    dist = np.zeros(8)
    kernel = rv.cuda.kernel(rv.adjoint(graph.batch_distances))
    compiled = kernel.specialise(dist, x, pairs, np.ones(8), np.zeros_like(x))
    assert "red.add.f64" in compiled.program.ptx
    forward = graph.batch_distances(np.zeros(8), x, pairs)[0]
    g_x = rv.adjoint(graph.batch_distances)(forward, x, pairs, np.ones(8), np.zeros_like(x))[4]
    expected = np.zeros_like(x)
    for a, b in pairs:
        unit = (x[a] - x[b]) / np.linalg.norm(x[a] - x[b])
        expected[a] += unit
        expected[b] -= unit
    np.testing.assert_allclose(g_x, expected, rtol=1e-12, atol=1e-12)


def test_max_registers_bounds_the_kernels_registers() -> None:
    """``max_registers=`` gives each kernel PTX's ``.maxnreg``, which ptxas
    obeys (spilling what does not fit); the same function and bound give
    the same kernel, another bound another one."""
    from revmlir.gpu.cache import resource_usage
    from revmlir.gpu.toolkit import find_ptxas

    adjoint = rv.adjoint(elementwise.complex_log)
    z = complex_values(8)
    args = (np.zeros_like(z), z, np.ones_like(z), np.zeros_like(z))
    bounded = rv.cuda.kernel(adjoint, max_registers=32)
    assert bounded is rv.cuda.kernel(adjoint, max_registers=32)
    assert bounded is not rv.cuda.kernel(adjoint)
    compiled = bounded.specialise(*args)
    entry = compiled.program.kernels[compiled.name].entry
    assert re.search(rf"\.entry {re.escape(entry)}\([^)]*\)\s*\.maxnreg 32\b", compiled.program.ptx)
    if find_ptxas() is not None:
        free = rv.cuda.kernel(adjoint).specialise(*args).program
        assert resource_usage(free.ptx, "sm_90")[entry].registers > 32
        assert resource_usage(compiled.program.ptx, "sm_90")[entry].registers <= 32


@pytest.mark.parametrize(
    "bound, error, message",
    [
        (8, ValueError, "max_registers=8 is outside 16..255"),
        (256, ValueError, "outside 16..255"),
        (True, TypeError, "must be a number of registers"),
        ("64", TypeError, "must be a number of registers"),
    ],
)
def test_max_registers_outside_the_hardware_is_refused(bound: object, error: type, message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        rv.cuda.kernel(elementwise.log_sin, max_registers=bound)


@pytest.mark.parametrize("arch", ["sm_50", "90", 90])
def test_an_unknown_gpu_is_refused_where_it_is_named(arch: object) -> None:
    """Before any compile: the first one may come much later, far from the
    mistyped name."""
    with pytest.raises(ValueError, match=re.escape(f"unknown GPU architecture '{arch}' (known: sm_60,")):
        rv.cuda.kernel(elementwise.log_sin, arch=arch)
