"""What a user gets wrong in the arguments and names of compiled Python
functions is a clear error: arrays indexed with the wrong number of indices
and non-ASCII names are located at the line that has them, and an int its
parameter's type cannot hold (it would wrap, or has no float) names the
parameter and the range, on every backend and call path."""

import math
import re
from collections.abc import Callable
from pathlib import Path

import jax
import numpy as np
import pytest

import revmlir as rv


@pytest.fixture(autouse=True)
def _jax_in_double_precision():
    """JAX's derivatives compared with in float64, for these tests only:
    the setting is process-wide, and other tests run in the same process."""
    with jax.enable_x64(True):
        yield


HERE = Path(__file__)
LINES = HERE.read_text().splitlines()


def line_of(marker: str) -> int:
    (line,) = [i + 1 for i, text in enumerate(LINES) if text.rstrip().endswith(marker)]
    return line


def check(error: rv.ReversibleSyntaxError, marker: str, *fragments: str) -> None:
    assert error.filename == str(HERE) and error.lineno == line_of(marker)
    text = str(error)
    assert text.startswith(f"{HERE}:{error.lineno}:{error.offset}: ")
    assert len(text.splitlines()) == 1
    for fragment in fragments:
        assert fragment in text, text


# -- arrays of the wrong rank ------------------------------------------------


@rv.reversible
def read_one_index(x, y):
    x[0] += y[0]  # E:read-rank


@rv.reversible
def write_one_index(x, s):
    x[1] += s  # E:write-rank


@rv.reversible
def loop_one_index(x, s):
    for i in range(len(x)):
        s += x[i]  # E:loop-rank


def test_reading_a_2d_array_with_one_index():
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        read_one_index(np.zeros(3), np.zeros((2, 2)))
    check(info.value, "# E:read-rank", "'y' is a 2-d array of float, indexed with 1 index", "y[i, j]")


def test_updating_a_1d_array_with_two_indices_is_reported_too():
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        write_one_index(np.zeros((2, 3, 4)), 1.0)
    check(info.value, "# E:write-rank", "'x' is a 3-d array of float, indexed with 1 index", "x[i, j, k]")


def test_the_rank_that_fits_still_runs():
    x = np.zeros(3)
    assert write_one_index(x, 2.0)[1] == 2.0 and x.tolist() == [0.0, 2.0, 0.0]
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        loop_one_index(np.zeros((2, 2)), 0.0)
    check(info.value, "# E:loop-rank", "'x' is a 2-d array of float, indexed with 1 index")


def test_the_rank_check_holds_in_ordinary_functions():
    @rv.ordinary
    def total(x):
        return x[0]  # E:ordinary-rank

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        total(np.zeros((2, 2)))
    check(info.value, "# E:ordinary-rank", "'x' is a 2-d array of float, indexed with 1 index")


# -- non-ASCII names -----------------------------------------------------------


def test_a_non_ascii_parameter_is_located():
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.reversible
        def f(α, y):  # E:greek-parameter
            y += α

    check(info.value, "# E:greek-parameter", "'α' is not an ASCII name", "rename it")


def test_a_non_ascii_parameter_starting_with_ascii_is_located():
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.ordinary
        def f(größe):  # E:umlaut-parameter
            return größe * 2.0

    check(info.value, "# E:umlaut-parameter", "'größe' is not an ASCII name")


def test_a_non_ascii_function_name_is_located():
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.reversible
        def möbius(x, y):  # E:function-name
            y += x

    check(info.value, "# E:function-name", "'möbius' is not an ASCII name")


def test_a_non_ascii_variable_is_located():
    with pytest.raises(rv.ReversibleSyntaxError) as info:

        @rv.reversible
        def f(x, y):
            for ι in range(3):  # E:loop-variable
                y += x

    check(info.value, "# E:loop-variable", "'ι' is not an ASCII name")


# -- ints out of range ---------------------------------------------------------


@rv.reversible
def accumulate(y, x):
    y += x


@rv.reversible(backend="interpreter")
def accumulate_interpreted(y, x):
    y += x


INT64 = "int64 (-9223372036854775808 to 9223372036854775807)"


@pytest.mark.parametrize("function", [accumulate, accumulate_interpreted], ids=["native", "interpreter"])
@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**70])
def test_an_int_beyond_int64_is_refused_not_wrapped(function, value):
    expected = f"{function.__name__}(): argument 'x': {value} is out of range for {INT64}"
    with pytest.raises(OverflowError, match=f"^{re.escape(expected)}$"):
        function(0, value)
    with pytest.raises(OverflowError, match=rf"argument 'y': {value} is out of range"):
        function.inverse(value, 1)


def test_the_ends_of_int64_are_accepted():
    assert accumulate(-(2**63), 2**63 - 1) == (-1, 2**63 - 1)
    assert accumulate_interpreted(2**63 - 1, -(2**63)) == (-1, -(2**63))


