"""``ir_utils.clone`` copies what xDSL's ``Operation.clone`` copies, in one
walk: every example before and after lowering, a value used in a block
before the one that defines it, and a loop that uses values from around
it, which the copy uses too."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue
from xdsl.printer import Printer

from revmlir.ir_utils import clone, nested_ops
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.parsing import parse_module

EXAMPLES = sorted(Path(__file__).parent.parent.joinpath("examples").glob("*.mlir"))

LATER_BLOCK = """
func.func @later(%x: i64) -> i64 {
  cf.br ^defines
^uses(%a: i64):
  %s = arith.addi %y, %a : i64
  func.return %s : i64
^defines:
  %y = arith.muli %x, %x : i64
  cf.br ^uses(%y : i64)
}
"""
"""``%y`` is used in ``^uses`` before the walk reaches ``^defines``, which
dominates it: the copy maps it once the walk is done."""

LOOP = """
func.func @loop(%n: index, %x: i64) -> i64 {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %r = scf.for %i = %zero to %n step %one iter_args(%acc = %x) -> (i64) {
    %next = arith.addi %acc, %x : i64
    scf.yield %next : i64
  }
  func.return %r : i64
}
"""


def printed(op: Operation) -> str:
    """``op`` as text with its locations, which ``str`` leaves out."""
    out = StringIO()
    Printer(stream=out, print_debuginfo=True).print_op(op)
    return out.getvalue()


def assert_same_copy(op: Operation, copy: Operation) -> None:
    """``copy`` is ``op`` again, as xDSL's clone makes it: the same text
    and locations, name hints, block argument locations and uses, and no
    value of ``op``'s own used by the copy."""
    assert printed(copy) == printed(op.clone())  # blocks unnamed in both
    inside = {id(nested) for nested in nested_ops(op)}
    for original, copied in zip(nested_ops(op), nested_ops(copy), strict=True):
        assert copied.location == original.location
        assert copied.properties == original.properties and copied.properties is not original.properties
        assert copied.attributes == original.attributes and copied.attributes is not original.attributes
        for a, b in zip(original.results, copied.results, strict=True):
            assert (b.name_hint, uses(b)) == (a.name_hint, uses(a))
        for value in copied.operands:
            assert not _defined_in(value, inside)
        for region, copied_region in zip(original.regions, copied.regions, strict=True):
            for block, copied_block in zip(region.blocks, copied_region.blocks, strict=True):
                for a, b in zip(block.args, copied_block.args, strict=True):
                    assert (b.name_hint, b.location, uses(b)) == (a.name_hint, a.location, uses(a))
        for successor in copied.successors:
            assert successor.parent_op() is not None and id(successor.parent_op()) not in inside


def uses(value: SSAValue) -> int:
    return sum(1 for _ in value.uses)


def _defined_in(value: SSAValue, ops: set[int]) -> bool:
    owner = value.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    return id(op) in ops


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_copies_as_xdsl_does(path: Path) -> None:
    module = parse_module(path.read_text(), str(path))
    assert_same_copy(module, clone(module))
    lower_to_std(module)  # std code: scf.if and loops, nested
    copy = clone(module)
    assert_same_copy(module, copy)
    copy.verify()


def test_a_value_used_before_the_block_that_defines_it() -> None:
    module = parse_module(LATER_BLOCK)
    copy = clone(module)
    assert_same_copy(module, copy)
    copy.verify()
    (function,) = copy.ops
    _, uses, defines = function.regions[0].blocks
    assert uses.first_op is not None and defines.first_op is not None
    assert uses.first_op.operands[0] is defines.first_op.results[0]


def test_a_copy_of_a_loop_uses_the_values_around_it() -> None:
    module = parse_module(LOOP)
    loop = next(op for op in nested_ops(module) if isinstance(op, scf.ForOp))
    before = [uses(value) for value in loop.operands]
    copy = clone(loop)
    assert copy.parent is None and list(copy.operands) == list(loop.operands)
    # each value from around the loop is used once more for each use in it (%x: by the loop and the addi)
    made = [sum(operand is value for op in nested_ops(loop) for operand in op.operands) for value in loop.operands]
    assert made == [1, 1, 1, 2]
    assert [uses(value) for value in loop.operands] == [n + k for n, k in zip(before, made, strict=True)]
    inner = [op for op in nested_ops(copy) if op.name == "arith.addi"][0]
    assert inner.operands[1] is loop.operands[3]  # %x, from the function
    assert inner.operands[0] is copy.body.block.args[1]  # %acc, the copy's own
