"""Answers about IR kept while the IR is unchanged (``revmlir.kept_answers``):
once per subject inside ``ir_unchanged()``, every time outside, and the
same answers either way."""

from __future__ import annotations

import threading

from revmlir.kept_answers import ir_unchanged, kept
from revmlir.parsing import parse_module
from revmlir.semantics import argument_uses, argument_writes, function_uses

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
            assert kept(Counted(), first) == (first, 1)
        assert kept(question, second) == (second, 2)
    assert kept(question, first) == (first, 3)
    with ir_unchanged():
        assert kept(question, first) == (first, 4)


def test_another_thread_does_not_see_a_block() -> None:
    question, subject = Counted(), object()
    seen: list[tuple[object, int]] = []
    with ir_unchanged():
        kept(question, subject)
        thread = threading.Thread(target=lambda: seen.append(kept(question, subject)))
        thread.start()
        thread.join()
    assert seen == [(subject, 2)]


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
