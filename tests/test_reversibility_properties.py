"""Property-based tests: ``f`` then ``~f`` is the identity on generated programs.

The programs come from ``program_generator.programs()``: random modules of
reversible functions (straight-line code, nested rev.if/for/while, ancillas,
stacks, routines, rev.inv, calls, memref elements) that the verifier accepts.
Properties:

1. ``uncall(f, *call(f, *args)) == args``: bit-exact for integers (wraparound
   included), within rounding for floats; arrays and stacks are restored in
   place.  For functions with no forward-only code, ``call ∘ uncall`` too.
2. ``@f.inv`` built by ``rev-invert`` is a verified function that, run
   forward, computes exactly what ``interp.uncall("f")`` computes.
3. ``rev-invert{in_place}`` applied twice gives a structurally equal module
   (for programs in the inverter's canonical form; otherwise a second double
   inversion changes nothing) that behaves identically; applied once, each
   ``@f`` computes ``~f``.
4. Printing and re-parsing (custom and generic syntax) round-trips.
5. Targeted irreversible mutations of a valid program (``y += y``, reading a
   used-up version, consuming a version twice, dropping a free/put/push) are
   rejected by the verifier with the expected rule.

Every property runs with the interpreter's run-time checks on, so a generated
program that breaks reversibility at run time fails loudly.  The whole file
takes ~40 s; ``REVMLIR_PROPERTY_SCALE=20`` multiplies the example counts.
"""

from __future__ import annotations

import copy
import math
import os
from io import StringIO
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.printer import Printer

from program_generator import FuncInfo, Program, arguments, programs
from revmlir.dialects.anc import FreeOp, PushOp
from revmlir.dialects.rev import FuncOp, InstructionOp, PutOp
from revmlir.errors import ReversibilityViolation
from revmlir.interfaces import StateConsumer
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass

# Floats: inputs lie in [-4, 4], every update adds c·g(e) with |c| ≤ 1 and g
# bounded and 1-Lipschitz, and floats never steer control flow, so undoing a
# run reproduces the inputs to ~1e-15 (measured max relative error 9e-16 over
# 1500 programs); 1e-9 leaves a wide margin and still catches any real
# inversion error, which is O(1).
REL_TOL = 1e-9
ABS_TOL = 1e-9

# REVMLIR_PROPERTY_SCALE=20 runs twenty times as many examples (bug hunting).
SCALE = float(os.environ.get("REVMLIR_PROPERTY_SCALE", "1"))


