"""Checkpointed gradients: ``@f.ckpt``, with schedules driving annotated loops.

A ``rev.for`` or ``rev.while`` whose step is reversible only with a tape
(what ``reversibilize{mode=tape}`` makes of time stepping) costs, in
store-all reverse mode, one tape per iteration.  Marked ``{checkpoint =
#ad.schedule<…>}``, its gradient instead keeps a few snapshots of the loop
state and recomputes the rest (seed 001; Griewank–Walther for binomial):

* the step body is outlined once, as ``@f.ckpt.step<j>(iv, state…,
  captured scalars…, memrefs…, stacks…)`` (no ``iv`` for a while loop); its
  adjoint ``@….adj`` is made by ``ad-adjoint``'s machinery.  The step's
  tapes, and the gradient shadows its adjoint pops with them (zero-padded
  to the tape before each adjoint call), are allocated once, freed (checked
  empty) when ``@f.ckpt`` returns:
  a *plain* step is a call of its untaped copy ``@….plain``
  (``revmlir.ad.untaped``: every push forgets its value), which leaves them
  empty (where the step reads a tape back, a call of the step itself on
  fresh tapes, then freed unchecked); a *taped* step is a call followed at
  once by the adjoint call, which pops the tapes empty again, so their
  buffers serve every step;
* the schedule runs at run time: a cursor (``ad.next``,
  ``revmlir.checkpoint.cursor``) gives its entries one at a time for the
  trip count the loop has when it starts, so nothing grows with the steps.
  For a ``rev.for`` the forward sweep is one ``rev.while`` over the entries
  before the first reversal (plain steps and snapshots), then the last step
  runs taped and its tape waits for the adjoint; the reverse sweep runs
  that step's adjoint, then one ``rev.while`` over the remaining entries,
  one ``rev.if`` per kind of entry.  A ``rev.while`` is run plain once to
  count its steps (``counting_sweep``) and its whole schedule runs in the
  reverse sweep;
* snapshots of the state (carried scalars and the memrefs the step writes)
  are records on local stacks, one per element type: ``anc.snapshot``,
  ``anc.restore``, ``anc.drop``.

What is forgotten, and why the gradient is still exact: a plain step's tape
(its state after the step is all the schedule needs: the step is rerun taped
from a snapshot before it is reversed), and the working state a restore
overwrites (a later action either restores another snapshot or recomputes it
from this one).  Gradients are never forgotten: they change only in the
adjoint calls, one per step, in reverse step order, exactly as in store-all.
Memory: the snapshots the schedule holds, times the state, plus one step's
tape and the cursor's frames (an index per snapshot).

``@f.ckpt`` has ``@f.adj``'s signature but takes ``f``'s inputs: it runs the
rest of ``f`` forward (its tapes as in ``f``), then the adjoint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, UnitAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable

from revmlir.ad.adjoint import Adjointer, AdjointRequest, adjoint_name, generate_adjoints
from revmlir.ad.derived import derived_attributes, prepare
from revmlir.ad.untaped import PLAIN_SUFFIX, untaped_copy
from revmlir.checkpoint.cursor import FINAL, WORDS
from revmlir.checkpoint.table import Entry
from revmlir.dialects import anc, rev
from revmlir.dialects.ad import NextOp, ScheduleAttr
from revmlir.errors import CheckpointError, describe_op
from revmlir.interfaces import InvertibleOp
from revmlir.inversion import building_at_end, derive_inverse
from revmlir.ir_utils import constant_index
from revmlir.naming import FORGETFUL_ATTR, INVERSE_SUFFIX, inverse_name
from revmlir.semantics import gradient_type, is_state_type

CHECKPOINT_ATTR = "checkpoint"
SPLIT_ATTR = "checkpoint_split"
"""``checkpoint_split = "work"`` on a checkpointed ordinary ``scf.for``:
split at primitive steps (the iterations of its inner loop), not at its own
iterations (``revmlir.reversibilize.flatten``)."""
CHECKPOINT_SUFFIX = ".ckpt"


def _error(op: Operation, why: str) -> CheckpointError:
    return CheckpointError(f"{describe_op(op)}: {why}")


Handler = Callable[[SSAValue, list[SSAValue]], list[SSAValue]]
"""What a table entry does: ``handler(step, state) -> state``."""


def _defined_outside(value: SSAValue, op: Operation) -> bool:
    node = value.block if isinstance(value, BlockArgument) else value.op
    return not op.is_ancestor(node)


@dataclass
class Loop:
    """One annotated loop: its outlined step and what both sweeps share."""

    loop: rev.ForOp | rev.WhileOp
    step: str
    schedule: ScheduleAttr
    captured: list[SSAValue]
    """Scalars the body reads from outside (passed to the step as copies)."""
    memrefs: list[SSAValue]
    stacks: list[SSAValue]
    """The step's stack arguments in the forward function: its tapes and
    its frame stacks (``calls``)."""
    calls: list[SSAValue]
    """The frame stacks of a resumable function with recursion: stacks the
    function allocates and the step pushes frames on and pops them from.
    They are state, like the written memrefs: snapshotted (their live
    part), restored, passed to every step, their gradient the adjoint's."""
    written: list[SSAValue]
    """The memrefs the step writes: snapshotted with the carried scalars."""
    plain: str | None = None
    """The step's untaped copy, which plain steps call (None: they call the
    taped step and forget its tapes)."""
    stores: dict[Attribute, SSAValue] = field(default_factory=dict[Attribute, SSAValue])
    tapes: list[SSAValue] = field(default_factory=list[SSAValue])
    """The step's tapes in ``@f.ckpt``, shared by every step: empty between
    steps."""
    shadows: list[SSAValue] = field(default_factory=list[SSAValue])
    """The gradients of the tapes that have them, shared by every step like
    the tapes: zero-padded to a taped step's tape, popped empty by its
    adjoint."""
    frames: SSAValue | None = None
    """The cursor's stack of segment starts."""
    trip: tuple[SSAValue, SSAValue | None, SSAValue | None] | None = None
    """The trip count, the first step's induction variable and the stride
    (index values; a ``rev.while`` has only a count), computed once by the
    forward sweep."""
    handoff: list[SSAValue] = field(default_factory=list[SSAValue])
    """From the forward sweep to the reverse sweep: the cursor, stopped at
    the last step's reversal (or at its end); that step's tape waits on
    ``tapes``."""

    def groups(
        self, scalars: Sequence[SSAValue], value: Callable[[SSAValue], SSAValue]
    ) -> list[tuple[SSAValue, list[SSAValue]]]:
        """The snapshot records: per store, the working scalars and written
        memrefs of its element type."""
        out: list[tuple[SSAValue, list[SSAValue]]] = []
        for element, store in self.stores.items():
            values = [s for s in scalars if s.type == element]
            values += [
                value(m) for m in self.written if isinstance(m.type, MemRefType) and m.type.element_type == element
            ]
            values += [
                value(s) for s in self.calls if isinstance(s.type, anc.StackType) and s.type.element_type == element
            ]
            out.append((store, values))
        return out

    def stack_arguments(self, tapes: Sequence[SSAValue], value: Callable[[SSAValue], SSAValue]) -> list[SSAValue]:
        """The step's stack arguments: ``tapes`` for its tapes, in order,
        and the frame stacks as ``value`` reads them."""
        own = iter(tapes)
        return [value(s) if s in self.calls else next(own) for s in self.stacks]


