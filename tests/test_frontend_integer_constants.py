"""Integer expressions of constants mean what Python computes (decision 144):
folded at compile time, unbounded, and an error at their location where the
result does not fit the integer they become (a uint64's bits only in modular
arithmetic); beside a float they are that float.  Numeric globals and
attributes, and the functions a function calls, are read once per function.  Long expressions compile, and
derive, and one too deep for Python is a located error."""

import importlib.util
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import revmlir as rv
import revmlir.interpreter.recursion
from marked_lines import MarkedLines

LINES = MarkedLines(Path(__file__))
BACKENDS = ["native", "interpreter"]


def refused(function, *args):
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        function(*args)
    return info.value


# -- literals and globals beyond int64 -------------------------------------------------

BIG = 2**70


@rv.reversible
def scaled_by_a_huge_literal(y, x):
    y += 100000000000000000000 * x  # E:huge-literal


@rv.reversible
def plus_two_to_the_63(y):
    y += 9223372036854775808


@rv.reversible
def plus_big(y):
    y += BIG  # E:big-global


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int_literal_beside_a_float_is_that_float(backend):
    function = rv.reversible(scaled_by_a_huge_literal.pyfunc, backend=backend)
    assert function(0.5, 3.0) == (0.5 + 1e20 * 3.0, 3.0)


def test_an_int_literal_beyond_int64_is_a_located_error():
    error = refused(scaled_by_a_huge_literal, 0, 1)
    LINES.located(error, "# E:huge-literal", "the integer 100000000000000000000 does not fit int64")


@rv.ordinary
def murmur_finaliser(k):
    return (k ^ (k >> 33)) * 0xFF51AFD7ED558CCD & 0xFFFF_FFFF_FFFF_FFFF


@rv.ordinary
def two_to_the_63_alone():
    top = 1 << 63  # E:2**63
    return top


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_uint64_constant_is_its_bits_in_modular_arithmetic(backend):
    expected = ((5 ^ (5 >> 33)) * 0xFF51AFD7ED558CCD) % 2**64 - 2**64  # the uint64 result's bits, as an int64
    assert rv.ordinary(murmur_finaliser.pyfunc, backend=backend)(5) == expected
    assert rv.reversible(plus_two_to_the_63.pyfunc, backend=backend)(5) == 5 - 2**63


def test_a_uint64_constant_elsewhere_is_refused_with_its_int64_spelling():
    error = refused(two_to_the_63_alone)
    LINES.located(error, "# E:2**63", "the integer 9223372036854775808 does not fit int64")
    assert "write 9223372036854775808 - 2**64" in str(error)


@rv.reversible
def add_to_int32(k):
    for i in range(len(k)):
        k[i] += 2**40 + 7  # E:int32-update


@rv.ordinary
def store_int32(k):
    k[0] = 2**40 + 7  # E:int32-store


@pytest.mark.parametrize(
    ("function", "marker"),
    [(add_to_int32, "# E:int32-update"), (store_int32, "# E:int32-store")],
    ids=["update", "store"],
)
def test_a_folded_int_that_does_not_fit_a_narrower_int_is_located(function, marker):
    error = refused(function, np.zeros(2, np.int32))
    LINES.located(error, marker, "does not fit int32")


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int32_beside_a_folded_int_computes_as_int64(backend):
    @rv.ordinary(backend=backend)
    def scaled(k):
        return k[0] * 3_000_000_000 + (k[1] & 0xFFFF_FFFF)

    assert scaled(np.array([2, -1], np.int32)) == 6_000_000_000 + 0xFFFF_FFFF


def test_the_smallest_int64_is_a_literal():
    @rv.reversible
    def plus_smallest(y):
        y += -9223372036854775808

    assert plus_smallest(5) == 5 - 2**63


def test_a_numeric_global_beyond_int64():
    LINES.located(refused(plus_big, 0), "# E:big-global", "the integer 1180591620717411303424 does not fit int64")
    assert plus_big(1.0) == 1.0 + 2.0**70  # updating a float, it is a float


def test_an_update_of_a_float_by_an_integer_constant_is_a_float_update():
    @rv.reversible
    def plus(y):
        y += 2**100

    assert plus(0.5) == 0.5 + 2.0**100


