"""The builder API: frontends name variables, the builder threads SSA versions
and region state; the result verifies and runs."""

import cmath
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ComplexType,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntAttr,
    MemRefType,
    StringAttr,
    f64,
    i1,
    i64,
)

from revmlir.builder import BuildError, Element, FunctionBuilder, ModuleBuilder, Part, Value
from revmlir.diagnostics import format_error
from revmlir.dialects import rev
from revmlir.errors import ReversibilityViolation
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

c128 = ComplexType(f64)
vector = MemRefType(f64, [DYNAMIC_INDEX])


def run(mb: ModuleBuilder) -> RevInterpreter:
    return RevInterpreter(mb.finish())


def test_multiplier():
    mb = ModuleBuilder()
    fn = mb.function("multiplier", [("y", f64), ("a", f64), ("b", f64)])
    fn.add("y", fn["a"] * fn["b"])
    fn.finish()
    program = run(mb)
    assert program.call("multiplier", 2.0, 3.0, 5.0) == (17.0, 3.0, 5.0)
    assert program.uncall("multiplier", 17.0, 3.0, 5.0) == (2.0, 3.0, 5.0)


def test_complex_log_with_a_routine():
    mb = ModuleBuilder()
    fn = mb.function("clog", [("y", c128), ("x", c128)])

    def compute():
        fn.alloc("n", 0.0)
        fn.add("n", fn.unary("abs", fn["x"]))

    def body():
        fn.add(Part("y", "real"), fn.unary("log", fn["n"]))
        fn.add(Part("y", "imag"), fn.angle(fn["x"]))

    fn.routine(compute, body)
    fn.finish()
    program = run(mb)
    y, x = program.call("clog", 1j, 3 - 4j)
    assert cmath.isclose(y, 1j + cmath.log(3 - 4j), rel_tol=1e-14)
    assert program.uncall("clog", y, x) == pytest.approx((1j, 3 - 4j))
    assert program.peak_live_ancillas == 1


def build_fib() -> ModuleBuilder:
    mb = ModuleBuilder()
    fn = mb.function("rrfib", [("out", i64), ("n", i64)])

    def then():
        fn.alloc("counter", 0)
        fn.add("counter", fn["n"])

        def loop():
            fn.alloc("arg", fn["counter"] - 1)
            fn.call("rrfib", ["out", "arg"])
            fn.free("arg", fn["counter"] - 1)
            fn.sub("counter", 2)

        fn.while_(
            pre=lambda: fn["counter"] > 1,
            post=lambda: fn.compare("ne", fn["counter"], fn["n"]),
            body=loop,
        )
        fn.sub("counter", fn.binary("rem", fn["n"], 2))
        fn.free("counter", 0)

    fn.if_(lambda: fn["n"] >= 1, then)
    fn.add("out", 1)
    fn.finish()
    return mb


def test_recursive_fibonacci_carries_only_what_regions_update():
    mb = build_fib()
    module = mb.finish()
    text = str(module)
    # `n` is only read inside the if and the while: it is captured, not carried.
    assert "rev.if (%out) : i64 pre" in text
    assert "rev.while (%counter_1, %out_3) : i64, i64 pre" in text
    program = RevInterpreter(module)
    assert [program.call("rrfib", 0, n)[0] for n in range(10)] == [
        1,
        1,
        2,
        3,
        5,
        8,
        13,
        21,
        34,
        55,
    ]
    assert program.uncall("rrfib", 55, 9) == (0, 9)


def test_element_updates_and_loops():
    mb = ModuleBuilder()
    fn = mb.function("cumsum", [("x", vector), ("n", IndexType())])
    fn.for_(
        1,
        fn["n"],
        1,
        lambda i: fn.add(fn.at("x", i), lambda: fn.load("x", [fn.binary("sub", i, 1)])),
    )
    fn.finish()
    program = run(mb)
    x = np.arange(5.0)
    program.call("cumsum", x, 5)
    np.testing.assert_array_equal(x, np.cumsum(np.arange(5.0)))
    program.uncall("cumsum", x, 5)
    np.testing.assert_array_equal(x, np.arange(5.0))


