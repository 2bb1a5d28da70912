"""float32 programs: Python float literals are weakly typed, as in JAX.

A literal such as ``2.0`` takes the float type of the value it meets, so
``2.0 * x[i]`` of a ``float32`` array is ``float32`` arithmetic, also where
control flow meets (``total = 0.0`` summing float32s in a loop); it stays
``f64`` where nothing fixes its type, and a float32 value meeting an
``f64`` one widens to it.  Checked natively and on the
interpreter against numpy's float32 arithmetic, and through ``rv.to_jax``
without JAX's 64-bit mode (docs/python.md, "Inside JAX and PyTorch")."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import revmlir as rv
from revmlir.runtime.values import numpy_dtype


def _smooth(u, c):
    for i in range(1, len(u)):
        u[i] = u[i] + 0.5 * c * u[i - 1]
    total = 0.0
    for i in range(len(u)):
        total += u[i] * u[i]
    return total


@rv.reversible
def energy(e, x, k):
    for i in range(len(x)):
        e += 0.5 * k * x[i] * x[i] + math.cos(2.0 * x[i])


ENGINES = {
    "native": (energy, rv.ordinary(_smooth)),
    "interpreter": (rv.reversible(energy.pyfunc, backend="interpreter"), rv.ordinary(_smooth, backend="interpreter")),
}
X = np.linspace(-1.0, 1.0, 5, dtype=np.float32)
K = np.float32(1.5)


@pytest.mark.parametrize("engine", ENGINES)
def test_literals_take_the_float32_of_arrays_and_scalars(engine):
    """Every product and sum is float32, as numpy computes it (a Python
    float beside a float32 array is weak there too)."""
    f, _ = ENGINES[engine]
    e, x, k = f(np.float32(0.25), X, K)
    expected = np.float32(0.25) + np.sum(0.5 * K * X * X + np.cos(2.0 * X), dtype=np.float32)
    assert x.dtype == np.float32 and e == pytest.approx(float(expected), rel=1e-6)
    text = f.mlir(np.float32(0.25), X, K)
    arithmetic = [line for line in text.splitlines() if "arith.mulf" in line or "arith.addf" in line]
    assert "arith.extf" not in text and len(arithmetic) == 5
    assert all(line.endswith(": f32") for line in arithmetic)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_literal_carried_by_a_loop_takes_the_float32_it_meets(engine):
    """``total = 0.0`` is weak, so the loop summing float32 products into
    it carries a float32, as JAX types ``total`` (it was an f64, the
    float32 elements widened to it)."""
    _, g = ENGINES[engine]
    u, after = np.linspace(0.5, 2.0, 4, dtype=np.float32), np.linspace(0.5, 2.0, 4, dtype=np.float32)
    total = g(u, K)
    for i in range(1, 4):
        after[i] = after[i] + np.float32(0.5) * K * after[i - 1]
    assert u.dtype == np.float32 and np.array_equal(u, after)
    assert g.specialization_for(u, K).result_types[0].bitwidth == 32
    expected = np.float32(0.0)
    for value in after:
        expected = expected + value * value
    assert expected.dtype == np.float32 and total == float(expected)


def _branch(x, c):
    if c > 0:
        y = 2.0
    else:
        y = x[0]
    return y * x[1]


def _branch_jax(x, c):
    return jnp.where(c > 0, 2.0, x[0]) * x[1]


def _weak_branches(x, c):
    if c > 0:
        y = 2.0
    else:
        y = 3
    return y * x[0], y


def _weak_branches_jax(x, c):
    y = jnp.where(c > 0, 2.0, 3)
    return y * x[0], y


def _reset_in_a_loop(x):
    s = x[0]
    for i in range(len(x)):
        s = 1.5
    return s * x[1]


def _weak_int_in_a_while(x):
    s = 0
    i = 0
    while s < 3.0:
        s = s + x[i]
        i = i + 1
    return s


def _weak_int_in_a_while_jax(x):
    return lax.while_loop(lambda c: c[0] < 3.0, lambda c: (c[0] + x[c[1]], c[1] + 1), (0, 0))[0]


def _weak_stays_weak(x):
    s = 0.5
    for i in range(len(x)):
        s = s * 2.0
    return s * x[0], s


def _weak_stays_weak_jax(x):
    s = lax.fori_loop(0, len(x), lambda i, s: s * 2.0, 0.5)
    return s * x[0], s


def _strong_f64_meets_a_literal(x, d):
    s = 0.0
    for i in range(len(d)):
        s = s + d[i]
    return s * x[0]


def _strong_f64_meets_a_literal_jax(x, d):
    return lax.fori_loop(0, len(d), lambda i, s: s + d[i], 0.0) * x[0]


def _weakness_from_another(x, d):
    total = 0.0
    s = 0.0
    for i in range(len(d)):
        s = total
        total = total + d[i]
    return s * x[0]


def _weak_choice(x, c):
    y = 2.0 if c > 0 else 3.0
    return y * x[0]


def _weak_choice_jax(x, c):
    return jnp.where(c > 0, 2.0, 3.0) * x[0]


F32 = np.array([1.5, 2.25, 0.5], dtype=np.float32)
F64 = np.array([0.25, 0.75], dtype=np.float64)
MERGES = [
    (_branch, _branch_jax, (F32, 1)),
    (_branch, _branch_jax, (F32, -1)),
    (_weak_branches, _weak_branches_jax, (F32, 0)),
    # lax.fori_loop refuses a weak carry out of a strong one: the loop
    # unrolled by tracing the Python itself
    (_reset_in_a_loop, _reset_in_a_loop, (F32,)),
    (_weak_int_in_a_while, _weak_int_in_a_while_jax, (F32,)),
    (_weak_stays_weak, _weak_stays_weak_jax, (F32,)),
    (_strong_f64_meets_a_literal, _strong_f64_meets_a_literal_jax, (F32, F64)),
    # ``s`` is weak after one iteration, strong (the f64 ``total``) after two
    (_weakness_from_another, _weakness_from_another, (F32, F64)),
    (_weak_choice, _weak_choice_jax, (F32, 1)),
]


def _typed_as_jax(function, twin, args, backend):
    """``function`` of ``args`` on ``backend`` returns what ``twin`` does
    in JAX's 64-bit mode (so that f64 can appear), in value and dtype."""
    with jax.enable_x64(True):
        found = twin(*(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args))
        expected = [jnp.asarray(e) for e in (found if isinstance(found, tuple) else (found,))]
    f = rv.ordinary(function, backend=backend)
    results = f(*args)
    results = results if isinstance(results, tuple) else (results,)
    types = f.specialization_for(*args).result_types
    assert [numpy_dtype(t) for t in types] == [e.dtype for e in expected]
    for value, reference in zip(results, expected, strict=True):
        assert value == pytest.approx(float(reference), rel=1e-6)


