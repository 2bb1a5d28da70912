"""NiLang's language beyond plain variables: updates of one part of a
complex number, stack arguments, struct arguments with bijection views, and
``rv.safe`` blocks with assertions, printing and counters.  Each runs on
both engines, which must agree with each other and with plain Python, and
each error is located at the user's line."""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import revmlir as rv
from marked_lines import MarkedLines
from revmlir.frontend.base.structs import Layout, Struct

BACKENDS = ("native", "interpreter")
located = MarkedLines(Path(__file__)).located


def on_both(pyfunc: Callable[..., Any]) -> dict[str, rv.ReversibleFunction]:
    """``pyfunc`` as a reversible function per backend."""
    return {backend: rv.reversible(pyfunc, backend=backend) for backend in BACKENDS}


def compile_error(source: str, *args: Any) -> rv.ReversibleSyntaxError:
    """The error calling the reversible function ``f`` of this file's
    ``source`` (a function defined below) raises."""
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.reversible(globals()[source])(*args)
    return info.value


# -- complex parts ---------------------------------------------------------------------


def _rotate_parts(z: complex, w: complex):
    z.real -= z.imag * 2.0
    z.imag += math.sin(z.real) + w.imag
    w.imag += cmath.phase(z) * 0.0 + z.real


ROTATE_PARTS = on_both(_rotate_parts)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_part_update_reads_the_other_part(backend: str):
    f = ROTATE_PARTS[backend]
    z, w = 1.0 + 2.0j, 0.5 + 3.0j
    real = z.real - 2.0 * z.imag
    imag = z.imag + math.sin(real) + w.imag
    assert f(z, w) == (complex(real, imag), complex(w.real, w.imag + real))
    assert (~f)(*f(z, w)) == (z, w)


def test_part_updates_have_gradients():
    # Re z after = Re z - 2 Im z: the gradient ∂/∂Re z + i ∂/∂Im z is 1 - 2i
    grad = rv.gradient(ROTATE_PARTS["native"], (1.0 + 2.0j, 0.5 + 3.0j), iloss=0)
    assert grad == (1.0 - 2.0j, 0.0)


def _alias_same_part(z: complex):
    z.real -= z.real  # E:same-part


def _alias_whole(z: complex):
    z.imag += abs(z) + z.real  # E:whole


@pytest.mark.parametrize(
    "source, marker, read",
    [
        ("_alias_same_part", "# E:same-part", "'z.real' aliases 'z.real'"),
        ("_alias_whole", "# E:whole", "'z' aliases 'z.imag'"),
    ],
)
def test_a_part_update_reading_its_own_part_is_located(source: str, marker: str, read: str):
    located(compile_error(source, 1 + 2j), marker, read, "its inverse would need the value it destroyed")


# -- stack arguments ------------------------------------------------------------------


@rv.reversible
def _stash(s, x: float, y: float):
    rv.push(s, x)
    x = rv.pop(s)
    rv.copy_push(s, x)
    y += x


def _keep_top(s: rv.Stack, x: float, y: float):
    _stash(s, x, y)  # passes the stack on
    t = rv.pop(s)
    y += t * 2.0
    rv.push(s, t)


KEEP_TOP = on_both(_keep_top)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_stack_argument_comes_back_updated(backend: str):
    f = KEEP_TOP[backend]
    s = rv.Stack(float, [7.0])
    result = f(s, 2.0, 1.0)
    assert result == ([7.0, 2.0], 2.0, 1.0 + 2.0 + 2.0 * 2.0)
    assert result[0] is s  # updated in place
    assert (~f)(*result) == ([7.0], 2.0, 1.0) and s == [7.0]


def _push_one_pop_other(s: rv.Stack, t: rv.Stack, x: float):
    rv.push(s, x)
    x = rv.pop(t)


