"""Static reversibility rules for ``rev.func`` bodies.

Each rule has a short name that diagnostics print and ``docs/dialects.md``
explains.  The rules make the inverter's job well defined: every state version
is consumed exactly once, in the block that made it; everything an op reads is
still current when the op runs (so the inverse can recompute it at the mirrored
point); borrowed elements are given back; conditions are pure.  Dominance is
checked first: the other rules follow use-def chains, which must be acyclic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp, NoneAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import MemoryEffectKind, SymbolTable, has_effects
from xdsl.utils.exceptions import VerifyException

from revmlir.counters import counter_arguments
from revmlir.dialects import anc, rev
from revmlir.dialects.ad import NextOp
from revmlir.dialects.primitives import ApplyOp, InvokeOp
from revmlir.errors import CheckpointError, ReversibilityViolation, describe_op
from revmlir.interfaces import InvertibleOp, StateConsumer
from revmlir.ir_rules import IR_RULES, DominanceChecker, value_name
from revmlir.ir_utils import constant_index_through_cast, nested_ops
from revmlir.kept_answers import keeping, kept
from revmlir.naming import inverse_name
from revmlir.parallel import check_parallel_loop
from revmlir.semantics import (
    Writes,
    argument_writes,
    interleaved_accumulation,
    is_expression_op,
    is_state_value,
    viewed_arrays,
)

RULES: dict[str, str] = {
    **IR_RULES,
    "linearity": "every state version is consumed exactly once",
    "capture": "a region may read outer state but not consume it",
    "stale-read": "an op reads only current versions of state",
    "self-read": "an instruction does not read its own target",
    "memory-read": "an element read is not overwritten before the op using it",
    "index-read": "the indices of an element written do not read the memory written",
    "alias": "a borrowed element is not read or borrowed again",
    "borrow": "every rev.take is matched by a rev.put of the same element",
    "irreversible-op": "only reversible instructions and pure expressions",
    "condition": "conditions are pure and end with rev.cond",
    "safe": "rev.safe regions do not touch reversible state",
    "call": (
        "calls name a rev.func, match its signature and pass an array twice only where it is not written; "
        "the @f.inv an uncall of @f runs is a rev.func of @f's type"
    ),
    "array": "an ancilla array is freed once, in the block that allocates it",
    "layout": "arrays are contiguous and row-major (memrefs carry no layout)",
    "parallel": "an iteration of a parallel loop writes private elements or accumulates into shared ones",
}


def _fail(rule: str, op: Operation, message: str) -> ReversibilityViolation:
    return ReversibilityViolation(rule, op, message)


class AliasViolation(ReversibilityViolation):
    """An element borrowed by ``borrow`` (a ``rev.take``) and read or
    borrowed again by ``op`` before it is put back, with the array: what a
    frontend words in its users' terms."""

    def __init__(self, op: Operation, borrow: rev.TakeOp, message: str):
        self.borrow = borrow
        self.array = borrow.memref
        super().__init__("alias", op, message)


def _block_kind(block: Block) -> str:
    owner = block.parent_op()
    if isinstance(owner, rev.SafeOp):
        return "safe"
    if isinstance(block.last_op, rev.CondOp):
        return "condition"
    return "state"


def _defining_node(value: SSAValue) -> Operation | Block:
    return value.block if isinstance(value, BlockArgument) else value.owner


def _ancestor_in(op: Operation, block: Block) -> Operation | None:
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


@dataclass
class _Leaves:
    state: set[SSAValue] = field(default_factory=set[SSAValue])
    loads: set[Operation] = field(default_factory=set[Operation])
    """``memref.load``s, and calls of primitives that read arrays."""


def _read_arrays(read: Operation) -> list[SSAValue]:
    """The arrays a memory read of an expression reads."""
    if isinstance(read, memref.LoadOp):
        return [read.memref]
    return [o for o in read.operands if isinstance(o.type, MemRefType)]


