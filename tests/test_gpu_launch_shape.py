"""Launch shapes from the trip count (no GPU needed): the rule against the
shapes measured best on an H200, the loop bounds outlining records against
the iterations the CPU runs, the bounds it does not record, and the
runtime's use of both through a stand-in driver."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from python_examples import load_benchmark
from revmlir.gpu import runtime
from revmlir.gpu.launch_shape import MAX_GRID, Occupancy, block_sizes
from revmlir.gpu.program import lower_kernels
from revmlir.gpu.trip_count import (
    MAX_OPERATIONS,
    Arithmetic,
    Cast,
    Constant,
    LoopBounds,
    Scalar,
    Size,
)
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule
from revmlir.runtime.values import wrap_int

H200_PROCESSORS = 132


def h200_blocks(registers: int) -> Any:
    """The blocks of ``size`` threads of a kernel of ``registers`` per
    thread that one H200 multiprocessor holds, as the occupancy calculator
    counts them: 64 K registers, allocated per warp in units of 256, at
    most 64 warps and 32 blocks."""
    per_warp = -(-registers * 32 // 256) * 256

    def active(size: int) -> int:
        warps = -(-size // 32)
        return min(65536 // per_warp // warps, 64 // warps, 32)

    return active


def h200(registers: int, block: int, grid: int) -> Occupancy:
    return Occupancy.of(H200_PROCESSORS, h200_blocks(registers), block, grid)


def launch_shape(occupancy: Occupancy, trip: int | None, arena: bool) -> tuple[int, int]:
    """The shape ``runtime.launch`` gives a kernel with a per-thread arena
    of the default size or without one: ``Occupancy.shape``, its grid cut
    to the arena's threads (``runtime.arena_plan``)."""
    grid, block = occupancy.shape(trip)
    if arena:
        threads, _ = runtime.arena_plan(None, occupancy.wave)
        grid = min(grid, threads // block)
    return grid, block


@pytest.mark.parametrize(
    "registers, occupancy, trip, arena, shape",
    [
        # GMM's point kernels, 10,000 points: every multiprocessor gets some
        (130, (384, 132), 10_000, True, (313, 32)),
        (243, (256, 132), 10_000, True, (313, 32)),
        # BA's Jacobian blocks, 10^6 observations: one per thread
        (230, (256, 132), 1_000_000, False, (3907, 256)),
        (208, (256, 132), 1_000_000, False, (3907, 256)),
        # y += log(x)·sin(x), 10^7
        (44, (640, 264), 10_000_000, False, (15625, 640)),
        # a count the device holds at 64 threads a block but not at 32
        # (32 blocks of 32 a multiprocessor, 21 of 64)
        (44, (640, 264), 132 * 32 * 32 + 1, False, (2113, 64)),
        # held exactly at 32; one more, at none of the smaller blocks
        (243, (256, 132), 132 * 8 * 32, False, (1056, 32)),
        (243, (256, 132), 132 * 8 * 32 + 1, False, (133, 256)),
        (243, (256, 132), 1, False, (1, 32)),
        # no iteration: one warp runs what comes before the loop
        (243, (256, 132), 0, False, (1, 32)),
        (243, (256, 132), -7, False, (1, 32)),
        # not known: one wave at the occupancy's block, as before
        (243, (256, 132), None, False, (132, 256)),
        # one iteration per thread would pass the driver's grid limit
        (230, (256, 132), 256 * MAX_GRID + 1, False, (132, 256)),
        (230, (256, 132), 256 * MAX_GRID, False, (MAX_GRID, 256)),
        # a kernel with an arena keeps one wave's threads
        (230, (256, 132), 1_000_000, True, (132, 256)),
        # ... at small blocks too, which hold more threads at once than
        # one wave (130 registers: 15 blocks of 32 a multiprocessor, one
        # of 384): 50,688 threads, 1,584 blocks of 32
        (130, (384, 132), 63_360, False, (1980, 32)),
        (130, (384, 132), 63_360, True, (1584, 32)),
        (130, (384, 132), 50_689, True, (1584, 32)),
        (130, (384, 132), 50_688, True, (1584, 32)),
        (130, (384, 132), 63_361, False, (166, 384)),
        (130, (384, 132), 63_361, True, (132, 384)),
    ],
)
def test_the_launch_shape_of_a_trip_count(
    registers: int, occupancy: tuple[int, int], trip: int | None, arena: bool, shape: tuple[int, int]
) -> None:
    assert launch_shape(h200(registers, *occupancy), trip, arena) == shape


@pytest.mark.parametrize("arena", [False, True])
@pytest.mark.parametrize("registers, block, grid", [(243, 256, 132), (130, 384, 132), (44, 640, 264)])
def test_every_shape_covers_its_count_within_the_devices_limits(
    registers: int, block: int, grid: int, arena: bool
) -> None:
    """Blocks of at most the occupancy's size and a grid within the limit;
    as many threads as iterations, fewer than a block more, where the
    device holds them or the grid is exact, and, with an arena, no more
    than one wave's; otherwise one wave's threads."""
    occupancy = h200(registers, block, grid)
    wave = grid * block
    for trip in [*range(-1, 70_000, 997), 33_793, 63_361, 10**9, block * MAX_GRID + 1, 2**62]:
        launch_grid, launch_block = launch_shape(occupancy, trip, arena)
        assert launch_block in block_sizes(block) and 1 <= launch_grid <= MAX_GRID
        threads = launch_grid * launch_block
        if trip <= 0:
            assert (launch_grid, launch_block) == (1, 32)
        elif threads >= trip > threads - launch_block:
            assert threads <= wave or not arena
        else:
            assert launch_grid == wave // launch_block and (arena or -(-trip // launch_block) > MAX_GRID)


def test_block_sizes_are_warps_doubled_up_to_the_occupancys_block() -> None:
    assert block_sizes(384) == (32, 64, 128, 256, 384)
    assert block_sizes(256) == (32, 64, 128, 256)
    assert block_sizes(32) == (32,)


def test_expressions_compute_as_the_kernel_does() -> None:
    """Two's complement at each operation's width; casts extend with the
    sign or zeros, or truncate."""
    big = Constant(2**62, 64)
    assert Arithmetic("mul", big, Constant(4, 64), 64).evaluate({}) == 0
    assert Arithmetic("add", Constant(2**63 - 1, 64), Constant(1, 64), 64).evaluate({}) == -(2**63)
    minus_one = Scalar(0, 32)
    assert Cast(minus_one, 64, unsigned=False).evaluate({0: -1}) == -1
    assert Cast(minus_one, 64, unsigned=True).evaluate({0: -1}) == 2**32 - 1
    assert Cast(Scalar(0, 64), 8, unsigned=False).evaluate({0: 511}) == -1
    assert Scalar(0, 32).evaluate({0: 2**32 + 5}) == 5
    assert Size(1, 1).evaluate([0, np.empty((2, 7))]) == 7


def test_a_trip_count_is_the_length_of_the_range_and_unknown_for_a_step_that_is_not_positive() -> None:
    bounds = LoopBounds(Scalar(0, 64), Scalar(1, 64), Scalar(2, 64))
    for lb, ub, step in [(0, 10, 3), (-5, 5, 2), (5, -5, 1), (2**63 - 10, 2**63 - 1, 4), (-(2**63), 2**63 - 1, 2**62)]:
        assert bounds.trip_count([lb, ub, step]) == len(range(lb, ub, step))
    assert bounds.trip_count([0, 10, 0]) is None
    assert bounds.trip_count([0, 10, -1]) is None


def counting(signature: str, definitions: str, lb: str, step: str, returned: str) -> str:
    """A function counting the iterations of its parallel loop in ``%t[0]``,
    up to ``%ub``, which ``definitions`` define (``%c0``, ``%c1`` and ``%c3``
    defined before them)."""
    return f"""rev.func @k(%t: memref<?xi64>, {signature}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  {definitions}
  rev.for parallel {lb} to %ub step {step} : index () {{
  ^bb0(%i: index):
    %count = rev.take %t[%c0] : memref<?xi64>
    %one = arith.constant 1 : i64
    %count1 = rev.add %count, %one : i64
    rev.put %count1, %t[%c0] : memref<?xi64>
    rev.yield
  }}
  rev.return {returned}
}}"""


BOUNDED = counting(
    "%a: memref<?x?xf64>, %lb: i32, %n: index, %s: index",
    """%first = arith.index_cast %lb : i32 to index
  %d = memref.dim %a, %c1 : memref<?x?xf64>
  %m = arith.muli %d, %n : index
  %ub = arith.subi %m, %c3 : index""",
    "%first",
    "%s",
    "%lb, %n, %s : i32, index, index",
)
"""A loop whose bounds are arithmetic of a scalar of another width, an
array's size and an ``index`` scalar, counting its iterations."""


def _bounds(source: str, name: str) -> LoopBounds | None:
    _, _, bounds = lower_kernels(parse_module(source, f"{name}.mlir"), [name])
    return bounds[name]


@pytest.mark.parametrize(
    "columns, lb, n, s",
    [
        (4, 0, 3, 1),
        (5, -7, 2, 3),
        (2, 10, 1, 1),
        (0, -3, 9, 2),
        (3, -(2**31), 1, 2**30),
        (6, 2**31 - 1, 1, 1),
        # the 64-bit product wraps: to 0 (a bound of -3), to 4 (a bound of 1)
        (4, -10, 2**62, 1),
        (4, -5, 2**62 + 1, 2),
    ],
)
def test_recorded_bounds_count_the_iterations_the_cpu_runs(columns: int, lb: int, n: int, s: int) -> None:
    bounds = _bounds(BOUNDED, "k")
    assert bounds is not None
    t, a = np.zeros(1, np.int64), np.zeros((2, columns))
    NativeModule.compile(parse_module(BOUNDED, "k.mlir")).call("k", t, a, lb, n, s)
    assert bounds.trip_count([t, a, lb, n, s]) == t[0] == len(range(lb, wrap_int(columns * n - 3, 64), s))


CHAIN = "\n  ".join(
    [
        "%u0 = arith.addi %n, %n : index",
        *(f"%u{k} = arith.addi %u{k - 1}, %n : index" for k in range(1, MAX_OPERATIONS)),
        f"%ub = arith.addi %u{MAX_OPERATIONS - 1}, %n : index",
    ]
)
"""An upper bound of one operation more than a recorded bound has."""


@pytest.mark.parametrize(
    "definition",
    [
        "%ub = memref.load %sizes[%c0] : memref<?xindex>",
        "%ub = arith.divui %n, %c3 : index",
        "%ub = arith.maxsi %n, %c3 : index",
        "%ub = memref.dim %sizes, %n : memref<?xindex>",
        CHAIN,
    ],
    ids=["read-from-an-array", "divided", "a-maximum", "a-size-at-a-dimension-not-constant", "too-many-operations"],
)
def test_bounds_not_computable_from_the_arguments_record_nothing(definition: str) -> None:
    source = counting("%sizes: memref<?xindex>, %n: index", definition, "%c0", "%c1", "%n : index")
    assert _bounds(source, "k") is None
    within = source.replace(f"%u{MAX_OPERATIONS - 1}, %n", f"%u{MAX_OPERATIONS - 2}, %n")
    if definition is CHAIN:  # one operation fewer is recorded
        assert _bounds(within.replace(f"  %u{MAX_OPERATIONS - 1} =", "  // "), "k") is not None


launch_overhead = load_benchmark("launch_overhead")


class H200Driver(launch_overhead.FakeDriver):
    """``launch_overhead.FakeDriver`` answering as an H200 would for a
    kernel of 243 registers (``h200_blocks``), recording each launch's
    ``(grid, block)``, each allocation's address and bytes, and the calls
    that allocate, free and wait."""

    def __init__(self) -> None:
        super().__init__()
        self.launches: list[tuple[int, int]] = []
        self.allocations: list[tuple[int, int]] = []
        """``(address, bytes)`` of each ``cuMemAlloc``."""
        self.memory: list[tuple[str, int]] = []
        """``(call, argument)`` of each ``cuStreamSynchronize`` (its stream),
        ``cuMemFree`` (its address) and ``cuMemAlloc`` (its bytes)."""

    def cuFuncGetAttribute(self, attribute: Any, function: Any) -> tuple[Any, ...]:
        assert attribute == self.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS
        return self._ok("cuFuncGetAttribute", 243)

    def cuOccupancyMaxPotentialBlockSize(self, function: Any, *_: Any) -> tuple[Any, ...]:
        return self._ok("cuOccupancyMaxPotentialBlockSize", 132, 256)

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, function: Any, block: int, shared: int) -> tuple[Any, ...]:
        assert shared == 0
        return self._ok("cuOccupancyMaxActiveBlocksPerMultiprocessor", h200_blocks(243)(block))

    def cuLaunchKernel(self, function: Any, *configuration: Any) -> tuple[Any, ...]:
        self.launches.append((configuration[0], configuration[3]))
        return super().cuLaunchKernel(function, *configuration)

    def cuMemAlloc(self, nbytes: int) -> tuple[Any, ...]:
        self.memory.append(("cuMemAlloc", nbytes))
        result = super().cuMemAlloc(nbytes)
        self.allocations.append((result[1], nbytes))
        return result

    def cuMemFree(self, pointer: int) -> tuple[Any, ...]:
        self.memory.append(("cuMemFree", pointer))
        return super().cuMemFree(pointer)

    def cuStreamSynchronize(self, stream: int) -> tuple[Any, ...]:
        self.memory.append(("cuStreamSynchronize", stream))
        return super().cuStreamSynchronize(stream)


