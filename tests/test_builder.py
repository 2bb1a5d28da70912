"""The builder API: frontends name variables, the builder threads SSA versions
and region state; the result verifies and runs."""

import cmath

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ComplexType,
    IndexType,
    MemRefType,
    f64,
    i64,
)

from revmlir.builder import BuildError, ModuleBuilder, Part
from revmlir.errors import ReversibilityViolation
from revmlir.interpreter import RevInterpreter

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
