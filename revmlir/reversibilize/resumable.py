"""Resumable functions: an ordinary function as one loop of primitive steps.

Seed 001 checkpoints any program, with no annotation, by interrupting its
execution after a counted number of primitive steps and resuming it later
from a saved state.  In compiled code this is a rewrite of the function into
a state machine::

    func.func @f(args…) -> results… {
      %pc, slots… = scf.while (%pc = 0, slots… = 0…) {
        scf.condition(%pc != EXIT) %pc, slots…
      } do {
        // dispatch on %pc (a binary tree of scf.if): run one segment,
        // yield the next program point and the updated slots
      } {checkpoint = #ad.schedule<…>}
      func.return result slots…
    }

A *segment* is a straight-line run of the function's code between two
control points: the start of a loop body, the code after a loop, the
branches of an ``scf.if`` that contains a loop or a call and the code after
it, a call within a recursive cycle and its return (below).  A loop's test ends both the segment before the loop and its body, so
an iteration is one step.  An ``scf.if``
with only straight-line code inside stays whole in its segment.  Every value
that one segment computes and another reads (loop-carried values, induction
variables, results of flattened loops, branches and calls, and temporaries
live across a control point) is a *slot* of the loop state; constants are
recomputed where they are read, and the entry's arguments are read where
they are (the loop body captures them).  The loop state is therefore the
whole resumable state of the function: program point, live values; the
arrays it writes are its memref arguments, which ``ad-checkpoint``
snapshots with the state.

Calls are inlined: the callee's body becomes segments of the machine, its
scalar parameters slots, its array parameters the caller's arrays, and its
return a jump back to the point after the call.  So a step is a step of any
callee too.

Recursion has an explicit call stack instead.  The functions of a
recursive cycle of the call graph (``revmlir.call_graph``) are
laid out once, as segments of their own; a call of one of them ends its
segment by pushing a *frame* on local frame stacks (the caller's values live
across the call, then the program point after it) and jumps to the callee's
entry with the arguments in its parameters' slots; the callee's return ends
its segment by popping the program point to go back to (the program point is
then dynamic: one of the points after its calls), and the segment after the
call pops the caller's values again and reads the results from the callee's
result slots.  Which values a frame saves is liveness within the caller,
with the call as a jump to the code after it, less the integer
parameters every call within the cycle passes on unchanged (their slots
hold one value in every activation); a function called from one place
only returns there, with no point on the frames.  Every function of the cycle
keeps one slot per value whatever the depth, so the loop state stays small
and the frames grow with the depth; array parameters must be the same
arrays at every call.  The frame stacks are part of the state: a snapshot
holds their live part (``anc.snapshot``), the steps push and pop them like
any state update, and their float values' gradients live on their shadow.

The loop is then checkpointed like a marked ``scf.while``:
``reversibilize{mode=tape}`` makes it a ``rev.while`` with one tape per step
and ``ad-checkpoint`` counts its steps in a first plain run, then reverses
it under the schedule, so a step of the schedule is a primitive step
anywhere in the program (docs/checkpointing.md, "Checkpointing anywhere").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith, cf, func, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from revmlir.ad.checkpointed import CHECKPOINT_ATTR, SPLIT_ATTR
from revmlir.call_graph import recursive_functions
from revmlir.dialects import anc
from revmlir.dialects.ad import ScheduleAttr
from revmlir.errors import describe_op
from revmlir.inversion import building_at_end
from revmlir.reachability import reached_among
from revmlir.reversibilize.analysis import ReversibilizeError, check_function, is_scalar
from revmlir.reversibilize.frames import FrameStacks
from revmlir.reversibilize.ordinary_copies import (
    changed_by_copies,
    erase_unused_copies,
    keep_ordinary_copies,
    written_name,
)
from revmlir.reversibilize.stepping import positive, stepped
from revmlir.safety import MAX_FRAME_DEPTH, RECURSION_TOO_DEEP

_STRUCTURED = (scf.ForOp, scf.WhileOp, func.CallOp)


def _error(op: Operation, why: str) -> ReversibilizeError:
    return ReversibilizeError(f"{describe_op(op)}: a resumable function {why}")


_Side = Callable[[Builder], list[SSAValue]]


@dataclass
class Jump:
    """Go to segment ``target``, assigning ``moves`` (slot value ← value,
    all at once, as a loop's yield does)."""

    target: int
    moves: list[tuple[SSAValue, SSAValue]] = field(default_factory=list[tuple[SSAValue, SSAValue]])


@dataclass
class Branch:
    condition: SSAValue
    then: Jump
    otherwise: Jump


@dataclass
class Bind:
    """A jump merged into the segment it ends (its target has no other
    entry): the targets take the values there, all at once."""

    moves: list[tuple[SSAValue, SSAValue]]


EXIT = -1
"""The target of the entry's return, numbered once the segments are final."""


@dataclass
class PushPoint:
    """Push program point ``target``, the segment after a call within a
    recursive cycle, on the ``index`` frame stack ``stack``: where the
    callee's return goes."""

    stack: SSAValue
    target: int


@dataclass
class Return:
    """The return of a function of a recursive cycle: go to the program
    point ``pc`` popped from the frame stack, one of ``points`` (the
    segments after the calls of the function), assigning ``moves`` (its
    results into its result slots).  A function called from one place
    only returns there: ``pc`` is None and no frame holds the point."""

    pc: SSAValue | None
    points: list[int]
    moves: list[tuple[SSAValue, SSAValue]]


@dataclass
class Guard:
    """What the body of an ``scf.for`` with no loop or call inside (one
    segment, jumping back to itself) is entered on: ``iv < ub`` of its
    induction variable, tested on the slots before it runs; leaving it
    assigns ``moves`` from its carried values."""

    iv: SSAValue
    ub: SSAValue
    moves: list[tuple[SSAValue, SSAValue]]


@dataclass
class Segment:
    """One primitive step: ops run in order, then an exit."""

    ops: list[Operation | Bind | PushPoint] = field(default_factory=list[Operation | Bind | PushPoint])
    exit: Jump | Branch | Return | None = None
    guard: Guard | None = None

    def jumps(self) -> list[Jump]:
        """The jumps to a known program point (a return's is popped)."""
        exit = self.exit
        return [exit] if isinstance(exit, Jump) else [exit.then, exit.otherwise] if isinstance(exit, Branch) else []

    def targets(self) -> list[tuple[int, list[tuple[SSAValue, SSAValue]]]]:
        """Every program point the exit may go to, with its moves."""
        if isinstance(self.exit, Return):
            return [(point, self.exit.moves) for point in self.exit.points]
        return [(jump.target, jump.moves) for jump in self.jumps()]

    def defined(self) -> set[SSAValue]:
        """The values this segment computes (or binds)."""
        found: set[SSAValue] = set()
        for item in self.ops:
            if isinstance(item, Operation):
                found.update(item.results)
            elif isinstance(item, Bind):
                found.update(t for t, _ in item.moves)
        return found

    def reads(self) -> Iterator[SSAValue]:
        """The values this segment reads from before it: operands of its
        ops (nested ones included), bound values, its exit's condition and
        moved values."""
        inside: set[SSAValue] = set()
        for item in self.ops:
            if isinstance(item, PushPoint):
                continue
            if isinstance(item, Bind):
                yield from (v for _, v in item.moves if v not in inside)
                inside.update(t for t, _ in item.moves)
                continue
            yield from (v for v in _outer_operands(item) if v not in inside)
            inside.update(item.results)
        if isinstance(self.exit, Branch) and self.exit.condition not in inside:
            yield self.exit.condition
        if isinstance(self.exit, Return):
            popped = [] if self.exit.pc is None else [self.exit.pc]
            yield from (v for v in (*popped, *(v for _, v in self.exit.moves)) if v not in inside)
        yield from (v for jump in self.jumps() for _, v in jump.moves if v not in inside)


def _merged(segments: list[Segment], control: set[int]) -> list[Segment]:
    """The segments with every jump to a segment that has no other entry
    merged into it (a call's body into the call, the code after a call or a
    loop into what precedes it), renumbered; fewer, longer steps.  The
    ``control`` segments, entries of functions of a recursive cycle, stay
    steps of their own: a call within a cycle ends a step, as its return
    does."""
    entries = [0] * len(segments)
    entries[0] = 1
    for number in control:
        entries[number] += 1
    for segment in segments:
        for jump in segment.jumps():
            if jump.target != EXIT:
                entries[jump.target] += 1
    gone: set[int] = set()
    for number, segment in enumerate(segments):
        if number in gone:
            continue
        while (
            isinstance(segment.exit, Jump)
            and segment.exit.target not in (EXIT, number)
            and entries[segment.exit.target] == 1
        ):
            target = segment.exit.target
            following = segments[target]
            if segment.exit.moves:
                segment.ops.append(Bind(segment.exit.moves))
            segment.ops += following.ops
            segment.exit = following.exit
            gone.add(target)
    kept = [n for n in range(len(segments)) if n not in gone]
    renumbered = {old: new for new, old in enumerate(kept)}
    for old in kept:
        segment = segments[old]
        for jump in segment.jumps():
            jump.target = renumbered.get(jump.target, len(kept))
        if isinstance(segment.exit, Return):
            segment.exit.points = [renumbered[point] for point in segment.exit.points]
        for item in segment.ops:
            if isinstance(item, PushPoint):
                item.target = renumbered[item.target]
    return [segments[old] for old in kept]


def _is_straight(op: Operation) -> bool:
    """Ops that stay whole inside a segment: no loop and no call inside."""
    return not any(isinstance(inner, _STRUCTURED) for inner in op.walk())


@dataclass
class _Layout:
    """A function of a recursive cycle, laid out once: its entry segment,
    scalar parameters (slots the calls assign), the arrays its array
    parameters are, the slots its return fills, the segment its return
    ends and that return's op, and the segments after its calls, where
    the return may go."""

    entry: int
    parameters: list[SSAValue]
    arrays: list[SSAValue]
    results: list[SSAValue]
    returned: Operation
    end: int = 0
    points: list[int] = field(default_factory=list[int])


@dataclass(frozen=True)
class _FrameCall:
    """A call of a function of a recursive cycle: segment ``at`` ends with
    it, the code after it starts segment ``after`` with its ``results``;
    it moves its scalar arguments into the callee's parameters
    (``moves``), from the activation of ``caller``, a function laid out
    once, or (None) from the entry's own code."""

    at: int
    after: int
    results: tuple[SSAValue, ...]
    location: Operation
    moves: tuple[tuple[SSAValue, SSAValue], ...]
    caller: str | None


@dataclass
class _Flattener:
    """Builds the segments of one function, inlining its callees, or, for
    those of a recursive cycle, calling their one layout through frames."""

    functions: dict[str, func.FuncOp]
    recursive: set[str] = field(default_factory=set[str])
    segments: list[Segment] = field(default_factory=list[Segment])
    originals: list[Operation] = field(default_factory=list[Operation])
    """The ops moved into segments (their clones run), to be dropped."""
    frames: FrameStacks = field(default_factory=FrameStacks)
    layouts: dict[str, _Layout] = field(default_factory=dict[str, _Layout])
    calls: list[_FrameCall] = field(default_factory=list[_FrameCall])
    depth: SSAValue = field(default_factory=lambda: _placeholder(IndexType(), "depth"))
    """The frames held, in a slot of its own (zero when the machine starts):
    a call beyond ``MAX_FRAME_DEPTH`` stops the run there."""
    within: str | None = None
    """The function of a recursive cycle whose layout is being built (its
    calls are made from its activations), or None: the entry's code."""

    def new(self) -> int:
        self.segments.append(Segment())
        return len(self.segments) - 1

    def close(self, at: int, exit: Jump | Branch | Return) -> None:
        self.segments[at].exit = exit

    def block(self, block: Block, at: int) -> int:
        """Append ``block``'s ops (not its terminator) from segment ``at``;
        the segment open at the end."""
        for op in list(block.ops)[:-1]:
            op.detach()
            self.originals.append(op)
            if _is_straight(op):
                self.segments[at].ops.append(op)
            elif isinstance(op, scf.ForOp):
                at = self.for_(op, at)
            elif isinstance(op, scf.WhileOp):
                at = self.while_(op, at)
            elif isinstance(op, scf.IfOp):
                at = self.if_(op, at)
            else:
                assert isinstance(op, func.CallOp)
                at = self.call(op, at)
        return at

    def for_(self, op: scf.ForOp, at: int) -> int:
        """The test ``iv < ub`` ends the segment before the loop and the
        end of the body (after stepping ``iv``): it enters the body or
        leaves with the carried values as results, so an iteration is one
        step."""
        body = op.body.block
        iv, carried = body.args[0], list(body.args[1:])
        first, after = self.new(), self.new()
        terminator = body.last_op
        assert isinstance(terminator, scf.YieldOp)

        def test(segment: int, start: SSAValue, values: Sequence[SSAValue]) -> None:
            compare = arith.CmpiOp(start, op.ub, "slt")
            compare.location = op.location
            self.segments[segment].ops.append(compare)
            self.close(
                segment,
                Branch(
                    compare.result,
                    Jump(first, [(iv, start), *zip(carried, values, strict=True)]),
                    Jump(after, list(zip(op.results, values, strict=True))),
                ),
            )

        self.segments[at].ops += positive(op.step, op)
        test(at, op.lb, op.iter_args)
        end = self.block(body, first)
        next_iv, stepping = stepped(iv, op.step, op)
        self.segments[end].ops += stepping
        test(end, next_iv, terminator.operands)
        if end == first:
            self.segments[first].guard = Guard(iv, op.ub, list(zip(op.results, carried, strict=True)))
        return after

    def while_(self, op: scf.WhileOp, at: int) -> int:
        """The condition (expressions only, by ``check_function``) ends the
        segment before the loop and, recomputed, the end of the body."""
        before, after_block = op.before_region.block, op.after_region.block
        condition = before.last_op
        assert isinstance(condition, scf.ConditionOp)
        first, after = self.new(), self.new()
        expressions = list(before.ops)[:-1]

        def test(segment: int, values: Sequence[SSAValue]) -> None:
            mapping: dict[SSAValue, SSAValue] = {}
            ops = self.segments[segment].ops
            ops.append(Bind(list(zip(before.args, values, strict=True))))
            ops += [op.clone(value_mapper=mapping) for op in expressions]
            forwarded = [mapping.get(v, v) for v in condition.args]
            self.close(
                segment,
                Branch(
                    mapping.get(condition.condition, condition.condition),
                    Jump(first, list(zip(after_block.args, forwarded, strict=True))),
                    Jump(after, list(zip(op.results, forwarded, strict=True))),
                ),
            )

        test(at, op.arguments)
        terminator = after_block.last_op
        assert isinstance(terminator, scf.YieldOp)
        end = self.block(after_block, first)
        test(end, terminator.operands)
        return after

    def if_(self, op: scf.IfOp, at: int) -> int:
        join = self.new()
        sides: list[Jump] = []
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                sides.append(Jump(join))
                continue
            start = self.new()
            terminator = region.block.last_op
            assert isinstance(terminator, scf.YieldOp)
            end = self.block(region.block, start)
            self.close(end, Jump(join, list(zip(op.results, terminator.operands, strict=True))))
            sides.append(Jump(start))
        self.close(at, Branch(op.cond, *sides))
        return join

    def call(self, op: func.CallOp, at: int) -> int:
        """The callee's body, inlined: scalar parameters are slots assigned
        at the call, array parameters the caller's arrays, its return a
        jump to the point after the call.  A callee of a recursive cycle is
        called through frames instead (``frame_call``)."""
        name = op.callee.string_value()
        if name in self.recursive:
            return self.frame_call(name, list(op.arguments), list(op.results), at, op)
        callee = self.functions[name].clone()
        body = callee.body.block
        moves: list[tuple[SSAValue, SSAValue]] = []
        for parameter, argument in zip(body.args, op.arguments, strict=True):
            if is_scalar(parameter.type):
                moves.append((parameter, argument))
            else:
                parameter.replace_all_uses_with(argument)
        entry, after = self.new(), self.new()
        self.close(at, Jump(entry, moves))
        end = self.block(body, entry)
        returned = body.last_op
        assert isinstance(returned, func.ReturnOp)
        self.close(end, Jump(after, list(zip(op.results, returned.arguments, strict=True))))
        return after

    def frame_call(
        self, name: str, arguments: Sequence[SSAValue], results: Sequence[SSAValue], at: int, where: Operation
    ) -> int:
        """A call of ``@name``'s one layout: the scalar arguments move into
        its parameters and segment ``at`` jumps to its entry (the frame,
        pushed at the end of ``at``, is added by ``save_frames`` once the
        values live across the call are known); the segment after the call
        takes the results from the callee's result slots."""
        layout = self.layout(name, [a for a in arguments if not is_scalar(a.type)], where)
        moves: list[tuple[SSAValue, SSAValue]] = []
        arrays = iter(layout.arrays)
        for number, (parameter, argument) in enumerate(zip(layout.parameters, arguments, strict=True)):
            if is_scalar(argument.type):
                moves.append((parameter, argument))
            elif argument != next(arrays):
                callee = written_name(self.functions[name])
                raise _error(
                    where,
                    f"cannot pass another array as argument #{number} of @{callee}: a function of a "
                    "recursive cycle is laid out once, so each array parameter is one array at every call",
                )
        deeper = self.counted(self.depth, arith.AddiOp, where)
        limit = arith.ConstantOp(IntegerAttr(MAX_FRAME_DEPTH, IndexType()))
        allowed = arith.CmpiOp(deeper, limit.result, "ule")
        check = cf.AssertOp(allowed.result, RECURSION_TOO_DEEP)
        for op in (limit, allowed, check):
            op.location = where.location
        self.fresh([limit, allowed, check])
        self.segments[at].ops += [deeper.owner, limit, allowed, check]
        after = self.new()
        self.close(at, Jump(layout.entry, [*moves, (self.depth, deeper)]))
        layout.points.append(after)
        self.segments[after].ops.append(Bind(list(zip(results, layout.results, strict=True))))
        self.calls.append(_FrameCall(at, after, tuple(results), where, tuple(moves), self.within))
        return after

    def layout(self, name: str, arrays: list[SSAValue], where: Operation) -> _Layout:
        """``@name`` laid out once (at its first call, whose arrays its
        array parameters become): its body from its entry segment, its
        return a ``Return`` that pops the program point to go back to."""
        if (known := self.layouts.get(name)) is not None:
            return known
        callee = self.functions[name].clone()
        body = callee.body.block
        returned = body.last_op
        assert isinstance(returned, func.ReturnOp)
        results = [_placeholder(v.type, f"{name}_result{number}") for number, v in enumerate(returned.arguments)]
        layout = self.layouts[name] = _Layout(self.new(), list(body.args), arrays, results, returned)
        arrays_left = iter(arrays)
        for parameter in body.args:
            if not is_scalar(parameter.type):
                parameter.replace_all_uses_with(next(arrays_left))
        outer, self.within = self.within, name
        layout.end = self.block(body, layout.entry)
        self.within = outer
        shallower = self.counted(self.depth, arith.SubiOp, returned)
        self.segments[layout.end].ops.append(shallower.owner)
        moves = [*zip(results, returned.arguments, strict=True), (self.depth, shallower)]
        self.close(layout.end, Return(None, layout.points, moves))
        return layout

    def counted(self, depth: SSAValue, step: type[arith.AddiOp | arith.SubiOp], where: Operation) -> SSAValue:
        """``depth`` one frame deeper or shallower (its op left to place:
        a call appends it with its check)."""
        one = arith.ConstantOp(IntegerAttr(1, IndexType()))
        op = step(depth, one.result)
        for each in (one, op):
            each.location = where.location
        self.fresh([one, op])
        return op.result

    def placeholders(self) -> set[SSAValue]:
        """The values of the machine itself, not of an activation (never
        saved in a frame): the result slots of the functions of recursive
        cycles and the depth."""
        return {self.depth, *(r for layout in self.layouts.values() for r in layout.results)}

    def fresh(self, ops: Sequence[Operation]) -> None:
        """Ops made for the machine, not moved from the function: they run
        as clones too, and are dropped with the originals."""
        self.originals.extend(ops)

    def save_frames(self, carried: Callable[[SSAValue], bool]) -> None:
        """Each call within a recursive cycle saves what the caller needs
        after it: the values live at the start of the segment after the
        call (liveness within the caller, the call a jump to that segment)
        but the parameters every call passes on unchanged
        (``unchanged_parameters``), pushed at the end of the call's segment
        with the point to return to where the callee has several, and
        popped in that order reversed where the segment after the call
        starts; the callee's return pops the point."""
        for layout in self.layouts.values():
            if len(layout.points) > 1:
                self.pop_point(layout)
        placeholders = self.placeholders() | self.unchanged_parameters()
        after_call = {call.at: call.after for call in self.calls}

        def targets(number: int) -> list[tuple[int, list[tuple[SSAValue, SSAValue]]]]:
            segment = self.segments[number]
            if number in after_call:
                return [(after_call[number], [])]
            return [] if isinstance(segment.exit, Return) else segment.targets()

        live = _liveness(self.segments, targets, lambda v: carried(v) and v not in placeholders, set())
        order = _program_order(self.segments)
        for call in self.calls:
            saved = sorted(live[call.after] - set(call.results), key=order.__getitem__)
            pushes = [op for value in saved for op in self.frames.push(value)]
            restores: list[Operation | Bind] = []
            for value in reversed(saved):
                ops, popped = self.frames.pop(value.type)
                restores += [*ops, Bind([(value, popped)])]
            fresh = pushes + [op for op in restores if isinstance(op, Operation)]
            for op in fresh:
                op.location = call.location.location
            self.fresh(fresh)
            self.segments[call.at].ops += pushes
            if isinstance(exit := self.segments[self.layout_called(call).end].exit, Return) and exit.pc is not None:
                self.segments[call.at].ops.append(PushPoint(self.frames.stack(IndexType()), call.after))
            self.segments[call.after].ops[:0] = restores

    def pop_point(self, layout: _Layout) -> None:
        """``layout``'s return goes to the point its caller pushed, popped
        before the depth's decrement (the end segment's last op)."""
        ops, pc = self.frames.pop(IndexType())
        for op in ops:
            op.location = layout.returned.location
        self.fresh(ops)
        end = self.segments[layout.end]
        end.ops[-1:-1] = ops
        assert isinstance(end.exit, Return)
        end.exit.pc = pc

    def layout_called(self, call: _FrameCall) -> _Layout:
        return next(layout for layout in self.layouts.values() if call.after in layout.points)

    def unchanged_parameters(self) -> set[SSAValue]:
        """The integer parameters that hold one value through every
        activation of their cycle, so no frame saves them: each call made
        from an activation of a laid-out function passes, for such a
        parameter, a parameter of its caller of the same class (parameters
        joined by the calls passing one as the other), and a class has one
        parameter per function.  A class's parameters are then written
        only with its value once the entry's code has called into the
        cycle, whose activations end before that code runs again.

        Floats stay in the frames: the shadow of a float's frame entry is
        its activation's own gradient, added into the caller's where the
        reversed call returns, as a native call's adjoint adds it, so the
        gradient sums in the order of the gradient without checkpoints,
        bit for bit; one slot for every activation would sum in another."""
        parameters = {
            p: n
            for n, p in enumerate(
                p for layout in self.layouts.values() for p in layout.parameters if not isinstance(p.type, AnyFloat)
            )
        }
        parent = list(range(len(parameters)))

        def root(n: int) -> int:
            while parent[n] != n:
                parent[n] = parent[parent[n]]
                n = parent[n]
            return n

        changed: set[SSAValue] = set()
        for call in self.calls:
            if call.caller is None:
                continue
            own = set(self.layouts[call.caller].parameters)
            for parameter, argument in call.moves:
                if parameter not in parameters:
                    continue
                if argument in own:
                    parent[root(parameters[parameter])] = root(parameters[argument])
                else:
                    changed.add(parameter)
        classes: dict[int, list[SSAValue]] = {}
        for parameter, number in parameters.items():
            classes.setdefault(root(number), []).append(parameter)
        unchanged: set[SSAValue] = set()
        for members in classes.values():
            owners = [name for name, layout in self.layouts.items() for p in layout.parameters if p in members]
            if not changed.intersection(members) and len(owners) == len(set(owners)):
                unchanged.update(members)
        return unchanged


def _liveness(
    segments: Sequence[Segment],
    targets: Callable[[int], list[tuple[int, list[tuple[SSAValue, SSAValue]]]]],
    carried: Callable[[SSAValue], bool],
    end: set[SSAValue],
) -> list[set[SSAValue]]:
    """Per segment (and the end, live ``end``), the ``carried`` values
    live at its start, through the exits ``targets`` gives."""
    defined = [segment.defined() for segment in segments]
    reads = [{v for v in segment.reads() if carried(v)} for segment in segments]
    live: list[set[SSAValue]] = [set() for _ in segments] + [end]
    changed = True
    while changed:
        changed = False
        for number in reversed(range(len(segments))):
            out: set[SSAValue] = set()
            for target, moves in targets(number):
                out |= live[target] - {t for t, _ in moves}
            found = reads[number] | (out - defined[number])
            if found != live[number]:
                live[number], changed = found, True
    return live


def _program_order(segments: Sequence[Segment]) -> dict[SSAValue, int]:
    """The values the segments define, numbered in program order: a stable
    order for the values a frame saves and the slots, where liveness gives
    sets (whose order is the values' addresses)."""
    order: dict[SSAValue, int] = {}
    for value in _appearances(segments):
        order.setdefault(value, len(order))
    return order


def _appearances(segments: Sequence[Segment]) -> Iterator[SSAValue]:
    """The values the segments define, in program order."""
    for segment in segments:
        for item in segment.ops:
            if isinstance(item, Operation):
                for nested in item.walk():
                    yield from (a for r in nested.regions for b in r.blocks for a in b.args)
                    yield from nested.results
            elif isinstance(item, Bind):
                yield from (t for t, _ in item.moves)
        for _, moves in segment.targets():
            yield from (t for t, _ in moves)


MACHINE_LOOPS = 1
"""How many checkpointed loops a machine has: one, the machine's loop (the
marks inside the function are dropped), so ``ad-checkpoint`` knows what it
will build for a function before it rewrites the function.  Each machine
built is checked to have that many (``_make_machine``)."""


def make_resumable(module: ModuleOp, names: Sequence[str], schedule: ScheduleAttr, base: int = 1) -> list[scf.WhileOp]:
    """Rewrite each ``@name`` of ``module`` into its state machine (module
    docstring), the loops marked with ``schedule``.  Each iteration runs
    ``base`` segments (fewer at the end): the schedule's base case, reversed
    store-all on one tape, and fewer, cheaper counted steps.  Loop marks inside
    ``@name`` (``rv.checkpointed``) are dropped: the machine's steps are
    finer than any loop's iterations.  The other functions stay.

    The input is checked once, before any rewrite, and every machine lays
    out its callees as the input has them: one of the names that another
    calls is laid out from its source, not from its machine, whose frames
    are this rewrite's own (``check_function`` refuses frame ops in the
    input).  Only what the machines lay out is checked, the names and the
    functions they call: a function none of them reaches may be a machine
    an earlier run wrote, with frames of its own.  The other functions
    that call a name call a copy of it as written instead
    (``revmlir.reversibilize.ordinary_copies``), so a later run may make
    them resumable in turn; a copy nothing calls any more is erased."""
    targets = [_defined(module, name) for name in dict.fromkeys(names)]
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration}
    laid_out = reached_among(functions, names)
    for name in laid_out:
        check_function(functions[name], functions, frames=False)
    sources = {name: functions[name].clone() for name in laid_out}
    recursive = recursive_functions(sources.values())
    keep_ordinary_copies(module, names)
    machines = [_make_machine(function, sources, recursive, schedule, base) for function in targets]
    erase_unused_copies(module)
    return machines