def _leaves(value: SSAValue) -> _Leaves:
    """The state values and memory reads an expression depends on.  Walked
    with a work list, each value once: a long expression (a sum of a
    thousand terms) is a chain of ops as deep as it is long, past Python's
    recursion limit, and a shared subexpression is read once."""
    leaves = _Leaves()
    pending, seen = [value], set[SSAValue]()
    while pending:
        value = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        if is_state_value(value):
            leaves.state.add(value)
        elif isinstance(value, OpResult) and is_expression_op(value.op):
            if isinstance(value.op, memref.LoadOp) or (isinstance(value.op, ApplyOp) and _read_arrays(value.op)):
                leaves.loads.add(value.op)
            pending.extend(value.op.operands)
    return leaves


class FunctionVerifier:
    """Checks one ``rev.func``; raises the first violation found."""

    def __init__(self, func: rev.FuncOp):
        self.func = func
        self.consumer: dict[SSAValue, Operation] = {}
        self.position: dict[Operation, int] = {}
        self._written: dict[str, tuple[Writes, ...]] | None = None
        self._counted: dict[str, frozenset[int]] | None = None
        self._arrays_written: dict[Operation, set[SSAValue]] = {}
        self._leaves: dict[SSAValue, _Leaves] = {}

    def run(self) -> None:
        # one walk for every rule: the function does not change while it
        # is checked
        ops = nested_ops(self.func)
        blocks = [block for op in ops for region in op.regions for block in region.blocks]
        self._check_layouts(ops)
        for block in blocks:
            for index, op in enumerate(block.ops):
                self.position[op] = index
        self._check_end()
        self._check_dominance()
        for block in blocks:
            kind = _block_kind(block)
            if kind == "state":
                self._check_state_block(block)
            elif kind == "condition":
                self._check_condition_block(block)
            else:
                self._check_safe_block(block)
        for op in ops:
            if op is self.func or is_expression_op(op):
                continue
            self._check_reads(op)
            if isinstance(op, rev.CallOp | rev.UncallOp):
                self._check_call(op)
        for op in ops:
            if isinstance(op, rev.ForOp) and op.is_parallel:
                check_parallel_loop(op, self._call_writes)

    def _call_writes(self, op: rev.CallOp | rev.UncallOp) -> Sequence[Writes]:
        """How a call's callee may change each argument (any array, for a
        callee outside the module)."""
        module = self.func.parent_op()
        if self._written is None:
            self._written = argument_writes(module) if isinstance(module, ModuleOp) else {}
        writes = self._written.get(op.callee.string_value())
        if writes is None:
            written = op.written_memrefs()
            return [Writes.OTHER if arg in written else Writes.NONE for arg in op.args]
        return writes

    def _check_layouts(self, ops: list[Operation]) -> None:
        """Every engine addresses element (i, j, …) of an array at its
        row-major position from the data pointer (a numpy array in C order),
        so a layout such as ``strided<[8, 1], offset: 2>`` would be ignored
        and another element read: it is rejected where the array appears."""
        for op in ops:
            arguments = (a for region in op.regions for block in region.blocks for a in block.args)
            for value in (*op.results, *arguments):
                if isinstance(value.type, MemRefType) and not isinstance(value.type.layout, NoneAttr):
                    raise _fail(
                        "layout",
                        op,
                        f"{value_name(value)} has the layout {value.type.layout}; arrays are contiguous "
                        "and row-major (numpy's C order): drop the layout and pass the view as its "
                        "own contiguous array",
                    )

    def _check_end(self) -> None:
        """The body ends with ``rev.return``: ``rev.yield`` is a terminator
        too, and the engines would otherwise find no way out of the
        function."""
        last = self.func.body.block.last_op
        if not isinstance(last, rev.ReturnOp):
            found = f"'{last.name}'" if last is not None else "nothing"
            raise VerifyException(f"@{self.func.sym_name.data} must end with 'rev.return', not {found}")

    # -- dominance ------------------------------------------------------------

    def _check_dominance(self) -> None:
        """Every operand is defined before its use (``revmlir.dominance``):
        a cycle would send the rules below, the inverter and the engines
        round in circles."""
        for op, message in DominanceChecker(self.func).violations():
            raise _fail("dominance", op, message)

    # -- op classes per block kind -------------------------------------------

    def _check_state_block(self, block: Block) -> None:
        defined: list[SSAValue] = [a for a in block.args if is_state_value(a)]
        for op in block.ops:
            if not (isinstance(op, StateConsumer) or is_expression_op(op)):
                raise _fail(
                    "irreversible-op",
                    op,
                    f"'{op.name}' is not reversible; write state with rev "
                    "instructions, elements with rev.take/rev.put, or wrap host "
                    "side effects in rev.safe",
                )
            if isinstance(op, StateConsumer):
                self._consume(op, block)
            if isinstance(op, InvertibleOp):
                defined.extend(r for r in op.results if is_state_value(r))
        for value in defined:
            if value not in self.consumer:
                self._dropped(value, block)
        self._check_borrows(block)
        self._check_arrays(block)

    def _check_arrays(self, block: Block) -> None:
        for op in block.ops:
            if not isinstance(op, anc.ArrayAllocOp):
                continue
            frees = [u.operation for u in op.result.uses if isinstance(u.operation, anc.ArrayFreeOp)]
            if len(frees) != 1 or frees[0].parent_block() is not block:
                raise _fail(
                    "array",
                    op,
                    f"the ancilla array {value_name(op.result)} allocated here must be freed "
                    f"once, in the block that allocates it (anc.array_free); it is freed "
                    f"{len(frees)} time(s){' elsewhere' if frees and len(frees) == 1 else ''}",
                )

    def _check_condition_block(self, block: Block) -> None:
        for op in block.ops:
            if not (is_expression_op(op) or isinstance(op, rev.CondOp)):
                raise _fail(
                    "condition",
                    op,
                    f"'{op.name}' cannot appear in a condition; conditions are pure expressions ending with rev.cond",
                )

    def _check_safe_block(self, block: Block) -> None:
        owner = block.parent_op()
        assert owner is not None
        for op in block.walk():
            if isinstance(op, StateConsumer):
                raise _fail(
                    "safe",
                    op,
                    f"'{op.name}' changes reversible state inside rev.safe; rev.safe is only for host side effects",
                )
            if not has_effects(op, MemoryEffectKind.WRITE):
                continue
            for operand in op.operands:
                if (
                    isinstance(operand.type, MemRefType)
                    and not owner.is_ancestor(_defining_node(operand))
                    and not self._is_counter(operand)
                ):
                    raise _fail(
                        "safe",
                        op,
                        f"'{op.name}' writes {value_name(operand)}, which the reversible "
                        "program owns; rev.safe may only write memory it allocates, or a "
                        "counter (an array argument that only rev.safe regions use)",
                    )

    # -- linearity ------------------------------------------------------------

    def _consume(self, op: StateConsumer, block: Block) -> None:
        for value in op.consumed_operands():
            if not is_state_value(value):
                hint = (
                    "allocate an ancilla with anc.alloc to create state"
                    if isinstance(value, OpResult)
                    else "only scalar state can be updated"
                )
                raise _fail(
                    "linearity",
                    op,
                    f"'{op.name}' updates {value_name(value)}, which is not a state value; {hint}",
                )
            home = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()
            if home is not block:
                raise _fail(
                    "capture",
                    op,
                    f"'{op.name}' consumes {value_name(value)}, which is defined "
                    "outside its region; carry it through the region op's "
                    "state operands",
                )
            if (first := self.consumer.get(value)) is not None:
                raise _fail(
                    "linearity",
                    op,
                    f"{value_name(value)} is consumed twice: by {describe_op(first)} "
                    f"and by '{op.name}'; each state version is used up by one op",
                )
            self.consumer[value] = op

    def _dropped(self, value: SSAValue, block: Block) -> None:
        if isinstance(value, OpResult):
            where = value.op
            if isinstance(where, anc.AllocOp | anc.PopOp):
                raise _fail(
                    "linearity",
                    where,
                    f"the ancilla {value_name(value)} allocated here is not freed on "
                    "every path; free it with anc.free (or push it) before the "
                    "end of its region",
                )
        else:
            where = block.parent_op() or self.func
        raise _fail(
            "linearity",
            where,
            f"{value_name(value)} is never consumed; every state version must be "
            "updated, freed, pushed, passed on or yielded",
        )

    # -- reads ----------------------------------------------------------------

    def _check_reads(self, op: Operation) -> None:
        uses = list(op.consumed_operands()) if isinstance(op, StateConsumer) else []
        consumed = set(uses)
        for operand in op.operands:
            # Skip the consuming uses themselves; any further use of a consumed
            # value is a read of it (``rev.sub %x, %x`` reads its own target).
            if operand in uses:
                uses.remove(operand)
                continue
            leaves = self._leaves.get(operand)
            if leaves is None:
                leaves = self._leaves[operand] = _leaves(operand)
            for state in leaves.state:
                self._check_current(op, state, consumed)
            for load in leaves.loads:
                self._check_load(op, load)

    def _check_current(self, op: Operation, state: SSAValue, consumed: set[SSAValue]) -> None:
        if state in consumed:
            raise _fail(
                "self-read",
                op,
                f"'{op.name}' reads its own target {value_name(state)}; use an "
                "ancilla copy (x ← 0; x += y; …; x -= y; x → 0) instead",
            )
        consumer = self.consumer.get(state)
        if consumer is None:
            return
        home = consumer.parent_block()
        assert home is not None
        anchor = _ancestor_in(op, home)
        if anchor is None:
            return
        if anchor is consumer:
            raise _fail(
                "stale-read",
                op,
                f"'{op.name}' reads {value_name(state)} inside "
                f"{describe_op(consumer)}, which consumes it; use the region's "
                "block argument instead",
            )
        if self.position[anchor] > self.position[consumer]:
            raise _fail(
                "stale-read",
                op,
                f"'{op.name}' reads {value_name(state)} after {describe_op(consumer)} "
                "consumed it; read the current version instead",
            )

    def _check_load(self, op: Operation, load: Operation) -> None:
        for target in _read_arrays(load):
            self._check_array_read(op, load, target)

    def _check_array_read(self, op: Operation, load: Operation, target: SSAValue) -> None:
        block = load.parent_block()
        assert block is not None
        anchor = _ancestor_in(op, block)
        if anchor is None:
            return
        if anchor is op and isinstance(op, InvokeOp) and target in op.written_memrefs():
            raise _fail(
                "memory-read",
                op,
                f"'{op.name}' reads {value_name(target)} in its scalar arguments but updates it; "
                "the inverse would read the updated array: copy the value into an ancilla first",
            )
        if anchor is not op and self._writes(anchor, target):
            raise _fail(
                "memory-read",
                op,
                f"'{op.name}' reads an element of {value_name(target)} loaded outside "
                f"{describe_op(anchor)}, which writes {value_name(target)}; load it "
                "inside, next to its use",
            )
        if anchor is op and isinstance(op, rev.PutOp) and isinstance(load, memref.LoadOp) and target == op.memref:
            self._check_written_element(op, load)
        if anchor is op and op.regions and self._writes(op, target):
            raise _fail(
                "memory-read",
                op,
                f"'{op.name}' reads {value_name(target)} in its operands but writes "
                "it in its body; the value would differ when run backwards",
            )
        between = load.next_op
        while between is not None and between is not anchor:
            if self._writes(between, target):
                raise _fail(
                    "memory-read",
                    op,
                    f"'{op.name}' uses an element of {value_name(target)} loaded "
                    f"before {describe_op(between)} wrote {value_name(target)}; load "
                    "it after the write",
                )
            between = between.next_op

    def _writes(self, op: Operation, target: SSAValue) -> bool:
        """Whether ``op`` or an op nested in it writes ``target``; what each
        op writes found once (the ops between a load and its use are asked
        again for every array read there)."""
        written = self._arrays_written.get(op)
        if written is None:
            written = self._arrays_written[op] = {
                array
                for nested in nested_ops(op)
                if isinstance(nested, InvertibleOp)
                for array in nested.written_memrefs()
            }
        return target in written

    def _check_written_element(self, op: rev.PutOp, load: memref.LoadOp) -> None:
        """The inverse of ``rev.put`` is a ``rev.take`` that evaluates the
        same indices after the write.  An index read from the written memref
        has the same value then only if it reads another element, which is
        known when a constant index differs from the written element's."""
        if _same_indices(op.indices, load.indices) is False:
            return
        raise _fail(
            "index-read",
            op,
            f"'{op.name}' computes its indices from {describe_op(load)}, which may "
            f"read the element of {value_name(op.memref)} it writes; run backwards, the "
            "index would be read after the write and the element not found again. "
            "Copy the index into an ancilla first (freed against the same "
            "expression after the update)",
        )

    # -- borrowed elements ----------------------------------------------------

    def _check_borrows(self, block: Block) -> None:
        open_takes: list[rev.TakeOp] = []
        for op in block.ops:
            if isinstance(op, rev.TakeOp):
                for other in open_takes:
                    if _same_element(other, op.memref, op.indices) is True:
                        raise AliasViolation(
                            op,
                            other,
                            f"element of {value_name(op.memref)} taken again while borrowed by {describe_op(other)}",
                        )
                open_takes.append(op)
            elif isinstance(op, rev.PutOp):
                match = next(
                    (t for t in reversed(open_takes) if t.memref == op.memref and list(t.indices) == list(op.indices)),
                    None,
                )
                if match is None:
                    raise _fail(
                        "borrow",
                        op,
                        f"'rev.put' gives back an element of {value_name(op.memref)} "
                        "that was not taken with the same indices in this block",
                    )
                open_takes.remove(match)
            for take in open_takes:
                if take is op:
                    continue
                for nested in op.walk():
                    if isinstance(nested, memref.LoadOp) and _same_element(take, nested.memref, nested.indices) is True:
                        raise AliasViolation(
                            nested,
                            take,
                            f"reads an element of {value_name(take.memref)} borrowed by "
                            f"{describe_op(take)}; a shared read/write is not "
                            "reversible",
                        )
                    if isinstance(nested, rev.CallOp | rev.UncallOp) and _passes(nested, take.memref):
                        # the callee may read or borrow the element, as the
                        # interpreter finds at run time, where native code
                        # reads the value from before the borrow
                        raise AliasViolation(
                            nested,
                            take,
                            f"passes {value_name(take.memref)} to @{nested.callee.string_value()} while "
                            f"{describe_op(take)} borrows one of its elements; the arguments of a call must not "
                            "alias: pass a copy of the element",
                        )
        if open_takes:
            raise _fail(
                "borrow",
                open_takes[0],
                "the element taken here is never put back with rev.put",
            )

    # -- calls ----------------------------------------------------------------

    def _check_call(self, op: rev.CallOp | rev.UncallOp) -> None:
        module = self.func.parent_op()
        if not isinstance(module, ModuleOp):
            return
        callee = SymbolTable.lookup_symbol(module, op.callee)
        name = op.callee.string_value()
        if callee is None:
            raise _fail("call", op, f"'{op.name}' refers to unknown function @{name}")
        if not isinstance(callee, rev.FuncOp):
            raise _fail(
                "call",
                op,
                f"'{op.name}' target @{name} is a '{callee.name}', not a 'rev.func'",
            )
        expected = callee.function_type.inputs.data
        if tuple(op.args.types) != tuple(expected):
            raise _fail(
                "call",
                op,
                f"'{op.name}' passes ({', '.join(map(str, op.args.types))}) to "
                f"@{name}, which takes ({', '.join(map(str, expected))})",
            )
        for position in self._counters(name):
            if not self._is_counter(op.args[position]):
                raise _fail(
                    "safe",
                    op,
                    f"'{op.name}' passes {value_name(op.args[position])} to @{name}, which counts into it "
                    "in rev.safe; only a counter of this function (an array argument that only rev.safe "
                    "regions use) may be counted into",
                )
        if isinstance(op, rev.UncallOp):
            _check_module_inverse(op, module, callee)
        self._check_call_aliases(op, name)

    def _check_call_aliases(self, op: rev.CallOp | rev.UncallOp, name: str) -> None:
        """One array reaching two parameters of the callee (the same value,
        or views of it) is sound only where the callee reads both, or only
        accumulates into both (``Writes.ACCUMULATES``: runs that share the
        array commute).  Anything else sees its own writes through the other
        name: ``p[0] += q[0]`` on one array doubles the element, which its
        inverse subtracts from the doubled element (the interpreter finds the
        element still borrowed, native code returns a wrong answer).  The
        eDSL and the builder refuse any array passed twice; adjoint code
        passes a read-only array (``@dot(%x, %x)``) and its accumulated
        gradient twice."""
        arrays = [(k, viewed_arrays(arg)) for k, arg in enumerate(op.args) if isinstance(arg.type, MemRefType)]
        shared = [
            (i, j) for index, (i, first) in enumerate(arrays) for j, second in arrays[index + 1 :] if first & second
        ]
        if not shared:
            return  # the module's writes are asked only of calls that need them
        writes = self._call_writes(op)
        for i, j in shared:
            if writes[i] is writes[j] is Writes.NONE:
                continue
            if writes[i] is writes[j] is Writes.ACCUMULATES:
                module = self.func.parent_op()
                assert isinstance(module, ModuleOp)  # _check_call looked the callee up in it
                take = interleaved_accumulation(module, name, (i, j))
                if take is None:
                    continue
                how = (
                    f"@{name} accumulates into both, but {describe_op(take)} holds its element across more "
                    "than its own update (another borrow or a call is open before its rev.put)"
                )
            else:
                how = f"@{name} writes argument #{i if writes[i] is not Writes.NONE else j}"
            first_name, second_name = value_name(op.args[i]), value_name(op.args[j])
            passed = (
                f"passes {first_name} to @{name} twice"
                if first_name == second_name
                else f"passes {first_name} and {second_name}, views of one array, to @{name}"
            )
            raise _fail(
                "call",
                op,
                f"'{op.name}' {passed} (arguments #{i} and #{j}), and {how}; "
                "the arguments of a call must not alias: pass a copy of one of them",
            )

    def _counters(self, name: str) -> frozenset[int]:
        """The counters of function ``name`` of this module, this function
        or one it reaches (``revmlir.counters``): the whole module's, kept,
        inside ``ir_unchanged``; outside it only those of what this function
        reaches, as each function's verifier asks them again (the whole
        module's for each made verifying 400 functions quadratic: 5 s)."""
        if self._counted is None:
            module = self.func.parent_op()
            self._counted = (
                {}
                if not isinstance(module, ModuleOp)
                else kept(counter_arguments, module)
                if keeping()
                else counter_arguments(module, (self.func.sym_name.data,))
            )
        return self._counted.get(name, frozenset())

    def _is_counter(self, value: SSAValue) -> bool:
        return (
            isinstance(value, BlockArgument)
            and value.block is self.func.body.block
            and value.index in self._counters(self.func.sym_name.data)
        )


