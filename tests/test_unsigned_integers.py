"""Unsigned integers on the interpreter: a ``uiW`` value is the number
from 0 to 2^W - 1 that its bits mean, on arguments, results, arrays and the
range check of ``rev-run``; its arithmetic wraps modulo 2^W.  Native code
refuses unsigned types (docs/dialects.md), so the check against it runs
the same program over the signless ``iW`` of the same width: both engines
must leave the same bits, which the interpreter reads unsigned."""

from __future__ import annotations

import numpy as np
import pytest

from revmlir.errors import ExecutionError
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


SIGNED_OPS = ("cmpi slt,", "cmpi sle,", "cmpi sgt,", "cmpi sge,", "minsi", "maxsi", "floordivsi", "ceildivsi")
SIGNED_OPS += ("remsi", "shrsi", "divsi")


def _signed_ops(type: str) -> str:
    """One function per signed op: ``@opN`` xors ``x op k`` into ``y``, an
    ``i1`` for the comparisons."""
    functions = []
    for index, name in enumerate(SIGNED_OPS):
        result = "i1" if name.startswith("cmpi") else type
        functions.append(f"""rev.func @op{index}(%y: {result}, %x: {type}, %k: {type}) {{
  %r = arith.{name} %x, %k : {type}
  %y1 = rev.xor %y, %r : {result}
  rev.return %y1, %x, %k : {result}, {type}, {type}
}}""")
    return "\n".join(functions)


def _outcome(engine: RevInterpreter | NativeModule, function: str, *args: int) -> object:
    """The result, or the error's message without its location (the two
    modules' file names differ)."""
    try:
        return engine.call(function, *args)
    except ExecutionError as error:
        return str(error).split(": ", 1)[1]


@pytest.mark.parametrize("width", WIDTHS)
def test_signed_ops_read_unsigned_operands_as_twos_complement(width: int) -> None:
    """Each signed op on ``uiW`` operands gives the bits native code gives
    over ``iW``, errors included (a zero divisor, a shift out of range),
    for operands with the top bit set: 2^W - 1 is −1 as a divisor."""
    unsigned = RevInterpreter(parse_module(_signed_ops(f"ui{width}"), "unsigned.mlir"))
    native = NativeModule.compile(parse_module(_signed_ops(f"i{width}"), "signless.mlir"))
    operands = (0, 1, 7, width - 1, 2 ** (width - 1) - 1, 2 ** (width - 1), 2**width - 7, 2**width - 1)
    for index, name in enumerate(SIGNED_OPS):
        y = False if name.startswith("cmpi") else 0
        for x in operands:
            for k in operands:
                got = _outcome(unsigned, f"op{index}", y, x, k)
                expected = _outcome(native, f"op{index}", y, _signed(x, width), _signed(k, width))
                if isinstance(expected, tuple):
                    expected = (expected[0] if y is False else expected[0] % 2**width, x, k)
                else:  # a shift count is the number of its type
                    expected = expected.replace(f"count {_signed(k, width)} ", f"count {k} ")
                assert got == expected, (name, x, k)
    assert _outcome(unsigned, f"op{SIGNED_OPS.index('divsi')}", 0, 2**width - 6, 2**width - 1) == (
        6,
        2**width - 6,
        2**width - 1,
    )


def test_signless_i1_true_is_minus_one_on_both_engines() -> None:
    """A signed comparison reads an ``i1`` true as −1, as native code does:
    ``true < false``."""
    interpreter = RevInterpreter(parse_module(_signed_ops("i1"), "interpreted.mlir"))
    native = NativeModule.compile(parse_module(_signed_ops("i1"), "native.mlir"))
    for index, name in enumerate(SIGNED_OPS[:4]):
        for x in (False, True):
            for k in (False, True):
                assert interpreter.call(f"op{index}", False, x, k) == native.call(f"op{index}", False, x, k), name
    assert interpreter.call("op0", False, True, False) == (True, True, False)


BITCASTS = (("i32", "f32"), ("f32", "i32"), ("i64", "f64"), ("f64", "i64"))


def _bitcasts(pairs: tuple[tuple[str, str], ...]) -> str:
    """``@castN`` adds ``bitcast x`` to ``y`` for the Nth (from, to) pair:
    a float ``y`` of −0.0 leaves every bit of the result, zeros' signs and
    NaN payloads included."""
    functions = []
    for index, (source, target) in enumerate(pairs):
        add = "rev.add" if target.startswith(("f", "bf")) else "rev.xor"
        functions.append(f"""rev.func @cast{index}(%y: {target}, %x: {source}) {{
  %r = arith.bitcast %x : {source} to {target}
  %y1 = {add} %y, %r : {target}
  rev.return %y1, %x : {target}, {source}
}}""")
    return "\n".join(functions)


def _patterns(width: int) -> list[int]:
    """Bit patterns: zero, 5 (a subnormal float), one, −0.0, infinity, a
    quiet NaN with a payload, the top bit alone and all bits."""
    fraction = {32: 23, 64: 52}[width]
    exponent = (1 << (width - 1 - fraction)) - 1
    one, infinity = exponent >> 1 << fraction, exponent << fraction
    top = 1 << (width - 1)
    return [0, 5, one, top, infinity, infinity | 1 << (fraction - 1) | 3, top | one, 2**width - 1]