def test_an_int_too_large_for_a_float_parameter():
    @rv.reversible
    def add(y: float, x):
        y += x

    expected = (
        "argument 'y': an integer of 1329 bits is out of range for float (magnitude at most 1.7976931348623157e+308)"
    )
    with pytest.raises(OverflowError, match=re.escape(expected)):
        add(10**400, 1.0)
    assert add(10**300, 1.0) == (1e300 + 1.0, 1.0)


def test_derivatives_check_their_ints_too():
    @rv.reversible
    def scaled(y, x, k: float):
        y += x * k

    with pytest.raises(OverflowError, match="argument 'k': an integer of 1329 bits"):
        rv.gradient(scaled, (0.0, 1.0, 10**400))


def test_ordinary_functions_check_their_ints():
    @rv.ordinary
    def double(n):
        return n * 2

    assert double(2**40) == 2**41
    expected = f"double(): argument 'n': {2**64} is out of range for {INT64}"
    with pytest.raises(OverflowError, match=f"^{re.escape(expected)}$"):
        double(2**64)


# -- arrays the call cannot take, said by the parameter's name ---------------


@rv.reversible
def add_up(y, x):
    for i in range(len(x)):
        y += x[i] * x[i]


@rv.reversible
def write_first(y, x):
    x[0] += y


@rv.ordinary
def first(x):
    return x[0]


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_array_errors_name_the_parameter_not_a_position(backend):
    """They were "argument #1 of @add_up …" (#0 of @first.plain for an
    ordinary function), the IR's position and symbol."""
    x = np.arange(6.0)
    strided = rv.reversible(add_up.pyfunc, backend=backend)
    if backend == "native":  # the interpreter reads a strided view as it is
        with pytest.raises(TypeError, match=r"^argument 'x' of add_up must be a C-contiguous array"):
            strided(0.0, x[::2])
        with pytest.raises(TypeError, match=r"^argument 'x' of first must be a C-contiguous array"):
            first(x[::2])
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"^argument 'x' of write_first is a read-only array, and write_first writes"):
        rv.reversible(write_first.pyfunc, backend=backend)(1.0, frozen)


def test_a_derivative_reads_a_strided_view_through_a_copy():
    """Derivatives write nothing back into what they only read, so a
    strided view is copied, not refused (it was "argument #1 of
    @add_up.grad.loss0 must be a C-contiguous array")."""
    x = np.arange(6.0)
    found = rv.gradient(add_up, (0.0, x[::2]))
    assert found[0] == 1.0 and found[1].tolist() == [0.0, 4.0, 8.0]


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_braces_in_what_a_call_passed_are_shown_not_formatted(backend):
    """The messages were format strings holding the class's name (and an
    array's dtype): a class named ``A{b}`` raised KeyError: 'b'."""
    adjoint = rv.adjoint(rv.reversible(write_first.pyfunc, backend=backend))
    braced = type("A{b}", (), {})
    expected = "argument #3 (the gradient of 'x') of write_first must be a numpy array, got A{b}"
    with pytest.raises(TypeError, match=f"^{re.escape(expected)}$"):
        adjoint(1.0, np.zeros(2), 0.0, braced())
    fields = np.zeros(2, dtype=[("x{0}", "f8")])
    expected = (
        "argument #3 (the gradient of 'x') of write_first must be an array of float64 with shape ['?'], "
        "got [('x{0}', '<f8')] [2]"
    )
    with pytest.raises(TypeError, match=f"^{re.escape(expected)}$"):
        adjoint(1.0, np.zeros(2), 0.0, fields)


# -- ints where floats were meant, in derivatives ---------------------------


@rv.ordinary
def scaled(x, a):  # int-as-float parameter
    return x * (a + 1)


@rv.ordinary
def counted(x, n):
    s = 0.0
    for _ in range(n):
        s += x * x
    return s


@rv.ordinary
def declared(x, a: int):
    return x * a


DERIVATIVES = {
    "gradient": lambda f, args: rv.gradient(f, args),
    "vjp": lambda f, args: rv.vjp(f, *args)[1](1.0, None, None),
    "jvp": lambda f, args: rv.jvp(f, args, (1.0, 1.0)),
    "jacobian": lambda f, args: rv.jacobian(f, args),
    "hessian": lambda f, args: rv.hessian(f, args),
    "hvp": lambda f, args: rv.hvp(f, args, (1.0, 1.0)),
    "checkpointed gradient": lambda f, args: rv.gradient(f, args, checkpoint="bisection"),
}


@pytest.mark.parametrize("derivative", DERIVATIVES)
def test_an_int_used_as_a_float_is_refused_by_every_derivative(derivative: str):
    """``rv.gradient(scaled, (2.0, 3))`` gave 0.0 for ``a`` where its author
    most likely meant 3.0: refused, naming the argument and where the
    parameter is, and saying what to do."""
    with pytest.raises(TypeError) as info:
        DERIVATIVES[derivative](scaled, (2.0, 3))
    text = str(info.value)
    assert "scaled(): argument 'a' is the int 3, which scaled uses as a float" in text
    assert "pass a float (3.0)" in text
    assert f"annotate 'a: int' ({HERE}:{line_of('# int-as-float parameter')}:15)" in text
    assert DERIVATIVES[derivative](scaled, (2.0, 3.0)) is not None