def checkpointed_loops(func: rev.FuncOp) -> list[rev.ForOp | rev.WhileOp]:
    """The loops of ``func`` marked with a schedule, in order; a mark that
    cannot be checkpointed is an error at its op."""
    loops: list[rev.ForOp | rev.WhileOp] = []
    for op in func.walk():
        if CHECKPOINT_ATTR not in op.attributes:
            continue
        if not isinstance(op, rev.ForOp | rev.WhileOp) or op.parent_op() is not func:
            raise _error(op, "only rev.for and rev.while loops at the top level of a function can be checkpointed")
        if not isinstance(schedule := op.attributes[CHECKPOINT_ATTR], ScheduleAttr):
            raise _error(
                op,
                f"'{CHECKPOINT_ATTR}' must be a schedule (#ad.schedule<store_all>, <bisection> or "
                f"<binomial, snapshots = n>), not {schedule}",
            )
        for inner in op.body.walk():
            if CHECKPOINT_ATTR in inner.attributes:
                raise _error(inner, "checkpointed loops cannot be nested in one another yet")
        loops.append(op)
    return loops


def step_name(gradient: str, index: int) -> str:
    """``@f.ckpt.step<index>``: the outlined step of the checkpointed loop
    ``index`` (in program order) of the function whose gradient is ``@gradient``."""
    return f"{gradient}.step{index}"


def generated_names(name: str, loops: int) -> dict[str, str]:
    """The names of the functions a checkpointed gradient of ``@name`` with
    ``loops`` checkpointed loops is built from, each with what it names:
    ``@f.ckpt``, and per loop its outlined step, the step's untaped copy
    (made unless the step reads a tape back: the name is reserved either
    way, so whether a module is accepted does not depend on the step's
    body) and the step's adjoint.  The adjoints and untaped copies of the
    functions a step calls are not among them: those are shared, as
    ``ad-adjoint`` shares them, by every derived function calling them."""
    gradient = name + CHECKPOINT_SUFFIX
    names = {gradient: f"@{name}'s checkpointed gradient"}
    for index in range(loops):
        step = step_name(gradient, index)
        what = f"the outlined step of @{name}'s checkpointed loop #{index}"
        names[step] = what
        names[step + PLAIN_SUFFIX] = f"the untaped copy of {what}"
        names[adjoint_name(step)] = f"the adjoint of {what}"
    return names


def name_clash(module: ModuleOp, name: str, loops: int) -> str | None:
    """The diagnostic for the first name of ``generated_names`` that a
    symbol of ``module`` already has (at that symbol), or None: checked
    before anything is built, so that a clash leaves the module as it was
    rather than fail as an unlocated redefinition once half of it is built."""
    for generated, what in generated_names(name, loops).items():
        if (taken := SymbolTable.lookup_symbol(module, generated)) is not None:
            return (
                f"{describe_op(taken)}: @{generated} is the name of {what}, which this run builds; rename this function"
            )
    return None


