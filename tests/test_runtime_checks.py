"""Run-time reversibility checks: each raises InvertibilityError naming the op
and its source location, and `nocheck` (or rev-strip-checks) turns it off."""

import numpy as np
import pytest
from xdsl.context import Context

from revmlir import InvertibilityError
from revmlir.errors import ExecutionError
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.checks import RevInsertChecksPass, RevStripChecksPass

DIRTY_FREE = """
rev.func @f(%x: f64) {
  %zero = arith.constant 0.0 : f64
  %n = anc.alloc %zero : f64
  %n1 = rev.add %n, %x : f64
  anc.free %n1, %zero : f64
  rev.return %x : f64
}
"""

IF_POST = """
rev.func @f(%x: i64) {
  %one = arith.constant 1 : i64
  %x2 = rev.if (%x) : i64 pre {
  ^bb0(%a: i64):
    %c = arith.cmpi sgt, %a, %one : i64
    rev.cond %c
  } then {
  ^bb0(%a: i64):
    %a1 = rev.sub %a, %one : i64
    %a2 = rev.sub %a1, %one : i64
    rev.yield %a2 : i64
  } else {
  ^bb0(%a: i64):
    rev.yield %a : i64
  }
  rev.return %x2 : i64
}
"""

WHILE_POST = """
rev.func @f(%x: i64, %n: i64) {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %x2 = rev.while (%x) : i64 pre {
  ^bb0(%a: i64):
    %c = arith.cmpi slt, %a, %n : i64
    rev.cond %c
  } post {
  ^bb0(%a: i64):
    %c = arith.cmpi sgt, %a, %zero : i64
    rev.cond %c
  } do {
  ^bb0(%a: i64):
    %a1 = rev.add %a, %one : i64
    rev.yield %a1 : i64
  }
  rev.return %x2, %n : i64, i64
}
"""

ALIAS = """
rev.func @f(%m: memref<4xf64>, %i: index, %j: index) {
  %e = rev.take %m[%i] : memref<4xf64>
  %v = memref.load %m[%j] : memref<4xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %m[%i] : memref<4xf64>
  rev.return %i, %j : index, index
}
"""

DOUBLE_TAKE = """
rev.func @f(%m: memref<4xf64>, %i: index, %j: index) {
  %a = rev.take %m[%i] : memref<4xf64>
  %b = rev.take %m[%j] : memref<4xf64>
  %a1, %b1 = rev.swap %a, %b : f64
  rev.put %b1, %m[%j] : memref<4xf64>
  rev.put %a1, %m[%i] : memref<4xf64>
  rev.return %i, %j : index, index
}
"""

STACKS = """
rev.func @leftover(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.copy_push %s, %x : !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}
rev.func @mismatch(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  %one = arith.constant 1.0 : f64
  anc.copy_push %s, %x : !anc.stack<f64>
  %x1 = rev.add %x, %one : f64
  anc.copy_pop %s, %x1 : !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x1 : f64
}
"""


def interp(text: str, name: str = "prog.mlir") -> RevInterpreter:
    return RevInterpreter(parse_module(text, name))


def stripped(text: str) -> RevInterpreter:
    ctx: Context = make_context()
    module = parse_module(text, "prog.mlir", ctx)
    RevStripChecksPass().apply(ctx, module)
    return RevInterpreter(module)


def test_free_with_wrong_value_names_op_and_location():
    with pytest.raises(InvertibilityError) as info:
        interp(DIRTY_FREE).call("f", 3.0)
    error = info.value
    assert error.op_name == "anc.free"
    assert error.location == "prog.mlir:6:3"
    assert error.function == "f"
    assert "holding 3.0, expected 0.0" in str(error)


def test_free_within_tolerance_is_accepted():
    assert interp(DIRTY_FREE).call("f", 1e-12) == (1e-12,)


def test_free_check_can_be_stripped():
    assert stripped(DIRTY_FREE).call("f", 3.0) == (3.0,)


