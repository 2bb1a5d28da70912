"""Expanding the constructs that run a block backwards inside forward code:
``rev.routine`` (compute, body, the inverse of compute: the preprocessing
stage of seed 000, appendix G.3) and ``rev.inv`` regions.

What is left runs in one direction, which is what the lowering and the
differentiators start from; both use the inverter, so this sits beside it.
A construct whose backward region the inverter cannot build is left as it
is, as an uncall of a function without an inverse is: the interpreter
inverts that region when a run first reaches it, so the construct fails
only there, and the lowering makes it fail there too.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint, Rewriter

from revmlir.dialects.rev import InvOp, RoutineOp
from revmlir.errors import InversionError, describe_op
from revmlir.inversion import Inverter, inline_block, move_block


def backward_region(op: InvOp | RoutineOp) -> Region:
    """The region ``op`` runs backwards, inverted (a ``rev.inv``'s body, a
    routine's compute): the region the interpreter runs, built apart, so
    that a failure (``InversionError``) leaves the module as it was."""
    region = op.compute if isinstance(op, RoutineOp) else op.body
    return Inverter(op, Builder(InsertPoint.at_end(Block()))).invert_region(region)


def _refusal(op: InvOp | RoutineOp, error: InversionError) -> InversionError:
    """The refusal of code that runs ``op``'s backward region whatever the
    input (an expanded routine, derived code), located at ``op``: the
    inverter's ``error`` locates only the op inside it that has no inverse."""
    return InversionError(f"{describe_op(op)}: its backward region has no inverse: {error}")


def expand_routine(op: RoutineOp) -> None:
    """Inline ``op`` as compute; body; ~compute (``InversionError`` if
    compute has no inverse, ``op`` unchanged)."""
    uncompute = backward_region(op)
    builder = Builder(InsertPoint.before(op))
    computed = inline_block(op.compute.block, list(op.state), builder)
    used = move_block(op.body.block, computed, builder)
    Rewriter.replace_op(op, [], move_block(uncompute.block, used, builder))


def expand_routines(module: ModuleOp) -> list[InversionError]:
    """Inline each ``rev.routine`` as compute; body; ~compute, innermost
    first: one walk finds every one it can expand, since expanding a
    routine whose nested ones are expanded makes none (a rewrite walker
    would walk the module again to find that out).  A routine whose compute
    has no inverse stays, and so do the copies of it that expanding a
    routine around it makes (they have no inverse either); a refusal
    located at each such routine the walk found is returned, innermost
    first."""
    errors: list[InversionError] = []
    for op in [o for o in module.walk(region_first=True) if isinstance(o, RoutineOp)]:
        try:
            expand_routine(op)
        except InversionError as error:
            errors.append(_refusal(op, error))
    return errors


def inline_inverse_regions(module: ModuleOp) -> list[InversionError]:
    """Replace each ``rev.inv`` by its inverted body, innermost first (inverting
    an outer region rebuilds the ones nested in it).  One whose body has no
    inverse stays; a refusal located at each is returned, innermost first."""
    errors: list[InversionError] = []
    left: set[InvOp] = set()
    while (
        op := next((o for o in module.walk(region_first=True) if isinstance(o, InvOp) and o not in left), None)
    ) is not None:
        try:
            inverse = backward_region(op)
        except InversionError as error:
            errors.append(_refusal(op, error))
            left.add(op)
            continue
        Rewriter.replace_op(op, [], move_block(inverse.block, list(op.state), Builder(InsertPoint.before(op))))
    return errors


def forward_only(module: ModuleOp) -> list[InversionError]:
    """Expand routines and inline ``rev.inv`` regions: what is left runs in
    one direction, which is what lowering and differentiation start from,
    but for the constructs whose backward region has no inverse, which stay.
    A refusal located at each is returned (the routines' first, then the
    ``rev.inv`` regions'), for code that runs those regions whatever the
    input: an expanded routine, derived code."""
    return expand_routines(module) + inline_inverse_regions(module)
