"""Stacks in native code: every element type the dialect allows, stacks
passed in from Python and across calls, buffers that grow, and the run-time
checks of the stack ops, each compared with the reference interpreter."""

from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np
import pytest

import revmlir as rv
from revmlir import InvertibilityError
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

# element type -> (a, b, list for the argument stack): values whose bits survive
# a round trip only if the element is stored and loaded at its real width
ELEMENTS: dict[str, tuple[Any, Any, list[Any]]] = {
    "i64": (-(2**63), 2**63 - 1, [7, -1, 2**40]),
    "i32": (-(2**31), 2**31 - 1, [3, -4]),
    "i8": (-128, 127, [5]),
    "i1": (True, False, [False, True, True]),
    "index": (2**62, -5, [0, 9]),
    "f64": (0.1, -1e300, [float(np.nextafter(1.0, 2.0)), -0.0]),
    "f32": (float(np.float32(0.1)), float(np.float32(-3e38)), [float(np.float32(1.5))]),
    "complex<f64>": (1 + 2j, -0.5 - 1e-300j, [3j, 2.5 + 0j]),
    "!rev.log<f64>": (2.0, 0.25, [float(np.log(3.0)), -1.5]),
}

SHUFFLE = """
// a <- the top of s; b <- b; s gets its top back and then a, through a local stack
rev.func @shuffle(%a: ELEM, %b: ELEM, %s: !anc.stack<ELEM>) {
  %t = anc.stack_alloc : !anc.stack<ELEM>
  anc.push %t, %a : !anc.stack<ELEM>
  anc.push %t, %b : !anc.stack<ELEM>
  %a1 = anc.pop %s : !anc.stack<ELEM>
  anc.copy_push %s, %a1 : !anc.stack<ELEM>
  %b1 = anc.pop %t : !anc.stack<ELEM>
  %c = anc.pop %t : !anc.stack<ELEM>
  anc.push %s, %c : !anc.stack<ELEM>
  anc.stack_free %t : !anc.stack<ELEM>
  rev.return %a1, %b1 : ELEM, ELEM
}
rev.func @twice(%a: ELEM, %b: ELEM, %s: !anc.stack<ELEM>) {
  %a1, %b1 = rev.call @shuffle(%a, %b, %s) : (ELEM, ELEM, !anc.stack<ELEM>) -> (ELEM, ELEM)
  %a2, %b2 = rev.call @shuffle(%a1, %b1, %s) : (ELEM, ELEM, !anc.stack<ELEM>) -> (ELEM, ELEM)
  %a3, %b3 = rev.uncall @shuffle(%a2, %b2, %s) : (ELEM, ELEM, !anc.stack<ELEM>) -> (ELEM, ELEM)
  %a4, %b4 = rev.call @shuffle(%a3, %b3, %s) : (ELEM, ELEM, !anc.stack<ELEM>) -> (ELEM, ELEM)
  rev.return %a4, %b4 : ELEM, ELEM
}
"""


def run_both(text: str, name: str, *args: Any) -> tuple[Any, Any]:
    """``name`` forward on the interpreter and natively."""
    module = parse_module(text)
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    return interpreter.call(name, *copy.deepcopy(args)), native.call(name, *copy.deepcopy(args))


@pytest.mark.parametrize("element", list(ELEMENTS))
@pytest.mark.parametrize("name", ["shuffle", "twice"])
def test_stacks_of_every_element_type_agree_with_the_interpreter(element: str, name: str):
    a, b, stack = ELEMENTS[element]
    module = parse_module(SHUFFLE.replace("ELEM", element))
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    expected = interpreter.call(name, a, b, copy.deepcopy(stack))
    actual = native.call(name, a, b, copy.deepcopy(stack))
    # bitwise: values only move, so floats must come back exactly too
    assert repr(actual) == repr(expected)
    restored = native.uncall(name, *copy.deepcopy(actual))
    assert repr(restored) == repr(interpreter.uncall(name, *expected))
    assert repr(restored) == repr((a, b, stack))


def test_the_argument_list_is_updated_in_place():
    native = NativeModule.compile(parse_module(SHUFFLE.replace("ELEM", "i64")))
    stack = [1, 2]
    result = native.call("shuffle", 10, 20, stack)
    assert result[2] is stack
    assert stack == [1, 2, 10] and result[:2] == (2, 20)
    assert native.uncall("shuffle", *result)[:2] == (10, 20)
    assert stack == [1, 2]