def test_an_int_used_as_a_count_or_declared_int_is_differentiated():
    """A loop count is no float, and ``a: int`` says the int is meant: both
    get the zero derivative of an integer, and the float's derivatives are
    JAX's (``counted(x, 3)`` is ``3 x²``)."""
    x = 1.5

    def counted_in_jax(x):
        return sum(x * x for _ in range(3))

    assert rv.gradient(counted, (x, 3)) == (jax.grad(counted_in_jax)(x), 0.0)
    # the outputs: what counted returns, then x as it left it
    assert np.allclose(rv.jacobian(counted, (x, 3)), [[jax.grad(counted_in_jax)(x)], [1.0]])
    assert np.allclose(rv.hessian(counted, (x, 3)), [[jax.hessian(counted_in_jax)(x)]])
    assert rv.gradient(declared, (2.0, 3)) == (3.0, 0.0)


@rv.ordinary
def curved(x, a):
    return x * x * a


def test_an_int_left_out_of_the_derivative_is_not_refused():
    """``wrt`` without it, or a ``None`` tangent for it, says its
    derivative is not asked for: refusing it would refuse what the user
    already excluded."""
    assert np.allclose(rv.jacobian(curved, (2.0, 3), wrt=[0]), [[12.0], [1.0]])
    assert np.allclose(rv.hessian(curved, (2.0, 3), wrt=[0]), [[6.0]])
    assert rv.jvp(curved, (2.0, 3), (1.0, None))[1][0] == 12.0
    for asked in (
        lambda: rv.jacobian(curved, (2.0, 3), wrt=[0, 1]),
        lambda: rv.jacobian(curved, (2.0, 3), wrt=[-1]),
        lambda: rv.hessian(curved, (2.0, 3), wrt=[-1]),
        lambda: rv.hessian(curved, (2.0, 3), wrt=[1]),
        lambda: rv.jvp(curved, (2.0, 3), (None, 1.0)),
    ):
        with pytest.raises(TypeError, match=r"^curved\(\): argument 'a' is the int 3, which curved uses as a float"):
            asked()


def test_hvp_checks_every_argument_whatever_its_vector():
    """``H·v`` has a row per argument, and ``a``'s, ∂/∂a (∇f·v), is not
    zero when ``v`` is zero along ``a`` (``4.0`` here, with ``a=3.0``): a
    ``None`` vector leaves no argument out of ``rv.hvp``."""
    assert rv.hvp(curved, (2.0, 3.0), (1.0, None)) == (6.0, 4.0)
    with pytest.raises(TypeError, match=r"^curved\(\): argument 'a' is the int 3, which curved uses as a float"):
        rv.hvp(curved, (2.0, 3), (1.0, None))


@rv.ordinary
def times(x, a):
    return x * a


@rv.ordinary
def through_a_callee(x, a):
    return times(x, a)


@rv.ordinary
def through_a_loop(x, n):
    k = n
    s = 0.0
    for _ in range(2):
        k = k + 1
        s += x * k
    return s


@rv.ordinary
def through_an_if(x, n):
    k = n
    if x > 0.0:
        k = n + 1
    return x * k


@rv.ordinary
def through_a_result(x, n):
    return x * plus_one(n)


@rv.ordinary
def plus_one(n):
    return n + 1


@rv.ordinary
def mean(x, n):
    s = 0.0
    for _ in range(n):
        s += x
    return s / n


@rv.ordinary
def through_abs(x, n):
    return x * abs(n)


@rv.ordinary
def through_a_square(x, n):
    return x * n**2


@rv.ordinary
def as_a_constant_power(x, n):
    return 2.0**n * x


@rv.ordinary
def as_a_computed_exponent(x, n):
    return x ** (n + 1)


@pytest.mark.parametrize(
    "function",
    [
        through_a_callee,
        through_a_loop,
        through_an_if,
        through_a_result,
        mean,
        through_abs,
        through_a_square,
        as_a_constant_power,
        as_a_computed_exponent,
    ],
)
def test_an_int_is_followed_to_its_float_use(function):
    """Into a callee, out of its result, round a loop, out of an ``if``,
    through ``abs`` and ``**``: an int reaches a float there all the same
    (they gave 0.0 for it); a count also divided by (a mean) is used as a
    float too, and needs ``n: int``; so is an exponent of a constant base
    or one computed (``2.0 ** n``, ``x ** (n + 1)``), which is a float of
    ``n``."""
    name = function.__name__
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument '(a|n)' is the int 3, which {name} uses as a float"):
        rv.gradient(function, (2.0, 3))


@rv.ordinary
def through_an_array(x, n, k):
    k[0] = n
    return x * k[0]


@rv.ordinary
def put(k, n):
    k[0] = n


@rv.ordinary
def through_a_callee_storing(x, n, k):
    put(k, n)
    return x * k[0]


