"""Canonicalization patterns shared by the reversible ops.

They are generic over the ``InvertibleOp`` interface: an op followed by its own
inverse cancels, and ``rev.inv`` of ``rev.inv`` folds to the inner region.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from revmlir.dialects import rev
from revmlir.interfaces import InvertibleOp
from revmlir.inversion import inline_block
from revmlir.semantics import is_reference_type


def _references(op: Operation) -> set[SSAValue]:
    """The arrays and stacks ``op`` (its regions included) reads or writes."""
    return {v for inner in op.walk() for v in inner.operands if is_reference_type(v.type)}


def _undone(op: InvertibleOp, allowed: Callable[[Operation], bool]) -> InvertibleOp | None:
    """The earlier op that ``op`` undoes, if any: the nearest one before it
    whose results ``op`` consumes (and nothing else uses), passing over ops
    independent of ``op`` — they define none of its operands and touch none
    of the arrays and stacks it touches — since ``a; b; a⁻¹`` is ``b`` when
    ``b`` and ``a`` are independent (``a⁻¹`` touches what ``a`` does).
    Inverse pairs meet this way where two runs are concatenated: ``@f``'s
    final uncomputation and its undoing at the start of a loss-seeded
    ``@f.adj``, with gradient bookkeeping in between."""
    operands = {v for inner in op.walk() for v in inner.operands}
    consumed = list(op.consumed_operands())
    touched = _references(op)
    candidate = op.prev_op
    while candidate is not None:
        if (
            isinstance(candidate, InvertibleOp)
            and consumed == list(candidate.results)
            and all(use.operation is op for r in candidate.results for use in r.uses)
            and op.is_inverse_of(candidate)
            and candidate.is_inverse_of(op)
            and allowed(candidate)
        ):
            return candidate
        if operands.intersection(candidate.results) or touched & _references(candidate):
            return None
        candidate = candidate.prev_op
    return None


@dataclass(frozen=True)
class CancelInversePair(RewritePattern):
    """``a`` followed by ``a⁻¹`` on the same values is the identity, also
    with independent ops between them (``_undone``).

    For floats this removes a rounding step (``(y + v) - v`` becomes ``y``),
    which only makes the program more exact.  Like every canonicalization it
    assumes the run-time checks pass: a checked ``anc.free`` that cancels
    with an ``anc.alloc`` is no longer checked.
    """

    pairs: Callable[[Operation, Operation], bool] | None = None
    """Which ``(a, a⁻¹)`` may cancel (all of them by default)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, InvertibleOp):
            return
        pairs = self.pairs
        first = _undone(op, lambda candidate: pairs is None or pairs(candidate, op))
        if first is None:
            return
        replacements = list(first.ended_operands())
        if len(replacements) != len(op.results):
            return
        rewriter.replace(op, [], replacements)
        rewriter.erase(first)


class FoldInvOfInv(RewritePattern):
    """``rev.inv { rev.inv { X } }`` is ``X``."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, rev.InvOp):
            return
        outer = op.body.block
        ops = list(outer.ops)
        if len(ops) != 2 or not isinstance(inner := ops[0], rev.InvOp):
            return
        if list(inner.state) != list(outer.args) or list(ops[1].operands) != list(inner.res):
            return
        builder = Builder(InsertPoint.before(op))
        results = inline_block(inner.body.block, list(op.state), builder)
        rewriter.replace(op, [], results)
