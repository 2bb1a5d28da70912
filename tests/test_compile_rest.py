"""The second direction of a module compiles beside the first, in its
engine, and calls the functions the first defines instead of compiling
them again; its checks are numbered after the first's, so an error raised
in either module's code reads as it did (docs/design.md, "The rest of a
module calls the functions its first compile defines")."""

from __future__ import annotations

import ctypes
import gc
import re
import threading
import weakref
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest
from xdsl.dialects import func, scf

import revmlir as rv
from revmlir.collector import collector_paused
from revmlir.interpreter import RevInterpreter
from revmlir.lowering import loop_versioning
from revmlir.naming import inverse_name
from revmlir.parsing import parse_module
from revmlir.runtime import cache, std_form
from revmlir.runtime.jit import Engine, HostTarget, jit
from revmlir.runtime.native import Direction, NativeModule, lower_to_llvm_ir
from test_native_cache import forbid_llvm
from test_uncall_without_inverse import assert_same_failure, failure

SHARED = """rev.func @hoard(%x: i64, %d: i64) {
  %s = anc.stack_alloc : !anc.stack<i64>
  %q = arith.divsi %x, %d : i64
  anc.snapshot %s, %x : !anc.stack<i64>, i64
  anc.drop %s, %x : !anc.stack<i64>, i64
  anc.stack_free %s : !anc.stack<i64>
  rev.return %x, %d : i64, i64
}
rev.func @outer(%z: i64, %x: i64, %d: i64, %e: i64) {
  %z1, %x1, %d1 = rev.routine (%z, %x, %d) : i64, i64, i64 compute {
  ^bb0(%cz: i64, %cx: i64, %cd: i64):
    %zero = arith.constant 0 : i64
    %t0 = anc.alloc %zero : i64
    %t1, %cx1, %cd1 = rev.call @share(%t0, %cx, %cd) : (i64, i64, i64) -> (i64, i64, i64)
    rev.yield %cz, %cx1, %cd1, %t1 : i64, i64, i64, i64
  } do {
  ^bb0(%dz: i64, %dx: i64, %dd: i64, %t: i64):
    %p = arith.divsi %t, %e : i64
    %dz1 = rev.add %dz, %p : i64
    rev.yield %dz1, %dx, %dd, %t : i64, i64, i64, i64
  }
  rev.return %z1, %x1, %d1, %e : i64, i64, i64, i64
}
rev.func @share(%t: i64, %x: i64, %d: i64) {
  %q = arith.divsi %x, %d : i64
  %t1 = rev.add %t, %q : i64
  rev.return %t1, %x, %d : i64, i64, i64
}
"""
"""``~outer`` re-runs the routine's compute, a forward call of ``@share``,
and uncomputes it with ``@share.inv``: both are the forward compile's
(which runs the uncompute too).  A zero ``%d`` fails in ``@share``, a zero
``%e`` in ``@outer.inv``'s own code.  ``@hoard``, which has no inverse,
comes first: the forward compile numbers its checks before ``@share``'s,
and the backward compile, which does not hold it, would give ``@share``'s
check another id if it numbered its own from 1."""


def defined(llvm_ir: str) -> set[str]:
    """The functions an LLVM module defines for other modules to call
    (external linkage): each one compiled in it."""
    return set(re.findall(r'^define (?!internal )[^@]*@"([^"]+)"\(', llvm_ir, re.M))


def declared(llvm_ir: str) -> set[str]:
    return set(re.findall(r'^declare [^@]*@"([^"]+)"\(', llvm_ir, re.M))


def test_the_inverses_call_the_forward_compiles_functions_instead_of_compiling_them_again():
    compiled = NativeModule.compile(parse_module(SHARED, "shared.mlir"))
    assert {"share", "share.inv", "outer"} <= defined(compiled.llvm_ir)
    assert compiled.uncall("outer", *compiled.call("outer", 1, 12, 3, 2)) == (1, 12, 3, 2)
    rest = compiled.rest
    assert rest.direction is Direction.BACKWARD and rest.machine_code.engine is compiled.machine_code.engine
    assert not defined(compiled.llvm_ir) & defined(rest.llvm_ir)  # nothing compiled twice
    assert {"share", "share.inv"} <= declared(rest.llvm_ir)
    assert "outer.inv" in defined(rest.llvm_ir) and set(rest.writes) >= {"outer.inv"}
    assert not {"share", "share.inv"} & set(rest.writes)  # their entry points are the forward compile's
    assert rest.rest is compiled


