"""The calls that may recurse: those within a cycle of the call graph,
which ``make-resumable`` and ``rev-host-safety`` both ask
``revmlir.call_graph`` for."""

from __future__ import annotations

from xdsl.dialects import func

from revmlir.call_graph import recursive_calls, recursive_functions
from revmlir.parsing import parse_module

MODULE = """
func.func @self(%n: index) -> index {
  %r = func.call @self(%n) : (index) -> index
  func.return %r : index
}
func.func @even(%n: index) -> index {
  %r = func.call @odd(%n) : (index) -> index
  func.return %r : index
}
func.func @odd(%n: index) -> index {
  %r = func.call @even(%n) : (index) -> index
  %s = func.call @leaf(%r) : (index) -> index
  func.return %s : index
}
func.func @into(%n: index) -> index {
  %r = func.call @even(%n) : (index) -> index
  %s = func.call @outside(%r) : (index) -> index
  func.return %s : index
}
func.func @leaf(%n: index) -> index {
  func.return %n : index
}
func.func private @outside(%n: index) -> index
"""


def _calls() -> tuple[list[func.FuncOp], set[tuple[str, str]]]:
    functions = [f for f in parse_module(MODULE).ops if isinstance(f, func.FuncOp) and not f.is_declaration]
    found = set()
    for call in recursive_calls(functions):
        caller = call.parent_op()
        assert isinstance(caller, func.FuncOp)
        found.add((caller.sym_name.data, call.callee.string_value()))
    return functions, found


def test_the_calls_within_a_cycle_are_found_and_no_others():
    """A function calling into a cycle, a callee the cycle leaves for, and
    a function outside the set are not part of it."""
    functions, found = _calls()
    assert found == {("self", "self"), ("even", "odd"), ("odd", "even")}
    assert recursive_functions(functions) == {"self", "even", "odd"}


def test_a_cycle_through_a_function_left_out_is_none():
    """Only the functions given are the graph: without @odd, @even's call
    leads nowhere."""
    functions = [f for f in _calls()[0] if f.sym_name.data != "odd"]
    assert recursive_functions(functions) == {"self"}


def test_a_call_chain_deeper_than_pythons_recursion_limit_is_walked():
    """The search keeps its own stack: a chain of 1,500 functions whose
    last calls its first is one cycle, and the chain without that call
    none, where a recursive search raised RecursionError."""
    count = 1500
    names = [f"f{i}" for i in range(count)]
    functions = []
    for i, name in enumerate(names):
        function = func.FuncOp(name, ((), ()))
        function.body.block.add_op(func.CallOp(names[(i + 1) % count], [], []))
        function.body.block.add_op(func.ReturnOp())
        functions.append(function)
    assert len(recursive_calls(functions)) == count
    assert recursive_functions(functions[1:]) == set()
