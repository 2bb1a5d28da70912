"""Counters (``revmlir.counters``): found once per function, callees first,
so that a long call chain verifies in time linear in its length, with the
answers and diagnostics of the rule in ``revmlir/counters.py``'s
docstring."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest.mock import patch

import pytest
from xdsl.utils.exceptions import VerifyException

from revmlir import counters
from revmlir.counters import counter_arguments
from revmlir.errors import ReversibilityViolation, describe_op
from revmlir.parsing import parse_module, verify_module

COUNT = """  rev.safe {
    %z = arith.constant 0 : index
    %v = memref.load %c[%z] : memref<1xi64>
    %one = arith.constant 1 : i64
    %v1 = arith.addi %v, %one : i64
    memref.store %v1, %c[%z] : memref<1xi64>
  }
"""
"""A count into ``%c`` in a safe region."""

READ = """  %zr = arith.constant 0 : index
  %r = memref.load %c[%zr] : memref<1xi64>
  %rf = arith.sitofp %r : i64 to f64
  %y0 = rev.add %y, %rf : f64
"""
"""A read of ``%c`` by reversible code, into ``%y0``."""


@dataclass(frozen=True)
class Function:
    """What a function ``@f<i>(%y: f64, %c: memref<1xi64>)`` does with ``%c``."""

    reads: bool
    counts: bool
    calls: tuple[int, ...]

    def source(self, index: int) -> str:
        lines = [f"rev.func @f{index}(%y: f64, %c: memref<1xi64>) {{\n"]
        lines.append(READ if self.reads else "  %y0 = rev.neg %y : f64\n")
        if self.counts:
            lines.append(COUNT)
        value = "%y0"
        for position, callee in enumerate(self.calls):
            lines.append(f"  %y{position + 1} = rev.call @f{callee}({value}, %c) : (f64, memref<1xi64>) -> f64\n")
            value = f"%y{position + 1}"
        lines.append(f"  rev.return {value} : f64\n}}\n")
        return "".join(lines)


def module_text(functions: list[Function]) -> str:
    return "".join(f.source(i) for i, f in enumerate(functions))


def expected_counters(functions: list[Function]) -> dict[str, frozenset[int]]:
    """The rule itself, over the whole module at once: ``%c`` is used only
    in safe regions and calls that pass it to such a use (the greatest
    fixpoint), and something counts into it (the least)."""
    safe = [True] * len(functions)
    changed = True
    while changed:
        changed = False
        for i, f in enumerate(functions):
            new = not f.reads and all(safe[j] for j in f.calls)
            changed |= new != safe[i]
            safe[i] = new
    counter = [False] * len(functions)
    changed = True
    while changed:
        changed = False
        for i, f in enumerate(functions):
            new = safe[i] and (f.counts or any(counter[j] for j in f.calls))
            changed |= new != counter[i]
            counter[i] = new
    return {f"f{i}": frozenset({1}) if counter[i] else frozenset() for i in range(len(functions))}


def chain(length: int, reads_first: bool = False) -> list[Function]:
    """``@f0`` calls ``@f1`` … calls ``@f<length-1>``, which counts."""
    return [
        Function(reads=reads_first and i == 0, counts=i == length - 1, calls=(i + 1,) if i + 1 < length else ())
        for i in range(length)
    ]


@contextmanager
def analysed() -> Iterator[list[int]]:
    """How many times the counters analysis reads a function's argument
    uses: the work, counted where a time bound would measure the machine."""
    count = [0]
    uses = counters.argument_uses

    def counted(function: Any) -> Any:
        count[0] += 1
        return uses(function)

    with patch.object(counters, "argument_uses", counted):
        yield count


def test_a_chain_of_150_functions_verifies_quickly():
    """A counter passed down 150 calls took 5 s to verify (a fixpoint over
    the whole module, a round per function of the chain, below every call);
    its counters are found once per function now."""
    functions = chain(150)
    text = module_text(functions)
    with analysed() as count:
        module = parse_module(text, "chain.mlir")
    assert count[0] <= 2 * 150  # the old fixpoint: a round of all per function, per call
    assert counter_arguments(module) == expected_counters(functions) == {f"f{i}": frozenset({1}) for i in range(150)}


def test_a_chain_of_150_functions_is_refused_where_it_was():
    """Reversible code of ``@f0`` reads its array, so it is no counter of
    ``@f0``, and passing it to ``@f1``, where 149 functions below count
    into it, is refused at the call, quickly."""
    with analysed() as count, pytest.raises(ReversibilityViolation) as refused:
        parse_module(module_text(chain(150, reads_first=True)), "chain.mlir")
    assert count[0] <= 2 * 150
    assert describe_op(refused.value.op) == "'rev.call' at chain.mlir:6:3"
    assert str(refused.value).startswith(
        "[safe] 'rev.call' passes %c to @f1, which counts into it in rev.safe; only a counter of this function"
    )


@pytest.mark.parametrize("seed", range(40))
def test_counters_per_component_are_the_rule_over_the_module(seed: int):
    """Call graphs with cycles (a function calling itself, two calling each
    other, cycles through chains) and functions that read, count or only
    pass their array: the counters found a component at a time, callees
    first, are those of the rule's fixpoints over the whole module."""
    pick = random.Random(seed)
    size = pick.randint(1, 7)
    functions = [
        Function(
            reads=pick.random() < 0.2,
            counts=pick.random() < 0.3,
            calls=tuple(pick.randrange(size) for _ in range(pick.choice((0, 1, 1, 2, 3)))),
        )
        for _ in range(size)
    ]
    module = parse_module(module_text(functions), "graph.mlir", verify=False)
    expected = expected_counters(functions)
    assert counter_arguments(module) == expected
    for name in expected:  # what a function's verifier asks outside ir_unchanged
        reached = counter_arguments(module, (name,))
        assert name in reached
        assert reached == {callee: expected[callee] for callee in reached}