def test_insert_checks_restores_them():
    ctx = make_context()
    module = parse_module(DIRTY_FREE, "prog.mlir", ctx)
    RevStripChecksPass().apply(ctx, module)
    RevInsertChecksPass().apply(ctx, module)
    with pytest.raises(InvertibilityError):
        RevInterpreter(module).call("f", 3.0)


def test_if_postcondition_mismatch():
    program = interp(IF_POST)
    assert program.call("f", 5) == (3,)
    with pytest.raises(InvertibilityError, match="postcondition is False") as info:
        program.call("f", 2)
    assert info.value.op_name == "rev.if"
    assert info.value.location == "prog.mlir:4:3"
    assert stripped(IF_POST).call("f", 2) == (0,)


def test_while_postcondition_on_entry_and_after_iterations():
    program = interp(WHILE_POST)
    assert program.call("f", 0, 5) == (5, 5)
    assert program.uncall("f", 5, 5) == (0, 5)
    with pytest.raises(InvertibilityError, match="false when the loop starts"):
        program.call("f", 2, 5)
    with pytest.raises(InvertibilityError, match="true after iteration 1"):
        program.call("f", -3, 5)


def test_shared_read_write_of_a_borrowed_element():
    program = interp(ALIAS)
    m = np.array([1.0, 2.0, 3.0, 4.0])
    program.call("f", m, 0, 3)
    assert m.tolist() == [5.0, 2.0, 3.0, 4.0]
    with pytest.raises(InvertibilityError, match="borrowed") as info:
        program.call("f", m, 1, 1)
    assert info.value.op_name == "memref.load"
    np.testing.assert_array_equal(m, [5.0, 2.0, 3.0, 4.0])


def test_element_taken_twice():
    program = interp(DOUBLE_TAKE)
    m = np.array([1.0, 2.0, 3.0, 4.0])
    program.call("f", m, 0, 2)
    assert m.tolist() == [3.0, 2.0, 1.0, 4.0]
    with pytest.raises(InvertibilityError, match="already borrowed"):
        program.call("f", m, 1, 1)


def test_stack_checks():
    program = interp(STACKS)
    with pytest.raises(InvertibilityError, match="stack freed holding 1 value"):
        program.call("leftover", 1.0)
    with pytest.raises(InvertibilityError, match="popped 1.0, but the live value is 2.0"):
        program.call("mismatch", 1.0)


DIRTY_ARRAY = """
rev.func @f(%x: f64, %n: index, %i: index) {
  %a = anc.array_alloc(%n) : memref<?x2xf64>
  %c1 = arith.constant 1 : index
  %e = rev.take %a[%i, %c1] : memref<?x2xf64>
  %e1 = rev.add %e, %x : f64
  rev.put %e1, %a[%i, %c1] : memref<?x2xf64>
  anc.array_free %a(%n) : memref<?x2xf64>
  rev.return %x, %n, %i : f64, index, index
}
"""


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_ancilla_array_must_hold_zeros_when_freed(backend):
    from revmlir.runtime.native import NativeModule

    module = parse_module(DIRTY_ARRAY, "prog.mlir")
    program = interp(DIRTY_ARRAY) if backend == "interpreter" else NativeModule.compile(module)
    assert program.call("f", 1e-12, 3, 2) == (1e-12, 3, 2)  # within tolerance
    assert program.uncall("f", 0.0, 3, 1) == (0.0, 3, 1)
    with pytest.raises(InvertibilityError, match="array freed holding 0.5 at") as info:
        program.call("f", 0.5, 3, 2)
    assert info.value.op_name == "anc.array_free"
    assert info.value.location == "prog.mlir:8:3"
    # the element's position, [row, column], on both engines
    assert str(info.value).endswith("array freed holding 0.5 at [2, 1], expected zeros")
    assert stripped(DIRTY_ARRAY).call("f", 0.5, 3, 2) == (0.5, 3, 2)


def test_pop_from_empty_stack_is_always_an_error():
    with pytest.raises(InvertibilityError, match="pop from an empty stack"):
        stripped(STACKS).uncall("leftover", 1.0)


