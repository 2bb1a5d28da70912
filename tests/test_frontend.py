"""@rv.reversible: the reversible-Python language, calling conventions and
type specialisation."""

import cmath
import math
from pathlib import Path

import numpy as np
import pytest

import revmlir as rv


@rv.reversible
def multiplier(y, a, b):
    y += a * b


def test_multiplier_both_ways_and_inverse_spellings():
    assert multiplier(2.0, 3.0, 5.0) == (17.0, 3.0, 5.0)
    assert (~multiplier)(17.0, 3.0, 5.0) == (2.0, 3.0, 5.0)
    assert multiplier.inverse(17.0, 3.0, 5.0) == (2.0, 3.0, 5.0)
    assert ~~multiplier is multiplier


def test_specialisation_per_signature_is_cached():
    assert multiplier(2, 3, 5) == (17, 3, 5)
    ints = multiplier.specialization_for(2, 3, 5)
    floats = multiplier.specialization_for(2.0, 3.0, 5.0)
    assert ints is multiplier.specialization_for(7, 8, 9)
    assert ints is not floats
    assert "arith.muli" in ints.text() and "arith.mulf" in floats.text()


def test_mlir_shows_the_rev_ir():
    text = multiplier.mlir(1.0, 2.0, 3.0)
    assert "rev.func @multiplier(%y: f64, %a: f64, %b: f64)" in text
    assert "rev.add %y, %0 : f64" in text


@rv.reversible
def clog(y: complex, x: complex):
    with rv.routine() as r:
        n = rv.ancilla(0.0)
        n += abs(x)
    y.real += math.log(n)
    y.imag += cmath.phase(x)
    ~r


def test_complex_log_with_routine_and_annotations():
    y, x = clog(0.5j, 3 - 4j)
    assert cmath.isclose(y, 0.5j + cmath.log(3 - 4j), rel_tol=1e-15)
    assert (~clog)(y, x) == pytest.approx((0.5j, 3 - 4j))
    assert "rev.routine" in clog.mlir()


def test_annotated_parameters_convert_arguments():
    y, x = clog(0, 2)  # ints where complex is declared
    assert cmath.isclose(y, math.log(2))


@rv.reversible
def swaps_and_rotations(a, b, theta, v):
    a, b = b, a
    rv.rot(a, b, theta)
    v[0], v[1] = v[1], v[0]
    rv.irot(v[0], v[1], theta)
    a = -a


def test_swap_rot_neg_on_scalars_and_elements():
    v = np.array([1.0, 2.0])
    a, b, theta, _ = swaps_and_rotations(1.0, 2.0, 0.25, v)
    c, s = math.cos(0.25), math.sin(0.25)
    assert (a, b) == pytest.approx((-(2 * c - 1 * s), 2 * s + 1 * c))
    assert v == pytest.approx([2 * c + 1 * s, -2 * s + 1 * c])
    (~swaps_and_rotations)(a, b, theta, v)
    assert v == pytest.approx([1.0, 2.0])


@rv.reversible
def loops(x, total, n):
    for i in range(n):
        total += x[i]
    for i in range(n - 1, 0, -2):
        x[i] += x[i - 1]
    for i in reversed(range(1, n)):
        x[i] -= 0.5 * x[i - 1]


def test_for_loops_including_negative_steps_and_reversed():
    x = np.arange(1.0, 7.0)
    expected = x.copy()
    total = expected.sum()
    for i in range(5, 0, -2):
        expected[i] += expected[i - 1]
    for i in reversed(range(1, 6)):
        expected[i] -= 0.5 * expected[i - 1]
    _, t, _ = loops(x, 0.0, 6)
    assert t == total
    assert x == pytest.approx(expected)
    (~loops)(x, t, 6)
    assert x == pytest.approx(np.arange(1.0, 7.0))


