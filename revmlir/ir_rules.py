"""Rules of upstream MLIR's verifier that xDSL's leaves out.

Every consumer of a module assumes them: the lowering to LLVM translates a
block's operands before the block (a use ahead of its definition was a
``KeyError`` deep inside it) and follows each block's terminator to its
successors; the inverter and the engines would go round a cycle.  So
revmlir checks them for every op, as upstream does while verifying:

- dominance: within a block a definition comes first; across the blocks of
  a region (``cf`` branches) the defining block dominates the using one; a
  value reaches into the regions nested in its block, never out of them.
  Uses in blocks that cannot be reached from the entry are not checked, as
  upstream;
- terminators: each block of a region with several blocks ends with a
  terminator (a branch or a return);
- symbols: a name is defined once in its symbol table. xDSL checks it too,
  at the table, with no location; ``check_symbols`` runs only once xDSL's
  verification has failed, to report the second definition where it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.traits import IsTerminator, SymbolTable

from revmlir.errors import RuleViolation, describe_op

DOMINANCE = "dominance"
TERMINATOR = "terminator"
SYMBOLS = "symbols"
IR_RULES: dict[str, str] = {
    DOMINANCE: "a value is used after its definition, in its block or a region inside it",
    TERMINATOR: "each block of a region with several blocks ends with a terminator",
    SYMBOLS: "a symbol is defined once in its symbol table",
}
"""The rules' names, as diagnostics print them, and what each asks."""


def value_name(value: SSAValue) -> str:
    """How diagnostics name a value: its name, else what defines it."""
    if value.name_hint:
        return f"%{value.name_hint}"
    if isinstance(value, BlockArgument):
        return f"block argument #{value.index}"
    assert isinstance(value, OpResult)
    return f"the result of '{value.op.name}'"


def _ancestor_in_region(op: Operation, region: Region) -> Operation | None:
    """``op`` or the op around it whose block belongs to ``region``."""
    current: Operation | None = op
    while current is not None and (current.parent is None or current.parent.parent is not region):
        current = current.parent_op()
    return current


@dataclass
class DominanceChecker:
    """Finds uses that their definitions do not dominate, below ``root``."""

    root: Operation
    _dominance: dict[Region, DominanceInfo] = field(default_factory=dict[Region, DominanceInfo])
    _reachable: dict[Region, set[Block]] = field(default_factory=dict[Region, set[Block]])
    _position: dict[Block, dict[Operation, int]] = field(default_factory=dict[Block, dict[Operation, int]])

    def violations(self) -> Iterator[tuple[Operation, str]]:
        """``(op, message)`` for each operand of an op below the root that
        is not defined where the op can see it, in walk order.  Where every
        region below the root has one block and every operand is seen in
        one walk (``_defined_in_scope``), there is none; otherwise each
        operand is checked as below, which locates what is wrong."""
        if _defined_in_scope(self.root, set()):
            return
        for op in self.root.walk():
            if op is self.root:
                continue
            for operand in op.operands:
                if (message := self._check(op, operand)) is not None:
                    yield op, message

    def _check(self, op: Operation, operand: SSAValue) -> str | None:
        home = operand.block if isinstance(operand, BlockArgument) else operand.owner.parent_block()
        region = home.parent if home is not None else None
        anchor = _ancestor_in_region(op, region) if region is not None else None
        if home is None or anchor is None:
            return f"'{op.name}' uses {value_name(operand)}, which is not defined in its region or a region around it"
        assert region is not None
        using_block = anchor.parent_block()
        assert using_block is not None
        if using_block is not home:
            if using_block not in self._reachable_blocks(region):
                return None
            if not self._info(region).dominates(home, using_block):
                return (
                    f"'{op.name}' uses {value_name(operand)}, which is defined in a "
                    "block that does not dominate its use"
                )
            return None
        if isinstance(operand, BlockArgument):
            return None
        definition = operand.owner
        assert isinstance(definition, Operation)
        if anchor is definition:
            owner = "itself" if op is definition else f"the '{definition.name}' around it"
            return f"'{op.name}' uses {value_name(operand)}, a result of {owner}"
        positions = self._positions(home)
        if positions[anchor] < positions[definition]:
            return (
                f"'{op.name}' uses {value_name(operand)} before {describe_op(definition)} "
                "defines it; define a value before its uses"
            )
        return None

    def _info(self, region: Region) -> DominanceInfo:
        if region not in self._dominance:
            self._dominance[region] = DominanceInfo(region)
        return self._dominance[region]

    def _reachable_blocks(self, region: Region) -> set[Block]:
        if region not in self._reachable:
            entry = region.blocks.first
            seen: set[Block] = set()
            work = [entry] if entry is not None else []
            while work:
                block = work.pop()
                if block in seen:
                    continue
                seen.add(block)
                if block.last_op is not None:
                    work.extend(block.last_op.successors)
            self._reachable[region] = seen
        return self._reachable[region]

    def _positions(self, block: Block) -> dict[Operation, int]:
        if block not in self._position:
            self._position[block] = {op: i for i, op in enumerate(block.ops)}
        return self._position[block]