def test_swap_rot_and_stacks():
    mb = ModuleBuilder()
    fn = mb.function("f", [("a", f64), ("b", f64), ("t", f64)])
    fn.rot("a", "b", fn["t"])
    fn.swap("a", "b")
    fn.stack("s", f64)
    fn.alloc("c", fn["a"] * 2.0)
    fn.push("s", "c")
    fn.pop("s", "c")
    fn.free("c", fn["a"] * 2.0)
    fn.free_stack("s")
    fn.finish()
    program = run(mb)
    a, b, t = program.call("f", 1.0, 0.0, np.pi / 2)
    assert (a, b) == pytest.approx((1.0, 0.0), abs=1e-15)  # rot by π/2, then swap
    assert program.uncall("f", a, b, t) == pytest.approx((1.0, 0.0, np.pi / 2), abs=1e-15)


def test_unknown_variable():
    fn = ModuleBuilder().function("f", [("x", f64)])
    with pytest.raises(BuildError, match="unknown variable 'z'"):
        fn.add("x", fn["z"])


def test_ancilla_leaking_from_a_branch():
    fn = ModuleBuilder().function("f", [("x", f64)])
    with pytest.raises(BuildError, match="'n' allocated in the then-branch is not freed"):
        fn.if_(lambda: fn["x"] > 0.0, lambda: fn.alloc("n", 0.0))


def test_ancilla_never_freed():
    fn = ModuleBuilder().function("f", [("x", f64)])
    fn.alloc("n", 0.0)
    with pytest.raises(BuildError, match="'n' is allocated but never freed"):
        fn.finish()


def test_condition_must_be_boolean():
    fn = ModuleBuilder().function("f", [("x", f64)])
    with pytest.raises(BuildError, match="must be a boolean"):
        fn.if_(lambda: fn["x"], lambda: fn.neg("x"))


def test_arrays_cannot_be_updated_as_a_whole():
    fn = ModuleBuilder().function("f", [("m", vector)])
    with pytest.raises(BuildError, match="cannot be updated"):
        fn.neg("m")


def test_self_read_is_left_to_the_verifier():
    mb = ModuleBuilder()
    fn = mb.function("f", [("x", f64)])
    fn.sub("x", fn["x"] * fn["x"])
    fn.finish()
    with pytest.raises(ReversibilityViolation, match=r"\[self-read\]"):
        mb.finish()


# -- misuses of the API: each is a BuildError at the caller's loc --------------

matrix = MemRefType(f64, [DYNAMIC_INDEX, DYNAMIC_INDEX])
ARGUMENTS = [("y", f64), ("x", f64), ("n", i64), ("v", vector), ("m", matrix), ("z", c128)]
HERE = FileLineColLoc(StringAttr("model.src"), IntAttr(3), IntAttr(1))
FUNCTION = FileLineColLoc(StringAttr("model.src"), IntAttr(1), IntAttr(1))


def refusal(build: Callable[[FunctionBuilder], object]) -> BuildError:
    """The BuildError that ``build`` raises building into a fresh ``f``."""
    fn = ModuleBuilder().function("f", ARGUMENTS, loc=FUNCTION)
    with pytest.raises(BuildError) as info:
        build(fn)
    return info.value


def kept_from(build: Callable[[Callable[[Value], None]], object]) -> Value:
    """The value that ``build`` hands, while it builds a region, to the
    function it is given: a value kept past its region."""
    kept: list[Value] = []
    build(kept.append)
    return kept[0]


