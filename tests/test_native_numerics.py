"""Numerics that native code and the interpreter must share (issue 16):
complex division without spurious overflow, complex exp/pow with the same
finite or infinite outcome on both engines, ``math.fpowi`` without a
compiler-runtime call, and every op the lowering translates run natively
and compared with the interpreter.

References are independent where one exists: exact rational arithmetic
(``fractions``) for division and integer powers."""

import cmath
import math
import re
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import PassFailedException

import revmlir as rv
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.lowering.std_to_llvm import RUNTIME_LIBRARY, translates
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime.jit import emit_assembly
from revmlir.runtime.native import NativeModule, lower_to_llvm_ir

EPS = 2.0**-52
rng = np.random.default_rng(16)


def engines(source: str):
    module = parse_module(source, "numerics.mlir")
    return RevInterpreter(module), NativeModule.compile(module)


BINARY = """
rev.func @f(%y: complex<f64>, %a: complex<f64>, %b: complex<f64>) {{
  %t = complex.{op} %a, %b : complex<f64>
  %y1 = rev.add %y, %t : complex<f64>
  rev.return %y1, %a, %b : complex<f64>, complex<f64>, complex<f64>
}}"""


def exact_quotient(a: complex, b: complex) -> tuple[Fraction, Fraction]:
    ar, ai, br, bi = (Fraction(v) for v in (a.real, a.imag, b.real, b.imag))
    size = br * br + bi * bi
    return (ar * br + ai * bi) / size, (ai * br - ar * bi) / size


def normwise_error(got: complex, exact: tuple[Fraction, Fraction]) -> float:
    """|got − exact| / |exact|, in exact arithmetic."""
    dr, di = Fraction(got.real) - exact[0], Fraction(got.imag) - exact[1]
    return math.sqrt(float((dr * dr + di * di) / (exact[0] ** 2 + exact[1] ** 2)))


def exact_power(z: complex, n: int) -> tuple[Fraction, Fraction]:
    """z^n in exact rational arithmetic."""
    exact = (Fraction(z.real), Fraction(z.imag))
    power = (Fraction(1), Fraction(0))
    for _ in range(abs(n)):
        power = (power[0] * exact[0] - power[1] * exact[1], power[0] * exact[1] + power[1] * exact[0])
    if n < 0:
        size = power[0] ** 2 + power[1] ** 2
        power = (power[0] / size, -power[1] / size)
    return power


def probes(count: int) -> list[tuple[complex, complex]]:
    """Pairs with parts between 10⁻²⁰⁰ and 10²⁰⁰ in size, any signs, whose
    quotient is a normal float: half of them once overflowed or underflowed
    in (a·conj b)/|b|²."""
    pairs = []
    while len(pairs) < count:
        a, b = (complex(*(rng.choice([-1, 1], 2) * 10.0 ** rng.uniform(-200, 200, 2))) for _ in range(2))
        if 1e-290 < abs(a) / abs(b) < 1e290:
            pairs.append((a, b))
    return pairs


def test_complex_division_is_smiths_on_both_engines():
    """900 probes: both engines give the same bits, finite wherever the
    quotient is, within 3 ε (normwise) of the exact rational quotient."""
    interpreter, native = engines(BINARY.format(op="div"))
    worst = 0.0
    for a, b in [((1 + 1j), (1e-200 + 1e-200j)), *probes(899)]:
        got = native.call("f", 0j, a, b)[0]
        assert got == interpreter.call("f", 0j, a, b)[0], (a, b)
        assert cmath.isfinite(got), (a, b, got)
        worst = max(worst, normwise_error(got, exact_quotient(a, b)))
    assert worst <= 3 * EPS, worst
    assert native.call("f", 0j, 1 + 1j, 1e-200 + 1e-200j)[0] == 1e200


def test_complex_division_by_zero_gives_infinities_on_both_engines():
    interpreter, native = engines(BINARY.format(op="div"))
    for a, expected in ((1 - 2j, (math.inf, -math.inf)), (0j, (math.nan, math.nan)), (3 + 0j, (math.inf, math.nan))):
        for engine in (interpreter, native):
            got = engine.call("f", 0j, a, 0j)[0]
            for part, want in zip((got.real, got.imag), expected, strict=True):
                assert (math.isnan(part) and math.isnan(want)) or part == want, (engine, a, got)


def test_integer_powers_are_accurate_and_agree():
    """z^n for integer n, |n| < 100, by squaring: within 40 ε of the exact
    rational power (exp(n log z) was off by |n log|z|| ulps, hundreds), the
    same bits on both engines."""
    interpreter, native = engines(BINARY.format(op="pow"))
    worst = 0.0
    for _ in range(60):
        z = complex(*rng.uniform(-3.0, 3.0, 2))
        n = int(rng.integers(-99, 100))
        if abs(z) ** n > 1e300 or abs(z) ** n < 1e-300 or n == 0:
            continue
        got = native.call("f", 0j, z, complex(n))[0]
        assert got == interpreter.call("f", 0j, z, complex(n))[0], (z, n)
        worst = max(worst, normwise_error(got, exact_power(z, n)))
    assert worst <= 40 * EPS, worst