PUSH_ONE_POP_OTHER = on_both(_push_one_pop_other)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_stack_passed_for_two_parameters_is_refused(backend: str):
    """Native code copied each stack argument apart and copied each back,
    the last copy winning (the 2.0 pushed and the 1.0 popped were both
    lost), where the interpreter pushed and popped the one list: both
    refuse it now, as they refuse arrays that share memory, forwards,
    backwards and in the adjoint, and leave the stack as it was."""
    f = PUSH_ONE_POP_OTHER[backend]
    s = rv.Stack(float, [1.0])
    message = (
        "arguments 's' and 't' of _push_one_pop_other are the same stack, and _push_one_pop_other "
        "updates each in place; pass distinct stacks (a copy of one)"
    )
    for run in (f, ~f):
        with pytest.raises(ValueError) as error:
            run(s, s, 2.0)
        assert str(error.value) == message
    with pytest.raises(ValueError) as error:
        rv.adjoint(f)(s, s, 1.0, [0.0], [0.0], 1.0)
    assert str(error.value) == message
    shadow = rv.Stack(float, [0.0])
    with pytest.raises(ValueError) as error:
        rv.adjoint(f)(s, rv.Stack(float, []), 1.0, shadow, shadow, 1.0)
    assert str(error.value).startswith(
        "arguments #3 (the gradient of 's') and #4 (the gradient of 't') of _push_one_pop_other are the same stack"
    )
    assert s == [1.0]
    assert f(s, rv.Stack(float, [3.0]), 2.0) == ([1.0, 2.0], [], 3.0)


def test_stack_arguments_have_gradients():
    # y += x, then y += 2 t with t the copy of x _stash left on the stack:
    # the gradient reaches x through the stack too, ∂y/∂x = 1 + 2
    grad = rv.gradient(KEEP_TOP["native"], (rv.Stack(float, [7.0]), 3.0, 0.0), iloss=2)
    assert grad[1:] == (3.0, 1.0)


@pytest.mark.parametrize("start", [[], [7.0], [7.0, 8.0]])
def test_a_stack_gradient_has_one_entry_per_element_passed(start):
    """The stack's shadow is the stack ``f`` leaves (one more element here):
    sized from the stack passed in, the gradient popped an empty shadow
    ("pop from an empty stack") or returned one entry too few."""
    grad = rv.gradient(KEEP_TOP["native"], (rv.Stack(float, start), 3.0, 0.0), iloss=2)
    _, pullback = rv.vjp(KEEP_TOP["native"], rv.Stack(float, start), 3.0, 0.0)
    assert grad == ([0.0] * len(start), 3.0, 1.0) == pullback(None, 0.0, 1.0)


def _cube_through_stack(s: rv.Stack, x: float, y: float):
    rv.copy_push(s, x)
    t = rv.pop(s)
    y += t * t * x
    rv.push(s, t)


def _square_top_times(s: rv.Stack, x: float, y: float):
    t = rv.pop(s)
    y += t * t * x
    rv.push(s, t)
    rv.copy_push(s, x)


def _flat_gradient(f: rv.ReversibleFunction, start: list[float], x: float, y: float) -> np.ndarray:
    return np.concatenate([np.ravel(g) for g in rv.gradient(f, (rv.Stack(float, start), x, y), iloss=2)])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "pyfunc, start",
    [
        (_cube_through_stack, []),
        (_cube_through_stack, [7.0]),
        (_square_top_times, [5.0]),
        (_square_top_times, [7.0, 2.0]),
    ],
)
def test_stack_hessians_seed_the_stack_f_leaves(backend: str, pyfunc: Callable[..., None], start: list[float]):
    """``f`` pushes onto its stack, so the gradient program's seed for the
    stack has the length of the stack ``f`` leaves: sized from the one
    passed in, ``@f.grad.loss2.tan`` popped an empty stack (or gave the
    stack one entry too few).  Checked against the closed form (y gains
    x³, or t²·x for t the top of s) and finite differences of the
    gradient."""
    f = rv.reversible(pyfunc, backend=backend)
    x, y, n = 3.0, 0.5, len(start)
    exact = np.zeros((n + 2, n + 2))
    if pyfunc is _cube_through_stack:
        exact[n, n] = 6.0 * x
    else:
        t = start[-1]
        exact[n - 1, n - 1], exact[n - 1, n], exact[n, n - 1] = 2.0 * x, 2.0 * t, 2.0 * t
    s = rv.Stack(float, start)
    hessian = rv.hessian(f, (s, x, y), iloss=2)
    np.testing.assert_allclose(hessian, exact, rtol=1e-12, atol=1e-12)
    h, columns = 1e-5, []
    for j in range(n + 2):
        up, down = np.array([*start, x, y]), np.array([*start, x, y])
        up[j] += h
        down[j] -= h
        columns.append(
            (_flat_gradient(f, list(up[:n]), *up[n:]) - _flat_gradient(f, list(down[:n]), *down[n:])) / (2 * h)
        )
    np.testing.assert_allclose(np.array(columns).T, hessian, atol=1e-6)
    v = [1.0 + k for k in range(n)]
    products = rv.hvp(f, (s, x, y), (v, 2.0, -1.0), iloss=2)
    assert products[0] == pytest.approx(list(exact[:n] @ [*v, 2.0, -1.0])) and len(products[0]) == n
    assert products[1:] == pytest.approx(list(exact[n:] @ [*v, 2.0, -1.0]))
    assert s == start  # not modified; f itself leaves x on top
    assert f(rv.Stack(float, start), x, y)[0] == [*start, x]


