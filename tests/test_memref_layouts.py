"""Memref layouts: every engine addresses an array row-major from its first
element (a numpy array in C order), so a layout such as
``strided<[8, 1], offset: 2>`` was silently ignored and another element
read.  The verifier rejects it (rule ``layout``) where the array appears."""

import numpy as np
import pytest

from revmlir.errors import ReversibilityViolation, format_location
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

READ = """rev.func @f(%y: f64, %m: memref<4x8xf64{layout}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = memref.load %m[%c1, %c0] : memref<4x8xf64{layout}>
  %y1 = rev.add %y, %e : f64
  rev.return %y1 : f64
}}"""


@pytest.mark.parametrize(
    "layout", [", strided<[8, 1], offset: 2>", ", strided<[1, 4]>", ", affine_map<(d0, d1) -> (d1, d0)>"]
)
def test_an_argument_with_a_layout_is_rejected_at_its_function(layout):
    with pytest.raises(ReversibilityViolation, match=r"\[layout\] %m has the layout") as error:
        parse_module(READ.format(layout=layout), "layout.mlir")
    assert error.value.rule == "layout"
    assert format_location(error.value.op.location).startswith("layout.mlir:1:")


def test_an_ancilla_array_with_a_layout_is_rejected_at_its_allocation():
    source = """rev.func @f(%y: f64, %n: index) {
  %a = anc.array_alloc(%n) : memref<?xf64, strided<[2]>>
  anc.array_free %a(%n) : memref<?xf64, strided<[2]>>
  rev.return %y, %n : f64, index
}"""
    with pytest.raises(ReversibilityViolation, match=r"\[layout\] %a has the layout strided<\[2\]>") as error:
        parse_module(source, "ancilla.mlir")
    assert format_location(error.value.op.location).startswith("ancilla.mlir:2:")


def test_arrays_without_a_layout_read_the_row_major_element_on_both_engines():
    module = parse_module(READ.format(layout=""), "layout.mlir")
    a = np.arange(32.0).reshape(4, 8)
    for engine in (RevInterpreter(module), NativeModule.compile(module)):
        assert engine.call("f", 0.0, a.copy())[0] == 8.0
