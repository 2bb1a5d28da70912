"""Every frontend error is a ReversibleSyntaxError (a SyntaxError) at the
user's file, line and column, with a hint, raised at decoration or first call."""

import math
from pathlib import Path

import numpy as np
import pytest

import revmlir as rv

HERE = Path(__file__)
LINES = HERE.read_text().splitlines()


def line_of(marker: str) -> int:
    """The line of this file holding ``marker`` (a comment on the faulty line)."""
    matches = [i + 1 for i, line in enumerate(LINES) if line.rstrip().endswith(marker)]
    assert len(matches) == 1, marker
    return matches[0]


def check(error: rv.ReversibleSyntaxError, marker: str, *fragments: str) -> None:
    assert isinstance(error, SyntaxError)
    assert error.filename == str(HERE)
    assert error.lineno == line_of(marker)
    assert error.offset is not None and error.offset >= 1
    text = str(error)
    assert text.startswith(f"{HERE}:{error.lineno}:{error.offset}: ")
    for fragment in fragments:
        assert fragment in text


# -- reported at decoration -----------------------------------------------------


def test_plain_assignment_is_rejected_at_decoration():
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.reversible
        def f(y, x):
            y = x * 2.0  # E:assign

    check(info.value, "# E:assign", "overwrites y", "y += …", "rv.ancilla(0.0)")


def test_unsupported_statements_at_decoration():
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.reversible
        def f(y):
            del y  # E:del

    check(info.value, "# E:del", "'delete' statements are not reversible")


def test_return_value_at_decoration():
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.reversible
        def f(y):
            return y  # E:return

    check(info.value, "# E:return", "returns all its arguments", "remove the return")


def test_unsupported_update_operator_at_decoration():
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.reversible
        def f(y):
            y //= 2  # E:floordiv

    check(info.value, "# E:floordiv", "is not reversible", "+=, -=, ^=")


def test_target_read_in_its_own_update_at_decoration():
    """The verifier's [self-read] rule, in the Python the user wrote (not the
    IR's ``'rev.sub' reads its own target %x``), and without a call."""
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.reversible
        def f(x, y):
            x -= x * y  # E:self-read

    check(
        info.value,
        "# E:self-read",
        "'x -= x * y' reads x, the variable it updates, which is not reversible",
        "read a copy of its old value: x_old = rv.ancilla(x); x -= x_old * y (running backwards needs that "
        "value: free x_old where it is known, rv.free(x_old, value))",
    )


@pytest.mark.parametrize("x, y", [(7, 2), (7.5, 0.5)])
def test_the_self_read_hint_holds_for_the_target_type(x: int | float, y: int | float):
    """The hint's copy is an ancilla of the target's own type, whatever it
    is (an int is no float): its statements compile and run for both."""

    @rv.reversible
    def hinted(x, y):
        x_old = rv.ancilla(x)
        x -= x_old * y
        x += x_old * y  # the old value is known again
        rv.free(x_old, x)

    assert hinted(x, y) == (x, y) and type(hinted(x, y)[0]) is type(x)


def test_an_update_may_read_another_part_of_its_target():
    @rv.reversible
    def f(z):
        z.real += z.imag

    assert f(1 + 2j) == 3 + 2j


def test_signature_restrictions_at_decoration():
    with pytest.raises(rv.ReversibleSyntaxError, match="default values"):

        @rv.reversible
        def f(y, x=1.0):
            y += x


# -- reported at first call -------------------------------------------------------


def test_ancilla_not_freed_on_a_path():
    @rv.reversible
    def f(x):
        if x > 0.0:  # E:leak
            t = rv.ancilla(0.0)
            t += x

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0)
    check(info.value, "# E:leak", "'t' allocated in the then-branch is not freed")


def test_ancilla_never_freed():
    @rv.reversible
    def f(x):  # E:never-freed
        t = rv.ancilla(0.0)
        t += x

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0)
    check(info.value, "# E:never-freed", "'t' is allocated but never freed")


def test_while_needs_a_postcondition():
    @rv.reversible
    def f(x):
        while x < 10:  # E:while
            x += 1

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1)
    check(info.value, "# E:while", "needs a postcondition", "rv.cond(pre, post)")


def test_postcondition_that_cannot_be_evaluated():
    @rv.reversible
    def f(x):
        if rv.cond(x > 0, post=z > 0):  # E:post
            x += 1

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1)
    check(info.value, "# E:post", "unknown variable 'z'")


