"""Adjoints of generated programs (loops, branches, ancillas, stacks, calls,
routines) against central finite differences, and loss-seeded adjoints
(``@f.adj.lossK``) against the ordinary adjoint seeded the same way.

The adjoint leaves out gradient updates it knows add zero (design decision
18): an ancilla's gradient starts at zero, a loop body that keeps a zero
gradient zero is built assuming it, a call with only zero gradients is just
inverted.  A wrong assumption there gives a wrong gradient, which these
programs, drawn at random, are meant to find."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from program_generator import F64, FuncInfo, Param, Program, arguments, programs
from revmlir.ad.adjoint import adjoint_name, generate_adjoints
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module

SETTINGS = settings(
    max_examples=45,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def carries(param: Param) -> bool:
    return param.elem == F64


def seed(param: Param, output: Any, unit: bool) -> Any:
    """The output gradient of one argument: 1 or 0 for a scalar, zeros
    shaped like an array or stack."""
    if param.kind == "scalar":
        return 1.0 if unit else 0.0
    if param.kind == "memref":
        return np.zeros_like(output)
    return [0.0] * len(output)


def differences(run: RevInterpreter, func: FuncInfo, args: tuple[Any, ...], loss: int) -> dict[tuple[int, int], float]:
    """Central differences of output ``loss`` with respect to every float
    scalar and float array element of the inputs."""
    h = 1e-6
    found = {}

    def output(shifted: list[Any]) -> float:
        return float(run.call(func.name, *copy.deepcopy(shifted))[loss])

    for i, param in enumerate(func.params):
        if not carries(param) or param.kind == "stack":
            continue
        for k in range(1 if param.kind == "scalar" else len(args[i])):
            plus, minus = copy.deepcopy(list(args)), copy.deepcopy(list(args))
            if param.kind == "scalar":
                plus[i] += h
                minus[i] -= h
            else:
                plus[i][k] += h
                minus[i][k] -= h
            found[(i, k)] = (output(plus) - output(minus)) / (2 * h)
    return found


def gradient_entries(func: FuncInfo, gradients: list[Any]) -> dict[tuple[int, int], float]:
    """``@f.adj``'s input gradients by (argument, element)."""
    found = {}
    carrying = [i for i, p in enumerate(func.params) if carries(p)]
    for i, g in zip(carrying, gradients, strict=True):
        if func.params[i].kind == "scalar":
            found[(i, 0)] = float(g)
        elif func.params[i].kind == "memref":
            found.update(((i, k), float(v)) for k, v in enumerate(g))
    return found


@SETTINGS
@given(programs(floats=True), st.data())
def test_adjoints_of_generated_programs(program: Program, data: st.DataObject):
    func = data.draw(st.sampled_from(program.functions), label="function")
    scalars = [i for i, p in enumerate(func.params) if p.kind == "scalar" and p.elem == F64]
    assume(scalars)
    loss = data.draw(st.sampled_from(scalars), label="loss")
    module = parse_module(program.text)
    generate_adjoints(module, [func.name])
    generate_adjoints(module, [func.name], loss=loss)
    module.verify()
    run = RevInterpreter(module)
    args = data.draw(arguments(func), label="args")

    outputs = run.call(func.name, *copy.deepcopy(args))
    seeds = [seed(p, out, i == loss) for i, (p, out) in enumerate(zip(func.params, outputs)) if carries(p)]
    # a call returns every argument: f's inputs, then the input gradients
    n = len(args)
    ordinary = list(run.call(adjoint_name(func.name), *copy.deepcopy(outputs), *copy.deepcopy(seeds)))
    seeded = list(run.call(adjoint_name(func.name, loss=loss), *copy.deepcopy(outputs), *copy.deepcopy(seeds)))
    expected = gradient_entries(func, ordinary[n:])
    found = gradient_entries(func, seeded[n:])
    for key, value in expected.items():
        assert math.isclose(found[key], value, rel_tol=1e-12, abs_tol=1e-12), (
            f"argument #{key[0]}[{key[1]}]: loss-seeded {found[key]!r}, ordinary {value!r}"
        )
    for key, value in differences(run, func, args, loss).items():
        assert math.isclose(expected[key], value, rel_tol=1e-5, abs_tol=1e-5), (
            f"argument #{key[0]}[{key[1]}]: adjoint {expected[key]!r}, central difference {value!r}"
        )
    # both restore the inputs
    for result in (ordinary, seeded):
        for i, (a, r) in enumerate(zip(args, result[:n])):
            if isinstance(a, float):
                assert math.isclose(a, r, rel_tol=1e-9, abs_tol=1e-9), f"input #{i}"
