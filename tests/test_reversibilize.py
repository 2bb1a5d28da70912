"""``reversibilize`` on ordinary programs (tests/reversibilize_programs/).

Each program is run three ways: as the original ``func.func`` code (xDSL's
``scf``/``func`` interpreter over the reference tables of upstream ops), as
its reversible translation (both modes, interpreter and native code), and
written in ``jax.numpy``.  The translation must compute the same results,
its inverse must restore the inputs exactly, and the adjoint of the Bennett
form must give the gradients of central finite differences and of JAX.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.traits import SymbolTable

from revmlir.dialects.rev import FuncOp
from revmlir.interpreter import RevInterpreter
from revmlir.interpreter.memref import MemRefFunctions
from revmlir.interpreter.pure import PureFunctions
from revmlir.interpreter.state import Runtime, RuntimeInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.adjoint import AdAdjointPass
from revmlir.passes.reversibilize import ReversibilizePass
from revmlir.reversibilize import reversibilize
from revmlir.runtime.native import NativeModule
from revmlir.semantics import gradient_type

jax.config.update("jax_enable_x64", True)

PROGRAMS = Path(__file__).parent / "reversibilize_programs"
rng = np.random.default_rng(11)


def _heat_jax(u, tmp, c, steps):
    for _ in range(steps):
        tmp = tmp.at[1:-1].set(u[1:-1] + c * (u[:-2] - 2 * u[1:-1] + u[2:]))
        u = u.at[1:-1].set(tmp[1:-1])
    return jnp.sum(u * u), u, tmp


def _threshold_jax(a, s):
    acc = 0.0
    for i in range(a.shape[0]):
        x = a[i]
        value = jnp.where(x > 0, x * s, x * x)
        a = a.at[i].set(jnp.where(x > 0, x * s, x))
        acc = acc * 0.9 + value
    return acc, a


def _layers_jax(w, x, y, k):
    for _ in range(k):
        y = w @ x
        x = jnp.tanh(y)
    return jnp.sum(x * x), x, y


def _driver_jax(x, y, a):
    y = y + a * x
    d = jnp.dot(x, y)
    x = x + jnp.sin(a) * y
    return d * d + jnp.dot(x, x), x, y


def _halve_jax(x0, a):
    """The while loop as a fixed number of masked iterations (enough for
    x0 < 2**64): JAX cannot reverse a loop whose trip count is data."""
    k = 0.0
    x = x0
    for _ in range(64):
        active = x > 1.0
        x1 = x * 0.5
        a = jnp.where(active, a.at[0].add(x1).at[1].multiply(x1), a)
        x = jnp.where(active, x1, x)
        k = k + jnp.where(active, 1.0, 0.0)
    return x * k, a


@dataclass(frozen=True)
class Program:
    file: str
    entry: str
    make_args: Callable[[], list[Any]]
    jax_function: Callable[..., Any]
    """Returns the result, then the final contents of each written array."""


CASES = {
    "heat": Program("heat.mlir", "heat", lambda: [rng.random(9), np.zeros(9), 0.2, 4], _heat_jax),
    "threshold": Program("threshold.mlir", "threshold", lambda: [rng.normal(size=7), 1.7], _threshold_jax),
    "layers": Program(
        "layers.mlir",
        "layers",
        lambda: [rng.normal(size=(4, 4)) / 2, rng.normal(size=4), np.zeros(4), 3],
        _layers_jax,
    ),
    "calls": Program("calls.mlir", "driver", lambda: [rng.normal(size=5), rng.normal(size=5), 0.7], _driver_jax),
    "while": Program("halve.mlir", "halve", lambda: [13.3, np.array([0.5, 1.5])], _halve_jax),
}


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def source(case: Program) -> str:
    return (PROGRAMS / case.file).read_text()


def run_ordinary(case: Program, args: list[Any]) -> list[Any]:
    """The original program: its result, then every argument as it left it."""
    module = parse_module(source(case), case.file)
    interpreter = RuntimeInterpreter(module, Runtime())
    for functions in (PureFunctions(), MemRefFunctions(), ScfFunctions(), FuncFunctions()):
        interpreter.register_implementations(functions)
    args = copies(args)
    results = interpreter.call_op(case.entry, tuple(args))
    return [*results, *args]


def reversibilized(case: Program, mode: str):
    ctx = make_context()
    module = parse_module(source(case), case.file, ctx)
    ReversibilizePass(mode=mode).apply(ctx, module)
    module.verify()
    return ctx, module


def written(case: Program, args: list[Any]) -> list[int]:
    """Positions of the arrays the original program changes (on these
    arguments) — what the Bennett form must copy out."""
    final = run_ordinary(case, args)[1:]
    return [
        i
        for i, (before, after) in enumerate(zip(args, final))
        if isinstance(before, np.ndarray) and not np.array_equal(before, after)
    ]


def _array_positions(module, case: Program, args: list[Any]) -> list[int]:
    """The argument positions whose output arrays the Bennett form appends
    (each written array, in order): matched by name, ``%a`` → ``%a_out``."""
    function = SymbolTable.lookup_symbol(module, case.entry)
    assert isinstance(function, FuncOp)
    names = [a.name_hint for a in function.body.block.args]
    return [names.index(n.removesuffix("_out")) for n in names[len(args) + 1 :]]


def bennett_arguments(module, case: Program, args: list[Any]) -> list[Any]:
    outputs = [np.zeros_like(args[p]) for p in _array_positions(module, case, args)]
    return [*copies(args), 0.0, *outputs]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("backend", ["interpreter", "native"])
def test_tape_mode_computes_the_original_and_uncall_restores_it(name, backend):
    case = CASES[name]
    args = case.make_args()
    expected = run_ordinary(case, args)
    _, module = reversibilized(case, "tape")
    runner = RevInterpreter(module) if backend == "interpreter" else NativeModule.compile(module)
    function = SymbolTable.lookup_symbol(module, case.entry)
    assert isinstance(function, FuncOp)
    tapes = [[] for _ in function.function_type.inputs.data[len(args) + 1 :]]
    state = [*copies(args), 0.0, *tapes]
    outputs = runner.call(case.entry, *state)
    assert outputs[len(args)] == pytest.approx(expected[0], rel=1e-12)
    for got, want in zip(outputs, expected[1:]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert any(outputs[len(args) + 1 :]), "the program overwrites values, so something was saved"
    restored = runner.uncall(case.entry, *outputs)
    for got, original in zip(restored, args):
        if isinstance(original, np.ndarray):
            # saved values come back exactly, in-place float updates within rounding
            np.testing.assert_allclose(got, original, rtol=1e-14, atol=1e-15)
        else:
            assert got == original
    assert restored[len(args)] == 0.0
    assert not any(restored[len(args) + 1 :])


@pytest.mark.parametrize("name", CASES)
def test_bennett_mode_copies_results_out_and_leaves_inputs(name):
    case = CASES[name]
    args = case.make_args()
    expected = run_ordinary(case, args)
    _, module = reversibilized(case, "bennett")
    state = bennett_arguments(module, case, args)
    outputs = RevInterpreter(module).call(case.entry, *state)
    assert outputs[len(args)] == pytest.approx(expected[0], rel=1e-12)
    for got, original in zip(outputs, args):
        if isinstance(original, np.ndarray):
            np.testing.assert_allclose(got, original, rtol=1e-14, atol=1e-15)
    changed = written(case, args)
    copied_out = dict(zip(_array_positions(module, case, args), outputs[len(args) + 1 :]))
    assert set(changed) <= set(copied_out)
    for position, copy in copied_out.items():
        np.testing.assert_allclose(copy, expected[1 + position], rtol=1e-12)


def _loss_weights(module, case: Program, args: list[Any]) -> list[np.ndarray]:
    """Random cotangents for the output arrays of the Bennett form."""
    state = bennett_arguments(module, case, args)
    return [rng.normal(size=a.shape) for a in state[len(args) + 1 :]]


def bennett_gradient(case: Program, args: list[Any], backend: str):
    """∂(result + Σ weights·outputs)/∂(float arguments) through @f.adj."""
    ctx, module = reversibilized(case, "bennett")
    weights = _loss_weights(module, case, args)
    state = bennett_arguments(module, case, args)
    AdAdjointPass(functions=(case.entry,)).apply(ctx, module)
    runner = RevInterpreter(module) if backend == "interpreter" else NativeModule.compile(module)
    final = list(runner.call(case.entry, *state))
    function = SymbolTable.lookup_symbol(module, case.entry)
    assert isinstance(function, FuncOp)
    seeds: list[Any] = []
    outs = iter(weights)
    for index, type in enumerate(function.function_type.inputs.data):
        if gradient_type(type) is None:
            continue
        if index < len(args):
            seeds.append(np.zeros_like(args[index]) if isinstance(args[index], np.ndarray) else 0.0)
        elif index == len(args):
            seeds.append(1.0)
        else:
            seeds.append(next(outs).copy())
    returned = runner.call(f"{case.entry}.adj", *final, *seeds)
    carriers = [gradient_type(t) is not None for t in function.function_type.inputs.data]
    gradients = [
        returned[len(final) + sum(carriers[:index])]
        for index, arg in enumerate(args)
        if isinstance(arg, np.ndarray | float)
    ]
    return gradients, weights


def _weighted(case: Program, weights, result, arrays) -> float:
    return float(result) + sum(float(np.sum(w * a)) for w, a in zip(weights, arrays))


def _jax_gradient(case: Program, args: list[Any], weights) -> list[Any]:
    floats = [i for i, a in enumerate(args) if isinstance(a, np.ndarray | float)]

    def loss(*values):
        full = list(args)
        for i, v in zip(floats, values):
            full[i] = v
        result, *arrays = case.jax_function(*full)
        return result + sum(jnp.sum(w * a) for w, a in zip(weights, arrays))

    return list(jax.grad(loss, argnums=tuple(range(len(floats))))(*(jnp.asarray(args[i]) for i in floats)))


def _fd_gradient(case: Program, args: list[Any], weights, h: float = 1e-6) -> list[Any]:
    written_positions = written(case, args)

    def loss(values):
        final = run_ordinary(case, values)
        return _weighted(case, weights, final[0], [final[1 + i] for i in written_positions])

    gradients: list[Any] = []
    for i, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            g = np.zeros_like(arg)
            for index in np.ndindex(arg.shape):
                plus, minus = copies(args), copies(args)
                plus[i][index] += h
                minus[i][index] -= h
                g[index] = (loss(plus) - loss(minus)) / (2 * h)
            gradients.append(g)
        elif isinstance(arg, float):
            plus, minus = copies(args), copies(args)
            plus[i] += h
            minus[i] -= h
            gradients.append((loss(plus) - loss(minus)) / (2 * h))
    return gradients


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_finite_differences_and_jax(name):
    case = CASES[name]
    args = case.make_args()
    gradients, weights = bennett_gradient(case, args, "interpreter")
    assert len(weights) == len(written(case, args))
    for got, fd, ref in zip(
        gradients, _fd_gradient(case, args, weights), _jax_gradient(case, args, weights), strict=True
    ):
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["heat", "calls"])
def test_native_gradient_matches_the_interpreter(name):
    """``calls`` passes an array twice (``@dot(%x, %x)``), so its adjoint
    adds to one gradient array through two parameters, which native code
    must then not take as ``noalias``."""
    case = CASES[name]
    args = case.make_args()
    state = rng.bit_generator.state
    interpreted, _ = bennett_gradient(case, args, "interpreter")
    rng.bit_generator.state = state
    native, _ = bennett_gradient(case, args, "native")
    for a, b in zip(interpreted, native, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_reversibilize_returns_the_arrays_each_function_writes():
    """The lowering's array analysis, run once: the Bennett form of each
    function takes an output array for each array it reports written."""
    module = parse_module(source(CASES["calls"]), "calls.mlir")
    assert reversibilize(module, "bennett") == {"axpy": {2}, "dot": set(), "driver": {0, 1}}
    driver = SymbolTable.lookup_symbol(module, "driver")
    assert isinstance(driver, FuncOp)
    assert [a.name_hint for a in driver.body.block.args][4:] == ["x_out", "y_out"]
