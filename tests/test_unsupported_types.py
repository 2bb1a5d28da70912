"""Number types native code does not take (issue 16): the interpreter runs
them, native compilation refuses them at the first op with a value of one,
before xDSL's verifier, LLVM or the argument marshalling see them (which
failed with their own text and no location: an unlocated
``VerifyException`` for ``ui8``, ``KeyError(128)`` calling over ``i128``,
"no LLVM intrinsics for f16").  A double too large for an ``f32`` or a
``complex<f32>`` argument is an infinity on both engines, as C converts
it."""

from __future__ import annotations

import ctypes
import re

import pytest
from xdsl.utils.exceptions import PassFailedException

from revmlir.gpu.program import compile_kernels
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule, lower_to_llvm_ir

UNSUPPORTED_INTEGERS = ["ui8", "si8", "ui32", "ui64", "i2", "i7", "i33", "i128", "i256"]
UNSUPPORTED_FLOATS = ["f16", "bf16", "f80", "f128"]


def _accumulate(type: str, name: str = "f") -> str:
    return f"""rev.func @{name}(%y: {type}, %x: {type}) {{
  %y1 = rev.add %y, %x : {type}
  rev.return %y1, %x : {type}, {type}
}}
"""


def _refusal(type: str, line: int, op: str) -> str:
    return rf"'{op}' at types\.mlir:{line}:\d+: native code does not support type {type}; its "


@pytest.mark.parametrize("type", UNSUPPORTED_INTEGERS + UNSUPPORTED_FLOATS)
def test_refused_at_the_function(type: str) -> None:
    module = parse_module(_accumulate(type), "types.mlir")
    kind = "integers are signless i1, i8, i16, i32 or i64" if type[0] in "isu" else "floats are f32 or f64"
    with pytest.raises(PassFailedException, match=_refusal(type, 1, "rev.func") + kind):
        NativeModule.compile(module)
    # rev-translate's path, without a call
    with pytest.raises(PassFailedException, match=_refusal(type, 1, "rev.func")):
        lower_to_llvm_ir(module)


@pytest.mark.parametrize(
    "type", ["tensor<2xf64>", "none", "tuple<f64, f64>", "!rev.log<f64>", "!rev.fixed<32, 16>", "!anc.stack<f64>"]
)
@pytest.mark.parametrize("where", ["parameter", "result"])
def test_a_func_func_signature_is_of_llvm_types(type: str, where: str) -> None:
    """A ``func.func`` runs as written: a type with no LLVM form (one
    holding no number, a stack or rev's numbers, which only a ``rev.func``'s lowering
    translates) is refused at the function, not by the verifier of xDSL's
    ``llvm.func`` without a location; the numbers, vectors and arrays are
    translated."""
    signature = f"(%x: {type})" if where == "parameter" else f"() -> {type}"
    module = parse_module(f"func.func private @f{signature}\n", "types.mlir")
    with pytest.raises(
        PassFailedException,
        match=_refusal(re.escape(type), 1, "func.func") + "func.func functions take and return numbers",
    ):
        lower_to_llvm_ir(module)
    numbers = "(%x: f64, %v: vector<2xf64>, %m: memref<?xi32>, %c: complex<f32>, %p: !llvm.ptr) -> i64"
    assert "declare" in lower_to_llvm_ir(parse_module(f"func.func private @f{numbers}\n", "types.mlir")).llvm_ir


@pytest.mark.parametrize("type", ["ui8", "i128", "f16"])
def test_refused_for_kernels_of_the_python_api(type: str) -> None:
    """``compile_kernels`` (``rv.cuda.kernel``'s compiler) refuses the type
    at its op as native code does, before the GPU passes see it."""
    module = parse_module(_accumulate(type), "types.mlir")
    with pytest.raises(PassFailedException, match=_refusal(type, 1, "rev.func")):
        compile_kernels(module, ["f"])


def _wrapped(value: int, width: int) -> int:
    """Two's complement wrap-around, computed independently of the engines."""
    return (value + 2 ** (width - 1)) % 2**width - 2 ** (width - 1)


