"""Native code (rev → std → llvm → llvmlite JIT) agrees with the reference
interpreter on every example: bitwise for integers, to the last bits of libm
for floats; checks surface as InvertibilityError at the source location."""

import cmath
import math
from pathlib import Path

import numpy as np
import pytest

import revmlir as rv
from revmlir import ExecutionError, InvertibilityError
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

EXAMPLES = Path(__file__).parent.parent / "examples"
rng = np.random.default_rng(11)

CASES = {
    "multiplier.mlir": ("multiplier", lambda: [2, 3, 5]),
    "fibonacci.mlir": ("rrfib", lambda: [0, 18]),
    "complex_log.mlir": ("complex_log", lambda: [0.5j, 3 - 4j]),
    "complex_log_routine.mlir": ("complex_log", lambda: [0.5j, -1 + 2j]),
    "bennett.mlir": ("bennett", lambda: [1.0, 0.0, 4]),
    "power.mlir": ("mypower", lambda: [0.25, 1.5, 7]),
    "affine.mlir": (
        "i_affine",
        lambda: [rng.normal(size=3), rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=4)],
    ),
    "unitary.mlir": ("i_ummm", lambda: [rng.normal(size=(4, 2)), rng.normal(size=12)]),
}


def copies(values):
    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


def assert_same(expected, actual):
    for a, b in zip(expected, actual, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(b, a, rtol=1e-14, atol=1e-14)
        elif isinstance(a, int):
            assert a == b
        else:
            assert abs(a - b) <= 1e-14 * max(1.0, abs(a)), (a, b)


@pytest.mark.parametrize("example", CASES)
def test_native_matches_interpreter_both_ways(example):
    path = EXAMPLES / example
    module = parse_module(path.read_text(), str(path))
    name, make = CASES[example]
    args = make()
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)

    expected = interpreter.call(name, *copies(args))
    actual = native.call(name, *copies(args))
    assert_same(expected, actual)
    assert_same(interpreter.uncall(name, *copies(expected)), native.uncall(name, *copies(actual)))
    assert_same(args, native.uncall(name, *copies(actual)))


def test_integer_wraparound_is_bitwise():
    module = parse_module((EXAMPLES / "multiplier.mlir").read_text())
    native = NativeModule.compile(module)
    big = 2**62
    assert native.call("multiplier", big, 3, 5) == RevInterpreter(module).call("multiplier", big, 3, 5)
    assert native.uncall("multiplier", *native.call("multiplier", big, 3, 5)) == (big, 3, 5)


DIVISIONS = """
rev.func @f(%q: i64, %r: i64, %fl: i64, %ce: i64, %a: i64, %b: i64) {
  %d = arith.divsi %a, %b : i64
  %m = arith.remsi %a, %b : i64
  %f = arith.floordivsi %a, %b : i64
  %c = arith.ceildivsi %a, %b : i64
  %q1 = rev.add %q, %d : i64
  %r1 = rev.add %r, %m : i64
  %fl1 = rev.add %fl, %f : i64
  %ce1 = rev.add %ce, %c : i64
  rev.return %q1, %r1, %fl1, %ce1, %a, %b : i64, i64, i64, i64, i64, i64
}
"""


@pytest.mark.parametrize("a, b", [(-(2**63), -1), (7, -1), (-7, 2), (7, 3), (-(2**63), 2)])
def test_signed_division_wraps_like_the_interpreter(a, b):
    """INT_MIN / −1 wraps (LLVM's sdiv would be undefined)."""
    module = parse_module(DIVISIONS)
    found = NativeModule.compile(module).call("f", 0, 0, 0, 0, a, b)
    assert found == RevInterpreter(module).call("f", 0, 0, 0, 0, a, b)


DIRTY = """
rev.func @f(%x: f64, %m: memref<?xf64>, %i: index, %j: index) {
  %zero = arith.constant 0.0 : f64
  %n = anc.alloc %zero : f64
  %n1 = rev.add %n, %x : f64
  anc.free %n1, %zero : f64
  %e = rev.take %m[%i] : memref<?xf64>
  %v = memref.load %m[%j] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %m[%i] : memref<?xf64>
  rev.return %x, %i, %j : f64, index, index
}
"""