MISUSES: dict[str, tuple[Callable[[FunctionBuilder], object], str]] = {
    # a constant or a value where an instruction needs a variable
    "constant call argument": (
        lambda fn: fn.call("f", ["y", 1.0, "n", "v", "m", "z"], loc=HERE),
        "an update takes a variable by name, an element (at) or a complex part (Part), not 1.0 (float)",
    ),
    "value as a target": (
        lambda fn: fn.add(fn["y"], 1.0, loc=HERE),
        "an update takes a variable by name, an element (at) or a complex part (Part), not a value",
    ),
    "unknown complex part": (
        lambda fn: fn.add(Part("z", "re"), 1.0, loc=HERE),
        "a complex number's parts are 'real' and 'imag', not 're'",
    ),
    "arguments as a string": (
        lambda fn: fn.call("f", "yx", loc=HERE),
        "the arguments of 'f' are a sequence, not 'yx' (str)",
    ),
    "variable swapped with itself": (
        lambda fn: fn.swap("y", "y", loc=HERE),
        "'y' is passed twice to one op; each of its operands is a variable of its own",
    ),
    "variable passed twice to a call": (
        lambda fn: fn.call("f", ["y", "y", "n", "v", "m", "z"], loc=HERE),
        "'y' is passed twice to one op; each of its operands is a variable of its own",
    ),
    "array passed twice to a call": (
        lambda fn: fn.call("f", ["y", "x", "n", "v", "v", "z"], loc=HERE),
        "'v' is passed to 'f' twice; the arguments of a call must not alias: pass a copy of one of them",
    ),
    "array passed beside its own element to a call": (
        lambda fn: fn.call("f", ["y", "x", "n", "v", Element("v", [0]), "z"], loc=HERE),
        "'v' is passed to 'f' beside one of its own elements; the arguments of a call must not alias: "
        "pass a copy of one of them",
    ),
    "complex parts of one variable swapped": (
        lambda fn: fn.swap(Part("z", "real"), Part("z", "imag"), loc=HERE),
        "'z' is passed twice to one op; each of its operands is a variable of its own",
    ),
    "callee not a string": (lambda fn: fn.call(fn.call, ["y"], loc=HERE), "a callee is named by a string, not "),
    # one integer index per dimension
    "load with too many indices": (
        lambda fn: fn.load("v", [0, 1], loc=HERE),
        "'v' has 1 dimension: it takes 1 index, not 2",
    ),
    "element with too few indices": (
        lambda fn: fn.add(fn.at("m", 0), 1.0, loc=HERE),
        "'m' has 2 dimensions: it takes 2 indices, not 1",
    ),
    "index not in a sequence": (
        lambda fn: fn.load("v", 0, loc=HERE),
        "the indices of 'v' are a sequence, not 0 (int)",
    ),
    "float index value": (
        lambda fn: fn.load("v", [fn["x"]], loc=HERE),
        "an index is an integer, not f64",
    ),
    "float loop bound": (
        lambda fn: fn.for_(0, fn["x"], 1, lambda i: None, loc=HERE),
        "a loop's bound or step is an integer, not f64",
    ),
    "sizes not in a sequence": (
        lambda fn: fn.zeros("a", 3, f64, loc=HERE),
        "the sizes of 'a' are a sequence, not 3 (int)",
    ),
    # values that are not numbers, or not numbers of the type
    "string": (lambda fn: fn.add("y", "abc", loc=HERE), "'abc' (str) is not a number"),
    "variable's name as a value": (
        lambda fn: fn.add("y", "x", loc=HERE),
        "'x' (str) is not a number (fn['x'] reads the variable)",
    ),
    "ancilla typed unlike its value": (
        lambda fn: fn.alloc("a", fn["x"], i64, loc=HERE),
        "an ancilla of type i64 cannot start from a f64 value",
    ),
    "None": (lambda fn: fn.add("y", None, loc=HERE), "None (NoneType) is not a number"),
    "array": (lambda fn: fn.alloc("a", np.ones(2), loc=HERE), "array([1., 1.]) (ndarray) is not a number"),
    "complex into a float": (lambda fn: fn.add("y", 1j, loc=HERE), "cannot use the complex number 1j as f64"),
    "complex into an integer": (lambda fn: fn.add("n", 1j, loc=HERE), "cannot use the complex number 1j as i64"),
    "integer past the floats": (
        lambda fn: fn.add("y", 2**1024, loc=HERE),
        f"the integer {2**1024} does not fit f64",
    ),
    "type that is no type": (lambda fn: fn.cast(fn["x"], "f64", loc=HERE), "'f64' (str) is not a type"),
    # names of new variables
    "empty name": (
        lambda fn: fn.alloc("", 0.0, loc=HERE),
        "'' cannot name a variable: a name starts with an ASCII letter or one of _ $ . - "
        "and goes on with letters, digits and those",
    ),
    "name not a string": (lambda fn: fn.alloc(1, 0.0, loc=HERE), "a variable is named by a string, not 1 (int)"),
    "loop index named by a number": (
        lambda fn: fn.for_(0, 3, 1, lambda i: None, loc=HERE, index_name=0),  # type: ignore[arg-type]
        "a loop index is named by a string, not 0 (int)",
    ),
    "stack over a variable": (lambda fn: fn.stack("y", f64, loc=HERE), "'y' is already a variable here"),
    "pop over a variable": (
        lambda fn: (fn.stack("s", f64), fn.alloc("a", 0.0), fn.push("s", "a"), fn.pop("s", "y", loc=HERE)),
        "'y' is already a variable here",
    ),
    "stack of arrays": (lambda fn: fn.stack("s", vector, loc=HERE), "a stack holds scalars, not memref<?xf64>"),
    "ancilla array of complex": (
        lambda fn: fn.zeros("a", [2], c128, loc=HERE),
        "ancilla arrays hold integers or floats, not complex<f64>",
    ),
    # ops a frontend emits itself
    "emitting what is no op": (
        lambda fn: fn.emit("rev.neg", loc=HERE),
        "only operations are emitted, not 'rev.neg' (str)",
    ),
    "emitting an op twice": (
        lambda fn: fn.emit(fn.emit(arith.ConstantOp(FloatAttr(1.0, f64))), loc=HERE),
        "'arith.constant' is in a block already; emit each op once",
    ),
    # region bodies and conditions are functions the builder calls
    "condition given as a value": (
        lambda fn: fn.if_(fn["x"] > 0.0, lambda: fn.neg("y"), loc=HERE),
        "the if's condition 'pre' is given by a function of no arguments, not a value",
    ),
    "loop body without the index": (
        lambda fn: fn.for_(0, 3, 1, lambda: fn.neg("y"), loc=HERE),
        "the loop body is given by a function of one argument, the loop index, not <lambda>()",
    ),
    "routine body not a function": (
        lambda fn: fn.routine(lambda: None, None, loc=HERE),
        "the routine body is given by a function of no arguments, not None (NoneType)",
    ),
    "safe block at no time": (
        lambda fn: fn.safe(lambda: None, when="never", loc=HERE),
        "a safe block runs 'forward', 'inverse', 'both', not 'never'",
    ),
    # values kept past the region or function that made them
    "loop index after its loop": (
        lambda fn: fn.add("n", kept_from(lambda keep: fn.for_(0, 3, 1, keep)), loc=HERE),
        "%i (block argument #0) is not visible here: it was computed in a region that has ended, "
        "or in another function",
    ),
    "branch value after its if": (
        lambda fn: fn.add(
            "y",
            kept_from(lambda keep: fn.if_(lambda: fn["x"] > 0.0, lambda: keep(fn["x"] * 2.0), loc=FUNCTION)),
            loc=HERE,
        ),
        "a value (result of 'arith.mulf' at model.src:1:1) is not visible here: it was computed in a region "
        "that has ended, or in another function",
    ),
    "value of another function": (
        lambda fn: fn.add("y", ModuleBuilder().function("g", [("a", f64)])["a"], loc=HERE),
        "%a (block argument #0) is not visible here: it was computed in a region that has ended, "
        "or in another function",
    ),
    "emitted op on a value of another function": (
        lambda fn: fn.emit(arith.AddfOp(*[ModuleBuilder().function("g", [("a", f64)])["a"].ssa] * 2), loc=HERE),
        "'arith.addf': %a (block argument #0) is not visible here: it was computed in a region that has ended, "
        "or in another function",
    ),
    "emitted op on a loop index after its loop": (
        lambda fn: fn.emit(arith.AddiOp(*[kept_from(lambda keep: fn.for_(0, 3, 1, keep)).ssa] * 2), loc=HERE),
        "'arith.addi': %i (block argument #0) is not visible here: it was computed in a region that has ended",
    ),
    # outer variables ended inside a region
    "outer argument pushed in a loop": (
        lambda fn: (fn.stack("s", f64), fn.for_(0, 3, 1, lambda i: fn.push("s", "y"), loc=HERE)),
        "'y' was created outside the loop body; it cannot end inside it (freed, or pushed and not popped back)",
    ),
    "outer ancilla freed in a branch": (
        lambda fn: (fn.alloc("a", 0.0), fn.if_(lambda: fn["x"] > 0.0, lambda: fn.free("a", 0.0), loc=HERE)),
        "'a' was created outside the then-branch; it cannot end inside it (freed, or pushed and not popped back)",
    ),
    "routine body freeing what the computation made": (
        lambda fn: fn.routine(lambda: fn.alloc("t", fn["x"]), lambda: fn.free("t", fn["x"]), loc=HERE),
        "'t' was created outside the routine body; it cannot end inside it (freed, or pushed and not popped back)",
    ),
    "stack left by a routine's computation": (
        lambda fn: fn.routine(lambda: fn.stack("s", f64), lambda: fn.neg("y"), loc=HERE),
        "'s' allocated in the routine's computation is not freed there",
    ),
    # expressions on operands of the wrong kind
    "real part of a float": (lambda fn: fn.real(fn["x"], loc=HERE), "'real' is not defined on f64"),
    "complex of integers": (lambda fn: fn.complex(1, 2, loc=HERE), "a complex number's parts are floats, not i64"),
    "log number's value of a float": (lambda fn: fn.from_log(fn["x"], loc=HERE), "'from_log' is not defined on f64"),
    "fixed number's value of a float": (
        lambda fn: fn.from_number(fn["x"], loc=HERE),
        "'from_number' is not defined on f64",
    ),
    "selection on a float": (
        lambda fn: fn.select(fn["x"], 1.0, 2.0, loc=HERE),
        "a selection's condition must be a boolean, got f64",
    ),
    "unknown comparison": (
        lambda fn: fn.compare("lesser", fn["x"], 1.0, loc=HERE),
        "unknown comparison 'lesser': use one of lt, le, gt, ge, eq, ne",
    ),
    "and of one operand": (
        lambda fn: fn.logical("and", fn["x"] > 0.0, loc=HERE),
        "'and' of one operand is no logical operation: 'and' and 'or' take two, 'not' one",
    ),
    "value as an else-branch": (
        lambda fn: fn.if_(lambda: fn["x"] > 0.0, lambda: None, fn["x"], loc=HERE),
        "the else-branch is given by a function of no arguments, not a value",
    ),
    "result of an op never emitted": (
        lambda fn: fn.add("y", Value(fn, arith.ConstantOp(FloatAttr(1.0, f64)).result), loc=HERE),
        "a value (result of 'arith.constant') is not visible here: its op was never emitted; emit it first",
    ),
}