@rv.ordinary
def scale_by_first(x, k):
    return x * k[0]


@rv.ordinary
def through_a_callee_loading(x, n, k):
    k[0] = n
    return scale_by_first(x, k)


@rv.ordinary
def counted_through_an_array(x, n, k):
    k[0] = n
    s = 0.0
    for _ in range(k[0]):
        s += x
    return s


@pytest.mark.parametrize("function", [through_an_array, through_a_callee_storing, through_a_callee_loading])
def test_an_int_is_followed_through_an_int_array(function):
    """Stored into an int array and loaded back, here, by a callee or in a
    callee given the array: the float use is ``n``'s (its gradient was a
    silent 0.0), and the message names the array it goes through."""
    name = function.__name__
    with pytest.raises(
        TypeError,
        match=rf"^{name}\(\): argument 'n' is the int 3, which {name} uses as a float through the int array 'k' it "
        "is stored into, but",
    ):
        rv.gradient(function, (2.0, 3, np.zeros(1, np.int64)))


@rv.ordinary
def indices_counted_down(x, n, idx, j):
    i = n
    while i > 0:
        i -= 1
        idx[i] = i
    return x[j] * idx[j]


@rv.ordinary
def two_arrays(x, n, idx, cnt):
    cnt[0] = n
    idx[0] = n
    s = x * idx[0]
    for _ in range(cnt[0]):
        s = s + x
    return s


@rv.ordinary
def both_ways(x, n, k):
    k[0] = n
    return x * k[0] + n


def test_a_refusal_names_the_array_an_int_reaches_its_float_use_through():
    """``n`` is a loop count whose values fill ``idx``, whose element is
    used as a float: the message names ``idx``, where the use is (it named
    ``n`` alone), and not ``cnt``, which ``n`` fills only for a loop's
    count; an int also used as a float directly names no array."""
    args = (np.ones(3), 3, np.zeros(3, np.int64), 1)
    with pytest.raises(
        TypeError, match=r"uses as a float through the int array 'idx' it is stored into, but .*'n: int'"
    ):
        rv.gradient(indices_counted_down, args)
    counts = np.zeros(1, np.int64)
    with pytest.raises(TypeError, match=r"through the int array 'idx' it is stored into, but"):
        rv.gradient(two_arrays, (2.0, 3, np.zeros(1, np.int64), counts))
    with pytest.raises(
        TypeError, match=r"^both_ways\(\): argument 'n' is the int 3, which both_ways uses as a float but"
    ):
        rv.gradient(both_ways, (2.0, 3, np.zeros(1, np.int64)))


def test_an_int_stored_into_an_array_and_read_as_a_count_is_no_float_use():
    """Nor is the int array, whose gradient is None, refused."""
    assert rv.gradient(counted_through_an_array, (2.0, 3, np.zeros(1, np.int64))) == (3.0, 0.0, None)


@rv.ordinary
def ident(k):
    return k


@rv.ordinary
def counted_by_a_shared_callee(x, n, m: int):
    s = 0.0
    for _ in range(ident(n)):
        s = s + x
    return s * ident(m)


def test_a_shared_callee_returns_to_its_own_call():
    """``ident(n)`` is a count and ``ident(m)`` a float: ``m``'s float use
    is not ``n``'s, though both go through ``ident``'s return."""
    assert rv.gradient(counted_by_a_shared_callee, (2.0, 3, 5)) == (15.0, 0.0, 0.0)


@rv.ordinary
def compared(x, n):
    r = x
    if x > n:
        r = x * x
    return r


@rv.ordinary
def power(x, n):
    return x**n


def test_an_int_only_compared_or_raised_to_is_not_refused():
    """``x > n`` converts ``n`` to compare it, and ``x ** n``, a parameter
    raising a variable base, is read as an integer power: no derivative is
    asked of ``n``."""
    assert rv.gradient(compared, (2.0, 3)) == (1.0, 0.0)
    assert rv.gradient(compared, (4.0, 3)) == (8.0, 0.0)
    assert rv.gradient(power, (2.0, 3)) == (jax.grad(lambda x: x**3)(2.0), 0.0)


@rv.ordinary
def halvings(x, n):
    for _ in range(int(math.log2(n)) + 1):
        x = x * 0.5
    return x


@rv.ordinary
def halvings_scaled(x, n):
    return halvings(x, n) * math.log2(n)


def test_an_int_only_turned_back_into_an_int_is_not_refused():
    """``int(math.log2(n))`` computes with a float of ``n`` but only to get
    a count: no derivative could flow through it were ``n`` a float, so
    nothing is refused; the same ``n`` also scaling the result is."""
    assert rv.gradient(halvings, (2.0, 8)) == (0.0625, 0.0)
    with pytest.raises(TypeError, match="argument 'n' is the int 8"):
        rv.gradient(halvings_scaled, (2.0, 8))


@rv.ordinary
def annotated_float(x, a: float):
    return x * a


@rv.ordinary
def numpy_annotated(x, n: np.int64, a: np.float64):
    return x * n * a