def test_general_powers_agree_within_their_conditioning():
    """exp(w log z) where w is not a small integer: an error of ε in log z
    is one of |w log z| ε in the result, on both engines."""
    interpreter, native = engines(BINARY.format(op="pow"))
    for z in (2 + 0j, -1.5 + 0.5j, 0.25j, 3 - 4j, 1e-3 + 2e-3j, 40 - 30j):
        for w in (0.5 - 1j, 1j, 2.5 + 0.5j, 150 + 0j, -120.5 + 0j, 1e-8 + 0j):
            with np.errstate(all="ignore"):
                expected = interpreter.call("f", 0j, z, w)[0]
            got = native.call("f", 0j, z, w)[0]
            if cmath.isfinite(expected):
                condition = max(1.0, abs(w * cmath.log(z)))
                assert abs(got - expected) <= 8 * EPS * condition * abs(expected), (z, w, got, expected)
            else:
                same_outcome(expected, got, 0.0)


UNARY = """
rev.func @f(%y: complex<f64>, %z: complex<f64>) {{
  %t = complex.{op} %z : complex<f64>
  %y1 = rev.add %y, %t : complex<f64>
  rev.return %y1, %z : complex<f64>, complex<f64>
}}"""


def same_outcome(expected: complex, got: complex, tolerance: float) -> None:
    for e, g in ((expected.real, got.real), (expected.imag, got.imag)):
        if math.isinf(e) or math.isnan(e):
            assert e == g or (math.isnan(e) and math.isnan(g)), (expected, got)
        else:
            assert abs(g - e) <= tolerance * abs(expected), (expected, got)


@pytest.mark.parametrize(
    "z, expected",
    [
        (1e200 + 0j, complex(math.inf, 0.0)),
        (1000 + 0j, complex(math.inf, 0.0)),
        (1e200 + 1j, complex(math.inf, math.inf)),
        (1e200 + 2j, complex(-math.inf, math.inf)),
        (710 + 1.5707963j, complex(5.985965873079827e300, math.inf)),
        (709.5 + 3j, None),
        (-1e200 + 1j, 0j),
        (2 + 700j, None),
    ],
)
def test_complex_exp_overflows_to_the_same_infinities(z, expected):
    """cmath raises where a part overflows; both engines give the C
    library's infinities instead (a real argument keeps its zero imaginary
    part), and the same finite values elsewhere, also past e^709 where only
    the scaled product is finite."""
    interpreter, native = engines(UNARY.format(op="exp"))
    reference = interpreter.call("f", 0j, z)[0]
    if expected is None:
        expected = cmath.exp(z)
    same_outcome(expected, reference, 4 * EPS)
    same_outcome(expected, native.call("f", 0j, z)[0], 4 * EPS)


@pytest.mark.parametrize("op", ["sin", "cos", "tan", "tanh"])
def test_complex_functions_overflow_without_an_error_on_both_engines(op):
    interpreter, native = engines(UNARY.format(op=op))
    for z in (1e150 + 1e150j, 3 + 800j, 800 + 3j):
        same_outcome(interpreter.call("f", 0j, z)[0], native.call("f", 0j, z)[0], 1e-13)


FPOWI = """
rev.func @f(%y: f64, %a: f64, %b: i32) {
  %t = math.fpowi %a, %b : f64, i32
  %e = math.exp %a : f64
  %s = arith.addf %t, %e : f64
  %y1 = rev.add %y, %s : f64
  rev.return %y1, %a, %b : f64, f64, i32
}"""


def test_fpowi_runs_natively_beside_other_library_calls():
    """``math.fpowi`` once became a call of the unresolved ``__powidf2``,
    which crashed the process (and broke ``exp`` in the same module): run
    in a child process so that a crash fails this test."""
    script = f"""
import math
from revmlir.parsing import parse_module
from revmlir.interpreter import RevInterpreter
from revmlir.runtime.jit import emit_assembly
from revmlir.runtime.native import NativeModule, lower_to_llvm_ir
module = parse_module('''{FPOWI}''', "fpowi.mlir")
native, interpreter = NativeModule.compile(module), RevInterpreter(module)
for a in (1.5, -2.0, 0.5, 0.0, 10.0):
    for b in (0, 1, 3, -2, 17, -7, 400, -400):
        got, want = native.call("f", 0.0, a, b)[0], interpreter.call("f", 0.0, a, b)[0]
        assert got == want or (math.isinf(want) and got == want), (a, b, got, want)
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", (result.returncode, result.stderr[-2000:])


def test_an_unresolvable_external_function_is_an_error_not_a_crash():
    from revmlir.runtime.jit import UnresolvedSymbolError, jit

    text = """
declare double @no_such_function(double)
define double @f(double %x) {
  %y = call double @no_such_function(double %x)
  ret double %y
}"""
    with pytest.raises(UnresolvedSymbolError, match="no_such_function"):
        jit(text)


@pytest.mark.parametrize("name, op", [("exp", "math.exp"), ("tanh", "math.tanh"), ("hypot", "math.sin")])
def test_a_function_named_like_a_library_function_it_calls_is_refused(name, op):
    """``@exp`` calling ``math.exp`` bound the library call to itself and
    recursed until the process crashed; ``@tanh`` (a libm declaration)
    failed inside llvmlite.  A located diagnostic instead; other names run."""
    source = f"""
