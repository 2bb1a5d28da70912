"""Recursion in ``@rv.ordinary`` functions: direct and mutual, over scalars
and over arrays the recursion writes in place, run natively and on the
interpreter and differentiated in store-all mode by every ``rv``
derivative.

Four recursions: ``power``, as deep as an integer says; ``shrink``, as deep
as its data say; ``ping``/``pong``, mutual and writing an array;
``tree``, divide and conquer over halves of an array range, writing one
too.  ``program`` calls them all, so that its derivatives (on the
interpreter) check them at once against JAX's of the same recursion in
``jax.numpy`` (which unrolls under tracing, its depth being a Python
integer: ``shrink``'s is the one its argument gives) and central
differences.  Native code runs ``power`` (its gradient equals the
interpreter's) and ``ping``.  The last sections check that recursion
without end stops with a located error on both engines, and the result
types a recursive call gets and every error about them, located at the
user's line (``# E:name``).

Time: JAX's derivatives are directional (one jitted function); each
derived program is built once per module, and native code is compiled for
``power`` and ``ping`` only, since an entry's reversible form compiles
with it.
"""

import math
from functools import cache
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
import revmlir.interpreter.rev as interpreter_semantics
from revmlir.errors import ExecutionError
from revmlir.safety import RECURSION_TOO_DEEP

jax.config.update("jax_enable_x64", True)

HERE = Path(__file__)
LINES = HERE.read_text().splitlines()
RTOL = 1e-10


# -- the recursions, and the same in jax.numpy -------------------------------------


@rv.ordinary
def power(x, n):
    """Direct recursion as deep as the integer ``n`` (without end for a
    negative one)."""
    r = x
    if n != 0:
        r = math.sin(x) + x * power(x, n - 1)  # E:unbounded
    return r


@rv.ordinary
def shrink(x):
    """As deep as the data say: halve ``x`` until it is small."""
    if x > 0.1:
        y = math.sin(x) + x * shrink(0.5 * x)
    else:
        y = x * x
    return y


@rv.ordinary
def ping(u, x, n):
    """Mutual recursion with ``pong``, both writing ``u`` on the way down."""
    y = x
    if n > 0:
        u[n] = u[n] * x + u[n - 1]
        y = x * pong(u, x + u[n], n - 1)
    return y


@rv.ordinary
def pong(u, x, n):
    y = math.cos(x)
    if n > 0:
        u[n] = u[n] - 0.5 * x * u[n - 1]
        y = y + ping(u, 0.5 * x * x, n - 1)
    return y


@rv.ordinary
def tree(a, out, lo, hi):
    """Divide and conquer: the product of ``1 + a[i]²`` over ``lo…hi - 1``
    from its halves' products, writing ``out`` in every call."""
    if hi - lo == 1:
        out[lo] = math.sin(a[lo])
        p = 1.0 + a[lo] * a[lo]
    else:
        mid = (lo + hi) // 2
        p = tree(a, out, lo, mid) * tree(a, out, mid, hi)
        out[lo] = out[lo] + p
    return p


@rv.ordinary(backend="interpreter")
def program(x, u, a, out, n):
    s = power(x, n) + shrink(x) * ping(u, x, n)
    return s, tree(a, out, 0, len(a))


def power_jax(x, n):
    return x if n == 0 else jnp.sin(x) + x * power_jax(x, n - 1)


def shrink_depth(x: float) -> int:
    return 0 if x <= 0.1 else 1 + shrink_depth(0.5 * x)


def shrink_jax(x, depth):
    return x * x if depth == 0 else jnp.sin(x) + x * shrink_jax(0.5 * x, depth - 1)


def ping_jax(u, x, n):
    if n == 0:
        return x, u
    u = u.at[n].set(u[n] * x + u[n - 1])
    y, u = pong_jax(u, x + u[n], n - 1)
    return x * y, u


def pong_jax(u, x, n):
    if n == 0:
        return jnp.cos(x), u
    u = u.at[n].add(-0.5 * x * u[n - 1])
    y, u = ping_jax(u, 0.5 * x * x, n - 1)
    return jnp.cos(x) + y, u