def _check_module_inverse(op: rev.UncallOp, module: ModuleOp, callee: rev.FuncOp) -> None:
    """An uncall of ``@f`` runs the module's own ``@f.inv`` forwards where
    there is one, on either engine, in place of ``@f`` run backwards; so
    that symbol must be a ``rev.func`` of ``@f``'s type, or the uncall
    would pass it arguments it does not take (or run ``@f`` backwards on
    one engine and fail on the other)."""
    name = callee.sym_name.data
    inverse = SymbolTable.lookup_symbol(module, inverse_name(name))
    if inverse is None:
        return
    if isinstance(inverse, rev.FuncOp) and inverse.function_type == callee.function_type:
        return
    found = f"'{inverse.name}'"
    if isinstance(inverse, rev.FuncOp | func.FuncOp):
        found += f" of type {inverse.function_type}"
    raise _fail(
        "call",
        op,
        f"'rev.uncall' of @{name} runs the module's @{inverse_name(name)}, which must be a 'rev.func' "
        f"of @{name}'s type {callee.function_type}, not a {found}",
    )


def _passes(call: rev.CallOp | rev.UncallOp, array: SSAValue) -> bool:
    """Whether ``call`` passes ``array``, or a view of the array it views."""
    viewed = viewed_arrays(array)
    return any(viewed & viewed_arrays(arg) for arg in call.args if isinstance(arg.type, MemRefType))


