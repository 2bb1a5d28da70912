"""Unsigned integers on the interpreter: a ``uiW`` value is the number
from 0 to 2^W - 1 that its bits mean, on arguments, results, arrays and the
range check of ``rev-run``; its arithmetic wraps modulo 2^W.  Native code
refuses unsigned types (docs/dialects.md), so the check against it runs
the same program over the signless ``iW`` of the same width: both engines
must leave the same bits, which the interpreter reads unsigned."""

from __future__ import annotations

import numpy as np
import pytest

from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule
from revmlir.tools.rev_run import main as rev_run

WIDTHS = (8, 16, 32, 64)


def _program(type: str) -> str:
    """``@accumulate``: y += x; ``@divide``: y += x / k with a signed
    division, which reads the bits of x as two's complement whatever
    the type's signedness; ``@cells``: a[0] -= x in an array."""
    return f"""rev.func @accumulate(%y: {type}, %x: {type}) {{
  %y1 = rev.add %y, %x : {type}
  rev.return %y1, %x : {type}, {type}
}}
rev.func @divide(%y: {type}, %x: {type}, %k: {type}) {{
  %q = arith.divsi %x, %k : {type}
  %y1 = rev.add %y, %q : {type}
  rev.return %y1, %x, %k : {type}, {type}, {type}
}}
rev.func @cells(%a: memref<2x{type}>, %x: {type}) {{
  %c0 = arith.constant 0 : index
  %e = rev.take %a[%c0] : memref<2x{type}>
  %e1 = rev.sub %e, %x : {type}
  rev.put %e1, %a[%c0] : memref<2x{type}>
  rev.return %x : {type}
}}
"""


def _edges(width: int) -> list[tuple[int, int]]:
    top = 2**width - 1
    return [(0, 0), (top, 0), (top, 1), (top, top), (0, top), (2 ** (width - 1), 2 ** (width - 1) - 1), (100, 100)]


def _signed(value: int, width: int) -> int:
    """The same bits read as two's complement, computed apart from the engines."""
    return value - 2**width if value >= 2 ** (width - 1) else value


@pytest.mark.parametrize("width", WIDTHS)
def test_engines_agree_on_edge_values(width: int) -> None:
    unsigned = RevInterpreter(parse_module(_program(f"ui{width}"), "unsigned.mlir"))
    native = NativeModule.compile(parse_module(_program(f"i{width}"), "signless.mlir"))
    for y, x in _edges(width):
        sum_ = unsigned.call("accumulate", y, x)
        assert sum_ == ((y + x) % 2**width, x)
        assert sum_ == tuple(v % 2**width for v in native.call("accumulate", _signed(y, width), _signed(x, width)))
        assert unsigned.uncall("accumulate", *sum_) == (y, x)
        quotient = unsigned.call("divide", y, x, 7)
        expected = native.call("divide", _signed(y, width), _signed(x, width), 7)
        assert quotient == tuple(v % 2**width for v in expected)
        assert unsigned.uncall("divide", *quotient) == (y, x, 7)


@pytest.mark.parametrize("width", WIDTHS)
def test_unsigned_arrays(width: int) -> None:
    """An array of ``uiW`` is numpy's unsigned dtype of the width, and an
    element wraps below zero to the largest number."""
    interpreter = RevInterpreter(parse_module(_program(f"ui{width}"), "unsigned.mlir"))
    cells = np.array([0, 2**width - 1], dtype=f"uint{width}")
    (result, x) = interpreter.call("cells", cells, 1)
    assert result is cells and cells.tolist() == [2**width - 1, 2**width - 1] and x == 1
    with pytest.raises(TypeError, match=f"must be an array of uint{width}"):
        interpreter.call("cells", np.zeros(2, dtype=f"int{width}"), 1)


def test_rev_run_reads_and_prints_unsigned_numbers(tmp_path, capsys) -> None:
    source = tmp_path / "unsigned.mlir"
    source.write_text(_program("ui8"))
    assert rev_run([str(source), "-e", "accumulate", "--backend", "interpreter", "--args", "100", "100"]) == 0
    assert capsys.readouterr().out == "200 : ui8\n100 : ui8\n"
    assert rev_run([str(source), "-e", "accumulate", "--backend", "interpreter", "--args", "255", "1"]) == 0
    assert capsys.readouterr().out == "0 : ui8\n1 : ui8\n"
    for given in ("256", "-1"):
        assert rev_run([str(source), "-e", "accumulate", "--backend", "interpreter", "--args", given, "0"]) == 1
        assert f"argument #0: {given} is out of range for ui8 (0 to 255)" in capsys.readouterr().err