@pytest.mark.parametrize(
    ("function", "twin", "args"), MERGES, ids=[f"{f.__name__}-{k}" for k, (f, _, _) in enumerate(MERGES)]
)
def test_where_paths_meet_a_variable_is_typed_as_jax_types_it(function, twin, args):
    """After an ``if`` and around a loop, a weak value meeting a strong one
    takes its type, and weak meets weak stays weak (then the float32 it
    meets later fixes it): as JAX types ``jnp.where`` of the two and the
    carry of ``lax.fori_loop`` and ``lax.while_loop``, in its 64-bit mode
    so that f64 can appear.  They were f64, or refused."""
    _typed_as_jax(function, twin, args, "interpreter")


@rv.reversible(backend="interpreter")
def _round_into(y, x, k):
    for i in range(len(x)):
        y[i] += k * x[i]
        y[i] -= np.float32(k) * x[i]


def test_an_f64_operand_is_rounded_into_a_float32_target():
    """``k`` is a Python float, an f64: ``k * x[i]`` is f64 arithmetic,
    rounded to float32 by the update as numpy's ``+=`` rounds it;
    ``np.float32(k)`` converts explicitly, so the second update subtracts
    the float32 product, which differs from the rounded f64 one in the
    last bit at most."""
    x = np.linspace(0.1, 0.9, 5, dtype=np.float32)
    y, _, _ = _round_into(np.zeros(5, np.float32), x, 1 / 3)
    expected = np.float32(1 / 3 * x.astype(np.float64)) - np.float32(1 / 3) * x
    assert y.dtype == np.float32 and np.array_equal(y, expected)
    text = _round_into.mlir(np.zeros(5, np.float32), x, 1 / 3)
    assert text.count("arith.truncf") == 2 and "arith.extf" in text


