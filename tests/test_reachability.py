"""What a kernel reaches, and the compile that drops the rest: calls,
uncalls (the callee's inverse), rule functions a declaration names."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from revmlir.dialects.rev import FuncOp
from revmlir.gpu.program import compile_kernels, lower_kernels
from revmlir.ir_utils import clone
from revmlir.naming import inverse_name
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass, derive_inverses, invert_reached
from revmlir.reachability import drop_functions_outside, drop_unreached_functions, reached_functions
from revmlir.semantics import Function
from test_adjoint_inverse import ANCILLA, adjoint_module

EXAMPLES = Path(__file__).parent.parent / "examples"

SQUARE = """
rev.func @sq(%y: f64, %x: f64) {
  %t = arith.mulf %x, %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
"""

CALLS = (
    SQUARE
    + """
rev.func @twice(%y: f64, %x: f64) {
  %t = arith.addf %x, %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
rev.func @unused(%y: f64, %x: f64) {
  %y1, %x1 = rev.call @twice(%y, %x) : (f64, f64) -> (f64, f64)
  rev.return %y1, %x1 : f64, f64
}
rev.func @k(%y: memref<?xf64>, %x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %v = rev.take %y[%i] : memref<?xf64>
    %w = rev.take %x[%i] : memref<?xf64>
    %v1, %w1 = rev.uncall @sq(%v, %w) : (f64, f64) -> (f64, f64)
    rev.put %w1, %x[%i] : memref<?xf64>
    rev.put %v1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}
"""
)


def _names(module) -> list[str]:
    return [op.sym_name.data for op in module.ops if isinstance(op, FuncOp)]


def test_an_uncall_reaches_the_inverse_and_nothing_else_is_kept():
    module = parse_module(CALLS, "calls.mlir")
    RevInvertPass().apply(make_context(), module)
    assert reached_functions(module, ["k"]) == {"k", "sq.inv"}
    assert reached_functions(module, ["unused.inv"]) == {"unused.inv", "twice.inv"}
    drop_unreached_functions(module, ["k"])
    assert _names(module) == ["sq.inv", "k"]


def test_an_uncall_without_the_inverse_reaches_the_callee():
    """``rev-lower-to-std`` makes the inverse from the callee then."""
    module = parse_module(CALLS, "calls.mlir")
    assert reached_functions(module, ["k"]) == {"k", "sq"}


def test_a_kernel_compile_lowers_only_what_the_kernel_calls():
    module = parse_module(CALLS, "calls.mlir")
    before = str(module)
    work, arguments, _ = lower_kernels(module, ["k"])
    lowered = {op.sym_name.data for op in work.walk() if hasattr(op, "sym_name") and op.sym_name is not None}
    assert {"sq.inv", "k"} <= lowered
    assert not {"sq", "twice", "twice.inv", "unused", "unused.inv", "k.inv"} & lowered
    assert set(arguments) == {"k", "sq.inv"}
    assert ".entry k(" in compile_kernels(module, ["k"]).ptx
    assert str(module) == before


RULES = """
rev.extern @scale : (f64) -> f64 {tangent = @scale_tan}
func.func @scale_tan(%x: f64, %dx: f64) -> f64 {
  %r = arith.addf %dx, %dx : f64
  func.return %r : f64
}
func.func @other(%x: f64) -> f64 {
  func.return %x : f64
}
"""


def test_a_declaration_keeps_the_rule_functions_it_names():
    module = parse_module(RULES, "rules.mlir")
    assert reached_functions(module, []) == {"scale_tan"}
    drop_unreached_functions(module, [])
    assert [op.sym_name.data for op in module.ops] == ["scale", "scale_tan"]


BACKWARDS = (
    SQUARE
    + """
rev.func @f(%y: f64, %x: f64) {
  %y1, %x1 = rev.inv (%y, %x) : f64, f64 {
  ^bb0(%a: f64, %b: f64):
    %a1, %b1 = rev.call @sq(%a, %b) : (f64, f64) -> (f64, f64)
    rev.yield %a1, %b1 : f64, f64
  }
  rev.return %y1, %x1 : f64, f64
}
"""
)


def test_a_call_in_code_run_backwards_reaches_the_inverse_too():
    module = parse_module(BACKWARDS, "backwards.mlir")
    RevInvertPass().apply(make_context(), module)
    assert reached_functions(module, ["f"]) == {"f", "sq", "sq.inv"}


INTERPRETER_ONLY = (
    """
rev.extern @lgamma : (f64) -> f64
rev.func @uncalled(%y: f64, %x: f64) {
  %t = rev.apply @lgamma(%x) : (f64) -> f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
"""
    + CALLS
)


def test_what_the_lowering_refuses_in_an_uncalled_function_does_not_stop_a_kernel():
    """``@lgamma`` has no C symbol: native code of ``@uncalled`` is refused."""
    module = parse_module(INTERPRETER_ONLY, "interpreter_only.mlir")
    assert ".entry k(" in compile_kernels(module, ["k"]).ptx
    with pytest.raises(PassFailedException, match="which has no C symbol"):
        compile_kernels(module, ["k", "uncalled"])


def _uncalls_an_adjoint() -> ModuleOp:
    """``@f``, its ``@f.adj`` (which frees a value it computed, which its
    inverse would forget: the inverter refuses it) and ``@caller``, which
    uncalls ``@f.adj``."""
    return adjoint_module(ANCILLA.replace("rev.call @f.adj", "rev.uncall @f.adj"))


def test_a_name_no_inverse_has_is_not_built():
    """The inverse of ``@sq.inv`` is ``@sq``: nothing builds ``@sq.inv.inv``."""
    module = parse_module(CALLS, "calls.mlir")
    RevInvertPass().apply(make_context(), module)
    before = _names(module)
    assert invert_reached(module, ["sq.inv.inv"]) == set()
    assert _names(module) == before


def test_an_uncall_of_a_function_the_inverter_refuses_reaches_the_function():
    module = _uncalls_an_adjoint()
    assert invert_reached(module, ["caller"]) == {"caller", "f.adj"}
    assert _names(module) == ["f", "f.adj", "caller"]


def test_inverting_what_is_reached_leaves_what_inverting_everything_and_dropping_the_rest_leaves():
    """``invert_reached`` then ``drop_functions_outside`` against
    ``derive_inverses`` (``RevInvertPass(where_possible=True)``, each new
    inverse marked derived) then ``drop_unreached_functions``,
    from every function and every inverse name of each module: the same
    text, or the same name missing."""
    sources = [CALLS, BACKWARDS, RULES, INTERPRETER_ONLY]
    modules = [parse_module(text) for text in sources] + [_uncalls_an_adjoint()]
    modules += [parse_module(path.read_text()) for path in sorted(EXAMPLES.glob("*.mlir"))]
    for module in modules:
        names = [f.sym_name.data for f in module.ops if isinstance(f, Function)]
        for root in sorted({*names, *(inverse_name(n) for n in names)}):
            everything, reached_only = clone(module), clone(module)
            derive_inverses(make_context(), everything)
            present = {f.sym_name.data for f in everything.ops if isinstance(f, Function)}
            reached = invert_reached(reached_only, [root])
            assert (root in reached) == (root in present), root
            if root in present:
                drop_unreached_functions(everything, [root])
                drop_functions_outside(reached_only, reached)
                assert str(reached_only) == str(everything), root


def test_a_kernel_name_that_names_no_function_is_refused_with_every_function_and_inverse():
    module = parse_module(CALLS, "calls.mlir")
    with pytest.raises(PassFailedException) as raised:
        lower_kernels(module, ["k", "nope"])
    assert str(raised.value) == (
        "no function @nope to make a kernel of (module has: "
        "@sq, @sq.inv, @twice, @twice.inv, @unused, @unused.inv, @k, @k.inv)"
    )
    with pytest.raises(PassFailedException, match=r"no function @f\.adj\.inv to make a kernel of \(module has: "):
        lower_kernels(_uncalls_an_adjoint(), ["f.adj.inv"])
