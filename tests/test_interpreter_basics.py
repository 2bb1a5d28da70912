"""The interpreter runs parsed programs forward and backward."""

from pathlib import Path

import pytest

from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module

EXAMPLES = Path(__file__).parent.parent / "examples"


def load(name: str) -> RevInterpreter:
    path = EXAMPLES / name
    return RevInterpreter(parse_module(path.read_text(), str(path)))


FIB = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144]


@pytest.mark.parametrize("n", range(12))
def test_fibonacci_forward_and_back(n):
    interp = load("fibonacci.mlir")
    out, n_after = interp.call("rrfib", 0, n)
    assert (out, n_after) == (FIB[n], n)
    assert interp.uncall("rrfib", out, n) == (0, n)
