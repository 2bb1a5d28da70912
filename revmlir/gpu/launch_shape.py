"""The grid and block of a kernel's launch, from its loop's trip count.

Every kernel is a grid-stride loop, so any grid runs every iteration; the
shape decides only how the iterations spread over the device.  Without a
trip count a launch takes the occupancy calculator's block and the fewest
blocks that fill the device at that occupancy (one wave).  That idles most
of the device for a loop of few iterations: GMM's 10,000 points in blocks
of 384 are 26 blocks on an H200's 132 multiprocessors.  With the count
(``revmlir.gpu.trip_count``):

* a count the device holds at once at some block size: the smallest block
  of 32, 64, 128, … (up to the occupancy's block) at which it does, and
  one iteration per thread, so that every multiprocessor gets some (GMM's
  point kernels, 10,000 points: 313 blocks of 32, 3.2 and 1.9 times as
  fast as one wave);
* a larger count: the occupancy's block and one iteration per thread
  (BA's Jacobian blocks, 10⁶ observations: 3,907 blocks of 256, a fifth
  less time than one wave), unless that grid passes the driver's limit;
* no iteration: one block of one warp, which runs what the kernel does
  before its loop (its checks) as any grid's threads do.

A kernel with a per-thread arena gets no more threads than its arena is
for, at most one wave's: the launch caps the grid this shape gives
(``revmlir.gpu.runtime.launch``, ``arena_plan``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

WARP = 32
"""The smallest block tried: one warp."""
MAX_GRID = 2**31 - 1
"""The most blocks a launch's x dimension takes (every GPU since sm_30)."""


def block_sizes(block: int) -> tuple[int, ...]:
    """The block sizes tried under the occupancy's ``block``: 32, 64, … below
    it, then ``block`` itself."""
    sizes = []
    size = WARP
    while size < block:
        sizes.append(size)
        size *= 2
    return (*sizes, block)


@dataclass(frozen=True)
class Occupancy:
    """What a device holds of one kernel: the occupancy calculator's block
    and one-wave grid, and the threads resident at once for each block
    size it may take.  Worked out once per loaded kernel, so that a
    launch's shape is a few integer comparisons."""

    block: int
    grid: int
    resident: tuple[tuple[int, int], ...]
    """``(block size, threads the device holds at once in such blocks)``,
    block sizes ascending (``block_sizes``)."""

    @staticmethod
    def of(processors: int, active_blocks: Callable[[int], int], block: int, grid: int) -> Occupancy:
        """The occupancy of a kernel on a device of ``processors``
        multiprocessors, each holding ``active_blocks(b)`` blocks of ``b``
        threads at once, whose occupancy calculator gives ``block`` and
        ``grid``."""
        return Occupancy(block, grid, tuple((b, processors * active_blocks(b) * b) for b in block_sizes(block)))

    @property
    def wave(self) -> int:
        """The threads of one wave: the occupancy calculator's grid of its
        blocks."""
        return self.grid * self.block

    def shape(self, trip: int | None) -> tuple[int, int]:
        """The ``(grid, block)`` of a launch running ``trip`` iterations
        (None: not known) of a kernel (module docstring)."""
        if trip is None:
            return self.grid, self.block
        if trip <= 0:
            return 1, min(WARP, self.block)
        block = self.block
        for size, threads in self.resident:
            if threads >= trip:
                block = size
                break
        grid = -(-trip // block)
        if grid > MAX_GRID:
            return min(grid, self.wave // block), block
        return grid, block
