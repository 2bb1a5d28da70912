"""Checkpointed gradients (``ad-checkpoint``): a loop marked with a schedule
gives the store-all gradient (``ad-adjoint`` over the taped loop) and JAX's,
under every schedule, on the interpreter and natively, while the steps it
runs and the snapshots it holds are what the schedule's own simulation
(``stats()``) says."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.traits import SymbolTable

from revmlir.checkpoint import ScheduleError, binomial, bisection, online, store_all
from revmlir.checkpoint.table import Entry, encode, replay
from revmlir.dialects import rev
from revmlir.dialects.ad import ScheduleAttr
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.adjoint import AdAdjointPass
from revmlir.passes.checkpoint import AdCheckpointPass
from revmlir.passes.reversibilize import ReversibilizePass
from revmlir.runtime.native import NativeModule

jax.config.update("jax_enable_x64", True)

PROGRAMS = Path(__file__).parent / "checkpoint_programs"
STEPS = {"recurrence": 6, "heat": 5}
SCHEDULES = {
    "store_all": (ScheduleAttr("store_all"), store_all),
    "bisection": (ScheduleAttr("bisection"), bisection),
    **{f"binomial{s}": (ScheduleAttr("binomial", s), lambda n, s=s: binomial(n, s)) for s in (1, 2, 3)},
}
rng = np.random.default_rng(5)


def module_for(program: str, schedule: ScheduleAttr) -> ModuleOp:
    """The program as rev code (heat through reversibilize{mode=tape}) with
    its time loop marked, plus @f.ckpt and the store-all @f.adj."""
    ctx = make_context()
    module = parse_module((PROGRAMS / f"{program}.mlir").read_text(), program, ctx)
    if program == "heat":
        ReversibilizePass(mode="tape").apply(ctx, module)
    function = SymbolTable.lookup_symbol(module, program)
    assert isinstance(function, rev.FuncOp)
    (loop,) = [op for op in function.body.block.ops if isinstance(op, rev.ForOp)][:1]
    loop.attributes["checkpoint"] = schedule
    AdCheckpointPass(functions=(program,)).apply(ctx, module)
    AdAdjointPass(functions=(program,)).apply(ctx, module)
    module.verify()
    return module


def arguments(program: str) -> list:
    if program == "heat":
        return [rng.random(9), np.zeros(9), 0.2, 0.0, []]
    return [0.4 + rng.random(), 0.7, []]


def seeds(program: str, tape: list) -> list:
    """Output gradients: the loss is the scalar result (heat) or x (recurrence)."""
    if program == "heat":
        return [np.zeros(9), np.zeros(9), 0.0, 1.0, [0.0] * len(tape)]
    return [1.0, 0.0, [0.0] * len(tape)]


def copies(values: list) -> list:
    return [v.copy() if isinstance(v, np.ndarray | list) else v for v in values]


def checkpointed(runner, program: str, args: list) -> list:
    """Input gradients from @f.ckpt: scalars returned, arrays in place."""
    grads = seeds(program, [])
    returned = runner.call(f"{program}.ckpt", *copies(args), *grads)
    return _gradients(program, returned, grads)


def store_all_gradient(runner, program: str, args: list) -> list:
    outputs = runner.call(program, *copies(args))
    grads = seeds(program, outputs[-1])
    returned = runner.call(f"{program}.adj", *outputs, *grads)
    return _gradients(program, returned, grads)


def _gradients(program: str, returned, grads) -> list:
    """Calls return every argument: the inputs, then the gradients."""
    gradients = returned[len(grads) :]
    if program == "heat":
        return [grads[0], grads[1], gradients[2]]  # ∂/∂u, ∂/∂tmp (in place), ∂/∂c
    return list(gradients[:2])  # ∂/∂x, ∂/∂a


def jax_gradient(program: str, args: list) -> list:
    if program == "heat":

        def loss(u, tmp, c):
            for _ in range(STEPS["heat"]):
                tmp = tmp.at[1:-1].set(u[1:-1] + c * (u[:-2] - 2 * u[1:-1] + u[2:]))
                u = u.at[1:-1].set(tmp[1:-1])
            return jnp.sum(u * u)

        return list(jax.grad(loss, argnums=(0, 1, 2))(*map(jnp.asarray, args[:3])))

    def recurrence(x, a):
        for _ in range(STEPS["recurrence"]):
            x = x + a * jnp.sin(x)
        return x

    return list(jax.grad(recurrence, argnums=(0, 1))(args[0], args[1]))


@pytest.mark.parametrize("program", STEPS)
@pytest.mark.parametrize("name", SCHEDULES)
def test_gradient_equals_store_all_and_jax_and_counts_match_the_schedule(program, name):
    attr, make = SCHEDULES[name]
    module = module_for(program, attr)
    args = arguments(program)
    runner = RevInterpreter(module)
    got = checkpointed(runner, program, args)
    step = f"{program}.ckpt.step0"
    schedule = make(STEPS[program])
    stats = schedule.stats()
    counters = runner.counters
    assert counters[f"{step}.adj"].calls == stats["taped"] == STEPS[program]
    assert counters[step].calls == stats["taped"]  # plain steps run the untaped copy
    assert counters[f"{step}.plain"].calls == stats["plain"]
    assert runner.peak_snapshots == stats["peak"]
    if attr.snapshots.data:
        assert runner.peak_snapshots <= attr.snapshots.data
    assert runner.runtime.live_snapshots == 0
    reference = store_all_gradient(runner, program, args)
    for a, b, c in zip(got, reference, jax_gradient(program, args), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("program", STEPS)
def test_native_gradient_equals_the_interpreter(program):
    module = module_for(program, SCHEDULES["binomial2"][0])
    args = arguments(program)
    native = checkpointed(NativeModule.compile(module), program, args)
    interpreted = checkpointed(RevInterpreter(module), program, args)
    for a, b in zip(native, interpreted, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("steps", [1, 2, 7, 30])
@pytest.mark.parametrize("make", [store_all, bisection, lambda n: binomial(n, 3)])
def test_tables_replay_to_the_schedules_stats(steps, make):
    schedule = make(steps)
    table = encode(schedule)
    assert replay(table).as_dict() == schedule.stats()
    assert sum(kind == Entry.PLAIN for kind, _ in table) == schedule.stats()["plain"]


def test_tables_must_be_nested_and_valid():
    with pytest.raises(ScheduleError, match="latest snapshot"):
        encode(online(6).realize(40))
    table = encode(bisection(4))
    with pytest.raises(ScheduleError):
        replay(table[1:])
