"""The names ``ad-checkpoint`` gives what it builds, checked before it builds.

A gradient ``@f.ckpt`` is built from ``@f.ckpt.step<j>`` (the outlined step
of loop j), its untaped copy ``@….plain`` and its adjoint ``@….adj``.  A
module that already has one of these names is refused at that function,
with the module unchanged, whether ``@f`` is an ordinary function
(``policy=``, whose machine is one loop) or a ``rev.func`` whose loops are
marked; so is a taken ``@g.ordinary``, the copy an ordinary caller of a
rewritten ``@g`` keeps.
"""

import pytest
from xdsl.utils.exceptions import PassFailedException

from revmlir.ad.checkpointed import generate_checkpointed
from revmlir.diagnostics import format_error
from revmlir.errors import AdjointError, CheckpointError
from revmlir.parsing import make_context, parse_module
from revmlir.passes.checkpoint import AdCheckpointPass
from revmlir.reversibilize import ReversibilizeError

ORDINARY = """
func.func @g(%x: f64, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%y = %x) -> (f64) {
    %c = math.cos %y : f64
    %d = arith.mulf %c, %a : f64
    scf.yield %d : f64
  }
  func.return %r : f64
}
"""


def loop(result: str, state: str, op: str, schedule: str) -> str:
    """A marked loop of three steps, each applying ``op`` to its state."""
    return f"""
  %{result} = rev.for %c0 to %c3 step %c1 : index (%{state}) : f64 attributes {{checkpoint = #ad.schedule<{schedule}>}} {{
  ^bb0(%i: index, %y: f64):
    %s = math.{op} %y : f64
    %z = anc.alloc %s : f64
    anc.push %tape, %y : !anc.stack<f64>
    rev.yield %z : f64
  }}"""


def marked(name: str, *loops: str) -> str:
    """``rev.func @name``, running ``loops`` in turn, and its request."""
    return f"""
rev.func @{name}(%x: f64, %tape: !anc.stack<f64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index{"".join(loops)}
  rev.return %r{len(loops) - 1} : f64
}}
ad.checkpoint @{name}"""


MARKED = (
    marked("first", loop("r0", "x", "sin", "bisection"))
    + marked("second", loop("r0", "x", "cos", "store_all"), loop("r1", "r0", "exp", "store_all"))
    + "\n"
)

FUNCTION = "func.func @{}(%x: f64) -> f64 {{\n  func.return %x : f64\n}}\n"
REV_FUNCTION = "rev.func @{}(%x: f64) {{\n  rev.return %x : f64\n}}\n"

WHAT = {
    "ckpt": "@{f}'s checkpointed gradient",
    "step": "the outlined step of @{f}'s checkpointed loop #{j}",
    "plain": "the untaped copy of the outlined step of @{f}'s checkpointed loop #{j}",
    "adj": "the adjoint of the outlined step of @{f}'s checkpointed loop #{j}",
}


def generated(f: str, j: int) -> list[tuple[str, str]]:
    """The names built for loop ``j`` of ``@f`` and what each names."""
    step = f"{f}.ckpt.step{j}"
    names = [f"{f}.ckpt", step, f"{step}.plain", f"{step}.adj"]
    return [(name, what.format(f=f, j=j)) for name, what in zip(names, WHAT.values(), strict=True)]


def refused(source: str, run: AdCheckpointPass, error: type[Exception]) -> str:
    """The diagnostic of ``run`` on ``source``, which it leaves unchanged."""
    ctx = make_context()
    module = parse_module(source, "names.mlir", ctx)
    before = str(module)
    with pytest.raises(error) as raised:
        run.apply(ctx, module)
    assert str(module) == before
    return str(raised.value)