@pytest.mark.parametrize("build, message", MISUSES.values(), ids=MISUSES.keys())
def test_misuse_is_a_located_build_error(build: Callable[[FunctionBuilder], object], message: str):
    error = refusal(build)
    assert error.message.startswith(message) and error.loc == HERE


def test_an_emitted_op_that_breaks_its_own_rules_is_a_build_error_at_its_loc():
    """An ill-typed op a frontend emits passes ``emit`` (its own rules are
    the verifier's) and failed the module's ``finish()`` with xDSL's
    ``VerifyException``, said at ``<stdin>``.  It is a ``BuildError`` at
    the op's loc, or where the op has none, its function's; and where
    neither has one, at the file ``format_error`` is given."""
    for function_loc, op_loc, said in (
        (FUNCTION, HERE, "model.src:3:1"),
        (FUNCTION, None, "model.src:1:1"),
        (None, None, "f.mlir"),
    ):
        mb = ModuleBuilder()
        fn = mb.function("f", [("y", f64)], loc=function_loc)
        fn.emit(arith.AddiOp(fn["y"].ssa, fn["y"].ssa), op_loc)  # addi of floats
        fn.finish()
        with pytest.raises(BuildError) as info:
            mb.finish()
        assert format_error(info.value, file="f.mlir") == (
            f"{said}: error: 'arith.addi': operand 'lhs' at position 0 does not verify: Unexpected attribute f64"
        )
    mb = ModuleBuilder()  # a broken reversibility rule is still the verifier's own error
    fn = mb.function("f", [("y", f64)], loc=FUNCTION)
    fn.emit(rev.AddOp(fn["y"].ssa, fn["y"].ssa), HERE)
    fn.finish()
    with pytest.raises(
        ReversibilityViolation, match=r"\[linearity\] %y is consumed twice: by .rev.add. at model.src:3:1"
    ):
        mb.finish()