def rewritten_functions(module: ModuleOp, names: Sequence[str]) -> list[func.FuncOp]:
    """The functions of ``module`` that ``make_resumable(module, names)``
    and the reversibilization of its machines (``reversibilize(module,
    "tape", names)``) may change, replace or erase, in module order: the
    ``names``, and what ``keep_ordinary_copies`` redirects or erases
    (``changed_by_copies``).  Not their callees: a machine lays them out
    from copies (``sources``) and calls none, so reversibilizing it
    converts no other function.  Every other function both leave as it
    is, the same op."""
    changed = set(changed_by_copies(module, names))
    return [
        f
        for f in module.ops
        if isinstance(f, func.FuncOp) and not f.is_declaration and (f.sym_name.data in names or f in changed)
    ]


def _defined(module: ModuleOp, name: str) -> func.FuncOp:
    function = SymbolTable.lookup_symbol(module, name)
    if not isinstance(function, func.FuncOp) or function.is_declaration:
        where = f"{describe_op(function)}: " if function is not None else ""
        raise ReversibilizeError(
            f"{where}@{name} is not a function defined in the module: "
            "only func.func functions with a body can be made resumable"
        )
    return function


def _make_machine(
    function: func.FuncOp, sources: dict[str, func.FuncOp], recursive: set[str], schedule: ScheduleAttr, base: int
) -> scf.WhileOp:
    """``function``'s machine, its callees from ``sources``."""
    name = function.sym_name.data
    body = function.body.block
    returned = body.last_op
    assert isinstance(returned, func.ReturnOp)
    flattener = _Flattener(sources, recursive)
    results = [arith.ConstantOp(_zero_attr(v.type)).result for v in returned.arguments]
    for result, value in zip(results, returned.arguments, strict=True):
        result.name_hint = value.name_hint or "result"
    if name in flattener.recursive:
        end = flattener.frame_call(name, list(body.args), results, flattener.new(), function)
        flattener.close(end, Jump(EXIT))
        for op in list(body.ops)[:-1]:
            op.detach()
            flattener.originals.append(op)
    else:
        end = flattener.block(body, flattener.new())
        flattener.close(end, Jump(EXIT, list(zip(results, returned.arguments, strict=True))))
    arguments = set(body.args)
    flattener.save_frames(lambda v: _carried(v, arguments))
    segments = _merged(flattener.segments, {layout.entry for layout in flattener.layouts.values()})
    machine = _Machine(segments, len(segments), arguments, flattener.placeholders())
    loop = machine.build(schedule, base, returned, results)
    _allocate_frames(flattener.frames, loop, returned)
    for original in flattener.originals:
        for op in original.walk():
            op.drop_all_references()
    # a whole walk of the laid-out machine: only where assertions run
    assert sum(CHECKPOINT_ATTR in op.attributes for op in function.walk()) == MACHINE_LOOPS, (
        "a machine has another number of checkpointed loops than MACHINE_LOOPS"
    )
    return loop


