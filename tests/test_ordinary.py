"""``@rv.ordinary``: ordinary Python, differentiated through ``reversibilize``.

Every program is run as the undecorated Python function itself and as its
compiled form, which must return the same values and leave the arrays it
writes the same.  Gradients are compared with ``jax.grad`` of the same
program written with ``jax.numpy`` and with central finite differences of
the Python function.  The last section checks that each unsupported
construct is a located ``rv.ReversibleSyntaxError`` (marked ``# E:name``).
"""

import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, f64

import revmlir as rv
from derivative_checks import assert_per_argument_close
from revmlir.runtime.native import NativeModule

jax.config.update("jax_enable_x64", True)

HERE = Path(__file__)
LINES = HERE.read_text().splitlines()


# -- programs: plain Python, and the same in jax.numpy ----------------------------


def heat_py(u, tmp, c, steps):
    """Explicit heat equation: every step overwrites tmp, then u."""
    n = len(u)
    for step in range(steps):
        for i in range(1, n - 1):
            tmp[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i]
    energy = 0.0
    for i in range(n):
        energy += u[i] * u[i]
    return energy


def heat_jax(u, tmp, c, steps):
    for _ in range(steps):
        tmp = tmp.at[1:-1].set(u[1:-1] + c * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
        u = u.at[1:-1].set(tmp[1:-1])
    return jnp.sum(u * u)


def recurrence_py(x, a, n):
    """A nonlinear scalar recurrence: x and y are re-assigned every step."""
    y = 0.0
    for k in range(n):
        y = x
        x = a * x * (1.0 - x) + 0.1 * math.sin(y * k)
        x = x / (1.0 + y * y)
    return x + y


def recurrence_jax(x, a, n):
    y = 0.0
    for k in range(n):
        y = x
        x = a * x * (1.0 - x) + 0.1 * jnp.sin(y * k)
        x = x / (1.0 + y * y)
    return x + y


def branches_py(v, s, t):
    """A loop whose branch depends on the data; v is overwritten."""
    acc = 0.0
    for i in range(len(v)):
        w = v[i] * s
        if w > t:
            acc = acc * 0.9 + math.exp(-w)
            v[i] = w - t
        elif w < -t:
            acc -= w * t
        else:
            v[i] = v[i] * v[i]
    return acc


def branches_jax(v, s, t):
    acc = 0.0
    for i in range(v.shape[0]):
        w = v[i] * s
        acc = jnp.where(w > t, acc * 0.9 + jnp.exp(-w), jnp.where(w < -t, acc - w * t, acc))
        v = v.at[i].set(jnp.where(w > t, w - t, jnp.where(w < -t, v[i], v[i] * v[i])))
    return acc


def halving_py(x, a):
    """A while loop whose trip count depends on x."""
    count = 0
    while x > 1.0:
        x = 0.5 * x + 0.1 * math.tanh(a[count % len(a)])
        a[count % len(a)] += 0.1 * x
        count += 1
    return x * count + a[0], count


def halving_jax(x, a, count):
    """The loop of ``halving_py`` with its (piecewise constant) trip count."""
    for k in range(count):
        x = 0.5 * x + 0.1 * jnp.tanh(a[k % a.shape[0]])
        a = a.at[k % a.shape[0]].add(0.1 * x)
    return x * count + a[0]


@rv.ordinary
def diffuse(u, tmp, dt):
    for i in range(1, len(u) - 1):
        tmp[i] = dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    for i in range(1, len(u) - 1):
        u[i] += tmp[i] - dt * u[i] * u[i] * u[i]


@rv.ordinary
def norm2(u):
    total = 0.0
    for i in range(len(u)):
        total += u[i] * u[i]
    return total


@rv.ordinary
def norm2_and_sum(u):
    total = 0.0
    plain = 0.0
    for i in range(len(u)):
        total += u[i] * u[i]
        plain += u[i]
    return total, plain


def nested_py(u, tmp, dt, steps):
    """Calls of other ordinary functions, one returning a tuple."""
    for step in range(steps):
        diffuse(u, tmp, dt)
    energy = norm2(u)
    squares, total = norm2_and_sum(u)
    return energy * total + squares


def nested_jax(u, tmp, dt, steps):
    for _ in range(steps):
        tmp = tmp.at[1:-1].set(dt * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
        u = u.at[1:-1].add(tmp[1:-1] - dt * u[1:-1] ** 3)
    return jnp.sum(u * u) * jnp.sum(u) + jnp.sum(u * u)


heat = rv.ordinary(heat_py)
recurrence = rv.ordinary(recurrence_py)
branches = rv.ordinary(branches_py)
halving = rv.ordinary(halving_py)
nested = rv.ordinary(nested_py)


def _copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def assert_runs_like_python(function, pyfunc, args) -> None:
    """The compiled function returns what Python returns and writes the
    arrays as Python does."""
    mine, theirs = _copies(args), _copies(args)
    got, expected = function(*mine), pyfunc(*theirs)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert type(got) is type(expected) or isinstance(expected, np.floating | float)
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def finite_differences(pyfunc, args, loss=lambda result: result, h=1e-6):
    """Central differences of the Python function with respect to every float
    argument (``None`` for the others)."""

    def value(changed):
        return loss(pyfunc(*_copies(changed)))

    gradients = []
    for position, arg in enumerate(args):
        if isinstance(arg, np.ndarray) and arg.dtype.kind == "f":
            gradient = np.zeros_like(arg)
            for index in np.ndindex(arg.shape):
                up, down = list(_copies(args)), list(_copies(args))
                up[position][index] += h
                down[position][index] -= h
                gradient[index] = (value(up) - value(down)) / (2 * h)
            gradients.append(gradient)
        elif isinstance(arg, float):
            up, down = list(args), list(args)
            up[position] += h
            down[position] -= h
            gradients.append((value(up) - value(down)) / (2 * h))
        else:
            gradients.append(None)
    return gradients


def jax_gradient(jax_function, args):
    """``jax.grad`` with respect to every float argument (``None`` for the
    others, which JAX sees as Python values)."""
    floats = [
        i for i, a in enumerate(args) if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
    ]
    found = jax.grad(jax_function, argnums=tuple(floats))(
        *(jnp.asarray(a) if i in floats else a for i, a in enumerate(args))
    )
    gradients = dict(zip(floats, found))
    return [np.asarray(gradients[i]) if i in gradients else None for i in range(len(args))]


rng = np.random.default_rng(7)

# -- running: the compiled function behaves like the Python function -------------

small_floats = st.floats(-2.0, 2.0, allow_nan=False)


@settings(max_examples=25, deadline=None)
@given(st.lists(small_floats, min_size=3, max_size=9), st.floats(0.0, 0.4), st.integers(0, 6))
def test_heat_runs_like_python(values, c, steps):
    u = np.array(values)
    assert_runs_like_python(heat, heat_py, (u, np.zeros_like(u), c, steps))


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 4.0), st.integers(0, 12))
def test_recurrence_runs_like_python(x, a, n):
    assert_runs_like_python(recurrence, recurrence_py, (x, a, n))


