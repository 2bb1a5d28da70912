"""Generated programs (stacks included) run natively exactly as on the
reference interpreter: bitwise for integers, to the last bits of libm for
floats, forward and back."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from program_generator import Program, arguments, programs
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime.native import NativeModule

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def same(a: Any, b: Any, exact: bool) -> bool:
    if isinstance(a, np.ndarray):
        return all(same(x.item(), y.item(), exact) for x, y in zip(a.ravel(), b.ravel()))
    if isinstance(a, list):  # a stack
        return len(a) == len(b) and all(same(x, y, exact) for x, y in zip(a, b))
    if isinstance(a, float) and not exact:
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


@SETTINGS
@given(programs(), st.data())
def test_native_code_agrees_with_the_interpreter(program: Program, data: st.DataObject):
    func = data.draw(st.sampled_from(program.functions), label="function")
    module = parse_module(program.text)
    interpreter, native = RevInterpreter(module), NativeModule.compile(module)
    args = data.draw(arguments(func), label="args")
    exact = "f64" not in program.text

    expected = interpreter.call(func.name, *copy.deepcopy(args))
    actual = native.call(func.name, *copy.deepcopy(args))
    for i, (e, a) in enumerate(zip(expected, actual)):
        assert same(e, a, exact), f"forward, argument #{i}: native {a!r}, interpreter {e!r}"

    restored = native.uncall(func.name, *copy.deepcopy(actual))
    for i, (e, a) in enumerate(zip(args, restored)):
        assert same(e, a, exact=False), f"backward, argument #{i}: {a!r} instead of {e!r}"