def _allocate_frames(frames: FrameStacks, loop: scf.WhileOp, returned: func.ReturnOp) -> None:
    """The frame stacks, allocated before the machine loop and freed,
    checked empty (every call returned), after it."""
    block = loop.parent_block()
    assert block is not None
    first = block.first_op
    assert first is not None
    for alloc in frames.allocations:
        alloc.location = loop.location
        block.insert_op_before(alloc, first)
    final = block.last_op
    assert final is not None
    for stack in frames.stacks.values():
        free = anc.StackFreeOp(stack)
        free.location = returned.location
        block.insert_op_before(free, final)


def _carried(value: SSAValue, arguments: set[SSAValue]) -> bool:
    """Whether ``value`` is read from a slot where it is not computed:
    constants are recomputed, the entry's arguments and the frame stacks
    read directly."""
    if value in arguments or _constant(value) is not None or isinstance(value.type, anc.StackType):
        return False
    if not is_scalar(value.type):
        owner = value.owner
        where = owner if isinstance(owner, Operation) else owner.parent_op()
        assert where is not None
        raise _error(where, f"cannot carry a value of type {value.type}")
    return True


def _placeholder(type: Attribute, name: str) -> SSAValue:
    """A value that stands for a slot of the machine itself (a constant,
    never placed: the machine reads the slot)."""
    value = arith.ConstantOp(_zero_attr(type)).result
    value.name_hint = name
    return value