def test_stack_arguments_are_typed_by_their_elements():
    assert rv.Stack(int, [1, 2]) == [1, 2] and repr(rv.Stack(int, [1])) == "rv.Stack(int, [1])"
    assert "!anc.stack<f64>" in KEEP_TOP["native"].mlir(rv.Stack(float), 1.0, 2.0)
    with pytest.raises(TypeError, match=r"the element type must be float, int, complex, bool or rv.ULog"):
        rv.Stack(str)
    # its elements are the caller's Python numbers, which native code would
    # round to float32 and the interpreter would not: refused, for now
    for numpy_type in (np.float32, np.int32, np.float64):
        with pytest.raises(
            TypeError,
            match=rf"^rv.Stack\(<class 'numpy.{numpy_type.__name__}'>\): numpy scalar types are not stack element "
            r"types, since a stack holds Python numbers, which are not converted to their width: "
            r"use float, int, complex, bool or rv.ULog$",
        ):
            rv.Stack(numpy_type, [1])
    with pytest.raises(TypeError, match=r"argument 's' has unsupported type list \(pass a numpy array, or an rv.Stack"):
        KEEP_TOP["native"]([7.0], 1.0, 2.0)
    # a call with another element type is compiled for it, not run on the f64 stack's code
    with pytest.raises(rv.ReversibleSyntaxError, match=r"stack 's' holds int64, not float"):
        KEEP_TOP["native"](rv.Stack(int, [1]), 1.0, 2.0)


def _free_argument_stack(s, x: float):
    rv.free(s)  # E:free-argument-stack


def _push_wrong_type(s, x: float):
    rv.push(s, x)  # E:push-wrong-type
    x = rv.ancilla(0.0)


def test_stack_argument_errors_are_located():
    located(
        compile_error("_free_argument_stack", rv.Stack(float), 1.0),
        "# E:free-argument-stack",
        "'s' is an argument stack",
    )
    located(compile_error("_push_wrong_type", rv.Stack(int), 1.0), "# E:push-wrong-type")


