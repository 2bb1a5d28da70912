"""``nested_ops`` lists what xDSL's ``walk`` yields, in its order, over
every example and a function of several blocks: regions in regions,
blocks after blocks, ops with and without regions side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from revmlir.ir_utils import nested_ops
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.parsing import parse_module

EXAMPLES = sorted(Path(__file__).parent.parent.joinpath("examples").glob("*.mlir"))

BRANCHES = """
func.func @branches(%c: i1, %x: i64) -> i64 {
  cf.cond_br %c, ^then, ^join(%x : i64)
^then:
  %y = scf.if %c -> (i64) {
    %z = arith.addi %x, %x : i64
    scf.yield %z : i64
  } else {
    scf.yield %x : i64
  }
  cf.br ^join(%y : i64)
^join(%r: i64):
  func.return %r : i64
}
"""
"""A function body of three blocks, an op with regions in the second."""


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_in_the_order_of_walk(path: Path) -> None:
    module = parse_module(path.read_text(), str(path))
    assert nested_ops(module) == list(module.walk())
    lower_to_std(module)  # std code: scf.if and loops, nested
    assert nested_ops(module) == list(module.walk())


def test_in_the_order_of_walk_over_several_blocks() -> None:
    module = parse_module(BRANCHES)
    (function,) = module.ops
    assert len(function.regions[0].blocks) == 3
    found = nested_ops(module)
    assert found == list(module.walk())
    assert [op.name for op in found] == [
        "builtin.module",
        "func.func",
        "cf.cond_br",
        "scf.if",
        "arith.addi",
        "scf.yield",
        "scf.yield",
        "cf.br",
        "func.return",
    ]
