"""``rv.to_jax`` through XLA FFI custom calls: the same results and
derivatives as the callback path and as JAX's own math, revmlir's located
errors for failed checks, and clean errors for buffers the handler does
not take."""

from __future__ import annotations

import gc
import inspect
import os
import re
import subprocess
import sys
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import revmlir as rv
from interop_programs import affine, affine_reference, diffuse, energy, energy_reference, leaky, relax, relax_reference
from jax_checks import close, loss
from revmlir.interop import python_ffi

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(11)
X = jnp.asarray(rng.normal(size=4))
W = jnp.asarray(rng.normal(size=(3, 4)))
B = jnp.asarray(rng.normal(size=3))

energy_jax = partial(energy_reference, jnp)
affine_jax = partial(affine_reference, jnp)


def targets(jitted, *args) -> set[str]:
    """The custom-call targets of a jitted function's lowering."""
    return set(re.findall(r"custom_call @([\w.]+)", jitted.lower(*args).as_text()))


def test_transformations_match_the_callback_and_jax():
    """jit, grad, jvp and vmap of grad through the custom calls agree with
    JAX's own math and with the callback (``tests/test_interop_jax.py``
    runs the rest of JAX's transformations through them too)."""
    ffi, callback = rv.to_jax(energy, "ffi"), rv.to_jax(energy, "callback")
    xs = jnp.asarray(rng.normal(size=(3, 4)))
    ws = jnp.linspace(0.5, 1.0, 3)
    tangents = (jnp.asarray(rng.normal(size=4)), 0.3)

    def transformations(f, jit):
        return {
            "call": jit(f)(0.25, X, 1.5),
            "grad": jit(jax.vmap(jax.grad(loss(f), argnums=(0, 1))))(xs, ws),
            "jvp": jit(lambda x, w, dx, dw: jax.jvp(loss(f), (x, w), (dx, dw)))(X, 1.5, *tangents),
        }

    found = transformations(ffi, jax.jit)
    close(found, transformations(energy_jax, lambda f: f))
    close(found, transformations(callback, jax.jit))


def test_an_array_written_in_place():
    """``affine`` writes ``y``, which runs in its aliased result buffer;
    the caller's array is left alone."""
    y = jnp.asarray(rng.normal(size=3))
    before = np.array(y)
    close(jax.jit(rv.to_jax(affine, "ffi"))(y, W, B, X), affine_jax(y, W, B, X))
    np.testing.assert_array_equal(y, before)


@rv.reversible
def subtract_squares(y, x, flip):
    for i in range(len(x)):
        if flip:
            y[i] -= x[i] * x[i]


@rv.reversible
def count(n, a):
    for i in range(len(a)):
        n[0] += a[i]


def test_float32_int32_and_bool_buffers():
    """The handler passes every dtype ``rv.to_jax`` takes: float32 arrays
    (and their gradients), int32 arrays, bool scalars."""
    y, x = jnp.zeros(3, jnp.float32), jnp.arange(3, dtype=jnp.float32)
    f = jax.jit(rv.to_jax(subtract_squares, "ffi"))
    found = f(y, x, True)
    assert [v.dtype for v in found] == [jnp.float32, jnp.float32, jnp.bool_]
    np.testing.assert_array_equal(found[0], -x * x)
    np.testing.assert_array_equal(f(y, x, False)[0], y)
    grad = jax.jit(jax.grad(lambda x: jnp.sum(rv.to_jax(subtract_squares, "ffi")(y, x, True)[0])))
    np.testing.assert_allclose(grad(x), -2 * x, rtol=1e-6)
    a = jnp.arange(5, dtype=jnp.int32)
    n, _ = jax.jit(rv.to_jax(count, "ffi"))(jnp.zeros(1, jnp.int32), a)
    assert n.dtype == jnp.int32 and int(n[0]) == 10


def test_lowered_to_custom_calls_not_callbacks():
    grad = jax.jit(jax.grad(loss(rv.to_jax(energy)), argnums=(0, 1)))
    found = targets(grad, X, 1.5)
    assert any(t.startswith("revmlir_energy_") for t in found)
    assert any(t.startswith("revmlir_energy.adj_") for t in found)
    assert not any("callback" in t for t in found), found
    # the callback: a custom call of a handler in Python (``revmlir.interop.python_ffi``)
    found = targets(jax.jit(rv.to_jax(energy, "callback")), 0.0, X, 1.5)
    assert found and all(t.startswith("revmlir_python_") for t in found), found