def test_argument_type_errors():
    program = interp(ALIAS)
    with pytest.raises(TypeError, match="must be a numpy array"):
        program.call("f", [1.0, 2.0], 0, 1)
    with pytest.raises(TypeError, match="array of float64 with shape \\[4\\]"):
        program.call("f", np.zeros(3), 0, 1)
    with pytest.raises(TypeError, match="takes 3 argument"):
        program.call("f", np.zeros(4))
    with pytest.raises(TypeError, match="must be an integer"):
        program.call("f", np.zeros(4), 0.5, 1)


def test_out_of_bounds_index_is_an_execution_error_with_location():
    program = interp(ALIAS)
    with pytest.raises(
        ExecutionError, match="prog.mlir:3:3: .rev.take. in @f: index 7 is out of bounds for axis 0 with size 4"
    ):
        program.call("f", np.zeros(4), 7, 0)


FREE_AS_GIVEN = """
rev.func @f(%x: T, %e: T) {
  %n = anc.alloc %x : T
  anc.free %n, %e : T
  rev.return %x, %e : T, T
}
"""
INF, NAN = float("inf"), float("nan")
NEAR_PAIRS = [
    (1.0, 1.0),
    (1.0, 1.0 + 1e-9),
    (1.0, 1.0 + 1e-7),
    (0.0, 1e-9),
    (0.0, 1e-7),
    (1e20, 1e20 * (1 + 1e-9)),
    (INF, INF),
    (-INF, -INF),
    (INF, 1.0),
    (1.0, INF),
    (INF, -INF),
    (1e308, -1e308),
    (NAN, NAN),
    (NAN, -NAN),
    (NAN, 1.0),
    (1.0, NAN),
    (NAN, INF),
]


@pytest.fixture(scope="module")
def free_engines() -> dict[str, tuple[RevInterpreter, object]]:
    from revmlir.runtime.native import NativeModule

    engines = {}
    for name, type in (("real", "f64"), ("complex", "complex<f64>")):
        module = parse_module(FREE_AS_GIVEN.replace("T", type), "free.mlir")
        engines[name] = (RevInterpreter(module), NativeModule.compile(module))
    return engines


def _freed(backend: object, x: complex, e: complex) -> str:
    try:
        backend.call("f", x, e)  # type: ignore[attr-defined]
    except InvertibilityError as error:
        return str(error)
    return "freed"


@pytest.mark.parametrize("x, e", NEAR_PAIRS)
def test_free_tolerance_is_the_same_on_both_engines(free_engines, x: float, e: float):
    """Native code decides as ``math.isclose`` does, at infinities too:
    equal infinities are close, an infinity is close to nothing else, a
    finite pair whose difference overflows is not close; and a NaN is the
    value a NaN is (whatever its sign), in each part of a complex number."""
    interpreter, native = free_engines["real"]
    expected = "freed" if real_close(x, e) else f"ancilla freed holding {x!r}, expected {e!r}"
    assert _freed(interpreter, x, e).endswith(expected)
    assert _freed(native, x, e).endswith(expected)
    interpreter, native = free_engines["complex"]
    for z, w in ((complex(x, 1.0), complex(e, 1.0)), (complex(1.0, x), complex(1.0, e))):
        assert (_freed(interpreter, z, w) == "freed") == (_freed(native, z, w) == "freed") == cmath_close(z, w)


def real_close(x: float, e: float) -> bool:
    import math

    return math.isclose(x, e, rel_tol=1e-8, abs_tol=1e-8) or (math.isnan(x) and math.isnan(e))


def cmath_close(z: complex, w: complex) -> bool:
    """``cmath.isclose`` with the parts that are NaN in both taken as 0."""
    import cmath
    import math

    if math.isnan(z.real) and math.isnan(w.real):
        z, w = complex(0.0, z.imag), complex(0.0, w.imag)
    if math.isnan(z.imag) and math.isnan(w.imag):
        z, w = complex(z.real, 0.0), complex(w.real, 0.0)
    return cmath.isclose(z, w, rel_tol=1e-8, abs_tol=1e-8)