GROW = """
// copies x, x+1, …, x+n-1 onto s; the inverse pops them back, checking each
rev.func @grow(%x: i64, %n: index, %s: !anc.stack<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x1 = rev.for %c0 to %n step %c1 : index (%x) : i64 {
  ^bb0(%i: index, %v: i64):
    anc.copy_push %s, %v : !anc.stack<i64>
    %v1 = rev.inc %v : i64
    rev.yield %v1 : i64
  }
  rev.return %x1, %n : i64, index
}
rev.func @local(%x: i64, %n: index) {
  %s = anc.stack_alloc : !anc.stack<i64>
  %x1, %n1 = rev.call @grow(%x, %n, %s) : (i64, index, !anc.stack<i64>) -> (i64, index)
  %x2, %n2 = rev.uncall @grow(%x1, %n1, %s) : (i64, index, !anc.stack<i64>) -> (i64, index)
  anc.stack_free %s : !anc.stack<i64>
  rev.return %x2, %n2 : i64, index
}
"""


@pytest.mark.parametrize("n", [0, 1, 8, 9, 1000, 100_000])
def test_buffers_grow_and_shrink_back(n: int):
    native = NativeModule.compile(parse_module(GROW))
    stack = [-1]
    x, _, _ = native.call("grow", 5, n, stack)
    assert x == 5 + n
    assert stack == [-1, *range(5, 5 + n)]
    assert native.uncall("grow", x, n, stack)[0] == 5
    assert stack == [-1]
    assert native.call("local", 3, n) == (3, n)


RECORDS = """
// Two records of scalars and arrays (one 2-D, one maybe empty) on one
// store, the state changed after each; the top record restored and dropped,
// then the one below it restored: the state when each was taken.
rev.func @records(%x: f64, %m: memref<?x?xf64>, %e: memref<?xf64>) attributes {rev.forgetful} {
  %s = anc.stack_alloc : !anc.stack<f64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  anc.snapshot %s, %x, %m, %e : !anc.stack<f64>, f64, memref<?x?xf64>, memref<?xf64>
  %a = rev.take %m[%c0, %c1] : memref<?x?xf64>
  %a1 = rev.add %a, %two : f64
  rev.put %a1, %m[%c0, %c1] : memref<?x?xf64>
  %y = rev.add %x, %two : f64
  anc.snapshot %s, %y, %m, %e : !anc.stack<f64>, f64, memref<?x?xf64>, memref<?xf64>
  %b = rev.take %m[%c1, %c0] : memref<?x?xf64>
  %b1 = rev.add %b, %two : f64
  rev.put %b1, %m[%c1, %c0] : memref<?x?xf64>
  %y1 = anc.restore %s, %y, %m, %e : !anc.stack<f64>, f64, memref<?x?xf64>, memref<?xf64> -> (f64)
  %y2 = anc.alloc %y1 : f64
  %doubled = arith.mulf %y2, %two : f64
  %twice = anc.alloc %doubled : f64
  anc.drop %s, %y2, %m, %e : !anc.stack<f64>, f64, memref<?x?xf64>, memref<?xf64>
  %x1 = anc.restore %s, %y2, %m, %e : !anc.stack<f64>, f64, memref<?x?xf64>, memref<?xf64> -> (f64)
  %x2 = anc.alloc %x1 : f64
  anc.drop %s, %x2, %m, %e : !anc.stack<f64>, f64, memref<?x?xf64>, memref<?xf64>
  %sum = rev.add %x2, %twice : f64
  %zero = arith.constant 0.0 : f64
  anc.free %twice, %zero {nocheck, rev.forgetful} : f64
  anc.stack_free %s : !anc.stack<f64>
  rev.return %sum : f64
}
"""


@pytest.mark.parametrize("empty", [0, 3])
def test_records_are_written_and_read_in_place_as_the_interpreter_does(empty: int):
    """Snapshots push a record's room at once and restores read it in
    place: element order, positions and sizes as the interpreter's."""
    module = parse_module(RECORDS)
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    arrays = (np.arange(6.0).reshape(2, 3) + 1, np.arange(float(empty)) - 7)
    expected = interpreter.call("records", 0.5, *copy.deepcopy(arrays))
    actual = native.call("records", 0.5, *copy.deepcopy(arrays))
    assert repr(actual) == repr(expected)
    assert actual[0] == 0.5 + 2 * 2.5 and actual[1].tolist() == arrays[0].tolist()
    assert actual[2].tolist() == arrays[1].tolist()