@pytest.mark.parametrize(
    ("arguments", "where"),
    [((3, 12, 0, 2), "shared.mlir:25:3"), ((3, 12, 3, 0), "shared.mlir:18:5")],
    ids=["in-the-forward-compile", "in-the-inverse"],
)
def test_an_error_in_either_modules_code_reads_as_the_interpreters(arguments: tuple[int, ...], where: str):
    """The forward compile's ``@share`` reports its own check id, which the
    rest's table (numbered after the forward one's) names too; the
    inverse's own checks are numbered after them."""
    module = parse_module(SHARED, "shared.mlir")
    compiled, interpreter = NativeModule.compile(module), RevInterpreter(module)
    assert compiled.call("outer", 1, 12, 3, 2) == interpreter.call("outer", 1, 12, 3, 2) == (3, 12, 3, 2)
    for _ in range(2):
        error = failure(lambda: compiled.uncall("outer", *arguments))
        assert_same_failure(error, failure(lambda: interpreter.uncall("outer", *arguments)))
        assert error.location == where and error.message == "integer division by zero"
    alone = NativeModule.compile(module, direction=Direction.BACKWARD)
    assert str(failure(lambda: alone.uncall("outer", *arguments))) == str(error)


def test_the_inverses_loaded_from_the_cache_call_the_forward_compiles_functions(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """The inverses, compiled or loaded from the cache, join the engine of
    the forward code loaded from the cache as they join compiled forward
    code: their declarations bind to that code, and errors read the same."""
    module = parse_module(SHARED, "shared.mlir")

    def both_ways() -> tuple[object, str]:
        compiled = NativeModule.compile(module)
        return compiled.uncall("outer", 3, 12, 3, 2), str(failure(lambda: compiled.uncall("outer", 3, 12, 0, 2)))

    expected = both_ways()
    assert expected[0] == (1, 12, 3, 2) and len(list(cache_home.glob("*.o"))) == 2
    target = HostTarget.detect()
    rest = NativeModule.compile(module).rest.llvm_ir
    backward = cache_home / (cache.key(rest, "jit", 3, target.triple, target.cpu, target.features) + ".o")
    backward.unlink()
    assert both_ways() == expected  # the forward code cached, the inverses compiled
    assert backward.exists()
    forbid_llvm(monkeypatch)
    assert both_ways() == expected  # both cached


ALIASED = """rev.func @accumulate(%a: memref<?xf64>, %b: memref<?xf64>) {
  %zero = arith.constant 0 : index
  %two = arith.constant 2.0 : f64
  %e = rev.take %a[%zero] : memref<?xf64>
  %e1 = rev.add %e, %two : f64
  rev.put %e1, %a[%zero] : memref<?xf64>
  %f = rev.take %b[%zero] : memref<?xf64>
  %f1 = rev.add %f, %two : f64
  rev.put %f1, %b[%zero] : memref<?xf64>
  rev.return
}
rev.func @undo_twice(%s: memref<?xf64>) {
  rev.uncall @accumulate(%s, %s) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}
"""
"""``~undo_twice`` calls ``@accumulate`` with one array twice, which the
forward compile never does: its ``@accumulate`` takes both parameters as
``noalias``."""


def test_a_function_whose_noalias_parameters_the_inverses_would_break_is_compiled_again_internally():
    module = parse_module(ALIASED, "aliased.mlir")
    compiled, interpreter = NativeModule.compile(module), RevInterpreter(module)
    s = np.array([10.0])
    assert compiled.call("undo_twice", s) == interpreter.call("undo_twice", np.array([10.0]))
    assert s.tolist() == [6.0]
    compiled.uncall("undo_twice", s)
    assert s.tolist() == [10.0]
    rest = compiled.rest.llvm_ir
    assert "accumulate" not in defined(rest) and "accumulate" not in declared(rest)
    assert re.search(r'^define internal [^@]*@"accumulate"\(', rest, re.M)  # its own copy
    assert "accumulate.inv" in declared(rest)  # called as the forward compile calls it
    assert compiled.rest.lowered.copies == {"accumulate"}


def routine(backend: str) -> rv.ReversibleFunction:
    @rv.reversible(backend=backend)
    def bump(t, x):
        t += x * x

    @rv.reversible(backend=backend)
    def squares(z, v):
        with rv.routine() as r:
            t = rv.ancilla(0.0)
            for i in range(len(v)):
                bump(t, v[i])
        z += t
        ~r

    return squares


def test_f_then_its_inverse_restores_the_inputs_with_each_function_compiled_once():
    f, reference = routine("native"), routine("interpreter")
    v = np.array([1.0, -2.0, 0.5])
    after = f(0.25, v)
    assert after[0] == reference(0.25, v)[0] == 5.5
    assert (~f)(*after)[0] == (~reference)(*after)[0] == 0.25
    spec = f.specialization_for(0.25, v)
    assert spec.native is not None
    forward, backward = spec.native.llvm_ir, spec.native.rest.llvm_ir
    assert not defined(forward) & defined(backward)
    assert {"bump", inverse_name("bump")} <= declared(backward) and {"bump", inverse_name("bump")} <= defined(forward)


def test_the_inverse_then_f_compiles_each_function_once_too():
    f = routine("native")
    v = np.array([3.0])
    assert (~f)(9.5, v)[0] == 0.5
    assert f(0.5, v)[0] == 9.5
    spec = f.specialization_for(0.5, v)
    assert spec.native is not None and spec.native.direction is Direction.FORWARD
    backward = spec.backward
    assert isinstance(backward, NativeModule) and spec.native.rest is backward and backward.rest is spec.native
    assert not defined(backward.llvm_ir) & defined(spec.native.llvm_ir)
    assert "bump" in defined(backward.llvm_ir) and "bump" in declared(spec.native.llvm_ir)


def pebbles() -> rv.ReversibleFunction:
    """Bennett's game (``examples/python/paper_bennett.py``): its inverse
    runs it forward (its uncalls of itself)."""

    @rv.reversible(backend="native")
    def step(s_out, s_in):
        s_out += s_in * 2.0

    @rv.reversible(backend="native")
    def bennett(s_in, s_out, level):
        if level == 0:
            step(s_out, s_in)
        else:
            rv.dec(level)
            t1 = rv.ancilla(0.0)
            t2 = rv.ancilla(0.0)
            bennett(s_in, t1, level)
            bennett(t1, t2, level)
            bennett(t2, s_out, level)
            (~bennett)(t1, t2, level)
            (~bennett)(s_in, t1, level)
            rv.free(t2)
            rv.free(t1)
            rv.inc(level)

    return bennett


def test_f_after_its_inverse_runs_in_the_backward_compile_where_that_holds_it():
    """The backward compile holds ``f``'s entry point: ``f`` compiles
    nothing more, and what runs ``f`` knows the arrays it writes."""
    f = pebbles()
    assert (~f)(1.0, 512.0, 2) == (1.0, 0.0, 2)
    spec = f.specialization_for(1.0, 512.0, 2)
    backward = spec.backward
    assert isinstance(backward, NativeModule) and backward.direction is Direction.BACKWARD
    assert f(1.0, 0.0, 2) == (1.0, 512.0, 2)
    assert spec.native is backward and "bennett" in backward.writes
    assert backward._rest.computed() is None  # no second compile


def test_a_ctrl_c_while_a_compile_stores_its_object_reaches_the_caller(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
):
    """A ``KeyboardInterrupt`` raised while the first ``~f`` stores the
    inverses' object (Ctrl-C pressed then) is raised by the call, with
    nothing printed (MCJIT's object-cache callback stored it once, where
    ctypes printed the interrupt and dropped it, and the call ran on); the
    cache keeps nothing of it and the engine none of its functions, so the
    next ``~f`` compiles the inverses again, runs and stores them."""
    f = routine("native")
    v = np.array([1.0, 2.0])
    assert f(0.0, v)[0] == 5.0
    kept = set(cache_home.iterdir())
    store = cache.store

    def interrupted(name: str, data: bytes) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cache, "store", interrupted)
    with pytest.raises(KeyboardInterrupt):
        (~f)(5.0, v)
    assert capfd.readouterr().err == ""
    assert set(cache_home.iterdir()) == kept
    monkeypatch.setattr(cache, "store", store)
    assert (~f)(5.0, v)[0] == 0.0
    assert len(set(cache_home.iterdir()) - kept) == 1