@pytest.mark.parametrize("taker", [FUNCTION, REV_FUNCTION], ids=["func", "rev"])
@pytest.mark.parametrize(("name", "what"), generated("g", 0), ids=WHAT)
def test_a_name_of_an_ordinary_functions_gradient_taken_is_refused_at_its_holder(taker, name, what):
    message = refused(
        ORDINARY + taker.format(name), AdCheckpointPass(functions=("g",), policy="bisection"), PassFailedException
    )
    assert message == (
        f"ad-checkpoint: '{taker.split()[0]}' at names.mlir:13:1: @{name} is the name of {what}, "
        "which this run builds; rename this function"
    )


@pytest.mark.parametrize(("name", "what"), generated("second", 1)[1:], ids=list(WHAT)[1:])
def test_a_name_of_a_later_loops_step_taken_is_refused_before_any_gradient_is_built(name, what):
    """@second's second loop's names clash: found before @first's gradient,
    which the run would build first, is built."""
    message = refused(MARKED + REV_FUNCTION.format(name), AdCheckpointPass(), CheckpointError)
    assert message == (
        f"'rev.func' at names.mlir:37:1: @{name} is the name of {what}, which this run builds; rename this function"
    )


def test_names_of_loops_a_function_does_not_have_are_free():
    """Only the names of the loops @first has are the run's: its step #1
    is the user's."""
    ctx = make_context()
    module = parse_module(MARKED + REV_FUNCTION.format("first.ckpt.step1"), "names.mlir", ctx)
    AdCheckpointPass().apply(ctx, module)
    module.verify()
    names = {op.sym_name.data for op in module.ops if op.sym_name.data.startswith(("first.", "second."))}
    assert names == {name for f, j in (("first", 0), ("second", 0), ("second", 1)) for name, _ in generated(f, j)} | {
        "first.ckpt.step1"
    }


def test_a_taken_copy_name_leaves_the_module_unchanged():
    """@h, ordinary, calls @g, which the run rewrites: @h needs @g.ordinary,
    which the user's function has."""
    caller = (
        "func.func @h(%x: f64) -> f64 {\n  %y = func.call @g(%x, %x) : (f64, f64) -> f64\n  func.return %y : f64\n}\n"
    )
    message = refused(
        ORDINARY + caller + FUNCTION.format("g.ordinary"),
        AdCheckpointPass(functions=("g",), policy="bisection"),
        ReversibilizeError,
    )
    assert message == (
        "'func.call' at names.mlir:14:3: @g is rewritten, so this ordinary call needs a copy of it, "
        "@g.ordinary, a name 'func.func' at names.mlir:17:1 already has"
    )


CALLING = """
rev.func @negate(%a: f64) {
  %a1 = rev.neg %a : f64
  rev.return %a1 : f64
}
rev.func @f(%x: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = rev.for %c0 to %c3 step %c1 : index (%x) : f64 attributes {checkpoint = #ad.schedule<bisection>} {
  ^bb0(%i: index, %y: f64):
    %z = rev.call @negate(%y) : (f64) -> f64
    rev.yield %z : f64
  }
  rev.return %r : f64
}
ad.checkpoint @f
"""


@pytest.mark.parametrize(
    ("name", "what"),
    [("negate.plain", "the untaped copy of @negate"), ("negate.adj", "a function derived from @negate")],
    ids=["plain", "adj"],
)
def test_a_callees_derived_name_held_by_another_kind_of_function_is_refused_with_the_module_unchanged(name, what):
    """The step calls @negate, whose untaped copy and adjoint the run
    builds unless a rev.func has their names (as an earlier run's, shared);
    a func.func there is an error at it, found once @f.ckpt and the step
    are built, which are removed again."""
    message = refused(CALLING + FUNCTION.format(name), AdCheckpointPass(), PassFailedException)
    assert (
        message
        == f"'func.func' at names.mlir:18:1: @{name} is the name of {what}, which this run builds; rename this function"
    )


