"""``nested_ops`` lists what xDSL's ``walk`` yields, in its order, over
every example: regions in regions, several blocks, ops with and without
regions side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from revmlir.ir_utils import nested_ops
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.parsing import parse_module

EXAMPLES = sorted(Path(__file__).parent.parent.joinpath("examples").glob("*.mlir"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_in_the_order_of_walk(path: Path) -> None:
    module = parse_module(path.read_text(), str(path))
    assert nested_ops(module) == list(module.walk())
    lower_to_std(module)  # std code: scf.if and loops, nested
    assert nested_ops(module) == list(module.walk())