def tree_jax(a, out, lo, hi):
    if hi - lo == 1:
        return 1.0 + a[lo] * a[lo], out.at[lo].set(jnp.sin(a[lo]))
    mid = (lo + hi) // 2
    left, out = tree_jax(a, out, lo, mid)
    right, out = tree_jax(a, out, mid, hi)
    return left * right, out.at[lo].add(left * right)


X, U, A, N = 0.7, np.array([0.4, -0.3, 0.5]), np.array([0.3, -0.5, 0.8, 1.1]), 2
ARGS = (X, U, A, np.zeros(4), N)
Z = np.concatenate([[X], U, A])
"""The float inputs (x, u, a) in ``rv.jacobian``'s layout."""
V = (0.6, np.array([0.2, -1.0, 0.4]), np.array([0.5, 0.1, -0.3, 0.7]), None, None)
VZ = np.concatenate([[V[0]], V[1], V[2]])
W = (0.3, -1.2, None, np.array([0.1, 0.2, -0.4]), None, np.array([1.0, -0.5, 0.2, 0.3]), None)
"""Cotangents of ``program``'s outputs: its results, then its arguments."""
WZ = np.concatenate([W[:2], W[3], W[5]])


def program_jax(z):
    """``program``'s outputs on ``z``: the two results, ``u`` and ``out``
    as it leaves them."""
    x, u, a = z[0], z[1:4], z[4:]
    m, u = ping_jax(u, x, N)
    t, out = tree_jax(a, jnp.zeros(4), 0, 4)
    s = power_jax(x, N) + shrink_jax(x, shrink_depth(X)) * m
    return jnp.concatenate([jnp.stack([s, t]), u, out])


@rv.ordinary(backend="interpreter")
def curve(x, n):
    """What second derivatives check: direct recursion, and recursion as
    deep as the data say."""
    return power(x, n) * shrink(x)


def curve_jax(x):
    return power_jax(x, N) * shrink_jax(x, shrink_depth(X))


@cache
def reference() -> dict[str, np.ndarray]:
    """JAX's outputs of ``program``, ``J·VZ``, ``WZ·J`` and its first
    result's gradient; ``curve``'s second derivative."""

    @jax.jit
    def derivatives(z):
        outputs, jv = jax.jvp(program_jax, (z,), (VZ,))
        (wj,) = jax.vjp(program_jax, z)[1](WZ)
        gradient = jax.grad(lambda z: program_jax(z)[0])(z)
        return {"outputs": outputs, "jv": jv, "wj": wj, "gradient": gradient, "curve''": jax.hessian(curve_jax)(z[0])}

    return {k: np.asarray(v) for k, v in derivatives(Z).items()}


def floats(found) -> np.ndarray:
    """The entries of ``x``, ``u`` and ``a`` in a per-argument result."""
    return np.concatenate([[found[0]], found[1], found[2]])


def outputs(found) -> np.ndarray:
    """``program``'s outputs (results, then arguments) in ``program_jax``'s layout."""
    return np.concatenate([found[:2], found[3], found[5]])


# -- calls and derivatives ----------------------------------------------------------


def test_program_equals_jax():
    u, out = U.copy(), np.zeros(4)
    s, t = program(X, u, A, out, N)
    np.testing.assert_allclose(np.concatenate([[s, t], u, out]), reference()["outputs"], rtol=1e-13)


def test_gradient_equals_jax_and_central_differences():
    found = rv.gradient(program, ARGS)
    np.testing.assert_allclose(floats(found), reference()["gradient"], rtol=RTOL, atol=1e-13)
    np.testing.assert_array_equal(found[3], 0.0)  # out is written before it is read
    # along VZ (a and out carry none: the first result does not read them)
    h = 1e-6

    def first(z):
        return program(z[0], z[1:4].copy(), z[4:], np.zeros(4), N)[0]

    difference = (first(Z + h * VZ) - first(Z - h * VZ)) / (2 * h)
    assert floats(found) @ VZ == pytest.approx(difference, rel=1e-8)


def test_vjp_equals_jax():
    found, pullback = rv.vjp(program, *ARGS)
    np.testing.assert_allclose(outputs(found), reference()["outputs"], rtol=1e-13)
    np.testing.assert_allclose(floats(pullback(*W)), reference()["wj"], rtol=RTOL, atol=1e-13)