def property_settings(max_examples: int) -> settings:
    return settings(
        max_examples=max(1, int(max_examples * SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def clone(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """Fresh copies of arrays and stacks (the interpreter updates them in place)."""
    return tuple(copy.deepcopy(v) for v in values)


def _scalar_same(actual: Any, expected: Any, exact: bool) -> bool:
    if isinstance(expected, float) or isinstance(actual, float):
        if not (isinstance(actual, float) and isinstance(expected, float)):
            return False
        if exact:
            return actual == expected or (math.isnan(actual) and math.isnan(expected))
        return math.isclose(actual, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    # integers are always bit-exact (bool is excluded: no i1 state here)
    return type(actual) is int and type(expected) is int and actual == expected


def assert_same(actual: tuple[Any, ...], expected: tuple[Any, ...], exact: bool) -> None:
    """Integers exactly; floats within REL_TOL/ABS_TOL unless ``exact``."""
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        if isinstance(e, np.ndarray):
            assert isinstance(a, np.ndarray) and a.dtype == e.dtype, (i, a, e)
            ok = all(_scalar_same(x.item(), y.item(), exact) for x, y in zip(a, e))
        elif isinstance(e, list):
            ok = isinstance(a, list) and len(a) == len(e)
            ok = ok and all(_scalar_same(_py(x), _py(y), exact) for x, y in zip(a, e))
        else:
            ok = _scalar_same(a, e, exact)
        assert ok, f"argument #{i}: got {a!r}, expected {e!r}"


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def print_module(module: ModuleOp, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(module)
    return stream.getvalue()


def invert(module: ModuleOp, in_place: bool = False) -> ModuleOp:
    RevInvertPass(in_place=in_place).apply(make_context(), module)
    module.verify()
    return module


def run(interp: RevInterpreter, name: str, args: tuple[Any, ...], backward: bool = False):
    return (interp.uncall if backward else interp.call)(name, *clone(args))


def pick_function(data: st.DataObject, program: Program) -> FuncInfo:
    return data.draw(st.sampled_from(program.functions), label="function")


# ---------------------------------------------------------------------------
# 1. f then ~f is the identity
# ---------------------------------------------------------------------------


@property_settings(60)
@given(programs(floats=False), st.data())
def test_integer_programs_undo_exactly(program: Program, data: st.DataObject):
    func = pick_function(data, program)
    interp = RevInterpreter(parse_module(program.text))
    args = data.draw(arguments(func), label="args")
    out = run(interp, func.name, args)
    assert_same(run(interp, func.name, out, backward=True), args, exact=True)
    assert interp.live_ancillas == 0  # every ancilla made going forward was freed
    if func.bidirectional:
        before = run(interp, func.name, args, backward=True)
        assert_same(run(interp, func.name, before), args, exact=True)
        assert interp.live_ancillas == 0


@property_settings(60)
@given(programs(floats=True), st.data())
def test_float_programs_undo_within_rounding(program: Program, data: st.DataObject):
    func = pick_function(data, program)
    interp = RevInterpreter(parse_module(program.text))
    args = data.draw(arguments(func), label="args")
    out = run(interp, func.name, args)
    assert_same(run(interp, func.name, out, backward=True), args, exact=False)
    assert interp.live_ancillas == 0  # every ancilla made going forward was freed
    if func.bidirectional:
        before = run(interp, func.name, args, backward=True)
        assert_same(run(interp, func.name, before), args, exact=False)
        assert interp.live_ancillas == 0


# ---------------------------------------------------------------------------
# 2. the rev-invert pass computes what uncall computes
# ---------------------------------------------------------------------------


@property_settings(25)
@given(programs(), st.data())
def test_invert_pass_matches_uncall(program: Program, data: st.DataObject):
    func = pick_function(data, program)
    original = RevInterpreter(parse_module(program.text))
    inverted_module = invert(parse_module(program.text))
    # the inverse program is itself a valid reversible program
    inverted_module = parse_module(print_module(inverted_module))
    names = [op.sym_name.data for op in inverted_module.ops if isinstance(op, FuncOp)]
    assert names == [n for f in program.functions for n in (f.name, f.name + ".inv")]
    inverted = RevInterpreter(inverted_module)

    args = data.draw(arguments(func), label="args")
    out = run(original, func.name, args)
    expected = run(original, func.name, out, backward=True)
    assert_same(run(inverted, func.name + ".inv", out), expected, exact=True)
    # and the inverse of @f.inv is @f again
    assert_same(
        run(inverted, func.name + ".inv", expected, backward=True),
        run(inverted, func.name, expected),
        exact=True,
    )


# ---------------------------------------------------------------------------
# 3. inverting twice in place gives the program back
# ---------------------------------------------------------------------------


@property_settings(40)
@given(programs(), st.data())
def test_double_inversion_in_place_is_identity(program: Program, data: st.DataObject):
    """``invert(invert(f))`` is ``f``: structurally for programs in the
    inverter's canonical form (pure values recomputed right before each use);
    otherwise inverting twice canonicalises, and doing it again changes
    nothing."""
    original = parse_module(program.text)
    twice = invert(invert(parse_module(program.text), in_place=True), in_place=True)
    if program.canonical:
        reference = original
    else:
        reference, twice = twice, invert(invert(twice, in_place=True), in_place=True)
    assert twice.is_structurally_equivalent(reference), (
        print_module(reference) + "\n---- inverted twice ----\n" + print_module(twice)
    )

    func = pick_function(data, program)
    args = data.draw(arguments(func), label="args")
    assert_same(
        run(RevInterpreter(twice), func.name, args),
        run(RevInterpreter(original), func.name, args),
        exact=True,
    )


@property_settings(30)
@given(programs(), st.data())
def test_inversion_in_place_computes_uncall(program: Program, data: st.DataObject):
    """After one in-place inversion, ``@f`` computes ``~f`` (calls between the
    inverted functions included)."""
    original = RevInterpreter(parse_module(program.text))
    once = RevInterpreter(invert(parse_module(program.text), in_place=True))
    func = pick_function(data, program)
    args = data.draw(arguments(func), label="args")
    out = run(original, func.name, args)
    expected = run(original, func.name, out, backward=True)
    assert_same(run(once, func.name, out), expected, exact=True)
    assert_same(run(once, func.name, expected, backward=True), out, exact=not program.has_floats)


# ---------------------------------------------------------------------------
# the verifier rejects irreversible mutations of valid programs
# ---------------------------------------------------------------------------


def _consumed_before(op: Operation) -> list[SSAValue]:
    """State values consumed by ops before ``op`` in its block."""
    out: list[SSAValue] = []
    for prior in op.parent_block().ops:  # type: ignore[union-attr]
        if prior is op:
            break
        if isinstance(prior, StateConsumer):
            out.extend(prior.consumed_operands())
    return out


def mutation_sites(module: ModuleOp) -> list[tuple[str, Operation, int, SSAValue | None]]:
    """(rule expected, op, operand index or -1 to erase the op, new operand)."""
    sites: list[tuple[str, Operation, int, SSAValue | None]] = []
    for op in module.walk():
        if isinstance(op, InstructionOp):
            targets, reads = list(op.targets()), list(op.reads())
            for j, read in enumerate(reads, start=op.TARGETS):
                for target in targets:  # y += y
                    if target.type == read.type:
                        sites.append(("self-read", op, j, target))
                for old in _consumed_before(op):  # reads a version already used up
                    if old.type == read.type:
                        sites.append(("stale-read", op, j, old))
            for i, target in enumerate(targets):
                for old in _consumed_before(op):  # consumes a version twice
                    if old.type == target.type:
                        sites.append(("linearity", op, i, old))
        if isinstance(op, FreeOp | PutOp | PushOp):
            sites.append(("linearity", op, -1, None))  # a value is never consumed
    return sites


@property_settings(30)
@given(programs(), st.data())
def test_verifier_rejects_irreversible_mutations(program: Program, data: st.DataObject):
    module = parse_module(program.text)
    sites = mutation_sites(module)
    if not sites:
        return
    rule, op, index, value = data.draw(st.sampled_from(sites), label="mutation")
    if index < 0:
        op.detach()
        op.erase(safe_erase=False)
    else:
        op.operands[index] = value  # type: ignore[index]
    with pytest.raises(ReversibilityViolation) as info:
        module.verify()
    assert info.value.rule == rule, str(info.value)


# ---------------------------------------------------------------------------
# 4. printing and parsing round-trip
# ---------------------------------------------------------------------------


@property_settings(40)
@given(programs())
def test_print_parse_round_trip(program: Program):
    module = parse_module(program.text)
    custom = print_module(module)
    generic = print_module(module, generic=True)
    from_custom = parse_module(custom)
    from_generic = parse_module(generic)
    assert from_custom.is_structurally_equivalent(module)
    assert from_generic.is_structurally_equivalent(module)
    assert print_module(from_custom) == custom
    assert print_module(from_generic, generic=True) == generic
    assert print_module(from_generic) == custom


# ---------------------------------------------------------------------------
# regressions for bugs these properties found
# ---------------------------------------------------------------------------

NOCHECK_PROGRAM = """
rev.func @f(%x: i64, %s: !anc.stack<i64>) {
  %zero = arith.constant 0 : i64
  %a = anc.alloc %zero : i64
  %a1 = rev.add %a, %x : i64
  %a2 = rev.sub %a1, %x : i64
  %zero2 = arith.constant 0 : i64
  anc.free %a2, %zero2 {nocheck} : i64
  %t = anc.stack_alloc : !anc.stack<i64>
  anc.copy_push %t, %x : !anc.stack<i64>
  anc.copy_pop %t, %x {nocheck} : !anc.stack<i64>
  anc.stack_free %t {nocheck} : !anc.stack<i64>
  anc.push %s, %x {note = "kept"} : !anc.stack<i64>
  %x1 = anc.pop %s : !anc.stack<i64>
  rev.return %x1 : i64
}
"""


def test_nocheck_survives_inverting_twice():
    """anc.free's inverse used to drop `nocheck`, and the stack ops' inverses
    all their attributes, so inverting twice lost them."""
    original = parse_module(NOCHECK_PROGRAM)
    twice = invert(invert(parse_module(NOCHECK_PROGRAM), in_place=True), in_place=True)
    assert twice.is_structurally_equivalent(original), print_module(twice)
    once = invert(parse_module(NOCHECK_PROGRAM), in_place=True)
    text = print_module(once)
    assert "anc.alloc %zero2 {nocheck}" in text  # inert, but carried to the next inverse
    assert 'anc.pop %s {note = "kept"}' in text


CALLS_PROGRAM = """
rev.func @g(%x: i64) {
  %c = arith.constant 2 : i64
  %x1 = rev.add %x, %c : i64
  rev.return %x1 : i64
}
rev.func @f(%x: i64) {
  %x1 = rev.call @g(%x) : (i64) -> i64
  %x2 = rev.neg %x1 : i64
  rev.return %x2 : i64
}
"""


def test_inverting_in_place_keeps_calls_meaningful():
    """After rev-invert{in_place} the name @g means ~g, so the inverted @f must
    call (not uncall) it; @f used to compute g∘neg instead of ~f."""
    original = RevInterpreter(parse_module(CALLS_PROGRAM))
    assert original.call("f", 1) == (-3,) and original.uncall("f", 1) == (-3,)
    once = invert(parse_module(CALLS_PROGRAM), in_place=True)
    assert "rev.call @g" in print_module(once)
    assert RevInterpreter(once).call("f", 1) == (-3,)
    assert RevInterpreter(once).call("f", -3) == (1,)
    # inverting only @g keeps @f's meaning: its call site becomes an uncall
    module = parse_module(CALLS_PROGRAM)
    RevInvertPass(in_place=True, functions=("g",)).apply(make_context(), module)
    interp = RevInterpreter(module)
    assert "rev.uncall @g" in print_module(module)
    assert interp.call("g", 1) == (-1,)
    assert interp.call("f", 1) == (-3,)