@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_a_nan_part_is_freed_only_beside_equal_other_parts(free_engines, backend):
    """A NaN in one part of a complex number matches a NaN there only: the
    other part is still checked, and a NaN in the other part is no match."""
    interpreter, native = free_engines["complex"]
    engine = interpreter if backend == "interpreter" else native
    assert _freed(engine, complex(NAN, 1.0), complex(-NAN, 1.0)) == "freed"
    assert _freed(engine, complex(2.0, NAN), complex(2.0, NAN)) == "freed"
    for z, w in ((complex(NAN, 1.0), complex(NAN, 2.0)), (complex(NAN, 1.0), complex(1.0, NAN))):
        assert _freed(engine, z, w).endswith(f"ancilla freed holding {z!r}, expected {w!r}")


# Consecutive frees of float ancillas known to be zero: native code tests
# them with one branch (all ±0) and checks them one by one only otherwise,
# which must report what the checks alone report, first failure first.
ZERO_FREES = """
rev.func @f(%a: f64, %b: f64, %c: f64, %d: f64) {
  %zero = arith.constant 0.0 : f64
  %p = anc.alloc %zero : f64
  %q = anc.alloc %zero : f64
  %r = anc.alloc %zero : f64
  %s = anc.alloc %zero : f64
  %p1 = rev.add %p, %a : f64
  %q1 = rev.add %q, %b : f64
  %r1 = rev.add %r, %c : f64
  %s1 = rev.add %s, %d : f64
  %z0 = arith.constant 0.0 : f64
  anc.free %p1, %z0 : f64
  %z1 = arith.constant -0.0 : f64
  anc.free %q1, %z1 : f64
  %z2 = arith.constant 0.0 : f64
  anc.free %r1, %z2 : f64
  anc.free %s1, %zero : f64
  rev.return %a, %b, %c, %d : f64, f64, f64, f64
}
"""
ZERO_CASES = [
    (0.0, -0.0, 0.0, -0.0),
    (0.0, 1e-9, 0.0, -1e-9),
    (0.0, 0.0, 1e-3, 5.0),
    (0.0, NAN, 0.0, 0.0),
    (INF, 0.0, 0.0, 1.0),
    (0.0, 2.0, 0.0, 0.0),
    (0.0, 0.0, 0.0, -1e-7),
]


@pytest.fixture(scope="module")
def zero_free_engines() -> tuple[RevInterpreter, object]:
    from revmlir.runtime.native import NativeModule

    module = parse_module(ZERO_FREES, "zeros.mlir")
    return RevInterpreter(module), NativeModule.compile(module)


@pytest.mark.parametrize("values", ZERO_CASES)
def test_a_run_of_zero_frees_reports_as_each_check_alone(zero_free_engines, values):
    interpreter, native = zero_free_engines
    outcome = _freed_values(interpreter, values)
    assert _freed_values(native, values) == outcome
    failing = [k for k, v in enumerate(values) if not abs(v) <= 1e-8]
    if not failing:
        assert outcome == "freed"
        return
    first = failing[0]
    expected = "-0.0" if first == 1 else "0.0"
    assert outcome == (
        f"zeros.mlir:{(13, 15, 17, 18)[first]}:3: 'anc.free' in @f: "
        f"ancilla freed holding {values[first]!r}, expected {expected}"
    )


def _freed_values(backend: object, values: tuple[float, ...]) -> str:
    try:
        backend.call("f", *values)  # type: ignore[attr-defined]
    except InvertibilityError as error:
        return str(error)
    return "freed"