def test_numpy_scalar_annotations_are_int_and_float():
    """``n: np.int64`` says the integer is meant, as ``n: int`` does, and an
    int for ``a: np.float64`` is that float, differentiated."""
    assert rv.gradient(numpy_annotated, (2.0, 3, 5)) == (15.0, 0.0, 6.0)


@rv.reversible
def single_precision(y: np.float32, x: np.float32, n: np.int32, z: np.complex64):
    y += x * x
    n += 3
    z += 2.0j


@rv.ordinary
def ordinary_single(x: np.float32, n: np.int32):
    return x * x + n


def test_numpy_scalar_annotations_fix_their_width():
    """``x: np.float32`` compiled as ``f64`` where a Python float was
    passed: the annotation was read as no annotation.  numpy's scalar types
    mean their own type, as ``float`` means ``f64``: a Python number is
    converted (rounded as numpy rounds, an int range-checked), on both
    engines, and comes back as the numpy scalar."""
    text = single_precision.mlir(0.0, 1.1, 1, 2j)
    assert "rev.func @single_precision(%y: f32, %x: f32, %n: i32, %z: complex<f32>)" in text
    x32 = np.float32(1.1)
    expected = (x32 * x32, x32, np.int32(4), np.complex64(4j))
    interpreted = rv.reversible(single_precision.pyfunc, backend="interpreter")
    for engine in (single_precision, interpreted):
        results = engine(0.0, 1.1, 1, 2j)
        assert results == expected
        assert [type(r) for r in results] == [np.float32, np.float32, np.int32, np.complex64]
    assert ordinary_single(1.1, 2) == interpreted_ordinary_single(1.1, 2) == x32 * x32 + np.float32(2)
    assert ordinary_single.mlir(1.1, 2).count("f64") == 0


interpreted_ordinary_single = rv.ordinary(ordinary_single.pyfunc, backend="interpreter")


def test_numpy_scalar_annotations_refuse_what_does_not_convert():
    """An int beyond ``np.int32``'s range, a float for an integer, a
    complex number for a float: refused, naming the argument."""
    with pytest.raises(
        OverflowError, match=r"single_precision\(\): argument 'n': 4294967296 is out of range for int32"
    ):
        single_precision(0.0, 1.1, 2**32, 2j)
    with pytest.raises(TypeError, match=r"argument 'n' is declared int32, got float"):
        single_precision(0.0, 1.1, 1.5, 2j)
    with pytest.raises(TypeError, match=r"argument 'x' is declared float32, got complex"):
        single_precision(0.0, 1j, 1, 2j)


INT32_RANGE = r"is out of range for int32 \(-2147483648 to 2147483647\)$"
FLOAT32_RANGE = r"is out of range for float32 \(magnitude at most 3\.4028235e\+38\)$"


@pytest.mark.parametrize("engine", ["native", "interpreter"])
def test_numbers_beyond_a_numpy_annotation_are_out_of_range(engine):
    """A numpy integer wider than ``n: np.int32`` was converted unchecked
    and wrapped (``np.int64(2**40)`` became 0), where the Python int
    ``2**40`` is an ``OverflowError``; a finite float or complex part
    beyond float32's largest became infinite, where an int beyond it is an
    ``OverflowError``.  Each is the int's ``OverflowError`` now, naming the
    argument, on both engines and in both forms; infinities and NaN are
    float32 values and pass, and a numpy integer that fits converts."""
    reversible = rv.reversible(single_precision.pyfunc, backend=engine)
    refused = [
        ((0.0, 1.1, np.int64(2**40), 2j), rf"argument 'n': 1099511627776 {INT32_RANGE}"),
        ((0.0, 1.1, np.int64(-(2**31) - 1), 2j), rf"argument 'n': -2147483649 {INT32_RANGE}"),
        ((0.0, 1e300, 1, 2j), rf"argument 'x': 1e\+300 {FLOAT32_RANGE}"),
        ((0.0, np.float64(-1e300), 1, 2j), rf"argument 'x': -1e\+300 {FLOAT32_RANGE}"),
        (
            (0.0, 1.1, 1, complex(1.0, 1e300)),
            rf"argument 'z': \(1\+1e\+300j\) {FLOAT32_RANGE.replace('float32', 'complex64')}",
        ),
    ]
    for args, message in refused:
        with pytest.raises(OverflowError, match=rf"^single_precision\(\): {message}"):
            reversible(*args)
    y, x, n, z = reversible(0.0, math.inf, np.int64(2**31 - 4), np.complex128(3e38j))
    assert (y, x, n, z) == (np.float32(math.inf), np.float32(math.inf), np.int32(2**31 - 1), np.complex64(3e38j))
    assert math.isnan(reversible(0.0, math.nan, 1, 2j)[0])
    ordinary = rv.ordinary(ordinary_single.pyfunc, backend=engine)
    with pytest.raises(OverflowError, match=rf"^ordinary_single\(\): argument 'n': 1099511627776 {INT32_RANGE}"):
        ordinary(1.0, np.int64(2**40))
    with pytest.raises(OverflowError, match=rf"^ordinary_single\(\): argument 'x': 1e\+300 {FLOAT32_RANGE}"):
        ordinary(1e300, 2)
    assert ordinary(1.5, np.int64(2)) == np.float32(1.5) * np.float32(1.5) + np.float32(2)