def _defined_in_scope(op: Operation, visible: set[int]) -> bool:
    """Whether every region of ``op`` and below has at most one block and
    every operand of an op there is in ``visible`` (the ids of the values
    of the blocks around it) or defined before the op in its block or a
    block around it: each is then defined where its op sees it, the rule
    ``DominanceChecker`` checks operand by operand, asking for the
    operand's block and the op's ancestor in it and their positions; the
    verifier of every function walks its ops once this way (a GPU
    kernel's module: 2,000 ops, a tenth of its verification).  An op's
    results are seen after the op (not in its regions), a block's
    arguments in the block only.  False for anything else, whether a
    violation or a region of several blocks, whose dominance is the
    checker's."""
    for region in op.regions:
        block = region.first_block
        if block is None:
            continue
        if block is not region.last_block:
            return False
        added = [id(argument) for argument in block.args]
        visible.update(added)
        inner = block.first_op
        while inner is not None:
            for operand in inner.operands:
                if id(operand) not in visible:
                    return False
            if inner.regions and not _defined_in_scope(inner, visible):
                return False
            for result in inner.results:
                added.append(id(result))
                visible.add(added[-1])
            inner = inner.next_op
        visible.difference_update(added)
    return True


def check_terminators(root: Operation) -> None:
    """Raise at the last op of the first block below ``root`` that is one
    of several blocks of its region and does not end with a terminator
    (an empty block is reported at the op holding its region)."""
    for op in root.walk():
        for region in op.regions:
            if len(region.blocks) < 2:
                continue
            for index, block in enumerate(region.blocks):
                last = block.last_op
                if last is None or not last.has_trait(IsTerminator):
                    raise RuleViolation(
                        TERMINATOR,
                        last or op,
                        f"block {index} of the region of '{op.name}' does not end with a "
                        "terminator; in a region of several blocks each block ends with a "
                        "branch or a return",
                    )


def check_ir_rules(root: Operation) -> None:
    """Raise the first violation of these rules below ``root``, at its op.
    Terminators come first: dominance follows the branches."""
    check_terminators(root)
    for op, message in DominanceChecker(root).violations():
        raise RuleViolation(DOMINANCE, op, message)


def check_symbols(root: Operation) -> None:
    """Raise at the second definition of the first name defined twice in
    a symbol table at or below ``root``."""
    for table in root.walk():
        if not table.has_trait(SymbolTable):
            continue
        first: dict[str, Operation] = {}
        for region in table.regions:
            for op in region.ops:
                if not isinstance(name := op.properties.get("sym_name") or op.attributes.get("sym_name"), StringAttr):
                    continue
                if (earlier := first.setdefault(name.data, op)) is not op:
                    raise RuleViolation(
                        SYMBOLS, op, f"@{name.data} is defined again; its first definition is {describe_op(earlier)}"
                    )