def test_a_failure_while_building_leaves_the_module_as_it_was():
    """@second's step has an op without a derivative rule: found after
    @first's gradient was built, which is removed again, as is everything
    built for @second."""
    source = marked("first", loop("r0", "x", "sin", "bisection")) + marked(
        "second", loop("r0", "x", "cbrt", "store_all")
    )
    message = refused(source + "\n", AdCheckpointPass(), AdjointError)
    assert message.endswith("cannot be differentiated: 'math.cbrt' has no derivative rule")


FIRST = marked("first", loop("r0", "x", "sin", "bisection")) + "\n"


@pytest.mark.parametrize("taker", [FUNCTION, REV_FUNCTION], ids=["func", "rev"])
def test_a_function_holding_the_gradients_name_is_refused_not_taken_for_the_gradient(taker):
    """Only a gradient an earlier run built (a rev.func that forgets
    state) stands for @first.ckpt; any other function of that name is the
    user's, and a clash."""
    message = refused(FIRST + taker.format("first.ckpt"), AdCheckpointPass(), CheckpointError)
    assert message == (
        f"'{taker.split()[0]}' at names.mlir:16:1: @first.ckpt is the name of @first's checkpointed gradient, "
        "which this run builds; rename this function"
    )


def test_an_earlier_runs_gradient_is_kept():
    ctx = make_context()
    module = parse_module(FIRST, "names.mlir", ctx)
    AdCheckpointPass().apply(ctx, module)
    built = str(module)
    AdCheckpointPass(functions=("first",)).apply(ctx, module)
    assert str(module) == built and "rev.func @first.ckpt(" in built


@pytest.mark.parametrize(("name", "what"), generated("first", 0), ids=WHAT)
def test_with_a_policy_a_marked_functions_names_are_checked_before_the_rewrite(name, what):
    """``functions=g policy=…`` rewrites @g before building what the
    module's requests ask for: a name @first's gradient needs, taken, is
    found before @g is rewritten."""
    message = refused(
        ORDINARY + FIRST + REV_FUNCTION.format(name),
        AdCheckpointPass(functions=("g",), policy="bisection"),
        CheckpointError,
    )
    assert message == (
        f"'rev.func' at names.mlir:28:1: @{name} is the name of {what}, which this run builds; rename this function"
    )


def test_with_a_policy_a_function_named_like_a_gradient_is_not_an_earlier_run():
    """@f is no ordinary function, and its @f.ckpt is a user's func.func,
    not a gradient: no earlier run checkpointed @f."""
    source = FIRST.replace("ad.checkpoint @first", "") + FUNCTION.format("first.ckpt")
    message = refused(source, AdCheckpointPass(functions=("first",), policy="bisection"), PassFailedException)
    assert message == (
        "ad-checkpoint: 'rev.func' at names.mlir:2:1: policy= checkpoints an ordinary func.func, and @first is "
        "not one (mark a loop of a rev.func with a schedule instead)"
    )


def test_an_inverse_held_by_another_kind_of_function_is_refused() -> None:
    """``generate_checkpointed`` asked for ``@h.inv`` where a ``func.func``
    holds the name (the request's verifier refuses it in IR): the error
    the verifier gives, not an assertion, and nothing built."""
    module = parse_module(
        """rev.func @h(%x: f64) {
  %y = rev.neg %x : f64
  rev.return %y : f64
}
func.func @h.inv(%x: f64) -> f64 {
  func.return %x : f64
}
""",
        "inverse.mlir",
    )
    before = str(module)
    with pytest.raises(CheckpointError, match=r"^@h\.inv is not a rev\.func of the module nor the inverse of one$"):
        generate_checkpointed(module, ["h.inv"])
    assert str(module) == before


def test_an_error_without_a_message_is_named_by_its_class() -> None:
    """An internal error with no message (a bare ``assert``) is reported as
    one, never as the class of its empty text (``error: str``)."""
    assert format_error(AssertionError(), file="f.mlir") == "f.mlir: error: internal error (AssertionError)"