def widest_single(y: np.float32, x: np.float32):
    y += x


@pytest.mark.parametrize("engine", ["native", "interpreter"])
def test_a_float_that_float32_rounds_to_its_largest_is_not_out_of_range(engine):
    """A float above float32's largest (3.4028234663852886e38) but below
    halfway to 2**128 converts to the largest, as numpy's conversion
    does; only one the conversion makes infinite (3.4028236e38) is out of
    range, and the bound is printed as numpy prints float32's largest."""
    reversible = rv.reversible(widest_single, backend=engine)
    largest = np.finfo(np.float32).max
    for given in (3.4028235e38, 3.40282356e38, float(largest), -3.4028235e38):
        assert np.float32(given) == np.sign(given) * largest  # numpy's own conversion
        assert reversible(0.0, given) == (np.sign(given) * largest, np.sign(given) * largest)
    halfway = float(2**128 - 2**103)
    for given in (3.4028236e38, halfway, -halfway):
        with pytest.raises(
            OverflowError, match=rf"^widest_single\(\): argument 'x': {re.escape(str(given))} {FLOAT32_RANGE}"
        ):
            reversible(0.0, given)
    assert np.float32(math.nextafter(halfway, 0.0)) == largest  # numpy's rounding just below the boundary


def single_ancilla(y, x: np.float32):
    t = rv.ancilla(0.0, np.float32)
    t += x
    y += t * 2.0
    t -= x
    rv.free(t, np.float32(0.0))


def single_zeros(y, x: np.float32, n: int):
    a = rv.zeros(n, dtype=np.float32)
    a[n - 1] += x
    y += a[n - 1] * 2.0
    a[n - 1] -= x
    rv.free(a)


@pytest.mark.parametrize("engine", ["native", "interpreter"])
def test_numpy_scalar_types_allocate_their_width(engine):
    """``rv.ancilla(0.0, np.float32)`` and ``rv.zeros(n,
    dtype=np.float32)`` allocate ``f32`` as the class means in an
    annotation; the value is the float32 ``x`` doubled (exactly, in f32),
    on both engines, and ``~`` gives the arguments back."""
    allocations = (
        (single_ancilla, (0.0, 1.1), "%t = anc.alloc %1 : f32"),
        (single_zeros, (0.0, 1.1, 3), "%a = anc.array_alloc(%0) : memref<?xf32>"),
    )
    for function, args, allocation in allocations:
        compiled = rv.reversible(function, backend=engine)
        assert allocation in compiled.mlir(*args)
        results = compiled(*args)
        assert results[:2] == (float(np.float32(1.1)) * 2.0, np.float32(1.1))
        assert (~compiled)(*results)[:2] == (0.0, np.float32(1.1))


def rl(y, n: np.longlong):
    n += 1


@rv.ordinary
def long_annotated(x, n: np.longlong):
    return x * n


def test_numpy_aliases_of_an_accepted_dtype_are_accepted():
    """``np.longlong`` is a class of its own with ``np.int64``'s dtype: an
    annotation is looked up by its dtype, so it means ``i64`` as
    ``np.int64`` does (it was refused as an unknown annotation)."""
    assert "rev.func @rl(%y: f64, %n: i64)" in rv.reversible(rl).mlir(0.0, 3)
    assert rv.reversible(rl)(0.0, 3) == (0.0, 4)
    assert rv.gradient(long_annotated, (2.0, 3)) == (3.0, 0.0)


def widened(y: float, x: float, n: int):
    y += x * 3.0
    n += 1


def ordinary_widened(x: float, n: int):
    return x * 3.0 + n


@pytest.mark.parametrize("engine", ["native", "interpreter"])
def test_a_narrower_numpy_scalar_for_float_or_int_is_widened(engine):
    """``x: float`` given an ``np.float32`` computes at ``f64``, as the
    annotation says (it was refused by the reversible form, and computed at
    ``f32`` by the ordinary one), and ``n: int`` given an ``np.int32`` at
    ``i64``: the results are Python's ``float`` and ``int``."""
    x32 = np.float32(1.1)
    reversible = rv.reversible(widened, backend=engine)
    assert "(%y: f64, %x: f64, %n: i64)" in reversible.mlir(0.0, x32, np.int32(2))
    results = reversible(0.0, x32, np.int32(2))
    assert results == (float(x32) * 3.0, float(x32), 3)
    assert [type(r) for r in results] == [float, float, int]
    assert rv.ordinary(ordinary_widened, backend=engine)(x32, np.int32(2)) == float(x32) * 3.0 + 2