def test_a_finished_module_builder_is_empty():
    """``finish()`` hands the functions to the module: the builder builds
    another, in which the names are free again and the first module's
    functions are unknown."""
    mb = ModuleBuilder()
    mb.function("f", [("y", f64)], loc=FUNCTION).finish()
    first = mb.finish()
    again = mb.function("f", [("y", f64)], loc=FUNCTION)
    again.neg("y", loc=HERE)
    again.finish()
    second = mb.finish()
    assert [op.sym_name.data for op in first.ops] == [op.sym_name.data for op in second.ops] == ["f"]
    caller = mb.function("g", [("y", f64)], loc=FUNCTION)
    caller.call("f", ["y"], loc=HERE)
    caller.finish()
    with pytest.raises(ReversibilityViolation) as info:
        mb.finish()
    assert format_error(info.value) == "model.src:3:1: error: [call] 'rev.call' refers to unknown function @f"


def test_a_build_error_is_reported_at_its_loc():
    """``format_error`` puts a ``BuildError`` at the frontend's location,
    not at the file it is given (which names no line of the frontend's
    source); one without a file location is said at that file."""
    error = refusal(MISUSES["string"][0])
    assert format_error(error, file="f.mlir") == "model.src:3:1: error: 'abc' (str) is not a number"
    assert format_error(BuildError("no such variable 'q'"), file="f.mlir") == "f.mlir: error: no such variable 'q'"