# -- constant subexpressions ---------------------------------------------------------


@rv.reversible
def bump_far_away(x):
    x[2**64 + 2] += 1.0  # E:index


@rv.reversible
def count_far(y):
    for i in range(2**64 + 3):  # E:range
        y += 1


@rv.reversible
def allocate_huge(y):
    a = rv.zeros(2**65)  # E:zeros
    rv.free(a)


@pytest.mark.parametrize(
    ("function", "argument", "marker", "integer"),
    [
        (bump_far_away, np.zeros(3), "# E:index", 2**64 + 2),
        (count_far, 0, "# E:range", 2**64 + 3),
        (allocate_huge, 0.0, "# E:zeros", 2**65),
    ],
    ids=["index", "range", "zeros"],
)
def test_a_folded_int_that_does_not_fit_int64_is_located(function, argument, marker, integer):
    LINES.located(refused(function, argument), marker, f"the integer {integer} does not fit int64")


@pytest.mark.parametrize("backend", BACKENDS)
def test_conversions_of_folded_ints_convert_the_whole_value(backend):
    @rv.reversible(backend=backend)
    def parts(z, y):
        z += complex(2**70, 0)
        y += float(2**64 + 1) + np.float32(2**80)

    assert parts(0j, 0.0) == (complex(2.0**70, 0.0), float(2**64 + 1) + float(np.float32(2.0**80)))