STACK_RECORDS = """
// A record holding a stack's live part (after a scalar), restored onto
// another stack: that one then holds what the first held at the snapshot.
rev.func @record_ELEMENT(%x: ELEMENT, %f: !anc.stack<ELEMENT>, %g: !anc.stack<ELEMENT>) attributes {rev.forgetful} {
  %s = anc.stack_alloc : !anc.stack<ELEMENT>
  anc.snapshot %s, %x, %f : !anc.stack<ELEMENT>, ELEMENT, !anc.stack<ELEMENT>
  anc.copy_push %f, %x : !anc.stack<ELEMENT>
  %y = anc.restore %s, %x, %g : !anc.stack<ELEMENT>, ELEMENT, !anc.stack<ELEMENT> -> (ELEMENT)
  %z = anc.alloc %y : ELEMENT
  anc.drop %s, %z, %g : !anc.stack<ELEMENT>, ELEMENT, !anc.stack<ELEMENT>
  anc.stack_free %s : !anc.stack<ELEMENT>
  rev.return %z : ELEMENT
}
"""
RECORD_ELEMENTS = {"index": [2**62, 0, 9], "i64": [-(2**63), 7], "f64": [0.1, -1e300, -0.0, 2.5]}


@pytest.fixture(scope="module")
def stack_records() -> tuple[RevInterpreter, NativeModule]:
    text = "".join(STACK_RECORDS.replace("ELEMENT", element) for element in RECORD_ELEMENTS)
    module = parse_module(text)
    return RevInterpreter(module), NativeModule.compile(module)