def test_argument_names_are_checked_where_the_function_begins():
    def begun(args: list[Any], name: object = "f") -> str:
        with pytest.raises(BuildError) as info:
            ModuleBuilder().function(name, args, loc=HERE)  # type: ignore[arg-type]
        assert info.value.loc == HERE
        return info.value.message

    assert begun([("y", f64), ("y", f64)]) == "argument 'y' of f is given twice"
    assert begun([("", f64)]).startswith("'' cannot name an argument of f: a name starts with an ASCII letter")
    assert begun([("y",)]) == "an argument of f is a pair (name, type), not ('y',) (tuple)"
    assert begun([("y", f64)], name=3) == "a function is named by a string, not 3 (int)"


def test_a_function_is_defined_once_and_finished_once():
    mb = ModuleBuilder()
    mb.function("f", [("y", f64)], loc=FUNCTION).finish()
    with pytest.raises(BuildError) as info:
        mb.function("f", [("y", f64)], loc=HERE)
    assert (info.value.message, info.value.loc) == ("function 'f' is already defined in this module", HERE)

    fn = ModuleBuilder().function("g", [("y", f64)], loc=FUNCTION)
    fn.finish()
    for after in (
        lambda: fn.finish(HERE),
        lambda: fn.add("y", 1.0, loc=HERE),
        lambda: fn.for_(0, 2, 1, lambda i: None, loc=HERE),
    ):
        with pytest.raises(BuildError) as info:
            after()
        assert (info.value.message, info.value.loc) == (
            "function 'g' is finished; nothing more can be built into it",
            HERE,
        )


