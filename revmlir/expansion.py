"""Expanding the constructs that run a block backwards inside forward code:
``rev.routine`` (compute, body, the inverse of compute: the preprocessing
stage of seed 000, appendix G.3) and ``rev.inv`` regions.

What is left runs in one direction, which is what the lowering and the
differentiators start from; both use the inverter, so this sits beside it.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import InsertPoint, Rewriter

from revmlir.dialects.rev import InvOp, RoutineOp
from revmlir.inversion import Inverter, inline_block, move_block


def expand_routine(op: RoutineOp) -> None:
    """Inline ``op`` as compute; body; ~compute."""
    builder = Builder(InsertPoint.before(op))
    computed = inline_block(op.compute.block, list(op.state), builder)
    used = move_block(op.body.block, computed, builder)
    inverter = Inverter(op, builder)
    state = inverter.invert_body(op.compute.block, op.compute.block.args, used)
    Rewriter.replace_op(op, [], state)


def expand_routines(module: ModuleOp) -> None:
    """Inline every ``rev.routine`` as compute; body; ~compute, innermost
    first: one walk finds them all, since expanding a routine whose nested
    ones are expanded makes none (a rewrite walker would walk the module
    again to find that out)."""
    for op in [o for o in module.walk(region_first=True) if isinstance(o, RoutineOp)]:
        expand_routine(op)


def inline_inverse_regions(module: ModuleOp) -> None:
    """Replace each ``rev.inv`` by its inverted body, innermost first (inverting
    an outer region rebuilds the ones nested in it)."""
    while (op := next((o for o in module.walk(region_first=True) if isinstance(o, InvOp)), None)) is not None:
        inverter = Inverter(op, Builder(InsertPoint.before(op)))
        block = op.body.block
        state = inverter.invert_body(block, block.args, list(op.state))
        Rewriter.replace_op(op, [], state)


def forward_only(module: ModuleOp) -> None:
    """Expand routines and inline ``rev.inv`` regions: what is left runs in
    one direction, which is what lowering and differentiation start from."""
    expand_routines(module)
    inline_inverse_regions(module)