rev.func @{name}(%y: f64, %z: f64) {{
  %t = {op} %z : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %z : f64, f64
}}"""
    module = parse_module(source, "named.mlir")
    if name == "hypot":
        assert NativeModule.compile(module).call(name, 0.0, 1.0)[0] == math.sin(1.0)
        return
    with pytest.raises(
        PassFailedException, match=rf"named.mlir:2:1: @{name} is named like a C library function native code calls"
    ):
        NativeModule.compile(module)


MATH_LLVM_MAKES = {
    "sincos": "%s = math.sin %a : {t}\n  %c = math.cos %a : {t}\n  %v = arith.mulf %s, %c : {t}",
    "exp2": "%two = arith.constant 2.0 : {t}\n  %v = math.powf %two, %a : {t}",
    "ldexp": "%two = arith.constant 2.0 : {t}\n  %v = math.fpowi %two, %n : {t}, i32",
}
"""Per libm function LLVM makes of the code's math, code it makes it of."""


def _user(name: str, type: str, user: str = "user") -> str:
    """A function ``@<user>`` whose code LLVM makes a call of ``name``
    (``f`` added for ``f32``) of."""
    return f"""
rev.func @{user}(%y: {type}, %a: {type}, %n: i32) {{
  {MATH_LLVM_MAKES[name].format(t=type)}
  %y1 = rev.add %y, %v : {type}
  rev.return %y1, %a, %n : {type}, {type}, i32
}}"""


@pytest.mark.parametrize("type", ["f64", "f32"])
@pytest.mark.parametrize("name", sorted(MATH_LLVM_MAKES))
def test_a_function_named_like_the_math_llvm_makes_runs(name: str, type: str):
    """LLVM calls ``sincos`` for a ``sin`` and a ``cos`` of one operand,
    ``exp2`` for ``pow(2.0, x)``, ``ldexp`` for ``pow(2.0, n)``: the
    module's function of that name ran in their place (``@sincos`` crashed
    the process), then was refused.  It gets a symbol of its own: run
    alone, called beside a function whose code makes the math, uncalled
    (the backward module then calls the forward one's), and backwards,
    natively as on the interpreter."""
    symbol = name + ("f" if type == "f32" else "")
    named = f"rev.func @{symbol}(%y: {type}, %a: {type}) {{\n  %y1 = rev.add %y, %a : {type}\n"
    named += f"  rev.return %y1, %a : {type}, {type}\n}}"
    caller = f"""
rev.func @both(%y: {type}, %a: {type}, %n: i32) {{
  %y1, %a1 = rev.call @{symbol}(%y, %a) : ({type}, {type}) -> ({type}, {type})
  %y2, %a2, %n2 = rev.call @user(%y1, %a1, %n) : ({type}, {type}, i32) -> ({type}, {type}, i32)
  rev.return %y2, %a2, %n2 : {type}, {type}, i32
}}"""
    undo = f"""
rev.func @undo(%y: {type}, %a: {type}) {{
  %y1, %a1 = rev.uncall @{symbol}(%y, %a) : ({type}, {type}) -> ({type}, {type})
  rev.return %y1, %a1 : {type}, {type}
}}"""
    module = parse_module(named + _user(name, type) + caller + undo, "named.mlir")
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    math_value = {"sincos": math.sin(0.5) * math.cos(0.5), "exp2": 2.0**0.5, "ldexp": 2.0**-3}[name]
    assert interpreter.call("user", 0.0, 0.5, -3)[0] == pytest.approx(math_value, rel=1e-6)
    called = ((symbol, (1.0, 0.5)), ("user", (0.0, 0.5, -3)), ("both", (1.0, 0.5, -3)), ("undo", (1.0, 0.5)))
    for function, args in called:
        expected = interpreter.call(function, *args)
        assert native.call(function, *args) == pytest.approx(expected, rel=1e-6)
        assert native.uncall(function, *expected) == pytest.approx(interpreter.uncall(function, *expected), rel=1e-6)
    assert native.call("both", 1.0, 0.5, -3)[0] == pytest.approx(1.5 + math_value, rel=1e-6)
    assert f"revmlir.fn.{symbol}" in native.llvm_ir


def test_the_math_llvm_makes_is_all_known():
    """Every C function the host's code for these calls is one a function
    of the module may not be named or is named apart (``RUNTIME_LIBRARY``,
    whose ``CODE_GENERATED_MATH`` get ``own_symbol``'s, or libm's function
    of the math the code computes): what the optimizer makes of ``pow``,
    ``sin`` and ``cos`` is found here if LLVM makes another.  Which calls
    it makes depends on the host's processor (with AVX-512, ``ldexp`` is
    the instruction ``vscalefsd``), so the test asks only that it makes
    some, and that each is one of those."""
    users = [_user(name, type, f"{name}_{type}") for name in MATH_LLVM_MAKES for type in ("f64", "f32")]
    llvm_ir = lower_to_llvm_ir(parse_module("".join(users)), None).llvm_ir
    called = set(re.findall(r"\b(?:call|jmp)q?\s+([A-Za-z_][\w.]*)@PLT", emit_assembly(llvm_ir)))
    math_called = {f"{base}{suffix}" for base in re.findall(r"@\"?llvm\.(\w+)\.f", llvm_ir) for suffix in ("", "f")}
    assert called & {name + suffix for name in MATH_LLVM_MAKES for suffix in ("", "f")}, called
    assert called - RUNTIME_LIBRARY - math_called == set()


# -- every op the lowering translates -----------------------------------------

