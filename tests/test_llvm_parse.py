"""LLVM's refusals of LLVM IR (``revmlir.lowering.llvm_parse``): a compile
error naming the function and the instruction, on the host and the GPU,
never llvmlite's bare ``RuntimeError``."""

from __future__ import annotations

import pytest

from revmlir.errors import LLVMRejected
from revmlir.gpu.program import ptx_from_llvm
from revmlir.lowering.llvm_code import LLVMCode
from revmlir.lowering.llvm_parse import parse_llvm, verify_llvm
from revmlir.parsing import parse_module
from revmlir.runtime.jit import jit
from revmlir.runtime.native import NativeModule

CASTS = """define float @f(i64 %x) {
  ret float 0.0
}
define float @"g.h"(i64 %x) {
  %y = bitcast i64 %x to float
  ret float %y
}
"""
"""A bitcast between types of two sizes, in the second function."""

UNDOMINATED = """define i64 @f(i64 %x) {
  ret i64 %x
}
define i64 @g(i64 %x) {
  br label %b
b:
  %z = add i64 %x, %w
  %w = add i64 %x, 1
  ret i64 %z
}
"""
"""A value used before it is defined, which LLVM parses and its verifier
refuses."""


def test_a_parse_error_names_the_function_and_the_instruction():
    with pytest.raises(LLVMRejected) as error:
        parse_llvm(CASTS)
    assert str(error.value) == (
        "LLVM refuses the code of @g.h: invalid cast opcode for cast from 'i64' to 'float' "
        "(at '%y = bitcast i64 %x to float')"
    )
    assert error.value.function == "g.h" and not isinstance(error.value, RuntimeError)


def test_a_verifier_error_names_the_function_and_the_instruction():
    with pytest.raises(LLVMRejected) as error:
        verify_llvm(parse_llvm(UNDOMINATED))
    assert (
        str(error.value)
        == "LLVM refuses the code of @g: Instruction does not dominate all uses! (at '%w = add i64 %x, 1')"
    )
    assert error.value.function == "g"


def test_text_outside_any_function_is_refused_without_one():
    with pytest.raises(LLVMRejected) as error:
        parse_llvm("declare i64 @f(\n")
    assert str(error.value).startswith("LLVM refuses the code: ") and error.value.function is None


@pytest.mark.parametrize("compile", [jit, lambda text: ptx_from_llvm(LLVMCode(text, {}, frozenset(), frozenset()))])
def test_host_and_device_compiles_raise_the_refusal(compile):
    """The JIT's parse and the GPU's (``ptx_from_llvm``) alike."""
    with pytest.raises(LLVMRejected, match=r"^LLVM refuses the code of @g\.h: invalid cast opcode"):
        compile(CASTS)


def test_a_module_of_llvm_ops_llvm_refuses_is_refused_at_compile():
    """``llvm.bitcast`` of an ``i64`` to an ``f32`` passes xDSL's verifier;
    native code's compile raises LLVM's refusal of it, a compile error."""
    module = parse_module(
        "func.func @cast(%x: i64) -> f32 {\n  %y = llvm.bitcast %x : i64 to f32\n  func.return %y : f32\n}\n"
    )
    with pytest.raises(LLVMRejected, match=r"^LLVM refuses the code of @cast: invalid cast opcode") as error:
        NativeModule.compile(module)
    assert error.value.function == "cast"
