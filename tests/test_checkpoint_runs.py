"""``ad-checkpoint{functions=… policy=…}`` run once per function.

A run converts only the functions it names (their resumable machines,
reversibilized), so a later run may checkpoint another ordinary function:
one that calls a function an earlier run converted (which then calls a
copy of it as written, ``@g.ordinary``), or one that an earlier run's
function called (whose machine inlined it).  Either order gives the module
a single run naming both gives; naming a function a second time is an
error at the function.  ``make-resumable`` alone keeps the copy as well.
``@outer`` calls ``@f``, a recursion, from a loop; ``@g`` calls ``@f`` too
(``test_resumable_recursion.SEVERAL``).
"""

import math

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from revmlir.interpreter import RevInterpreter
from revmlir.naming import ORDINARY_COPY_ATTR
from revmlir.parsing import make_context, parse_module
from revmlir.passes.checkpoint import AdCheckpointPass
from revmlir.passes.resumable import MakeResumablePass
from revmlir.reversibilize import ReversibilizeError
from revmlir.reversibilize.ordinary_copies import written_name
from test_resumable_recursion import SEVERAL

SOURCE = (
    SEVERAL
    + """
func.func @outer(%x: f64, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%y = %x) -> (f64) {
    %k = func.call @f(%y, %c2) : (f64, index) -> f64
    %c = math.cos %k : f64
    %d = arith.mulf %c, %a : f64
    %e = arith.addf %d, %y : f64
    scf.yield %e : f64
  }
  func.return %r : f64
}
"""
)


def f(x: float, n: int) -> float:
    return x if n == 0 else math.sin(f(x, n - 1)) * x


def outer(x: float, a: float) -> float:
    y = x
    for _ in range(3):
        y = math.cos(f(y, 2)) * a + y
    return y


def checkpointed(*runs: tuple[str, ...]) -> ModuleOp:
    """The module after one ``ad-checkpoint`` run per tuple of names."""
    ctx = make_context()
    module = parse_module(SOURCE, "runs.mlir", ctx)
    for names in runs:
        AdCheckpointPass(functions=names, policy="bisection").apply(ctx, module)
    module.verify()
    return module


def gradients(module: ModuleOp) -> tuple[tuple[float, float], tuple[float, ...]]:
    """d f(0.8, 3) / dx and d outer(0.7, 0.9) / d(x, a), from ``@*.ckpt``
    (inputs, a zero result slot, empty tapes, then the seeds)."""
    run = RevInterpreter(module)
    *_, f_x, _, _ = run.call("f.ckpt", 0.8, 3, 0.0, [], [], 0.0, 1.0, [])
    *_, outer_x, outer_a, _, _ = run.call("outer.ckpt", 0.7, 0.9, 0.0, [], [], 0.0, 0.0, 1.0, [])
    return (f_x,), (outer_x, outer_a)


TOGETHER = checkpointed(("f", "outer"))


def differences(f, args: tuple[float, ...], h: float = 1e-6) -> list[float]:
    return [
        (f(*args[:k], v + h, *args[k + 1 :]) - f(*args[:k], v - h, *args[k + 1 :])) / (2 * h)
        for k, v in enumerate(args)
    ]


def test_one_run_naming_both_is_the_programs_gradient():
    (f_x,), outer_xa = gradients(TOGETHER)
    assert f_x == pytest.approx(differences(lambda x: f(x, 3), (0.8,))[0], rel=1e-8)
    assert list(outer_xa) == pytest.approx(differences(outer, (0.7, 0.9)), rel=1e-8, abs=1e-9)


@pytest.mark.parametrize("runs", [(("f",), ("outer",)), (("outer",), ("f",))], ids=["callee-first", "caller-first"])
def test_a_run_per_function_gives_the_module_of_one_run(runs):
    """The later run names a caller of the earlier run's function (its
    copy as written is laid out in the caller's machine) or a callee of it
    (left ordinary by the earlier run, whose machine inlined it)."""
    module = checkpointed(*runs)
    assert gradients(module) == gradients(TOGETHER)
    for name in ("f", "f.ckpt", "outer", "outer.ckpt", "outer.ckpt.step0.adj"):
        assert str(SymbolTable.lookup_symbol(module, name)) == str(SymbolTable.lookup_symbol(TOGETHER, name))


