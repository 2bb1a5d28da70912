"""What an iteration of a parallel loop may touch (``rev.for parallel``).

Iterations of a parallel loop run in any order, or at once on a GPU, so none
may see another's writes.  Each iteration's footprint keeps to:

- *private* elements: an array element whose first index is the loop's
  induction variable itself (``y[i]``, ``a[i, k]``), or any element of an
  array allocated inside the body.  Such an array may be read only at private
  elements too (reading ``y[i + 1]`` would race with iteration ``i + 1``);
- *shared accumulations*: ``%v = rev.take %m[%j]``, then only ``rev.add`` /
  ``rev.sub`` with ``%v`` as their target, then ``rev.put`` back: the
  iterations' updates of one element commute (up to float rounding), and
  lower to atomic adds.  An array accumulated into this way is not otherwise
  read or written in the loop, since its elements change under the reader;
- *reads*: ``memref.load``, and a borrow that puts the element back
  unchanged (``rev.TakeOp.returned_unchanged``: the adjoint of a shared
  accumulation ``y[j] += v`` borrows ``ḡy[j]`` only to read it).

A whole array passed to a call that only accumulates into it
(``Writes.ACCUMULATES``: every write, in the callee and its callees, is an
accumulation, and it reads nothing of the array but its shape) is a shared
accumulation too: ``f(y[i], x, i)`` whose adjoint adds into all of ``ḡx``.
A whole array passed to a call that writes it otherwise is neither (the
callee could write any element): pass the element instead.  The same holds
for a whole array that the loop writes and a callee reads.  Nested regions
are part of the body; callees are checked as their own functions.

The ops say what they write (``InvertibleOp.written_memrefs``), whether an
update accumulates (``ACCUMULATES``) and whether a borrow only accumulates
(``rev.TakeOp.accumulation``); ``argument_writes`` says it of functions; this
module puts that together per loop, and finds the function arguments that
accumulations reach from a parallel loop (``shared_arguments``), which the
lowering makes atomic.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import AnyFloat, IntegerType, MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue

from revmlir.dialects import rev
from revmlir.errors import ReversibilityViolation
from revmlir.kept_answers import ir_unchanged
from revmlir.semantics import Writes, argument_uses, argument_writes

RULE = "parallel"


class Race(enum.Enum):
    """How an op breaks the footprint rule: what a frontend words in its
    users' terms, where the message words it in the IR's."""

    WRITES_WHOLE = enum.auto()
    """A call passes an outer array whole to a callee that writes it."""
    ACCUMULATES_UNSHARABLE = enum.auto()
    """A call or a borrow accumulates into an array of elements that are
    neither floats nor integers."""
    PASSES_WRITTEN = enum.auto()
    """A call passes an outer array whole while the loop writes it."""
    BORROWS_ACCUMULATED = enum.auto()
    """A borrow of an array the iterations accumulate into does more than
    accumulate."""
    WRITES_SHARED = enum.auto()
    """A write of an element whose first index is not the loop's."""
    READS_ACCUMULATED = enum.auto()
    """A read of an array the iterations accumulate into."""
    READS_WRITTEN = enum.auto()
    """A read of an element the loop writes, at another index than the loop's."""


class ParallelViolation(ReversibilityViolation):
    """An op of a parallel loop's body that breaks the footprint rule, with
    the array it races on and the loop."""

    def __init__(self, race: Race, op: Operation, array: SSAValue, loop: rev.ForOp, message: str):
        self.race = race
        self.array = array
        self.loop = loop
        super().__init__(RULE, op, f"'{op.name}' in a parallel loop {message}")


Call = rev.CallOp | rev.UncallOp
CallWrites = Callable[[Call], Sequence[Writes]]
"""How a call's callee may change each of its arguments."""


def _inside(value: SSAValue, loop: rev.ForOp) -> bool:
    """Whether ``value`` is defined in ``loop``'s body (one per iteration)."""
    owner = value.owner
    block = owner if not isinstance(owner, Operation) else owner.parent_block()
    while block is not None:
        if block is loop.body.block:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


def is_private(array: SSAValue, indices: Sequence[SSAValue], loop: rev.ForOp) -> bool:
    """Whether element ``array[indices]`` belongs to one iteration of ``loop``."""
    return _inside(array, loop) or (bool(indices) and indices[0] == loop.body.block.args[0])


def accumulated_arrays(loop: rev.ForOp) -> set[SSAValue]:
    """The arrays ``loop``'s iterations accumulate into at shared elements."""
    return {
        op.memref
        for op in loop.body.walk()
        if isinstance(op, rev.TakeOp) and not is_private(op.memref, op.indices, loop) and op.accumulation() is not None
    }


def can_accumulate_atomically(array: SSAValue) -> bool:
    """Whether iterations may share accumulations into ``array``'s
    elements: an atomic add exists for floats and integers alone."""
    assert isinstance(array.type, MemRefType)
    element = array.type.element_type
    return isinstance(element, AnyFloat | IntegerType)


def _accumulating_calls(loop: rev.ForOp, call_writes: CallWrites) -> Iterator[tuple[Call, int, SSAValue]]:
    """The calls in ``loop`` that pass an outer array whole to a callee that
    only accumulates into it, with the argument's position and the array."""
    for op in loop.body.walk():
        if isinstance(op, Call):
            for position, (array, how) in enumerate(zip(op.args, call_writes(op), strict=True)):
                if how is Writes.ACCUMULATES and not _inside(array, loop):
                    yield op, position, array


