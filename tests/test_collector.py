"""The garbage collector is off while revmlir compiles, and back as it was
after (``revmlir.collector``): nested and overlapping compiles, failures,
threads, a program that turned it off itself, and the compiles that pause
it (a function's first call on the CPU, its derived functions, a GPU
kernel) running no collection.  What a compile drops whole is taken apart
and freed without the collector."""

from __future__ import annotations

import gc
import importlib
import threading
import weakref
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from llvmlite import ir
from xdsl.dialects import func, llvm
from xdsl.ir import Operation

import revmlir as rv
from revmlir import collector
from revmlir.collector import collector_paused, pausing, take_apart, take_apart_llvm_ir
from revmlir.frontend.base.derived import adjoint_backend
from revmlir.ir_utils import nested_ops
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.parsing import parse_module


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.usefixtures("collector_on")
def test_paused_in_the_block_and_nested_blocks_and_back_after():
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_back_on_after_an_error_and_as_a_decorator():
    @pausing
    def failing() -> None:
        assert not gc.isenabled()
        raise ValueError("compile failed")

    with pytest.raises(ValueError, match="compile failed"):
        failing()
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_program_stays_off():
    was = gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


@pytest.mark.usefixtures("collector_on")
def test_overlapping_compiles_in_two_threads_resume_it_after_the_last():
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with collector_paused():
            first_in.set()
            second_in.wait()
        first_out.set()

    def second() -> None:
        first_in.wait()
        with collector_paused():
            second_in.set()
            first_out.wait()
            seen.append(gc.isenabled())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert seen == [False]
    assert gc.isenabled()


def _scaled(y, x):
    for i in rv.prange(len(x)):
        y[i] += x[i] * x[i]


def _collections(compile_: Callable[[], object]) -> int:
    """How many collections start while ``compile_()`` runs, with the
    collector eager (a collection every 10 allocations more than frees)."""
    count = 0

    def counted(phase: str, info: dict[str, int]) -> None:
        nonlocal count
        count += phase == "start"

    threshold = gc.get_threshold()
    gc.set_threshold(10)
    gc.callbacks.append(counted)
    try:
        compile_()
    finally:
        gc.callbacks.remove(counted)
        gc.set_threshold(*threshold)
    return count


RESUMED = 2
"""The collections that may start as the compile returns, the collector
back on with a compile's allocations pending: at the end of the paused
block and at the next few allocations of its caller."""


@pytest.mark.usefixtures("collector_on")
def test_compiling_natively_and_for_the_gpu_runs_no_collection(monkeypatch: pytest.MonkeyPatch):
    f = rv.reversible(_scaled)
    x = np.arange(3.0)
    adjoint_args = (np.zeros(3), x, np.ones(3), np.zeros(3))
    spec = f.specialization_for(np.zeros(3), x)  # rv.reversible's compile, native code included
    assert spec.native is not None
    assert _collections(lambda: f.specialization_for(np.zeros(2, np.float32), x.astype(np.float32))) <= RESUMED
    assert _collections(lambda: adjoint_backend(spec)) <= RESUMED
    # rv.cuda and the kernel compiler loaded, as their first use loads them
    kernel, adjoint_kernel = rv.cuda.kernel(f), rv.cuda.kernel(rv.adjoint(f))
    importlib.import_module("revmlir.gpu.program")
    assert _collections(lambda: adjoint_kernel.compile(*adjoint_args)) <= RESUMED
    # the same compile with the collector left on collects all along
    monkeypatch.setattr(collector.gc, "disable", lambda: None)
    assert _collections(lambda: kernel.compile(np.zeros(3), x)) > 100


