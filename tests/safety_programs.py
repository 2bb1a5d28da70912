"""Programs that leave defined behaviour (an index outside its array, a
division by zero, a shift by the width, a step of zero, an array of negative
size, …), each run on one engine in a process of its own by
``test_native_safety.py``: native code that regressed could take the
process down.  ``python safety_programs.py ENGINE`` prints one JSON line per
case: the error raised (type, message, op, location, function) and the
arrays after the call."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import revmlir as rv


def read_past_end(y, x, i):
    y += x[i]


def write_past_end(y, x, i):
    x[i] += y


def read_axis_one(y, m, i, j):
    y += m[i, j]


def divide(y: int, a: int, b: int):
    y += a // b


def remainder(y: int, a: int, b: int):
    y += a % b


def shift_left(y: int, a: int, b: int):
    y += a << b


def shift_right(y: int, a: int, b: int):
    y += a >> b


def add_bool(y: int, b: bool):
    y += b


def add_true(y: int):
    y += True


def add_bool_to_float(y: float, b: bool):
    y += b


def stepped(x, s: int):
    for i in range(0, len(x), s):
        x[i] += 1.0


def sized(y, n: int):
    t = rv.zeros(n)
    for i in range(n):
        t[i] += y
    for i in range(n):
        t[i] -= y
    rv.free(t)


def sized_once(y, n: int):
    t = rv.zeros(n)
    t[n - 1] += y
    t[n - 1] -= y
    rv.free(t)


def big_frame(y):
    t = rv.zeros(10000)
    t[9999] += y
    y += t[9999] * 2.0
    t[9999] -= y / 3.0
    rv.free(t)


def prefix_then_past_end(x, n: int):
    for i in range(n):
        x[i] += 1.0


@rv.reversible
def callee_read(y, x, i):
    y += x[i]


def caller(y, x, i):
    y += 1.0
    callee_read(y, x, i)


def dirty_free(x, y):
    x[0] += 1.0
    t = rv.ancilla(0.0)
    t += y
    rv.free(t)
    x[1] += 1.0


CASES: dict[str, tuple[Callable[..., Any], Callable[[], tuple[Any, ...]], bool]] = {
    # name: (function, arguments, run backwards)
    "read past the end": (read_past_end, lambda: (0.0, np.zeros(4), 4), False),
    "read at -1": (read_past_end, lambda: (0.0, np.zeros(4), -1), False),
    "read from an empty array": (read_past_end, lambda: (0.0, np.zeros(0), 0), False),
    "write past the end": (write_past_end, lambda: (1.0, np.zeros(4), 7), False),
    "write at -3": (write_past_end, lambda: (1.0, np.zeros(4), -3), False),
    "write past the end, backwards": (write_past_end, lambda: (1.0, np.zeros(4), 9), True),
    "read outside axis 1": (read_axis_one, lambda: (0.0, np.zeros((2, 3)), 1, 3), False),
    "read outside axis 0": (read_axis_one, lambda: (0.0, np.zeros((2, 3)), -1, 0), False),
    "divide by zero": (divide, lambda: (0, 7, 0), False),
    "remainder by zero": (remainder, lambda: (0, 7, 0), False),
    "divide by zero, backwards": (divide, lambda: (0, 7, 0), True),
    "shift left by 64": (shift_left, lambda: (0, 1, 64), False),
    "shift right by 200": (shift_right, lambda: (0, 1, 200), False),
    "shift left by -1": (shift_left, lambda: (0, 1, -1), False),
    "shift left by 63": (shift_left, lambda: (0, 1, 63), False),
    "add a bool": (add_bool, lambda: (5, True), False),
    "add True": (add_true, lambda: (5,), False),
    "add a bool to a float": (add_bool_to_float, lambda: (0.5, True), False),
    "step of zero": (stepped, lambda: (np.zeros(5), 0), False),
    "negative step": (stepped, lambda: (np.zeros(5), -2), False),
    "step of two": (stepped, lambda: (np.zeros(5), 2), False),
    "zeros of negative size": (sized, lambda: (1.0, -5), False),
    "zeros of 2**61 elements": (sized, lambda: (1.0, 2**61), False),
    "zeros of 10**7 elements": (sized_once, lambda: (1.0, 10**7), False),
    "zeros of 3 elements": (sized, lambda: (1.0, 3), False),
    "zeros of a large static size": (big_frame, lambda: (3.0,), False),
    "stops at the first bad index": (prefix_then_past_end, lambda: (np.zeros(3), 6), False),
    "fails in a callee": (caller, lambda: (0.0, np.zeros(2), 2), False),
    "fails in a callee, backwards": (caller, lambda: (0.0, np.zeros(2), 2), True),
    "arrays after a failed check": (dirty_free, lambda: (np.zeros(2), 2.0), False),
}


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def run(name: str, engine: str) -> dict[str, Any]:
    function, arguments, backwards = CASES[name]
    compiled = rv.reversible(backend=engine)(function)
    args = arguments()
    outcome: dict[str, Any] = {"case": name}
    try:
        outcome["result"] = _plain((~compiled if backwards else compiled)(*args))
    except Exception as error:  # the test compares what each engine raised
        outcome["error"] = type(error).__name__
        outcome["message"] = str(error)
        for field in ("op_name", "location", "function"):
            outcome[field] = getattr(error, field, None)
    outcome["arrays"] = [a.tolist() for a in args if isinstance(a, np.ndarray)]
    return outcome


if __name__ == "__main__":
    for case in CASES:
        print(json.dumps(run(case, sys.argv[1])), flush=True)