def fan(callers: int) -> str:
    """``callers`` functions that each pass their array to one ``@leaf``."""
    leaf = Function(reads=False, counts=False, calls=()).source(0).replace("@f0", "@leaf")
    return leaf + "".join(
        Function(reads=False, counts=False, calls=(0,)).source(i + 1).replace("@f0", "@leaf") for i in range(callers)
    )


def test_a_module_verified_function_by_function_is_not_analysed_whole_by_each():
    """``module.verify()`` outside ``ir_unchanged`` verifies each function
    on its own: each asked for the whole module's counters, and 400
    functions calling one leaf took 5 s; each asks only for what it
    reaches now."""
    module = parse_module(fan(400), "fan.mlir", verify=False)
    with analysed() as count:
        module.verify()
    assert count[0] <= 3 * 400  # each function and the leaf, not the module per function


def test_a_chain_verified_function_by_function_is_refused_where_it_was():
    """The counters of what a function reaches, asked outside
    ``ir_unchanged``, refuse the chain at the call the whole module's do."""
    module = parse_module(module_text(chain(40, reads_first=True)), "chain.mlir", verify=False)
    with pytest.raises(ReversibilityViolation) as refused:
        module.verify()
    assert describe_op(refused.value.op) == "'rev.call' at chain.mlir:6:3"


CALLER = """rev.func @f(%y: f64, %c: memref<1xi64>) {
  %y1 = rev.call @g(%y, %c) : (f64, memref<1xi64>) -> f64
  rev.return %y1 : f64
}
"""
"""A function passing its array to ``@g``: its verifier asks for counters."""

CALLEE = """rev.func @g(%y: f64, %c: memref<1xi64>) {
  %y1 = rev.neg %y : f64
  rev.return %y1 : f64
}
"""


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ('"rev.func"() ({ }) {sym_name = "h", function_type = () -> ()} : () -> ()', "expected a single block"),
        (
            '"rev.func"() ({\n^bb0:\n  rev.return\n^bb1:\n  rev.return\n}) '
            '{sym_name = "h", function_type = () -> ()} : () -> ()',
            "expected a single block",
        ),
        (
            '"rev.func"() ({\n^bb0(%y: f64):\n  rev.return %y : f64\n}) {function_type = (f64) -> (f64)} : () -> ()',
            "property 'sym_name' expected",
        ),
        (
            '"rev.func"() ({\n^bb0(%y: f64):\n  rev.return %y : f64\n}) '
            "{sym_name = 3, function_type = (f64) -> (f64)} : () -> ()",
            "should be a string",
        ),
        (
            'rev.func @g(%y: f64, %c: memref<1xi64>) {\n  %y1 = "rev.call"(%y, %c) {callee = 3} : '
            "(f64, memref<1xi64>) -> f64\n  rev.return %y1 : f64\n}",
            "should be of base attribute symbol_ref",
        ),
    ],
    ids=["no-block", "two-blocks", "no-name", "name-not-a-string", "call-of-no-symbol"],
)
@pytest.mark.parametrize("kept", [True, False], ids=["verify_module", "module.verify"])
def test_a_broken_function_after_a_call_is_reported_by_its_own_check(broken: str, message: str, kept: bool):
    """The counters asked below ``@f``'s call were of every function, ones
    not yet verified among them: a body of no block or two, a name missing
    or not a string, or in the callee a call of no symbol crashed the
    analysis (an ``IndexError``, a ``KeyError``...) before xDSL reported
    it."""
    callee = "" if broken.startswith("rev.func @g") else CALLEE
    module = parse_module(CALLER + callee + broken, "broken.mlir", verify=False)
    with pytest.raises(VerifyException, match=message):
        verify_module(module) if kept else module.verify()
