"""``rev-version-loops``: a counted loop whose index checks are affine in
its variable runs without them where both ends of its range are in bounds.
What each engine computes and raises is compared in
``test_native_safety.py`` (cases "versioned loop …"); here, which checks
leave which loop."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import ModuleOp

import revmlir as rv
from revmlir.lowering.checked_code import reported_check
from revmlir.lowering.loop_versioning import LoopVersioningPass
from revmlir.lowering.rev_to_std import RevLowerToStdPass, lower_to_std
from revmlir.parsing import make_context, parse_module
from revmlir.runtime.native import NativeModule


@rv.reversible(backend="interpreter")
def mixed(y, x, at, n: int, c: int):
    for i in range(n):
        y[i] += x[2 * i + c] * x[at[i]]


@rv.reversible(backend="interpreter")
def squares(y, x, n: int):
    for i in range(n):
        y += x[i * i]


@rv.reversible(backend="interpreter")
def packed(y, x, n: int):
    for i in range(n):
        for j in range(i + 1, n):
            y[j] += x[i * (2 * n - i - 1) // 2 + j - i - 1]


@rv.reversible(backend="interpreter")
def divided(y, x, k: int):
    for i in range(len(y)):
        y[i] += x[i + len(x) // k]


@rv.reversible(backend="interpreter")
def negated(y, x, k: int):
    for i in range(len(y)):
        y[i] += x[i + k // -1]


def lowered(function: rv.ReversibleFunction, *args: object, check_ops: bool = False) -> ModuleOp:
    """``rev-lower-to-std`` of the function for ``args``; with
    ``check_ops``, its checks in the one-op form of native code and GPU
    kernels (``lower_to_std``)."""
    module = function.specialization_for(*args).module.clone()
    lower_to_std(module, check_ops=check_ops)
    return module


def index_checks(loop: scf.ForOp) -> int:
    return sum(1 for op in loop.walk() if reported_check(op) is not None)


@pytest.mark.parametrize("check_ops", [False, True], ids=["std form", "check ops"])
def test_affine_index_checks_leave_the_fast_version_only(check_ops: bool):
    module = lowered(mixed, np.zeros(3), np.zeros(9), np.zeros(3, dtype=np.int64), 3, 1, check_ops=check_ops)
    (function,) = [f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "mixed"]
    before = [op for op in function.walk() if isinstance(op, scf.ForOp)]
    assert len(before) == 1 and index_checks(before[0]) == 4  # y[i], x[2i + c], at[i], x[at[i]]
    LoopVersioningPass().apply(make_context(), module)
    versions = [op for op in function.walk() if isinstance(op, scf.IfOp) and reported_check(op) is None]
    (choice,) = [v for v in versions if isinstance(v.true_region.block.first_op, scf.ForOp)]
    fast, checked = (region.block.first_op for region in (choice.true_region, choice.false_region))
    assert isinstance(fast, scf.ForOp) and isinstance(checked, scf.ForOp)
    assert checked is before[0] and index_checks(checked) == 4
    # only the indirect index x[at[i]] is still checked in every iteration
    assert index_checks(fast) == 1
    module.verify()


def fast_and_checked(module: ModuleOp) -> list[tuple[scf.ForOp, scf.ForOp]]:
    """The two versions of each versioned loop of ``module``."""
    versions = [op for op in module.walk() if isinstance(op, scf.IfOp) and reported_check(op) is None]
    pairs = [(v.true_region.block.first_op, v.false_region.block.first_op) for v in versions]
    return [
        (fast, checked) for fast, checked in pairs if isinstance(fast, scf.ForOp) and isinstance(checked, scf.ForOp)
    ]


def test_an_invariant_part_divided_by_a_constant_is_computed_before_the_loop():
    """``x[i·(2n − i − 1) // 2 + j − i − 1]`` is affine in ``j``: its part
    that divides by 2 is invariant in the inner loop, and dividing by a
    constant other than zero cannot trap before it."""
    module = lowered(packed, np.zeros(4), np.zeros(6), 4, check_ops=True)
    LoopVersioningPass().apply(make_context(), module)
    ((fast, checked),) = fast_and_checked(module)
    assert index_checks(checked) == 3 and index_checks(fast) == 1  # the division's check of its constant 2 stays
    module.verify()


def test_a_divisor_written_as_a_difference_of_constants_is_a_constant():
    """The frontend writes ``k // -1`` as ``k // (0 − 1)``: the divisor is
    the constant −1, whose signed division wraps and cannot trap."""
    module = lowered(negated, np.zeros(3), np.zeros(5), -2, check_ops=True)
    LoopVersioningPass().apply(make_context(), module)
    ((fast, checked),) = fast_and_checked(module)
    assert index_checks(checked) == 3 and index_checks(fast) == 1  # the division's check of −1 stays
    module.verify()


def test_an_index_divided_by_a_variable_keeps_its_check():
    """``len(x) // k`` could divide by zero before the loop, where the body
    reports the division by zero: its index is not affine, and its check
    stays in the fast version with the division's own."""
    module = lowered(divided, np.zeros(4), np.zeros(6), 2, check_ops=True)
    LoopVersioningPass().apply(make_context(), module)
    ((fast, checked),) = fast_and_checked(module)
    assert index_checks(checked) == 3 and index_checks(fast) == 2  # y[i] leaves, k ≠ 0 and x[…] stay
    module.verify()


def test_a_loop_without_affine_index_checks_stays_as_it_is():
    """``x[i·i]`` is not affine in ``i``: its ends do not bound it."""
    module = lowered(squares, 0.0, np.zeros(9), 3)
    text = str(module)
    LoopVersioningPass().apply(make_context(), module)
    assert str(module) == text


SCRATCH = """
func.func @scratch(%y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %buf = memref.alloca() : memref<60000xf64>
    %m = arith.constant 3 : index
    %small = memref.alloca(%m) : memref<?xf64>
    %v = memref.load %y[%i] : memref<?xf64>
    memref.store %v, %buf[%i] : memref<60000xf64>
    memref.store %v, %small[%c1] : memref<?xf64>
    %u = memref.load %buf[%i] : memref<60000xf64>
    %w = memref.load %small[%c1] : memref<?xf64>
    %s = arith.addf %u, %w : f64
    memref.store %s, %y[%i] : memref<?xf64>
  }
  func.return
}
"""


def test_the_versions_of_a_loop_share_its_frame_arrays():
    """An array of a size known at compile time that the body allocates is
    one slot of the function's frame (its translation allocates it in the
    entry block): versioning moves it before the loop, with the constant
    that sizes it, instead of cloning it into both versions, which doubled
    a GPU thread's local memory (480,000 bytes took 960,000).  Native code
    still computes what the loop computes."""
    module = parse_module(SCRATCH, "scratch.mlir")
    RevLowerToStdPass().apply(make_context(), module)
    LoopVersioningPass().apply(make_context(), module)
    module.verify()
    (function,) = [f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "scratch"]
    allocas = [op for op in function.walk() if isinstance(op, memref.AllocaOp)]
    arrays = [a for a in allocas if a.memref.name_hint in ("buf", "small")]
    assert len(arrays) == 2 and all(a.parent_block() is function.body.block for a in arrays)
    assert sum(isinstance(op, scf.ForOp) for op in function.walk()) == 2  # it was versioned
    source = parse_module(SCRATCH, "scratch.mlir")
    (std,) = [f for f in source.ops if isinstance(f, func.FuncOp)]
    y = np.arange(1.0, 6.0)
    NativeModule.compile(source).std_caller(std)([y])
    np.testing.assert_array_equal(y, 2 * np.arange(1.0, 6.0))
