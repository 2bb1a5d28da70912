"""Building inverse programs.

The inverter walks a block backwards and asks each op (through the
``InvertibleOp`` interface) to emit its inverse.  It keeps the correspondence
between forward values and the inverse-side values that stand for them, and
recomputes pure expressions on demand: the verifier guarantees that every value
an instruction reads is still current after the instruction, so the same
expression evaluated at the mirrored point of the inverse gives the same value.

One mechanism serves ``rev-invert`` (whole functions), region ops (``rev.if``
inverts its branches), ``rev.uncall`` in the interpreter and routine expansion.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from xdsl.builder import Builder
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator

from revmlir.dialects.rev import CallOp, FuncOp, ReturnOp, UncallOp, YieldOp
from revmlir.errors import InversionError, describe_op, describe_value
from revmlir.interfaces import InvertibleOp, NotInvertible
from revmlir.naming import DERIVED_INVERSE_ATTR, FORGETFUL_ATTR, inverse_name
from revmlir.semantics import is_expression_op, is_state_type

_OpT = TypeVar("_OpT", bound=Operation)
_T = TypeVar("_T")
_D = TypeVar("_D")


def forgets(op: Operation) -> bool:
    """Whether ``op`` makes its function lose its inverse: it is marked
    forgetful, or it is an op of a function body with no inverse rule (the
    snapshots of checkpointed gradients); the structural ops marked
    ``NotInvertible`` (terminators) are inverted by their owner instead."""
    if FORGETFUL_ATTR in op.attributes:
        return True
    return op.has_trait(NotInvertible) and not op.has_trait(IsTerminator) and not isinstance(op, FuncOp)


def forgetful_functions(module: ModuleOp) -> set[str]:
    """The ``rev.func``s of ``module`` with no inverse: marked forgetful,
    containing an op that forgets, or calling (or uncalling) such a function."""
    functions = [f for f in module.ops if isinstance(f, FuncOp)]
    forgetful = {f.sym_name.data for f in functions if FORGETFUL_ATTR in f.attributes or any(map(forgets, f.walk()))}
    changed = True
    while changed:
        changed = False
        for f in functions:
            name = f.sym_name.data
            if name not in forgetful and any(
                isinstance(op, CallOp | UncallOp) and op.callee.string_value() in forgetful for op in f.walk()
            ):
                forgetful.add(name)
                changed = True
    return forgetful


def _defining_node(value: SSAValue) -> Operation | Block:
    if isinstance(value, BlockArgument):
        return value.block
    assert isinstance(value, OpResult)
    return value.op


def _enclosing_blocks(block: Block | None) -> Iterator[Block]:
    """``block``, then the blocks around it, as far as the code is attached
    (regions are built inside out: a block under construction has no parent
    yet, so the code outside it is not seen from it)."""
    while block is not None:
        yield block
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None


class PerBlock(Generic[_T]):
    """What derived code computed for forward values, by the block of the
    derived code it was emitted in.  A lookup takes the entry of the
    innermost block around the insertion point, so an entry made inside a
    region (a loop's body) does not replace the one outside it: after the
    region, the code around it finds its own again.  That identity matters:
    ``rev.put`` must use the very index values of its ``rev.take``, and a
    borrow may span a loop that reads the same indices."""

    def __init__(self) -> None:
        self._entries: dict[tuple[SSAValue, Block], _T] = {}

    def get(self, value: SSAValue, at: Block | None, default: _D) -> _T | _D:
        """The entry for ``value`` visible at the end of block ``at``."""
        for block in _enclosing_blocks(at):
            if (key := (value, block)) in self._entries:
                return self._entries[key]
        return default

    def set(self, value: SSAValue, at: Block | None, computed: _T) -> None:
        """Record ``computed`` for ``value``, emitted in block ``at``."""
        assert at is not None, "derived code is emitted into a block"
        self._entries[value, at] = computed


@dataclass
class Inverter:
    """Emits the inverse of the code inside ``root``.

    Values defined outside ``root`` are shared by the forward and the inverse
    code (they are current throughout ``root``); values inside are mapped.
    """

    root: Operation
    builder: Builder
    mapping: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    recomputed: PerBlock[SSAValue] = field(default_factory=PerBlock[SSAValue])

    # -- the interface ops use -------------------------------------------------

    def lookup(self, value: SSAValue) -> SSAValue:
        """The inverse-side value standing for ``value`` at the insertion point."""
        if (mapped := self.mapping.get(value)) is not None:
            return mapped
        if not self.root.is_ancestor(_defining_node(value)):
            return value
        if isinstance(value, OpResult) and is_expression_op(value.op):
            return self._recompute(value)
        raise InversionError(
            f"{describe_value(value)} is not available where the inverse of "
            f"{describe_op(self.root)} needs it; run rev-verify for the cause"
        )

    def bind(self, forward: SSAValue, inverse: SSAValue) -> None:
        """Record that ``inverse`` is the inverse-side version of ``forward``."""
        if forward.name_hint and not inverse.name_hint:
            inverse.name_hint = forward.name_hint
        self.mapping[forward] = inverse

    def insert(self, op: _OpT, like: Operation) -> _OpT:
        """Insert ``op`` as the inverse of ``like``, keeping its source location
        and the attributes it does not set itself (``nocheck`` included, so
        inverting twice gives ``like``'s attributes back)."""
        op.location = like.location
        for name, attr in like.attributes.items():
            op.attributes.setdefault(name, attr)
        self.builder.insert(op)
        return op

    def invert_region(self, region: Region) -> Region:
        """A new region computing the inverse of ``region``.

        The new block takes the forward block's leading non-state arguments
        (an induction variable) unchanged, then one argument per value the
        forward region yields; it yields the forward region's state arguments.
        """
        owner = region.parent_op()
        assert isinstance(owner, InvertibleOp)
        forward = region.block
        state_args = owner.state_block_args(region)
        fixed = [a for a in forward.args if a not in state_args]
        terminator = forward.last_op
        assert terminator is not None
        yielded = list(terminator.operands)
        block = Block(arg_types=[a.type for a in fixed] + [v.type for v in yielded])
        for old, new in zip([*fixed, *yielded], block.args, strict=True):
            new.name_hint = old.name_hint
        for old, new in zip(fixed, block.args):
            self.bind(old, new)
        with self._at_end(block):
            results = self.invert_body(forward, state_args, block.args[len(fixed) :])
            self.insert(YieldOp(*results), like=terminator)
        return Region(block)

    def clone_region(self, region: Region, extra_args: Sequence[Attribute] = ()) -> Region:
        """A forward copy of ``region`` whose captured values are mapped,
        optionally taking ``extra_args`` trailing arguments it ignores."""
        forward = region.block
        block = Block(arg_types=[*(a.type for a in forward.args), *extra_args])
        local: dict[SSAValue, SSAValue] = {}
        for old, new in zip(forward.args, block.args):
            new.name_hint = old.name_hint
            local[old] = new
        with self._at_end(block):
            for op in forward.ops:
                self.builder.insert(self._clone_with_captures(op, region, local))
        return Region(block)

    # -- blocks ---------------------------------------------------------------

    def invert_body(
        self,
        block: Block,
        state_args: Sequence[SSAValue],
        outputs: Sequence[SSAValue],
    ) -> list[SSAValue]:
        """Emit the inverse of ``block``'s ops at the insertion point.

        ``outputs`` stand for the operands of the block's terminator; the
        result stands for ``state_args`` before the block ran.
        """
        terminator = block.last_op
        assert terminator is not None
        for value, output in zip(terminator.operands, outputs, strict=True):
            self.bind(value, output)
        for op in reversed(list(block.ops)[:-1]):
            if isinstance(op, InvertibleOp):
                op.invert(self)
            elif not is_expression_op(op):
                raise InversionError(f"{describe_op(op)} has no inverse")
        return [self.lookup(arg) for arg in state_args]

    # -- helpers --------------------------------------------------------------

    def _at_end(self, block: Block) -> AbstractContextManager[None]:
        return building_at_end(self.builder, block)

    def _recompute(self, value: OpResult) -> SSAValue:
        here = self.builder.insertion_point.block
        cached = self.recomputed.get(value, here, None)
        if cached is not None:
            return cached
        op = value.op
        # an expression has no regions: its copy is one op
        clone = op.clone_without_regions({o: self.lookup(o) for o in op.operands})
        self.builder.insert(clone)
        for old, new in zip(op.results, clone.results, strict=True):
            self.recomputed.set(old, here, new)
        return clone.results[value.index]

    def _clone_with_captures(self, op: Operation, region: Region, local: dict[SSAValue, SSAValue]) -> Operation:
        for nested in op.walk():
            for operand in nested.operands:
                if operand not in local and not region.is_ancestor(_defining_node(operand)):
                    local[operand] = self.lookup(operand)
        return op.clone(value_mapper=local)


@contextmanager
def building_at_end(builder: Builder, block: Block) -> Iterator[None]:
    """Insert at the end of ``block`` for the duration of the ``with``, then
    where ``builder`` was (regions are built inside out)."""
    saved = builder.insertion_point
    builder.insertion_point = InsertPoint.at_end(block)
    try:
        yield
    finally:
        builder.insertion_point = saved


def invert_function(func: FuncOp, name: str | None = None) -> FuncOp:
    """The inverse of ``func`` as a new function (``@f.inv`` unless named).

    It has the same signature: scalar arguments receive what ``func`` returns,
    references are shared.
    """
    forward = func.body.block
    block = Block(arg_types=[a.type for a in forward.args])
    inverter = Inverter(func, Builder(InsertPoint.at_end(block)))
    state_args: list[SSAValue] = []
    outputs: list[SSAValue] = []
    for old, new in zip(forward.args, block.args, strict=True):
        new.name_hint = old.name_hint
        if is_state_type(old.type):
            state_args.append(old)
            outputs.append(new)
        else:
            inverter.bind(old, new)
    results = inverter.invert_body(forward, state_args, outputs)
    terminator = forward.last_op
    assert terminator is not None
    inverter.insert(ReturnOp(*results), like=terminator)
    inverse = FuncOp(
        name or inverse_name(func.sym_name.data),
        [a.type for a in forward.args],
        Region(block),
    )
    inverse.attributes.update(func.attributes)
    inverse.location = func.location
    return inverse


def derive_inverse(func: FuncOp, name: str | None = None) -> FuncOp:
    """``invert_function``'s inverse of ``func``, marked as one a pass or a
    compile adds for itself (``DERIVED_INVERSE_ATTR``), which the user did
    not write: errors name it ``~f`` on every engine, as the interpreter
    names ``@f`` run backwards."""
    inverse = invert_function(func, name)
    inverse.attributes[DERIVED_INVERSE_ATTR] = UnitAttr()
    return inverse


def move_block(block: Block, args: Sequence[SSAValue], builder: Builder) -> list[SSAValue]:
    """``inline_block`` for a block used once, which is left empty: its ops
    are moved, not copied (a routine's body, the larger part of BA's kernel,
    was copied and the original dropped).  Its terminator is erased, not
    left behind: it would keep uses of the values moved, from a block no
    one reaches, and so tie what a compile drops whole (a copy taken apart,
    ``revmlir.collector``) to a cycle only the collector frees."""
    for old, new in zip(block.args, args, strict=True):
        old.replace_all_uses_with(new)
    terminator = block.last_op
    assert terminator is not None
    for op in list(block.ops)[:-1]:
        op.detach()
        builder.insert(op)
    yielded = list(terminator.operands)
    block.erase_op(terminator)
    return yielded


def inline_block(block: Block, args: Sequence[SSAValue], builder: Builder) -> list[SSAValue]:
    """Copy ``block``'s ops (not its terminator) forward at ``builder``'s
    insertion point with its arguments replaced by ``args``; return what the
    terminator would have yielded."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, args, strict=True))
    terminator = block.last_op
    assert terminator is not None
    for op in list(block.ops)[:-1]:
        builder.insert(op.clone(value_mapper=mapping))
    return [mapping.get(v, v) for v in terminator.operands]
