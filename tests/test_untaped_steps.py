"""Plain steps of checkpointed gradients run the step's untaped copy
(``revmlir.ad.untaped``): no push is left in it or in the copies of its
callees, its state is the taped step's, and the gradient is store-all's in
the interpreter and in native code; steps that read a tape back keep the
taped step."""

import numpy as np
import pytest

from revmlir.ad.untaped import untaped_copy
from revmlir.checkpoint import binomial, bisection
from revmlir.dialects import anc, rev
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.adjoint import AdAdjointPass
from revmlir.passes.checkpoint import AdCheckpointPass
from revmlir.runtime.native import NativeModule

STEPS = 9

SWEEP = """
rev.func @relax(%u: memref<4xf64>, %c: f64, %tape: !anc.stack<f64>, %itape: !anc.stack<index>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  rev.for %c0 to %c3 step %c1 : index () {
  ^bb0(%k: index):
    %a = memref.load %u[%k] : memref<4xf64>
    %k1 = arith.addi %k, %c1 : index
    %b = memref.load %u[%k1] : memref<4xf64>
    %d = arith.subf %b, %a : f64
    %e = arith.mulf %c, %d : f64
    %s = math.sin %e : f64
    %n = arith.addf %a, %s : f64
    %z = anc.alloc %n : f64
    %old = rev.take %u[%k] : memref<4xf64>
    anc.push %tape, %old : !anc.stack<f64>
    rev.put %z, %u[%k] : memref<4xf64>
    %kk = anc.alloc %k : index
    anc.copy_push %itape, %kk : !anc.stack<index>
    anc.free %kk, %k : index
    rev.yield
  }
  rev.return %c : f64
}

rev.func @f(%u: memref<4xf64>, %c: f64, %tape: !anc.stack<f64>, %itape: !anc.stack<index>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant STEPS : index
  rev.for %c0 to %cn step %c1 : index () attributes {checkpoint = #ad.schedule<binomial, snapshots = 2>} {
  ^bb0(%i: index):
    %c2 = anc.alloc %c : f64
    %c3 = rev.call @relax(%u, %c2, %tape, %itape) : (memref<4xf64>, f64, !anc.stack<f64>, !anc.stack<index>) -> f64
    anc.free %c3, %c : f64
    rev.yield
  }
  rev.return %c : f64
}
""".replace("STEPS", str(STEPS))


@pytest.fixture(scope="module")
def sweep():
    ctx = make_context()
    module = parse_module(SWEEP, "sweep", ctx)
    AdCheckpointPass(functions=("f",)).apply(ctx, module)
    AdAdjointPass(functions=("f",)).apply(ctx, module)
    return module


def functions(module):
    return {f.sym_name.data: f for f in module.ops if isinstance(f, rev.FuncOp)}


def test_the_untaped_copies_push_nothing_and_call_each_other(sweep):
    found = functions(sweep)
    for name in ("f.ckpt.step0.plain", "relax.plain"):
        assert not any(isinstance(op, anc.PushOp | anc.CopyPushOp) for op in found[name].walk())
    calls = [op.callee.string_value() for op in found["f.ckpt.step0.plain"].walk() if isinstance(op, rev.CallOp)]
    assert calls == ["relax.plain"]
    assert "f.plain" not in found  # only the step and what it calls


def test_plain_steps_run_the_copy_and_the_gradient_is_store_alls(sweep):
    u = np.array([0.3, -0.2, 0.9, 0.4])
    seed = np.array([1.0, -2.0, 0.5, 3.0])
    interpreter = RevInterpreter(sweep)
    native = NativeModule.compile(sweep)
    outputs = interpreter.call("f", u.copy(), 0.7, [], [])
    reference = interpreter.call("f.adj", *outputs, seed.copy(), 0.0, [0.0] * len(outputs[2]))
    stats = binomial(STEPS, 2).stats()
    for runner in (interpreter, native):
        got = runner.call("f.ckpt", u.copy(), 0.7, [], [], seed.copy(), 0.0, [])
        np.testing.assert_allclose(got[4], reference[4], rtol=1e-12)  # ∂/∂u
        np.testing.assert_allclose(got[5], reference[5], rtol=1e-12)  # ∂/∂c
    counters = interpreter.counters
    assert counters["f.ckpt.step0.plain"].calls == stats["plain"] > 0
    assert counters["f.ckpt.step0"].calls == stats["taped"] == STEPS


READS_BACK = """
rev.func @g(%x: f64, %tape: !anc.stack<f64>) {
  %y = anc.pop %tape : !anc.stack<f64>
  anc.push %tape, %y : !anc.stack<f64>
  rev.return %x : f64
}

rev.func @step(%x: f64, %tape: !anc.stack<f64>) {
  %y = rev.call @g(%x, %tape) : (f64, !anc.stack<f64>) -> f64
  rev.return %y : f64
}

rev.func @complex(%x: complex<f64>, %tape: !anc.stack<complex<f64>>) {
  %z = anc.alloc %x : complex<f64>
  anc.push %tape, %x : !anc.stack<complex<f64>>
  rev.return %z : complex<f64>
}
"""


@pytest.mark.parametrize("name", ["step", "complex"])
def test_a_step_that_reads_a_tape_or_pushes_other_values_stays_taped(name):
    """A pop (in a callee) reads what a push left; a complex value has no
    ``arith.constant`` zero to forget it against: no copy, nothing added."""
    module = parse_module(READS_BACK, "reads_back", make_context())
    before = set(functions(module))
    assert untaped_copy(module, name) is None
    assert set(functions(module)) == before


COMPLEX_LOOP = """
rev.func @spin(%x: complex<f64>, %a: complex<f64>, %tape: !anc.stack<complex<f64>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %r = rev.for %c0 to %c7 step %c1 : index (%x) : complex<f64> attributes {checkpoint = #ad.schedule<bisection>} {
  ^bb0(%i: index, %y: complex<f64>):
    %n = complex.mul %y, %a : complex<f64>
    %z = anc.alloc %n : complex<f64>
    anc.push %tape, %y : !anc.stack<complex<f64>>
    rev.yield %z : complex<f64>
  }
  rev.return %r, %a : complex<f64>, complex<f64>
}
"""


def test_without_a_copy_plain_steps_run_the_taped_step_and_forget_its_tape():
    ctx = make_context()
    module = parse_module(COMPLEX_LOOP, "spin", ctx)
    AdCheckpointPass(functions=("spin",)).apply(ctx, module)
    AdAdjointPass(functions=("spin",)).apply(ctx, module)
    assert "spin.ckpt.step0.plain" not in functions(module)
    run = RevInterpreter(module)
    x, a, seed = 0.3 + 0.4j, 0.9 - 0.2j, 1.0 - 0.5j
    got = run.call("spin.ckpt", x, a, [], seed, 0j, [])
    outputs = run.call("spin", x, a, [])
    reference = run.call("spin.adj", *outputs, seed, 0j, [0j] * len(outputs[2]))
    np.testing.assert_allclose(got[3:5], reference[3:5], rtol=1e-12)
    stats = bisection(7).stats()
    assert run.counters["spin.ckpt.step0"].calls == stats["plain"] + stats["taped"]