SIGNATURE = "%a: f64, %b: f64, %c: f64, %i: i64, %j: i64, %z: complex<f64>, %w: complex<f64>"
ARGUMENTS = (0.7, -1.3, 2.5, -7, 3, 0.3 - 1.2j, -2 + 0.5j)
ZERO = {"f64": 0.0, "i64": 0, "complex<f64>": 0j}

FLOAT_BINARY = [
    "arith.addf",
    "arith.subf",
    "arith.mulf",
    "arith.divf",
    "arith.maximumf",
    "arith.minimumf",
    "arith.maxnumf",
    "arith.minnumf",
    "math.atan2",
    "math.powf",
    "math.copysign",
    "math.hypot",
    "arith.remf",
]
FLOAT_UNARY = [
    "arith.negf",
    "math.absf",
    "math.acos",
    "math.asin",
    "math.asinh",
    "math.atan",
    "math.atanh",
    "math.cbrt",
    "math.ceil",
    "math.cos",
    "math.cosh",
    "math.erf",
    "math.exp",
    "math.exp2",
    "math.expm1",
    "math.floor",
    "math.log",
    "math.log10",
    "math.log1p",
    "math.log2",
    "math.round",
    "math.roundeven",
    "math.rsqrt",
    "math.sin",
    "math.sinh",
    "math.sqrt",
    "math.tan",
    "math.tanh",
    "math.trunc",
]
INT_BINARY = [
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.divsi",
    "arith.divui",
    "arith.remsi",
    "arith.remui",
    "arith.floordivsi",
    "arith.ceildivsi",
    "arith.maxsi",
    "arith.minsi",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.shli",
    "arith.shrsi",
    "arith.shrui",
    "math.ipowi",
    "arith.ceildivui",
    "arith.maxui",
    "arith.minui",
]
COMPLEX_BINARY = ["complex.add", "complex.sub", "complex.mul", "complex.div", "complex.pow"]
COMPLEX_UNARY = [
    "complex.exp",
    "complex.log",
    "complex.sqrt",
    "complex.sin",
    "complex.cos",
    "complex.tan",
    "complex.tanh",
    "complex.expm1",
    "complex.log1p",
    "complex.rsqrt",
    "complex.sign",
    "complex.neg",
    "complex.conj",
]
COMPLEX_TO_FLOAT = ["complex.abs", "complex.angle", "complex.re", "complex.im"]

EXPRESSIONS: dict[str, tuple[str, str]] = {
    **{op: (f"%t = {op} %a, %b : f64", "f64") for op in FLOAT_BINARY},
    **{op: (f"%t = {op} %a : f64", "f64") for op in FLOAT_UNARY},
    **{op: (f"%t = {op} %i, %j : i64", "i64") for op in INT_BINARY},
    **{op: (f"%t = {op} %z, %w : complex<f64>", "complex<f64>") for op in COMPLEX_BINARY},
    **{op: (f"%t = {op} %z : complex<f64>", "complex<f64>") for op in COMPLEX_UNARY},
    **{op: (f"%t = {op} %z : complex<f64>", "f64") for op in COMPLEX_TO_FLOAT},
    "math.acosh": ("%t = math.acosh %c : f64", "f64"),
    "math.fma": ("%t = math.fma %a, %b, %c : f64", "f64"),
    "math.absi": ("%t = math.absi %i : i64", "i64"),
    "math.fpowi": ("%n = arith.trunci %j : i64 to i32\n%t = math.fpowi %b, %n : f64, i32", "f64"),
    "arith.constant": ("%t = arith.constant 2.5 : f64", "f64"),
    "arith.cmpf": ("%p = arith.cmpf olt, %a, %b : f64\n%t = arith.extui %p : i1 to i64", "i64"),
    "arith.cmpi": ("%p = arith.cmpi slt, %i, %j : i64\n%t = arith.extui %p : i1 to i64", "i64"),
    "arith.select": ("%p = arith.cmpf ogt, %a, %b : f64\n%t = arith.select %p, %a, %b : f64", "f64"),
    "arith.bitcast": ("%t = arith.bitcast %b : f64 to i64", "i64"),
    "arith.truncf": ("%h = arith.truncf %b : f64 to f32\n%t = arith.extf %h : f32 to f64", "f64"),
    "arith.trunci": ("%s = arith.trunci %i : i64 to i32\n%t = arith.extsi %s : i32 to i64", "i64"),
    "arith.extui": ("%s = arith.trunci %i : i64 to i32\n%t = arith.extui %s : i32 to i64", "i64"),
    "arith.fptosi": ("%t = arith.fptosi %b : f64 to i64", "i64"),
    "arith.sitofp": ("%t = arith.sitofp %i : i64 to f64", "f64"),
    "arith.uitofp": ("%t = arith.uitofp %i : i64 to f64", "f64"),
    "arith.fptoui": ("%t = arith.fptoui %b : f64 to i64", "i64"),
    "math.ctpop": ("%t = math.ctpop %i : i64", "i64"),
    "ub.poison": ("%p = ub.poison : i64\n%t = arith.addi %p, %i : i64", "i64"),
    "arith.index_cast": ("%s = arith.index_cast %i : i64 to index\n%t = arith.index_cast %s : index to i64", "i64"),
    "complex.create": ("%t = complex.create %a, %b : complex<f64>", "complex<f64>"),
    "complex.constant": ("%t = complex.constant [1.5, -2.0] : complex<f64>", "complex<f64>"),
    "complex.eq": ("%p = complex.eq %z, %w : complex<f64>\n%t = arith.extui %p : i1 to i64", "i64"),
    "complex.neq": ("%p = complex.neq %z, %w : complex<f64>\n%t = arith.extui %p : i1 to i64", "i64"),
}
"""One expression per pure op, computing ``%t`` from the arguments."""