@pytest.mark.usefixtures("collector_on")
def test_twenty_gpu_compiles_leave_nothing_behind(monkeypatch: pytest.MonkeyPatch):
    """The IR a compile drops waits for the collector while it is paused:
    the collector's own runs after the compiles free it (the objects it
    tracks fall back to their count after the first compile, not one more
    compile's worth each time), and no compile keeps anything once its
    kernel is dropped."""
    monkeypatch.setenv("REVMLIR_CACHE", "0")
    x = np.arange(3.0)
    importlib.import_module("revmlir.gpu.program")

    def compile_fresh() -> None:
        # rv.cuda.kernel would keep the kernel (and its function) for reuse
        rv.cuda.Kernel(rv.reversible(_scaled)).compile(np.zeros(3), x)

    compile_fresh()
    gc.collect()
    before = len(gc.get_objects())
    tracked = []
    for _ in range(20):
        compile_fresh()
        tracked.append(len(gc.get_objects()) - before)
    assert tracked[0] > 0
    assert min(tracked[1:]) <= tracked[0], tracked
    gc.collect()
    assert len(gc.get_objects()) - before <= 16


NESTED = """
func.func @f(%x: f64, %n: index, %c: i1) -> f64 {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %s = scf.for %i = %zero to %n step %one iter_args(%a = %x) -> (f64) {
    %b = scf.if %c -> (f64) {
      %p = arith.mulf %a, %a : f64
      scf.yield %p : f64
    } else {
      scf.yield %a : f64
    }
    scf.yield %b : f64
  }
  cf.cond_br %c, ^left(%s : f64), ^right
^left(%v: f64):
  %w = arith.addf %v, %s : f64
  func.return %w : f64
^right:
  func.return %s : f64
}
"""


def _referents(module: Operation) -> list[weakref.ref[object]]:
    """Weak references to every op, result, block, block argument and
    region of ``module``: each is in a reference cycle while it is whole."""
    objects: list[object] = []
    for op in nested_ops(module):
        objects += [op, *op.results, *op.regions]
        for region in op.regions:
            for block in region.blocks:
                objects += [block, *block.args]
    return [weakref.ref(o) for o in objects]


@pytest.mark.parametrize("taken_apart", [False, True])
def test_ir_taken_apart_is_freed_without_the_collector(taken_apart: bool, monkeypatch: pytest.MonkeyPatch):
    """Values used more than once (their uses a linked list), nested
    regions, blocks with arguments and branches between them: once the
    tree is taken apart, dropping the last reference frees all of it; left
    whole, only the collector would.  The precondition's check passes the
    whole tree and keeps nothing of it."""
    monkeypatch.setattr(collector, "_CHECK", True)
    with collector_paused():
        module = parse_module(NESTED)
        referents = _referents(module)
        if taken_apart:
            take_apart(module)
        del module
        left = sum(r() is not None for r in referents)
    gc.collect()
    assert len(referents) > 30
    assert left == (0 if taken_apart else len(referents))


BORROWS = """
rev.func @square(%y: f64, %x: f64) {
  %t = arith.mulf %x, %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
rev.func @twice(%y: memref<?xf64>, %x: f64) {
  %c0 = arith.constant 0 : index
  %v = rev.take %y[%c0] : memref<?xf64>
  %v1, %x1 = rev.call @square(%v, %x) : (f64, f64) -> (f64, f64)
  rev.put %v1, %y[%c0] : memref<?xf64>
  rev.return %x1 : f64
}
"""


@pytest.mark.parametrize("owned", [False, True])
def test_the_rev_functions_an_owned_lowering_replaces_are_freed_without_the_collector(
    owned: bool, monkeypatch: pytest.MonkeyPatch
):
    """``lower_to_std(owned=True)`` (a compile's own copy) takes apart each
    rev function it replaces; a lowering of a module someone else may hold
    leaves them as xDSL's rewriter leaves what it erases."""
    monkeypatch.setattr(collector, "_CHECK", True)
    with collector_paused():
        module = parse_module(BORROWS)
        referents = [r for f in module.ops for r in _referents(f)]
        lower_to_std(module, check_ops=True, owned=owned)
        left = sum(r() is not None for r in referents)
    gc.collect()
    assert len(referents) > 20
    assert (left == 0) is owned