def outline_step(loop: rev.ForOp | rev.WhileOp, name: str) -> tuple[rev.FuncOp, Loop]:
    """``@name``: ``loop``'s body as a function, and the loop's description
    (``loop`` is one of ``checkpointed_loops``)."""
    attr = loop.attributes[CHECKPOINT_ATTR]
    assert isinstance(attr, ScheduleAttr)  # checkpointed_loops checks it
    captured: dict[SSAValue, None] = {}
    constants: dict[SSAValue, None] = {}
    for inner in loop.body.walk():
        for operand in inner.operands:
            if not _defined_outside(operand, loop):
                continue
            if isinstance(operand, OpResult) and isinstance(operand.op, arith.ConstantOp):
                constants[operand] = None
            else:
                captured[operand] = None
    scalars = [v for v in captured if is_state_type(v.type)]
    memrefs = [v for v in captured if isinstance(v.type, MemRefType)]
    stacks = [v for v in captured if isinstance(v.type, anc.StackType)]
    calls = [v for v in stacks if isinstance(v.owner, anc.StackAllocOp)]
    for frames in calls:
        assert isinstance(frames.type, anc.StackType)
        if not anc.holds_length(frames.type.element_type):
            raise _error(loop, f"a checkpointed loop cannot snapshot a stack of {frames.type.element_type}")
    written = {
        m: None
        for inner in loop.body.walk()
        if isinstance(inner, InvertibleOp)
        for m in inner.written_memrefs()
        if m in memrefs
    }
    forward = loop.body.block
    types = [a.type for a in forward.args]
    types += [v.type for v in (*scalars, *memrefs, *stacks)]
    block = Block(arg_types=types)
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip([*forward.args, *scalars, *memrefs, *stacks], block.args, strict=True):
        new.name_hint = old.name_hint
        mapping[old] = new
    for value in constants:
        assert isinstance(value, OpResult)
        block.add_op(value.op.clone(value_mapper=mapping))
    for op in list(forward.ops)[:-1]:
        block.add_op(op.clone(value_mapper=mapping))
    terminator = forward.last_op
    assert terminator is not None
    yielded = [mapping.get(v, v) for v in terminator.operands]
    induction = block.args[:1] if isinstance(loop, rev.ForOp) else []
    ret = rev.ReturnOp(*induction, *yielded, *block.args[len(forward.args) :][: len(scalars)])
    ret.location = terminator.location
    block.add_op(ret)
    function = rev.FuncOp(name, types, Region(block))
    function.location = loop.location
    info = Loop(loop, name, attr, captured=scalars, memrefs=memrefs, stacks=stacks, calls=calls, written=list(written))
    return function, info