def test_a_failed_check_raises_revmlir_located_error():
    """Both paths report the error of the eager call, with its location."""
    with pytest.raises(rv.InvertibilityError) as eager:
        rv.to_jax(leaky)(0.0, 2.0)
    message = str(eager.value)
    assert re.search(r"interop_programs.py:\d+", message)
    for lowering in ("ffi", "callback"):
        with pytest.raises(jax.errors.JaxRuntimeError) as raised:
            jax.jit(rv.to_jax(leaky, lowering))(0.0, 2.0)
        assert message in str(raised.value)
        assert "InvertibilityError" in str(raised.value)


def test_both_paths_raise_the_same_error_and_print_nothing(capfd: pytest.CaptureFixture[str]):
    """A failed check reads the same through the native custom call, the
    callback and a function on the interpreter: JAX's error holding
    revmlir's located message alone, with nothing on stderr (the callback
    was ``jax.pure_callback``, whose error was ``INTERNAL: CpuCallback
    error calling callback:`` and a traceback, which JAX logged too)."""
    with pytest.raises(rv.InvertibilityError) as eager:
        rv.to_jax(leaky)(0.0, 2.0)
    interpreted = rv.reversible(backend="interpreter")(leaky.pyfunc)
    with pytest.raises(rv.InvertibilityError) as on_the_interpreter:
        rv.to_jax(interpreted)(0.0, 2.0)
    assert str(on_the_interpreter.value) == str(eager.value)
    found = []
    for function in (rv.to_jax(leaky, "ffi"), rv.to_jax(leaky, "callback"), rv.to_jax(interpreted)):
        with pytest.raises(jax.errors.JaxRuntimeError) as raised:
            jax.jit(function)(0.0, 2.0)
        found.append(str(raised.value))
    assert found == [f"UNKNOWN: InvertibilityError: {eager.value}"] * 3
    assert capfd.readouterr().err == ""


def test_buffers_the_handler_does_not_take():
    """A custom call of the handler with buffers of the wrong dtype, rank,
    count or shape is an FFI error, not a crash."""
    y = jnp.zeros(3)
    (name,) = targets(jax.jit(rv.to_jax(affine, "ffi")), y, W, B, X)
    call = partial(jax.ffi.ffi_call, name)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"argument #1 must be a buffer of float64 of rank 2"):
        jax.jit(call(jax.ShapeDtypeStruct((3,), jnp.float64)))(y, W.astype(jnp.float32), B, X)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"argument #3 must be a buffer of float64 of rank 1"):
        jax.jit(call(jax.ShapeDtypeStruct((3,), jnp.float64)))(y, W, B, W)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"the custom call takes 4 arguments"):
        jax.jit(call(jax.ShapeDtypeStruct((3,), jnp.float64)))(y, W, B)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"the custom call takes 1 results"):
        jax.jit(call([jax.ShapeDtypeStruct((3,), jnp.float64)] * 2))(y, W, B, X)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"result #0 must have the shape of argument #0"):
        jax.jit(call(jax.ShapeDtypeStruct((5,), jnp.float64)))(y, W, B, X)
    # the batched handler of vmap over y and x: every batched buffer has the batch size of the first
    ys, xs = jnp.zeros((2, 3)), jnp.zeros((2, 4))
    (name,) = targets(jax.jit(jax.vmap(rv.to_jax(affine, "ffi"), in_axes=(0, None, None, 0))), ys, W, B, xs)
    batched = jax.ffi.ffi_call(name, jax.ShapeDtypeStruct((2, 3), jnp.float64))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"argument #3 must have the batch size of argument #0"):
        jax.jit(batched)(ys, W, B, jnp.zeros((5, 4)))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"argument #3 must be a buffer of float64 of rank 2"):
        jax.jit(batched)(ys, W, B, X)