@rv.reversible(backend="interpreter")
def _turns(y, x):
    for i in range(len(x)):
        y[i] += 2 * math.pi * x[i]


def test_integer_literals_and_constants_are_weak_too():
    """``2 * math.pi`` is computed once from weak values and rounded: the
    product with the float32 element stays float32."""
    x = np.linspace(0.1, 0.9, 5, dtype=np.float32)
    y, _ = _turns(np.zeros(5, np.float32), x)
    assert y.dtype == np.float32 and np.array_equal(y, np.float32(2 * math.pi) * x)
    assert "arith.extf" not in _turns.mlir(np.zeros(5, np.float32), x)


def _choice(x, d, c):
    t = x[0] if c > 0 else d[0]
    return t, t * x[1]


def _choice_jax(x, d, c):
    t = jnp.where(c > 0, x[0], d[0])
    return t, t * x[1]


def _branches(x, d, c):
    if c > 0:
        t = x[0]
    else:
        t = d[0]
    return t * 2.0, t


def _branches_jax(x, d, c):
    t = jnp.where(c > 0, x[0], d[0])
    return t * 2.0, t


def _one_branch(x, d, c):
    t = x[0]
    if c > 0:
        t = d[1]
    return t


def _one_branch_jax(x, d, c):
    return jnp.where(c > 0, d[1], x[0])


def _int_meets_float32(x, d, n):
    t = n if n > 2 else x[0]
    if n > 2:
        u = x[1]
    else:
        u = n
    return t, u


def _int_meets_float32_jax(x, d, n):
    return jnp.where(n > 2, n, x[0]), jnp.where(n > 2, x[1], n)


def _widening_sum(x, d):
    s = x[0]
    for i in range(len(d)):
        s = s + d[i]
    return s


def _widening_while(x, d):
    s = x[0]
    i = 0
    while i < len(d):
        s = s * 0.5 + d[i]
        i = i + 1
    return s


def _widening_in_a_branch(x, d):
    s = x[0]
    for i in range(len(x)):
        if x[i] > 1.0:
            s = s + d[0]
        else:
            s = s * 2.0
    return s


def _widening_in_a_branch_jax(x, d):
    s = x[0]
    for i in range(len(x)):
        s = jnp.where(x[i] > 1.0, s + d[0], s * 2.0)
    return s


def _weak_meets_float32_in_a_branch(x, d, c):
    total = 0.0
    t = 0.0
    for i in range(len(d)):
        if c > 0:
            t = total
        else:
            t = x[i]
        total = total + d[i]
    return total, t


def _weak_meets_float32_in_a_branch_jax(x, d, c):
    total = t = 0.0
    for i in range(len(d)):
        t = jnp.where(c > 0, total, x[i])
        total = total + d[i]
    return total, t


def _int_widths(k32, k64, c):
    if c > 0:
        y = k32[0]
    else:
        y = k64[0]
    return y


def _int_widths_jax(k32, k64, c):
    return jnp.where(c > 0, k32[0], k64[0])


def _widening_int_sum(k32, k64):
    s = k32[0]
    for i in range(len(k64)):
        s = s + k64[i]
    return s


I32 = np.array([3, -4], dtype=np.int32)
I64 = np.array([5, 7, 11], dtype=np.int64)
WIDTHS = [
    (_choice, _choice_jax, (F32, F64, 1)),
    (_choice, _choice_jax, (F32, F64, 0)),
    (_branches, _branches_jax, (F32, F64, 1)),
    (_branches, _branches_jax, (F32, F64, 0)),
    (_one_branch, _one_branch_jax, (F32, F64, 0)),
    (_int_meets_float32, _int_meets_float32_jax, (F32, F64, 3)),
    (_int_meets_float32, _int_meets_float32_jax, (F32, F64, 1)),
    # lax.fori_loop and lax.while_loop refuse a carry that widens: the
    # loops unrolled by tracing the Python itself
    (_widening_sum, _widening_sum, (F32, F64)),
    (_widening_while, _widening_while, (F32, F64)),
    (_widening_in_a_branch, _widening_in_a_branch_jax, (F32, F64)),
    # ``t`` joins the weak ``total`` and a float32 in the first build, a
    # strong f64 and a float32 from the second iteration on
    (_weak_meets_float32_in_a_branch, _weak_meets_float32_in_a_branch_jax, (F32, F64, 1)),
    (_weak_meets_float32_in_a_branch, _weak_meets_float32_in_a_branch_jax, (F32, F64, 0)),
    (_int_widths, _int_widths_jax, (I32, I64, 1)),
    (_widening_int_sum, _widening_int_sum, (I32, I64)),
]