@dataclass
class Sweep:
    """Emits the code of one sweep at ``builder``: the forward sweep reads
    the forward function's values through ``value``, the reverse sweep
    through the adjointer."""

    info: Loop
    builder: Builder
    value: Callable[[SSAValue], SSAValue]
    location: Operation

    def emit(self, op: Operation) -> Operation:
        op.location = self.location.location
        self.builder.insert(op)
        return op

    def constant(self, number: int, type: Attribute) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(number, type))).results[0]

    def copy(self, value: SSAValue) -> SSAValue:
        return self.emit(anc.AllocOp(value)).results[0]

    def free(self, value: SSAValue, known: SSAValue, check: bool = True) -> None:
        free = anc.FreeOp(value, known)
        if not check:
            free.attributes[anc.FreeOp.CHECK_ATTR] = UnitAttr()
        self.emit(free)

    def index(self, value: SSAValue) -> SSAValue:
        if isinstance(value.type, IndexType):
            return value
        return self.emit(arith.IndexCastOp(value, IndexType())).results[0]

    def trip(self) -> tuple[SSAValue, SSAValue, SSAValue]:
        """The trip count, the first step's induction variable and the
        stride of the loop, as index values (constants when its bounds are)."""
        loop = self.info.loop
        index = IndexType()
        known_lb, known_ub, known_step = (constant_index(v) for v in (loop.lb, loop.ub, loop.step))
        if known_lb is not None and known_ub is not None and known_step is not None:
            steps = max(0, -(-(known_ub - known_lb) // known_step))
            first, stride = (
                (known_lb + (steps - 1) * known_step, -known_step) if loop.is_reverse else (known_lb, known_step)
            )
            return self.constant(steps, index), self.constant(first, index), self.constant(stride, index)
        lb, ub, step = (self.index(self.value(v)) for v in (loop.lb, loop.ub, loop.step))
        # (ub − lb − 1) ÷ step + 1 where lb < ub: ub − lb passes 2⁶³ where
        # the bounds are far apart (lb = −2⁶³, ub = 2⁶³ − 1), and read
        # unsigned it is exact, as the loop's own lowering reads it
        one = self.constant(1, index)
        span = self.emit(arith.SubiOp(ub, lb)).results[0]
        distance = self.emit(arith.SubiOp(span, one)).results[0]
        count = self.emit(arith.AddiOp(self.emit(arith.DivUIOp(distance, step)).results[0], one)).results[0]
        runs = self.emit(arith.CmpiOp(lb, ub, "slt")).results[0]
        steps = self.emit(arith.SelectOp(runs, count, self.constant(0, index))).results[0]
        if not loop.is_reverse:
            return steps, lb, step
        last = self.emit(arith.SubiOp(steps, one)).results[0]
        offset = self.emit(arith.MuliOp(last, step)).results[0]
        first = self.emit(arith.AddiOp(lb, offset)).results[0]
        stride = self.emit(arith.SubiOp(self.constant(0, index), step)).results[0]
        return steps, first, stride

    def iv(self, step: SSAValue) -> SSAValue | None:
        """The induction variable of step ``step`` (an index); ``None`` for
        a ``rev.while``, whose steps have none."""
        assert self.info.trip is not None
        _, first, stride = self.info.trip
        if first is None or stride is None:
            return None
        scaled = self.emit(arith.MuliOp(step, stride)).results[0]
        iv = self.emit(arith.AddiOp(scaled, first)).results[0]
        assert isinstance(self.info.loop, rev.ForOp)
        target = self.info.loop.lb.type
        return iv if isinstance(target, IndexType) else self.emit(arith.IndexCastOp(iv, target)).results[0]

    def new_tapes(self) -> list[SSAValue]:
        return [self.emit(anc.StackAllocOp(s.type)).results[0] for s in self.info.stacks if s not in self.info.calls]

    def free_stacks(self, stacks: Sequence[SSAValue], check: bool) -> None:
        for stack in stacks:
            free = anc.StackFreeOp(stack)
            if not check:
                free.attributes[anc.StackFreeOp.CHECK_ATTR] = UnitAttr()
            self.emit(free)

    def induction(self, iv: SSAValue | None) -> list[SSAValue]:
        """The step's leading argument: a copy of its induction variable."""
        return [] if iv is None else [self.copy(iv)]

    def free_induction(self, results: Sequence[SSAValue], iv: SSAValue | None) -> int:
        """Check the returned induction variable; how many results it took."""
        if iv is None:
            return 0
        self.free(results[0], iv)
        return 1

    def call_step(
        self, iv: SSAValue | None, state: Sequence[SSAValue], tapes: Sequence[SSAValue], callee: str | None = None
    ) -> list[SSAValue]:
        """Run the step (or ``callee``, its untaped copy) on ``state``;
        scalars read from outside go in as copies, checked unchanged
        afterwards."""
        info = self.info
        captured = [self.value(c) for c in info.captured]
        args = [*self.induction(iv), *state, *map(self.copy, captured)]
        args += [self.value(m) for m in info.memrefs] + info.stack_arguments(tapes, self.value)
        results = list(self.emit(rev.CallOp(callee or info.step, args)).results)
        lead = self.free_induction(results, iv)
        for result, known in zip(results[lead + len(state) :], captured, strict=True):
            self.free(result, known)
        return results[lead : lead + len(state)]

    def plain_step(self, iv: SSAValue | None, state: Sequence[SSAValue]) -> list[SSAValue]:
        """A step whose tape is forgotten: never written, with an untaped
        copy (the shared tapes stay empty), else written on fresh tapes
        freed unchecked."""
        if self.info.plain is not None:
            return self.call_step(iv, state, self.info.tapes, self.info.plain)
        tapes = self.new_tapes()
        state = self.call_step(iv, state, tapes)
        self.free_stacks(tapes, check=False)
        return state

    def value_handlers(self) -> dict[Entry, Handler]:
        """What the entries that only move the working state do."""
        return {
            Entry.PLAIN: lambda step, state: self.plain_step(self.iv(step), state),
            Entry.TAKE: lambda step, state: self.records(anc.SnapshotOp, state),
            Entry.RESTORE: lambda step, state: self.restore(state),
            Entry.FREE: lambda step, state: self.records(anc.DropOp, state),
        }

    def records(self, kind: type[anc.SnapshotOp | anc.DropOp], state: list[SSAValue]) -> list[SSAValue]:
        """Take (or drop) the snapshot of ``state``, which stays current."""
        for store, values in self.info.groups(state, self.value):
            self.emit(kind(store, values))
        return state

    def restore(self, state: Sequence[SSAValue]) -> list[SSAValue]:
        restored: dict[SSAValue, SSAValue] = {}
        for store, values in self.info.groups(state, self.value):
            op = self.emit(anc.RestoreOp(store, values))
            scalars = op.scalars()
            for old, new in zip(scalars, op.results, strict=True):
                restored[old] = self.copy(new)
        return [restored[s] for s in state]

    def condition(self, region: Region, extra: Attribute) -> Region:
        """A copy of one of the loop's condition regions, reading this
        sweep's values, with one more (unused) argument of type ``extra``."""
        outside = {
            operand: self.value(operand)
            for op in region.walk()
            for operand in op.operands
            if _defined_outside(operand, self.info.loop)
        }
        copy = Region()
        region.clone_into(copy, value_mapper=outside)
        copy.block.insert_arg(extra, len(copy.block.args))
        return copy

    def start_cursor(self) -> list[SSAValue]:
        """A fresh cursor moved to its first entry."""
        zero = self.constant(0, IndexType())
        return self.next([self.copy(zero) for _ in range(WORDS)])

    def next(self, cursor: Sequence[SSAValue]) -> list[SSAValue]:
        info = self.info
        assert info.frames is not None and info.trip is not None
        results = list(self.emit(NextOp(info.schedule, info.frames, info.trip[0], cursor)).results)
        for result, hint in zip(results, ("kind", "step"), strict=False):
            result.name_hint = hint
        return results

    def end_cursor(self, cursor: Sequence[SSAValue]) -> None:
        """Free the cursor, checking that its schedule ran to its end."""
        for word, final in zip(cursor, FINAL, strict=True):
            self.free(word, self.constant(final, IndexType()))

    def cursor_loop(
        self,
        cursor: list[SSAValue],
        state: Sequence[SSAValue],
        handlers: dict[Entry, Handler],
        stop: Entry,
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """Carry out entries until one of kind ``stop`` or ``END``: a
        ``rev.while`` with one ``rev.if`` per kind of entry,
        ``handlers[kind](step, state) -> state``; an iteration counter rides
        along for the loop's postcondition."""
        index = IndexType()
        zero = self.constant(0, index)
        types = [index] * (WORDS + 1) + [s.type for s in state]
        pre, post, body = (Block(arg_types=types) for _ in range(3))
        with building_at_end(self.builder, pre):
            go = None
            for kind in sorted({stop, Entry.END}):
                other = self.emit(arith.CmpiOp(pre.args[0], self.constant(kind, index), "ne"))
                go = other if go is None else self.emit(arith.AndIOp(go.result, other.result))
            assert go is not None
            self.emit(rev.CondOp(go.results[0]))
        with building_at_end(self.builder, post):
            started = self.emit(arith.CmpiOp(post.args[WORDS], zero, "ne"))
            self.emit(rev.CondOp(started.result))
        with building_at_end(self.builder, body):
            kind, step = body.args[0], body.args[1]
            current = list(body.args[WORDS + 1 :])
            for entry, handler in handlers.items():
                current = self.conditional(kind, entry, current, handler, step)
            cursor_after = self.next(body.args[:WORDS])
            counted = self.emit(rev.IncOp(body.args[WORDS])).results[0]
            self.emit(rev.YieldOp(*cursor_after, counted, *current))
        initial = [*cursor, self.copy(zero), *state]
        loop = self.emit(rev.WhileOp(initial, Region(pre), Region(post), Region(body)))
        results = list(loop.results)
        self.free(results[WORDS], zero, check=False)
        return results[:WORDS], results[WORDS + 1 :]

    def conditional(
        self,
        kind: SSAValue,
        entry: Entry,
        state: list[SSAValue],
        handler: Handler,
        step: SSAValue,
    ) -> list[SSAValue]:
        types = [s.type for s in state]
        pre = Block(arg_types=types)
        with building_at_end(self.builder, pre):
            same = arith.CmpiOp(kind, self.constant(entry, IndexType()), "eq")
            self.emit(same)
            self.emit(rev.CondOp(same.result))
        then, other = Block(arg_types=types), Block(arg_types=types)
        with building_at_end(self.builder, then):
            self.emit(rev.YieldOp(*handler(step, list(then.args))))
        with building_at_end(self.builder, other):
            self.emit(rev.YieldOp(*other.args))
        op = self.emit(rev.IfOp(state, Region(pre), Region(then), Region(other)))
        return list(op.results)


def forward_sweep(sweep: Sweep, state: list[SSAValue]) -> list[SSAValue]:
    """The schedule up to its first reversal, then the last step taped: its
    tape stays for the reverse sweep."""
    info = sweep.info
    info.trip = sweep.trip()
    cursor, state = sweep.cursor_loop(sweep.start_cursor(), state, sweep.value_handlers(), stop=Entry.REVERSE)
    state = sweep.conditional(
        cursor[0],
        Entry.REVERSE,
        state,
        lambda step, values: sweep.call_step(sweep.iv(step), values, info.tapes),
        cursor[1],
    )
    info.handoff = cursor
    return state


def counting_sweep(sweep: Sweep, loop: rev.WhileOp, state: list[SSAValue]) -> list[SSAValue]:
    """A ``rev.while``'s trip count is known only when it ends, so, as seed
    001 does before bisecting, its steps are counted first: a record of the
    initial state, then every step plain (its tape forgotten) while the
    loop's condition holds.  The reverse sweep restores that record and
    runs the schedule for the count, at the price of one more plain run."""
    sweep.records(anc.SnapshotOp, state)
    index = IndexType()
    types = [*(s.type for s in state), index]
    pre, post = (sweep.condition(region, index) for region in (loop.pre, loop.post))
    body = Block(arg_types=types)
    with building_at_end(sweep.builder, body):
        stepped = sweep.plain_step(None, list(body.args[:-1]))
        counted = sweep.emit(rev.IncOp(body.args[-1])).results[0]
        sweep.emit(rev.YieldOp(*stepped, counted))
    start = sweep.copy(sweep.constant(0, index))
    results = list(sweep.emit(rev.WhileOp([*state, start], pre, post, Region(body))).results)
    results[-1].name_hint = "trip"
    sweep.info.trip = (results[-1], None, None)
    return results[:-1]


@dataclass
class CheckpointAdjointer(Adjointer):
    """The adjoint of ``f`` in which annotated loops run their reverse sweep."""

    loops: dict[Operation, Loop] = field(default_factory=dict[Operation, Loop])

    def apply_rule(self, op: Operation) -> bool:
        if (info := self.loops.get(op)) is not None:
            assert isinstance(op, rev.ForOp | rev.WhileOp)
            self.reverse_sweep(op, info)
            return True
        return super().apply_rule(op)

    def reverse_sweep(self, loop: rev.ForOp | rev.WhileOp, info: Loop) -> None:
        state, captured = self.carried_state(loop, loop.res)
        sweep = Sweep(info, self.builder, self.lookup, loop)
        count = len(loop.res)
        floats = [i for i, r in enumerate(loop.res) if gradient_type(r.type) is not None]

        def reverse(
            iv: SSAValue | None, values: list[SSAValue], gradients: list[SSAValue], tapes: list[SSAValue]
        ) -> tuple[list[SSAValue], list[SSAValue]]:
            """Step ``iv``'s adjoint on its tapes, which it empties."""
            shadowed = [tape for tape in tapes if gradient_type(tape.type) is not None]
            for shadow, tape in zip(info.shadows, shadowed, strict=True):
                sweep.emit(anc.ZeroPadOp(shadow, tape))
            originals = [self.lookup(c) for c in info.captured]
            seeds = [self.zero_gradient_state(t) for c in info.captured if (t := gradient_type(c.type)) is not None]
            memref_shadows = [g for m in info.memrefs if (g := self.gradient(m)) is not None]
            own = iter(info.shadows)
            stack_shadows = [
                self.gradient(s) if s in info.calls else next(own)
                for s in info.stacks
                if gradient_type(s.type) is not None
            ]
            args = [
                *sweep.induction(iv),
                *values,
                *map(sweep.copy, originals),
                *(self.lookup(m) for m in info.memrefs),
                *info.stack_arguments(tapes, self.lookup),
                *gradients,
                *seeds,
                *memref_shadows,
                *stack_shadows,
            ]
            call = sweep.emit(rev.CallOp(adjoint_name(info.step), args))
            results = list(call.results)
            results = results[sweep.free_induction(results, iv) :]
            copies = results[count : count + len(originals)]
            for result, known in zip(copies, originals, strict=True):
                sweep.free(result, known)
            returned = iter(results[count + len(originals) + len(gradients) :])
            for c in info.captured:
                if gradient_type(c.type) is not None:
                    g = next(returned)
                    self.accumulate([(c, g)])
                    self.discard_gradient(g)
            new_gradients = results[count + len(originals) :][: len(gradients)]
            return results[:count], new_gradients

        def unpack(args: list[SSAValue]) -> tuple[list[SSAValue], list[SSAValue]]:
            for c, g in zip(captured, args[count + len(floats) :], strict=True):
                self.bind_gradient(c, g)
            return args[:count], args[count : count + len(floats)]

        def pack(values: list[SSAValue], gradients: list[SSAValue]) -> list[SSAValue]:
            return [*values, *gradients, *(self.gradients[c] for c in captured)]

        def on_values(action: Handler) -> Handler:
            """A handler of an entry that changes no gradient."""

            def handler(step: SSAValue, args: list[SSAValue]) -> list[SSAValue]:
                values, gradients = unpack(args)
                return pack(action(step, values), gradients)

            return handler

        def reverse_entry(step: SSAValue, args: list[SSAValue]) -> list[SSAValue]:
            values, gradients = unpack(args)
            iv = sweep.iv(step)
            return pack(*reverse(iv, sweep.call_step(iv, values, info.tapes), gradients, info.tapes))

        def reverse_last(step: SSAValue, args: list[SSAValue]) -> list[SSAValue]:
            """The last step, taped by the forward sweep."""
            values, gradients = unpack(args)
            return pack(*reverse(sweep.iv(step), values, gradients, info.tapes))

        handlers = {kind: on_values(action) for kind, action in sweep.value_handlers().items()}
        handlers[Entry.REVERSE] = reverse_entry
        if isinstance(loop, rev.WhileOp):
            values, gradients = unpack(state)
            initial = sweep.records(anc.DropOp, sweep.restore(values))
            cursor = sweep.start_cursor()
            state = pack(initial, gradients)
        else:
            cursor = info.handoff
            state = sweep.conditional(cursor[0], Entry.REVERSE, state, reverse_last, cursor[1])
            cursor = sweep.next(cursor)
        cursor, results = sweep.cursor_loop(cursor, state, handlers, stop=Entry.END)
        sweep.end_cursor(cursor)
        if isinstance(loop, rev.WhileOp):
            assert info.trip is not None
            sweep.free(info.trip[0], sweep.constant(0, IndexType()), check=False)
        self.bind_carried(loop.state, results, captured)


def checkpointed_function(
    func: rev.FuncOp, name: str, loops: dict[Operation, Loop], request: AdjointRequest
) -> rev.FuncOp:
    """``@name``: ``func`` (prepared) forward, then its adjoint, with the
    annotated ``loops`` checkpointed.  Signature and results of ``@f.adj``."""
    forward = func.body.block
    carrying = [a for a in forward.args if gradient_type(a.type) is not None]
    block = Block(arg_types=[a.type for a in forward.args] + [gradient_type(a.type) for a in carrying])
    builder = Builder(InsertPoint.at_end(block))
    values: dict[SSAValue, SSAValue] = {}
    for old, new in zip(forward.args, block.args):
        new.name_hint = old.name_hint
        values[old] = new
    stores: list[SSAValue] = []
    for info in loops.values():
        frames = builder.insert(anc.StackAllocOp(anc.StackType(IndexType()))).results[0]
        frames.name_hint = "frames"
        info.frames = frames
        stores.append(frames)
        for element in _store_elements(info):
            store = builder.insert(anc.StackAllocOp(anc.StackType(element))).results[0]
            store.name_hint = "snapshots"
            info.stores[element] = store
            stores.append(store)
        tapes = [stack for stack in info.stacks if stack not in info.calls]
        for stack in tapes:
            tape = builder.insert(anc.StackAllocOp(stack.type)).results[0]
            tape.name_hint = "step_tape"
            info.tapes.append(tape)
            stores.append(tape)
        for stack in tapes:
            if (type := gradient_type(stack.type)) is not None:
                shadow = builder.insert(anc.StackAllocOp(type)).results[0]
                shadow.name_hint = "step_tape_shadow"
                info.shadows.append(shadow)
                stores.append(shadow)
    for op in list(forward.ops)[:-1]:
        if (checkpointed := loops.get(op)) is not None:
            sweep = Sweep(checkpointed, builder, lambda v: values.get(v, v), op)
            state = [values.get(s, s) for s in checkpointed.loop.state]
            if isinstance(op, rev.WhileOp):
                results = counting_sweep(sweep, op, state)
            else:
                results = forward_sweep(sweep, state)
            values.update(zip(op.results, results, strict=True))
        else:
            builder.insert(op.clone(value_mapper=values))
    terminator = forward.last_op
    assert terminator is not None
    outputs = [values.get(v, v) for v in terminator.operands]
    gradient_args = dict(zip(carrying, block.args[len(forward.args) :]))
    for old, stack in values.items():
        if isinstance(old.type, anc.StackType) and old in gradient_args:
            builder.insert(anc.ZeroPadOp(gradient_args[old], stack))
    adjointer = CheckpointAdjointer(func, builder, request=request, loops=loops)
    state_args: list[SSAValue] = []
    for old, new in zip(forward.args, block.args):
        if is_state_type(old.type):
            state_args.append(old)
        else:
            adjointer.bind(old, new)
    final = dict(zip(state_args, terminator.operands, strict=True))
    for old, new in gradient_args.items():
        new.name_hint = f"g_{old.name_hint}" if old.name_hint else None
        adjointer.bind_gradient(final.get(old, old), new)
    results = adjointer.adjoint_body(forward, state_args, outputs)
    gradients = adjointer.lane_gradients(state_args)
    for store in stores:
        adjointer.insert(anc.StackFreeOp(store), like=terminator)
    adjointer.insert(rev.ReturnOp(*results, *gradients), like=terminator)
    function = rev.FuncOp(name, [a.type for a in block.args], Region(block))
    function.attributes.update(derived_attributes(func, name))
    function.attributes[FORGETFUL_ATTR] = UnitAttr()
    function.location = func.location
    return function


def _store_elements(info: Loop) -> list[Attribute]:
    types = [r.type for r in info.loop.res]
    types += [m.type.element_type for m in info.written if isinstance(m.type, MemRefType)]
    types += [s.type.element_type for s in info.calls if isinstance(s.type, anc.StackType)]
    return list(dict.fromkeys(types))


def is_checkpointed_gradient(op: Operation | None) -> bool:
    """Whether ``op`` is a gradient ``ad-checkpoint`` built: a ``rev.func``
    marked as forgetting state, as ``checkpointed_function`` marks the
    gradients it builds (and no other kind of function is)."""
    return isinstance(op, rev.FuncOp) and FORGETFUL_ATTR in op.attributes


@dataclass(frozen=True)
class Plan:
    """What building ``@name.ckpt`` starts from, found before the module
    changes."""

    name: str
    primal: rev.FuncOp
    func: rev.FuncOp
    """``primal``, prepared."""
    marked: list[rev.ForOp | rev.WhileOp]
    """``func``'s checkpointed loops."""

    def holds(self, module: ModuleOp) -> bool:
        """Whether the plan still describes ``module``: its function is the
        op the module has under the name (a requested inverse, which the
        plan built detached, is one whose name is still free) and no
        ``@name.ckpt`` was added since.  A rewrite that leaves the
        ``rev.func``s as they are (``policy=``'s, of ordinary functions)
        keeps a plan; one that replaces the function does not.

        Identity is all this checks, not content: a rewrite that changed a
        planned ``rev.func`` in place would keep a plan of its old body.
        So a plan is kept only across a rewrite that never changes a
        ``rev.func`` in place, which ``policy=``'s does not
        (``make_resumable``, ``keep_ordinary_copies`` and
        ``reversibilize{roots=…}`` change ``func.func``s only)."""
        held = SymbolTable.lookup_symbol(module, self.name)
        current = held is None if self.primal.parent is None else held is self.primal
        return current and SymbolTable.lookup_symbol(module, self.name + CHECKPOINT_SUFFIX) is None


def plan_checkpointed(module: ModuleOp, names: Sequence[str], planned: Sequence[Plan] = ()) -> list[Plan]:
    """The plans of the gradients of the named ``rev.func``s that the
    module lacks (one is there when ``@f.ckpt`` is a gradient an earlier
    run built), every function's loops and the names built for it
    checked: nothing is built, so that every error found here, a mark that
    cannot be checkpointed or a name taken (by any other function,
    ``@f.ckpt`` included), leaves the module as it was.

    ``planned``: plans made earlier, before a rewrite of the module
    (``policy=`` plans the requests before ``make-resumable``), each reused
    while it ``holds``: preparing a function, and inverting one for a
    requested ``@g.inv``, is done once.  The names are checked again, in
    the module as it is now."""
    earlier = {plan.name: plan for plan in planned}
    plans: list[Plan] = []
    for name in dict.fromkeys(names):
        plan = earlier.get(name)
        if plan is None or not plan.holds(module):
            primal = _requested_function(module, name)
            if is_checkpointed_gradient(SymbolTable.lookup_symbol(module, name + CHECKPOINT_SUFFIX)):
                continue
            func = prepare(primal)
            plan = Plan(name, primal, func, checkpointed_loops(func))
        if (clash := name_clash(module, name, len(plan.marked))) is not None:
            raise CheckpointError(clash)
        plans.append(plan)
    return plans


def _requested_function(module: ModuleOp, name: str) -> rev.FuncOp:
    """The ``rev.func @name`` of the module; for ``@g.inv`` the module
    lacks, the inverse of ``@g``, built as every ``ad`` pass builds the
    inverse a request names (``derived.ModuleFunctions.primal``) but not
    inserted, so that planning changes nothing (``generate_checkpointed``
    inserts it).  A request's verifier refuses any other name; a caller
    of ``generate_checkpointed`` gets the same words."""
    primal = SymbolTable.lookup_symbol(module, name)
    if isinstance(primal, rev.FuncOp):
        return primal
    base = SymbolTable.lookup_symbol(module, inverse_name(name))
    if primal is None and name.endswith(INVERSE_SUFFIX) and isinstance(base, rev.FuncOp):
        return derive_inverse(base, name)
    raise CheckpointError(f"@{name} is not a rev.func of the module nor the inverse of one")


def generate_checkpointed(module: ModuleOp, names: Sequence[str], planned: Sequence[Plan] = ()) -> list[rev.FuncOp]:
    """Add ``@f.ckpt`` for each named ``@f`` (unless the module has it),
    its outlined steps ``@f.ckpt.step<j>`` and every adjoint they need
    (``@….adj``).  Every function is planned before the module changes
    (``plan_checkpointed``, which reuses the ``planned`` that still hold);
    building only adds functions, so a failure while building (a construct
    without an adjoint, a name a callee's derived function needs taken) is
    undone by removing them (``revmlir.passes.selection.expand_requests``)."""
    plans = plan_checkpointed(module, names, planned)
    for plan in plans:
        if plan.primal.parent is None:  # a requested inverse, built by the plan
            module.body.block.insert_op_after(plan.primal, SymbolTable.lookup_symbol(module, inverse_name(plan.name)))
    return [_checkpointed_gradient(module, plan) for plan in plans]


def _checkpointed_gradient(module: ModuleOp, plan: Plan) -> rev.FuncOp:
    """Add ``@name.ckpt`` of the ``plan``'s function, its steps and their
    adjoints."""
    target = plan.name + CHECKPOINT_SUFFIX
    loops: dict[Operation, Loop] = {}
    anchor: Operation = plan.primal
    for op in plan.marked:
        step, info = outline_step(op, step_name(target, len(loops)))
        module.body.block.insert_op_after(step, anchor)
        anchor = step
        arguments = len(step.body.block.args) - len(info.stacks)
        frames = [arguments + i for i, s in enumerate(info.stacks) if s in info.calls]
        info.plain = untaped_copy(module, info.step, frames)
        loops[op] = info
    requested: list[str] = []

    def request(callee: str, call: Operation, zeros: frozenset[int]) -> tuple[str, frozenset[int]]:
        requested.append(callee)
        return adjoint_name(callee), frozenset()  # any gradients: the plain adjoint

    function = checkpointed_function(plan.func, target, loops, request)
    module.body.block.insert_op_after(function, plan.primal)
    generate_adjoints(module, [info.step for info in loops.values()] + requested)
    return function
