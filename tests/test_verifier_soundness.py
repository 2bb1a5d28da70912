"""Programs the verifier used to accept and that then went wrong: an element
written at an index read from the array being written (``x[x[0]] += 1``: the
inverse restored another element), and values used before their definition
(reordered silently by the inverter, an internal error in the interpreter, a
RecursionError for a self-use).  Rules ``index-read`` and ``dominance`` reject
them with a diagnostic at the op, in MLIR and at the user's Python line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith, cf, func
from xdsl.dialects.builtin import Float64Type, ModuleOp
from xdsl.ir import Block, Operation, Region
from xdsl.utils.exceptions import VerifyException

import revmlir as rv
from revmlir.dialects import rev
from revmlir.errors import InvertibilityError, ReversibilityViolation, RuleViolation, describe_op
from revmlir.ir_rules import DominanceChecker, _defined_in_scope, check_ir_rules
from revmlir.parsing import parse_module

HERE = Path(__file__)
LINES = HERE.read_text().splitlines()
BACKENDS = ["native", "interpreter"]


def line_of(marker: str) -> int:
    matches = [i + 1 for i, line in enumerate(LINES) if line.rstrip().endswith(marker)]
    assert len(matches) == 1, marker
    return matches[0]


def rule_of(text: str) -> RuleViolation:
    """The rule ``text`` breaks: dominance is checked for every op while
    parsing (``revmlir.ir_rules``), the rest by the rev verifier."""
    with pytest.raises(RuleViolation) as info:
        parse_module(text)
    return info.value


# -- index-read: from Python ----------------------------------------------------


def test_index_read_from_the_written_array_is_rejected_at_its_line():
    @rv.reversible
    def f(x):
        x[x[0]] += 1  # E:self-index

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        f(np.zeros(3, dtype=np.int64))
    error = info.value
    assert (error.filename, error.lineno) == (str(HERE), line_of("# E:self-index"))
    assert "computes its indices from 'memref.load'" in str(error)
    assert "Copy the index into an ancilla first" in str(error)


def test_index_computed_by_arithmetic_is_rejected_too():
    @rv.reversible(backend="interpreter")
    def g(x):
        x[x[0] % 2] ^= 1  # E:mod-index

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        g(np.zeros(3, dtype=np.int64))
    assert info.value.lineno == line_of("# E:mod-index")


def test_a_swap_with_an_index_read_from_the_array_is_rejected():
    @rv.reversible
    def s(x):
        x[0], x[x[0]] = x[x[0]], x[0]  # E:swap-index

    with pytest.raises(rv.ReversibleSyntaxError) as info:
        s(np.array([1, 2, 3]))
    assert info.value.lineno == line_of("# E:swap-index")
    assert "[index-read]" not in str(info.value)  # the frontend prints the message alone


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_ancilla_copy_the_hint_suggests_is_checked_at_run_time(backend: str):
    @rv.reversible(backend=backend)
    def f(x):
        i = rv.ancilla(x[0])
        x[i] += 1
        rv.free(i, x[0])

    x = np.array([2, 0, 0])
    f(x)
    assert x.tolist() == [2, 0, 1]
    (~f)(x)
    assert x.tolist() == [2, 0, 0]
    with pytest.raises(InvertibilityError, match="ancilla freed holding 0, expected 1"):
        f(np.zeros(3, dtype=np.int64))  # x[0] was the element written: no inverse


@pytest.mark.parametrize("backend", BACKENDS)
def test_indices_read_elsewhere_stay_accepted(backend: str):
    @rv.reversible(backend=backend)
    def f(x, p, m):
        x[p[0]] += 1
        m[0, m[1, 0]] += 5  # row 1 is read, row 0 written: distinct by a constant

    x, p, m = np.zeros(3, dtype=np.int64), np.array([2, 0]), np.array([[0, 0], [1, 0]])
    f(x, p, m)
    assert x.tolist() == [0, 0, 1] and m.tolist() == [[0, 5], [1, 0]]
    (~f)(x, p, m)
    assert x.tolist() == [0, 0, 0] and m.tolist() == [[0, 0], [1, 0]]


# -- index-read: in MLIR --------------------------------------------------------

SELF_INDEX = """
rev.func @f(%x: memref<3xi64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<3xi64>
  %i = arith.index_cast %v : i64 to index
  %e = rev.take %x[%i] : memref<3xi64>
  %one = arith.constant 1 : i64
  %e1 = rev.add %e, %one : i64
  rev.put %e1, %x[%i] : memref<3xi64>
  rev.return
}
"""


def test_mlir_self_index_names_the_put_and_the_load():
    violation = rule_of(SELF_INDEX)
    assert violation.rule == "index-read"
    assert isinstance(violation.op, rev.PutOp)
    assert "'memref.load' at <stdin>:4:3" in violation.message


def test_a_load_at_a_distinct_constant_index_does_not_excuse_a_dynamic_put():
    # x[1] holds the index, x[x[1]] is written: x[1] = 1 would write it
    violation = rule_of(SELF_INDEX.replace("%c0 = arith.constant 0", "%c0 = arith.constant 1"))
    assert violation.rule == "index-read"


# -- dominance ------------------------------------------------------------------

USE_BEFORE_DEF = """
rev.func @f(%y: f64, %a: f64) {
  %y1 = rev.add %y, %t : f64
  %t = arith.mulf %a, %a : f64
  rev.return %y1, %a : f64, f64
}
"""

SELF_USE = """
rev.func @f(%y: f64, %a: f64) {
  %p = arith.mulf %p, %a : f64
  %y1 = rev.add %y, %p : f64
  rev.return %y1, %a : f64, f64
}
"""


def test_use_before_definition():
    violation = rule_of(USE_BEFORE_DEF)
    assert violation.rule == "dominance"
    assert isinstance(violation.op, rev.AddOp)
    assert "uses %t before 'arith.mulf' at <stdin>:4:3 defines it" in violation.message


def test_self_use_is_a_diagnostic_not_a_recursion_error():
    violation = rule_of(SELF_USE)
    assert violation.rule == "dominance"
    assert violation.message == "'arith.mulf' uses %p, a result of itself"


def test_a_value_of_another_region_is_rejected():
    """The parser refuses such text; built IR (a pass, the builder) can hold it."""
    f64 = Float64Type()
    inner = Block(arg_types=[f64])
    square = arith.MulfOp(inner.args[0], inner.args[0])
    square.result.name_hint = "t"
    inner.add_ops([square, rev.YieldOp(inner.args[0])])
    body = Block(arg_types=[f64])
    inv = rev.InvOp([body.args[0]], Region(inner))
    outer_use = rev.AddOp(inv.results[0], square.result)
    body.add_ops([inv, outer_use, rev.ReturnOp(outer_use.results[0])])
    func = rev.FuncOp("f", [f64], Region(body))
    with pytest.raises(ReversibilityViolation) as info:
        ModuleOp([func]).verify()
    assert info.value.rule == "dominance" and info.value.op is outer_use
    assert "%t, which is not defined in its region or a region around it" in info.value.message


# -- found by the mutation fuzzer -----------------------------------------------


def test_a_function_must_end_with_rev_return():
    """``rev.yield`` ending a function was accepted; native code then failed
    inside LLVM (an internal error of rev-run)."""
    with pytest.raises(VerifyException, match="@f must end with 'rev.return', not 'rev.yield'"):
        parse_module("rev.func @f(%y: f64) {\n  rev.yield %y : f64\n}\n")


def test_dominance_is_decided_in_one_walk_where_it_holds_and_checked_operand_by_operand_otherwise():
    """Every example's functions pass the one walk (``_defined_in_scope``),
    which is what verifies them; each module that breaks the rule fails it,
    and the checker then names the operand; a function whose body has two
    blocks goes to the checker too, which accepts it."""
    for path in sorted((HERE.parent.parent / "examples").glob("*.mlir")):
        for function in parse_module(path.read_text()).ops:
            assert _defined_in_scope(function, set()), (path.name, function)
    for text in (USE_BEFORE_DEF, SELF_USE):
        with pytest.raises(RuleViolation):
            parse_module(text)
    module = ModuleOp([])  # built, as the parser would refuse these
    f64 = Float64Type()
    entry, second = Block(arg_types=[f64]), Block()
    square = arith.MulfOp(entry.args[0], entry.args[0])
    entry.add_ops([square, cf.BranchOp(second)])
    second.add_op(func.ReturnOp(square.result))
    function = func.FuncOp("g", ([f64], [f64]), Region([entry, second]))
    module.body.block.add_op(function)
    assert not _defined_in_scope(function, set())
    assert list(DominanceChecker(function).violations()) == []
    second.insert_op_before(arith.AddfOp(square.result, square.result), second.first_op)
    inner = second.first_op
    assert inner is not None
    inner.operands = [inner.results[0], square.result]
    assert [op for op, _ in DominanceChecker(function).violations()] == [inner]


NESTED_SCOPES = """
func.func @g(%x: f64, %c: i1, %n: index) -> f64 {
  %r = scf.if %c -> (f64) {
    %a = arith.addf %x, %x : f64
    scf.yield %a : f64
  } else {
    %b = arith.mulf %x, %x : f64
    scf.yield %b : f64
  }
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %s = scf.for %i = %zero to %n step %one iter_args(%acc = %r) -> (f64) {
    %t = arith.addf %acc, %x : f64
    scf.yield %t : f64
  }
  %e = arith.subf %s, %x : f64
  func.return %e : f64
}
"""


@pytest.mark.parametrize(
    "user, used, at",
    [("b", "a", "7:5"), ("e", "a", "16:3"), ("e", "acc", "16:3")],
    ids=["a value of the sibling region", "a value escaping its region", "an inner block argument used outside"],
)
def test_the_one_walk_leaves_each_scope_at_its_end(user: str, used: str, at: str):
    """A region's values (its ops' results, its block's arguments) are out
    of scope in the region after it and after the op holding it: the one
    walk refuses such a use, and the checker names it at the op using it."""
    function = parse_module(NESTED_SCOPES).ops.first
    assert function is not None
    assert _defined_in_scope(function, set())
    named = {v.name_hint: v for op in function.walk() for r in op.regions for b in r.blocks for v in b.args}
    named.update({op.results[0].name_hint: op.results[0] for op in function.walk() if op.results})
    using = named[user].owner
    assert isinstance(using, Operation)
    using.operands = [named[used], *using.operands[1:]]
    assert not _defined_in_scope(function, set())
    with pytest.raises(RuleViolation) as info:
        check_ir_rules(function)
    assert info.value.rule == "dominance" and info.value.op is using
    assert info.value.message == (
        f"'{using.name}' uses %{used}, which is not defined in its region or a region around it"
    )
    assert describe_op(using) == f"'{using.name}' at <stdin>:{at}"
