"""``ad-checkpoint{functions=… policy=…}`` as one step: the module's
requests are planned once, and a failure anywhere leaves the module as it
was.

With ``policy=``, the run plans the module's ``ad.checkpoint`` requests
before ``make-resumable`` rewrites the named ordinary functions (so that
their errors find the module unchanged) and builds them after it, from
the same plans: the rewrite changes no ``rev.func``.  A plan whose
function the module no longer holds is made again.  What fails only once
the module has changed (a machine that cannot be built after the ordinary
callers were redirected to copies, a requested gradient without a
derivative rule after the rewrite) puts every function back.
"""

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

import test_checkpoint_names
from revmlir.ad import checkpointed
from revmlir.ad.checkpointed import generate_checkpointed, plan_checkpointed
from revmlir.dialects import rev
from revmlir.errors import AdjointError
from revmlir.parsing import make_context, parse_module
from revmlir.passes import checkpoint, rollback
from revmlir.passes.checkpoint import AdCheckpointPass
from revmlir.passes.rollback import rolled_back_on_failure
from revmlir.reversibilize import ReversibilizeError
from revmlir.semantics import Function

# @g, ordinary, and an ordinary caller of it
ORDINARY = (
    test_checkpoint_names.ORDINARY
    + """func.func @caller(%x: f64) -> f64 {
  %y = func.call @g(%x, %x) : (f64, f64) -> f64
  func.return %y : f64
}
"""
)


def marked(name: str, op: str) -> str:
    """``rev.func @name`` (a marked loop of three steps applying ``op``) and its request."""
    return test_checkpoint_names.marked(name, test_checkpoint_names.loop("r0", "x", op, "bisection"))


# @h.inv is requested too, and missing: the plan inverts @h
REQUESTS = marked("m", "sin") + marked("h", "exp") + "\nad.checkpoint @h.inv\n"
POLICY = AdCheckpointPass(functions=("g",), policy="bisection")


def counted_preparations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions ``plan_checkpointed`` prepares from now on."""
    prepared: list[str] = []
    prepare = checkpointed.prepare

    def counting(function):
        prepared.append(function.sym_name.data)
        return prepare(function)

    monkeypatch.setattr(checkpointed, "prepare", counting)
    return prepared


def test_policy_plans_each_request_once(monkeypatch):
    """@m, @h and @h.inv are prepared (and @h inverted) once, before the
    rewrite; building @g's gradient prepares @g's machine."""
    prepared = counted_preparations(monkeypatch)
    inverted: list[str] = []
    invert = checkpointed.derive_inverse

    def counting(function, name):
        inverted.append(name)
        return invert(function, name)

    monkeypatch.setattr(checkpointed, "derive_inverse", counting)
    ctx = make_context()
    module = parse_module(ORDINARY + REQUESTS, "plans.mlir", ctx)
    POLICY.apply(ctx, module)
    module.verify()
    assert prepared == ["m", "h", "h.inv", "g"]
    assert inverted == ["h.inv"]
    assert {"m.ckpt", "h.ckpt", "h.inv.ckpt", "g.ckpt"} <= {op.sym_name.data for op in module.ops}


def test_a_plan_whose_function_was_replaced_is_made_again(monkeypatch):
    """A plan is of the op it was made from: once the module holds another
    op under the name, building plans it again, from that op."""
    module = parse_module(marked("m", "sin"), "plans.mlir")
    (stale,) = plan_checkpointed(module, ["m"])
    original = SymbolTable.lookup_symbol(module, "m")
    replacement = parse_module(marked("m", "exp"), "plans.mlir").body.block.first_op
    replacement.detach()
    module.body.block.insert_op_after(replacement, original)
    module.body.block.erase_op(original)
    prepared = counted_preparations(monkeypatch)
    generate_checkpointed(module, ["m"], [stale])
    assert prepared == ["m"]
    assert "math.exp" in str(SymbolTable.lookup_symbol(module, "m.ckpt.step0"))
    assert "math.sin" not in str(module)


def test_a_plan_is_not_reused_once_the_gradient_exists():
    """A gradient built since the plan was made is kept, not built again."""
    module = parse_module(marked("m", "sin"), "plans.mlir")
    (plan,) = plan_checkpointed(module, ["m"])
    generate_checkpointed(module, ["m"])
    built = str(module)
    assert generate_checkpointed(module, ["m"], [plan]) == []
    assert str(module) == built


# an ordinary function that neither calls @g nor is called by it
UNTOUCHED = """
func.func @other(%x: f64) -> f64 {
  %y = math.sin %x : f64
  func.return %y : f64
}
"""


def rewritten(op: Operation) -> bool:
    """Whether ``POLICY`` may rewrite ``op``: @g, and @caller, which calls it."""
    return isinstance(op, func.FuncOp) and op.sym_name.data in ("g", "caller")


def refused(source: str, error: type[BaseException]) -> str:
    """The diagnostic of ``POLICY`` on ``source`` and ``UNTOUCHED``, which
    it leaves as it was, every op but the functions it rewrites (@other
    and the rev.funcs among them) the same op."""
    ctx = make_context()
    module = parse_module(source + UNTOUCHED, "failure.mlir", ctx)
    before = str(module)
    kept = [op for op in module.ops if not rewritten(op)]
    with pytest.raises(error) as raised:
        POLICY.apply(ctx, module)
    assert str(module) == before
    module.verify()
    assert [op for op in module.ops if not rewritten(op)] == kept
    return str(raised.value)


def test_a_machine_that_fails_after_the_copies_were_made_leaves_the_module_as_it_was():
    """@caller calls @g, so @g.ordinary is made and @caller redirected to
    it before @g's machine is built; the machine fails at the recursive
    call that passes another array."""
    source = """