def test_ordinary_callers_of_a_converted_function_call_its_copy():
    """Once @f is reversible, @outer and @g, still ordinary, call
    @f.ordinary, a private copy of @f as written (no frames), tagged with
    the name it copies, which calls itself; checkpointing @outer then
    leaves the copy to @g, and checkpointing @g too erases it."""
    module = checkpointed(("f",))
    source = SymbolTable.lookup_symbol(parse_module(SOURCE, "runs.mlir", make_context()), "f")
    assert isinstance(source, func.FuncOp)
    source.sym_visibility = StringAttr("private")
    source.attributes[ORDINARY_COPY_ATTR] = StringAttr("f")
    copy = SymbolTable.lookup_symbol(module, "f.ordinary")
    assert str(copy) == str(source).replace("@f(", "@f.ordinary(")
    calls = {op.callee.string_value() for op in module.walk() if isinstance(op, func.CallOp)}
    assert calls == {"f.ordinary"}
    assert SymbolTable.lookup_symbol(checkpointed(("f",), ("outer",)), "f.ordinary") is not None
    assert SymbolTable.lookup_symbol(checkpointed(("f",), ("outer",), ("g",)), "f.ordinary") is None


def test_a_function_checkpointed_twice_is_an_error_at_the_function():
    with pytest.raises(PassFailedException) as raised:
        checkpointed(("outer",), ("outer",))
    assert str(raised.value) == (
        "ad-checkpoint: 'rev.func' at runs.mlir:23:1: @outer was checkpointed by an earlier run, whose gradient "
        "is @outer.ckpt; a function is checkpointed under one policy, once"
    )


def test_a_copy_whose_name_is_taken_is_an_error_at_the_call():
    source = (
        SOURCE
        + """
func.func @f.ordinary(%x: f64) -> f64 {
  func.return %x : f64
}
"""
    )
    ctx = make_context()
    module = parse_module(source, "taken.mlir", ctx)
    with pytest.raises(ReversibilizeError) as raised:
        AdCheckpointPass(functions=("f",), policy="bisection").apply(ctx, module)
    assert str(raised.value) == (
        "'func.call' at taken.mlir:18:3: @f is rewritten, so this ordinary call needs a copy of it, "
        "@f.ordinary, a name 'func.func' at taken.mlir:38:1 already has"
    )


def test_make_resumable_run_per_function_gives_the_machines_of_one_run():
    """make-resumable alone keeps the copy too: a later run lays @f out in
    @outer's machine from the source, not from @f's machine, whose frames
    it would refuse."""
    ctx = make_context()
    together = parse_module(SOURCE, "runs.mlir", ctx)
    MakeResumablePass(functions=("f", "outer")).apply(ctx, together)
    apart = parse_module(SOURCE, "runs.mlir", ctx)
    MakeResumablePass(functions=("f",)).apply(ctx, apart)
    assert isinstance(SymbolTable.lookup_symbol(apart, "f.ordinary"), func.FuncOp)
    MakeResumablePass(functions=("outer",)).apply(ctx, apart)
    for name in ("f", "outer"):
        assert str(SymbolTable.lookup_symbol(apart, name)) == str(SymbolTable.lookup_symbol(together, name))


USERS_OWN = """
func.func @g(%x: f64) -> f64 {
  %s = math.sin %x : f64
  func.return %s : f64
}
func.func private @g.ordinary(%x: f64) -> f64 {
  %s = math.cos %x : f64
  func.return %s : f64
}
func.func @h(%x: f64) -> f64 {
  %s = math.exp %x : f64
  func.return %s : f64
}
"""


FORGED = """
func.func @entry(%x: f64) -> f64 attributes {rev.ordinary_copy_of = "whatever"} {
  %s = math.sin %x : f64
  func.return %s : f64
}
func.func private @g.ordinary(%x: f64) -> f64 attributes {rev.ordinary_copy_of = "other"} {
  %s = math.cos %x : f64
  func.return %s : f64
}
func.func @h(%x: f64) -> f64 {
  %s = math.exp %x : f64
  func.return %s : f64
}
"""