def test_a_ctrl_c_while_the_inverses_are_linked_leaves_them_linked(monkeypatch: pytest.MonkeyPatch):
    """A Ctrl-C pressed while MCJIT adds the inverses' object is raised at
    the first Python code after it, here the start of ``finalize_object``
    (made to raise once): the call raises it, the object is finalized
    anyway, and the next ``~f`` runs that object instead of refusing its
    functions as defined already (the cache off, so that nothing is read
    from it)."""
    monkeypatch.setenv(cache.ENABLE_ENV, "0")
    f = routine("native")
    v = np.array([1.0, 2.0])
    assert f(0.0, v)[0] == 5.0
    finalize = llvm.ExecutionEngine.finalize_object
    armed = [True]

    def interrupted(engine: llvm.ExecutionEngine) -> None:
        if armed:
            armed.clear()
            raise KeyboardInterrupt
        finalize(engine)

    monkeypatch.setattr(llvm.ExecutionEngine, "finalize_object", interrupted)
    with pytest.raises(KeyboardInterrupt):
        (~f)(5.0, v)
    assert not armed
    assert (~f)(5.0, v)[0] == 0.0
    assert (~f)(5.0, v)[0] == 0.0


@pytest.mark.parametrize(
    "text",
    ["define double @seven() {\n  ret double 7.0\n}\n", "define internal double @seven() {\n  ret double 7.0\n}\n"],
    ids=["exported", "exports nothing"],
)
def test_an_engine_has_an_object_only_once_it_is_linked(text: str, monkeypatch: pytest.MonkeyPatch):
    """A load interrupted before MCJIT adds the object (a Ctrl-C raised
    at ``add_object_file``'s start) leaves the engine without it, and
    ``has`` says so, for an object that exports nothing too (once true of
    it, so that ``jit`` would have used an engine that lacks it); a load
    that completes has it.  The engine holds another object first, as
    every engine that ``jit`` asks does (one a module joins)."""
    machine = HostTarget.detect().machine(3, "default")
    engine = Engine(machine, 3)
    first = "define double @one() {\n  ret double 1.0\n}\n"
    engine.load(first, machine.emit_object(llvm.parse_assembly(first)))
    module = llvm.parse_assembly(text)
    data = machine.emit_object(module)
    add = llvm.ExecutionEngine.add_object_file

    def interrupted(mcjit: llvm.ExecutionEngine, obj: llvm.ObjectFileRef) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(llvm.ExecutionEngine, "add_object_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        engine.load(text, data)
    assert not engine.has(text, module)
    monkeypatch.setattr(llvm.ExecutionEngine, "add_object_file", add)
    engine.load(text, data)
    assert engine.has(text, module)


def test_a_ctrl_c_before_an_engines_first_object_is_raised(monkeypatch: pytest.MonkeyPatch):
    """A Ctrl-C raised before MCJIT adds an engine's first object is the
    call's ``KeyboardInterrupt``: finalizing an MCJIT that holds nothing
    crashed the process."""
    machine = HostTarget.detect().machine(3, "default")
    text = "define double @one() {\n  ret double 1.0\n}\n"
    data = machine.emit_object(llvm.parse_assembly(text))

    def interrupted(mcjit: llvm.ExecutionEngine, obj: llvm.ObjectFileRef) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(llvm.ExecutionEngine, "add_object_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        Engine(machine, 3).load(text, data)


def test_an_address_lookup_waits_for_a_load(monkeypatch: pytest.MonkeyPatch):
    """A lookup in the engine waits while another thread links an object
    into it (held here in ``add_object_file``), and then finds it."""
    machine = HostTarget.detect().machine(3, "default")
    engine = Engine(machine, 3)
    text = "define double @seven() {\n  ret double 7.0\n}\n"
    data = machine.emit_object(llvm.parse_assembly(text))
    add = llvm.ExecutionEngine.add_object_file
    adding, release = threading.Event(), threading.Event()

    def held(mcjit: llvm.ExecutionEngine, obj: llvm.ObjectFileRef) -> None:
        adding.set()
        release.wait()
        add(mcjit, obj)

    monkeypatch.setattr(llvm.ExecutionEngine, "add_object_file", held)
    loader = threading.Thread(target=engine.load, args=(text, data))
    loader.start()
    adding.wait()
    found: list[int] = []
    lookup = threading.Thread(target=lambda: found.append(engine.address("seven")))
    lookup.start()
    lookup.join(0.2)
    waited = lookup.is_alive()
    release.set()
    loader.join()
    lookup.join()
    assert waited and found[0] != 0


def test_calls_running_while_the_inverses_join_the_engine_are_unaffected(monkeypatch: pytest.MonkeyPatch):
    """Forward calls in other threads run the engine's first module while
    the first ``~f`` adds the second to it: they go on until the inverses
    have run, and some of them overlap ``Engine.load`` (wrapped to tell;
    the cache off, so that the inverses are compiled, not read from it)."""
    monkeypatch.setenv(cache.ENABLE_ENV, "0")
    f = routine("native")
    v = np.array([1.0, 2.0])
    assert f(0.0, v)[0] == 5.0
    adds = {"started": 0, "finished": 0}
    load = Engine.load

    def counted(engine: Engine, text: str, data: bytes) -> None:
        adds["started"] += 1
        try:
            load(engine, text, data)
        finally:
            adds["finished"] += 1

    monkeypatch.setattr(Engine, "load", counted)
    start, done = threading.Barrier(4), threading.Event()
    forward: list[float] = []
    backward: list[float] = []
    overlapped: list[bool] = []

    def run_forward() -> None:
        start.wait()
        while not done.is_set():
            finished_before = adds["finished"]
            forward.append(f(0.0, v)[0])
            # began before the add ended, and ended after it began
            overlapped.append(finished_before == 0 and adds["started"] == 1)

    def run_backward() -> None:
        start.wait()
        try:
            for _ in range(20):
                backward.append((~f)(5.0, v)[0])
        finally:
            done.set()

    threads = [threading.Thread(target=run_backward)] + [threading.Thread(target=run_forward) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert adds == {"started": 1, "finished": 1} and any(overlapped)
    assert backward == [0.0] * 20 and forward and set(forward) == {5.0}


def test_an_engine_is_freed_with_its_last_holder():
    """Nothing the engine holds refers to it: its machine code goes when
    the last module of it does, not at the next collection of cycles."""
    machine_code = jit(NativeModule.compile(parse_module(SHARED, "shared.mlir")).llvm_ir)
    engine = weakref.ref(machine_code.engine)
    gc.disable()
    try:
        del machine_code
        assert engine() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("both_ways", [False, True], ids=["forward", "with-the-rest"])
def test_a_native_module_is_freed_with_its_last_holder(both_ways: bool):
    """No reference cycle holds a compile: the rest holds the first (its
    rest), the first holds the rest's machine code, and the rest only
    weakly, so both go, with their engine, when the last holder of either
    does."""
    compiled = NativeModule.compile(parse_module(SHARED, "shared.mlir"))
    assert compiled.call("outer", 1, 12, 3, 2) == (3, 12, 3, 2)
    first, engine = weakref.ref(compiled), weakref.ref(compiled.machine_code.engine)
    with collector_paused():
        if both_ways:
            rest = compiled.rest
            assert compiled.rest is rest  # one while held
            del compiled
            assert rest.rest is first() and rest.uncall("outer", 3, 12, 3, 2) == (1, 12, 3, 2)
            del rest
        else:
            del compiled
        assert first() is None and engine() is None


def test_a_rest_dropped_is_made_again_from_its_machine_code():
    compiled = NativeModule.compile(parse_module(SHARED, "shared.mlir"))
    rest = weakref.ref(compiled.rest)
    machine_code = compiled.rest.machine_code
    assert rest() is None  # held by nothing, gone
    again = compiled.rest
    assert again.machine_code is machine_code and again.rest is compiled
    assert again.uncall("outer", 3, 12, 3, 2) == (1, 12, 3, 2)


def test_only_another_direction_of_the_same_module_with_its_tolerance_compiles_beside_a_compile():
    """Borrowing takes a function of the same name for the same code."""
    module = parse_module(SHARED, "shared.mlir")
    first = NativeModule.compile(module).lowered
    for other, tolerance, direction, message in [
        (parse_module(SHARED, "shared.mlir"), None, Direction.BACKWARD, "not beside another module"),
        (module, None, Direction.FORWARD, "the forward functions cannot compile beside the forward functions"),
        (module, 1e-3, Direction.BACKWARD, "a tolerance of 0.001 cannot compile beside code of tolerance"),
    ]:
        with pytest.raises(ValueError, match=message):
            lower_to_llvm_ir(other, tolerance, direction, first)


def constant(value: int) -> str:
    return f"define i64 @foo() {{\n  ret i64 {value}\n}}\n"


@pytest.mark.parametrize("cached", [False, True], ids=["compiled", "cached"])
def test_machine_code_joining_an_engine_defines_nothing_the_engine_has(
    cached: bool, cache_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """Compiled or loaded from the cache, a second ``@foo`` is refused
    before it joins: the first is still the one found."""
    first = jit(constant(1))
    if cached:
        jit(constant(2))  # alone: its own engine, its object cached
        forbid_llvm(monkeypatch)
    with pytest.raises(ValueError, match="the module defines @foo, which the engine it joins defines already"):
        jit(constant(2), beside=first)
    assert ctypes.CFUNCTYPE(ctypes.c_int64)(first.address("foo"))() == 1
    with pytest.raises(ValueError, match="-O0 cannot join an engine compiling at -O3"):
        jit("define i64 @bar() {\n  ret i64 3\n}\n", 0, beside=first)


LOOPED = """rev.func @accumulate(%x: memref<?xf64>, %a: memref<?xf64>) {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %n = memref.dim %x, %zero : memref<?xf64>
  rev.for %zero to %n step %one : index () {
  ^bb0(%i: index):
    %v = rev.take %x[%i] : memref<?xf64>
    %v1 = rev.add %v, %two : f64
    rev.put %v1, %x[%i] : memref<?xf64>
    %e = rev.take %a[%i] : memref<?xf64>
    %e1 = rev.add %e, %two : f64
    rev.put %e1, %a[%i] : memref<?xf64>
    rev.yield
  }
  rev.return
}
"""
"""``@accumulate``'s loop checks ``x[i]`` and ``a[i]``: native code versions
it.  ``~undo`` runs ``@accumulate`` forward, as the forward compile does,
so the backward compile borrows it; ``~undo_twice`` passes it one array
twice, which the forward compile never does, so the backward compile
compiles it again (``ALIASED``), then two arrays, which read past the end
of ``%s`` where ``%x`` is longer."""
UNDO = (
    LOOPED
    + """rev.func @undo(%x: memref<?xf64>, %s: memref<?xf64>) {
  rev.uncall @accumulate(%x, %s) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}
"""
)
UNDO_TWICE = (
    LOOPED
    + """rev.func @undo_twice(%x: memref<?xf64>, %s: memref<?xf64>) {
  rev.uncall @accumulate(%s, %s) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.uncall @accumulate(%x, %s) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}
"""
)


def versioned_functions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions whose loops loop versioning is asked to version from now on."""
    seen: list[str] = []
    version_loop = loop_versioning.version_loop

    def recording(loop: scf.ForOp, entries: list[str]) -> scf.ForOp | None:
        function = loop.parent_op()
        while not isinstance(function, func.FuncOp):
            assert function is not None
            function = function.parent_op()
        seen.append(function.sym_name.data)
        return version_loop(loop, entries)

    monkeypatch.setattr(loop_versioning, "version_loop", recording)
    return seen


@pytest.mark.parametrize(
    ("source", "copies"), [(UNDO, set()), (UNDO_TWICE, {"accumulate"})], ids=["borrowed", "copied"]
)
def test_the_rest_versions_the_loops_of_the_functions_it_compiles_only(monkeypatch, source, copies):
    """The rest leaves the loops of the functions it borrows as they are
    (their bodies are dropped) and versions those of the functions it
    compiles, a copy included (found only once the analyses ran: the rest
    is lowered again); its LLVM IR and checks are those of a rest that
    versions every loop."""
    module = parse_module(source, "looped.mlir")
    first = lower_to_llvm_ir(module, direction=Direction.FORWARD)
    seen = versioned_functions(monkeypatch)
    rest = lower_to_llvm_ir(module, direction=Direction.BACKWARD, beside=first)
    assert rest.copies == copies
    assert ("accumulate" in seen) == bool(copies)
    assert "accumulate" in declared(rest.llvm_ir) or copies
    monkeypatch.setattr(std_form, "_unversioned", lambda work, exported: frozenset())
    everything = lower_to_llvm_ir(module, direction=Direction.BACKWARD, beside=first)
    assert rest.llvm_ir == everything.llvm_ir
    assert rest.check_table.attributes == everything.check_table.attributes


@pytest.mark.parametrize(("source", "name"), [(UNDO, "undo"), (UNDO_TWICE, "undo_twice")], ids=["borrowed", "copied"])
def test_a_loop_the_rest_runs_runs_as_the_interpreters(source, name):
    """``f`` then ``~f`` natively, as the interpreter runs them: ``f``,
    then ``~f`` (the rest, running ``@accumulate`` forward) restoring the
    inputs, then ``~f`` on a ``%s`` shorter than ``%x``, whose read past
    its end is the interpreter's error (message, op, location) and leaves
    the arrays as the interpreter leaves them."""
    module = parse_module(source, "looped.mlir")
    compiled, interpreter = NativeModule.compile(module), RevInterpreter(module)
    inputs = [np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0])]
    native_arrays, interpreted = [a.copy() for a in inputs], [a.copy() for a in inputs]
    compiled.call(name, *native_arrays)
    interpreter.call(name, *interpreted)
    assert [a.tolist() for a in native_arrays] == [a.tolist() for a in interpreted] != [a.tolist() for a in inputs]
    compiled.uncall(name, *native_arrays)
    interpreter.uncall(name, *interpreted)
    assert [a.tolist() for a in native_arrays] == [a.tolist() for a in interpreted] == [a.tolist() for a in inputs]
    short = [np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0])]
    native_arrays, interpreted = [a.copy() for a in short], [a.copy() for a in short]
    error = failure(lambda: compiled.uncall(name, *native_arrays))
    assert_same_failure(error, failure(lambda: interpreter.uncall(name, *interpreted)))
    take = LOOPED.splitlines().index("    %e = rev.take %a[%i] : memref<?xf64>") + 1
    assert (error.op_name, error.location) == ("rev.take", f"looped.mlir:{take}:5")
    assert [a.tolist() for a in native_arrays] == [a.tolist() for a in interpreted]


def test_a_function_in_a_cycle_of_calls_is_versioned_where_borrowed():
    """rev-host-safety checks the stack before each call in a cycle, so a
    versioned loop holding one registers that check twice: the rest
    versions a borrowed function in a cycle, so that the ids of the checks
    after it stay those of a rest that versions everything."""
    work = parse_module(
        """func.func @cycle(%n: index) {
  func.call @cycle(%n) : (index) -> ()
  func.return
}
func.func @straight(%n: index) {
  func.call @cycle(%n) : (index) -> ()
  func.return
}
func.func @own(%n: index) {
  func.return
}
""",
        "cycle.mlir",
    )
    assert std_form._unversioned(work, {"cycle", "straight"}) == {"straight"}