def test_jvp_and_jacobian_equal_jax():
    found, tangents = rv.jvp(program, ARGS, V)
    np.testing.assert_allclose(outputs(found), reference()["outputs"], rtol=1e-13)
    np.testing.assert_allclose(outputs(tangents), reference()["jv"], rtol=RTOL, atol=1e-13)
    jacobian = rv.jacobian(program, ARGS, wrt=(0,), of=(0,), mode="forward")
    assert jacobian[0, 0] == pytest.approx(reference()["gradient"][0], rel=RTOL)


def test_hvp_and_hessian_equal_jax():
    second = reference()["curve''"]
    assert rv.hvp(curve, (X, N), (0.6, None))[0] == pytest.approx(0.6 * second, rel=RTOL)
    assert rv.hessian(curve, (X, N))[0, 0] == pytest.approx(second, rel=RTOL)


def test_native_code_equals_the_interpreter_and_jax():
    """Direct recursion (its gradient too) and mutual recursion writing an
    array, natively."""
    twin = rv.ordinary(power.pyfunc, backend="interpreter")
    assert power(X, N) == pytest.approx(float(power_jax(X, N)), rel=1e-14)
    native, interpreted = rv.gradient(power, (X, N)), rv.gradient(twin, (X, N))
    assert native[0] == pytest.approx(interpreted[0], rel=1e-14) and native[1] == interpreted[1] == 0.0
    u = U.copy()
    y = ping(u, X, N)
    expected_y, expected_u = ping_jax(jnp.asarray(U), X, N)
    assert y == pytest.approx(float(expected_y), rel=1e-14)
    np.testing.assert_allclose(u, expected_u, rtol=1e-14)


def test_integer_and_boolean_results():
    """Inferred from the paths that do not recurse: an integer for
    ``fib``, booleans for the mutual ``even``/``odd``."""
    assert fib(10) == 55 and isinstance(fib(10), int)
    assert even(10) is True and even(7) is False


@rv.ordinary(backend="interpreter")
def fib(n):
    r = n
    if n >= 2:
        r = fib(n - 1) + fib(n - 2)
    return r


@rv.ordinary(backend="interpreter")
def even(n):
    r = True
    if n > 0:
        r = odd(n - 1)
    return r


@rv.ordinary(backend="interpreter")
def odd(n):
    """Every path calls ``even``: its types come from ``even``'s base case."""
    return not even(n)


# -- recursion without end ----------------------------------------------------------


def check_unbounded(error: ExecutionError) -> None:
    """Located at the recursive call of ``power``, named as the call in
    ``@power`` on every engine (the interpreter runs ``@power.tape``)."""
    line = LINES.index(next(s for s in LINES if s.endswith("# E:unbounded"))) + 1
    column = LINES[line - 1].index("power(") + 1
    assert f"{HERE}:{line}:{column}: 'func.call' in @power: " in str(error), str(error)
    assert RECURSION_TOO_DEEP in str(error)


def test_unbounded_recursion_stops_natively():
    """In the call and in the gradient, whose tape grows on the way."""
    for run in (lambda: power(1.0, -1), lambda: rv.gradient(power, (1.0, -1))):
        with pytest.raises(ExecutionError) as caught:
            run()
        check_unbounded(caught.value)


def test_unbounded_recursion_stops_on_the_interpreter(monkeypatch):
    """At the interpreter's depth, made small here, as on the native
    engine's stack."""
    monkeypatch.setattr(interpreter_semantics, "MAX_CALL_DEPTH", 100)
    unbounded = (X, U.copy(), A, np.zeros(4), -1)
    for run in (lambda: program(*unbounded), lambda: rv.gradient(program, unbounded)):
        with pytest.raises(ExecutionError) as caught:
            run()
        check_unbounded(caught.value)


# -- result types and their errors ----------------------------------------------------


def check(error: BaseException, marker: str, message: str, hint: str, at: str) -> None:
    """A ReversibleSyntaxError at this file, the marked line and the column
    of ``at``, with exactly this message and hint."""
    assert isinstance(error, rv.ReversibleSyntaxError), repr(error)
    assert error.filename == str(HERE)
    assert error.lineno == LINES.index(next(s for s in LINES if s.endswith(marker))) + 1, str(error)
    assert error.offset == LINES[error.lineno - 1].index(at) + 1, str(error)
    assert (error.reason, error.hint) == (message, hint), str(error)