def test_an_int_for_a_float_parameter_is_that_float():
    """``a: float`` called with ``3``: the annotation says a float, so the
    int is passed as one and differentiated (it gave 0.0), and a plain call
    computes the same on both engines."""
    assert rv.gradient(annotated_float, (2.0, 3)) == (3.0, 2.0)
    assert rv.hessian(annotated_float, (2.0, 3)).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    interpreted = rv.ordinary(annotated_float.pyfunc, backend="interpreter")
    for value in (3, True, np.int32(4), 2**70):
        assert annotated_float(2.0, value) == interpreted(2.0, value) == 2.0 * float(value)


# -- unsigned integers ---------------------------------------------------------


@rv.reversible
def bump_first(y):
    y[0] += 1


@rv.ordinary
def first_plus_one(y):
    return y[0] + 1


@pytest.mark.parametrize(
    "value, advice",
    [
        (np.zeros(3, np.uint8), "pass y.astype(np.int32), which holds every uint8 value"),
        (np.zeros(3, np.uint16), "pass y.astype(np.int32), which holds every uint16 value"),
        (np.zeros(3, np.uint32), "pass y.astype(np.int64), which holds every uint32 value"),
        (np.zeros(3, np.uint64), "pass y.view(np.int64), the same bits"),
        (np.uint8(3), "pass int(y), which holds every uint8 value"),
    ],
)
def test_unsigned_integers_are_refused_with_what_to_pass(value, advice: str):
    """Native code has no unsigned types, so the eDSL takes none: the
    refusal says which signed type to pass instead."""

    for function in (bump_first, first_plus_one):
        with pytest.raises(TypeError, match=re.escape(advice)):
            function(value)
    y = value.astype(np.int64) if isinstance(value, np.ndarray) else None
    if y is not None:
        bump_first(y)
        assert y[0] == 1


def test_unsigned_advice_fits_a_jax_array_and_skips_a_dtype_numpy_does_not_know():
    """A JAX ``uint8`` array is an array (``.astype``, not ``int(y)``); an
    object whose ``dtype`` is not a numpy dtype (a string here, a
    ``torch.dtype`` elsewhere) is refused as an unsupported type, not
    crashed on."""
    import jax.numpy as jnp

    class DtypeByName:
        dtype = "uint8"

    for function in (bump_first, first_plus_one):
        with pytest.raises(TypeError, match=re.escape("pass y.astype(np.int32), which holds every uint8 value")):
            function(jnp.zeros(3, jnp.uint8))
        with pytest.raises(TypeError, match=r"argument 'y' has unsupported type DtypeByName($|;)"):
            function(DtypeByName())


# -- Python's names, not the wrappers' or the IR's ------------------------------------


@rv.reversible
def accumulate_square(y, x):
    y += x * x


@rv.ordinary
def square(x):
    return x * x


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_arguments_may_be_given_by_name(backend):
    f = rv.reversible(accumulate_square.pyfunc, backend=backend)
    assert f(x=2.0, y=1.0) == f(1.0, 2.0) == (5.0, 2.0)
    assert (~f)(5.0, x=2.0) == (1.0, 2.0)
    assert rv.ordinary(square.pyfunc, backend=backend)(x=3.0) == 9.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: rv.adjoint(accumulate_square)(y=1.0, x=2.0),
        lambda: rv.adjoint(accumulate_square)(1.0, 0.0, y=1.0, x=2.0),
        lambda: rv.cuda.kernel(rv.adjoint(accumulate_square))(np.zeros(2), x=np.ones(2)),
    ],
    ids=["names-only", "gradients-first", "kernel"],
)
def test_an_adjoint_takes_its_arguments_by_position(call):
    """Its gradients, which have no names, come after the arguments, and
    Python puts nothing by position after a keyword: a keyword could only
    be misplaced."""
    with pytest.raises(
        TypeError, match=r"takes its arguments by position, got '.' by name: accumulate_square's \(y, x\)"
    ):
        call()
    assert rv.adjoint(accumulate_square)(1.0, 2.0, 1.0, 0.0) == (-3.0, 2.0, 1.0, 4.0)


@rv.reversible
def add_into_stream(stream, x):
    for i in range(len(x)):
        stream[i] += x[i]


def test_a_kernel_refuses_a_parameter_named_like_a_launch_option():
    with pytest.raises(TypeError, match=r"parameter 'stream' has the name of a launch option .*rename the parameter"):
        rv.cuda.kernel(add_into_stream)


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        (lambda: accumulate_square(1.0, y=2.0), "accumulate_square() got argument 'y' twice, by position and by name"),
        (lambda: accumulate_square(1.0, k=2.0), "accumulate_square() has no argument 'k'"),
        (lambda: (~accumulate_square)(x=2.0), "~accumulate_square() is missing argument 'y'"),
        (lambda: square(1.0, x=2.0), "square() got argument 'x' twice"),
        (lambda: rv.cuda.kernel(accumulate_square)(z=np.zeros(2)), "accumulate_square() has no argument 'z'"),
    ],
    ids=["twice", "unknown", "inverse", "ordinary", "kernel"],
)
def test_a_keyword_without_its_place_names_the_function_and_its_parameters(call, problem):
    with pytest.raises(TypeError) as info:
        call()
    message = str(info.value)
    assert message.startswith(problem) and message.endswith("(x)" if problem.startswith("square()") else "(y, x)")