def test_ordinary_functions():
    """An ordinary function's call runs its plain code in a custom call:
    its results, then its arguments as it left them (``u`` written in its
    aliased result buffer); its derivatives run its Bennett form's tangent
    and adjoint programs.  A checkpointed gradient takes the callback."""
    u = jnp.asarray(rng.normal(size=5))
    f = rv.to_jax(relax, "ffi")
    call = jax.jit(f, static_argnums=2)
    found = call(u, 0.5, 3)
    assert [v.dtype for v in found] == [jnp.float64, jnp.float64, jnp.float64, jnp.float64, jnp.int64]
    close(found, relax_reference(jnp, u, 0.5, 3))
    close(found, jax.jit(rv.to_jax(relax, "callback"), static_argnums=2)(u, 0.5, 3))
    assert any(t.startswith("revmlir_relax.plain_") for t in targets(call, u, 0.5, 3))
    for k in (0, 2):
        grad = jax.jit(jax.grad(lambda u, c, k=k: jnp.sum(f(u, c, 2)[k]), argnums=(0, 1)))
        close(
            grad(u, 0.5), jax.grad(lambda u, c, k=k: jnp.sum(relax_reference(jnp, u, c, 2)[k]), argnums=(0, 1))(u, 0.5)
        )
    tangent = jax.jit(lambda u: jax.jvp(lambda u: f(u, 0.5, 2)[:3], (u,), (u,)))
    close(tangent(u), jax.jvp(lambda u: relax_reference(jnp, u, 0.5, 2)[:3], (u,), (u,)))
    g = rv.to_jax(diffuse, "ffi")
    with pytest.raises(
        NotImplementedError,
        match=r"rv.to_jax\(diffuse, lowering='ffi'\): no custom call, the gradient of a checkpointed",
    ):
        jax.jit(jax.grad(lambda u: g(u, jnp.zeros(5), 0.2, 4)[0]))(u)


def test_where_the_custom_call_does_not_apply():
    """The interpreter backend takes the callback; ``lowering="ffi"`` says
    why it cannot."""
    interpreted = rv.reversible(energy.pyfunc, backend="interpreter")
    close(jax.jit(rv.to_jax(interpreted))(0.25, X, 1.5), energy_jax(0.25, X, 1.5))
    with pytest.raises(NotImplementedError, match=r"no custom call, it runs on the interpreter"):
        jax.jit(rv.to_jax(interpreted, "ffi"))(0.25, X, 1.5)
    with pytest.raises(ValueError, match=r"rv.to_jax: lowering must be one of auto, ffi, callback, got 'xla'"):
        rv.to_jax(energy, "xla")
    with pytest.raises(NotImplementedError, match=r"no custom call, argument 'w' is ULog in revmlir, which the custom"):
        jax.jit(rv.to_jax(logarithmic, "ffi"))(0.0, 2.0)


@rv.reversible
def logarithmic(y, w: rv.ULog):
    """Takes a log number, which no buffer holds (its type said as Python
    writes it)."""
    y += float(w)


def test_batches_run_in_one_custom_call():
    """``jacrev``, ``jacfwd`` and ``vmap`` run one custom call of a batched
    handler, which loops over the rows (no ``lax.map`` of a custom call per
    row), and agree with JAX's own transformations of the same math."""
    xs = jnp.asarray(rng.normal(size=(5, 4)))
    ys = jnp.asarray(rng.normal(size=(5, 3)))

    def transformations(f, g):
        # e and x after the call: a Jacobian of 5 rows
        outputs = lambda x, w: f(0.25, x, w)[:2]  # noqa: E731
        return {
            "jacrev": jax.jit(jax.jacrev(outputs, argnums=(0, 1)))(X, 1.5),
            "jacfwd": jax.jit(jax.jacfwd(outputs, argnums=(0, 1)))(X, 1.5),
            "vmap of jacrev": jax.jit(jax.vmap(jax.jacrev(outputs), in_axes=(0, None)))(xs, 1.5),
            "vmap": jax.jit(jax.vmap(g, in_axes=(0, None, None, 0)))(ys, W, B, xs),
        }

    found = transformations(rv.to_jax(energy, "ffi"), rv.to_jax(affine, "ffi"))
    close(found, transformations(energy_jax, affine_jax))
    jacrev = jax.jit(jax.jacrev(lambda x: rv.to_jax(energy, "ffi")(0.25, x, 1.5)[:2]))
    lowered = jacrev.lower(X).as_text()
    assert "stablehlo.while" not in lowered
    assert len(re.findall(r"custom_call @revmlir_energy.adj_", lowered)) == 1