def test_native_checks_raise_invertibility_errors_at_the_source():
    native = NativeModule.compile(parse_module(DIRTY, "dirty.mlir"))
    m = np.array([1.0, 2.0])
    assert native.call("f", 0.0, m, 0, 1)[0] == 0.0
    assert m.tolist() == [3.0, 2.0]
    with pytest.raises(InvertibilityError) as free:
        native.call("f", 3.0, m, 0, 1)
    assert (free.value.op_name, free.value.location) == ("anc.free", "dirty.mlir:6:3")
    with pytest.raises(InvertibilityError, match="borrowed") as alias:
        native.call("f", 0.0, m, 1, 1)
    assert alias.value.op_name == "memref.load"


def test_arrays_must_be_contiguous():
    module = parse_module((EXAMPLES / "affine.mlir").read_text())
    native = NativeModule.compile(module)
    W = np.zeros((4, 3)).T  # Fortran order
    with pytest.raises(TypeError, match="C-contiguous"):
        native.call("i_affine", np.zeros(3), W, np.zeros(3), np.zeros(4))


def test_frontend_runs_natively_and_falls_back_when_needed():
    @rv.reversible(backend="auto")
    def accumulate(y, x):
        for i in range(len(x)):
            y += x[i] * x[i]

    @rv.reversible(backend="auto")
    def with_print(x, v):
        x += 1.0
        with rv.safe():
            print(v)  # a whole array: numpy formats it, on the interpreter

    x = np.arange(4.0)
    assert accumulate(0.0, x)[0] == 14.0
    assert accumulate.specialization_for(0.0, x).backend == "native"
    # the warning names the op and its line, and points at the caller's line
    fallback = r"with_print runs on the interpreter.*'printf\.print_format' at .*test_native\.py:\d+"
    with pytest.warns(rv.InterpreterFallbackWarning, match=fallback) as record:
        assert with_print(2.0, x)[0] == 3.0
    assert record[0].filename == __file__
    assert with_print.specialization_for(2.0, x).backend == "interpreter"


def test_a_fallback_warning_points_at_a_user_file_beside_the_package():
    """A user's file whose path starts with the package directory's
    (``…/revmlir_scratch.py``) is the user's: the warning points at it."""
    package = Path(rv.__file__).resolve().parent
    source = "def run(f, *args):\n    return f(*args)\n"
    namespace: dict[str, object] = {}
    exec(compile(source, f"{package}_scratch.py", "exec"), namespace)

    @rv.reversible(backend="auto")
    def with_print(x, v):
        x += 1.0
        with rv.safe():
            print(v)

    with pytest.warns(rv.InterpreterFallbackWarning) as record:
        namespace["run"](with_print, 2.0, np.arange(2.0))  # type: ignore[operator]
    assert record[0].filename == f"{package}_scratch.py"


def test_native_backend_refuses_what_it_cannot_compile():
    @rv.reversible(backend="native")
    def with_print(x, v):
        x += 1.0
        with rv.safe():
            print(v)

    with pytest.raises(rv.NativeCompilationError, match="cannot print a memref<.xf64> in native code"):
        with_print(1.0, np.zeros(2))


PARITY = [
    ("DIRTY_FREE", "f", [3.0]),
    ("IF_POST", "f", [2]),
    ("WHILE_POST", "f", [2, 5]),
    ("WHILE_POST", "f", [-3, 5]),
    ("ALIAS", "f", [np.array([1.0, 2.0, 3.0, 4.0]), 1, 1]),
    ("DOUBLE_TAKE", "f", [np.array([1.0, 2.0, 3.0, 4.0]), 2, 2]),
]


@pytest.mark.parametrize("program, name, args", PARITY, ids=lambda v: v if isinstance(v, str) else None)
def test_native_and_interpreter_report_the_same_error(program, name, args):
    from test_runtime_checks import __dict__ as programs

    module = parse_module(programs[program], "prog.mlir")
    with pytest.raises(InvertibilityError) as interpreted:
        RevInterpreter(module).call(name, *copies(args))
    with pytest.raises(InvertibilityError) as compiled:
        NativeModule.compile(module).call(name, *copies(args))
    assert str(compiled.value) == str(interpreted.value)


IPOWI = """
rev.func @f(%y: i64, %a: i64, %b: i64) {
  %t = math.ipowi %a, %b : i64
  %y1 = rev.add %y, %t : i64
  rev.return %y1, %a, %b : i64, i64, i64
}"""