def _zero_attr(type: Attribute) -> Attribute:
    return FloatAttr(0.0, type) if isinstance(type, AnyFloat) else IntegerAttr(0, type)


@dataclass
class _Machine:
    """Emits the ``scf.while`` of a function's segments."""

    segments: list[Segment]
    exit: int
    arguments: set[SSAValue]
    """The entry's arguments, read where they are: the loop captures them."""
    placeholders: set[SSAValue]
    """The result slots of the functions of recursive cycles and the depth
    (constants that stand for them, carried all the same)."""
    slots: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    types: list[Attribute] = field(default_factory=list[Attribute])
    names: list[str | None] = field(default_factory=list[str | None])
    live: list[list[SSAValue]] = field(default_factory=list[list[SSAValue]])
    """Per segment (and the end), the values live at its start, in program
    order."""

    def build(
        self, schedule: ScheduleAttr, base: int, returned: func.ReturnOp, results: Sequence[SSAValue]
    ) -> scf.WhileOp:
        """The loop, in place of the function's body before ``returned``,
        which then returns the result slots."""
        self._place_values(results)
        index = IndexType()
        types = [index, *self.types]
        builder = Builder(InsertPoint.before(returned))
        initial = [builder.insert(arith.ConstantOp(_zero_attr(t))).results[0] for t in types]
        before, body = Block(arg_types=types), Block(arg_types=types)
        names = ["pc", *self.names]
        for block in (before, body):
            for argument, name in zip(block.args, names, strict=True):
                argument.name_hint = name
        with building_at_end(builder, before):
            builder.insert(scf.ConditionOp(self._running(builder, before.args[0]), *before.args))
        with building_at_end(builder, body):
            builder.insert(scf.YieldOp(*self._steps(builder, list(body.args), base)))
        loop = builder.insert(scf.WhileOp(initial, types, Region(before), Region(body)))
        loop.location = returned.location
        loop.attributes[CHECKPOINT_ATTR] = schedule
        for op in loop.walk():
            if op is not loop:
                op.attributes.pop(CHECKPOINT_ATTR, None)
            op.attributes.pop(SPLIT_ATTR, None)
        final = func.ReturnOp(*(loop.results[1 + self.slots[v]] for v in results))
        final.location = returned.location
        Rewriter.replace_op(returned, final)
        return loop

    def _place_values(self, results: Sequence[SSAValue]) -> None:
        """Slots for the values live at the start of some segment (or at
        the end: the results), shared by values never live together."""
        live = _liveness(self.segments, lambda number: self.segments[number].targets(), self._carried, set(results))
        order = _program_order(self.segments)
        self.live = [sorted(values, key=order.__getitem__) for values in live]
        conflicts: dict[SSAValue, set[SSAValue]] = {}
        for values in self.live:
            for value in values:
                conflicts.setdefault(value, set()).update(v for v in values if v is not value)
        types: list[Attribute] = []
        for value, neighbours in conflicts.items():
            taken = {self.slots[v] for v in neighbours if v in self.slots}
            free = [n for n, t in enumerate(types) if t == value.type and n not in taken]
            if not free:
                types.append(value.type)
                self.names.append(value.name_hint)
            self.slots[value] = free[0] if free else len(types) - 1
        self.types = types

    def _carried(self, value: SSAValue) -> bool:
        return value in self.placeholders or _carried(value, self.arguments)

    def _running(self, builder: Builder, pc: SSAValue) -> SSAValue:
        stop = builder.insert(arith.ConstantOp(IntegerAttr(self.exit, IndexType()))).results[0]
        return builder.insert(arith.CmpiOp(pc, stop, "ne")).results[0]

    def _steps(self, builder: Builder, state: list[SSAValue], base: int) -> list[SSAValue]:
        """Up to ``base`` segments from ``state``: one, or an inner
        ``scf.while`` counting them (``_Group``)."""
        if base == 1:
            return self._dispatch(builder, state, 0, self.exit, None)
        index = IndexType()
        types = [index, *(v.type for v in state)]
        before, body = Block(arg_types=types), Block(arg_types=types)
        with building_at_end(builder, before):
            limit = builder.insert(arith.ConstantOp(IntegerAttr(base, index))).results[0]
            within = builder.insert(arith.CmpiOp(before.args[0], limit, "slt")).results[0]
            running = self._running(builder, before.args[1])
            going = builder.insert(arith.AndIOp(within, running)).results[0]
            builder.insert(scf.ConditionOp(going, *before.args))
        with building_at_end(builder, body):
            limit = builder.insert(arith.ConstantOp(IntegerAttr(base, index))).results[0]
            remaining = builder.insert(arith.SubiOp(limit, body.args[0])).results[0]
            group = _Group(body.args[0], remaining)
            *stepped, counted = self._dispatch(builder, list(body.args[1:]), 0, self.exit, group)
            builder.insert(scf.YieldOp(counted, *stepped))
        start = builder.insert(arith.ConstantOp(IntegerAttr(0, index))).results[0]
        loop = builder.insert(scf.WhileOp([start, *state], types, Region(before), Region(body)))
        return list(loop.results[1:])

    def _dispatch(
        self, builder: Builder, state: list[SSAValue], low: int, high: int, group: _Group | None
    ) -> list[SSAValue]:
        """The next state for program points ``low ≤ pc < high`` (and, in a
        group, the segments counted so far after it): a binary tree of
        ``scf.if``, one segment per leaf."""
        if high - low == 1:
            return self._segment(builder, state, low, group)
        middle = (low + high) // 2
        pc = state[0]
        bound = builder.insert(arith.ConstantOp(IntegerAttr(middle, IndexType()))).results[0]
        below = builder.insert(arith.CmpiOp(pc, bound, "slt")).results[0]
        types = [v.type for v in state] + ([IndexType()] if group is not None else [])
        return self._if(
            builder,
            below,
            types,
            lambda b: self._dispatch(b, state, low, middle, group),
            lambda b: self._dispatch(b, state, middle, high, group),
        )

    def _if(
        self, builder: Builder, condition: SSAValue, types: Sequence[Attribute], then: _Side, otherwise: _Side
    ) -> list[SSAValue]:
        regions = []
        saved = builder.insertion_point
        for side in (then, otherwise):
            block = Block()
            builder.insertion_point = InsertPoint.at_end(block)
            builder.insert(scf.YieldOp(*side(builder)))
            regions.append(Region(block))
        builder.insertion_point = saved
        op = builder.insert(scf.IfOp(condition, types, *regions))
        return list(op.results)

    def _segment(self, builder: Builder, state: list[SSAValue], number: int, group: _Group | None) -> list[SSAValue]:
        """Segment ``number``'s ops on the slots, then its exit: each jump
        writes the slots of the values live at its target.  In a group, a
        segment that jumps back to itself (the body of a loop with no loop
        or call inside) repeats in a loop of its own (``_repeat``)."""
        segment = self.segments[number]
        exit = segment.exit
        if (
            group is not None
            and isinstance(exit, Branch)
            and ((exit.then.target == number) != (exit.otherwise.target == number))
        ):
            return self._repeat(builder, state, number, exit, group)
        read = self._run(builder, state, segment)
        counted: list[SSAValue] = []
        if group is not None:
            one = builder.insert(arith.ConstantOp(IntegerAttr(1, IndexType()))).results[0]
            counted.append(builder.insert(arith.AddiOp(group.count, one)).results[0])
        if isinstance(exit, Jump):
            return self._jump(builder, read, state, exit) + counted
        if isinstance(exit, Return):
            return self._return(builder, read, state, exit) + counted
        assert isinstance(exit, Branch)
        condition = read(exit.condition)
        types = [v.type for v in state] + [v.type for v in counted]
        return self._if(
            builder,
            condition,
            types,
            lambda b: self._jump(b, read, state, exit.then) + counted,
            lambda b: self._jump(b, read, state, exit.otherwise) + counted,
        )

    def _repeat(
        self, builder: Builder, state: list[SSAValue], number: int, exit: Branch, group: _Group
    ) -> list[SSAValue]:
        """Segment ``number``, which jumps back to itself on one side of its
        exit, as an ``scf.while`` that runs it while it stays and the group
        has segments left: the slots it does not change, and the program
        point, stay out of the dispatch, so each repetition costs the
        segment's own ops and a compare (one step each, as before).  A slot
        the two exits write differently is selected by the exit's
        condition unless one side's target has no value live in it."""
        again, leave = (exit.then, exit.otherwise) if exit.then.target == number else (exit.otherwise, exit.then)
        if (guard := self.segments[number].guard) is not None:
            return self._repeat_guarded(builder, state, number, guard, again, leave.target, group)
        index = IndexType()
        types = [index, *(v.type for v in state)]
        before, body = Block(arg_types=types), Block(arg_types=types)
        with building_at_end(builder, before):
            within = builder.insert(arith.CmpiOp(before.args[0], group.remaining, "slt")).results[0]
            here = builder.insert(arith.ConstantOp(IntegerAttr(number, index))).results[0]
            staying = builder.insert(arith.CmpiOp(before.args[1], here, "eq")).results[0]
            going = builder.insert(arith.AndIOp(within, staying)).results[0]
            builder.insert(scf.ConditionOp(going, *before.args))
        with building_at_end(builder, body):
            current = list(body.args[1:])
            read = self._run(builder, current, self.segments[number])
            stays = read(exit.condition)
            if again is not exit.then:
                true = builder.insert(arith.ConstantOp(IntegerAttr(1, IntegerType(1)))).results[0]
                stays = builder.insert(arith.XOrIOp(stays, true)).results[0]
            staying_out = self._jump(builder, read, current, again)
            leaving_out = self._jump(builder, read, current, leave)
            live_again = {1 + self.slots[v] for v in self.live[again.target]}
            live_leave = {1 + self.slots[v] for v in self.live[leave.target]}
            merged: list[SSAValue] = []
            for k, (stay, go) in enumerate(zip(staying_out, leaving_out, strict=True)):
                if stay is go or (k and k not in live_leave):
                    merged.append(stay)
                elif k and k not in live_again:
                    merged.append(go)
                else:
                    merged.append(builder.insert(arith.SelectOp(stays, stay, go)).results[0])
            one = builder.insert(arith.ConstantOp(IntegerAttr(1, index))).results[0]
            repeated = builder.insert(arith.AddiOp(body.args[0], one)).results[0]
            builder.insert(scf.YieldOp(repeated, *merged))
        start = builder.insert(arith.ConstantOp(IntegerAttr(0, index))).results[0]
        loop = builder.insert(scf.WhileOp([start, *state], types, Region(before), Region(body)))
        counted = builder.insert(arith.AddiOp(group.count, loop.results[0])).results[0]
        return [*loop.results[1:], counted]

    def _repeat_guarded(
        self, builder: Builder, state: list[SSAValue], number: int, guard: Guard, again: Jump, after: int, group: _Group
    ) -> list[SSAValue]:
        """A ``for`` body's segment as a loop that tests the ``for``'s own
        ``iv < ub`` first (``Guard``): it carries the slots only, so its
        taped form saves what the body itself overwrites and nothing of
        the dispatch; once it stops, the program point stays at the body
        while the guard holds (the group is full) or the loop is left."""
        index = IndexType()
        types = [index, *(v.type for v in state)]
        before, body = Block(arg_types=types), Block(arg_types=types)
        with building_at_end(builder, before):
            within = builder.insert(arith.CmpiOp(before.args[0], group.remaining, "slt")).results[0]
            entered = self._entered(builder, list(before.args[1:]), guard)
            going = builder.insert(arith.AndIOp(within, entered)).results[0]
            builder.insert(scf.ConditionOp(going, *before.args))
        with building_at_end(builder, body):
            current = list(body.args[1:])
            read = self._run(builder, current, self.segments[number])
            stepped = self._jump(builder, read, current, again)
            stepped[0] = current[0]
            one = builder.insert(arith.ConstantOp(IntegerAttr(1, index))).results[0]
            repeated = builder.insert(arith.AddiOp(body.args[0], one)).results[0]
            builder.insert(scf.YieldOp(repeated, *stepped))
        start = builder.insert(arith.ConstantOp(IntegerAttr(0, index))).results[0]
        loop = builder.insert(scf.WhileOp([start, *state], types, Region(before), Region(body)))
        final = list(loop.results[1:])
        counted = builder.insert(arith.AddiOp(group.count, loop.results[0])).results[0]
        staying = self._entered(builder, final, guard)
        left = self._run(builder, final, Segment())
        return self._if(
            builder,
            staying,
            [*(v.type for v in state), index],
            lambda b: [*final, counted],
            lambda b: [*self._jump(b, left, final, Jump(after, guard.moves)), counted],
        )

    def _entered(self, builder: Builder, state: list[SSAValue], guard: Guard) -> SSAValue:
        """Whether a ``for`` body is (still) entered from ``state``."""
        read = self._run(builder, state, Segment())
        iv, ub = read(guard.iv), read(guard.ub)
        return builder.insert(arith.CmpiOp(iv, ub, "slt")).results[0]

    def _run(self, builder: Builder, state: list[SSAValue], segment: Segment) -> Callable[[SSAValue], SSAValue]:
        """Clone ``segment``'s ops on the slots of ``state``; how to read
        any value after them (computed, bound, in a slot, a constant or an
        entry argument)."""
        mapping: dict[SSAValue, SSAValue] = {}

        def read(value: SSAValue) -> SSAValue:
            if value in mapping:
                return mapping[value]
            if (slot := self.slots.get(value)) is not None:
                return state[1 + slot]
            if (constant := _constant(value)) is not None:
                mapping[value] = builder.insert(constant.clone()).results[0]
                return mapping[value]
            return value

        for item in segment.ops:
            if isinstance(item, Bind):
                values = [read(v) for _, v in item.moves]
                mapping.update((t, v) for (t, _), v in zip(item.moves, values, strict=True))
                continue
            if isinstance(item, PushPoint):
                point = builder.insert(arith.ConstantOp(IntegerAttr(item.target, IndexType()))).results[0]
                builder.insert(anc.CopyPushOp(item.stack, point))
                continue
            for operand in _outer_operands(item):
                mapping.setdefault(operand, read(operand))
            clone = builder.insert(item.clone(value_mapper=mapping))
            for old, new in zip(item.results, clone.results, strict=True):
                new.name_hint = old.name_hint
                mapping[old] = new
        return read

    def _jump(
        self, builder: Builder, read: Callable[[SSAValue], SSAValue], state: list[SSAValue], to: Jump
    ) -> list[SSAValue]:
        """The state after ``to``: its target as the program point, the
        slots of the values live there assigned."""
        out = list(state)
        out[0] = builder.insert(arith.ConstantOp(IntegerAttr(to.target, IndexType()))).results[0]
        moved = dict(to.moves)
        for value in self.live[to.target]:
            out[1 + self.slots[value]] = read(moved.get(value, value))
        return out

    def _return(
        self, builder: Builder, read: Callable[[SSAValue], SSAValue], state: list[SSAValue], to: Return
    ) -> list[SSAValue]:
        """The state after a return: the popped program point, the slots
        of the values live at any point it may go to assigned."""
        out = list(state)
        out[0] = (
            builder.insert(arith.ConstantOp(IntegerAttr(to.points[0], IndexType()))).results[0]
            if to.pc is None
            else read(to.pc)
        )
        moved = dict(to.moves)
        for value in dict.fromkeys(v for point in to.points for v in self.live[point]):
            out[1 + self.slots[value]] = read(moved.get(value, value))
        return out


@dataclass(frozen=True)
class _Group:
    """The segments of one iteration of the machine when it runs ``base``
    at a time: those counted before the current one, and how many more
    the iteration may run."""

    count: SSAValue
    remaining: SSAValue


def _constant(value: SSAValue) -> arith.ConstantOp | None:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        return value.op
    return None


def _outer_operands(op: Operation) -> Iterator[SSAValue]:
    """The values ``op`` (and ops nested in it) read from outside it."""
    inside: set[SSAValue] = set()
    for nested in op.walk():
        inside.update(a for r in nested.regions for b in r.blocks for a in b.args)
        for operand in nested.operands:
            if operand not in inside:
                yield operand
        inside.update(nested.results)