def test_condition_that_is_not_boolean():
    @rv.reversible
    def f(x):
        if x + 1:  # E:not-bool
            x += 1

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1)
    check(info.value, "# E:not-bool", "a condition must be a boolean, got int64")


def test_multiplying_a_float_in_place():
    @rv.reversible
    def f(x, y):
        x *= y  # E:mul

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0, 2.0)
    check(info.value, "# E:mul", "not reversible on float", "multiply log numbers instead", "ly *= rv.ulog(x)")


def test_dividing_a_float_in_place():
    @rv.reversible
    def f(x, y):
        x /= y  # E:div

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0, 2.0)
    check(info.value, "# E:div", "not reversible on float", "divide log numbers instead", "ly /= rv.ulog(x)")


def test_unknown_variable():
    @rv.reversible
    def f(x):
        x += undefined_name  # E:unknown  # noqa: F821

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0)
    check(info.value, "# E:unknown  # noqa: F821", "unknown variable 'undefined_name'")


def test_loop_variable_is_immutable():
    @rv.reversible
    def f(x):
        for i in range(3):
            i += 1  # E:loopvar

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1)
    check(info.value, "# E:loopvar", "loop variable 'i' cannot be updated")


def test_loop_over_a_list():
    @rv.reversible
    def f(x):
        for i in [1, 2]:  # E:forlist
            x += i

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1)
    check(info.value, "# E:forlist", "cannot loop over", "range(...)")


def test_a_checkpoint_mark_in_a_reversible_function():
    @rv.reversible
    def f(x, y, n):
        for i in rv.checkpointed(range(n), snapshots=2):  # E:checkpointed
            y += x

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0, 0.0, 3)
    check(info.value, "# E:checkpointed", "rv.checkpointed() marks loops of @rv.ordinary functions", "range(...)")


def test_routine_without_uncompute():
    @rv.reversible
    def f(x, y):
        with rv.routine() as r:  # E:routine
            t = rv.ancilla(0.0)
            t += x
        y += t

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0, 2.0)
    check(info.value, "# E:routine", "never uncomputed", "~r")


def test_print_outside_safe():
    @rv.reversible
    def f(x):
        print(x)  # E:print

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0)
    check(info.value, "# E:print", "host side effect", "rv.safe")


def test_unsupported_expression_call():
    @rv.reversible
    def f(y, x):
        y += sorted(x)  # E:call

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(0.0, 1.0)
    check(info.value, "# E:call", "cannot call 'sorted'")


def test_library_function_without_rules():
    """A math or NumPy function the compiler has no rule for points to
    ``@rv.primitive``, in reversible and ordinary Python alike."""

    @rv.reversible
    def f(y, x):
        y += np.i0(x)  # E:i0

    @rv.ordinary
    def g(x):
        return 2.0 * math.lgamma(x)  # E:ord-lgamma

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(0.0, 3.5)
    check(info.value, "# E:i0", "'np.i0' has no rules in revmlir", "@rv.primitive")
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        g(3.5)
    check(info.value, "# E:ord-lgamma", "'math.lgamma' has no rules in revmlir", "@rv.primitive")


def test_call_with_wrong_argument_count():
    @rv.reversible
    def g(a, b):
        a += b

    @rv.reversible
    def f(x):
        g(x)  # E:argcount

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0)
    check(info.value, "# E:argcount", "g takes 2 argument(s) (a, b), got 1")


def test_shared_scalar_argument_is_reported_at_the_call():
    @rv.reversible
    def g(a, b):
        a += b

    @rv.reversible
    def f(x):
        g(x, x)  # E:shared

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(1.0)
    check(info.value, "# E:shared", "'x' is passed to g twice")


def test_wrong_argument_types_are_type_errors():
    @rv.reversible
    def f(x: float, v):
        x += 1.0

    with pytest.raises(TypeError, match="argument 'v' has unsupported type list .pass a numpy array."):
        f(1.0, [1.0, 2.0])
    with pytest.raises(TypeError, match="argument 'x' is declared float, got complex"):
        f(1j, np.zeros(2))
    with pytest.raises(TypeError, match=r"f\(\) takes 2 argument\(s\) \(x, v\), got 1"):
        f(1.0)


def test_markers_outside_reversible_functions():
    with pytest.raises(RuntimeError, match="only has a meaning inside"):
        rv.ancilla(0.0)