EXPRESSIONS = [
    "2**62 + 2**62 - 1 + 2**62 - 2**62",
    "(2**70 + 5) // 2**8 % 1000003",
    "-7 // 2 + -7 % 2 * 100 + 7 % -2 * 10000",
    "(1 << 70) >> 40",
    "~2**40 & 0xFFFF_FFFF_FFFF | 5 ^ 3",
    "(-2) ** 63",
    "-(2**63) + 1",
    "10**30 // 10**12",
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_folding_computes_as_python(tmp_path, backend):
    body = "".join(f"    y[{i}] += {e}\n" for i, e in enumerate(EXPRESSIONS))
    module = _module(tmp_path, f"@rv.reversible(backend={backend!r})\ndef folded(y):\n{body}")
    result = module.folded(np.zeros(len(EXPRESSIONS), np.int64))
    assert result.tolist() == [eval(e) for e in EXPRESSIONS]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int_to_a_negative_constant_power_is_pythons_float(backend):
    @rv.reversible(backend=backend)
    def half(y):
        y += 2**-1 + 3**-2

    assert half(0.0) == 2**-1 + 3**-2


@rv.reversible
def over_zero(y):
    y += 0**-1  # E:zero-power


@rv.reversible
def inverse_count(y, n):
    y += n**-2  # E:int-power


@rv.ordinary
def over_zero_floor(n):
    return n + 7 // 0  # E:floor-zero


@rv.reversible
def shifted_back(y):
    y += 1 << -1  # E:negative-shift


def test_what_python_raises_for_constants_is_located():
    LINES.located(refused(over_zero, 0.0), "# E:zero-power", "raises ZeroDivisionError in Python")
    LINES.located(refused(over_zero_floor, 1), "# E:floor-zero", "'7 // 0' raises ZeroDivisionError")
    LINES.located(refused(shifted_back, 0), "# E:negative-shift", "raises ValueError in Python: negative shift count")


def test_an_int_variable_to_a_negative_power_asks_for_a_float():
    error = refused(inverse_count, 0.0, 3)
    LINES.located(error, "# E:int-power", "an int to a negative power is a float", "float(n) ** -2")


def run_time_power(y: int, n: int, k: int):
    y += n**k  # E:run-time-power


def ordinary_power(n: int, k: int):
    return n**k  # E:ordinary-power


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int_to_an_exponent_negative_at_run_time_is_a_located_error(backend):
    """Python's ``n ** k`` is a float for a negative ``k``, which the
    ``int64`` the expression compiled to cannot be: an error at the
    expression, on both engines, in reversible and ordinary code alike."""
    powered = rv.reversible(backend=backend)(run_time_power)
    assert powered(1, 3, 4) == (82, 3, 4)
    ordinary = rv.ordinary(backend=backend)(ordinary_power)
    assert ordinary(-2, 3) == -8
    for function, args, marker in ((powered, (0, 2, -1), "E:run-time-power"), (ordinary, (1, -3), "E:ordinary-power")):
        with pytest.raises(rv.ExecutionError) as raised:
            function(*args)
        base, exponent = args[-2:]
        LINES.located(
            raised.value,
            f"# {marker}",
            f"the integer {base} to the power {exponent}: an integer to a negative power is no integer",
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int_to_a_huge_exponent_at_run_time_wraps_at_once(backend):
    """The interpreter computes ``n ** k`` modulo 2⁶⁴, as native code's
    squaring does, not Python's unbounded power (``3 ** 2**40`` has half a
    trillion digits, and ran out of memory); ``0 ** 0`` is 1 on both."""
    powered = rv.reversible(backend=backend)(run_time_power)
    ordinary = rv.ordinary(backend=backend)(ordinary_power)
    for base, exponent in ((3, 2**40), (2, 2**62), (-3, 2**63 - 1), (3, 64), (2, 64), (0, 0), (-1, 2**62 + 1)):
        wrapped = pow(base, exponent, 2**64)
        expected = wrapped - 2**64 if wrapped >= 2**63 else wrapped
        assert powered(0, base, exponent) == (expected, base, exponent)
        assert ordinary(base, exponent) == expected


def power_of_any(y, n, k):
    y += n**k


def returned_power(n, k):
    return n**k


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bool_in_a_power_is_the_int_python_takes_it_for(backend):
    """``3 ** True`` is 3 and ``False ** 2`` is 0: a bool widens to the
    other operand's integer type (to an int beside a bool), as in ``*``,
    where the power narrowed the int to a bool (1 interpreted, and
    ``NEGATIVE_POWER`` natively, a true ``i1`` being -1)."""
    powered = rv.reversible(backend=backend)(power_of_any)
    ordinary = rv.ordinary(backend=backend)(returned_power)
    cases = [(3, True), (True, 3), (False, 2), (True, True), (False, False), (-1, True), (np.int32(5), True)]
    for base, exponent in cases:
        expected = base**exponent
        assert powered(0, base, exponent)[0] == expected, (base, exponent)
        got = ordinary(base, exponent)
        assert got == expected and not isinstance(got, bool), (base, exponent)


@rv.reversible
def beyond_floats(y, x):
    y += 10**400 * x  # E:float-overflow


@rv.reversible
def astronomically_wide(y, x):
    y += 2**10**9 * x  # E:wide


def test_folded_ints_too_large_for_anything():
    LINES.located(refused(beyond_floats, 0.0, 1.0), "# E:float-overflow", "with 401 digits does not fit a float")
    LINES.located(refused(astronomically_wide, 0.0, 1.0), "# E:wide", "wider than 4096 bits")


@rv.ordinary
def plus_huge(x):
    return x + 2**70  # E:ordinary


@pytest.mark.parametrize("backend", BACKENDS)
def test_ordinary_functions_fold_too(backend):
    function = rv.ordinary(plus_huge.pyfunc, backend=backend)
    assert function(1.0) == 1.0 + 2.0**70
    LINES.located(refused(function, 1), "# E:ordinary", "the integer 1180591620717411303424 does not fit int64")


@pytest.mark.parametrize("backend", BACKENDS)
def test_run_time_integer_arithmetic_still_wraps(backend):
    @rv.reversible(backend=backend)
    def quadruple(y, k):
        y += k * 4

    assert quadruple(0, 2**62) == (0, 2**62)


# -- numeric globals are read once per function ----------------------------------------

K = 2.0


@rv.reversible
def times_k(y, x):
    y += K * x


def test_a_numeric_global_is_read_once_for_every_specialisation(monkeypatch):
    assert times_k(1.0, 2) == (5.0, 2)  # K read by the (f64, int64) specialisation
    monkeypatch.setattr(sys.modules[__name__], "K", 3.0)
    assert rv.gradient(times_k, (1.0, 2.0)) == (1.0, 2.0)  # a new one, for floats: ∂y/∂x is K as first read
    assert times_k(1.0, 2.0) == (5.0, 2.0)
    assert times_k(np.float32(1.0), np.float32(2.0)) == (5.0, 2.0)


def add_once(y, x):
    y += x


def subtract_once(y, x):
    y -= x


def doubled(x):
    return 2.0 * x


def tripled(x):
    return 3.0 * x


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_called_global_is_read_once_for_every_specialisation(backend):
    """A function a compiled one calls, rebound after the first compile,
    is not called by later specialisations either: they looked it up
    when they compiled, so after the rebinding floats ran ``add_once``
    and ints ``subtract_once``, on both engines.  A reversible callee and
    a plain helper inlined into ordinary code alike."""
    step = rv.reversible(add_once, backend=backend)
    helper = doubled

    @rv.reversible(backend=backend)
    def stepped(y, x):
        step(y, x)

    @rv.ordinary(backend=backend)
    def scaled(x):
        return helper(x)

    assert stepped(1.0, 2.0) == (3.0, 2.0) and scaled(2.0) == 4.0
    step = rv.reversible(subtract_once, backend=backend)
    helper = tripled
    assert stepped(1.0, 2) == (3.0, 2)  # a new specialisation: add_once, as first read
    assert (~stepped)(3.0, 2) == (1.0, 2)
    assert scaled(2) == 4.0 and rv.gradient(scaled, (2.0,)) == (2.0,)
    assert step(1.0, 2.0) == (-1.0, 2.0) and helper(2.0) == 6.0  # the names are rebound


CONFIG = SimpleNamespace(K=2, N=np.int64(5))


@rv.ordinary
def times_config(x):
    return x * CONFIG.K + CONFIG.N


def test_a_numeric_attribute_is_read_once_and_numpy_integers_fold(monkeypatch):
    assert times_config(1.0) == 7.0
    monkeypatch.setattr(CONFIG, "K", 3)
    assert times_config(1) == 7  # a new specialisation: CONFIG.K as first read
    assert type(times_config(1)) is int  # np.int64(5) folded as an int


STEP = -2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_folded_range_step_is_a_constant_step(backend):
    @rv.reversible(backend=backend)
    def down(x):
        for i in range(4, -1, STEP):
            x[i] += 1.0 * i
        for i in range(3, -1, 0 - 2):
            x[i] += 10.0 * i

    @rv.ordinary(backend=backend)
    def every_other(x):
        for i in range(0, 5, -STEP):
            x[i] = 1.0

    assert down(np.zeros(5)).tolist() == [0.0, 10.0, 2.0, 30.0, 4.0]
    x = np.zeros(5)
    every_other(x)
    assert x.tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]


@rv.ordinary
def last_by_a_folded_index(x):
    return x[0 - 1]  # E:negative-index


def test_a_folded_negative_index_is_refused():
    LINES.located(refused(last_by_a_folded_index, np.zeros(2)), "# E:negative-index", "negative index -1")


# -- folded ints in float contexts ------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_folded_int_meeting_a_float_is_that_float(backend):
    @rv.ordinary(backend=backend)
    def floats(x, c, out):
        out[0] = 10**20
        return math.sqrt(10**20) + x, min(x, 10**20), math.atan2(10**20, x), x if c > 0 else 10**20

    out = np.zeros(1)
    assert floats(2.0, 0, out) == (1e10 + 2.0, 2.0, math.atan2(1e20, 2.0), 1e20)
    assert out[0] == 1e20


@rv.ordinary
def through_a_bool(x):
    return 2**70 + True + x  # E:bool


def test_a_folded_int_in_no_float_context_says_how_to_write_the_float():
    error = refused(through_a_bool, 1.0)
    LINES.located(error, "# E:bool", "the integer 1180591620717411303424 does not fit int64")
    assert "for a float write float(2 ** 70)" in str(error)


# -- expressions nested deeply ------------------------------------------------------------


def _module(tmp_path: Path, code: str, recursion: int = 0):
    """The module of ``code`` (under ``import revmlir as rv``), imported
    with Python's recursion limit at least ``recursion`` (CPython itself
    needs more than its default to compile a sum of 5000 terms)."""
    path = tmp_path / f"generated_{abs(hash(code))}.py"
    path.write_text("import numpy as np\nimport revmlir as rv\n\n" + code)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(max(saved, recursion))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.setrecursionlimit(saved)
    return module


def _sum(terms: int) -> str:
    return " + ".join(["x"] * terms)


@pytest.mark.parametrize("kind", ["reversible", "ordinary"])
def test_a_sum_of_5000_terms_compiles(tmp_path, kind):
    code = (
        f"@rv.reversible\ndef f(y, x):\n    y += {_sum(5000)}\n"
        if kind == "reversible"
        else f"@rv.ordinary\ndef f(x):\n    return {_sum(5000)}\n"
    )
    module = _module(tmp_path, code, recursion=40_000)
    assert sys.getrecursionlimit() < 40_000
    result = module.f(0.0, 1.5) if kind == "reversible" else module.f(1.5)
    assert result == ((7500.0, 1.5) if kind == "reversible" else 7500.0)


@pytest.mark.parametrize("form", ["inverse", "adjoint", "tangent", "gradient"])
def test_the_derived_functions_of_a_long_sum_compile(tmp_path, form):
    # 2000 terms, past the 330 to 600 at which each derivation met Python's
    # default limit; 5000 take up to 7 s each.
    code = f"@rv.reversible\ndef f(y, x):\n    y += {_sum(2000)}\n\n@rv.ordinary\ndef g(x):\n    return {_sum(2000)}\n"
    module = _module(tmp_path, code, recursion=40_000)
    derived = {
        "inverse": lambda: (~module.f)(3000.0, 1.5),
        "adjoint": lambda: rv.adjoint(module.f)(0.0, 1.5, 1.0, 0.0),
        "tangent": lambda: rv.jvp(module.f, (0.0, 1.5), (0.0, 1.0)),
        "gradient": lambda: rv.gradient(module.g, (1.5,)),
    }
    expected = {
        "inverse": (0.0, 1.5),
        "adjoint": (-3000.0, 1.5, 1.0, 2000.0),
        "tangent": ((3000.0, 1.5), (2000.0, 1.0)),
        "gradient": (2000.0,),
    }
    assert derived[form]() == expected[form]
    assert sys.getrecursionlimit() < 40_000


def test_a_derived_function_too_deep_for_python_is_a_located_error(tmp_path, monkeypatch):
    # no room: 500 terms compile forward within Python's own limit, not their adjoint
    monkeypatch.setattr(revmlir.interpreter.recursion, "MAX_CALL_DEPTH", 0)
    module = _module(tmp_path, f"@rv.reversible\ndef f(y, x):\n    y += {_sum(500)}\n")
    assert module.f(0.0, 1.0) == (500.0, 1.0)
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.adjoint(module.f)(0.0, 1.0, 1.0, 0.0)
    assert str(info.value).startswith(f"{module.__file__}:5:1: the adjoint of f: expression nested too deeply")


def test_an_expression_too_deep_for_python_is_a_located_error(tmp_path, monkeypatch):
    # the compile's room for nesting taken away, Python's own limit is met
    monkeypatch.setattr(revmlir.interpreter.recursion, "MAX_CALL_DEPTH", 0)
    module = _module(tmp_path, f"@rv.reversible\ndef f(y, x):\n    y += {_sum(2000)}\n")
    with pytest.raises(rv.ReversibleSyntaxError) as info:
        module.f(0.0, 1.0)
    assert str(info.value).startswith(f"{module.__file__}:6:10: expression nested too deeply")


def test_the_adjoint_kernel_of_a_long_sum_compiles(tmp_path):
    # the kernel's compile (adjoints generated, lowered for the device) has
    # the CPU's room too; needs no GPU.  800 terms: past the 330 to 600 at
    # which derivations met Python's default limit, and LLVM compiles them
    # in seconds (2000 take 35 s)
    code = f"@rv.reversible\ndef f(y, x):\n    for i in rv.prange(len(y)):\n        y[i] += {_sum(800).replace('x', 'x[i]')}\n"
    module = _module(tmp_path, code, recursion=40_000)
    y, x = np.zeros(4), np.ones(4)
    program = rv.cuda.kernel(rv.adjoint(module.f)).compile(y, x, np.ones(4), np.zeros(4))
    assert ".entry" in program.ptx
    assert sys.getrecursionlimit() < 40_000