@pytest.mark.parametrize("type", ["i2", "i7", "i33", "i128", "i256"])
def test_interpreter_wraps_other_widths(type: str) -> None:
    width = int(type[1:])
    largest = 2 ** (width - 1) - 1
    interpreter = RevInterpreter(parse_module(_accumulate(type), "types.mlir"))
    assert interpreter.call("f", largest, 1) == (_wrapped(largest + 1, width), 1)
    assert interpreter.uncall("f", -largest - 1, 1) == (largest, 1)


def test_refused_at_an_inner_op() -> None:
    """A value of the type inside the body: the op that makes it is cited."""
    source = """rev.func @g(%y: f64, %x: f64) {
  %h = arith.truncf %x : f64 to f16
  %w = arith.extf %h : f16 to f64
  %y1 = rev.add %y, %w : f64
  rev.return %y1, %x : f64, f64
}
"""
    module = parse_module(source, "types.mlir")
    assert RevInterpreter(module).call("g", 0.0, 1.0 / 3.0) == (0.333251953125, 1.0 / 3.0)
    with pytest.raises(PassFailedException, match=_refusal("f16", 2, "arith.truncf") + "floats are f32 or f64"):
        NativeModule.compile(module)


@pytest.mark.parametrize("type", ["memref<?xui8>", "complex<f16>", "!anc.stack<i128>", "!rev.log<bf16>"])
def test_refused_inside_containers(type: str) -> None:
    scalar = not type.startswith(("memref", "!anc"))
    returned = ", %c : f64, " + type if scalar else " : f64"
    source = f"""rev.func @h(%y: f64, %c: {type}) {{
  rev.return %y{returned}
}}
"""
    module = parse_module(source, "types.mlir")
    with pytest.raises(PassFailedException, match=_refusal(type.replace("?", r"\?"), 1, "rev.func")):
        NativeModule.compile(module)


NARROW = "".join(
    _accumulate(type, name) for type, name in [("f32", "f32"), ("complex<f32>", "c64"), ("i8", "i8"), ("i16", "i16")]
)


@pytest.fixture(scope="module")
def engines() -> tuple[RevInterpreter, NativeModule]:
    module = parse_module(NARROW, "narrow.mlir")
    return RevInterpreter(module), NativeModule.compile(module)


def _as_f32(x: float) -> float:
    """C's conversion of a double to float (round to nearest, inf beyond)."""
    return ctypes.c_float(x).value


@pytest.mark.parametrize("big", [1e300, -1e300, 3.5e38, float("nan")])
def test_f32_arguments_beyond_range(engines: tuple[RevInterpreter, NativeModule], big: float) -> None:
    """An out-of-range double is the infinity C's conversion gives it (not
    NumPy's overflow warning, which the test configuration makes an error),
    for real and complex arguments, on both engines alike."""
    expected_real = _as_f32(big)
    for engine in engines:
        (y, x) = engine.call("f32", big, 0.0)
        assert repr(y) == repr(expected_real) and x == 0.0
        (cy, cx) = engine.call("c64", complex(big, -big), 0j)
        assert repr(cy) == repr(complex(expected_real, _as_f32(-big))) and cx == 0j


@pytest.mark.parametrize(("function", "width"), [("i8", 8), ("i16", 16)])
def test_narrow_integers_wrap_alike(engines: tuple[RevInterpreter, NativeModule], function: str, width: int) -> None:
    largest = 2 ** (width - 1) - 1
    interpreter, native = engines
    for y, x in [(largest, 1), (-largest - 1, -1), (largest, largest)]:
        expected = (_wrapped(y + x, width), x)
        assert interpreter.call(function, y, x) == expected
        assert native.call(function, y, x) == expected


def test_refused_at_a_declaration() -> None:
    """A declared C function has no body to define values: its type is
    checked."""
    source = """func.func private @clamp(f64) -> ui8
rev.func @k(%y: f64) {
  rev.return %y : f64
}
"""
    with pytest.raises(PassFailedException, match=_refusal("ui8", 1, "func.func") + "integers are signless"):
        NativeModule.compile(parse_module(source, "types.mlir"))