@pytest.fixture
def fake() -> Iterator[H200Driver]:
    """An ``H200Driver`` behind the runtime, no device started yet."""
    with launch_overhead.fake_driver(H200Driver()) as driver:
        yield driver


def test_a_launch_is_shaped_by_its_trip_count_and_the_device_asked_once(fake: H200Driver) -> None:
    """The multiprocessors are asked once per device and the occupancy of
    each block size once per loaded kernel, never at a launch; launches of
    10,000 and 10^6 iterations, and of none, get the rule's shapes."""
    import revmlir as rv

    @rv.reversible
    def twice(y, x):
        for i in rv.prange(len(x)):
            y[i] += 2.0 * x[i]

    for dtype in (np.float64, np.float32):
        compiled = rv.cuda.kernel(twice).specialise(np.zeros(1, dtype), np.zeros(1, dtype))
        for n in (10_000, 1_000_000, 0):
            runtime.launch(compiled.plan, [np.zeros(n, dtype), np.zeros(n, dtype)], 0)
    assert fake.launches == [(313, 32), (3907, 256), (1, 32)] * 2
    assert fake.calls.count("cuOccupancyMaxActiveBlocksPerMultiprocessor") == 2 * len(block_sizes(256))
    assert fake.calls.count("cuDeviceGet") == fake.calls.count("cuDeviceGetAttribute") == 1