def _pop_too_many(s: rv.Stack, x: float):
    t = rv.pop(s)  # E:pop-empty
    x += t
    rv.push(s, t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_popping_an_empty_argument_stack_is_located(backend: str):
    with pytest.raises(rv.InvertibilityError) as info:
        rv.reversible(_pop_too_many, backend=backend)(rv.Stack(float), 1.0)
    located(info.value, "# E:pop-empty", "pop from an empty stack")


# -- struct arguments and bijection views ----------------------------------------------


@dataclass
class Particle:
    x: float
    v: float
    trail: np.ndarray


class Spring(NamedTuple):
    k: float
    steps: int


def _leapfrog(p: Particle, s: Spring, energy):
    for step in range(s.steps):
        p.v -= 0.1 * s.k * p.x
        p.x += 0.1 * p.v
        p.trail[step] += p.x
    energy += 0.5 * (p.v * p.v + s.k * p.x * p.x)


LEAPFROG = on_both(_leapfrog)


def _plain_leapfrog(x: float, v: float, k: float, steps: int) -> tuple[float, float, list[float], float]:
    trail = []
    for _ in range(steps):
        v -= 0.1 * k * x
        x += 0.1 * v
        trail.append(x)
    return x, v, trail, 0.5 * (v * v + k * x * x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_struct_fields_are_updated_and_come_back_in_new_instances(backend: str):
    f = LEAPFROG[backend]
    p, s = Particle(1, 0.0, np.zeros(3)), Spring(2.0, 3)  # x: float converts the int
    trail = p.trail
    q, s2, energy = f(p, s, 0.0)
    x, v, expected_trail, expected_energy = _plain_leapfrog(1.0, 0.0, 2.0, 3)
    assert isinstance(q, Particle) and q is not p and p.x == 1  # the caller's instance is left alone
    assert (q.x, q.v, energy) == (x, v, expected_energy) and type(q.x) is float
    assert q.trail is trail and trail.tolist() == expected_trail  # arrays are updated in place
    assert s2 == s and isinstance(s2, Spring)
    back, s3, zero = (~f)(q, s2, energy)
    assert (back.x, back.v, zero, s3) == (1.0, 0.0, 0.0, s) and not trail.any()


def test_struct_fields_are_parameters_of_their_own():
    layout = Layout((Struct(Particle, (None, None, None)), Struct(Spring, (None, None)), None))
    text = LEAPFROG["native"].flattened(layout).mlir(1.0, 0.0, np.zeros(3), 2.0, 3, 0.0)
    assert (
        "rev.func @_leapfrog(%p.x: f64, %p.v: f64, %p.trail: memref<?xf64>, %s.k: f64, %s.steps: i64, %energy: f64)"
        in text
    )


@rv.reversible
def _kick(p: Particle, k):
    p.v -= 0.1 * k * p.x


@rv.reversible
def _drift(p, trail_step):
    p.x += 0.1 * p.v
    p.trail[trail_step] += p.x


def _leapfrog_by_calls(p: Particle, s: Spring, energy):
    for step in range(s.steps):
        _kick(p, s.k)  # a struct passed whole: the callee takes its fields
        _drift(p, step)
    energy += 0.5 * (p.v * p.v + s.k * p.x * p.x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_structs_are_passed_whole_to_calls(backend: str):
    f = rv.reversible(_leapfrog_by_calls, backend=backend)
    p, s = Particle(1.0, 0.0, np.zeros(3)), Spring(2.0, 3)
    direct = LEAPFROG[backend](Particle(1.0, 0.0, np.zeros(3)), s, 0.0)
    q, _, energy = f(p, s, 0.0)
    assert (q.x, q.v, q.trail.tolist(), energy) == (direct[0].x, direct[0].v, direct[0].trail.tolist(), direct[2])
    back, _, _ = (~f)(q, s, energy)
    assert (back.x, back.v) == (1.0, 0.0) and not p.trail.any()


def _use_whole_struct(p: Particle):
    p.x += abs(p)  # E:whole-struct


def _pass_the_wrong_struct(p: Particle, s: Spring):
    _kick(s, p.x)  # E:wrong-struct


def _unknown_field(p: Particle):
    p.y += 1.0  # E:unknown-field


def _field_reads_itself(p: Particle):
    p.x -= p.x * 2.0  # E:field-alias


def test_struct_errors_are_located():
    p = Particle(1.0, 0.0, np.zeros(1))
    located(
        compile_error("_use_whole_struct", p),
        "# E:whole-struct",
        "'p' is a struct argument",
        "use its fields (p.x, p.v, p.trail), or pass it whole",
    )
    located(
        compile_error("_pass_the_wrong_struct", p, Spring(1.0, 1)),
        "# E:wrong-struct",
        "_kick(): argument 'p' is declared Particle, got Spring",
    )
    located(
        compile_error("_unknown_field", p), "# E:unknown-field", "'p' has no field 'y'", "its fields are x, v, trail"
    )
    located(compile_error("_field_reads_itself", p), "# E:field-alias", "p.x")
    with pytest.raises(TypeError, match="argument 'p' is declared Particle, got Spring"):
        LEAPFROG["native"](Spring(1.0, 1), Spring(1.0, 1), 0.0)
    with pytest.raises(TypeError, match=r"output #0 is a Particle, not a number"):
        rv.gradient(LEAPFROG["native"], (p, Spring(1.0, 1), 0.0), iloss=0)
    with pytest.raises(TypeError, match=r"argument 'p.v' is declared float, got Spring"):
        rv.gradient(LEAPFROG["native"], (Particle(1.0, Spring(1.0, 1), np.zeros(1)), Spring(1.0, 1), 0.0), iloss=2)
    # rv.adjoint(f) takes the flat arguments of @f.adj: a struct there is
    # refused with what takes one, and what to do instead
    with pytest.raises(
        TypeError,
        match=r"struct arguments are taken by calls and by rv.gradient, .*rv.inverse_jvp, rv.inverse_vjp, "
        r"rv.newton_step and rv.constant_width; here, use a function taking the fields as parameters of their own\)$",
    ):
        rv.adjoint(LEAPFROG["native"])(p, Spring(1.0, 1), 0.0, p, Spring(1.0, 1), 0.0)


def test_a_struct_call_reads_the_annotations_once_per_layout(monkeypatch: pytest.MonkeyPatch):
    """The annotations of a struct's class are checked on the first call
    with its layout only (``typing.get_type_hints`` and
    ``dataclasses.fields`` ran on every call, costing more than a small
    call); a layout they refuse stays refused."""
    import dataclasses
    import typing

    f = LEAPFROG["native"]
    f(Particle(1.0, 0.0, np.zeros(3)), Spring(2.0, 3), 0.0)
    read: list[str] = []
    for module, name in ((typing, "get_type_hints"), (dataclasses, "fields")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _o=original, _n=name, **k: read.append(_n) or _o(*a, **k))
    q, s, energy = f(Particle(1.0, 0.0, np.zeros(3)), Spring(2.0, 3), 0.0)
    assert read == [] and isinstance(q, Particle) and energy > 0.0
    for _ in range(2):
        with pytest.raises(TypeError, match=r"argument 'p.v' is declared float, got Spring"):
            f(Particle(1.0, Spring(1.0, 1), np.zeros(1)), Spring(1.0, 1), 0.0)


def test_gradients_of_structs_come_back_as_structs():
    """rv.gradient and rv.vjp of a function taking structs give each
    struct's gradient as an instance of its class, one gradient per field
    (an integer field's is 0.0), like JAX's pytrees; checked against central
    differences of the same steps in plain Python (on the interpreter: the
    structs are the frontend's, both engines see fields)."""
    f = LEAPFROG["interpreter"]
    p, s = Particle(1.0, 0.5, np.zeros(3)), Spring(2.0, 3)
    g_p, g_s, g_energy = rv.gradient(f, (p, s, 0.0), iloss=2)
    assert isinstance(g_p, Particle) and isinstance(g_s, Spring) and g_energy == 1.0
    assert p.x == 1.0 and not p.trail.any()  # the arguments are left alone
    h = 1e-6
    energy = lambda x, v, k: _plain_leapfrog(x, v, k, 3)[3]  # noqa: E731
    assert g_p.x == pytest.approx((energy(1 + h, 0.5, 2.0) - energy(1 - h, 0.5, 2.0)) / (2 * h), rel=1e-7)
    assert g_p.v == pytest.approx((energy(1.0, 0.5 + h, 2.0) - energy(1.0, 0.5 - h, 2.0)) / (2 * h), rel=1e-7)
    assert g_s.k == pytest.approx((energy(1.0, 0.5, 2.0 + h) - energy(1.0, 0.5, 2.0 - h)) / (2 * h), rel=1e-7)
    assert g_s.steps == 0.0 and not g_p.trail.any()  # the trail is written, never read
    outputs, pullback = rv.vjp(f, p, s, 0.0)
    assert isinstance(outputs[0], Particle) and outputs[2] == f(Particle(1.0, 0.5, np.zeros(3)), s, 0.0)[2]
    # the cotangent of a struct is one of its class (None: zero)
    again = pullback(None, None, 1.0)
    assert (again[0].x, again[0].v, again[1].k) == (g_p.x, g_p.v, g_s.k)
    trail = pullback(Particle(0.0, 0.0, np.array([0.0, 0.0, 1.0])), None, 0.0)[0]
    x = lambda x0: _plain_leapfrog(x0, 0.5, 2.0, 3)[2][2]  # noqa: E731
    assert trail.x == pytest.approx((x(1 + h) - x(1 - h)) / (2 * h), rel=1e-7)
    with pytest.raises(TypeError, match="the cotangent of a Particle is one, or None, not Spring"):
        pullback(s, None, 0.0)
    # forward mode: a struct's tangent is one of its class, and so are its outputs'
    after, tangents = rv.jvp(f, (p, s, 0.0), (Particle(1.0, 0.0, None), None, None))
    assert isinstance(after[0], Particle) and after[2] == outputs[2]
    assert isinstance(tangents[0], Particle) and isinstance(tangents[1], Spring) and tangents[1].k == 0.0
    assert tangents[2] == pytest.approx(g_p.x, rel=1e-12)


@rv.reversible
def _negate(x):
    x = -x


@rv.reversible
def _shift(x):
    x += 10.0


@rv.reversible
def _add_twice(y, x):
    y += 2.0 * x


def _through_views(y, x, v):
    _add_twice(rv.view(y, _negate), x)  # y ← -(-y + 2x)
    _add_twice(rv.view(v[1], _shift), rv.view(x, _shift))  # v[1] ← v[1] + 2 (x + 10)


THROUGH_VIEWS = on_both(_through_views)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_view_runs_the_bijection_around_the_call(backend: str):
    f = THROUGH_VIEWS[backend]
    y, x, v = f(1.0, 3.0, np.zeros(2))
    assert (y, x, v.tolist()) == (1.0 - 2 * 3.0, 3.0, [0.0, 2 * 13.0])
    assert (~f)(y, x, v)[:2] == (1.0, 3.0) and not v.any()


def _view_through_a_non_bijection(y, x):
    _add_twice(rv.view(y, math.sin), x)  # E:not-bijection


def _view_as_a_statement(y):
    rv.view(y, _negate)  # E:view-statement


def test_view_errors_are_located():
    located(
        compile_error("_view_through_a_non_bijection", 1.0, 2.0),
        "# E:not-bijection",
        "the bijection 'math.sin' of a view",
    )
    located(compile_error("_view_as_a_statement", 1.0), "# E:view-statement", "rv.view(x, g) is an argument of a call")


# -- rv.safe: printing and assertions --------------------------------------------------


def _report(x: float, n: int, calls: int):
    calls += 1  # a counter is reversible state: ~f counts back down
    with rv.safe():
        print("x =", x, "n:", n, sep="|")
        print("no newline", end="")
        print()
        print("{braces}", end=" }\n")
    x += n


REPORT = on_both(_report)


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_in_a_safe_block_prints_as_python_does(backend: str, capsys: pytest.CaptureFixture[str]):
    f = REPORT[backend]
    assert f(1.5, 2, 0) == (3.5, 2, 1)
    expected = "x =|1.5|n:|2\nno newline\n{braces} }\n"
    assert capsys.readouterr().out == expected
    assert (~f)(3.5, 2, 1) == (1.5, 2, 0) and capsys.readouterr().out == ""  # forward only by default


def _print_formatted(x: float, n: int, v):
    with rv.safe():
        print(f"x={x}, v[1]={v[1]} {{n}}={n!s}", f"{n + 1}", sep="|")
    x += n


FORMATTED = on_both(_print_formatted)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_f_string_prints_as_python_does(backend: str, capsys: pytest.CaptureFixture[str]):
    assert FORMATTED[backend](1.5, 2, np.array([0.0, 0.25]))[:2] == (3.5, 2)
    assert capsys.readouterr().out == "x=1.5, v[1]=0.25 {n}=2|3\n"


def _print_braces(x: float, n: int):
    with rv.safe():
        print(f"{{}}")  # noqa: F541 (the escaped braces of an f-string)
        print("{}", x)
        print("{", "}", sep="")
        print(f"{{{x}}}", "{{}}", f"{{}}{n}{{}}", sep="{}", end="{")
        print("}")
    x += n


BRACES = on_both(_print_braces)


@pytest.mark.parametrize("backend", BACKENDS)
def test_literal_braces_print_as_python_does(backend: str, capsys: pytest.CaptureFixture[str]):
    """A literal '{' before a literal '}' holds the '{}' that xDSL's
    print_format counts as a field."""
    assert BRACES[backend](1.5, 2) == (3.5, 2)
    assert capsys.readouterr().out == "{}\n{} 1.5\n{}\n{1.5}{}{{}}{}{}2{}{}\n"


def _print_with_a_format_spec(x: float):
    with rv.safe():
        print(f"{x:.3f}")  # E:format-spec
    x += 1.0


def test_an_f_string_format_spec_is_refused():
    located(
        compile_error("_print_with_a_format_spec", 1.0),
        "# E:format-spec",
        "f'{x:.3f}': a conversion or format spec in an f-string is not supported inside rv.safe",
    )


def _print_numbers(x: float, n: int, z: complex, b: bool, y: np.float32):
    with rv.safe():
        print(x, x / 0.0, -0.0, 1e300, x * 0.1, n, n > 1, b, z, y, y + y, sep=", ")
    x += n


def test_both_engines_print_the_same_text(capsys: pytest.CaptureFixture[str]):
    args = (0.3, -7, 1 - 2.5j, True, np.float32(0.1))
    texts = []
    for backend in BACKENDS:
        f = rv.reversible(_print_numbers, backend=backend)
        assert f.specialization_for(*args).backend == backend
        f(*args)
        texts.append(capsys.readouterr().out)
    y = float(np.float32(0.1))
    python = ", ".join(str(v) for v in (0.3, math.inf, -0.0, 1e300, 0.3 * 0.1, -7, False, True, 1 - 2.5j, y, y * 2.0))
    assert texts == [python + "\n"] * 2


def _checked(x: float, n: int):
    with rv.safe(when="both"):
        assert x > 0, "x must be {positive}"  # E:assert-message
        assert n < 10  # E:assert-plain
    x += n


CHECKED = on_both(_checked)


@pytest.mark.parametrize("backend", BACKENDS)
def test_assertions_in_a_safe_block_are_checked_on_both_engines(backend: str):
    f = CHECKED[backend]
    assert f(1.5, 2) == (3.5, 2) and (~f)(3.5, 2) == (1.5, 2)
    with pytest.raises(rv.ExecutionError) as info:
        f(-1.0, 2)
    located(info.value, "# E:assert-message", "'cf.assert' in @_checked: x must be {positive}")
    with pytest.raises(rv.ExecutionError) as info:
        f(1.0, 20)
    located(info.value, "# E:assert-plain", "assertion failed: n < 10")
    with pytest.raises(rv.ExecutionError) as info:
        (~f)(1.0, 2)  # when="both": x is -1 after running backwards
    located(info.value, "# E:assert-message", "in @~_checked")


def _assert_outside_safe(x: float):
    assert x > 0  # E:assert-outside


def _scalar_count_in_safe(x: float, calls: int):
    with rv.safe():
        calls += 1  # E:safe-scalar


def _print_with_file(x: float):
    with rv.safe():
        print(x, flush=True)  # E:print-keyword


def _assert_with_a_computed_message(x: float):
    with rv.safe():
        assert x > 0, str(x)  # E:assert-message-expression


def test_safe_block_errors_are_located():
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.reversible(_assert_outside_safe)
    located(
        info.value, "# E:assert-outside", "'assert' statements are not reversible", "assert inside `with rv.safe():`"
    )
    located(
        compile_error("_scalar_count_in_safe", 1.0, 0),
        "# E:safe-scalar",
        "'calls' is reversible state, which rv.safe does not update",
    )
    located(
        compile_error("_print_with_file", 1.0), "# E:print-keyword", "print(…, flush=…) is not supported inside rv.safe"
    )
    located(
        compile_error("_assert_with_a_computed_message", 1.0),
        "# E:assert-message-expression",
        "an assertion's message must be a constant string",
    )


# -- rv.safe: counters ---------------------------------------------------------------


@rv.reversible
def _counted_fib(out, n, calls):
    with rv.safe(when="both"):
        calls[0] += 1  # counts the calls, in both directions
    if n >= 1:
        counter = rv.ancilla(0)
        counter += n
        while rv.cond(counter > 1, post=counter != n):
            _counted_fib(out, counter - 1, calls)
            counter -= 2
        counter -= n % 2
        rv.free(counter)
    out += 1


def _plain_fib_calls(n: int) -> int:
    """The calls of the recursion above, counted in plain Python."""
    return 1 + sum(_plain_fib_calls(k - 1) for k in range(n, 1, -2)) if n >= 1 else 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_counter_counts_calls_and_is_read_after_the_call(backend: str):
    f = rv.reversible(_counted_fib.pyfunc, backend=backend)  # calls _counted_fib, on the same engine
    calls = np.zeros(1, dtype=np.int64)
    assert f(0, 8, calls) == (34, 8, calls)
    assert calls[0] == _plain_fib_calls(8)
    assert (~f)(34, 8, calls) == (0, 8, calls)
    assert calls[0] == 2 * _plain_fib_calls(8)  # running backwards counts too, it does not undo


def _count_into_state(x, c):
    x += c[0]
    with rv.safe():
        c[0] += 1  # E:count-into-state


@rv.reversible
def _counts_into(x, c):
    with rv.safe():
        c[0] += 1


def _passes_state_to_a_counter(x, c):
    x += c[0]
    _counts_into(x, c)  # E:passes-state


def _count_into_a_scalar(x, c):
    with rv.safe():
        x[0] += 1  # E:count-scalar


def _count_by_multiplying(x, c):
    with rv.safe():
        c[0] *= 2  # E:count-multiply


def test_counter_errors_are_located():
    c = np.zeros(1, dtype=np.int64)
    located(
        compile_error("_count_into_state", 1, c), "# E:count-into-state", "'memref.store' writes %c", "or a counter"
    )
    located(
        compile_error("_passes_state_to_a_counter", 1, c),
        "# E:passes-state",
        "passes %c to @_counts_into, which counts into it",
    )
    located(compile_error("_count_into_a_scalar", 1, c), "# E:count-scalar", "'x' is not an array")
    located(compile_error("_count_by_multiplying", 1, c), "# E:count-multiply", "'c[0] *= 2' is no count")


# -- invert, then run forward --------------------------------------------------------

FINITE = st.floats(-100.0, 100.0, allow_nan=False)


@settings(max_examples=20, deadline=None)
@given(FINITE, FINITE, FINITE, FINITE, st.floats(0.0, 5.0))
def test_views_invert_then_run_forward(a: float, b: float, x: float, v: float, k: float):
    """``f(~f(state)) == state`` and ``~f(f(state)) == state`` (up to
    round-off) for part updates, struct fields and bijection views."""

    def close(p: Any, q: Any) -> bool:
        return bool(np.allclose(np.asarray(p, dtype=complex), np.asarray(q, dtype=complex), rtol=1e-9, atol=1e-9))

    parts = ROTATE_PARTS["native"]
    z, w = complex(a, b), complex(x, v)
    assert close(parts(*(~parts)(z, w)), (z, w)) and close((~parts)(*parts(z, w)), (z, w))

    leapfrog = LEAPFROG["native"]
    p, spring = Particle(x, v, np.zeros(3)), Spring(k, 3)
    q, _, energy = (~leapfrog)(*leapfrog(p, spring, a))
    assert close((q.x, q.v, energy), (x, v, a)) and close(q.trail, np.zeros(3))
    q, _, energy = leapfrog(*(~leapfrog)(p, spring, a))
    assert close((q.x, q.v, energy), (x, v, a)) and close(q.trail, np.zeros(3))

    views = THROUGH_VIEWS["native"]
    y, x2, arr = views(*(~views)(a, x, np.array([b, v])))
    assert close((y, x2, *arr), (a, x, b, v))
