"""Arrays that share memory.

Native code takes an array parameter as a ``noalias`` pointer where
``revmlir.lowering.aliasing`` proves it safe, so a call inside the module
may pass one array twice and still compute what the interpreter computes.
A call from Python must not pass an array the function writes together with
another argument that shares its memory, which every backend checks (in
machine code on the common path); arrays that are only read may overlap."""

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func

import revmlir as rv
import revmlir.lowering.std_to_llvm
import revmlir.runtime.native
from revmlir.dialects import rev
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.aliasing import analyse_arrays
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.naming import inverse_name
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime.native import Direction, NativeModule
from revmlir.semantics import written_arguments

ROOT = Path(__file__).resolve().parent.parent

ACCUMULATE = """
rev.func @accumulate(%x: memref<?xf64>, %a: memref<?xf64>, %b: memref<?xf64>) {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %n = memref.dim %x, %zero : memref<?xf64>
  rev.for %zero to %n step %one : index () {
  ^bb0(%i: index):
    %v = rev.take %x[%i] : memref<?xf64>
    %e = rev.take %a[%zero] : memref<?xf64>
    %e1 = rev.add %e, %v : f64
    rev.put %e1, %a[%zero] : memref<?xf64>
    %f = rev.take %b[%zero] : memref<?xf64>
    %f1 = rev.add %f, %v : f64
    rev.put %f1, %b[%zero] : memref<?xf64>
    rev.put %v, %x[%i] : memref<?xf64>
    rev.yield
  }
  rev.return
}

rev.func @twice(%x: memref<?xf64>, %s: memref<?xf64>) {
  rev.call @accumulate(%x, %s, %s) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

rev.func @fixed(%x: memref<4xf64>, %s: memref<4xf64>) {
  rev.call @copy_first(%x, %s) : (memref<4xf64>, memref<4xf64>) -> ()
  rev.return
}

rev.func @copy_first(%x: memref<4xf64>, %s: memref<4xf64>) {
  %zero = arith.constant 0 : index
  %v = rev.take %x[%zero] : memref<4xf64>
  %e = rev.take %s[%zero] : memref<4xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %s[%zero] : memref<4xf64>
  rev.put %v, %x[%zero] : memref<4xf64>
  rev.return
}
"""


@pytest.fixture(scope="module", params=["native", "interpreter"])
def runner(request):
    if request.param == "native":
        return NativeModule.compile(parse_module(ACCUMULATE))
    return RevInterpreter(parse_module(ACCUMULATE))


def test_an_array_passed_twice_inside_the_module_gets_both_updates(runner):
    # With @accumulate's %a and %b noalias, LLVM keeps s[0] in two registers
    # across the loop and stores the sum once: half the answer.
    x = np.arange(1.0, 101.0)
    _, s = runner.call("twice", x, np.zeros(1))
    assert s[0] == 2 * 5050.0
    _, back = runner.uncall("twice", x, s)
    assert back[0] == 0.0


@pytest.mark.parametrize(
    "slices",
    [
        (slice(None), slice(None)),  # the same array
        (slice(0, 60), slice(50, 100)),  # overlapping views
    ],
)
def test_arrays_from_python_that_share_memory_are_refused(runner, slices):
    buffer = np.arange(100.0)
    before = buffer.copy()
    with pytest.raises(ValueError, match=r"arguments #0 and #1 of @twice share memory"):
        runner.call("twice", buffer[slices[0]], buffer[slices[1]])
    np.testing.assert_array_equal(buffer, before)


def test_the_overlapping_pair_is_named_among_several_arrays(runner):
    s = np.zeros(1)
    with pytest.raises(ValueError, match=r"arguments #1 and #2 of @accumulate share memory"):
        runner.call("accumulate", np.ones(3), s, s)


def test_disjoint_views_of_one_buffer_are_distinct_arrays(runner):
    buffer = np.arange(100.0)
    _, s = runner.call("twice", buffer[:99], buffer[99:])
    assert s[0] == 99.0 + 2 * sum(range(99))


def test_an_empty_array_overlaps_nothing(runner):
    buffer = np.arange(4.0)
    x, a, b = runner.call("accumulate", buffer[1:1], buffer[0:2], np.zeros(1))
    assert x.size == 0 and b[0] == 0.0
    np.testing.assert_array_equal(a, [0.0, 1.0])


def test_static_shapes_are_checked_on_the_long_way_too(runner):
    # memref<4xf64> arguments are stored by Python, not the machine code
    buffer = np.zeros(6)
    with pytest.raises(ValueError, match=r"arguments #0 and #1 of @fixed share memory"):
        runner.call("fixed", buffer[:4], buffer[2:])
    _, s = runner.call("fixed", np.full(4, 3.0), np.zeros(4))
    assert s[0] == 3.0


@rv.reversible
def add_into(y, x):
    for i in range(len(x)):
        y[i] += x[i]


