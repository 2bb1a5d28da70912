"""Answers about IR kept while the IR is unchanged (``revmlir.kept_answers``):
once per subject inside ``ir_unchanged()``, every time outside, and the
same answers either way."""

from __future__ import annotations

import contextvars
import re
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

import revmlir as rv
from python_examples import load_example
from revmlir import kept_answers, semantics
from revmlir.counters import counter_arguments
from revmlir.dialects.rev import FuncOp
from revmlir.kept_answers import ir_unchanged, kept, kept_answer
from revmlir.parsing import parse_module, verify_module
from revmlir.semantics import argument_uses, argument_writes, function_uses, written_arguments

MODULE = """
rev.func @helper(%a: memref<4xf64>, %b: memref<4xf64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %b[%c0] : memref<4xf64>
  %x = rev.take %a[%c0] : memref<4xf64>
  %y = rev.add %x, %v : f64
  rev.put %y, %a[%c0] : memref<4xf64>
  rev.return
}
rev.func @main(%a: memref<4xf64>, %b: memref<4xf64>) {
  rev.call @helper(%a, %b) : (memref<4xf64>, memref<4xf64>) -> ()
  rev.return
}
"""


@pytest.fixture(autouse=True)
def unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept answers not computed again (``REVMLIR_CHECK_KEPT`` unset): the
    tests count the computations, and check them where they say so."""
    monkeypatch.setattr(kept_answers, "_CHECK", False)


class Counted:
    """A question that counts how often it is computed."""

    def __init__(self) -> None:
        self.asked: list[object] = []

    def __call__(self, subject: object) -> tuple[object, int]:
        self.asked.append(subject)
        return (subject, len(self.asked))


def test_outside_a_block_every_question_is_computed() -> None:
    question, subject = Counted(), object()
    assert kept(question, subject) == (subject, 1)
    assert kept(question, subject) == (subject, 2)


def test_inside_a_block_once_per_subject_until_the_block_ends() -> None:
    question, first, second = Counted(), object(), object()
    with ir_unchanged():
        assert kept(question, first) == (first, 1)
        assert kept(question, second) == (second, 2)
        assert kept(question, first) == (first, 1)
        with ir_unchanged():
            # an inner block shares the outer one's answers, and keeps them
            assert kept(question, first) == (first, 1)
            third = object()
            assert kept(question, third) == (third, 3)
        assert kept(question, second) == (second, 2)
        assert kept(question, third) == (third, 3)
    assert kept(question, first) == (first, 4)
    with ir_unchanged():
        assert kept(question, first) == (first, 5)


def test_a_thread_in_a_fresh_context_does_not_see_a_block() -> None:
    # the table is per context: the thread runs in an empty one whether or
    # not this Python's threads inherit their starter's context
    question, subject = Counted(), object()
    seen: list[tuple[object, int]] = []
    with ir_unchanged():
        kept(question, subject)
        thread = threading.Thread(
            target=contextvars.Context().run, args=(lambda: seen.append(kept(question, subject)),)
        )
        thread.start()
        thread.join()
        assert kept(question, subject) == (subject, 1)
    assert seen == [(subject, 2)]


def test_a_stale_answer_is_found_when_kept_answers_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    module = parse_module(MODULE)
    helper = next(iter(module.ops))
    put = next(op for op in helper.walk() if op.name == "rev.put")
    with ir_unchanged():
        argument_uses(helper)
        helper.body.block.erase_op(put, safe_erase=False)
        assert [op.name for op, _ in argument_uses(helper)[0]] == ["rev.take", "rev.put"]
        monkeypatch.setattr(kept_answers, "_CHECK", True)
        with pytest.raises(AssertionError, match="kept answer of _function_uses is stale"):
            argument_uses(helper)


def test_the_analyses_answer_the_same_inside_and_outside() -> None:
    module = parse_module(MODULE)
    helper, main = module.ops
    outside = (argument_writes(module), [argument_uses(f) for f in (helper, main)])
    assert function_uses(helper) is not function_uses(helper)
    with ir_unchanged():
        inside = (argument_writes(module), [argument_uses(f) for f in (helper, main)])
        assert function_uses(helper) is function_uses(helper)
        assert argument_writes(module) is argument_writes(module)
    assert inside == outside
    writes, (helper_uses, main_uses) = outside
    assert [how.value for how in writes["helper"]] == ["accumulates", "none"]
    assert [how.value for how in writes["main"]] == ["accumulates", "none"]
    assert [[op.name for op, _ in uses] for uses in helper_uses] == [["rev.take", "rev.put"], ["memref.load"]]
    assert [[(op.name, index) for op, index in uses] for uses in main_uses] == [[("rev.call", 0)], [("rev.call", 1)]]


def test_an_answer_is_computed_again_after_the_ir_changed() -> None:
    module = parse_module(MODULE)
    helper = next(iter(module.ops))
    with ir_unchanged():
        before = argument_uses(helper)
    take = next(op for op in helper.walk() if op.name == "rev.take")
    put = next(op for op in helper.walk() if op.name == "rev.put")
    helper.body.block.erase_op(put, safe_erase=False)
    helper.body.block.erase_op(take, safe_erase=False)
    assert [[op.name for op, _ in uses] for uses in before] == [["rev.take", "rev.put"], ["memref.load"]]
    assert [[op.name for op, _ in uses] for uses in argument_uses(helper)] == [[], ["memref.load"]]


ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted([*ROOT.glob("examples/*.mlir"), *ROOT.glob("tests/filecheck/**/*.mlir")])
"""The modules written by hand in the repository, each of their split inputs."""


def _outcome(compute: Callable[[], object]) -> object:
    """What ``compute`` returns, or the class and message of what it raises
    (a module of the corpus may be refused, or make an analysis fail)."""
    try:
        return compute()
    except Exception as error:
        return (type(error), str(error))


def _answers(module: ModuleOp) -> object:
    functions = [op for op in module.ops if isinstance(op, FuncOp | func.FuncOp) and op.body.blocks]
    return (
        _outcome(lambda: argument_writes(module)),
        [_outcome(lambda: function_uses(f)) for f in functions],
        _outcome(lambda: counter_arguments(module)),
    )


def test_the_corpus_answers_the_same_inside_and_outside_a_block() -> None:
    # every module is verified inside a block, as parse_module does, and the
    # answers its verification kept are those computed afresh outside: a
    # verifier that changed the IR, or a kept answer that outlives it, or a
    # key that two subjects share, would differ
    compared = 0
    for path in CORPUS:
        for chunk in re.split(r"^// -----$", path.read_text(), flags=re.M):
            try:
                module = parse_module(chunk, str(path), verify=False)
            except ParseError:
                continue
            with ir_unchanged():
                inside_verified = _outcome(lambda: verify_module(module))
                inside = _answers(module)
            assert _outcome(lambda: verify_module(module)) == inside_verified, path
            assert _answers(module) == inside, path
            compared += 1
    assert compared > 250


def test_a_kept_answer_is_handed_on_only_where_the_block_computed_it() -> None:
    question, subject = Counted(), object()
    assert kept_answer(question, subject) is None  # outside any block
    with ir_unchanged():
        assert kept_answer(question, subject) is None  # not asked yet
        assert kept(question, subject) == (subject, 1)
        assert kept_answer(question, subject) == (subject, 1)
    assert kept_answer(question, subject) is None  # the block ended
    assert question.asked == [subject]


def test_a_specialisation_takes_the_writes_its_verification_worked_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module whose parallel loop calls has its ``argument_writes`` asked
    by the verifier: the specialisation's ``written`` is that answer, not a
    second computation, and the same as one."""
    for name in ("paper_basics", "gpu_elementwise"):
        load_example(name)
    computed: list[ModuleOp] = []
    question = semantics._argument_writes

    def counted(module: ModuleOp) -> dict[str, tuple[semantics.Writes, ...]]:
        computed.append(module)
        return question(module)

    monkeypatch.setattr(semantics, "_argument_writes", counted)
    complex_log = rv.reversible(load_example("gpu_elementwise").complex_log.pyfunc, backend="interpreter")
    spec = complex_log.specialization_for(np.zeros(3, complex), np.ones(3, complex))
    assert len(computed) == 1
    assert spec.written == (True, True)  # the routine form writes x and restores it
    assert len(computed) == 1
    assert written_arguments(spec.module)[spec.name] == frozenset({0, 1})


def test_a_specialisation_whose_verification_did_not_ask_works_the_writes_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    computed: list[ModuleOp] = []
    question = semantics._argument_writes
    monkeypatch.setattr(semantics, "_argument_writes", lambda module: computed.append(module) or question(module))

    @rv.reversible(backend="interpreter")
    def scale(y, x):
        for i in range(len(x)):
            y[i] += 2.0 * x[i]

    spec = scale.specialization_for(np.zeros(3), np.ones(3))
    assert computed == []
    assert spec.written == (True, False)
    assert computed == [spec.module]