@pytest.mark.parametrize("check_ops", [True, False], ids=["native code", "printed std"])
def test_a_run_of_zero_frees_is_one_branch(check_ops):
    """Native code's lowering (one ``CheckOp`` per check) and the printed
    std form (an ``scf.if`` per check) both branch once on the run."""
    from xdsl.dialects import scf

    from revmlir.lowering.checked_code import reported_check
    from revmlir.lowering.rev_to_std import lower_to_std

    module = parse_module(ZERO_FREES, "zeros.mlir")
    lower_to_std(module, check_ops=check_ops)
    assert str(module).count("arith.ori") == 3  # the four values' bits
    (run,) = [op for op in module.walk() if isinstance(op, scf.IfOp) and reported_check(op) is None]
    checks = [op for op in run.walk() if reported_check(op) is not None]
    assert len(checks) == 4  # each check inside the run's branch
    assert all(isinstance(op, scf.IfOp) != check_ops for op in checks)


# Every check that shows values, for every type of value it may show: the
# interpreter's message and native code's are the same text (issue 16).
PARITY_TYPES = {
    "f64": (2.5, -0.125),
    "f32": (0.1, 3.0),
    "i1": (True, False),
    "i8": (-3, 7),
    "index": (9, 4),
    "complex<f64>": (1.5 - 2j, complex(-0.0, 0.25)),
    "complex<f32>": (0.1 + 0.2j, -3j),
    "!rev.log<f64>": (1.0, 0.25),
}


ARRAY_TYPES = ("f32", "i1", "i8", "index")
"""Element types of ancilla arrays (reals: f64 elements are shown in
``test_ancilla_array_must_hold_zeros_when_freed``)."""


def _name(type: str) -> str:
    return type.replace("!rev.", "").replace("<", "_").replace(">", "")


def _parity_functions(type: str) -> str:
    n = _name(type)
    scalar = f"""
rev.func @free_{n}(%a: {type}, %b: {type}) {{
  %z = anc.alloc %a : {type}
  anc.free %z, %b : {type}
  rev.return %a, %b : {type}, {type}
}}
rev.func @pop_{n}(%a: {type}, %b: {type}) {{
  %s = anc.stack_alloc : !anc.stack<{type}>
  anc.copy_push %s, %a : !anc.stack<{type}>
  anc.copy_pop %s, %b : !anc.stack<{type}>
  anc.stack_free %s : !anc.stack<{type}>
  rev.return %a, %b : {type}, {type}
}}"""
    if type not in ARRAY_TYPES:
        return scalar
    return f"""{scalar}
rev.func @array_{n}(%a: {type}, %i: index, %j: index) {{
  %m = anc.array_alloc() : memref<3x4x{type}>
  %e = rev.take %m[%i, %j] : memref<3x4x{type}>
  %e1, %a1 = rev.swap %e, %a : {type}
  rev.put %e1, %m[%i, %j] : memref<3x4x{type}>
  anc.array_free %m() : memref<3x4x{type}>
  rev.return %a1, %i, %j : {type}, index, index
}}"""


