"""Split points anywhere: a loop nest becomes one loop of primitive steps.

Checkpointing a time loop at its iterations fails when iterations differ
wildly in cost: seed 001's adaptive-grid example runs an inner loop of a
few updates on most outer iterations and of O(l) on some, and the tape of
one long iteration is as large as the whole store-all tape.  The seed's cure
is to split at arbitrary execution points, counted in primitive steps.  In
compiled code the points worth splitting at are the iterations of the inner
loop, so this module rewrites

    scf.for %i = lb to ub step s iter_args(outer…) {   // checkpoint_split = "work"
      A(%i, outer…)                  // ends with the inner loop's bounds
      %r… = scf.for %j = jlb to jub step js iter_args(inner…) { B }
      C(%r…)
      scf.yield outer'…
    }

into one ``scf.while`` over the state ``(i, phase, j, jub, js, outer…,
inner…, live…)`` whose every iteration is one primitive step: ``A`` (start
an outer iteration), one ``B``, or ``C`` (end it).  ``live`` carries the
values ``A`` computes and ``B`` or ``C`` read.  ``reversibilize`` turns it
into a ``rev.while`` with a tape per step, and ``ad-checkpoint`` reverses it
under the loop's schedule, its steps counted first (the trip count of the
flat loop is known only at its end).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from revmlir.ad.checkpointed import CHECKPOINT_ATTR, SPLIT_ATTR
from revmlir.errors import describe_op
from revmlir.reversibilize.analysis import ReversibilizeError
from revmlir.reversibilize.stepping import positive, stepped

OpT = TypeVar("OpT", bound=Operation)

START, INNER = 0, 1
"""The phases of the flat loop: begin an outer iteration, or continue one."""


def flatten_marked_loops(module: ModuleOp) -> None:
    """Flatten every ``scf.for`` of ``module`` marked ``checkpoint_split = "work"``."""
    for op in list(module.walk()):
        if isinstance(op, scf.ForOp) and SPLIT_ATTR in op.attributes:
            flatten(op)


def _error(op: Operation, why: str) -> ReversibilizeError:
    return ReversibilizeError(f"{describe_op(op)}: a loop split at primitive steps {why}")


def _zero(builder: Builder, type: Attribute) -> SSAValue:
    if isinstance(type, AnyFloat):
        attr: Attribute = FloatAttr(0.0, type)
    elif isinstance(type, IntegerType | IndexType):
        attr = IntegerAttr(0, type)
    else:
        raise ReversibilizeError(f"a loop split at primitive steps cannot carry a {type}")
    return builder.insert(arith.ConstantOp(attr)).results[0]


def _inner_loop(loop: scf.ForOp) -> scf.ForOp:
    inner = [op for op in loop.body.block.ops if isinstance(op, scf.ForOp | scf.WhileOp)]
    if len(inner) != 1 or not isinstance(inner[0], scf.ForOp):
        raise _error(
            loop,
            "must contain exactly one inner for loop at the top level of "
            "its body (split='work' splits at that loop's iterations)",
        )
    return inner[0]


def flatten(loop: scf.ForOp) -> scf.WhileOp:
    """Replace ``loop`` by its flat ``scf.while`` (module docstring)."""
    inner = _inner_loop(loop)
    body = loop.body.block
    ops = list(body.ops)
    before = ops[: ops.index(inner)]
    after = ops[ops.index(inner) + 1 : -1]
    terminator = body.last_op
    assert isinstance(terminator, scf.YieldOp)
    produced = {r for op in before for r in op.results}
    readers = [*inner.body.walk(), *after, terminator]
    live = [v for v in dict.fromkeys(operand for op in readers for operand in op.operands if operand in produced)]
    for op in after:
        if any(isinstance(nested, scf.ForOp | scf.WhileOp) for nested in op.walk()):
            raise _error(op, "may have loops only before its inner loop, not after it")

    index = IndexType()
    outer = [a.type for a in body.args[1:]]
    carried = [a.type for a in inner.body.block.args[1:]]
    types = [index, index, index, index, index, *outer, *carried, *(v.type for v in live)]
    builder = Builder(InsertPoint.before(loop))
    for check in positive(loop.step, loop):
        builder.insert(check)
    constant = lambda n: builder.insert(arith.ConstantOp(IntegerAttr(n, index))).results[0]  # noqa: E731
    initial = [
        loop.lb,
        constant(START),
        constant(0),
        constant(0),
        constant(1),
        *loop.iter_args,
        *(_zero(builder, t) for t in [*carried, *(v.type for v in live)]),
    ]

    names = [
        "i",
        "phase",
        "j",
        "j_end",
        "j_step",
        *(a.name_hint for a in [*body.args[1:], *inner.body.block.args[1:]]),
        *(v.name_hint for v in live),
    ]
    condition, step = Block(arg_types=types), Block(arg_types=types)
    for block in (condition, step):
        for argument, name in zip(block.args, names, strict=True):
            argument.name_hint = name
    going = _append(condition, arith.CmpiOp(condition.args[0], loop.ub, "slt"))
    _append(condition, scf.ConditionOp(going.result, *condition.args))

    i, phase, j, jub, js = step.args[:5]
    state_outer = list(step.args[5 : 5 + len(outer)])
    state_inner = list(step.args[5 + len(outer) : 5 + len(outer) + len(carried)])
    state_live = list(step.args[5 + len(outer) + len(carried) :])
    known = {body.args[0]: i, **dict(zip(body.args[1:], state_outer, strict=True))}

    def begin(b: Block) -> list[SSAValue]:
        mapping = dict(known)
        _clone_into(b, before, mapping)
        bounds = [mapping.get(v, v) for v in (inner.lb, inner.ub, inner.step)]
        b.add_ops(positive(bounds[2], inner))
        seeds = [mapping.get(v, v) for v in inner.iter_args]
        return [i, _const(b, INNER), *bounds, *state_outer, *seeds, *(mapping.get(v, v) for v in live)]

    def advance(b: Block) -> list[SSAValue]:
        mapping = {
            **known,
            **dict(zip(live, state_live, strict=True)),
            inner.body.block.args[0]: j,
            **dict(zip(inner.body.block.args[1:], state_inner, strict=True)),
        }
        yielded = _clone_into(b, list(inner.body.block.ops), mapping)
        after_j, stepping = stepped(j, js, inner)
        b.add_ops(stepping)
        return [i, phase, after_j, jub, js, *state_outer, *yielded, *state_live]

    def finish(b: Block) -> list[SSAValue]:
        mapping = {
            **known,
            **dict(zip(live, state_live, strict=True)),
            **dict(zip(inner.results, state_inner, strict=True)),
        }
        _clone_into(b, after, mapping)
        ends = [mapping.get(v, v) for v in terminator.operands]
        next_i, stepping = stepped(i, loop.step, loop)
        b.add_ops(stepping)
        return [next_i, _const(b, START), j, jub, js, *ends, *state_inner, *state_live]

    def proceed(b: Block) -> list[SSAValue]:
        within = _append(b, arith.CmpiOp(j, jub, "slt")).result
        return _if(b, within, types, advance, finish)

    starting = _append(step, arith.CmpiOp(phase, _const(step, START), "eq")).result
    _append(step, scf.YieldOp(*_if(step, starting, types, begin, proceed)))

    flat = scf.WhileOp(initial, types, Region(condition), Region(step))
    flat.location = loop.location
    if CHECKPOINT_ATTR in loop.attributes:
        flat.attributes[CHECKPOINT_ATTR] = loop.attributes[CHECKPOINT_ATTR]
    Rewriter.insert_op(flat, InsertPoint.before(loop))
    for old, new in zip(loop.results, flat.results[5 : 5 + len(outer)], strict=True):
        old.replace_all_uses_with(new)
    Rewriter.erase_op(loop)
    return flat


def _append(block: Block, op: OpT) -> OpT:
    block.add_op(op)
    return op


def _const(block: Block, value: int) -> SSAValue:
    return _append(block, arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def _clone_into(block: Block, ops: Sequence[Operation], mapping: dict[SSAValue, SSAValue]) -> list[SSAValue]:
    """Clone ``ops`` at the end of ``block``; a trailing ``scf.yield`` is
    not cloned but its mapped operands are returned."""
    for op in ops:
        if isinstance(op, scf.YieldOp):
            return [mapping.get(v, v) for v in op.operands]
        _append(block, op.clone(value_mapper=mapping))
    return []


Side = Callable[[Block], list[SSAValue]]


def _if(block: Block, condition: SSAValue, types: Sequence[Attribute], then: Side, otherwise: Side) -> list[SSAValue]:
    """Append ``scf.if condition -> types`` to ``block``, each side built
    by ``side(block) -> values``."""
    regions = []
    for side in (then, otherwise):
        inner = Block()
        _append(inner, scf.YieldOp(*side(inner)))
        regions.append(Region(inner))
    return list(_append(block, scf.IfOp(condition, list(types), *regions)).results)