func.func @g(%x: memref<4xf64>, %y: memref<4xf64>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (index) {
    scf.yield %c0 : index
  } else {
    %m = arith.subi %n, %c1 : index
    %k = func.call @g(%y, %x, %m) : (memref<4xf64>, memref<4xf64>, index) -> index
    scf.yield %k : index
  }
  func.return %r : index
}
func.func @caller(%x: memref<4xf64>, %n: index) -> index {
  %k = func.call @g(%x, %x, %n) : (memref<4xf64>, memref<4xf64>, index) -> index
  func.return %k : index
}
"""
    message = refused(source, ReversibilizeError)
    assert message == (
        "'func.call' at failure.mlir:10:5: a resumable function cannot pass another array as argument #0 of @g: "
        "a function of a recursive cycle is laid out once, so each array parameter is one array at every call"
    )


def test_a_request_that_fails_after_the_rewrite_leaves_the_module_as_it_was():
    """@g is rewritten and reversibilized, @caller redirected to its copy,
    and @m's gradient built, before @bad's step is found to have an op
    without a derivative rule."""
    source = ORDINARY + marked("m", "sin") + marked("bad", "cbrt") + "\n"
    message = refused(source, AdjointError)
    assert message.startswith("'math.cbrt' at failure.mlir:")
    assert message.endswith("cannot be differentiated: 'math.cbrt' has no derivative rule")


def test_an_interrupted_run_leaves_the_module_as_it_was(monkeypatch):
    """Ctrl-C in a long run (here in the snapshots' check, once @g was
    rewritten and the gradients built) puts the module back too, and the
    interrupt goes on."""

    def interrupted(module):
        assert {"g.ckpt", "m.ckpt", "g.ordinary"} <= {op.sym_name.data for op in module.ops if isinstance(op, Function)}
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint, "check_snapshots", interrupted)
    refused(ORDINARY + marked("m", "sin"), KeyboardInterrupt)


def test_policy_copies_only_the_functions_it_may_rewrite(monkeypatch):
    """@g, its caller @caller and the copy @k.ordinary an earlier run left
    (erased now: nothing calls it) are copied before the rewrite and the
    copies taken apart once it succeeded; @g's callee @half (which its
    machine lays out from a copy of its own), @other and the rev.funcs
    are neither copied nor changed."""
    source = (
        """func.func @half(%x: f64) -> f64 {
  %h = arith.constant 0.5 : f64
  %y = arith.mulf %x, %h : f64
  func.return %y : f64
}
func.func @g(%x: f64, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%y = %x) -> (f64) {
    %c = func.call @half(%y) : (f64) -> f64
    %d = arith.mulf %c, %a : f64
    scf.yield %d : f64
  }
  func.return %r : f64
}
func.func @caller(%x: f64) -> f64 {
  %y = func.call @g(%x, %x) : (f64, f64) -> f64
  func.return %y : f64
}
func.func private @k.ordinary(%x: f64) -> f64 attributes {rev.ordinary_copy_of = "k"} {
  func.return %x : f64
}
"""
        + UNTOUCHED
        + marked("m", "sin")
    )
    taken_apart: list[str] = []
    take_apart = rollback.take_apart

    def recording(op):
        taken_apart.append(op.sym_name.data)
        take_apart(op)
        assert not vars(op)

    monkeypatch.setattr(rollback, "take_apart", recording)
    ctx = make_context()
    module = parse_module(source, "copies.mlir", ctx)
    kept = [
        op
        for op in module.ops
        if isinstance(op, rev.FuncOp) or (isinstance(op, func.FuncOp) and op.sym_name.data in ("half", "other"))
    ]
    printed = [str(op) for op in kept]
    POLICY.apply(ctx, module)
    assert sorted(taken_apart) == ["caller", "g", "k.ordinary"]
    assert [op for op in kept if op.parent is module.body.block] == kept
    assert [str(op) for op in kept] == printed
    assert SymbolTable.lookup_symbol(module, "k.ordinary") is None


def test_the_rewrite_changes_no_rev_func(monkeypatch):
    """``Plan.holds`` compares identity, not content, so the plans made
    before the rewrite describe what is built only because the rewrite
    changes no ``rev.func`` in place: when the gradients are built, every
    rev.func of the input is the same op, printed as it was."""
    ctx = make_context()
    module = parse_module(ORDINARY + REQUESTS, "plans.mlir", ctx)
    printed = {op: str(op) for op in module.ops if isinstance(op, rev.FuncOp)}
    assert len(printed) == 2
    building: dict[Operation, str] = {}
    expand_requests = checkpoint.expand_requests

    def recording(module, *arguments):
        assert SymbolTable.lookup_symbol(module, "g.ordinary") is not None  # the rewrite ran
        building.update({op: str(op) for op in module.ops if op in printed})
        return expand_requests(module, *arguments)

    monkeypatch.setattr(checkpoint, "expand_requests", recording)
    POLICY.apply(ctx, module)
    assert building == printed


RULES = """rev.extern @p : (f64) -> f64 {symbol = "sin", adjoint = @p_adj}
func.func @p_adj(%x: f64, %g: f64) -> f64 {
  %d = func.call @twice(%g, %x) : (f64, f64) -> f64
  func.return %d : f64
}
func.func @twice(%y: f64, %x: f64) -> f64 {
  %d = arith.mulf %y, %x : f64
  %e = arith.addf %d, %d : f64
  func.return %e : f64
}
"""


@pytest.mark.parametrize(("name", "line"), [("p_adj", 2), ("twice", 6)])
def test_a_primitives_rule_is_refused_at_the_function(name, line):
    """A primitive's rule, and what it calls, stay ordinary code (the
    derivative passes call them), so ``policy=`` refuses them before the
    module changes, at the function, where it named a rev.func it could
    not find."""
    ctx = make_context()
    module = parse_module(RULES, "rules.mlir", ctx)
    before = str(module)
    with pytest.raises(PassFailedException) as raised:
        AdCheckpointPass(functions=(name,), policy="bisection").apply(ctx, module)
    assert str(raised.value) == (
        f"ad-checkpoint: 'func.func' at rules.mlir:{line}:1: @{name} is a primitive's rule (rev.extern) or "
        "called by one, which the derivative passes call as the ordinary code it is: policy= cannot rewrite it"
    )
    assert str(module) == before


def test_a_rollback_restores_a_function_the_body_erased_in_its_place():
    """``rolled_back_on_failure`` puts a rewritten op back where it was,
    whether the body changed it, replaced it or erased it, and removes
    what the body added."""
    module = parse_module(ORDINARY + marked("m", "sin"), "rollback.mlir")
    before = str(module)
    g, caller, m, _ = list(module.ops)
    with pytest.raises(RuntimeError, match="late"), rolled_back_on_failure(module, [g, caller]):
        module.body.block.erase_op(g)
        caller.sym_name = StringAttr("renamed")
        module.body.block.insert_op_before(m.clone(), m)
        raise RuntimeError("late")
    assert str(module) == before