PLANTED = """func.func @g(%x: f64, %c: i1) {
  scf.if %c {
    %p = arith.mulf %x, %x : f64
    scf.yield
  }
  func.return
}
"""


def test_a_tree_using_a_value_from_outside_it_is_refused_and_left_whole(monkeypatch: pytest.MonkeyPatch):
    """With the check on, a tree that is not dropped whole (here an
    ``scf.if`` whose body uses the function's arguments) is refused before
    anything is cleared: the outside values keep their uses."""
    monkeypatch.setattr(collector, "_CHECK", True)
    module = parse_module(PLANTED, "planted.mlir")
    function = next(iter(module.ops))
    assert isinstance(function, func.FuncOp)
    x, c = function.body.block.args
    branch = function.body.block.first_op
    assert branch is not None
    branch.detach()
    with pytest.raises(
        AssertionError,
        match=r"^take_apart: 'scf.if' at planted.mlir:2:3 in the tree of 'scf.if' at planted.mlir:2:3 uses "
        r"%c \(block argument #1\) from outside it$",
    ):
        take_apart(branch)
    assert [use.operation.name for use in (*x.uses, *c.uses)] == ["arith.mulf", "arith.mulf", "scf.if"]
    assert "arith.mulf %x, %x" in str(branch)
    with pytest.raises(AssertionError, match=r"^take_apart: 'func.func' at planted.mlir:1:1 is still in a block$"):
        take_apart(function)
    assert function.sym_name.data == "g"


USED_OUTSIDE = """func.func @g() -> f64 {
  %two = arith.constant 2.0 : f64
  func.return %two : f64
}
"""


def test_a_tree_with_a_value_used_outside_it_is_refused_and_left_whole(monkeypatch: pytest.MonkeyPatch):
    """With the check on, a tree whose value an op outside it still uses
    (as a terminator left behind in a block no one reaches used what was
    moved out of it) is refused before anything is cleared."""
    monkeypatch.setattr(collector, "_CHECK", True)
    module = parse_module(USED_OUTSIDE, "outside.mlir")
    function = next(iter(module.ops))
    assert isinstance(function, func.FuncOp)
    constant, returned = function.body.block.ops
    constant.detach()
    with pytest.raises(
        AssertionError,
        match=r"^take_apart: 'func.return' at outside.mlir:3:3 outside the tree of 'arith.constant' at "
        r"outside.mlir:2:3 uses %two \(result of 'arith.constant' at outside.mlir:2:3\) from inside it$",
    ):
        take_apart(constant)
    assert list(returned.operands) == [constant.results[0]]
    assert "arith.constant 2.0" in str(constant)


def _llvm_ir() -> ir.Module:
    """A function with a loop: its phi and the sum it carries use each other."""
    module = ir.Module()
    double = ir.DoubleType()
    function = ir.Function(module, ir.FunctionType(double, [double, ir.IntType(1)]), "f")
    entry, loop, done = (function.append_basic_block(name) for name in ("entry", "loop", "done"))
    builder = ir.IRBuilder(entry)
    builder.branch(loop)
    builder.position_at_end(loop)
    carried = builder.phi(double)
    total = builder.fadd(carried, function.args[0])
    carried.add_incoming(function.args[0], entry)
    carried.add_incoming(total, loop)
    builder.cbranch(function.args[1], loop, done)
    builder.position_at_end(done)
    builder.ret(total)
    module.add_named_metadata("llvm.module.flags", [ir.IntType(32)(1)])
    return module


@pytest.mark.parametrize("taken_apart", [False, True])
def test_llvm_ir_taken_apart_is_freed_without_the_collector(taken_apart: bool):
    with collector_paused():
        module = _llvm_ir()
        function = module.get_global("f")
        instructions = [i for block in function.blocks for i in block.instructions]
        referents = [weakref.ref(o) for o in (module, function, *function.args, *function.blocks, *instructions)]
        del instructions
        del function
        if taken_apart:
            take_apart_llvm_ir(module)
        del module
        left = sum(r() is not None for r in referents)
    gc.collect()
    assert left == (0 if taken_apart else len(referents))


