"""One semantics, two engines: programs that leave defined behaviour stop
with the same located error, in the same function, leaving the arrays in
the same state, on native code and on the interpreter; programs at the edge
of it give the same results.  Each engine runs the cases of
``safety_programs.py`` in a process of its own, so that native code that
crashed would fail these tests instead of the test run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from safety_programs import ALLOCATION_SIZES, AT_A_CALL, CASES, ORDINARY

HERE = Path(__file__).parent
PROGRAMS = HERE / "safety_programs.py"


@cache
def outcomes(engine: str) -> dict[str, dict[str, Any]]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    run = subprocess.run(
        [sys.executable, str(PROGRAMS), engine],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
        check=False,
    )
    results = {line["case"]: line for line in map(json.loads, run.stdout.splitlines())}
    if run.returncode != 0:
        # the cases that ran are still compared; the others fail below
        results["<exit>"] = {"returncode": run.returncode, "stderr": run.stderr[-2000:]}
    return results


def outcome(engine: str, case: str) -> dict[str, Any]:
    results = outcomes(engine)
    assert case in results, f"{engine} did not finish {case!r}: {results.get('<exit>')}"
    return results[case]


def line_of(function: str, text: str) -> str:
    """``file:line`` of the line of ``function`` that holds ``text``."""
    lines = PROGRAMS.read_text().splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"def {function}(")))
    offset = next(i for i, line in enumerate(lines[start:]) if text in line)
    return f"{PROGRAMS}:{start + offset + 1}:"


def comparable(result: dict[str, Any], case: str) -> dict[str, Any]:
    """What both engines must agree on.  Ordinary code runs as it is
    natively and in its reversible form on the interpreter, whose ops and
    function names differ: there the error's type, message proper,
    location and the arrays must agree.  A recursion too deep stops at a
    call, ``rev.call`` or ``rev.uncall`` on the interpreter, the
    ``func.call`` it became in native code: the rest must agree."""
    if case in AT_A_CALL and "error" in result:
        message = result["message"].replace(f"'{result['op_name']}' ", "", 1)
        return {**result, "message": message, "op_name": None}
    if case not in ORDINARY or "error" not in result:
        return result
    message = result["message"].split(f"in @{result['function']}: ", 1)[1]
    return {**result, "message": message, "op_name": None, "function": None}


@pytest.mark.parametrize("case", list(CASES))
def test_both_engines_agree(case: str):
    native, interpreter = outcome("native", case), outcome("interpreter", case)
    assert comparable(native, case) == comparable(interpreter, case)


EXPECTED = {
    "read past the end": (
        "ExecutionError",
        "read_past_end",
        "y += x[i]",
        "'memref.load' in @read_past_end: index 4 is out of bounds for axis 0 with size 4",
    ),
    "read at -1": ("ExecutionError", "read_past_end", "y += x[i]", "index -1 is out of bounds for axis 0 with size 4"),
    "read a row past the end": (
        "ExecutionError",
        "read_a_row",
        "y += m[i, 0]",
        "index 2 is out of bounds for axis 0 with size 2",
    ),
    "read a row past its last column": (
        "ExecutionError",
        "read_a_row",
        "y += m[i, 1]",
        "index 1 is out of bounds for axis 1 with size 1",
    ),
    "read from an empty array": (
        "ExecutionError",
        "read_past_end",
        "y += x[i]",
        "index 0 is out of bounds for axis 0 with size 0",
    ),
    "write past the end": (
        "ExecutionError",
        "write_past_end",
        "x[i] += y",
        "'rev.take' in @write_past_end: index 7 is out of bounds for axis 0 with size 4",
    ),
    "write at -3": ("ExecutionError", "write_past_end", "x[i] += y", "index -3 is out of bounds"),
    "write past the end, backwards": (
        "ExecutionError",
        "write_past_end",
        "x[i] += y",
        "in @~write_past_end: index 9 is out of bounds",
    ),
    "read outside axis 1": (
        "ExecutionError",
        "read_axis_one",
        "y += m[i, j]",
        "index 3 is out of bounds for axis 1 with size 3",
    ),
    "read outside axis 0": (
        "ExecutionError",
        "read_axis_one",
        "y += m[i, j]",
        "index -1 is out of bounds for axis 0 with size 2",
    ),
    "divide by zero": ("ExecutionError", "divide", "a // b", "in @divide: integer division by zero"),
    "remainder by zero": ("ExecutionError", "remainder", "a % b", "in @remainder: integer division by zero"),
    "divide by zero, backwards": ("ExecutionError", "divide", "a // b", "in @~divide: integer division by zero"),
    "shift left by 64": ("ExecutionError", "shift_left", "a << b", "shift count 64 is out of range for i64"),
    "shift right by 200": ("ExecutionError", "shift_right", "a >> b", "shift count 200 is out of range for i64"),
    "shift left by -1": ("ExecutionError", "shift_left", "a << b", "shift count -1 is out of range for i64"),
    "step of zero": ("ExecutionError", "stepped", "for i in range", "range() step must not be zero"),
    "zeros of negative size": (
        "ExecutionError",
        "sized",
        "rv.zeros(n)",
        "'anc.array_alloc' in @sized: array size -5 is negative",
    ),
    "zeros of 2**61 elements": (
        "ExecutionError",
        "sized",
        "rv.zeros(n)",
        "array of 2.305843009213694e+18 elements of 8 bytes is too large",
    ),
    # an array within MAX_ALLOCATION that malloc cannot give (under an
    # address-space limit): it wrote through the null pointer and took the
    # process down; numpy's words on the interpreter
    "zeros the memory cannot hold": (
        "ExecutionError",
        "sized_once",
        "rv.zeros(n)",
        "'anc.array_alloc' in @sized_once: cannot allocate 137438953472 bytes: out of memory",
    ),
    "zeros the memory cannot hold, backwards": (
        "ExecutionError",
        "sized_once",
        "rv.free(t)",
        "'anc.array_alloc' in @~sized_once: cannot allocate 137438953472 bytes: out of memory",
    ),
    "zeros the memory cannot hold, in a loop": (
        "ExecutionError",
        "sized_in_a_loop",
        "rv.zeros(n)",
        "'anc.array_alloc' in @sized_in_a_loop: cannot allocate 137438953472 bytes: out of memory",
    ),
    "stops at the first bad index": (
        "ExecutionError",
        "prefix_then_past_end",
        "x[i] += 1.0",
        "index 3 is out of bounds for axis 0 with size 3",
    ),
    "versioned loop fails in the middle": (
        "ExecutionError",
        "affine_reads",
        "x[2 * i + c]",
        "'memref.load' in @affine_reads: index 11 is out of bounds for axis 0 with size 10",
    ),
    "versioned loop fails in the middle, backwards": (
        "ExecutionError",
        "falling_reads",
        "x[c - i]",
        "in @~falling_reads: index 10 is out of bounds for axis 0 with size 10",
    ),
    "versioned loop falls below zero": (
        "ExecutionError",
        "falling_reads",
        "x[c - i]",
        "index -1 is out of bounds for axis 0 with size 10",
    ),
    "nested versioned loops fail in the middle": (
        "ExecutionError",
        "nested_reads",
        "x[i + j]",
        "index 5 is out of bounds for axis 0 with size 5",
    ),
    "a packed triangle read fails in the middle": (
        "ExecutionError",
        "packed_reads",
        "x[i * (2 * n - i - 1) // 2",
        "index 5 is out of bounds for axis 0 with size 5",
    ),
    "an index divided by a variable fails in a versioned loop": (
        "ExecutionError",
        "divided_reads",
        "x[i + len(x) // k]",
        "index 6 is out of bounds for axis 0 with size 6",
    ),
    "an index divided by zero in a versioned loop": (
        "ExecutionError",
        "divided_reads",
        "x[i + len(x) // k]",
        "integer division by zero",
    ),
    "an index divided by -1 fails in a versioned loop": (
        "ExecutionError",
        "negated_reads",
        "x[i + k // -1]",
        "index 5 is out of bounds for axis 0 with size 5",
    ),
    "an indirect index fails in a versioned loop": (
        "ExecutionError",
        "indirect_reads",
        "x[at[i]]",
        "index 5 is out of bounds for axis 0 with size 5",
    ),
    "fails in a callee": ("ExecutionError", "callee_read", "y += x[i]", "in @callee_read: index 2 is out of bounds"),
    "fails in a callee, backwards": (
        "ExecutionError",
        "callee_read",
        "y += x[i]",
        "in @~callee_read: index 2 is out of bounds",
    ),
    "arrays after a failed check": (
        "InvertibilityError",
        "dirty_free",
        "rv.free(t)",
        "in @dirty_free: ancilla freed holding 2.0, expected 0.0",
    ),
    "recursion without end": (
        "ExecutionError",
        "recurse_forever",
        "    recurse_forever(y)",
        "in @recurse_forever_1: calls nest too deeply: the recursion would exhaust the stack",
    ),
    "recursion 10**6 deep": ("ExecutionError", "recurse", "recurse(y, n)", "in @recurse_1: calls nest too deeply"),
    "recursion 10**6 deep, backwards": (
        "ExecutionError",
        "recurse",
        "recurse(y, n)",
        "in @~recurse_1: calls nest too deeply",
    ),
    "ordinary: divide by zero": (
        "ExecutionError",
        "ordinary_divide",
        "a // b",
        "in @ordinary_divide: integer division by zero",
    ),
    "ordinary: read past the end": (
        "ExecutionError",
        "ordinary_sum",
        "x[i]",
        "in @ordinary_sum: index 3 is out of bounds for axis 0 with size 3",
    ),
    "ordinary: write at -1": (
        "ExecutionError",
        "ordinary_write",
        "x[i] = 1.0",
        "'memref.store' in @ordinary_write: index -1 is out of bounds",
    ),
}


@pytest.mark.parametrize("case", list(EXPECTED))
def test_the_error_is_located_in_the_function_that_failed(case: str):
    error, function, text, message = EXPECTED[case]
    result = outcome("native", case)
    assert result.get("error") == error, result
    assert result["message"].startswith(line_of(function, text)), result["message"]
    assert message in result["message"]


RESULTS = {
    "shift left by 63": [-(2**63), 1, 63],
    "add a bool": [6, True],
    "add True": 6,
    "add a bool to a float": [1.5, True],
    "zeros of 10**7 elements": [1.0, 10**7],
    "zeros of 3 elements": [1.0, 3],
    "zeros of a large static size": 9.0,
    "recursion 30 deep": [30.0, 30],
}


@pytest.mark.parametrize("case", list(RESULTS))
def test_edge_cases_compute_the_defined_result(case: str):
    """True is 1 (MLIR's ``extui``), shifts within the width are shifts,
    large and run-time-sized ancilla arrays work (on the heap)."""
    assert outcome("native", case).get("result") == RESULTS[case]


def test_arrays_keep_what_the_run_wrote_before_the_failed_check():
    assert outcome("native", "stops at the first bad index")["arrays"] == [[1.0, 1.0, 1.0]]
    # written before the failing free, not after it
    assert outcome("native", "arrays after a failed check")["arrays"] == [[1.0, 0.0]]
    assert outcome("native", "step of two")["arrays"] == [[1.0, 0.0, 1.0, 0.0, 1.0]]


def test_a_versioned_loop_stops_at_the_element_the_checked_loop_stops_at():
    """Loops whose indices are affine in their variable run without their
    index checks where both ends are in range (``rev-version-loops``), and
    as before where not: the run stops at the first bad element, with
    what came before it written."""
    assert outcome("native", "versioned loop in range").get("result") == [[1.0, 3.0, 5.0, 7.0], list(range(10)), 4, 1]
    assert outcome("native", "versioned loop fails in the middle")["arrays"][0] == [
        1.0,
        3.0,
        5.0,
        7.0,
        9.0,
        0.0,
        0.0,
        0.0,
    ]
    assert outcome("native", "versioned loop fails in the middle, backwards")["arrays"][0] == [0.0] * 3 + [
        -9.0,
        -8.0,
        -7.0,
        -6.0,
        -5.0,
    ]
    assert outcome("native", "versioned loop falls below zero")["arrays"][0] == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0, 0.0, 0.0]
    assert outcome("native", "nested versioned loops fail in the middle")["arrays"][0] == [
        [0.0, 1.0, 2.0],
        [1.0, 2.0, 3.0],
        [2.0, 3.0, 4.0],
        [3.0, 4.0, 0.0],
    ]
    assert outcome("native", "an indirect index fails in a versioned loop")["arrays"][0] == [4.0, 0.0, 0.0, 0.0]
    assert outcome("native", "a packed triangle read in range")["arrays"][0] == [0.0, 1.0, 6.0, 14.0]
    assert outcome("native", "an index divided by -1 in a versioned loop")["arrays"][0] == [2.0, 3.0, 4.0]
    assert outcome("native", "an index divided by -1 fails in a versioned loop")["arrays"][0] == [3.0, 4.0, 0.0]
    assert outcome("native", "a packed triangle read fails in the middle")["arrays"][0] == [0.0, 1.0, 6.0, 8.0]
    assert outcome("native", "an index divided by a variable fails in a versioned loop")["arrays"][0] == [
        3.0,
        4.0,
        5.0,
        0.0,
    ]


@pytest.mark.parametrize("case", ["write a view of bytes", "write a read-only mmap"])
def test_a_read_only_array_is_refused_where_the_function_writes_it(case: str):
    result = outcome("native", case)
    assert result.get("error") == "ValueError", result
    assert result["message"] == (
        "argument 'x' of write_past_end is a read-only array, and write_past_end "
        "writes it; pass a writeable copy (numpy.array(...))"
    )
    assert result["arrays"] == [[0.0] * 4]


def test_a_read_only_array_may_be_read():
    assert outcome("native", "read a view of bytes").get("result") == [0.0, [0.0] * 4, 3]


IR_MESSAGES = {
    **{
        f"mlir: {op} by zero": f"'arith.{op}' in @f: integer division by zero"
        for op in ("divsi", "divui", "floordivsi", "ceildivsi")
    },
    **{f"mlir: {op} by zero": f"'arith.{op}' in @f: integer remainder by zero" for op in ("remsi", "remui")},
    "mlir: shrui by 64": "case.mlir:3:3: 'arith.shrui' in @f: shift count 64 is out of range for i64",
    "mlir: constant shift count": "case.mlir:6:3: 'arith.shli' in @f: shift count 64 is out of range for i64",
    "mlir: constant index of a static shape": "case.mlir:4:3: 'memref.load' in @f: index 4 is out of bounds for axis 0 with size 4",
    "mlir: memref.alloc the memory cannot hold": (
        "case.mlir:6:3: 'memref.alloc' in @f: cannot allocate 137438953472 bytes: out of memory"
    ),
    "mlir: memref.alloc of -1 f64s": "case.mlir:6:3: 'memref.alloc' in @f: array size -1 is negative",
    **{
        f"mlir: memref.alloc of {shown} f64s": (
            f"case.mlir:6:3: 'memref.alloc' in @f: array of {float(n)!r} elements of 8 bytes is too large"
        )
        for shown, n in ALLOCATION_SIZES
        if n > 0
    },
    "mlir: memref.alloca of 65537 f64s": (
        "case.mlir:6:3: 'memref.alloca' in @f: array of 65537.0 elements of 8 bytes is too large for a stack "
        "allocation (at most 524288 bytes): allocate it with memref.alloc"
    ),
    "mlir: memref.alloca of a static 10**8 f64s": (
        "case.mlir:6:3: 'memref.alloca' in @f: array of 100000000.0 elements of 8 bytes is too large for a stack "
        "allocation (at most 524288 bytes): allocate it with memref.alloc"
    ),
    "mlir: memref.alloca of -1 f64s": "case.mlir:6:3: 'memref.alloca' in @f: array size -1 is negative",
    "mlir: memref.alloca of 2**61 f64s": (
        "case.mlir:6:3: 'memref.alloca' in @f: array of 2.305843009213694e+18 elements of 8 bytes is too large"
    ),
}


def test_an_array_within_the_bound_is_allocated_on_the_stack():
    assert outcome("native", "mlir: memref.alloca of 65536 f64s").get("result") == [65536, 98304.0]
    assert outcome("native", "mlir: memref.alloca of a static 60000 f64s").get("result") == [3, 4.5]


@pytest.mark.parametrize("case", list(IR_MESSAGES))
def test_every_integer_division_and_shift_is_checked(case: str):
    result = outcome("native", case)
    assert result.get("error") == "ExecutionError", result
    assert IR_MESSAGES[case] in result["message"]