def test_a_module_refuses_an_unfinished_function():
    mb = ModuleBuilder()
    mb.function("f", [("y", f64)], loc=FUNCTION).add("y", 1.0)
    with pytest.raises(BuildError) as info:
        mb.finish()
    assert (info.value.message, info.value.loc) == ("function 'f' is not finished; call its finish()", FUNCTION)


def test_an_error_without_a_loc_is_at_the_function():
    fn = ModuleBuilder().function("f", [("y", f64)], loc=FUNCTION)
    fn.alloc("a", 0.0)
    with pytest.raises(BuildError) as info:
        fn.finish()
    assert info.value.loc == FUNCTION


def test_what_the_checks_let_through_still_builds_and_runs():
    # numpy's scalars are numbers; an outer variable pushed and popped back
    # within one loop iteration, and a value from around a region, are fine
    mb = ModuleBuilder()
    fn = mb.function("f", [("y", f64), ("x", f64), ("n", i64)])
    twice = fn["x"] * 2.0
    fn.stack("s", f64)

    def body(i: Value) -> None:
        fn.push("s", "y")
        fn.pop("s", "y")
        fn.add("y", twice)
        fn.add("n", np.int64(1))

    fn.for_(0, np.int64(3), 1, body)
    fn.free_stack("s")
    fn.add("y", np.float32(0.5))
    fn.finish()
    program = run(mb)
    assert program.call("f", 0.0, 1.0, 1) == (6.5, 1.0, 4)
    assert program.uncall("f", 6.5, 1.0, 4) == (0.0, 1.0, 1)


def test_a_refused_update_leaves_the_function_as_it_was():
    # the element was taken before the value was refused; a frontend that
    # reports the error and goes on must still get a function that verifies
    mb = ModuleBuilder()
    fn = mb.function("f", [("v", vector), ("z", c128)])
    with pytest.raises(BuildError, match="'abc' \\(str\\) is not a number"):
        fn.add(fn.at("v", 0), "abc")
    with pytest.raises(BuildError, match="not a number"):
        fn.sub(Part("z", "imag"), lambda: None)
    fn.add(fn.at("v", 1), 2.0)
    fn.add(Part("z", "imag"), 1.0)
    fn.finish()
    v = np.zeros(2)
    assert run(mb).call("f", v, 0j)[1] == 1j
    np.testing.assert_array_equal(v, [0.0, 2.0])


def test_a_conversion_to_a_boolean_is_a_comparison_with_zero():
    # native code's truncation kept the low bit (2 was false, where the
    # interpreter said true), and fptosi made 1.0 false on both engines
    mb = ModuleBuilder()
    fn = mb.function("f", [("b", i64), ("x", f64), ("n", i64)])
    fn.add("b", fn.cast(fn.cast(fn["x"], i1), i64))
    fn.add("b", fn.cast(fn.cast(fn["n"], i1), i64) * 2)
    fn.add("b", fn.cast(fn.cast(fn.cast(fn["n"], IndexType()), i1), i64) * 4)
    fn.finish()
    module = mb.finish()
    engines = (RevInterpreter(module), NativeModule.compile(module))
    for x, n in ((0.0, 0), (1.0, 2), (-1.0, -2), (0.5, 1), (float("nan"), 256), (-0.0, -256)):
        expected = bool(x) + 6 * bool(n)
        assert [engine.call("f", 0, x, n)[0] for engine in engines] == [expected, expected], (x, n)


def test_a_value_has_no_truth_value_while_building():
    # a Python `if` on a value would build one branch for every run
    fn = ModuleBuilder().function("f", [("y", f64), ("x", f64)], loc=FUNCTION)
    with pytest.raises(BuildError) as info:
        if fn["x"] > 0.0:
            fn.neg("y")
    assert info.value.loc == FUNCTION
    assert info.value.message == "a value has no truth value while the function is built; branch with if_ or select"