@pytest.mark.parametrize("backend", ["native", "interpreter"])
@pytest.mark.parametrize(
    ("function", "twin", "args"), WIDTHS, ids=[f"{f.__name__}-{k}" for k, (f, _, _) in enumerate(WIDTHS)]
)
def test_strong_types_meet_where_arithmetic_of_them_would(function, twin, args, backend):
    """A float32 and an f64 meet at the f64 and an integer and a float32 at
    the float32 after an ``if`` (the narrower value converted in its
    branch) and around a loop (the loop built again carrying the wider
    type, the value converted before it), as arithmetic of the two does
    and JAX's ``jnp.where`` and the unrolled loop do: they were refused
    ("float32 after one branch and float after the other").  A loop
    settles: a carried type only goes up JAX's finite lattice.  The last
    function's merge in the loop body counts as a weak value retyped, so
    the loop is built again once ``total`` is strong (kept after one
    build, ``t`` was float32)."""
    _typed_as_jax(function, twin, args, backend)


def _widened_twice(x, d, c):
    s = x[0]
    for i in range(len(d)):
        if c > 0:
            t = x[1]
        else:
            t = d[i]
        s = s * d[i] + t
    return s


@pytest.mark.parametrize("engine", ["native", "interpreter"])
@pytest.mark.parametrize("c", [1, 0])
def test_a_widened_merge_differentiates_as_jax(engine, c):
    """The conversions a widening merge adds (a float32 branch value, the
    float32 before the loop) are differentiated as JAX differentiates the
    unrolled loop: gradients of the dtype of each argument."""
    x, d = np.array([0.75, 2.0], dtype=np.float32), np.array([0.5, 1.5, -0.25])
    found = rv.gradient(rv.ordinary(_widened_twice, backend=engine), (x, d, c))
    with jax.enable_x64(True):
        expected = jax.grad(lambda x, d: _widened_twice(x, d, c), argnums=(0, 1))(jnp.asarray(x), jnp.asarray(d))
    for gradient, reference in zip(found, expected):
        assert gradient.dtype == reference.dtype
        np.testing.assert_allclose(gradient, reference, rtol=1e-6)


@rv.ordinary
def _doubled(t):
    return t * 2.0


@rv.ordinary(backend="interpreter")
def _calls_with_the_accumulator(x):
    total = 0.0
    for i in range(len(x)):
        u = _doubled(total)
        x[i] = u + x[i]
        total = total + x[i]
    return total


def test_a_build_thrown_away_leaves_no_callee():
    """The loop's first build calls ``_doubled`` with the weak f64
    ``total``, which turns float32: the second build calls the float32
    specialization only, and the f64 one the first requested is not in
    the module (it was, reversibilized and compiled, uncalled)."""
    x = F32.copy()
    total = _calls_with_the_accumulator(x)
    expected, reference = np.float32(0.0), F32.copy()
    for i in range(len(reference)):
        reference[i] = expected * np.float32(2.0) + reference[i]
        expected = expected + reference[i]
    assert np.array_equal(x, reference) and total == float(expected)
    text = _calls_with_the_accumulator.mlir(F32.copy())
    assert [line.split("(")[0] for line in text.splitlines() if line.startswith("  func.func")] == [
        "  func.func @_doubled_0",
        "  func.func @_calls_with_the_accumulator",
    ]