def _same_element(take: rev.TakeOp, target: SSAValue, indices: tuple[SSAValue, ...] | list[SSAValue]) -> bool | None:
    """True/False when known statically, None when only a run can tell."""
    if take.memref != target:
        return False
    return _same_indices(take.indices, indices)


def _same_indices(first: Sequence[SSAValue], second: Sequence[SSAValue]) -> bool | None:
    """Whether two index lists of one memref name the same element: True/False
    when known statically, None when only a run can tell."""
    known = True
    for a, b in zip(first, second, strict=True):
        if a == b:
            continue
        ca, cb = constant_index_through_cast(a), constant_index_through_cast(b)
        if ca is None or cb is None:
            known = False
        elif ca != cb:
            return False
    return True if known else None


def verify_function(func: rev.FuncOp) -> None:
    FunctionVerifier(func).run()


# ---------------------------------------------------------------------------
# Snapshots
# ---------------------------------------------------------------------------


_SNAPSHOT_OPS = frozenset({anc.SnapshotOp, anc.RestoreOp, anc.DropOp})


def _snapshot_error(op: Operation, why: str) -> CheckpointError:
    return CheckpointError(f"{describe_op(op)}: {why}")


def check_snapshots(module: ModuleOp) -> None:
    """The legality check before lowering: snapshots never escape the
    function that takes them and are balanced.

    A store, and a cursor's frames, must be a local stack
    (``anc.stack_alloc``) freed with its check on in the same block, so a
    run that leaves a snapshot (or an open segment) behind is caught; outside
    cursor-driven loops each ``anc.restore``/``anc.drop`` must find a
    snapshot taken before it in the same block, each snapshot being dropped
    before its store is freed.  Within them the cursor is trusted: it is
    the schedule, whose validity the tests check by simulation.  Every op
    of the module is asked, so by exact class (none of these has a
    subclass), not ``isinstance``'s ``ABCMeta``."""
    for op in nested_ops(module):
        kind = op.__class__
        if kind is NextOp:
            assert isinstance(op, NextOp)
            _check_store(op, op.frames, "a cursor's frames")
        if kind in _SNAPSHOT_OPS:
            assert isinstance(op, anc.SnapshotOp | anc.RestoreOp | anc.DropOp)
            _check_store(op, op.store, "snapshots")
            if not _cursor_driven(op):
                _check_straight_line(op)