STRUCTURE = """
rev.func @callee(%s: f64, %n: index) {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1 : index
  %two = arith.constant 2 : index
  %stack = anc.stack_alloc : !anc.stack<f64>
  %held = anc.alloc %zero : f64
  %h1 = rev.add %held, %s : f64
  anc.push %stack, %h1 : !anc.stack<f64>
  %h2 = anc.pop %stack : !anc.stack<f64>
  %h3 = rev.sub %h2, %s : f64
  anc.free %h3, %zero : f64
  anc.stack_free %stack : !anc.stack<f64>
  %c0 = arith.constant 0 : index
  %s2 = rev.for %c0 to %n step %one : index (%s) : f64 {
  ^bb0(%k: index, %acc: f64):
    %scratch = anc.array_alloc(%n) : memref<?xf64>
    anc.array_free %scratch(%n) : memref<?xf64>
    %kf = arith.index_cast %k : index to i64
    %kr = arith.sitofp %kf : i64 to f64
    %acc2 = rev.add %acc, %kr : f64
    rev.yield %acc2 : f64
  }
  %three = arith.constant 3 : index
  %half = arith.constant 0.5 : f64
  %counter = anc.alloc %c0 : index
  %s3, %counted = rev.while (%s2, %counter) : f64, index pre {
  ^bb0(%ps: f64, %pc: index):
    %more = arith.cmpi ult, %pc, %three : index
    rev.cond %more
  } post {
  ^bb0(%qs: f64, %qc: index):
    %started = arith.cmpi ne, %qc, %c0 : index
    rev.cond %started
  } do {
  ^bb0(%ws: f64, %wc: index):
    %ws2 = rev.add %ws, %half : f64
    %wc2 = rev.add %wc, %one : index
    rev.yield %ws2, %wc2 : f64, index
  }
  %uncounted = rev.sub %counted, %three : index
  anc.free %uncounted, %c0 : index
  rev.return %s3, %n : f64, index
}

rev.func @f(%y: f64, %m: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %ten = arith.constant 10.0 : f64
  %size = memref.dim %m, %c0 : memref<?xf64>
  %y2 = rev.for %c0 to %size step %c1 : index (%y) : f64 {
  ^bb0(%k: index, %acc: f64):
    %e = rev.take %m[%k] : memref<?xf64>
    %positive = rev.if (%e) : f64 pre {
    ^bb0(%v: f64):
      %p = arith.cmpf ogt, %v, %zero : f64
      rev.cond %p
    } then {
    ^bb0(%v: f64):
      %v2 = rev.add %v, %ten : f64
      rev.yield %v2 : f64
    } else {
    ^bb0(%v: f64):
      rev.yield %v : f64
    } post {
    ^bb0(%v: f64):
      %p = arith.cmpf ogt, %v, %ten : f64
      rev.cond %p
    }
    rev.put %positive, %m[%k] : memref<?xf64>
    %x = memref.load %m[%k] : memref<?xf64>
    %acc2 = rev.add %acc, %x : f64
    rev.yield %acc2 : f64
  }
  %quarter = arith.constant 0.25 : f64
  rev.for parallel %c0 to %size step %c1 : index () {
  ^bb0(%k: index):
    %first = rev.take %m[%c0] : memref<?xf64>
    %first2 = rev.add %first, %quarter : f64
    rev.put %first2, %m[%c0] : memref<?xf64>
    rev.yield
  }
  %count = anc.alloc %size : index
  %y3, %count2 = rev.call @callee(%y2, %count) : (f64, index) -> (f64, index)
  anc.free %count2, %size : index
  rev.return %y3 : f64
}
"""
"""Control flow (a parallel loop with a shared accumulation too), calls,
stacks, arrays in the frame and on the heap: what rev-lower-to-std emits
them as (func, scf, memref)."""


def expression_program(op: str) -> str:
    body, type = EXPRESSIONS[op]
    return f"""
rev.func @f(%y: {type}, {SIGNATURE}) {{
  {body}
  %y1 = rev.add %y, %t : {type}
  rev.return %y1, %a, %b, %c, %i, %j, %z, %w : {type}, f64, f64, f64, i64, i64, complex<f64>, complex<f64>
}}"""


def lowered_op_names(source: str) -> set[str]:
    """The std-level ops native code is translated from (as the native
    backend lowers: inverses included, each check one ``revmlir.check``)."""
    ctx = make_context()
    module = parse_module(source, "numerics.mlir", ctx)
    RevInvertPass().apply(ctx, module)
    lower_to_std(module, check_ops=True)
    return {op.name for op in module.walk()}


def agree(expected, got) -> bool:
    if isinstance(expected, np.ndarray):
        return bool(np.allclose(got, expected, rtol=1e-15, atol=0))
    if isinstance(expected, int):
        return got == expected
    both_nan = cmath.isnan(expected) and cmath.isnan(got)
    if isinstance(expected, float):  # the same C library calls: bit for bit
        return both_nan or expected == got
    return both_nan or expected == got or abs(got - expected) <= 2 * EPS * abs(expected)