def _as_float(bits: int, width: int) -> float:
    """The float of ``bits``, computed apart from the engines."""
    return float(np.array(bits, dtype=f"uint{width}").view(f"float{width}").item())


def _bits(value: float | int, type: str) -> int:
    """The bits of ``value`` as a ``type``, computed apart from the engines."""
    kind = "float" if type.startswith("f") else "int"
    return int(np.array(value, dtype=f"{kind}{type[1:]}").view(f"uint{type[1:]}").item())


def test_bitcast_is_width_correct_and_agrees_with_native_code() -> None:
    """``bitcast`` reads the bits at the operand's width: ``i32`` 5 is the
    subnormal ``f32`` of those bits (not 0.0, as a 64-bit reading gave),
    and floats back to integers give the same bits, on both engines."""
    interpreter = RevInterpreter(parse_module(_bitcasts(BITCASTS), "interpreted.mlir"))
    native = NativeModule.compile(parse_module(_bitcasts(BITCASTS), "native.mlir"))
    for index, (source, target) in enumerate(BITCASTS):
        width = int(source[1:])
        for bits in _patterns(width):
            x = _signed(bits, width) if source.startswith("i") else _as_float(bits, width)
            y = -0.0 if target.startswith("f") else 0
            got, expected = interpreter.call(f"cast{index}", y, x), native.call(f"cast{index}", y, x)
            assert _bits(got[0], target) == _bits(expected[0], target) == bits, (source, target, bits)
            assert _bits(got[1], source) == _bits(expected[1], source) == bits


def test_bitcast_of_unsigned_integers_beyond_the_signed_range() -> None:
    """A ``ui64`` of 2^63 or more casts to the ``f64`` of its bits, and
    back: the number from 0 that the bits mean."""
    pairs = (("ui64", "f64"), ("f64", "ui64"), ("ui32", "f32"))
    interpreter = RevInterpreter(parse_module(_bitcasts(pairs), "unsigned.mlir"))
    for bits in (2**63, 2**63 + 5, 2**64 - 1):
        assert _bits(interpreter.call("cast0", -0.0, bits)[0], "f64") == bits
        assert interpreter.call("cast1", 0, _as_float(bits, 64))[0] == bits
    assert _bits(interpreter.call("cast2", -0.0, 2**31 + 5)[0], "f32") == 2**31 + 5


def test_bitcast_between_integers_at_widths_numpy_lacks() -> None:
    """Between integer types the bits are kept at any width (``i24``,
    ``i128``: numpy has no type for them) and read with the target's
    signedness."""
    pairs = (("i24", "ui24"), ("ui128", "i128"), ("ui24", "i24"))
    interpreter = RevInterpreter(parse_module(_bitcasts(pairs), "widths.mlir"))
    assert interpreter.call("cast0", 0, -1)[0] == 2**24 - 1
    assert interpreter.call("cast1", 0, 2**127 + 3)[0] == -(2**127) + 3
    assert interpreter.call("cast2", 0, 2**23)[0] == -(2**23)


def _count(type: str) -> str:
    """``@count``: y += 1 for each i from 0 below n, i and n of ``type``
    (its bounds cast from ``index``: ``arith.constant`` takes no ``ui8``)."""
    return f"""rev.func @count(%y: {type}, %n: {type}) {{
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %c0 = arith.index_cast %i0 : index to {type}
  %c1 = arith.index_cast %i1 : index to {type}
  %r = rev.for %c0 to %n step %c1 : {type} (%y) : {type} {{
  ^bb0(%i: {type}, %acc: {type}):
    %acc1 = rev.inc %acc : {type}
    rev.yield %acc1 : {type}
  }}
  rev.return %r, %n : {type}, {type}
}}"""


def test_loop_bounds_compare_with_their_signedness() -> None:
    """A loop to a ``ui8`` 200 runs 200 times on the interpreter; over
    ``i8`` the same bits are −56 and the loop runs none, on both engines,
    and an ``i8`` loop compiles natively (it polls on a 64-bit count of iterations)."""
    assert RevInterpreter(parse_module(_count("ui8"), "unsigned.mlir")).call("count", 0, 200) == (200, 200)
    interpreter = RevInterpreter(parse_module(_count("i8"), "interpreted.mlir"))
    native = NativeModule.compile(parse_module(_count("i8"), "native.mlir"))
    for n in (-56, 0, 5, 127):
        assert interpreter.call("count", 0, n) == native.call("count", 0, n) == (max(n, 0), n)


def test_bitcast_to_bf16_is_a_located_error() -> None:
    """numpy has no ``bf16``, so the interpreter refuses the cast at its op
    (native code refuses the type)."""
    interpreter = RevInterpreter(parse_module(_bitcasts((("i16", "bf16"),)), "bf16.mlir"))
    with pytest.raises(
        ExecutionError, match=r"bf16.mlir:2:3: 'arith.bitcast' in @cast0: .* cannot bitcast i16 to bf16"
    ):
        interpreter.call("cast0", -0.0, 5)