@settings(max_examples=40, deadline=None)
@given(st.lists(small_floats, min_size=1, max_size=8), small_floats, st.floats(0.0, 1.0))
def test_branches_run_like_python(values, s, t):
    assert_runs_like_python(branches, branches_py, (np.array(values), s, t))


@settings(max_examples=40, deadline=None)
@given(st.floats(-3.0, 1e6), st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=4))
def test_while_loop_runs_like_python(x, values):
    a = np.array(values)
    mine, theirs = a.copy(), a.copy()
    got, expected = halving(x, mine), halving_py(x, theirs)
    assert got[1] == expected[1] and isinstance(got[1], int)
    assert math.isclose(got[0], expected[0], rel_tol=1e-12, abs_tol=1e-12)
    np.testing.assert_allclose(mine, theirs, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.lists(small_floats, min_size=3, max_size=8), st.floats(0.0, 0.2), st.integers(0, 4))
def test_nested_calls_run_like_python(values, dt, steps):
    u = np.array(values)
    assert_runs_like_python(nested, nested_py, (u, np.zeros_like(u), dt, steps))


def test_integers_booleans_negative_steps_and_two_dimensional_arrays():
    def grid_py(a, b, s):
        total = 0
        flag = False
        for i in range(a.shape[0] - 1, -1, -2):
            for j in range(a.shape[1]):
                a[i, j] += s * b[j, i]
                total += i * j - total // 3
                flag = flag or a[i, j] > 1.0
        return total, flag, a[a.shape[0] - 1, 0]

    a, b = rng.normal(size=(5, 3)), rng.normal(size=(3, 5))
    mine, theirs = a.copy(), a.copy()
    got, expected = rv.ordinary(grid_py)(mine, b, 0.5), grid_py(theirs, b, 0.5)
    assert got[:2] == expected[:2] and type(got[0]) is int and type(got[1]) is bool
    assert got[2] == pytest.approx(expected[2], rel=1e-14)
    np.testing.assert_array_equal(mine, theirs)