def _check_store(op: Operation, store: SSAValue, what: str) -> None:
    if not (isinstance(store, OpResult) and isinstance(store.op, anc.StackAllocOp)):
        raise _snapshot_error(
            op, f"{what} must be kept on a local stack (anc.stack_alloc): they cannot leave the function that uses them"
        )
    frees = [u.operation for u in store.uses if isinstance(u.operation, anc.StackFreeOp)]
    if len(frees) != 1 or frees[0].parent_block() is not store.op.parent_block() or not frees[0].checks_enabled:
        raise _snapshot_error(op, f"the stack of {what} must be freed once, checked, in the block that allocates it")


def _cursor_driven(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, rev.WhileOp) and any(isinstance(o, NextOp) for o in parent.body.block.ops):
            return True
        parent = parent.parent_op()
    return False


def _check_straight_line(op: anc.SnapshotOp | anc.RestoreOp | anc.DropOp) -> None:
    block = op.parent_block()
    assert block is not None
    depth = 0
    for other in block.ops:
        if isinstance(other, anc.SnapshotOp) and other.store == op.store:
            depth += 1
        elif isinstance(other, anc.RestoreOp | anc.DropOp) and other.store == op.store:
            if depth == 0:
                raise _snapshot_error(
                    other,
                    f"no snapshot is held on this store here: every '{other.name}' needs an anc.snapshot before it",
                )
            depth -= isinstance(other, anc.DropOp)
        elif isinstance(other, anc.StackFreeOp) and other.stack == op.store and depth:
            raise _snapshot_error(
                other, f"{depth} snapshot(s) still held when the store is freed: every anc.snapshot needs its anc.drop"
            )
    if depth and op.store.owner.parent_block() is not block:
        raise _snapshot_error(op, f"{depth} snapshot(s) taken here are never dropped in this block")