@rv.reversible
def stacks(x, y):
    s = rv.stack(float)
    t = rv.ancilla(0.0)
    t += x * y
    rv.push(s, t)  # t's value is unknown to the rest: keep it on the stack
    y += x
    t = rv.pop(s)
    y += t
    rv.copy_push(s, y)
    rv.copy_pop(s, y)
    y -= t
    t -= x * (y - x)
    rv.free(t)
    rv.free(s)


def test_stacks_and_ancillas():
    assert stacks(2.0, 3.0) == (2.0, 5.0)
    assert (~stacks)(2.0, 5.0) == (2.0, 3.0)


def test_ancilla_with_wrong_value_raises_invertibility_error_at_user_line():
    @rv.reversible
    def dirty(x):
        t = rv.ancilla(0.0)
        t += x
        rv.free(t)

    with pytest.raises(rv.InvertibilityError) as info:
        dirty(3.0)
    assert info.value.op_name == "anc.free"
    assert info.value.location.startswith(__file__)
    line = int(info.value.location.split(":")[-2])
    assert "rv.free(t)" in Path(__file__).read_text().splitlines()[line - 1]


def test_nocheck_turns_checks_off():
    @rv.reversible(checks=False)
    def dirty(x):
        t = rv.ancilla(0.0)
        t += x
        rv.free(t)

    @rv.reversible
    def dirty_block(x):
        t = rv.ancilla(0.0)
        with rv.nocheck():
            t += x
            rv.free(t)

    assert dirty(3.0) == 3.0
    assert dirty_block(3.0) == 3.0
    assert "nocheck" in dirty_block.mlir(1.0)


@rv.reversible
def logs(out, x, n):
    if x != 0:
        with rv.routine() as r:
            ly = rv.ancilla(rv.ulog(1.0))
            lx = rv.ancilla(rv.ulog(1.0))
            lx *= rv.ulog(x)
            for i in range(n):
                ly *= lx
        out += float(ly)
        ~r


def test_log_numbers_power():
    assert logs(0.0, 2.0, 10) == (1024.0, 2.0, 10)
    assert logs(0.5, 1.5, 3)[0] == pytest.approx(0.5 + 1.5**3)
    assert logs(0.0, 0.0, 3) == (0.0, 0.0, 3)


def helper_square(v):
    """A pure helper: inlined into the expression that calls it."""
    w = v * v
    return w


@rv.reversible
def uses_helpers(y, x):
    y += helper_square(x) + math.hypot(x, 1.0) + np.exp(x) + min(x, 1.0)


def test_pure_helpers_and_library_functions():
    y, _ = uses_helpers(0.0, 0.5)
    assert y == pytest.approx(0.25 + math.hypot(0.5, 1.0) + math.exp(0.5) + 0.5)


@rv.reversible(backend="interpreter")  # print is not compiled natively
def conditions(x, y):
    if rv.cond(x > 0.0, post=x > 0.0):
        y += x
    else:
        y -= x
    with rv.inverse():
        y += 1.0
    with rv.safe():
        print("y is", y)


def test_if_postcondition_inverse_block_and_safe(capsys):
    assert conditions(2.0, 0.0) == (2.0, 1.0)
    assert conditions(-2.0, 0.0) == (-2.0, 1.0)
    assert "y is 1.0" in capsys.readouterr().out
    assert (~conditions)(2.0, 1.0) == (2.0, 0.0)
    assert capsys.readouterr().out == ""  # safe blocks run forward only


@rv.reversible
def caller(y, x, m):
    multiplier(y, x, 2.0 * x)
    (~multiplier)(m[0], x, 3.0)
    multiplier.inverse(y, x, x + 0.0)


def test_calls_of_other_reversible_functions():
    m = np.array([10.0])
    y, x, _ = caller(1.0, 3.0, m)
    assert y == 1.0 + 18.0 - 9.0
    assert m[0] == 10.0 - 9.0
    (~caller)(y, x, m)
    assert m[0] == 10.0