DEEP = "x".join(["1"] * 4)
DEEPER = "x".join(["1"] * 5)
PARITY_OTHERS = f"""
rev.func @deep_array(%a: f64) {{
  %c0 = arith.constant 0 : index
  %m = anc.array_alloc() : memref<{DEEP}xf64>
  %e = rev.take %m[{", ".join(["%c0"] * 4)}] : memref<{DEEP}xf64>
  %e1, %a1 = rev.swap %e, %a : f64
  rev.put %e1, %m[{", ".join(["%c0"] * 4)}] : memref<{DEEP}xf64>
  anc.array_free %m() : memref<{DEEP}xf64>
  rev.return %a1 : f64
}}
rev.func @deep_read(%m: memref<{DEEPER}xf64>, %i: index, %j: index) {{
  %c0 = arith.constant 0 : index
  %e = rev.take %m[{", ".join(["%c0"] * 4)}, %i] : memref<{DEEPER}xf64>
  %v = memref.load %m[{", ".join(["%c0"] * 4)}, %j] : memref<{DEEPER}xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %m[{", ".join(["%c0"] * 4)}, %i] : memref<{DEEPER}xf64>
  rev.return %i, %j : index, index
}}
rev.func @read2(%m: memref<2x3xf64>, %i: index, %j: index) {{
  %c1 = arith.constant 1 : index
  %e = rev.take %m[%c1, %i] : memref<2x3xf64>
  %v = memref.load %m[%c1, %j] : memref<2x3xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %m[%c1, %i] : memref<2x3xf64>
  rev.return %i, %j : index, index
}}
rev.func @take2(%m: memref<2x3xf64>, %i: index, %j: index) {{
  %c1 = arith.constant 1 : index
  %a = rev.take %m[%c1, %i] : memref<2x3xf64>
  %b = rev.take %m[%c1, %j] : memref<2x3xf64>
  %a1, %b1 = rev.swap %a, %b : f64
  rev.put %b1, %m[%c1, %j] : memref<2x3xf64>
  rev.put %a1, %m[%c1, %i] : memref<2x3xf64>
  rev.return %i, %j : index, index
}}
rev.func @resized(%n: index, %k: index, %m: index) {{
  %a = anc.array_alloc(%n, %m) : memref<?x2x?xi64>
  anc.array_free %a(%k, %m) : memref<?x2x?xi64>
  rev.return %n, %k, %m : index, index, index
}}
rev.func @resized_deep(%n: index, %k: index) {{
  %a = anc.array_alloc(%n, %n, %n) : memref<?x?x?xf64>
  anc.array_free %a(%n, %n, %k) : memref<?x?x?xf64>
  rev.return %n, %k : index, index
}}
rev.func @stack_left(%a: f64) {{
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.copy_push %s, %a : !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  rev.return %a : f64
}}
rev.func @steps(%y: f64, %step: index) {{
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %y2 = rev.for %c0 to %c4 step %step : index (%y) : f64 {{
  ^bb0(%k: index, %acc: f64):
    rev.yield %acc : f64
  }}
  rev.return %y2, %step : f64, index
}}
"""
PARITY_SOURCE = "\n".join(
    [*map(_parity_functions, PARITY_TYPES), PARITY_OTHERS, IF_POST, WHILE_POST.replace("@f", "@loop")]
)


def _parity_cases() -> list[tuple[str, tuple]]:
    cases: list[tuple[str, tuple]] = []
    for type, (a, b) in PARITY_TYPES.items():
        n = _name(type)
        cases += [(f"free_{n}", (a, b)), (f"pop_{n}", (a, b))]
        if type in ARRAY_TYPES:
            cases.append((f"array_{n}", (a, 2, 1)))
    deeper = np.zeros([1] * 5)
    cases += [
        ("deep_array", (-1.5,)),
        ("deep_read", (deeper, 0, 0)),
        ("read2", (np.zeros((2, 3)), 2, 2)),
        ("take2", (np.zeros((2, 3)), 1, 1)),
        ("f", (2,)),
        ("resized", (3, 4, 1)),
        ("resized_deep", (1, 2)),
        ("stack_left", (0.5,)),
        ("steps", (0.0, -2)),
        ("loop", (1, 3)),
        ("loop", (-1, 3)),
    ]
    return cases


@pytest.fixture(scope="module")
def parity_engines() -> tuple[RevInterpreter, object]:
    from revmlir.runtime.native import NativeModule

    module = parse_module(PARITY_SOURCE, "parity.mlir")
    return RevInterpreter(module), NativeModule.compile(module)


def _message(engine: object, function: str, args: tuple) -> str:
    try:
        engine.call(function, *args)  # type: ignore[attr-defined]
    except (InvertibilityError, ExecutionError) as error:
        return f"{type(error).__name__}: {error}"
    return "no error"


@pytest.mark.parametrize("function, args", _parity_cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_check_shows_its_values_alike_on_both_engines(parity_engines, function, args):
    """Values of every type (complex numbers as both parts, f32 widened
    exactly, i1 as a bool), an element's indices beside its value, and the
    indices left out, on both engines alike, where they do not fit."""
    interpreter, native = parity_engines
    expected = _message(interpreter, function, args)
    assert expected != "no error"
    assert _message(native, function, args) == expected