def test_a_tangent_that_is_not_a_number_names_its_argument():
    with pytest.raises(
        TypeError, match=r"^the tangent of argument 'x' of accumulate_square must be a real number, got str$"
    ):
        rv.jvp(accumulate_square, (0.0, 3.0), (0.0, "a"))
    with pytest.raises(
        TypeError, match=r"^the tangent of argument 'x' of .* must be an array of real numbers, got list$"
    ):
        rv.jvp(add_elements, (np.zeros(2), np.ones(2)), (None, ["a", "b"]))


@rv.reversible
def accumulate_complex_square(y: complex, x: complex):
    y += x * x


@rv.reversible
def push_twice(s: rv.Stack, x: float):
    rv.copy_push(s, x)
    rv.copy_push(s, x)


VECTORS = (np.zeros(2), np.ones(2))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: rv.jvp(accumulate_square, (0.0, 3.0), (0.0, "1.5")),
            "tangent of argument 'x' .* real number, got str",
        ),
        (
            lambda: rv.jvp(accumulate_square, (0.0, 3.0), (0.0, b"1")),
            "tangent of argument 'x' .* real number, got bytes",
        ),
        (
            lambda: rv.vjp(push_twice, rv.Stack(float, [1.0]), 2.0)[1]([np.complex128(1 + 2j), 0.0, 0.0], 0.0),
            r"cotangent of output #0 .* a real number, got complex128",
        ),
        (
            lambda: rv.hvp(accumulate_square, (0.0, 3.0), (None, "2")),
            "vector of argument 'x' .* real number, got str",
        ),
        (lambda: rv.vjp(accumulate_square, 0.0, 3.0)[1]("1", 0.0), r"cotangent of output #0 .* real number, got str"),
        (
            lambda: rv.jvp(add_elements, VECTORS, (None, ["1", "2"])),
            r"tangent of argument 'x' .* an array of real numbers, got list",
        ),
        (
            lambda: rv.jvp(add_elements, VECTORS, (None, np.array([1j, 2.0]))),
            r"tangent of argument 'x' .* an array of real numbers, got an array of complex128",
        ),
        (
            lambda: rv.vjp(add_elements, *VECTORS)[1]([[1.0], [2.0, 3.0]], None),
            r"cotangent of output #0 .* an array of real numbers, got list",
        ),
        (
            lambda: rv.jvp(accumulate_complex_square, (0j, 1j), (0j, "1")),
            "tangent of argument 'x' .* a number, got str",
        ),
        (
            lambda: rv.vjp(push_twice, rv.Stack(float, [1.0]), 2.0)[1](4.0, 0.0),
            r"cotangent of output #0 .* a list of 3 real number\(s\), got float",
        ),
        (
            lambda: rv.vjp(push_twice, rv.Stack(float, [1.0]), 2.0)[1](["1", 0.0, 0.0], 0.0),
            r"cotangent of output #0 .* a real number, got str",
        ),
    ],
    ids=[
        "numeric-str",
        "bytes",
        "complex-element",
        "vector",
        "cotangent",
        "str-array",
        "complex-array",
        "ragged",
        "complex-argument",
        "stack",
        "stack-element",
    ],
)
def test_a_seed_is_a_number_of_its_arguments_kind(call: Callable[[], object], message: str) -> None:
    """Seeds, tangents, vectors and cotangents go through one check: what
    Python's ``float`` or numpy would convert (``"1.5"``, ``b"1"``, an
    array of strings, a complex number's real part) is refused as what
    is not a number is, naming the argument or output."""
    with pytest.raises(TypeError, match="^the " + message):
        call()


@rv.reversible
def add_elements(y, x):
    for i in range(len(y)):
        y[i] += x[i]


@rv.reversible
def swap_with_itself(y, x):
    y, y = y, y  # E:self-swap


@rv.reversible
def swap_call_with_itself(y, x):
    rv.swap(x, x)  # E:self-swap-call


def test_a_swap_of_a_variable_with_itself_says_so():
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        swap_with_itself(1.0, 2.0)
    check(info.value, "# E:self-swap", "swaps y with itself", "remove it")
    assert "consumed" not in str(info.value) and "rev.swap" not in str(info.value)
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        swap_call_with_itself(1.0, 2.0)
    check(info.value, "# E:self-swap-call", "'rv.swap(x, x)' swaps x with itself")


@rv.reversible
def add_in_parallel(y, x):
    for i in rv.prange(len(y)):
        y[i] += x[i]


def test_a_kernel_names_arguments_as_the_cpu_call_does():
    read_only = np.ones(3)
    read_only.flags.writeable = False
    messages = []
    for call in (add_in_parallel, rv.cuda.kernel(add_in_parallel)):
        with pytest.raises(ValueError) as info:
            call(read_only, np.ones(3))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("argument 'y' of add_in_parallel is a read-only array")
