"""Translating one ordinary function into its tape function.

The tape function ``rev.func @f.tape`` (``@f`` itself with ``mode=tape``)
takes ``f``'s arguments, one result slot per result and one tape (an
``anc.stack``) per saved type.  It computes what ``f`` computes, adds each
result into its slot (``r += value``), updates arrays in place, and pushes on
the tapes every value the ordinary code forgot: elements overwritten by a
store, old versions of loop-carried values, values of control flow it no
longer needs, loads that a later store would change.  Running it backwards
pops them again, so the inverse restores the arguments exactly.

Every value of the ordinary function is represented by one value of the
reversible one that stays *current* (readable) until the end of the region
that defined it: pure arithmetic and stable loads by the same expression,
everything else by a state value the region *owns* and consumes only at its
end, by the terminator or by a push.  So the translation never has to track
versions: reading a value is always allowed, and a value is *moved* (consumed
before the end) only where the ordinary code uses it exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.builder import Builder
from xdsl.dialects import arith, cf, func, memref, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from revmlir.ad.checkpointed import CHECKPOINT_ATTR
from revmlir.dialects import anc, rev
from revmlir.errors import SOURCE_OP_ATTR
from revmlir.inversion import building_at_end
from revmlir.reversibilize.analysis import is_expression, load_is_stable
from revmlir.semantics import is_state_type

_OpT = TypeVar("_OpT", bound=Operation)
_AccessT = TypeVar("_AccessT", rev.TakeOp, rev.PutOp)


@dataclass(frozen=True)
class Interface:
    """How a translated function is called."""

    tape_name: str
    argument_types: tuple[Attribute, ...]
    result_types: tuple[Attribute, ...]
    written: frozenset[int]
    """Positions of the array arguments the function may write."""

    def tape_signature(self, tapes: Sequence[Attribute]) -> list[Attribute]:
        return [*self.argument_types, *self.result_types, *(anc.StackType(t) for t in tapes)]


def zero(builder: Builder, type: Attribute) -> SSAValue:
    """The empty slot a value is added into: ``-0.0`` for a float, the
    one zero that adding keeps every value of (``-0.0 + x`` is ``x``, where
    ``0.0 + -0.0`` is ``0.0``), so a result that is ``-0.0`` keeps its sign
    through the slot, as the ordinary code computes it."""
    value = FloatAttr(-0.0, type) if isinstance(type, AnyFloat) else IntegerAttr(0, type)
    return builder.insert(arith.ConstantOp(value, type)).result


_UPDATES: dict[type[Operation], tuple[type[rev.InstructionOp], bool]] = {
    arith.AddfOp: (rev.AddOp, True),
    arith.AddiOp: (rev.AddOp, True),
    arith.SubfOp: (rev.SubOp, False),
    arith.SubiOp: (rev.SubOp, False),
    arith.XOrIOp: (rev.XorOp, True),
}
"""Ordinary ops ``t = y ⊙ e`` that become the reversible instruction
``y ⊙= e`` when ``t`` replaces ``y`` (no save needed); the flag says whether
``e ⊙ y`` qualifies too."""


def update_of(
    value: SSAValue, is_target: Callable[[SSAValue], bool]
) -> tuple[type[rev.InstructionOp], SSAValue] | None:
    """``(instruction, e)`` when ``value`` is ``y ⊙ e`` (or ``e ⊙ y``) for the
    one operand ``y`` that ``is_target`` accepts, and ``e`` does not read ``y``."""
    op = value.owner
    if not isinstance(op, Operation) or type(op) not in _UPDATES:
        return None
    instruction, commutes = _UPDATES[type(op)]
    lhs, rhs = op.operands
    for target, e in ((lhs, rhs), (rhs, lhs)) if commutes else ((lhs, rhs),):
        if is_target(target) and not reads(e, lambda v: v == target):
            return instruction, e
    return None


def reads(value: SSAValue, predicate: Callable[[SSAValue], bool]) -> bool:
    """Whether the expression ``value`` (through pure ops and loads) reads a
    value ``predicate`` accepts (loads: their memref)."""
    if predicate(value):
        return True
    op = value.owner
    if isinstance(op, Operation) and is_expression(op):
        return any(reads(o, predicate) for o in op.operands)
    return False


@dataclass
class _Scope:
    owned: list[SSAValue] = field(default_factory=list[SSAValue])
    """State values to consume when the region ends."""

    def take(self, value: SSAValue) -> bool:
        """Hand ``value`` over to its consumer if this scope owns it."""
        if value in self.owned:
            self.owned.remove(value)
            return True
        return False


@dataclass
class FunctionTranslator:
    source: func.FuncOp
    interfaces: dict[str, Interface]
    tape_types: Sequence[Attribute]
    builder: Builder = field(default_factory=lambda: Builder(InsertPoint.at_end(Block())))
    values: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    tapes: dict[Attribute, SSAValue] = field(default_factory=dict[Attribute, SSAValue])
    materialized: set[SSAValue] = field(default_factory=set[SSAValue])

    def translate(self) -> rev.FuncOp:
        interface = self.interfaces[self.source.sym_name.data]
        source = self.source.body.block
        block = Block(arg_types=interface.tape_signature(self.tape_types))
        arguments = block.args[: len(source.args)]
        slots = block.args[len(source.args) : len(source.args) + len(interface.result_types)]
        for old, new in zip(source.args, arguments, strict=True):
            new.name_hint = old.name_hint
            self.values[old] = new
        for index, slot in enumerate(slots):
            slot.name_hint = f"result{index}"
        for type, tape in zip(self.tape_types, block.args[len(source.args) + len(slots) :], strict=True):
            tape.name_hint = f"tape_{type}"
            self.tapes[type] = tape
        scope = _Scope()
        with self._at_end(block):
            self._translate_block(source, scope)
            terminator = source.last_op
            assert isinstance(terminator, func.ReturnOp)
            results = [
                self._insert(rev.AddOp(slot, self.values[v]), terminator).result
                for slot, v in zip(slots, terminator.arguments, strict=True)
            ]
            self._save(scope, terminator)
            scalars = [a for a in arguments if is_state_type(a.type)]
            self._insert(rev.ReturnOp(*scalars, *results), terminator)
        function = rev.FuncOp(interface.tape_name, [a.type for a in block.args], Region(block))
        function.location = self.source.location
        _drop_unused_expressions(function)
        return function

    # -- blocks ---------------------------------------------------------------

    def _translate_block(self, block: Block, scope: _Scope) -> None:
        for op in block.ops:
            if op is block.last_op:
                return
            if isinstance(op, memref.LoadOp):
                self._load(op, scope)
            elif is_expression(op):
                self._expression(op)
            else:
                _RULES[type(op)](self, op, scope)

    def _save(self, scope: _Scope, like: Operation) -> None:
        """End of a region: everything it still owns goes on a tape."""
        for value in scope.owned:
            self._insert(anc.PushOp(self.tapes[value.type], value), like)
        scope.owned.clear()

    def _moved_or_copied(self, value: SSAValue, scope: _Scope, like: Operation) -> SSAValue:
        """A state value holding ``value`` for a consumer: the owned value
        itself when ``value`` has no other use, else an ancilla copy."""
        mapped = self.values[value]
        if value.has_one_use() and scope.take(mapped):
            return mapped
        return self._copy(mapped, like)

    def _copy(self, value: SSAValue, like: Operation) -> SSAValue:
        copy = self._insert(anc.AllocOp(value), like).result
        copy.name_hint = value.name_hint
        return copy

    # -- expressions and memory -----------------------------------------------

    def _expression(self, op: Operation) -> None:
        clone = op.clone(value_mapper={o: self.values[o] for o in op.operands})
        self.builder.insert(clone)
        for old, new in zip(op.results, clone.results, strict=True):
            new.name_hint = old.name_hint
            self.values[old] = new

    def _load(self, op: memref.LoadOp, scope: _Scope) -> None:
        self._expression(op)
        if load_is_stable(op):
            return
        copy = self._copy(self.values[op.res], op)
        self.values[op.res] = copy
        self.materialized.add(op.res)
        scope.owned.append(copy)

    def _store(self, op: memref.StoreOp, scope: _Scope) -> None:
        """``m[i] = v``: an update ``m[i] ⊙= e`` in place when ``v`` is one
        (``e`` not reading ``m``); otherwise the old element goes to the tape
        and ``v`` (moved or copied) takes its place."""
        array = self.values[op.memref]
        indices = [self.values[i] for i in op.indices]

        def is_element(value: SSAValue) -> bool:
            load = value.owner
            return (
                isinstance(load, memref.LoadOp)
                and value.has_one_use()
                and value not in self.materialized
                and load.memref == op.memref
                and tuple(load.indices) == tuple(op.indices)
            )

        update = update_of(op.value, is_element) if op.value.has_one_use() else None
        if update is not None and not reads(update[1], lambda v: v == op.memref):
            instruction, e = update
            # the take stands for the element's load, which ordinary code runs first
            (load,) = (v.owner for v in op.value.owner.operands if v is not e)
            assert isinstance(load, memref.LoadOp)
            element = self._standing_for(rev.TakeOp(array, indices), load).result
            updated = self._insert(instruction(element, self.values[e]), op).results[0]
            self._standing_for(rev.PutOp(updated, array, indices), op)
            return
        new = self._moved_or_copied(op.value, scope, op)
        old = self._standing_for(rev.TakeOp(array, indices), op).result
        self._insert(anc.PushOp(self.tapes[old.type], old), op)
        self._standing_for(rev.PutOp(new, array, indices), op)

    def _standing_for(self, access: _AccessT, source: memref.StoreOp | memref.LoadOp) -> _AccessT:
        """``access`` inserted where the store is, standing for ``source``
        of ordinary code (the store, or the load of the element it
        updates), whose name and location its errors (an index out of
        bounds) give on both engines: native code runs that op itself
        when ``f`` is called."""
        access.attributes[SOURCE_OP_ATTR] = StringAttr(source.name)
        return self._insert(access, source)

    # -- control flow -----------------------------------------------------------

    def _for(self, op: scf.ForOp, scope: _Scope) -> None:
        initial = [self._moved_or_copied(v, scope, op) for v in op.iter_args]
        source = op.body.block
        block = self._region_block(source)
        inner = _Scope(list(block.args[1:]))
        with self._at_end(block):
            self._translate_block(source, inner)
            terminator = source.last_op
            assert isinstance(terminator, scf.YieldOp)
            final = self._carry(terminator, source.args[1:], inner)
            self._insert(rev.YieldOp(*final), terminator)
        first, last, step = (self.values[v] for v in (op.lb, op.ub, op.step))
        loop = self._insert(rev.ForOp(first, last, step, initial, Region(block)), op)
        if (schedule := op.attributes.get(CHECKPOINT_ATTR)) is not None:
            loop.attributes[CHECKPOINT_ATTR] = schedule
        self._bind_results(op, loop.res, scope)

    def _while(self, op: scf.WhileOp, scope: _Scope) -> None:
        """``scf.while`` with a pure condition: NiLang's ``while`` with an
        iteration counter as postcondition (zero on entry, positive after
        every iteration); the counter is saved with the results."""
        counter_type = IndexType()
        initial = [self._moved_or_copied(v, scope, op) for v in op.arguments]
        initial.append(self._copy(zero(self.builder, counter_type), op))
        initial[-1].name_hint = "iterations"
        state_types = [*op.result_types, counter_type]

        before = op.before_region.block
        names = [*(a.name_hint for a in before.args), "iterations"]
        pre_block, post_block = Block(arg_types=state_types), Block(arg_types=state_types)
        for argument, name in zip([*pre_block.args, *post_block.args], names * 2):
            argument.name_hint = name
        with self._at_end(pre_block):
            for old, new in zip(before.args, pre_block.args):
                self.values[old] = new
            self._translate_block(before, _Scope())
            condition = before.last_op
            assert isinstance(condition, scf.ConditionOp)
            self._insert(rev.CondOp(self.values[condition.condition]), condition)

        with self._at_end(post_block):
            count = post_block.args[-1]
            started = arith.CmpiOp(count, zero(self.builder, counter_type), "ne")
            self._insert(started, op)
            self._insert(rev.CondOp(started.result), op)

        source = op.after_region.block
        body = Block(arg_types=state_types)
        for old, new in zip(source.args, body.args):
            new.name_hint = old.name_hint
            self.values[old] = new
        inner = _Scope(list(body.args[:-1]))
        with self._at_end(body):
            self._translate_block(source, inner)
            terminator = source.last_op
            assert isinstance(terminator, scf.YieldOp)
            counted = self._insert(rev.IncOp(body.args[-1]), terminator).result
            final = self._carry(terminator, source.args, inner)
            self._insert(rev.YieldOp(*final, counted), terminator)
        loop = rev.WhileOp(initial, Region(pre_block), Region(post_block), Region(body))
        if (schedule := op.attributes.get(CHECKPOINT_ATTR)) is not None:
            loop.attributes[CHECKPOINT_ATTR] = schedule
        self._insert(loop, op)
        self._bind_results(op, loop.res[:-1], scope)
        scope.owned.append(loop.res[-1])

    def _carry(self, terminator: scf.YieldOp, arguments: Sequence[SSAValue], scope: _Scope) -> list[SSAValue]:
        """The next versions of a loop's carried values, in order: an owned
        value moves; ``y ⊙ e`` of the carried ``y`` at the same position is
        the instruction ``y ⊙= e``; anything else is copied and the old
        version saved.  Copies read old versions, so they come first, and an
        update whose ``e`` reads another update's target comes before it
        (``_update_order``)."""
        yielded = list(terminator.arguments)
        final: list[SSAValue | None] = [None] * len(yielded)
        for index, value in enumerate(yielded):
            if scope.take(self.values[value]):
                final[index] = self.values[value]
        updates: dict[int, tuple[type[rev.InstructionOp], SSAValue]] = {}
        for index, value in enumerate(yielded):
            argument = arguments[index]
            if final[index] is None and self.values[argument] in scope.owned:
                if (update := update_of(value, lambda v: v == argument)) is not None:
                    updates[index] = update
        order = _update_order(updates, arguments)
        for index, value in enumerate(yielded):
            if final[index] is None and index not in order:
                final[index] = self._copy(self.values[value], terminator)
        for index in order:
            instruction, e = updates[index]
            target = self.values[arguments[index]]
            scope.take(target)
            final[index] = self._insert(instruction(target, self.values[e]), terminator).results[0]
        self._save(scope, terminator)
        return [v for v in final if v is not None]

    def _if(self, op: scf.IfOp, scope: _Scope) -> None:
        """The results live in zero-initialised slots that each branch fills;
        the condition (current throughout) picks the branch both ways."""
        slots = [self._copy(zero(self.builder, t), op) for t in op.result_types]
        condition = self.values[op.cond]
        pre = Block(arg_types=op.result_types)
        with self._at_end(pre):
            self._insert(rev.CondOp(condition), op)
        branches = [self._branch(r, op) for r in (op.true_region, op.false_region)]
        result = rev.IfOp(slots, Region(pre), *branches)
        self._insert(result, op)
        self._bind_results(op, result.res, scope)

    def _branch(self, region: Region, op: scf.IfOp) -> Region:
        block = Block(arg_types=op.result_types)
        for index, slot in enumerate(block.args):
            slot.name_hint = f"slot{index}"
        inner = _Scope()
        with self._at_end(block):
            if not region.blocks:
                self._insert(rev.YieldOp(*block.args), op)
                return Region(block)
            source = region.block
            self._translate_block(source, inner)
            terminator = source.last_op
            assert isinstance(terminator, scf.YieldOp)
            final = [
                self._fill(slot, value, inner, terminator)
                for slot, value in zip(block.args, terminator.arguments, strict=True)
            ]
            self._save(inner, terminator)
            self._insert(rev.YieldOp(*final), terminator)
        return Region(block)

    def _fill(self, slot: SSAValue, value: SSAValue, scope: _Scope, like: Operation) -> SSAValue:
        """A zero slot receives a value: an owned one yielded only here is
        swapped in (and the zero it leaves behind freed), anything else
        added."""
        mapped = self.values[value]
        if value.has_one_use() and scope.take(mapped):
            filled, emptied = self._insert(rev.SwapOp(slot, mapped), like).results
            self._insert(anc.FreeOp(emptied, zero(self.builder, slot.type)), like)
            return filled
        return self._insert(rev.AddOp(slot, mapped), like).result

    def _call(self, op: func.CallOp, scope: _Scope) -> None:
        """Scalar arguments go in as ancilla copies, checked unchanged and
        freed after the call (tape functions return them as they got them);
        results come back in zero slots; the callee shares the tapes."""
        interface = self.interfaces[op.callee.string_value()]
        arguments = [self._copy(self.values[a], op) if is_state_type(a.type) else self.values[a] for a in op.arguments]
        slots = [self._copy(zero(self.builder, t), op) for t in interface.result_types]
        tapes = [self.tapes[t] for t in self.tape_types]
        call = self._insert(rev.CallOp(interface.tape_name, [*arguments, *slots, *tapes]), op)
        # the call's errors (a recursion too deep) name the func.call native
        # code runs, as the lowering's own ops name the op they stand for
        call.attributes[SOURCE_OP_ATTR] = StringAttr(op.name)
        scalars = [a for a in op.arguments if is_state_type(a.type)]
        for returned, argument in zip(call.res, scalars):
            self._insert(anc.FreeOp(returned, self.values[argument]), op)
        self._bind_results(op, call.res[len(scalars) :], scope)

    # -- frame stacks -----------------------------------------------------------

    def _frame_alloc(self, op: anc.StackAllocOp, scope: _Scope) -> None:
        self.values[op.result] = self._insert(anc.StackAllocOp(op.result.type), op).result
        self.values[op.result].name_hint = op.result.name_hint

    def _frame_free(self, op: anc.StackFreeOp, scope: _Scope) -> None:
        self._insert(anc.StackFreeOp(self.values[op.stack]), op)

    def _frame_push(self, op: anc.CopyPushOp, scope: _Scope) -> None:
        """A copy goes on the frame; its inverse pops it back, checked equal."""
        self._insert(anc.CopyPushOp(self.values[op.stack], self.values[op.value]), op)

    def _frame_pop(self, op: anc.PopOp, scope: _Scope) -> None:
        """The popped value is state the scope owns; its inverse pushes it back."""
        self._bind_results(op, self._insert(anc.PopOp(self.values[op.stack]), op).results, scope)

    def _check(self, op: cf.AssertOp, scope: _Scope) -> None:
        """A check (``analysis.CHECKS``: the user's, or a recursion's depth
        at a call): the same assertion in a ``rev.safe`` region, which runs
        forwards only, as the uncompute never runs past a failed check."""
        check = cf.AssertOp(self.values[op.arg], op.msg)
        check.location = op.location
        self._insert(rev.SafeOp(Region(Block([check]))), op)

    # -- helpers ----------------------------------------------------------------

    def _region_block(self, source: Block) -> Block:
        block = Block(arg_types=[a.type for a in source.args])
        for old, new in zip(source.args, block.args, strict=True):
            new.name_hint = old.name_hint
            self.values[old] = new
        return block

    def _bind_results(self, op: Operation, results: Sequence[SSAValue], scope: _Scope) -> None:
        for old, new in zip(op.results, results, strict=True):
            new.name_hint = old.name_hint
            self.values[old] = new
            scope.owned.append(new)

    def _insert(self, op: _OpT, like: Operation) -> _OpT:
        op.location = like.location
        self.builder.insert(op)
        return op

    def _at_end(self, block: Block) -> AbstractContextManager[None]:
        return building_at_end(self.builder, block)


_RULES: dict[type[Operation], Callable[[FunctionTranslator, Operation, _Scope], None]] = {
    memref.StoreOp: FunctionTranslator._store,
    scf.ForOp: FunctionTranslator._for,
    scf.WhileOp: FunctionTranslator._while,
    scf.IfOp: FunctionTranslator._if,
    func.CallOp: FunctionTranslator._call,
    anc.StackAllocOp: FunctionTranslator._frame_alloc,
    anc.StackFreeOp: FunctionTranslator._frame_free,
    anc.CopyPushOp: FunctionTranslator._frame_push,
    anc.PopOp: FunctionTranslator._frame_pop,
    cf.AssertOp: FunctionTranslator._check,
}
"""How each ordinary statement is translated (expressions are copied)."""


def _update_order(
    updates: dict[int, tuple[type[rev.InstructionOp], SSAValue]], arguments: Sequence[SSAValue]
) -> list[int]:
    """The positions of ``updates`` in an order in which each ``e`` is read
    before any target it reads is updated (``s += x[k]`` before ``k += 1``:
    the inverse undoes ``k`` first, so ``e`` is read on the same ``k``
    both ways).  Updates caught in a cycle of such reads are left out: they
    are copied instead."""
    pending = dict(updates)
    order: list[int] = []
    while pending:
        read_by_others = {
            i for i in pending for j, (_, e) in pending.items() if j != i and reads(e, {arguments[i]}.__contains__)
        }
        ready = [i for i in pending if i not in read_by_others]
        if not ready:
            break
        for index in ready:
            order.append(index)
            del pending[index]
    return order


def _drop_unused_expressions(function: rev.FuncOp) -> None:
    """Expressions the translation made redundant (a load folded into an
    in-place update, a constant of an unused branch) are removed."""
    for op in reversed(list(function.walk())):
        if is_expression(op) and not any(r.uses for r in op.results):
            op.detach()
            op.erase()
