"""``@rv.ordinary`` code on both engines: where they once did apart.

Native code runs a call of ordinary code as written (``@f``), the
interpreter its reversible form, which runs ``@f``'s tape function
``@f.tape``, and derivatives run the tape on both.  Errors name the
function the user wrote on every engine, and a result of ``-0.0`` keeps
its sign through the result slots and output arrays the reversible form
adds into.
"""

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import revmlir as rv

HERE = Path(__file__)
LINES = HERE.read_text().splitlines()
BACKENDS = ("interpreter", "native")


def at(marker: str, text: str) -> str:
    """``file:line:column`` of ``text`` on the line marked ``# E:marker``."""
    line = next(n for n, source in enumerate(LINES, 1) if source.endswith(f"# E:{marker}"))
    return f"{HERE}:{line}:{LINES[line - 1].index(text) + 1}"


def message(run: Callable[[], Any]) -> str:
    with pytest.raises(rv.ExecutionError) as caught:
        run()
    return str(caught.value)


# -- errors name the user's function -----------------------------------------------


def quotient(x: float, a: int, b: int) -> float:
    return x * (a // b)  # E:quotient


divides = rv.ordinary(quotient, backend="native")


def twice(x: float, a: int, b: int) -> float:
    return 2.0 * divides(x, a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_error_in_ordinary_code_names_the_function_as_written(backend: str):
    """A call, a gradient and a call from another ordinary function (its
    tape calls the callee's) name ``@quotient``; the tangent its tangent
    ``@quotient.tan``, as a reversible function's tangent is named.  The
    interpreter named ``@quotient.tape`` in all of them, native code in
    the gradient."""
    f = rv.ordinary(quotient, backend=backend)
    g = rv.ordinary(twice, backend=backend)
    error = f"{at('quotient', 'a // b')}: 'arith.floordivsi' in @quotient: integer division by zero"
    for run in (
        lambda: f(1.0, 3, 0),
        lambda: rv.gradient(f, (1.0, 3, 0)),
        lambda: g(1.0, 3, 0),
        lambda: rv.gradient(g, (1.0, 3, 0)),
    ):
        assert message(run) == error
    tangent = message(lambda: rv.jvp(f, (1.0, 3, 0), (1.0, None, None)))
    assert tangent == error.replace("@quotient:", "@quotient.tan:")


def stepped(x: float, n: int) -> float:
    s = 0.0
    k = 0
    for i in rv.checkpointed(range(4), snapshots=2):
        k += 12 // (n - i)  # E:stepped
        s += x * k
    return s


def looped(x: float, n: int) -> float:
    s = 0.0
    k = 0
    for i in range(4):
        k += 12 // (n - i)  # E:looped
        s += x * k
    return s


def through_a_loop(y: float, x: float, n: int) -> None:
    for i in range(4):
        y += x * (12 // (n - i))  # E:through_a_loop


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_error_in_a_derived_gradient_names_the_function_as_written(backend: str):
    """A checkpointed gradient runs its loop's outlined step and the step's
    untaped copy (``@stepped.ckpt.step0.plain``), a policy's the machine's
    gradient, a reversible function's gradient ``@f.grad.loss0`` and its
    Hessian-vector product ``@f.grad.loss0.tan``: each named the derived
    function; they name the user's (its tangent's for the product), and
    the op's place in it, on both engines."""
    division = "'arith.floordivsi' in @{}: integer division by zero"
    f = rv.ordinary(stepped, backend=backend)
    expected = f"{at('stepped', '12 // (n - i)')}: {division.format('stepped')}"
    assert message(lambda: rv.gradient(f, (1.0, 2))) == expected
    g = rv.ordinary(looped, backend=backend)
    expected = f"{at('looped', '12 // (n - i)')}: {division.format('looped')}"
    assert message(lambda: rv.gradient(g, (1.0, 2), checkpoint="bisection")) == expected
    h = rv.reversible(through_a_loop, backend=backend)
    expected = f"{at('through_a_loop', '12 // (n - i)')}: {division.format('through_a_loop')}"
    assert message(lambda: rv.gradient(h, (0.0, 1.0, 2))) == expected
    product = message(lambda: rv.hvp(h, (0.0, 1.0, 2), (0.0, 1.0, 0)))
    assert product == expected.replace("@through_a_loop:", "@through_a_loop.tan:")


# -- -0.0 through the reversible form ------------------------------------------------


def negated(x: float) -> float:
    return -x


def negated_in_a_branch(x: float) -> float:
    y = x
    if x == 0.0:
        y = -x
    return y


def negated_by_a_call(x: float) -> float:
    y = 1.0
    y = negating(x)
    return y


negating = rv.ordinary(negated, backend="native")


def negated_into(u: np.ndarray, x: float) -> None:
    u[0] = -x
    u[1] = x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("program", [negated, negated_in_a_branch, negated_by_a_call])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_negative_zero_result_keeps_its_sign(backend: str, program: Callable[[float], float], dtype: type):
    """``-x`` of ``0.0`` is ``-0.0``, as Python computes it, from the call
    and the outputs of ``rv.vjp`` (the reversible form added it into a slot
    of ``0.0``: ``0.0 + -0.0`` is ``0.0``; it starts at ``-0.0`` now),
    through a branch's result and a callee's."""
    f = rv.ordinary(program, backend=backend)
    x = dtype(0.0)
    assert math.copysign(1.0, program(x)) == -1.0  # the reference: Python
    assert math.copysign(1.0, f(x)) == -1.0
    (result, argument), _ = rv.vjp(f, x)
    assert math.copysign(1.0, result) == -1.0 and math.copysign(1.0, argument) == 1.0


def complex_result(x: float) -> complex:
    return complex(x, -0.0)  # E:complex_result


def complex_part(x: float) -> float:
    z = complex(x, -0.0)  # E:complex
    return z.imag


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_complex_value_reaches_a_result_slot(backend: str):
    """The slots start at ``-0.0`` for floats (and 0 for integers) only:
    ordinary code computes no complex value, so no slot would need
    ``complex(-0.0, -0.0)``.  One returned or computed is refused when the
    function compiles, at the function or at the expression, on either
    backend, in Python's words (it named ``complex.create`` and
    ``complex<f64>``)."""
    real_only = (
        "@rv.ordinary functions compute real numbers only: compute the real and imaginary parts as floats, "
        "or write the function with @rv.reversible, which computes complex numbers"
    )
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.ordinary(complex_result, backend=backend)(0.0)
    expected = f"{at('complex_result', 'return')}: 'complex_result' returns a complex number; {real_only}"
    assert str(caught.value) == expected
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.ordinary(complex_part, backend=backend)(0.0)
    assert str(caught.value) == f"{at('complex', 'complex(')}: this makes a complex number; {real_only}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_negative_zero_written_into_an_array_keeps_its_sign(backend: str):
    f = rv.ordinary(negated_into, backend=backend)
    u = np.ones(2)
    f(u, 0.0)
    np.testing.assert_array_equal(np.signbit(u), [True, False])
    (written, _), _ = rv.vjp(f, np.ones(2), 0.0)
    np.testing.assert_array_equal(np.signbit(written), [True, False])
