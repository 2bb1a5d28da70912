"""A module given to an engine (``RevInterpreter``, ``NativeModule.compile``)
is verified there, once: one the builder finished without verifying, or
text parsed without it, is refused at the op that breaks a rule, where it
ran as it was; the frontend's own modules, verified as they are built, are
not verified again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, f64, i64
from xdsl.utils.exceptions import VerifyException

import revmlir as rv
from revmlir.builder import ModuleBuilder
from revmlir.errors import ReversibilityViolation, describe_op
from revmlir.frontend.base import specialization
from revmlir.frontend.ordinary_code.functions import OrdinarySpecialization
from revmlir.interpreter import RevInterpreter
from revmlir.parsing import parse_module
from revmlir.runtime import backend
from revmlir.runtime.native import NativeModule

ENGINES: dict[str, Callable[[ModuleOp], Any]] = {"interpreter": RevInterpreter, "native": NativeModule.compile}


def _loc(line: int) -> FileLineColLoc:
    return FileLineColLoc(StringAttr("model.src"), IntAttr(line), IntAttr(1))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_module_the_builder_did_not_verify_is_refused_at_its_op(engine: str):
    """``x -= x·x`` reads its own target: no inverse undoes it.  Finished
    with ``verify=False``, both engines ran it (``x`` of 3.0 became -6.0)."""
    mb = ModuleBuilder()
    fn = mb.function("f", [("x", f64)], loc=_loc(1))
    fn.sub("x", fn["x"] * fn["x"], loc=_loc(2))
    fn.finish()
    module = mb.finish(verify=False)
    with pytest.raises(ReversibilityViolation, match=r"^\[self-read\] 'rev.sub' reads its own target %x") as refused:
        ENGINES[engine](module)
    assert describe_op(refused.value.op) == "'rev.sub' at model.src:2:1"


MISSING_CALLEE = """rev.func @f(%y: f64, %a: f64) {
  %y1, %a1 = rev.call @g(%y, %a) : (f64, f64) -> (f64, f64)
  rev.return %y1, %a1 : f64, f64
}"""


@pytest.mark.parametrize("engine", ENGINES)
def test_a_call_of_a_missing_function_is_refused_at_the_call(engine: str):
    """Native code raised a ``KeyError`` of the name alone; the interpreter
    ran until the call."""
    module = parse_module(MISSING_CALLEE, "given.mlir", verify=False)
    with pytest.raises(VerifyException, match="'rev.call' refers to unknown function @g") as refused:
        ENGINES[engine](module)
    assert isinstance(refused.value, ReversibilityViolation)
    assert describe_op(refused.value.op) == "'rev.call' at given.mlir:2:3"


@rv.reversible
def _scaled(y, x):
    y += 2.0 * x
    y -= np.sin(x)


@pytest.mark.parametrize("backend_name", ["interpreter", "native"])
def test_the_frontends_modules_are_not_verified_again(backend_name: str, monkeypatch: pytest.MonkeyPatch):
    """The frontend verifies what it builds; its engines, and those of the
    derived programs, take its modules as verified."""
    verified: list[ModuleOp] = []
    verify = backend.verify_module
    monkeypatch.setattr(backend, "verify_module", lambda module: verified.append(module) or verify(module))
    f = rv.reversible(backend=backend_name)(_scaled.__wrapped__)
    assert f(0.0, 0.5)[0] == pytest.approx(1.0 - np.sin(0.5))
    assert rv.gradient(f, (0.0, 0.5))[1] == pytest.approx(2.0 - np.cos(0.5))
    assert (~f)(1.0 - np.sin(0.5), 0.5)[0] == pytest.approx(0.0)
    assert verified == []
    given = parse_module("rev.func @f(%y: f64) {\n  %y1 = rev.neg %y : f64\n  rev.return %y1 : f64\n}", verify=False)
    assert NativeModule.compile(given).call("f", 2.0) == (-2.0,)
    assert verified == [given]


def _decayed(x: float, steps: int) -> float:
    for _ in rv.checkpointed(range(steps), snapshots=2):
        x = x * 0.5 + np.sin(x)
    return x


def test_modules_a_transformation_builds_are_verified_where_built(monkeypatch: pytest.MonkeyPatch):
    """The reversible form of an ``@rv.ordinary`` function, its
    checkpointed gradient's module and an inverse's module reached the
    engines as verified without a verification; each is verified once,
    where it is built (``verify_derived``)."""
    verified: list[ModuleOp] = []
    verify = specialization.verify_module
    monkeypatch.setattr(specialization, "verify_module", lambda module: verified.append(module) or verify(module))
    ordinary = OrdinarySpecialization.compile(rv.ordinary(_decayed), (f64, i64))
    assert verified == [ordinary.reversible.module]
    checkpointed = ordinary.checkpointed_gradient
    assert verified == [ordinary.reversible.module, checkpointed.module]
    inverse = rv.reversible(_scaled.__wrapped__).specialization_for(0.0, 0.5).inverse
    assert verified[2:] == [inverse.module]