@pytest.mark.parametrize(
    "compile_",
    [
        lambda x: rv.cuda.Kernel(rv.reversible(_scaled, backend="interpreter")).compile(np.zeros(3), x),
        lambda x: rv.reversible(_scaled).specialization_for(np.zeros(3), x).native,
    ],
    ids=["gpu", "native"],
)
def test_a_compile_leaves_its_lowered_modules_to_reference_counting(
    compile_: Callable[[np.ndarray], object], monkeypatch: pytest.MonkeyPatch
):
    """The module of ``llvm`` ops and the LLVM IR made of it, dropped whole
    by every kernel and native compile, are freed as the compile drops
    them: with the collector off throughout, none of their functions is
    left."""
    monkeypatch.setenv("REVMLIR_CACHE", "0")
    x = np.arange(3.0)
    compile_(x)  # what a first compile loads and keeps
    gc.collect()
    with collector_paused():
        before = {id(o): o for o in _lowered_functions()}  # what other code keeps: held, so ids stay theirs
        assert compile_(x) is not None
        left = [o for o in _lowered_functions() if id(o) not in before]
    assert left == []


def _lowered_functions() -> list[object]:
    return [o for o in gc.get_objects() if isinstance(o, llvm.FuncOp | ir.Function)]


ADJOINTS = """
rev.func @square(%y: f64, %x: f64) {
  %zero = arith.constant 0.0 : f64
  %y1, %x1 = rev.routine (%y, %x) : f64, f64 compute {
  ^bb0(%cy: f64, %cx: f64):
    %s = arith.mulf %cx, %cx : f64
    %t = anc.alloc %zero : f64
    %t1 = rev.add %t, %s : f64
    rev.yield %cy, %cx, %t1 : f64, f64, f64
  } do {
  ^bb0(%dy: f64, %dx: f64, %dt: f64):
    %dy1 = rev.add %dy, %dt : f64
    rev.yield %dy1, %dx, %dt : f64, f64, f64
  }
  %y2, %x2 = rev.inv (%y1, %x1) : f64, f64 {
  ^bb0(%iy: f64, %ix: f64):
    %iy1 = rev.sub %iy, %ix : f64
    rev.yield %iy1, %ix : f64, f64
  }
  rev.return %y2, %x2 : f64, f64
}
rev.func @twice(%y: f64, %x: f64) {
  %y1, %x1 = rev.call @square(%y, %x) : (f64, f64) -> (f64, f64)
  %t = arith.mulf %x1, %x1 : f64
  %y2 = rev.add %y1, %t : f64
  rev.return %y2, %x1 : f64, f64
}
"""


def test_adjoints_leave_nothing_to_the_collector(monkeypatch: pytest.MonkeyPatch):
    """Generating adjoints leaves neither the adjointers nor the copies of
    the primal functions they were derived from to the collector: with it
    off, no ``rev.func`` but the module's is alive afterwards.  A copy
    whose routine and ``rev.inv`` region were expanded is dropped whole,
    no terminator of theirs left using its values (the check would
    refuse it)."""
    from revmlir.ad.adjoint import Adjointer, generate_adjoints
    from revmlir.dialects import rev

    monkeypatch.setattr(collector, "_CHECK", True)
    with collector_paused():
        module = parse_module(ADJOINTS)
        gc.collect()
        # what other code keeps: held, so ids stay theirs
        before = {id(o): o for o in gc.get_objects() if isinstance(o, rev.FuncOp | Adjointer)}
        generate_adjoints(module, ["twice"])
        left = [o for o in gc.get_objects() if isinstance(o, rev.FuncOp | Adjointer) and id(o) not in before]
        assert sorted(f.sym_name.data for f in module.ops) == ["square", "square.adj", "twice", "twice.adj"]
        assert [o for o in left if not (isinstance(o, rev.FuncOp) and o.parent_op() is module)] == []