@pytest.mark.parametrize("op", sorted(EXPRESSIONS))
def test_op_runs_natively_like_the_interpreter(op):
    source = expression_program(op)
    interpreter, native = engines(source)
    args = (ZERO[EXPRESSIONS[op][1]], *ARGUMENTS)
    with np.errstate(all="ignore"):
        expected = interpreter.call("f", *args)
    got = native.call("f", *args)
    assert all(agree(e, g) for e, g in zip(expected, got, strict=True)), (expected, got)


def test_control_flow_calls_and_memory_run_natively_like_the_interpreter():
    interpreter, native = engines(STRUCTURE)
    m = np.array([1.5, -2.0, 0.25, -4.0])
    expected, got = interpreter.call("f", 0.0, m.copy()), native.call("f", 0.0, m.copy())
    assert expected[0] == got[0] == 15.75 + 6.0 + 1.5
    np.testing.assert_array_equal(got[1], expected[1])
    backward = native.uncall("f", *got)
    assert backward[0] == 0.0
    np.testing.assert_array_equal(backward[1], m)


UNSTRUCTURED = {"cf.br", "cf.cond_br", "cf.assert"}
"""Ops only upstream's std IR brings (reversible code is structured): the
branches run natively against the interpreter and upstream's mlir-runner in
tests/test_std_interop.py and tests/test_upstream_mlir.py, a failed
``cf.assert`` in test_a_failed_assertion_is_a_located_error_not_a_trap."""


HOST_SAFETY_ONLY = {"memref.cast"}
"""Ops only ``rev-host-safety`` makes (native code only): the cast of a
large static ``memref.alloca`` made at a function's entry, run against the
interpreter in tests/test_native_safety.py (a static 60 000-element
alloca), refused in any other use in tests/test_std_interop.py."""


def test_every_op_the_lowering_translates_is_run_above():
    """A new entry of std_to_llvm's translation table needs a program here."""
    covered = set().union(
        lowered_op_names(STRUCTURE), *(lowered_op_names(expression_program(op)) for op in EXPRESSIONS)
    )
    missing = sorted({op.name for op in translates.rules} - covered - UNSTRUCTURED - HOST_SAFETY_ONLY)
    assert not missing, f"no native-vs-interpreter program runs {missing}"


LIBM = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "cbrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
]


def libm_program() -> str:
    """``y[k, i] += fn_k(x[i])`` for every function of the C math library
    native code calls, and ``powf``/``atan2``/``hypot``/``fmod``/``fma``
    of neighbours."""
    lines = []
    for k, name in enumerate([*LIBM, "powf", "atan2", "hypot", "fma", "remf"]):
        if name == "fma":
            call = f"%t{k} = math.fma %v, %w, %v : f64"
        elif name == "remf":
            call = f"%t{k} = arith.remf %v, %w : f64"
        elif name in ("powf", "atan2", "hypot"):
            call = f"%t{k} = math.{name} %v, %w : f64"
        else:
            call = f"%t{k} = math.{name} %v : f64"
        lines.append(f"""    %k{k} = arith.constant {k} : index
    {call}
    %o{k} = rev.take %y[%k{k}, %i] : memref<?x?xf64>
    %p{k} = rev.add %o{k}, %t{k} : f64
    rev.put %p{k}, %y[%k{k}, %i] : memref<?x?xf64>""")
    body = "\n".join(lines)
    return f"""
rev.func @f(%y: memref<?x?xf64>, %x: memref<?xf64>, %z: memref<?xf64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  rev.for %c0 to %n step %c1 : index () {{
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<?xf64>
    %w = memref.load %z[%i] : memref<?xf64>
{body}
    rev.yield
  }}
  rev.return
}}"""


def test_the_c_math_library_gives_both_engines_the_same_bits():
    """numpy's vectorised tanh, sin, exp … differ from the C library native
    code calls by an ulp on some inputs; a generated program once failed its
    ``anc.free`` check with 2.7565340039709767e-16 natively and
    2.756534003970976e-16 in the interpreter.  Every value must be equal."""
    interpreter, native = engines(libm_program())
    x = np.concatenate(
        [
            rng.uniform(-1.0, 1.0, 150),
            rng.normal(0.0, 30.0, 100),
            10.0 ** rng.uniform(-300, 2, 50),
            [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -3.616943308477426e-16],
        ]
    )
    z = rng.uniform(-3.0, 3.0, len(x))
    y = np.zeros((len(LIBM) + 5, len(x)))
    with np.errstate(all="ignore"):
        expected = interpreter.call("f", y.copy(), x, z)[0]
    got = native.call("f", y.copy(), x, z)[0]
    np.testing.assert_array_equal(got, expected)


EDGES = """
rev.func @f(%low: f64, %high: f64, %rounded: f64, %a: f64, %b: f64) {
  %min = arith.minimumf %a, %b : f64
  %max = arith.maximumf %a, %b : f64
  %round = math.round %a : f64
  %low1 = rev.add %low, %min : f64
  %high1 = rev.add %high, %max : f64
  %rounded1 = rev.add %rounded, %round : f64
  rev.return %low1, %high1, %rounded1, %a, %b : f64, f64, f64, f64, f64
}"""


NAN = math.nan