def test_a_procedure_returns_none_and_writes_its_array():
    u = rng.normal(size=6)
    tmp = np.zeros(6)
    expected_u, expected_tmp = u.copy(), tmp.copy()
    diffuse.pyfunc(expected_u, expected_tmp, 0.1)
    assert diffuse(u, tmp, 0.1) is None
    np.testing.assert_allclose(u, expected_u, rtol=1e-14)
    np.testing.assert_allclose(tmp, expected_tmp, rtol=1e-14)


def test_the_interpreter_runs_the_same_program():
    args = (rng.random(6), np.zeros(6), 0.3, 3)
    interpreted = rv.ordinary(heat_py, backend="interpreter")
    assert interpreted.specialization_for(*args).reversible.backend == "interpreter"
    assert heat.specialization_for(*args).reversible.backend == "native"
    assert_runs_like_python(interpreted, heat_py, args)


def test_calls_run_the_ordinary_code_not_the_reversible_form(monkeypatch: pytest.MonkeyPatch):
    """A call of ``f`` runs the ordinary IR compiled as it is (no tape:
    the reversible form would keep one of every step until it returns).
    The reversible form is neither compiled nor interpreted: a gradient
    compiles it first."""
    compiled: list[ModuleOp] = []
    native_compile = NativeModule.compile.__func__

    def counting(cls: type, module: ModuleOp, *args: object, **options: object) -> object:
        compiled.append(module)
        return native_compile(cls, module, *args, **options)

    monkeypatch.setattr(NativeModule, "compile", classmethod(counting))
    args = (rng.random(6), np.zeros(6), 0.3, 5)
    fresh = rv.ordinary(heat_py)
    spec = fresh.specialization_for(*args)
    assert spec.plain is not None
    assert rv.ordinary(heat_py, backend="interpreter").specialization_for(*args).plain is None
    reversible = spec.reversible
    assert_runs_like_python(fresh, heat_py, args)
    assert not reversible.interpreter.counters and not any(module is reversible.module for module in compiled)
    rv.gradient(fresh, args)
    assert any(module is reversible.module for module in compiled)


def test_mlir_shows_the_ordinary_and_the_reversible_ir():
    args = (rng.random(5), np.zeros(5), 0.2, 2)
    text = heat.mlir(*args)
    ordinary, reversible = text.split("// reversible IR")
    assert "func.func @heat_py(%u: memref<?xf64>, %tmp: memref<?xf64>, %c: f64, %steps: i64) -> f64" in ordinary
    assert "scf.for" in ordinary and "memref.store" in ordinary and "rev." not in ordinary
    assert "rev.func @heat_py(" in reversible and "rev.func @heat_py.tape(" in reversible
    assert "rev.routine" in reversible and "anc.push" in reversible
    assert heat.mlir(*args, form="ordinary") == ordinary.rstrip("\n")
    with pytest.raises(ValueError, match="form must be one of both, ordinary, reversible"):
        heat.mlir(*args, form="llvm")


def test_one_compilation_per_signature():
    function = rv.ordinary(recurrence_py)
    function(0.5, 2.0, 3)
    function(0.25, 3.0, 7)
    assert function(0.5, 2, 3) == recurrence_py(0.5, 2, 3)  # an integer a: another signature
    assert len(function._specializations) == 2


# -- gradients: JAX and finite differences ------------------------------------------


def check_gradient(function, pyfunc, jax_function, args):
    found = rv.gradient(function, args)
    fd = finite_differences(pyfunc, args)
    assert_per_argument_close(found, jax_gradient(jax_function, args), rtol=1e-10, atol=1e-12)
    assert_per_argument_close(found, fd, rtol=1e-5, atol=1e-7)