def test_native_ipowi_matches_the_interpreter():
    """Exponentiation by squaring, wraparound past 2⁶³ included; a negative
    exponent, whose power Python makes a float, is a located error on
    both engines, the base ±1 included."""
    module = parse_module(IPOWI, "ipowi.mlir")
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    for a in (-3, -2, -1, 0, 1, 2, 3, 7):
        for b in (0, 1, 2, 5, 10, 63, 64, 100):
            expected = interpreter.call("f", 0, a, b)
            assert native.call("f", 0, a, b) == expected, (a, b)
            assert expected[0] == (a**b + 2**63) % 2**64 - 2**63, (a, b)
        for b in (-1, -2, -(2**63)):
            message = (
                f"ipowi.mlir:3:3: 'math.ipowi' in @f: the integer {a} to the power {b}: an integer to a negative "
                "power is no integer "
                "(Python's is a float: float(n) ** k)"
            )
            for engine in (interpreter, native):
                with pytest.raises(ExecutionError) as raised:
                    engine.call("f", 0, a, b)
                assert str(raised.value) == message, (a, b)


COMPLEX_POINTS = [
    0j,
    1 + 0j,
    -1 + 0j,
    -4 - 0.0j,
    -4 + 0j,
    0.5j,
    -2.5 - 1.5j,
    3 - 4j,
    1e-3 + 2e-3j,
    0.3 + 30j,
    30 - 0.7j,
    -40 + 2j,
    1e150 + 1e150j,
    2 + 700j,
]


@pytest.mark.parametrize("function", ["sqrt", "sin", "cos", "tan", "tanh"])
def test_native_complex_functions_match_the_interpreter(function):
    """Written natively from real functions (no C complex ABI), they agree
    with the interpreter's cmath to a few ulps, branch cuts, signed zeros
    and large arguments (overflow to inf, tanh's saturation) included."""
    source = f"""
    rev.func @f(%y: complex<f64>, %z: complex<f64>) {{
      %t = complex.{function} %z : complex<f64>
      %y1 = rev.add %y, %t : complex<f64>
      rev.return %y1, %z : complex<f64>, complex<f64>
    }}"""
    module = parse_module(source, "complex.mlir")
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    for z in COMPLEX_POINTS:
        expected = interpreter.call("f", 0j, z)[0]
        got = native.call("f", 0j, z)[0]
        for part, (e, g) in (("re", (expected.real, got.real)), ("im", (expected.imag, got.imag))):
            assert (math.isinf(e) and e == g) or abs(g - e) <= 1e-13 * max(abs(expected), 1e-300), (
                function,
                z,
                part,
                got,
                expected,
            )
        if function == "sqrt":
            assert math.copysign(1.0, got.imag) == math.copysign(1.0, expected.imag), (z, got, expected)


def test_native_complex_power_matches_the_interpreter():
    source = """
    rev.func @f(%y: complex<f64>, %z: complex<f64>, %w: complex<f64>) {
      %t = complex.pow %z, %w : complex<f64>
      %y1 = rev.add %y, %t : complex<f64>
      rev.return %y1, %z, %w : complex<f64>, complex<f64>, complex<f64>
    }"""
    module = parse_module(source, "pow.mlir")
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    for z in [0j, 2 + 0j, -1.5 + 0.5j, 0.25j, 3 - 4j]:
        for w in [0j, 1 + 0j, 2 + 0j, 0.5 - 1j, -1 + 0j, 1j, 2.5 + 0.5j]:
            with np.errstate(all="ignore"):
                expected = interpreter.call("f", 0j, z, w)[0]
            got = native.call("f", 0j, z, w)[0]
            if cmath.isnan(expected):
                assert cmath.isnan(got), (z, w, got)
            else:
                assert abs(got - expected) <= 1e-13 * max(abs(expected), 1.0), (z, w, got, expected)


def test_every_operator_the_builder_emits_compiles_natively():
    """The builder's operator tables are what ``@rv.reversible``,
    ``@rv.ordinary`` and other frontends emit for expressions: each op needs
    a native translation, or the ``auto`` backend would quietly run the
    whole program on the interpreter (as ``2 ** k`` once did)."""
    from revmlir import builder
    from revmlir.lowering.std_to_llvm import translates

    tables = [
        builder._INT_BINARY,
        builder._FLOAT_BINARY,
        builder._COMPLEX_BINARY,
        builder._FLOAT_UNARY,
        builder._COMPLEX_UNARY,
    ]
    missing = sorted({op.name for table in tables for op in table.values() if op not in translates})
    assert not missing, f"no native translation for {missing}"
