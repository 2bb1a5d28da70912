"""Small facts about IR that every layer asks: an index known at compile
time, the ops nested in an op, a copy of an op made in one walk, and a
table from op classes to the rule that handles them.

They sit just above the dialects so that the verifier, the lowering, the
differentiators and the GPU compiler share one definition without
importing each other.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, IntegerAttr
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.irdl import IRDLOperation, VariadicDef

RuleT = TypeVar("RuleT", bound=Callable[..., object])
OpT = TypeVar("OpT", bound=Operation)


def nested_ops(op: Operation) -> list[Operation]:
    """``op`` and every op nested in it, in the order of ``op.walk()``, as a
    list: the analyses of a compile walk whole modules (a GPU kernel's
    10,000 lowered ops) a dozen times, and xDSL's walk, three generators
    deep per level of nesting, takes twice as long as this loop.  The list
    is a snapshot: the caller may change the IR while going through it."""
    found: list[Operation] = []
    _collect(op, found)
    return found


def _collect(op: Operation, found: list[Operation]) -> None:
    found.append(op)
    for region in op.regions:
        for block in region.blocks:
            inner = block.first_op
            while inner is not None:
                # most ops hold no region: a call per op was half the walk
                if inner.regions:
                    _collect(inner, found)
                else:
                    found.append(inner)
                inner = inner.next_op


def clone(op: OpT) -> OpT:
    """A copy of ``op`` and the IR nested in it, as ``op.clone()`` makes it
    (operands, results and their name hints, properties, attributes,
    locations, blocks and their arguments, successors), in one walk.
    xDSL's clone builds every op without operands, then walks the original
    and the copy together and sets each op's operands, registering their
    uses a second time: a GPU kernel's compile copies a specialisation's
    module of 2,000 ops, 38 ms that way and 28 ms this way.  An
    operand is mapped as its op is copied; one defined later in the walk (a
    block's value used in a block before it) is set once the walk is done,
    as xDSL sets it."""
    values: dict[SSAValue, SSAValue] = {}
    blocks: dict[Block, Block] = {}
    later: list[tuple[Operation, int, SSAValue]] = []
    copy = _clone(op, values, blocks, later)
    for user, index, value in later:
        if (found := values.get(value)) is not None:
            operands = list(user.operands)
            operands[index] = found
            user.operands = operands
    return copy


def _clone(
    op: OpT,
    values: dict[SSAValue, SSAValue],
    blocks: dict[Block, Block],
    later: list[tuple[Operation, int, SSAValue]],
) -> OpT:
    operands = [values.get(operand, operand) for operand in op.operands]
    regions = [Region() for _ in op.regions]
    copy = op.create(
        operands=operands,
        result_types=op.result_types,
        properties=op.properties.copy(),
        attributes=op.attributes.copy(),
        location=op.location,
        successors=[blocks.get(successor, successor) for successor in op.successors],
        regions=regions,
    )
    for index, (operand, mapped) in enumerate(zip(op.operands, operands, strict=True)):
        if operand is mapped:
            later.append((copy, index, operand))
    for result, copied in zip(op.results, copy.results, strict=True):
        values[result] = copied
        copied.name_hint = result.name_hint
    for region, into in zip(op.regions, regions, strict=True):
        # every block first: a branch may go to a block after its own
        for block in region.blocks:
            new = blocks[block] = Block()
            for index, argument in enumerate(block.args):
                copied = new.insert_arg(argument.type, index, argument.location)
                copied.name_hint = argument.name_hint
                values[argument] = copied
            into.add_block(new)
        for block in region.blocks:
            blocks[block].add_ops([_clone(inner, values, blocks, later) for inner in block.ops])
    return copy


def init_as_created(
    op: IRDLOperation,
    operands: Sequence[SSAValue | Operation | Sequence[SSAValue | Operation]],
    result_types: Sequence[Attribute] = (),
) -> None:
    """Initialise ``op`` with ``operands`` and ``result_types`` as
    ``Operation.create`` builds an op: what xDSL's IRDL constructor gives
    an op of at most one variadic group (no segment sizes) that is given
    no properties, without the constructor's generic processing of every
    argument against the op's definition, which costs three times the op
    itself.  The inverter and the derivative passes build the updates,
    borrows and ancillas that use it by the hundred per kernel.

    ``operands`` has an entry per operand of the definition, taken as the
    IRDL constructor takes them: a value or an op of one result, and for
    the variadic group a sequence of them or a single one.  All are taken
    before the op uses any, so a call that fails leaves the IR as it was."""
    built: list[SSAValue] = []
    for operand, variadic in zip(operands, _variadic_operands(op.__class__), strict=True):
        if isinstance(operand, SSAValue | Operation):
            built.append(as_value(operand))
        elif variadic:
            built.extend([as_value(value) for value in operand])
        else:
            raise ValueError(f"Error in {op.name} builder: passed a sequence to a single operand")
    Operation.__init__(op, operands=built, result_types=result_types)


def as_value(operand: SSAValue | Operation) -> SSAValue:
    """``SSAValue.get(operand)``, without its cost for a value (an import
    and a pattern match per call, a fifth of an op built as created)."""
    return operand if isinstance(operand, SSAValue) else SSAValue.get(operand)


@functools.cache
def _variadic_operands(kind: type[IRDLOperation]) -> tuple[bool, ...]:
    return tuple(isinstance(definition, VariadicDef) for _, definition in kind.get_irdl_definition().operands)


def is_float_type(type: Attribute) -> bool:
    """``isinstance(type, AnyFloat)``, decided once per class: xDSL's float
    types are a union of a dozen ABCs, which the lowering asked about every
    constant and check it builds."""
    return _is_float_class(type.__class__)


@functools.cache
def _is_float_class(kind: type[Attribute]) -> bool:
    return issubclass(kind, AnyFloat)


def constant_index(value: SSAValue) -> int | None:
    """The value of an index known at compile time, else ``None``."""
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def constant_index_through_cast(value: SSAValue) -> int | None:
    """A constant index, also one cast from an integer constant (the Python
    frontend writes ``x[0]`` and ``rv.zeros((1, 11))``'s sizes as ``i64``
    constants cast to ``index``)."""
    if isinstance(value, OpResult) and isinstance(value.op, arith.IndexCastOp):
        value = value.op.input
    return constant_index(value)


def known_positive(step: SSAValue) -> bool:
    """Whether ``step`` is a positive constant (also through a cast): a
    loop's step that no run-time check need refuse, as every loop the
    passes and the frontends build has (``range(0, n, 2)`` included)."""
    return (known := constant_index_through_cast(step)) is not None and known > 0


def constant_shape(shape: Sequence[int], dynamic_sizes: Sequence[SSAValue]) -> list[int] | None:
    """A memref's shape with its dynamic sizes (``-1`` in ``shape``, given
    in order by ``dynamic_sizes``) filled in, if all are known at compile
    time, else ``None``."""
    sizes = iter(dynamic_sizes)
    found = [d if d >= 0 else constant_index_through_cast(next(sizes)) for d in shape]
    known = [d for d in found if d is not None]
    return known if len(known) == len(found) else None


class RuleTable(Generic[RuleT]):
    """Maps op classes to the rule that handles them in one translation
    (the analogue of xDSL's interpreter ``@impl`` registry): the lowering's,
    the LLVM translation's, the device rules, and the derivative and
    tangent tables of AD."""

    def __init__(self) -> None:
        self.rules: dict[type[Operation], RuleT] = {}

    def __call__(self, *op_types: type[Operation]) -> Callable[[RuleT], RuleT]:
        """Decorator registering a rule for ``op_types``."""

        def register(rule: RuleT) -> RuleT:
            for op_type in op_types:
                self.rules[op_type] = rule
            return rule

        return register

    def get(self, op_type: type[Operation]) -> RuleT | None:
        return self.rules.get(op_type)

    def __contains__(self, op_type: type[Operation]) -> bool:
        return op_type in self.rules