def unsummable_calls(loop: rev.ForOp, call_writes: CallWrites) -> list[tuple[Call, SSAValue]]:
    """The calls in ``loop`` that pass an outer array whole to a callee
    that accumulates into it where no atomic addition updates the array's
    elements, with the array."""
    return [
        (call, array)
        for call, _, array in _accumulating_calls(loop, call_writes)
        if not can_accumulate_atomically(array)
    ]


def check_parallel_loop(loop: rev.ForOp, call_writes: CallWrites) -> None:
    """Raise the first op of ``loop``'s body that breaks the footprint rule."""
    shared = accumulated_arrays(loop) | {array for _, _, array in _accumulating_calls(loop, call_writes)}
    written: set[SSAValue] = set(shared)
    for op in loop.body.walk():
        if isinstance(op, rev.TakeOp) and not op.returned_unchanged():
            _check_write(op, loop, shared)
            written.add(op.memref)
        elif isinstance(op, Call):
            for array, how in zip(op.args, call_writes(op), strict=True):
                if how is Writes.NONE or _inside(array, loop):
                    continue
                if how is Writes.OTHER:
                    raise ParallelViolation(
                        Race.WRITES_WHOLE,
                        op,
                        array,
                        loop,
                        f"passes {_name(array)}, which it writes, as a whole array: another "
                        "iteration may write the same elements; pass the element instead",
                    )
                if not can_accumulate_atomically(array):
                    raise ParallelViolation(
                        Race.ACCUMULATES_UNSHARABLE,
                        op,
                        array,
                        loop,
                        f"passes {_name(array)} of type {array.type} to a callee that accumulates "
                        "into it: shared accumulations need float or integer elements",
                    )
    for op in loop.body.walk():
        if isinstance(op, memref.LoadOp) or (isinstance(op, rev.TakeOp) and op.returned_unchanged()):
            _check_read(op, op.memref, op.indices, loop, shared, written)
        elif isinstance(op, Call):
            for array, how in zip(op.args, call_writes(op), strict=True):
                if array in written and not _inside(array, loop) and how is not Writes.ACCUMULATES:
                    raise ParallelViolation(
                        Race.PASSES_WRITTEN,
                        op,
                        array,
                        loop,
                        f"passes {_name(array)} as a whole array while the loop writes it: "
                        "a callee reading it would race with other iterations",
                    )


def shared_arguments(module: ModuleOp) -> dict[str, frozenset[int]]:
    """Per function of ``module``: the positions of the arguments that may be
    bound to an array the iterations of a parallel loop accumulate into
    through calls, directly or through callees passing it on; the
    accumulations into them must be atomic.  The IR does not change while
    it is asked, so the uses of each function's arguments are found once
    (``revmlir.kept_answers``) for the writes and for following the
    accumulations down."""
    with ir_unchanged():
        return _shared_arguments(module)


def _shared_arguments(module: ModuleOp) -> dict[str, frozenset[int]]:
    writes = argument_writes(module)
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, rev.FuncOp)}

    def call_writes(call: Call) -> Sequence[Writes]:
        return writes.get(call.callee.string_value(), (Writes.NONE,) * len(call.args))

    pending = [
        (call.callee.string_value(), position)
        for function in functions.values()
        for loop in function.walk()
        if isinstance(loop, rev.ForOp) and loop.is_parallel
        for call, position, _ in _accumulating_calls(loop, call_writes)
    ]
    uses = {name: argument_uses(func) for name, func in functions.items()}
    found: dict[str, set[int]] = {name: set() for name in functions}
    while pending:
        name, position = pending.pop()
        if position in found[name]:
            continue
        found[name].add(position)
        for call, index in uses[name][position]:
            if isinstance(call, Call) and call_writes(call)[index] is Writes.ACCUMULATES:
                pending.append((call.callee.string_value(), index))
    return {name: frozenset(positions) for name, positions in found.items()}


def _check_write(take: rev.TakeOp, loop: rev.ForOp, shared: set[SSAValue]) -> None:
    accumulates = take.accumulation() is not None
    if take.memref in shared:
        if not accumulates:
            raise ParallelViolation(
                Race.BORROWS_ACCUMULATED,
                take,
                take.memref,
                loop,
                f"borrows an element of {_name(take.memref)}, which iterations accumulate into: "
                "it is only accumulated into (rev.take, rev.add/rev.sub, rev.put) in the loop",
            )
        if not can_accumulate_atomically(take.memref):
            raise ParallelViolation(
                Race.ACCUMULATES_UNSHARABLE,
                take,
                take.memref,
                loop,
                f"accumulates into a shared element of {_name(take.memref)} of type "
                f"{take.memref.type}: shared accumulations need float or integer elements",
            )
        return
    if not is_private(take.memref, take.indices, loop):
        raise ParallelViolation(
            Race.WRITES_SHARED,
            take,
            take.memref,
            loop,
            f"writes an element of {_name(take.memref)} whose first index is not the loop's "
            "index: another iteration may write it too; only accumulations "
            "(rev.take, rev.add/rev.sub, rev.put) may share an element",
        )


def _check_read(
    op: Operation,
    array: SSAValue,
    indices: Sequence[SSAValue],
    loop: rev.ForOp,
    shared: set[SSAValue],
    written: set[SSAValue],
) -> None:
    if array in shared:
        raise ParallelViolation(
            Race.READS_ACCUMULATED,
            op,
            array,
            loop,
            f"reads {_name(array)}, which iterations accumulate into: its elements change while the loop runs",
        )
    if array in written and not is_private(array, indices, loop):
        raise ParallelViolation(
            Race.READS_WRITTEN,
            op,
            array,
            loop,
            f"reads an element of {_name(array)}, which the loop writes, at an index other "
            "than the loop's: another iteration may be writing it",
        )


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "an array"