def at_call(function, *args) -> BaseException:
    with pytest.raises(rv.ReversibleSyntaxError) as caught:
        function(*args)
    return caught.value


ANNOTATIONS = "-> float, -> int, -> bool, -> tuple[float, int] or -> None"


def test_declared_result_types():
    """A return annotation gives them, and an integer returned where a
    float is declared is promoted, as for a parameter."""

    @rv.ordinary(backend="interpreter")
    def count(n) -> float:
        return n

    assert count(3) == 3.0 and isinstance(count(3), float)

    @rv.ordinary(backend="interpreter")
    def halvings(x, n) -> tuple[float, int]:
        a, b = x, 0
        if n > 0:
            a, b = halvings(0.5 * x, n - 1)
            b += 1
        return a, b

    assert halvings(1.0, 3) == (0.125, 3)

    @rv.ordinary(backend="interpreter")
    def fill(u, i) -> None:
        if i < len(u):
            u[i] = 2.0 * i
            fill(u, i + 1)

    u = np.zeros(3)
    assert fill(u, 0) is None
    np.testing.assert_array_equal(u, [0.0, 2.0, 4.0])


def test_index_results_and_annotations_that_only_fix_or_document_types():
    """A recursion returning an index (``len``) returns it as an ``int``
    on every path; a return annotation converts a float of another width
    or only document a type (numpy's scalar
    types), in functions that do not recurse too."""

    @rv.ordinary(backend="interpreter")
    def depth(u, n):
        d = len(u)
        if n > 0:
            d = depth(u, n - 1) + 1
        return d

    assert depth(np.zeros(4), 3) == 7

    @rv.ordinary(backend="interpreter")
    def narrow(x) -> float:
        return x[0] * 2.0

    assert narrow(np.array([1.5], dtype=np.float32)) == 3.0

    @rv.ordinary(backend="interpreter")
    def documented(x) -> np.float64:
        return x * 2.0

    assert documented(1.5) == 3.0


def test_every_path_recurses():
    @rv.ordinary
    def endless(x):
        y = endless(0.5 * x)  # E:every-path
        return y

    check(
        at_call(endless, 1.0),
        "# E:every-path",
        "the result types of endless are needed at this call before any return of endless fixes them: "
        "every path to its return calls endless",
        f"declare them with a return annotation: {ANNOTATIONS}",
        "endless(0.5",
    )


def test_result_types_that_never_settle_are_an_internal_error(monkeypatch):
    """The compiles of a recursive function go on while its results'
    types or weakness change; where they would not settle (here made to:
    every compile says the opposite weakness, for 40 compiles), that stops
    after a few with a located error naming the function, not a compile
    without end."""
    from revmlir.frontend.ordinary_code.compiler import ModuleCompiler

    compile_once, compiles = ModuleCompiler._compile, []

    def flipping(self, key, function, name, types, declared):
        compiled, unknown, weak = compile_once(self, key, function, name, types, declared)
        compiles.append(name)
        if function.__name__ == "flips" and len(compiles) < 40:
            weak = (len(compiles) % 2 == 0,) * len(weak)
        return compiled, unknown, weak

    monkeypatch.setattr(ModuleCompiler, "_compile", flipping)

    @rv.ordinary(backend="interpreter")
    def flips(n):
        total = 0.0
        if n > 0:
            total = flips(n - 1) + 1.0
        return total

    @rv.ordinary(backend="interpreter")
    def calls_flips(n):
        return flips(n)  # E:settle

    check(
        at_call(calls_flips, 3),
        "# E:settle",
        "internal compiler error: the result types of flips did not settle after 3 compiles (the last returned float)",
        f"please report it; declaring them with a return annotation avoids this: {ANNOTATIONS}",
        "flips(n)",
    )
    assert compiles.count("flips") == 3


def test_declared_result_types_differ_from_the_returned():
    @rv.ordinary
    def count(x, n) -> int:
        r = x
        if n > 0:
            r = count(x, n - 1) * x
        return r  # E:declared

    check(
        at_call(count, 1.0, 2),
        "# E:declared",
        "count is declared to return int64 but returns float",
        "return values of the declared types, or change the annotation",
        "return r",
    )