def test_an_update_or_store_of_an_integer_into_a_boolean_wraps():
    # as into every other width: the low bit, so b += 2 leaves b, where an
    # explicit conversion (cast, truth) makes 2 true
    mb = ModuleBuilder()
    fn = mb.function("f", [("a", i1), ("s", i1), ("x", i1), ("n", i64)])
    fn.add("a", fn["n"])
    fn.sub("s", fn["n"])
    fn.xor("x", fn.index(fn["n"]))
    fn.finish()
    module = mb.finish()
    engines = (RevInterpreter(module), NativeModule.compile(module))
    for n in (1, 2, 3, 2**32, 2**32 + 2):
        flip = bool(n & 1)
        expected = (flip, not flip, flip, n)
        assert [engine.call("f", False, True, False, n) for engine in engines] == [expected, expected], n
        assert [engine.uncall("f", *expected) for engine in engines] == [(False, True, False, n)] * 2, n


TRUNCATIONS = """
rev.func @f(%y: i64, %n: i64) {
  %b = arith.trunci %n : i64 to i1
  %w = arith.extui %b : i1 to i64
  %h = arith.trunci %n : i64 to i32
  %v = arith.extsi %h : i32 to i64
  %c2 = arith.constant 2 : i64
  %vv = arith.muli %v, %c2 : i64
  %s = arith.addi %w, %vv : i64
  %y1 = rev.add %y, %s : i64
  rev.return %y1, %n : i64, i64
}
"""


def test_trunci_keeps_the_low_bits_on_both_engines():
    module = parse_module(TRUNCATIONS, "truncations.mlir")
    engines = (RevInterpreter(module), NativeModule.compile(parse_module(TRUNCATIONS, "truncations.mlir")))
    for n in (1, 2, 3, 2**32, 2**32 + 2, 2**31, -1):
        low32 = (n + 2**31) % 2**32 - 2**31
        expected = (n & 1) + 2 * low32
        assert [engine.call("f", 0, n)[0] for engine in engines] == [expected, expected], n


def test_values_are_not_compared_with_equals():
    # `if fn["x"] == 0.0:` would compare the builder's objects and build
    # one branch for every run
    fn = ModuleBuilder().function("f", [("y", f64), ("x", f64)], loc=FUNCTION)
    for compare, name in ((lambda x: x == 0.0, "eq"), (lambda x: x != 0.0, "ne")):
        with pytest.raises(BuildError) as info:
            compare(fn["x"])
        assert info.value.loc == FUNCTION
        assert info.value.message.startswith(f"values are compared with compare('{name}', a, b)")
    x = fn["x"]
    assert {x: 1}[x] == 1 and x in {x}


@pytest.mark.parametrize(
    "number, type",
    [
        (np.int64(3), i64),
        (np.int8(-3), i64),
        (np.uint32(7), i64),
        (np.float32(0.5), f64),
        (np.complex64(1j), c128),
        (np.bool_(True), i1),
        (True, i1),
        (3, i64),
        (2.5, f64),
        (1j, c128),
    ],
)
def test_a_constant_without_a_type_takes_its_numbers_kind(number: object, type: Any):
    fn = ModuleBuilder().function("f", [("y", f64)])
    assert fn.const(number).type == type


def test_numpy_booleans_are_constants_of_every_type():
    mb = ModuleBuilder()
    fn = mb.function("f", [("y", f64), ("b", i1), ("n", i64)])
    fn.add("y", fn.const(np.bool_(True), f64))
    fn.xor("b", np.bool_(True))
    fn.add("n", fn.const(np.bool_(True), i64))
    fn.finish()
    assert run(mb).call("f", 0.0, False, 0) == (1.0, True, 1)


class _Unreadable:
    """A callable whose signature ``inspect`` cannot read (a TypeError,
    not the ValueError of a builtin's)."""

    __signature__ = "unreadable"

    def __call__(self) -> None:
        return None


def test_a_callback_without_a_readable_signature_is_called_as_it_is():
    mb = ModuleBuilder()
    fn = mb.function("f", [("y", f64), ("x", f64)])
    fn.if_(lambda: fn["x"] > 0.0, _Unreadable(), lambda: fn.add("y", 1.0))
    fn.finish()
    program = run(mb)
    assert program.call("f", 0.0, -1.0) == (1.0, -1.0)
    assert program.call("f", 0.0, 1.0) == (0.0, 1.0)