def test_gradient_of_the_heat_equation():
    u = rng.random(9)
    args = (u, np.zeros(9), 0.2, 6)
    before = _copies(args)
    check_gradient(heat, heat_py, heat_jax, args)
    np.testing.assert_array_equal(args[0], before[0])  # the gradient runs on copies
    np.testing.assert_array_equal(args[1], before[1])


@pytest.mark.parametrize("x,a,n", [(0.3, 2.5, 7), (0.8, 3.7, 12), (0.1, 1.2, 1)])
def test_gradient_of_a_nonlinear_recurrence(x, a, n):
    check_gradient(recurrence, recurrence_py, recurrence_jax, (x, a, n))


@pytest.mark.parametrize("s,t", [(1.3, 0.4), (-0.7, 0.2), (0.5, 0.9)])
def test_gradient_through_data_dependent_branches(s, t):
    v = rng.normal(size=8)
    check_gradient(branches, branches_py, branches_jax, (v, s, t))


@pytest.mark.parametrize("x", [0.5, 13.3, 1000.0])
def test_gradient_of_a_while_loop(x):
    a = rng.normal(size=3) * 0.1
    found = rv.gradient(halving, (x, a), iloss=0)
    count = halving_py(x, a.copy())[1]
    expected = jax_gradient(lambda x, a: halving_jax(x, a, count), (x, a))
    assert_per_argument_close(found, expected, rtol=1e-10, atol=1e-12)
    assert_per_argument_close(found, finite_differences(halving_py, (x, a), loss=lambda r: r[0]), rtol=1e-5, atol=1e-7)
    with pytest.raises(TypeError, match="output #1 of halving_py is not a float scalar"):
        rv.gradient(halving, (x, a), iloss=1)


def test_gradient_through_nested_calls():
    u = rng.normal(size=7)
    check_gradient(nested, nested_py, nested_jax, (u, np.zeros(7), 0.1, 3))