def test_a_return_annotation_without_result_types():
    @rv.ordinary
    def listed(x) -> list:  # E:annotation
        return x

    check(
        at_call(listed, 1.0),
        "# E:annotation",
        "the return annotation 'list' does not give the result types",
        f"annotate {ANNOTATIONS}, or leave the return unannotated",
        "list:",
    )


@rv.ordinary(backend="interpreter")
def _one_after_another(x, n):
    a = 0.0
    b = 0.0
    if n > 0:
        p, q = _one_after_another(x, n - 1)
        a = p + x[n - 1]
        b = q + p
    return a, b


def test_results_settle_one_after_another_within_the_bound(monkeypatch):
    """The longest way a recursion's result types settle: the probe returns
    two weak ``0.0``; the next compile makes ``a`` a float32 (``p`` is
    still weak there, so ``b`` is too), the one after ``b`` (now ``q + p``
    of a float32 ``p``), and a fourth confirms them: two changes, one
    compile each, the most ``_settling_compiles`` allows for two results,
    and no internal error."""
    from revmlir.frontend.ordinary_code.compiler import ModuleCompiler

    compile_once, compiles = ModuleCompiler._compile, []

    def counting(self, key, function, name, types, declared):
        compiles.append(function.__name__)
        return compile_once(self, key, function, name, types, declared)

    monkeypatch.setattr(ModuleCompiler, "_compile", counting)
    x = np.array([1.5, 2.25, 0.5], dtype=np.float32)
    a, b = _one_after_another(x, 3)
    assert compiles == ["_one_after_another"] * 4
    assert [t.bitwidth for t in _one_after_another.specialization_for(x, 3).result_types] == [32, 32]
    pa, pb = np.float32(0.0), np.float32(0.0)
    for n in range(1, 4):
        pa, pb = pa + x[n - 1], pb + pa
    assert (a, b) == (float(pa), float(pb))


def test_a_recursive_call_takes_the_weakness_of_each_of_its_results():
    """``ModuleCompiler.weak`` says it for every result: weakness given
    for fewer results than the call has is a mistake in the compiler,
    refused, not read as the first results' alone."""
    from xdsl.dialects.builtin import f64

    from revmlir.frontend.ordinary_code.compiler import OrdinaryBuilder

    builder = OrdinaryBuilder("f", [("x", f64)])
    with pytest.raises(ValueError, match="zip"):
        builder.call("g", [builder.current_block.args[0]], [f64, f64], weak=(True,))


# -- base cases assigned in a branch ------------------------------------------------
#
# Without a return annotation the first compile builds only the branch
# that does not recurse, and the names it assigns are read after the
# ``if`` (``OrdinaryBuilder.continue_with``).


@rv.ordinary
def fib_branches(n):
    if n < 2:
        r = n + 0
    else:
        r = fib_branches(n - 1) + fib_branches(n - 2)
    return r * 1


@rv.ordinary
def damped(x, n):
    if n <= 0:
        y = x * 1.0
    else:
        y = math.sin(x) + x * damped(x, n - 1)
    return y * 1.0


@rv.ordinary
def squares(v, i):
    if i >= v.shape[0]:
        t = 0.0
    else:
        t = v[i] * v[i] + squares(v, i + 1)
    return t * 1.0


def damped_plain(x: float, n: int) -> float:
    return x if n <= 0 else math.sin(x) + x * damped_plain(x, n - 1)


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_a_base_case_assigned_in_a_branch(backend: str):
    """An integer, a float and an array-reading recursion, with gradients
    against central differences and the sum of squares' own."""
    fib, curve, sums = (rv.ordinary(f.pyfunc, backend=backend) for f in (fib_branches, damped, squares))
    assert fib(10) == 55 and isinstance(fib(10), int)
    assert curve(X, 3) == pytest.approx(damped_plain(X, 3), rel=1e-14)
    h = 1e-6
    slope = (damped_plain(X + h, 3) - damped_plain(X - h, 3)) / (2 * h)
    assert rv.gradient(curve, (X, 3))[0] == pytest.approx(slope, rel=1e-8)
    assert sums(A, 0) == pytest.approx(float(A @ A), rel=1e-14)
    np.testing.assert_allclose(rv.gradient(sums, (A, 0))[0], 2 * A, rtol=1e-14)