def test_each_row_of_an_ordinary_functions_batch_starts_from_zero_results():
    """The result slots of an ordinary function's run start at zero in every
    row of a batch: they were zeroed once, so the tangents of its results
    accumulated over the rows of ``jacfwd`` (row k got the sum of rows 0…k)."""
    u = jnp.asarray(rng.normal(size=5))
    outputs = [lambda u, c, f=f: f(u, c, 2)[:2] for f in (rv.to_jax(relax, "ffi"), partial(relax_reference, jnp))]
    jacobians = [jax.jit(jax.jacfwd(g, argnums=(0, 1)))(u, 0.5) for g in outputs]
    close(jacobians[0], jacobians[1])
    directions = jnp.asarray(rng.normal(size=(3, 5)))
    slopes = [
        jax.jit(jax.vmap(lambda d, g=g: jax.jvp(lambda u: g(u, 0.5), (u,), (d,))[1]))(directions) for g in outputs
    ]
    close(slopes[0], slopes[1])


def test_a_failed_check_in_a_batch():
    """A row whose check fails stops the batch with revmlir's located
    error; rows that pass run as one call."""
    with pytest.raises(rv.InvertibilityError) as eager:
        rv.to_jax(leaky)(0.0, 2.0)
    f = jax.jit(jax.vmap(rv.to_jax(leaky, "ffi")))
    close(f(jnp.ones(4), jnp.zeros(4)), (jnp.ones(4), jnp.zeros(4)))
    # JAX raises a custom call's error as a ValueError once the function is
    # compiled (its C++ dispatch), as a JaxRuntimeError at the first call
    with pytest.raises((jax.errors.JaxRuntimeError, ValueError)) as raised:
        f(jnp.zeros(4), jnp.asarray([0.0, 0.0, 2.0, 0.0]))
    assert str(eager.value) in str(raised.value)


def test_a_python_handler_is_registered_once_for_every_batch_size():
    """The Python handler reads the batch size from its buffers: ``vmap``
    over five sizes registers one handler, and each size is right."""
    g = rv.to_jax(energy, "callback")
    before = len(python_ffi._handlers)
    for n in range(1, 6):
        xs = jnp.asarray(rng.normal(size=(n, 4)))
        found = jax.jit(jax.vmap(g, in_axes=(None, 0, None)))(0.25, xs, 1.5)
        close(found, jax.vmap(energy_jax, in_axes=(None, 0, None))(0.25, xs, 1.5))
    assert len(python_ffi._handlers) == before + 1


def test_a_kept_computation_outlives_what_made_it():
    """XLA calls a Python handler as long as a compiled computation names
    it, which the user may keep after the function, its ``rv.to_jax`` and
    JAX's caches are gone: the handler keeps what it runs (it answered
    that the function was deleted)."""

    @rv.reversible
    def scaled(y, x):
        y += 2.0 * x

    g = rv.to_jax(scaled, "callback")
    compiled = jax.jit(g).lower(0.25, 1.5).compile()
    assert float(compiled(0.25, 1.5)[0]) == 3.25
    del g, scaled
    jax.clear_caches()
    gc.collect()
    assert float(compiled(0.5, 2.0)[0]) == 4.5


def test_a_message_not_in_utf_8_crosses_a_python_handler(tmp_path: Path):
    """A failed check's message naming a file whose path is not UTF-8
    (a surrogate escape) is the handler's FFI error, escaped, instead of an
    exception in the ctypes callback, which ended the process."""
    directory = os.fsdecode(bytes(tmp_path) + b"/d\xff")
    os.mkdir(directory)
    Path(directory, "leaking.py").write_text("import revmlir as rv\n\n\n" + inspect.getsource(leaky.pyfunc))
    script = (
        "import sys, jax, revmlir as rv\n"
        f"sys.path.insert(0, {directory!r})\n"
        "from leaking import leaky\n"
        "try:\n"
        "    jax.jit(rv.to_jax(leaky, 'callback'))(0.0, 2.0)\n"
        "except jax.errors.JaxRuntimeError as error:\n"
        "    print(error)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "UNKNOWN: InvertibilityError: " in run.stdout and "d\\udcff" in run.stdout


def test_an_error_that_cannot_be_told_is_the_handlers_fixed_error():
    """An exception whose message cannot be formatted is still an FFI
    error (a fixed one), not an exception escaping the ctypes callback."""

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no message")

    class Owner:
        pass

    def run(owner: Owner, arguments: list[np.ndarray], results: list[np.ndarray]) -> list[np.ndarray]:
        raise Unprintable

    owner = Owner()
    result = jax.ShapeDtypeStruct((), jnp.float64)
    called = jax.jit(lambda x: python_ffi.call(owner, "unprintable", run, [result], x))
    with pytest.raises(jax.errors.JaxRuntimeError, match=f"UNKNOWN: {python_ffi.FAILED}"):
        called(1.0)