def test_a_callee_both_builds_request_is_compiled_once(monkeypatch):
    """The loop is built twice (``total`` turns float32), and both builds
    call ``_doubled`` of the float32 ``x[i]``: the second finds it compiled
    (it was rolled back with the first build and compiled again)."""
    from revmlir.frontend.ordinary_code.compiler import ModuleCompiler

    compile_once, compiled = ModuleCompiler._compile, []

    def counting(self, key, function, name, types, declared):
        compiled.append(name)
        return compile_once(self, key, function, name, types, declared)

    monkeypatch.setattr(ModuleCompiler, "_compile", counting)

    @rv.ordinary(backend="interpreter")
    def doubles_each(x):
        total = 0.0
        for i in range(len(x)):
            total = total + _doubled(x[i])
        return total

    expected = np.float32(0.0)
    for value in F32:
        expected = expected + value * np.float32(2.0)
    assert doubles_each(F32.copy()) == float(expected)
    assert sorted(compiled) == ["_doubled", "doubles_each"]


@rv.ordinary(backend="interpreter")
def _suffix_sum(x, n):
    total = 0.0
    if n > 0:
        for i in range(1):
            total = total + x[n - 1] + _suffix_sum(x, n - 1)
    return total


@rv.ordinary(backend="interpreter")
def _last_element(x, n):
    total = 0.0
    if n > 0:
        for i in range(1):
            total = total + x[n - 1]
            _ = _last_element(x, n - 1)
    return total


def test_a_recursive_weak_accumulator_takes_the_float32_it_meets():
    """The probe leaves out the loops that recurse, so ``total`` comes
    back the weak ``0.0``: an f64 that the skipped loop would have made
    float32.  The recursion is compiled again until that type settles:
    ``_suffix_sum`` is float32 (it was f64, the float32 elements widened),
    and ``_last_element`` is no longer refused as returning float32 "but
    float where it returns without recursing"."""
    expected = np.float32(0.0)
    for value in F32:
        expected = np.float32(expected + value)
    assert _suffix_sum(F32, 3) == float(expected)
    assert _last_element(F32, 3) == float(F32[2])
    for function in (_suffix_sum, _last_element):
        assert [t.bitwidth for t in function.specialization_for(F32, 3).result_types] == [32]


def _first(k):
    return k[0]


def _first_as_a_float(k):
    return jnp.float64(k[0])


def test_the_comparison_with_jax_tells_an_int_from_a_float_of_its_width():
    """An ``int64`` result is not JAX's ``float64``, though both are 64
    bits wide: the dtypes are compared, not the widths."""
    with pytest.raises(AssertionError):
        _typed_as_jax(_first, _first_as_a_float, (I64,), "interpreter")


def _int_literal_sum(k32):
    s = 0
    for i in range(len(k32)):
        s = s + k32[i]
    return s, k32[0] + 1


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_an_int_literal_widens_an_int32_unlike_in_jax(backend):
    """A Python ``int`` is an ``int64``, weak beside floats only: ``s = 0``
    summing ``int32`` elements and ``k32[0] + 1`` are ``int64`` (JAX keeps
    the ``int32``; docs/design.md, decision 85's limits)."""
    f = rv.ordinary(_int_literal_sum, backend=backend)
    assert f(I32) == (int(I32.sum()), int(I32[0]) + 1)
    assert [numpy_dtype(t) for t in f.specialization_for(I32).result_types] == [np.dtype(np.int64)] * 2


def add_both(y, a, b):
    y += a + b


@pytest.mark.parametrize("backend", ["native", "interpreter"])
@pytest.mark.parametrize("scalar", [np.float32, np.int32, np.complex64])
def test_numpy_scalars_come_back_as_they_were_passed(backend, scalar):
    """A numpy scalar of a width Python's numbers have not comes back as
    that numpy type, so ``~f`` of ``f``'s results runs the same width: as
    Python numbers they picked the 64-bit specialisation, and an int32
    sum that wrapped, or a float32 one that rounded, did not go back."""
    f = rv.reversible(backend=backend)(add_both)
    big = scalar(2**31 - 1) if scalar is np.int32 else scalar(0.2)
    passed = (scalar(0), scalar(1) if scalar is np.int32 else scalar(0.1), big)
    results = f(*passed)
    assert [type(value) for value in results] == [scalar] * 3
    with np.errstate(over="ignore"):
        assert results[0] == passed[1] + passed[2]  # numpy's wrapped or rounded sum
    back = (~f)(*results)
    assert [type(value) for value in back] == [scalar] * 3
    assert back == passed
    y, a, b = f(0.0, np.float64(0.1), 0.2)  # a Python float and float64 give the same: Python floats
    assert type(y) is float and y == 0.1 + 0.2