REWRITES = pytest.mark.parametrize(
    "rewrite",
    [MakeResumablePass(functions=("h",)), AdCheckpointPass(functions=("h",), policy="bisection")],
    ids=["make-resumable", "ad-checkpoint"],
)


@REWRITES
@pytest.mark.parametrize(
    ("source", "kept"), [(USERS_OWN, ("g.ordinary",)), (FORGED, ("entry", "g.ordinary"))], ids=["named", "tagged"]
)
def test_a_users_function_named_or_tagged_like_a_copy_is_kept(rewrite, source, kept):
    """Only the copies a run made are erased, and only they are named as
    the function they copy: a private @g.ordinary that the user wrote,
    which nothing calls, stays as written; so does a function carrying the
    copies' tag (pasted from an earlier output) unless it is private and
    named after the function the tag names (a public @entry, a @g.ordinary
    tagged as a copy of another function)."""
    ctx = make_context()
    module = parse_module(source, "own.mlir", ctx)
    rewrite.apply(ctx, module)
    for name in kept:
        function = SymbolTable.lookup_symbol(module, name)
        written = SymbolTable.lookup_symbol(parse_module(source, "own.mlir", ctx), name)
        assert isinstance(function, func.FuncOp) and written_name(function) == name
        assert str(function) == str(written)


ARRAYS = """
func.func @g(%x: memref<4xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    %v = memref.load %x[%c0] : memref<4xf64>
    scf.yield %v : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %k = func.call @g(%x, %m) : (memref<4xf64>, index) -> f64
    %s = math.sin %k : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @h(%a: memref<4xf64>, %b: memref<4xf64>) -> f64 {
  %c2 = arith.constant 2 : index
  %p = func.call @g(%a, %c2) : (memref<4xf64>, index) -> f64
  %q = func.call @g(%b, %c2) : (memref<4xf64>, index) -> f64
  %s = arith.addf %p, %q : f64
  func.return %s : f64
}
"""


@pytest.mark.parametrize("runs", [(("h",),), (("g",), ("h",))], ids=["one-run", "callee-first"])
def test_an_error_in_a_copy_names_the_function_as_written(runs):
    """@h calls the recursion @g with two arrays, which its machine cannot
    lay out; after a run on @g, @h calls @g's copy, and the error still
    names @g."""
    ctx = make_context()
    module = parse_module(ARRAYS, "arrays.mlir", ctx)
    for names in runs[:-1]:
        MakeResumablePass(functions=names).apply(ctx, module)
    with pytest.raises(ReversibilizeError) as raised:
        MakeResumablePass(functions=runs[-1]).apply(ctx, module)
    assert str(raised.value) == (
        "'func.call' at arrays.mlir:20:3: a resumable function cannot pass another array as argument #0 of @g: "
        "a function of a recursive cycle is laid out once, so each array parameter is one array at every call"
    )


def test_a_taken_copy_name_leaves_the_module_unchanged():
    """@r needs copies of @p and @q; @q's name is taken, which is found
    before @p's copy is made or any call redirected."""
    source = """
func.func @p(%x: f64) -> f64 {
  %s = math.sin %x : f64
  func.return %s : f64
}
func.func @q(%x: f64) -> f64 {
  %s = math.cos %x : f64
  func.return %s : f64
}
func.func @r(%x: f64) -> f64 {
  %a = func.call @p(%x) : (f64) -> f64
  %b = func.call @q(%x) : (f64) -> f64
  %s = arith.addf %a, %b : f64
  func.return %s : f64
}
func.func private @q.ordinary(%x: f64) -> f64 {
  func.return %x : f64
}
"""
    ctx = make_context()
    module = parse_module(source, "taken.mlir", ctx)
    before = str(module)
    with pytest.raises(ReversibilizeError) as raised:
        MakeResumablePass(functions=("p", "q")).apply(ctx, module)
    assert str(raised.value).startswith("'func.call' at taken.mlir:12:3: @q is rewritten")
    assert str(module) == before