@pytest.mark.parametrize(
    "a, b, low, high, rounded",
    [
        (0.0, -0.0, -0.0, 0.0, 0.0),
        (-0.0, 0.0, -0.0, 0.0, -0.0),
        (-0.3, 0.0, -0.3, 0.0, -0.0),
        (0.49999999999999994, 1.0, 0.49999999999999994, 1.0, 0.0),
        (2.0**52 + 1, 0.0, 0.0, 2.0**52 + 1, 2.0**52 + 1),
        (-2.5, NAN, NAN, NAN, -3.0),
        (NAN, 1.0, NAN, NAN, NAN),
        (math.inf, -math.inf, -math.inf, math.inf, math.inf),
        (-math.inf, -0.0, -math.inf, -0.0, -math.inf),
    ],
)
def test_minimum_maximum_and_round_agree_at_their_edges(a: float, b: float, low: float, high: float, rounded: float):
    """IEEE's minimum and maximum (``llvm.minimum``), where ``-0.0`` is
    below ``0.0`` and NaN wins, and C's ``round`` (halves away from zero):
    the interpreter took numpy's ``minimum`` (the second of equal operands:
    ``min(-0.0, 0.0)`` was ``0.0``) and ``floor(|a| + 0.5)``, which rounds
    0.49999999999999994 and 2⁵² + 1 up and raises for infinities and NaN.
    Every bit equal, a zero's sign too (``y`` starts at ``-0.0``, which
    adding keeps)."""
    expected = [low, high, rounded]
    for engine in engines(EDGES):
        got = engine.call("f", -0.0, -0.0, -0.0, a, b)[:3]
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


NUMBER_EDGES = """
rev.func @f(%low: f64, %high: f64, %folded: f64, %a: f64, %b: f64) {
  %min = arith.minnumf %a, %b : f64
  %max = arith.maxnumf %a, %b : f64
  %zero = arith.constant 0.0 : f64
  %negative = arith.constant -0.0 : f64
  %fold = arith.minnumf %zero, %negative : f64
  %low1 = rev.add %low, %min : f64
  %high1 = rev.add %high, %max : f64
  %folded1 = rev.add %folded, %fold : f64
  rev.return %low1, %high1, %folded1, %a, %b : f64, f64, f64, f64, f64
}"""


@pytest.mark.parametrize(
    "a, b, low, high",
    [
        (0.0, -0.0, -0.0, 0.0),
        (-0.0, 0.0, -0.0, 0.0),
        (-2.5, NAN, -2.5, -2.5),
        (NAN, 1.0, 1.0, 1.0),
        (NAN, NAN, NAN, NAN),
        (-math.inf, NAN, -math.inf, -math.inf),
    ],
)
def test_minnumf_and_maxnumf_agree_at_their_edges(a: float, b: float, low: float, high: float):
    """IEEE's minimumNumber and maximumNumber (``llvm.minimumnum``): a NaN
    loses, ``-0.0`` is below ``0.0`` in either order, computed or folded.
    ``llvm.minnum`` returned x86's first zero, and the interpreter numpy's
    (its scalars' first, its arrays' second)."""
    expected = [low, high, -0.0]
    for engine in engines(NUMBER_EDGES):
        got = engine.call("f", -0.0, -0.0, -0.0, a, b)[:3]
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


def test_a_failing_check_reports_the_same_value_on_both_engines():
    source = """
rev.func @f(%a: f64, %b: f64) {
  %s = math.tanh %a : f64
  %c = arith.constant -1.0 : f64
  %t = math.atan %b : f64
  %u = arith.addf %c, %t : f64
  %v = arith.mulf %s, %u : f64
  %w = math.atan %v : f64
  %x = anc.alloc %w : f64
  %p = arith.mulf %b, %s : f64
  %q = math.tanh %p : f64
  %x1 = rev.add %x, %q : f64
  %x2 = rev.sub %x1, %q : f64
  %one = arith.constant 1.0 : f64
  %e = arith.addf %w, %one : f64
  anc.free %x2, %e : f64
  rev.return %a, %b : f64, f64
}"""
    messages = []
    for engine in engines(source):
        with pytest.raises(Exception) as error:
            engine.call("f", -1.2287855373040292e-16, -2.943510644186979)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert "holding 2.7565340039709767e-16, expected 1.0000000000000002" in messages[0]


# ---------------------------------------------------------------------------
# Floats to integers: saturated on both engines
# ---------------------------------------------------------------------------

CONVERSIONS = [
    (op, width, source) for op in ("fptosi", "fptoui") for width in (1, 8, 16, 32, 64) for source in ("f64", "f32")
]
"""Every float-to-integer conversion: ``arith.fptosi`` and ``arith.fptoui``
to each integer width, of an ``f64`` and of an ``f32``."""


def conversions_program() -> str:
    """``@convert(r…, x)``: each of ``CONVERSIONS`` of ``x`` (``x`` rounded
    to ``f32`` for an ``f32`` source) added to its own ``r``."""
    params, lines, results = [], ["  %h = arith.truncf %x : f64 to f32"], []
    for k, (op, width, source) in enumerate(CONVERSIONS):
        params.append(f"%r{k}: i{width}")
        value = "%x" if source == "f64" else "%h"
        lines.append(f"  %t{k} = arith.{op} {value} : {source} to i{width}")
        lines.append(f"  %s{k} = rev.add %r{k}, %t{k} : i{width}")
        results.append((f"%s{k}", f"i{width}"))
    returned = ", ".join(name for name, _ in results)
    types = ", ".join(type for _, type in results)
    body = "\n".join(lines)
    return f"rev.func @convert({', '.join(params)}, %x: f64) {{\n{body}\n  rev.return {returned}, %x : {types}, f64\n}}"


