"""Canonicalization patterns shared by the reversible ops.

They are generic over the ``InvertibleOp`` interface: an op followed by its own
inverse cancels, and ``rev.inv`` of ``rev.inv`` folds to the inner region.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from revmlir.dialects import rev
from revmlir.interfaces import InvertibleOp
from revmlir.inversion import inline_block
from revmlir.semantics import is_expression_op


def _previous_effectful(op: Operation) -> Operation | None:
    prev = op.prev_op
    while prev is not None and is_expression_op(prev):
        prev = prev.prev_op
    return prev


class CancelInversePair(RewritePattern):
    """``a`` immediately followed by ``a⁻¹`` on the same values is the identity.

    For floats this removes a rounding step (``(y + v) - v`` becomes ``y``),
    which only makes the program more exact.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, InvertibleOp):
            return
        first = _previous_effectful(op)
        if not isinstance(first, InvertibleOp):
            return
        if list(op.consumed_operands()) != list(first.results):
            return
        if any(use.operation is not op for r in first.results for use in r.uses):
            return
        if not (op.is_inverse_of(first) and first.is_inverse_of(op)):
            return
        replacements = list(first.consumed_operands())
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
        if list(inner.state) != list(outer.args) or list(
            ops[1].operands
        ) != list(inner.res):
            return
        builder = Builder(InsertPoint.before(op))
        results = inline_block(inner.body.block, list(op.state), builder)
        rewriter.replace(op, [], results)