def test_vjp_of_the_returned_value_and_of_the_arrays_left_behind():
    u, tmp = rng.random(7), np.zeros(7)
    outputs, pullback = rv.vjp(heat, u, tmp, 0.25, 4)
    # outputs: the returned energy, then every argument as heat left it
    expected_u, expected_tmp = u.copy(), tmp.copy()
    energy = heat_py(expected_u, expected_tmp, 0.25, 4)
    assert outputs[0] == pytest.approx(energy, rel=1e-12)
    np.testing.assert_allclose(outputs[1], expected_u, rtol=1e-12)
    np.testing.assert_allclose(outputs[2], expected_tmp, rtol=1e-12)
    assert outputs[3:] == (0.25, 4)

    def final_state(u, tmp, c):
        for _ in range(4):
            tmp = tmp.at[1:-1].set(u[1:-1] + c * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
            u = u.at[1:-1].set(tmp[1:-1])
        return jnp.sum(u * u), u, tmp, c

    _, jax_pullback = jax.vjp(final_state, jnp.asarray(u), jnp.asarray(tmp), 0.25)
    w_u, w_tmp = rng.normal(size=7), rng.normal(size=7)
    found = pullback(0.5, w_u, w_tmp, 2.0, None)
    expected = jax_pullback((0.5, jnp.asarray(w_u), jnp.asarray(w_tmp), 2.0))
    assert_per_argument_close(found, [*expected, None], rtol=1e-10, atol=1e-12)
    with pytest.raises(TypeError, match="the pullback of heat_py takes 5 cotangent"):
        pullback(1.0)


def test_gradient_of_one_of_several_returned_values():
    u = rng.normal(size=5)
    (g_plain,) = rv.gradient(norm2_and_sum, (u,), iloss=1)
    np.testing.assert_allclose(g_plain, np.ones(5))
    (g_squares,) = rv.gradient(norm2_and_sum, (u,), iloss=0)
    np.testing.assert_allclose(g_squares, 2 * u)
    with pytest.raises(IndexError, match="iloss=3 is out of range for the 3 outputs of norm2_and_sum"):
        rv.gradient(norm2_and_sum, (u,), iloss=3)


# -- calling mistakes ----------------------------------------------------------------


def test_arrays_the_function_writes_must_not_alias_another_argument():
    u = np.zeros(6)
    with pytest.raises(ValueError, match="arrays 'u' and 'tmp' share memory, and heat_py writes 'u'"):
        heat(u, u, 0.1, 1)
    with pytest.raises(ValueError, match="share memory"):
        rv.gradient(heat, (u, u[1:], 0.1, 1))


def test_unsupported_argument_types():
    with pytest.raises(TypeError, match=r"argument 'u' has unsupported type list \(pass a numpy array\)"):
        heat([1.0, 2.0], np.zeros(2), 0.1, 1)
    with pytest.raises(TypeError, match="argument 'x' has unsupported type complex"):
        recurrence(1j, 2.0, 3)
    with pytest.raises(TypeError, match=r"takes 3 argument\(s\) \(x, a, n\), got 2"):
        recurrence(1.0, 2.0)
    with pytest.raises(TypeError, match="@rv.ordinary decorates functions defined with def, not a lambda"):
        rv.ordinary(lambda x: x)
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        rv.ordinary(recurrence_py, backend="gpu")


def test_an_ordinary_function_has_no_inverse():
    with pytest.raises(TypeError, match=r"~recurrence_py: an @rv.ordinary function has no inverse .* @rv.reversible"):
        ~recurrence


# -- diagnostics -----------------------------------------------------------------------


def line_of(marker: str) -> int:
    matches = [i + 1 for i, line in enumerate(LINES) if line.rstrip().endswith(marker)]
    assert len(matches) == 1, marker
    return matches[0]


def check(error: BaseException, marker: str, message: str, hint: str | None, at: str) -> None:
    """A ReversibleSyntaxError at this file, the marked line and the column
    of ``at``, with exactly this message and hint."""
    assert isinstance(error, rv.ReversibleSyntaxError), repr(error)
    assert error.filename == str(HERE)
    assert error.lineno == line_of(marker), str(error)
    assert error.offset == LINES[error.lineno - 1].index(at) + 1, str(error)
    assert error.reason == message and error.hint == hint, str(error)


def at_decoration(function) -> BaseException:
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.ordinary(function)
    return caught.value


def at_call(function, *args) -> BaseException:
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        rv.ordinary(function)(*args)
    return caught.value


def test_list_use():
    def f(x):
        y = [x, 2.0 * x]  # E:list
        return y[0]

    check(at_decoration(f), "# E:list", "lists are not supported", "pass a numpy array and index it", "[x")


def test_dict_use():
    def f(x):
        d = {"x": x}  # E:dict
        return d["x"]

    check(at_decoration(f), "# E:dict", "dicts are not supported", "use separate variables or numpy arrays", "{")


def test_return_inside_a_loop():
    def f(x, n):
        for i in range(n):
            return x  # E:return
        return x

    check(
        at_decoration(f),
        "# E:return",
        "return must be the last statement of an ordinary function",
        "assign the result to a variable and return it at the end",
        "return",
    )


def test_break():
    def f(x):
        while x > 1.0:
            x = x / 2.0
            break  # E:break
        return x

    check(
        at_decoration(f),
        "# E:break",
        "'break' is not supported",
        "use a while loop whose condition says when to stop",
        "break",
    )


def test_unsupported_statement_at_decoration():
    def f(x):
        with open("log"):  # E:with
            pass
        return x

    check(
        at_decoration(f),
        "# E:with",
        "'with' statements are not supported in ordinary functions",
        'see the list of supported Python in docs/python.md, "Ordinary Python"',
        "with",
    )


def test_allocating_an_array():
    def f(x, n):
        work = np.zeros(n)  # E:alloc
        return x + work[0]

    check(
        at_call(f, 1.0, 3),
        "# E:alloc",
        "'np.zeros(n)' allocates an array",
        "ordinary functions cannot allocate arrays; allocate it outside and pass it in",
        "np.zeros",
    )


def test_array_methods():
    def f(u):
        return u.sum()  # E:method

    check(
        at_call(f, np.ones(3)),
        "# E:method",
        "'u.sum': array methods are not supported",
        "read and write elements in loops; allocate arrays outside and pass them in",
        "u.sum",
    )


def test_assigning_an_array_makes_an_alias():
    def f(u):
        v = u  # E:alias
        return v[0]

    check(
        at_call(f, np.ones(3)),
        "# E:alias",
        "'u' is an array, not a number; arrays are arguments, updated in place, and cannot be assigned or returned",
        "read and write their elements: u[i]",
        "u  #",
    )


def test_passing_the_same_array_twice():
    def f(u):
        diffuse(u, u, 0.1)  # E:twice

    check(
        at_call(f, np.ones(4)),
        "# E:twice",
        "'u' is passed to diffuse twice",
        "the arguments of a call must not alias: pass a copy of one of them, made outside",
        "u, 0.1",
    )


def test_reassigning_an_array_argument():
    def f(u):
        u = u + 1.0  # E:rebind

    check(
        at_call(f, np.ones(3)),
        "# E:rebind",
        "'u' is an array argument; it cannot be re-assigned",
        "write its elements: u[i] = …",
        "u =",
    )


def test_updating_a_whole_array():
    def f(u):
        u *= 2.0  # E:whole

    check(
        at_call(f, np.ones(3)),
        "# E:whole",
        "'u *= 2.0' updates a whole array",
        "update its elements in a loop: u[i] *= …",
        "u *=",
    )


def test_a_loop_widens_an_int_to_the_float_its_body_makes():
    """An int argument is strong, unlike the literal ``0``, and meets the
    float its body makes at the float, as ``n + 0.5`` does: the loop is
    built again carrying a float, and the int is converted before it."""

    @rv.ordinary(backend="interpreter")
    def f(n):
        x = n
        for i in range(n):
            x = x + 0.5
        return x

    assert f(3) == 4.5 and isinstance(f(3), float)
    assert f.specialization_for(3).result_types == (f64,)


def test_branches_of_types_arithmetic_refuses():
    """A tropical and a fixed-point number do not mix in arithmetic, so
    neither where paths meet."""

    def f(x, c):
        if c > 0:  # E:branch
            y = rv.tropical(x)
        else:
            y = rv.Fixed[43](x)
        return float(y)

    check(
        at_call(f, 2.0, 1),
        "# E:branch",
        "'y' is Tropical after one branch and rv.Fixed[43] after the other, which do not mix; give it one type in both",
        None,
        "if",
    )


def test_a_loop_body_giving_a_type_arithmetic_refuses():
    def f(x, n):
        y = rv.tropical(x)
        for i in range(n):  # E:loop
            y = rv.Fixed[43](0.5)
        return float(y)

    check(
        at_call(f, 2.0, 3),
        "# E:loop",
        "'y' is Tropical before the loop and rv.Fixed[43] after its body, which do not mix; "
        "give it one type before the loop and in its body",
        None,
        "for",
    )


@pytest.mark.parametrize("engine", ["native", "interpreter"])
def test_a_log_number_made_in_ordinary_code_is_refused_at_rv_ulog(engine):
    """``rv.ulog`` in ordinary code made a log number no op of it computes
    on: its arithmetic was refused in a reversible function's words and
    ``float(rv.ulog(x))`` as an op that cannot be reversibilized.  The
    call is refused, on both engines, in the user's words."""

    def f(x):
        l = rv.ulog(x)  # E:ulog
        return float(l * l)

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        rv.ordinary(f, backend=engine)(2.0)
    check(
        info.value,
        "# E:ulog",
        "'rv.ulog(x)': rv.ulog makes a log number for a reversible update; ordinary code computes with real values",
        "drop rv.ulog: x",
        "rv.ulog",
    )


def test_name_first_assigned_in_a_loop_ends_with_it():
    def f(u):
        for i in range(len(u)):
            last = u[i]
        return last  # E:scope

    check(
        at_call(f, np.ones(3)),
        "# E:scope",
        "unknown variable 'last'",
        "variables are the function's arguments and the names assigned before this point (a name "
        "first assigned inside a loop or a branch ends with it); globals must be numbers",
        "last  #",
    )


def test_negative_index():
    def f(u):
        return u[-1]  # E:negative

    check(
        at_call(f, np.ones(3)), "# E:negative", "negative index -1: indices count from 0", "write u[len(u) - 1]", "-1"
    )


def test_loop_over_a_list():
    def f(u):
        total = 0.0
        for x in u:  # E:iterate
            total += x
        return total

    check(
        at_call(f, np.ones(3)),
        "# E:iterate",
        "cannot loop over 'u'",
        "loop over range(...) and index arrays with the loop variable",
        "u:",
    )


def test_enumerate_over_an_array():
    def f(u):
        total = 0.0
        for i, x in enumerate(u):  # E:enumerate
            total += x * i
        return total

    check(
        at_decoration(f),
        "# E:enumerate",
        "a for loop needs one loop variable",
        "loop over range(...) and index arrays with the loop variable: for i in range(len(x)): … x[i] …",
        "i, x",
    )


def test_range_with_a_zero_step():
    """A run-time step is taken, of either sign
    (tests/test_range_run_time_step.py); a constant zero one is Python's
    error, at the call."""

    def f(u):
        for i in range(0, len(u), 0):  # E:step
            u[i] = 0.0

    check(at_call(f, np.ones(3)), "# E:step", "range() step must not be zero", None, "0)")


def test_host_call_as_a_statement():
    def f(x):
        print(x)  # E:print
        return x

    check(
        at_call(f, 1.0),
        "# E:print",
        "'print(x)' is not supported in an ordinary function",
        "statements are assignments, element writes u[i] = …, calls of @rv.ordinary functions, "
        "if, for … in range(…) and while",
        "print",
    )


def test_returning_an_array():
    def f(u):
        return u  # E:return-array

    check(
        at_call(f, np.ones(3)),
        "# E:return-array",
        "'u' is an array, not a number; arrays are arguments, updated in place, and cannot be assigned or returned",
        "read and write their elements: u[i]",
        "u  #",
    )


def test_a_while_condition_cannot_call_an_ordinary_function():
    def f(u):
        while norm2(u) > 1.0:  # E:while-call
            u[0] = u[0] * 0.5

    check(
        at_call(f, np.ones(3)),
        "# E:while-call",
        "a while condition cannot call an @rv.ordinary function",
        "compute the value in a variable before the loop and at the end of its body",
        "norm2(",
    )


def test_several_results_in_an_expression():
    def f(u):
        return norm2_and_sum(u) * 2.0  # E:several

    check(
        at_call(f, np.ones(3)),
        "# E:several",
        "norm2_and_sum returns 2 values, not one number",
        "assign them: a, b = norm2_and_sum(u)",
        "norm2_and_sum(",
    )


def test_signature_restrictions():
    def f(x, y=1.0):  # E:default
        return x

    check(at_decoration(f), "# E:default", "ordinary functions do not support default values", None, "def")


def test_the_reversible_form_of_an_ordinary_function_has_no_inverse():
    """Its specialization runs Bennett's form forward only: ``~f`` is a
    reversible function's, and asking for it names the function."""

    @rv.ordinary
    def square(x: float):
        return x * x

    # Refused before its module is copied and inverted: an ordinary
    # function's __invert__ only says why there is no ~f.
    with pytest.raises(TypeError, match=r"^square is not reversible: it has no inverse$"):
        square.specialization_for(3.0).reversible.inverse


# -- an index out of range, named alike by both engines ----------------------------


def store_at(u, k):
    u[k] = 1.0
    return 0.0


def bump_at(u, k):
    u[k] += 1.0
    return 0.0


def add_at(u, k):
    u[k] = u[k] + 1.0
    return 0.0


@pytest.mark.parametrize(
    ("pyfunc", "op", "column"),
    [(store_at, "memref.store", 5), (bump_at, "memref.load", 5), (add_at, "memref.load", 12)],
)
@pytest.mark.parametrize("k", [5, -1])
def test_an_index_out_of_range_is_the_same_error_on_both_engines(pyfunc, op: str, column: int, k: int):
    """A call runs the ordinary IR natively and the Bennett form on the
    interpreter, whose ``rev.take`` carries the op it stands for: the
    store, or the load of an element updated in place, which ordinary code
    runs first.  Both engines name that op (the interpreter said
    ``'rev.take'`` for a store), at its line and column (the load's where
    it is apart from the store: ``u[k] = u[k] + 1.0``), and ``-1`` is out
    of range, not the last element.  The gradient runs the Bennett form
    natively, and names it so too."""
    line = LINES.index(next(s for s in LINES if s.startswith(f"def {pyfunc.__name__}("))) + 2
    expected = (
        f"{HERE}:{line}:{column}: '{op}' in @{pyfunc.__name__}: index {k} is out of bounds for axis 0 with size 3"
    )
    for backend in ("native", "interpreter"):
        f = rv.ordinary(pyfunc, backend=backend)
        for run in (lambda: f(np.zeros(3), k), lambda: rv.gradient(f, (np.zeros(3), k))):
            with pytest.raises(rv.ExecutionError) as caught:
                run()
            assert str(caught.value) == expected, (backend, str(caught.value))
