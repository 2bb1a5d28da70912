"""``rev-version-loops``: a counted loop whose index checks are affine in
its variable runs without them where both ends of its range are in bounds.
What each engine computes and raises is compared in
``test_native_safety.py`` (cases "versioned loop …"); here, which checks
leave which loop."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp

import revmlir as rv
from revmlir.lowering.checked_code import reported_check
from revmlir.lowering.loop_versioning import LoopVersioningPass
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.parsing import make_context


@rv.reversible(backend="interpreter")
def mixed(y, x, at, n: int, c: int):
    for i in range(n):
        y[i] += x[2 * i + c] * x[at[i]]


@rv.reversible(backend="interpreter")
def squares(y, x, n: int):
    for i in range(n):
        y += x[i * i]


def lowered(function: rv.ReversibleFunction, *args: object) -> ModuleOp:
    module = function.specialization_for(*args).module.clone()
    RevLowerToStdPass().apply(make_context(), module)
    return module


def index_checks(loop: scf.ForOp) -> int:
    return sum(1 for op in loop.walk() if isinstance(op, scf.IfOp) and reported_check(op) is not None)


def test_affine_index_checks_leave_the_fast_version_only():
    module = lowered(mixed, np.zeros(3), np.zeros(9), np.zeros(3, dtype=np.int64), 3, 1)
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


def test_a_loop_without_affine_index_checks_stays_as_it_is():
    """``x[i·i]`` is not affine in ``i``: its ends do not bound it."""
    module = lowered(squares, 0.0, np.zeros(9), 3)
    text = str(module)
    LoopVersioningPass().apply(make_context(), module)
    assert str(module) == text