@rv.reversible
def dot(s, x, y):
    for i in range(len(x)):
        s += x[i] * y[i]


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_the_frontend_refuses_an_overlap_with_a_written_array(backend):
    x = np.ones(5)
    with pytest.raises(ValueError, match=r"^arguments 'y' and 'x' of add_into share memory, and add_into writes one"):
        add_into.specialization_for(x, x).run((x, x), backward=False, backend=backend)
    y, _ = add_into(np.zeros(5), x)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_arrays_only_read_may_be_one_array(backend):
    x = np.arange(4.0)
    s, _, _ = dot.specialization_for(0.0, x, x).run((0.0, x, x), backward=False, backend=backend)
    assert s == 14.0


@pytest.mark.parametrize(
    "path",
    [
        *sorted((ROOT / "examples").glob("*.mlir")),
        *(
            ROOT / "tests/filecheck/lowering" / f
            for f in ("noalias.mlir", "parallel.mlir", "parallel_calls.mlir", "rev_to_std.mlir", "std_to_llvm.mlir")
        ),
    ],
    ids=lambda p: p.name,
)
def test_the_lowering_covers_the_arrays_the_value_model_says_are_written(path):
    """One analysis says which arrays a function writes
    (``revmlir.semantics.written_arguments``), asked of two forms: rev IR
    (what every backend checks a call against) and the std IR native code
    lowers it to, its checks one op each (what ``noalias`` rests on).  The
    second answer must cover the first, for each function and the inverse
    of each ``rev.func``, or a ``noalias`` parameter could be written."""
    module = parse_module(path.read_text(), str(path))
    written = written_arguments(module)
    lowered = module.clone()
    RevInvertPass().apply(make_context(), lowered)
    lower_to_std(lowered, check_ops=True)
    cover = analyse_arrays(lowered).written
    reversible = {op.sym_name.data for op in module.ops if isinstance(op, rev.FuncOp)}
    for name, positions in written.items():
        for function in (name, inverse_name(name)) if name in reversible else (name,):
            assert positions <= cover[function], (function, positions, cover[function])


def test_the_array_analysis_runs_once_per_compilation(monkeypatch):
    """The lowering analyses the std form's arrays once: the arrays a call
    checks for overlaps and the ``noalias`` parameters of the translation
    come from the same ``analyse_arrays`` (it used to run twice)."""
    runs = []

    def counted(module):
        runs.append(module.clone())
        return analyse_arrays(module)

    monkeypatch.setattr(revmlir.runtime.native, "analyse_arrays", counted)
    monkeypatch.setattr(revmlir.lowering.std_to_llvm, "analyse_arrays", counted)
    native = NativeModule.compile(parse_module(ACCUMULATE), opt_level=0, direction=Direction.BOTH)
    assert len(runs) == 1
    assert native.writes == analyse_arrays(runs[0]).written
    assert {1, 2} <= native.writes["accumulate"] and {1, 2} <= native.writes[inverse_name("accumulate")]
    assert "noalias" in native.llvm_ir  # the translation used the analysis it was given


HOISTED = ROOT / "tests/filecheck/lowering/hoisted_alloca_noalias.mlir"


def test_a_cast_is_the_array_it_views():
    """A store through a ``memref.cast`` of an argument writes that
    argument alone (``semantics.reference_origin`` follows the cast): once
    a reference of unknown origin, which may be any argument, so a function
    that only read ``%x`` was taken to write it."""
    module = parse_module(
        "func.func @f(%y: memref<4xf64>, %x: memref<4xf64>) {\n  %c0 = arith.constant 0 : index\n"
        "  %v = memref.load %x[%c0] : memref<4xf64>\n"
        '  %c = "memref.cast"(%y) : (memref<4xf64>) -> memref<?xf64>\n'
        '  %d = "memref.cast"(%c) : (memref<?xf64>) -> memref<4xf64>\n'
        "  memref.store %v, %d[%c0] : memref<4xf64>\n  func.return\n}\n"
    )
    assert written_arguments(module) == {"f": frozenset({0})}


def test_a_hoisted_alloca_leaves_results_and_parameters_as_in_the_frame():
    """The function whose static ``alloca`` the lowering hoists (and casts)
    computes what the one of a frame array does, both with ``noalias``
    arrays (the LLVM IR: ``hoisted_alloca_noalias.mlir``)."""
    native = NativeModule.compile(parse_module(HOISTED.read_text(), str(HOISTED)))
    functions = {op.sym_name.data: op for op in native.module.ops if isinstance(op, func.FuncOp)}
    x = np.array([1.0, -2.5, 3.0])
    for name in ("hoisted", "in_the_frame"):
        y = np.zeros(3)
        native.std_caller(functions[name])([y, x])
        assert np.array_equal(y, 2 * x)
        assert re.search(rf'define void @"{name}"\(ptr noalias %"\.1", i64 %"\.2", ptr noalias', native.llvm_ir)