CONVERT = engines(conversions_program())


def saturated(x: float, op: str, width: int, source: str) -> int:
    """LLVM's ``fpto[su]i.sat`` of ``x``, as the signless ``i{width}`` both
    engines return (read as signed): NaN is 0, a value beyond the range is
    its nearest end, the rest is truncated toward zero."""
    if source == "f32":
        x = (
            float(np.float32(x))
            if abs(x) <= float(np.finfo(np.float32).max) or math.isnan(x)
            else math.copysign(math.inf, x)
        )
    low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if op == "fptosi" else (0, (1 << width) - 1)
    exact = 0 if math.isnan(x) else high if x >= high else low if x <= low else int(x)
    return exact - (1 << width) if exact >= 1 << (width - 1) else exact


def edges() -> list[float]:
    """The values where a conversion of some width changes: each range's
    ends and their neighbours (the signed ends, ±2**(width - 1), and the
    unsigned ends, 2**width, of every width), beyond the largest, the
    infinities and NaN."""
    found = [math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1e30, -1e30, 1e300, -1e300]
    for width in (1, 7, 8, 15, 16, 31, 32, 63, 64):
        for end in (1 << width, -(1 << width)):
            found += [float(end), float(end) + 0.5, float(end) - 0.5, float(end - 1), math.nextafter(float(end), 0.0)]
    return found


def check_conversions(x: float) -> None:
    args = (*([0] * len(CONVERSIONS)), x)
    interpreter, native = CONVERT
    expected = [saturated(x, *conversion) for conversion in CONVERSIONS]
    # both engines return an ``i1`` as a ``bool``
    expected = [bool(v) if width == 1 else v for v, (_, width, _) in zip(expected, CONVERSIONS)]
    assert list(interpreter.call("convert", *args)[:-1]) == expected
    assert list(native.call("convert", *args)[:-1]) == expected


@pytest.mark.parametrize("x", edges())
def test_floats_convert_to_integers_saturated_on_both_engines(x: float) -> None:
    """Native code converts with ``llvm.fpto[su]i.sat``; the interpreter
    raised Python's ``cannot convert float NaN to integer`` for NaN and the
    infinities and wrapped a float beyond the type (``int(1e30)`` gave
    5076964154930102272 for an ``i64``).  Both now saturate, for every
    width, signed and unsigned, from ``f64`` and from ``f32``."""
    check_conversions(x)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(1 << 70), 1 << 70).map(float))
def test_random_floats_convert_to_integers_alike_on_both_engines(x: float) -> None:
    check_conversions(x)


@pytest.mark.parametrize(
    ("name", "op"),
    [
        ("minimumnum", "arith.minnumf"),
        ("maximumnum", "arith.maxnumf"),
        ("minimum", "arith.minimumf"),
        ("maximum", "arith.maximumf"),
    ],
)
def test_a_function_named_like_an_intrinsic_no_c_function_is_named_after_runs(name: str, op: str):
    """``llvm.minimumnum`` and its kin become instructions, not calls of a C
    function: ``@minimumnum`` beside an ``arith.minnumf`` was refused as
    named like a C library function native code calls; it runs natively
    as on the interpreter."""
    source = f"""
rev.func @{name}(%y: f64, %a: f64, %b: f64) {{
  %t = {op} %a, %b : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %a, %b : f64, f64, f64
}}"""
    module = parse_module(source, "named.mlir")
    expected = RevInterpreter(module).call(name, 0.0, 2.0, -3.0)
    assert expected[0] == (-3.0 if "min" in name else 2.0)
    assert NativeModule.compile(module).call(name, 0.0, 2.0, -3.0) == expected


@rv.reversible(backend="native")
def sincos(y: float, x: float) -> None:
    """An eDSL function named like the libm function LLVM makes of a
    ``sin`` and a ``cos`` of one value, whose code makes it."""
    y += np.sin(x) * np.cos(x)


def exp2(y: float, x: float) -> None:
    """An eDSL function named like the libm function LLVM makes of
    ``pow(2.0, x)``, calling ``sincos``."""
    y += 2.0**x
    sincos(y, x)


def test_an_edsl_function_named_like_the_math_llvm_makes_runs():
    """An eDSL function's name is its Python name, which its user never
    chose as a symbol: ``sincos`` beside a ``sin`` and a ``cos`` of one
    value crashed the process, then was refused.  Native code runs it as
    the interpreter does, called from another function, backwards and
    differentiated (checked against central differences)."""
    native = rv.reversible(backend="native")(exp2)
    interpreted = rv.reversible(backend="interpreter")(exp2)
    expected = 0.25 + 2.0**0.5 + math.sin(0.5) * math.cos(0.5)
    assert native(0.25, 0.5) == pytest.approx(interpreted(0.25, 0.5))
    assert native(0.25, 0.5) == pytest.approx((expected, 0.5))
    assert (~native)(expected, 0.5) == pytest.approx((0.25, 0.5))
    assert sincos(0.0, 0.5)[0] == pytest.approx(math.sin(0.5) * math.cos(0.5))
    h = 1e-6
    numeric = (native(0.25, 0.5 + h)[0] - native(0.25, 0.5 - h)[0]) / (2 * h)
    assert rv.gradient(native, (0.25, 0.5)) == pytest.approx((1.0, numeric), rel=1e-6)