def test_arena_launches_on_a_stream_share_one_waves_buffer(fake: H200Driver) -> None:
    """Launches of a kernel with an arena, queued on a stream with growing
    counts, take the counts' shapes within one wave's threads, inside one
    buffer sized for one wave: allocated once, never waited for; a larger
    ``arena=`` grows it to the limit and cuts the grid to fit."""
    import revmlir as rv
    from revmlir.gpu.arrays import DeviceArray

    @rv.reversible
    def window(y, x, m):
        for i in rv.prange(len(y)):
            with rv.routine() as r:
                w = rv.zeros(m)
                for j in range(m):
                    w[j] += x[i]
            for j in range(m):
                y[i] += w[j]
            ~r

    compiled = rv.cuda.kernel(window).specialise(np.zeros(1), np.zeros(1), 4)
    assert compiled.program.kernels[compiled.name].arena

    def run(n: int, arena: int | None = None) -> None:
        arrays = [DeviceArray(base << 40, (n,), np.dtype("f8"), False, 0, None, "a CuPy array") for base in (1, 2)]
        runtime.launch(compiled.plan, [*arrays, 4], 7, False, arena)

    for n in (10_000, 20_000, 1_000_000):
        run(n)
    assert fake.launches == [(313, 32), (625, 32), (132, 256)]
    ((first, nbytes),) = fake.allocations
    assert nbytes == 132 * 256 * runtime.DEFAULT_ARENA
    assert fake.calls.count("cuStreamSynchronize") == fake.calls.count("cuMemFree") == 0
    done = len(fake.memory)
    run(1_000_000, arena=1 << 20)
    assert fake.launches[-1] == (1024 // 256, 256)
    assert fake.memory[done:] == [("cuStreamSynchronize", 7), ("cuMemFree", first), ("cuMemAlloc", runtime.ARENA_LIMIT)]


def test_an_empty_range_in_one_warp_reports_the_checks_before_the_loop_as_any_grid() -> None:
    """A launch of no iteration is one block of 32 threads: the check
    before the loop fails in each, and the slot holds what a larger grid's
    holds, the CPU's error without an element."""
    from gpu_emulation import EmulatedKernel
    from revmlir.errors import ExecutionError

    source = counting(
        "%x: memref<?xf64>, %n: index",
        "%v = memref.load %x[%c3] : memref<?xf64>\n  %ub = arith.addi %n, %c0 : index",
        "%c0",
        "%c1",
        "%n : index",
    )
    module = parse_module(source, "k.mlir")
    bounds = _bounds(source, "k")
    assert bounds is not None
    args = [np.zeros(1, np.int64), np.zeros(2), 0]
    trip = bounds.trip_count(args)
    grid, block = h200(243, 256, 132).shape(trip)
    assert (trip, grid, block) == (0, 1, 32)
    kernel = EmulatedKernel(module, "k")
    slot = kernel.launch(args, grid, block)
    assert slot.tolist() == kernel.launch(args, 3, 5).tolist()
    with pytest.raises(ExecutionError) as cpu:
        NativeModule.compile(module).call("k", *args)
    with pytest.raises(ExecutionError) as gpu:
        runtime.raise_gpu_error(kernel.check_table, slot)
    assert str(gpu.value) == str(cpu.value) and "element" not in str(gpu.value)


def test_a_python_range_of_scalars_records_its_bounds() -> None:
    """``rv.prange(lo, hi, s)`` of integer arguments: the count the
    launch computes is Python's ``range``'s, and that of the CPU run."""
    import revmlir as rv

    @rv.reversible
    def strided(y, lo, hi, s):
        for i in rv.prange(lo, hi, s):
            y[i] += 1.0

    compiled = rv.cuda.kernel(strided).specialise(np.zeros(1), 0, 1, 1)
    bounds = compiled.program.kernels[compiled.name].bounds
    assert bounds is not None
    for lo, hi, s in [(3, 100, 7), (1, 50, 3), (40, 2, 1), (0, 64, 64)]:
        y = np.zeros(100)
        strided(y, lo, hi, s)
        assert bounds.trip_count([y, lo, hi, s]) == len(range(lo, hi, s)) == y.sum()


@pytest.mark.parametrize("k", [0, 3, 12, -(2**63), 10 - 2**63, 2**63 - 1])
def test_a_python_range_whose_bound_wraps_counts_what_the_cpu_runs(k: int) -> None:
    """``rv.prange(1, len(y) - k)``: where the 64-bit subtraction wraps
    (``k`` below 11 - 2**63 for ten elements), the kernel's bound is
    negative and the range empty, and so is the count the launch computes;
    the CPU runs as many iterations."""
    import revmlir as rv

    @rv.reversible
    def tail(y, k):
        for i in rv.prange(1, len(y) - k):
            y[i] += 1.0

    compiled = rv.cuda.kernel(tail).specialise(np.zeros(1), 0)
    bounds = compiled.program.kernels[compiled.name].bounds
    assert bounds is not None
    y = np.zeros(10)
    tail(y, k)
    assert bounds.trip_count([y, k]) == len(range(1, wrap_int(10 - k, 64))) == y.sum()