@pytest.mark.parametrize("element", RECORD_ELEMENTS)
@pytest.mark.parametrize("held", [0, 1, 20])
def test_a_stacks_part_of_a_record_is_copied_out_and_back_as_the_interpreter_does(
    stack_records: tuple[RevInterpreter, NativeModule], element: str, held: int
):
    """The stack's live part goes into the record and back onto a stack
    (one memory copy each way natively), after the record's scalar: the
    restored stack holds what the first held, however much the one restored
    onto held before (growing its buffer, or shrinking it)."""
    values = RECORD_ELEMENTS[element]
    first = [values[k % len(values)] for k in range(held)]
    x = values[-1]
    arguments = (x, first, [values[0]] * (held // 2 + 3))
    expected = stack_records[0].call(f"record_{element}", *copy.deepcopy(arguments))
    actual = stack_records[1].call(f"record_{element}", *copy.deepcopy(arguments))
    assert repr(actual) == repr(expected)
    assert actual[0] == x and actual[1] == [*first, x] and actual[2] == first


BAD_LENGTHS = (
    STACK_RECORDS.replace("anc.copy_push %f, %x", "anc.copy_push %s, %x").replace("@record_", "@restore_")
    + """
// A record whose stored length a hand-written word on top replaces
// (above: x), then restored or dropped: a length the store cannot hold is
// no record.
rev.func @drop_ELEMENT(%x: ELEMENT, %f: !anc.stack<ELEMENT>) attributes {rev.forgetful} {
  %s = anc.stack_alloc : !anc.stack<ELEMENT>
  anc.snapshot %s, %x, %f : !anc.stack<ELEMENT>, ELEMENT, !anc.stack<ELEMENT>
  anc.copy_push %s, %x : !anc.stack<ELEMENT>
  anc.drop %s, %x, %f : !anc.stack<ELEMENT>, ELEMENT, !anc.stack<ELEMENT>
  anc.stack_free %s : !anc.stack<ELEMENT>
  rev.return %x : ELEMENT
}

// A record of an empty stack alone, its length word popped by hand: an
// empty store has no word on top to read as the length.
rev.func @drop_nothing_ELEMENT(%x: ELEMENT, %f: !anc.stack<ELEMENT>) attributes {rev.forgetful} {
  %s = anc.stack_alloc : !anc.stack<ELEMENT>
  %e = anc.stack_alloc : !anc.stack<ELEMENT>
  anc.snapshot %s, %e : !anc.stack<ELEMENT>, !anc.stack<ELEMENT>
  %n = anc.pop %s : !anc.stack<ELEMENT>
  anc.push %e, %n : !anc.stack<ELEMENT>
  anc.drop %s, %e : !anc.stack<ELEMENT>, !anc.stack<ELEMENT>
  anc.stack_free %e : !anc.stack<ELEMENT>
  anc.stack_free %s : !anc.stack<ELEMENT>
  rev.return %x : ELEMENT
}
"""
)


@pytest.fixture(scope="module")
def bad_lengths() -> tuple[str, RevInterpreter, NativeModule]:
    text = "".join(BAD_LENGTHS.replace("ELEMENT", element) for element in ("i64", "f64"))
    module = parse_module(text, "records.mlir")
    return text, RevInterpreter(module), NativeModule.compile(module)


@pytest.mark.parametrize(
    "name, bad",
    [
        ("restore_i64", -1),
        ("restore_i64", -5),
        ("restore_i64", 2**40),
        ("restore_f64", -1.0),
        ("restore_f64", 3.5),
        ("restore_f64", float("nan")),
        ("drop_i64", -3),
        ("drop_f64", float("inf")),
        ("drop_nothing_i64", 0),
    ],
)
def test_a_stored_length_the_store_cannot_hold_is_no_snapshot_on_both_engines(
    bad_lengths: tuple[str, RevInterpreter, NativeModule], name: str, bad: Any
):
    """The store holds the scalar, the two elements of the stack, their
    length and the scalar again on top, which a restore or drop reads as
    the length (3 fits; see the next test): a negative one, one past the
    store, a fraction past it, NaN or infinity reads no record on either
    engine, where a negative length read past the store natively and
    sliced the store in the interpreter; so does an empty store."""
    text, interpreter, native = bad_lengths
    stack = [7, 8] if name.endswith("i64") else [7.0, 8.0]
    arguments = (bad, stack, []) if name.startswith("restore") else (bad, stack)
    raised = []
    for engine in (interpreter, native):
        with pytest.raises(InvertibilityError) as error:
            engine.call(name, *copy.deepcopy(arguments))
        raised.append(error.value)
    what = name.split("_")[0]
    assert str(raised[0]) == str(raised[1])
    assert raised[1].op_name == f"anc.{what}" and f"no snapshot to {what}" in str(raised[1])
    lines = text.splitlines()
    start = line_of(text, f"@{name}(")
    line = next(k for k in range(start, len(lines)) if f"anc.{what} %s" in lines[k]) + 1
    assert raised[1].location == f"records.mlir:{line}:3"


def test_a_stored_length_within_the_store_is_read_as_one_on_both_engines(
    bad_lengths: tuple[str, RevInterpreter, NativeModule],
):
    """The top word 3 places a record of the scalar and three elements
    below it, the whole store: both engines restore the scalar and the
    stack's part, the two elements and the length the snapshot wrote."""
    _, interpreter, native = bad_lengths
    for engine in (interpreter, native):
        assert engine.call("restore_i64", 3, [7, 8], []) == (3, [7, 8], [7, 8, 2])


def test_stacks_allocated_in_a_loop_reuse_their_header():
    text = """
    rev.func @f(%x: f64, %n: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %x1 = rev.for %c0 to %n step %c1 : index (%x) : f64 {
      ^bb0(%i: index, %v: f64):
        %s = anc.stack_alloc : !anc.stack<f64>
        anc.push %s, %v : !anc.stack<f64>
        %w = anc.pop %s : !anc.stack<f64>
        %k = arith.index_cast %i : index to i64
        %kf = arith.sitofp %k : i64 to f64
        %w1 = rev.add %w, %kf : f64
        anc.stack_free %s : !anc.stack<f64>
        rev.yield %w1 : f64
      }
      rev.return %x1, %n : f64, index
    }
    """
    n = 200_000  # a header per iteration on the machine stack would overflow it
    expected = 0.5 + sum(range(n))
    assert NativeModule.compile(parse_module(text)).call("f", 0.5, n) == (expected, n)


def test_freeing_an_argument_stack_leaves_the_callers_header_usable():
    text = """
    rev.func @inner(%s: !anc.stack<i64>) {
      anc.stack_free %s : !anc.stack<i64>
      rev.return
    }
    rev.func @outer(%x: i64) {
      %s = anc.stack_alloc : !anc.stack<i64>
      rev.call @inner(%s) : (!anc.stack<i64>) -> ()
      anc.push %s, %x : !anc.stack<i64>
      %x1 = anc.pop %s : !anc.stack<i64>
      anc.stack_free %s : !anc.stack<i64>
      rev.return %x1 : i64
    }
    """
    expected, actual = run_both(text, "outer", 42)
    assert actual == expected == (42,)
    stack: list[int] = []
    assert NativeModule.compile(parse_module(text)).call("inner", stack) == (stack,)


# ---------------------------------------------------------------------------
# Run-time checks
# ---------------------------------------------------------------------------

POP_EMPTY = """
rev.func @f(%s: !anc.stack<f64>) {
  %x = anc.pop %s ATTRS: !anc.stack<f64>
  anc.push %s, %x : !anc.stack<f64>
  rev.return
}
"""

FREE_FULL = """
rev.func @f(%x: i64) {
  %s = anc.stack_alloc : !anc.stack<i64>
  anc.copy_push %s, %x : !anc.stack<i64>
  anc.copy_push %s, %x : !anc.stack<i64>
  anc.stack_free %s ATTRS: !anc.stack<i64>
  rev.return %x : i64
}
"""

COPY_POP = """
rev.func @f(%x: ELEM, %d: ELEM) {
  %s = anc.stack_alloc : !anc.stack<ELEM>
  anc.copy_push %s, %x : !anc.stack<ELEM>
  %x1 = rev.add %x, %d : ELEM
  anc.copy_pop %s, %x1 ATTRS: !anc.stack<ELEM>
  anc.stack_free %s : !anc.stack<ELEM>
  rev.return %x1, %d : ELEM, ELEM
}
"""

COPY_POP_EMPTY = """
rev.func @f(%x: i1, %s: !anc.stack<i1>) {
  anc.copy_pop %s, %x ATTRS: !anc.stack<i1>
  anc.copy_push %s, %x : !anc.stack<i1>
  rev.return %x : i1
}
"""


def errors(text: str, *args: Any) -> tuple[InvertibilityError, InvertibilityError]:
    module = parse_module(text, "stacks.mlir")
    with pytest.raises(InvertibilityError) as interpreted:
        RevInterpreter(module).call("f", *copy.deepcopy(args))
    with pytest.raises(InvertibilityError) as compiled:
        NativeModule.compile(module).call("f", *copy.deepcopy(args))
    return interpreted.value, compiled.value


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    "template, args, op, message",
    [
        (POP_EMPTY, [[]], "anc.pop", "pop from an empty stack"),
        (FREE_FULL, [3], "anc.stack_free", "stack freed holding 2 value(s)"),
        (COPY_POP.replace("ELEM", "f64"), [1.0, 0.5], "anc.copy_pop", "popped 1.0, but the live value is 1.5"),
        (COPY_POP.replace("ELEM", "i64"), [-7, 1], "anc.copy_pop", "popped -7, but the live value is -6"),
        (COPY_POP_EMPTY, [True, []], "anc.copy_pop", "pop from an empty stack"),
    ],
)
def test_failed_checks_read_like_the_interpreters(template: str, args: list[Any], op: str, message: str):
    text = template.replace("ATTRS", "")
    interpreted, compiled = errors(text, *args)
    assert str(compiled) == str(interpreted)
    assert compiled.op_name == op and message in str(compiled)
    assert compiled.location == f"stacks.mlir:{line_of(text, op + ' %s')}:3"


def test_copy_pop_of_complex_values_shows_both_values_on_both_engines():
    text = COPY_POP.replace("ELEM", "complex<f64>").replace("ATTRS", "")
    interpreted, compiled = errors(text, 1 + 1j, 1j)
    assert (compiled.op_name, compiled.location) == (interpreted.op_name, interpreted.location)
    assert str(compiled) == str(interpreted)
    assert str(compiled).endswith("popped (1+1j), but the live value is (1+2j)")


@pytest.mark.parametrize(
    "template, args",
    [(FREE_FULL, [3]), (COPY_POP.replace("ELEM", "f64"), [1.0, 0.5])],
)
def test_nocheck_turns_the_switchable_checks_off(template: str, args: list[Any]):
    text = template.replace("ATTRS", "{nocheck} ")
    expected, actual = run_both(text, "f", *args)
    assert actual == expected


@pytest.mark.parametrize("template, args", [(POP_EMPTY, [[]]), (COPY_POP_EMPTY, [False, []])])
def test_popping_an_empty_stack_fails_even_without_checks(template: str, args: list[Any]):
    interpreted, compiled = errors(template.replace("ATTRS", "{nocheck} "), *args)
    assert str(compiled) == str(interpreted)
    assert "pop from an empty stack" in str(compiled)


def test_a_failed_run_still_gives_the_stack_back():
    module = parse_module(POP_EMPTY.replace("ATTRS", ""))
    for engine in (NativeModule.compile(module), RevInterpreter(module)):
        stack: list[float] = []
        with pytest.raises(InvertibilityError, match="pop from an empty stack"):
            engine.call("f", stack)
        # the run stopped at the failed pop: the push after it never ran
        assert stack == []


def test_elements_are_checked_against_the_element_type():
    native = NativeModule.compile(parse_module(SHUFFLE.replace("ELEM", "i64")))
    with pytest.raises(TypeError, match=re.escape("argument #2 of @shuffle must be an integer")):
        native.call("shuffle", 1, 2, [1.5])


# ---------------------------------------------------------------------------
# The eDSL
# ---------------------------------------------------------------------------


def test_the_frontend_runs_stack_programs_natively_by_default():
    def body(x, y):
        s = rv.stack(float)
        t = rv.ancilla(0.0)
        t += x * y
        rv.push(s, t)
        rv.copy_push(s, y)
        y += x
        y -= x
        rv.copy_pop(s, y)
        t = rv.pop(s)
        t -= x * y
        rv.free(t, 0.0)
        rv.free(s)

    native = rv.reversible(body)
    reference = rv.reversible(body, backend="interpreter")
    assert native(2.0, 3.0) == reference(2.0, 3.0)
    assert (~native)(2.0, 3.0) == (~reference)(2.0, 3.0)
    spec = native.specialization_for(2.0, 3.0)
    assert spec.native is not None and spec.backend == "native"


# ---------------------------------------------------------------------------
# Ahead of time
# ---------------------------------------------------------------------------

C_STACKS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "grow.h"
void shuffle_ciface(void **args);
void shuffle_inv_ciface(void **args) __asm__("shuffle.inv_ciface");
int main(void) {
    int64_t x = 5, n = 1000, err_data[6] = {0}, header[3] = {0, 0, 0};
    revmlir_memref1 err = {err_data, {6}}, stack = {header, {3}};
    void *args[] = {&x, &n, &stack, &err};
    grow_ciface(args);
    int64_t *data = (int64_t *)(intptr_t)header[0];
    printf("%lld %lld %lld %lld\n", (long long)x, (long long)header[1],
           (long long)data[0], (long long)data[999]);
    int64_t a = 1, b = 2;
    void *shuffled[] = {&a, &b, &stack, &err};
    shuffle_ciface(shuffled);  /* a <- 1004, the stack gets 1004 and 1 */
    shuffle_inv_ciface(shuffled);
    grow_inv_ciface(args);
    printf("%lld %lld %lld %lld %lld\n", (long long)a, (long long)b, (long long)x,
           (long long)header[1], (long long)err_data[0]);
    free((void *)(intptr_t)header[0]);
    return 0;
}
"""


def test_objects_with_stacks_link_together_into_a_c_program(served, tmp_path):
    import subprocess

    from test_aot import c_compiler

    sources = {"grow": GROW, "shuffle": SHUFFLE.replace("ELEM", "i64")}
    for name, text in sources.items():
        (tmp_path / f"{name}.mlir").write_text(text)
        for emit, suffix in (("obj", "o"), ("header", "h")):
            out = tmp_path / f"{name}.{suffix}"
            result = served("rev-translate", str(tmp_path / f"{name}.mlir"), f"--emit={emit}", "-o", str(out))
            assert result.returncode == 0, result.stderr
    objects = [str(tmp_path / f"{name}.o") for name in sources]
    (tmp_path / "main.c").write_text(C_STACKS)
    exe = tmp_path / "main"
    # both objects carry the stack runtime: it must be internal to each
    build = subprocess.run(
        [*c_compiler(), "-O2", str(tmp_path / "main.c"), *objects, "-o", str(exe), "-lm"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, check=False)
    assert run.stdout.splitlines() == ["1005 1000 5 1004", "1 2 5 0 0"]
