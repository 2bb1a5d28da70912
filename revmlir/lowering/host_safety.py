"""What keeps native code from taking the host process down where no op's
check can: a stack that cannot grow, an array that memory cannot hold,
recursion that would exhaust the machine stack, and a loop that never ends.

- ``check_pushes`` (part of ``rev-lower-to-std``): a push leaves the stack
  as it was when its buffer cannot grow (``revmlir.lowering.stacks``); the
  call site compares the size before and after and stops the run with
  ``ExecutionError`` (``STACK_NOT_GROWN``) instead of going on without the
  value, in every pipeline.
- ``rev-host-safety`` (native code only, after ``rev-lower-to-std``):
  before every call that may recurse (caller and callee in one cycle of the
  call graph), ``revmlir.stack_ok(error slot, record)`` (the record's
  address ``revmlir.record`` found on entry to the function) says whether the stack
  pointer is still above the limit the entry point set and fewer than
  ``MAX_CALL_DEPTH`` such calls are running (the interpreter's bound; it
  counts this one, and ``revmlir.call_returned`` after the call takes it
  off), and the run stops with ``RECURSION_TOO_DEEP`` at the call if not; before the first such
  call of each block, and at the start of every loop body
  (``_loop_heads``: ``scf.while``, ``scf.for`` but the short ones and
  the fills of a new array (``_filled``) (once per ``POLL_SPAN``
  iterations of the function's ``for`` loops, or in every iteration where
  its body calls a function that runs a ``for`` loop), the outermost
  ``scf.parallel``, the targets of backward branches in ``cf`` form),
  ``revmlir.poll`` leaves the run with ``INTERRUPTED`` in the slot once
  Ctrl-C has been pressed since the run started (it compares the
  process's interrupt count, whose address ``revmlir.interrupt_count``
  found on entry to the function, or before the call in a function
  without loops, with the count ``revmlir.interrupts_seen`` says the run
  started with); a fill adds the iterations of its loops to the
  function's count in one step before it and polls after it where that
  passes a multiple of ``POLL_SPAN``.  These
  functions get std bodies that do nothing here (the module stays
  complete); ``revmlir.runtime.guard`` gives them their native bodies,
  which read the limit and the count from the record the entry point
  keeps.  Each ``memref.alloc`` (an ancilla array on the heap, or ordinary
  code's) gets a check, ``CANNOT_ALLOCATE`` at the op it allocates for,
  that ``convert-std-to-llvm`` makes after ``malloc``: a null pointer stops
  the run with the bytes asked for, where the zeroing wrote through it.
  A ``memref.alloca`` the module brings is checked to be within
  ``MAX_STACK_ALLOCATION`` bytes, as the interpreter checks it, and, if
  larger than ``FRAME_ARRAY_BYTES``, to fit the stack
  (``revmlir.stack_room``, against the limit ``revmlir.stack_ok`` uses).

*Why at run time, and why these places*: frames differ by function and by
target, so only the stack pointer knows how deep a run may go; a bound on
the depth would be either unsafe or needlessly low.  Only a cycle of calls
grows the stack without bound (the lowering's frames hold at most
``FRAME_ARRAY_BYTES`` of arrays, a module's own larger ones are checked
where they are made), and only a loop or a cycle of calls runs without bound (a
binary recursion 100 deep makes 2¹⁰⁰ calls, the stack never deeper than
100 frames), so those are where the checks go.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, cf, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from revmlir.call_graph import recursive_calls
from revmlir.errors import SOURCE_OP_ATTR, ExecutionError
from revmlir.ir_utils import constant_index_through_cast, nested_ops
from revmlir.lowering import stacks
from revmlir.lowering.checked_code import CheckedCode, define_fail
from revmlir.lowering.native_types import FRAME_ARRAY_BYTES, element_bytes
from revmlir.runtime_checks import (
    ALLOCATION_CHECK_ATTR,
    CHECKS_ATTR,
    ERROR_SLOT,
    FAIL,
    REPORT,
    REPORT_INPUTS,
    CheckTable,
)
from revmlir.safety import (
    CANNOT_ALLOCATE,
    MAX_STACK_ALLOCATION,
    RECURSION_TOO_DEEP,
    STACK_EXHAUSTED,
    STACK_NOT_GROWN,
    too_large_for_the_stack,
)

POLL = "revmlir.poll"
"""``revmlir.poll(error slot, count address, count seen)``: leave the run
if Ctrl-C was pressed since it started."""
COUNT = "revmlir.interrupt_count"
"""``revmlir.interrupt_count(error slot) -> i64``: the address of the count
of Ctrl-Cs ``revmlir.poll`` reads, looked up once per function, as the
count the run started with is (``SEEN``), so that a poll costs one load, a
compare and a branch."""
SEEN = "revmlir.interrupts_seen"
"""``revmlir.interrupts_seen(error slot) -> i64``: the count of Ctrl-Cs
when the run started."""
RECORD = "revmlir.record"
"""``revmlir.record(error slot) -> i64``: the address of the record the
entry point keeps, looked up once per function that makes calls that may
recurse, so that counting one costs a load and a store of its depth."""
STACK_OK = "revmlir.stack_ok"
"""``revmlir.stack_ok(error slot, record) -> i1``: whether another call fits
the stack and ``MAX_CALL_DEPTH``; it counts the call."""
STACK_ROOM = "revmlir.stack_room"
"""``revmlir.stack_room(error slot, bytes) -> i1``: whether ``bytes`` below
the stack pointer stay above the limit ``revmlir.stack_ok`` compares with
(a ``memref.alloca`` the module brings)."""
CALL_RETURNED = "revmlir.call_returned"
"""``revmlir.call_returned(error slot, record)``: a call
``revmlir.stack_ok`` counted has returned."""
INTERRUPTED = -1
"""The check id ``revmlir.poll`` leaves in the error slot: the run was
interrupted (no check failed)."""
PUSH_PREFIX = stacks.runtime_name(stacks.PUSH) + "."


def _error_slot(function: func.FuncOp) -> SSAValue | None:
    """The error slot of a defined function that has one."""
    if not function.body.blocks:
        return None
    args = function.body.blocks[0].args
    return args[-1] if args and args[-1].type == ERROR_SLOT else None


def _checked_functions(module: ModuleOp) -> Iterator[tuple[func.FuncOp, SSAValue]]:
    for function in module.ops:
        if isinstance(function, func.FuncOp) and (error := _error_slot(function)) is not None:
            yield function, error


def check_pushes(module: ModuleOp, checks: CheckTable, runtime: dict[str, func.FuncOp], check_ops: bool) -> None:
    """Stop the run where a push could not grow its stack: the push left
    the size as it was (``check_ops``: ``CheckedCode``'s)."""
    declared = (f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp))
    if not any(name.startswith(PUSH_PREFIX) for name in (*runtime, *declared)):
        return  # nothing pushes: no function to walk (a kernel's are 10,000 ops)
    for function, error in _checked_functions(module):
        start = Builder(InsertPoint.at_start(function.body.blocks[0]))
        code = CheckedCode(function, checks, runtime, error, start, check_ops)
        for call in [op for op in nested_ops(function) if isinstance(op, func.CallOp)]:
            if not call.callee.string_value().startswith(PUSH_PREFIX):
                continue
            header = call.arguments[0]
            word = arith.ConstantOp.from_int_and_width(stacks.SIZE, IndexType())
            before = memref.LoadOp.get(header, [word])
            code.builder.insertion_point = InsertPoint.before(call)
            for op in (word, before):
                code.emit(op, call)
            code.builder.insertion_point = InsertPoint.after(call)
            after = code.emit(memref.LoadOp.get(header, [word]), call).results[0]
            grown = code.emit(arith.CmpiOp(after, before.results[0], "ne"), call).results[0]
            code.check(grown, call, STACK_NOT_GROWN, [before.results[0]], ExecutionError)


def _nested_in_a_loop(op: Operation) -> bool:
    """Whether a structured loop encloses ``op`` (in this function)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.ForOp | scf.ParallelOp | scf.WhileOp):
            return True
        parent = parent.parent_op()
    return False


def _loop_heads(function: func.FuncOp, fills: Iterable[scf.ForOp]) -> Iterator[tuple[Block, Operation]]:
    """Where each loop of ``function`` starts an iteration, with the op
    that stands for the loop: the body of every ``for`` and ``while`` loop
    but the short ones and the loops of ``fills``, of a parallel loop that
    no other loop encloses, and in ``cf`` form the
    target of each backward branch (every cycle of blocks has one, whatever
    the order of the blocks).  An inner parallel loop runs to its end
    before Ctrl-C is seen: its iterations may run in any order, so no
    iteration is sure to come after a given time."""
    unpolled = {loop for fill in fills for loop in nested_ops(fill) if isinstance(loop, scf.ForOp)}
    for op in function.walk():
        if isinstance(op, scf.ForOp) and (op in unpolled or _short(op)):
            continue
        if isinstance(op, scf.ForOp) or (isinstance(op, scf.ParallelOp) and not _nested_in_a_loop(op)):
            yield op.body.blocks[0], op
        elif isinstance(op, scf.WhileOp):
            yield op.after_region.blocks[0], op
        elif isinstance(op, cf.BranchOp | cf.ConditionalBranchOp):
            region = op.parent_region()
            assert region is not None and op.parent_block() is not None
            blocks = list(region.blocks)
            position = blocks.index(op.parent_block())
            for successor in op.successors:
                if blocks.index(successor) <= position:
                    yield successor, op


SHORT_LOOP = 64
"""The most iterations of a ``for`` loop that never polls (``_short``)."""


def _filled(loop: scf.ForOp) -> SSAValue | None:
    """The array ``loop`` fills, where it is the outer loop of a fill: a
    nest of ``for`` loops, one per dimension of an array the function
    allocates (``memref.alloc`` or ``alloca``, or an ``scf.if`` that yields
    one of either), each from 0 to the array's size in its dimension in
    steps of 1, whose innermost body stores a constant at the nest's
    indices and does nothing else (but read sizes and constants): how
    ``rev-lower-to-std`` zeroes a new ancilla array.

    *Why recognised by its form, not marked*: a fill is bounded by its
    array's size, which its allocation checked, and LLVM makes it a
    ``memset`` only where no poll is in it (a poll every 2¹⁶ elements kept
    it a loop: 0.77 ms for 2²⁰ ``f64``s, 0.12 ms as a ``memset``).  A
    marker the lowering writes could be written by hand on any loop, which
    would then never poll; the form holds only of loops that end."""
    indices: list[SSAValue] = []
    bounds: list[SSAValue] = []
    level: Operation = loop
    while isinstance(level, scf.ForOp):
        if level.results or (constant_index_through_cast(level.lb), constant_index_through_cast(level.step)) != (0, 1):
            return None
        indices.append(level.body.blocks[0].args[0])
        bounds.append(level.ub)
        *body, end = level.body.blocks[0].ops
        if not isinstance(end, scf.YieldOp):
            return None
        work = [op for op in body if not isinstance(op, memref.DimOp | arith.ConstantOp)]
        if len(work) != 1:
            return None
        level = work[0]
    if not isinstance(level, memref.StoreOp) or not isinstance(level.value.owner, arith.ConstantOp):
        return None
    array = level.memref
    if list(level.indices) != indices or not _allocated(array):
        return None
    for dimension, bound in enumerate(bounds):
        size = bound.owner
        if not (isinstance(size, memref.DimOp) and size.source is array):
            return None
        if constant_index_through_cast(size.index) != dimension:
            return None
    return array if len(indices) == len(array.type.get_shape()) else None


def _allocated(array: SSAValue) -> bool:
    """Whether ``array`` is one the function allocates (a ``memref.alloc``
    or ``alloca``, or an ``scf.if`` whose branches yield one of either),
    whose size its allocation checked."""
    made = array.owner
    if isinstance(made, memref.AllocOp | memref.AllocaOp):
        return True
    if not isinstance(made, scf.IfOp) or not isinstance(array, OpResult):
        return False
    yields = [region.blocks[0].last_op for region in made.regions if region.blocks]
    return len(yields) == 2 and all(
        isinstance(end, scf.YieldOp) and _allocated(end.operands[array.index]) for end in yields
    )


def _short(loop: scf.ForOp) -> bool:
    """Whether ``loop`` runs at most ``SHORT_LOOP`` iterations of straight
    code: constant bounds of ``index`` or ``i64`` (whose constants read as
    they count; an ``i64`` constant cast to ``index`` too, as the Python
    frontend writes ``range(8)``), and no loop, branch or call inside
    (docs/design.md decision 129).  Such a loop ends soon
    whatever it does, so it neither polls nor counts: the loop or function
    around it polls for it.  Counted, each of its iterations paid an
    addition, a mask, a compare and a branch on the function's count, which
    LLVM unrolled with it (an 8-element fill loop kept eight of them where
    its body is one store)."""
    if loop.lb.type not in (IndexType(), i64):
        return False
    lb, ub, step = (constant_index_through_cast(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0 or len(range(lb, ub, step)) > SHORT_LOOP:
        return False
    inner = (scf.ForOp, scf.WhileOp, scf.ParallelOp, func.CallOp, cf.BranchOp, cf.ConditionalBranchOp)
    return not any(isinstance(op, inner) for op in nested_ops(loop) if op is not loop)


@dataclass(frozen=True)
class HostSafetyPass(ModulePass):
    """Check the stack before recursive calls and poll for Ctrl-C in loops
    and recursions (native code: ``revmlir.runtime.guard`` defines what the
    checks call)."""

    name = "rev-host-safety"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        table = op.attributes.get(CHECKS_ATTR)
        checks = CheckTable([e.data for e in table.data] if isinstance(table, ArrayAttr) else [])
        runtime: dict[str, func.FuncOp] = {}
        functions = list(_checked_functions(op))
        recursive = recursive_calls(f for f, _ in functions)
        # a fill counts too: a loop that calls a function with one polls
        counting = _reaching((f for f, _ in functions), lambda op: isinstance(op, scf.ForOp) and not _short(op))
        for function, error in functions:
            code = CheckedCode(function, checks, runtime, error, Builder(InsertPoint.at_start(function.body.blocks[0])))
            fills = {
                loop: array
                for loop in function.walk()
                if isinstance(loop, scf.ForOp) and (array := _filled(loop)) is not None
            }
            heads = list(_loop_heads(function, fills))
            interrupts = None
            if heads or fills:
                code.builder.insertion_point = InsertPoint.at_start(function.body.blocks[0])
                interrupts = _interrupts(code, error, function)
            polled: set[Block] = set()
            calls = [c for c in function.walk() if c in recursive]
            if calls:
                code.builder.insertion_point = InsertPoint.at_start(function.body.blocks[0])
                (record,) = code.call_runtime(RECORD, [error], [i64], function)
            for call in calls:
                code.builder.insertion_point = InsertPoint.before(call)
                if (block := call.parent_block()) not in polled:
                    # A cycle of calls runs without bound as a loop does:
                    # a block polls before its first recursive call, so
                    # that a run of calls without loops polls once per
                    # call that recurses, and the calls that recurse no
                    # further (half of a binary recursion's) not at all.
                    polled.add(block)
                    code.call_runtime(POLL, [error, *(interrupts or _interrupts(code, error, call))], [], call)
                (ok,) = code.call_runtime(STACK_OK, [error, record], [i1], call)
                code.check(ok, call, RECURSION_TOO_DEEP, (), ExecutionError)
                code.builder.insertion_point = InsertPoint.after(call)
                code.call_runtime(CALL_RETURNED, [error, record], [], call)
            # A loop that calls a function with a for loop polls in every
            # iteration: the callee's count starts at 0 in each call, so a
            # nest of short loops across functions reaches POLL_SPAN in none
            # of them, and the call costs more than the poll.
            has_for = any(isinstance(loop, scf.ForOp) for _, loop in heads)
            eager = _loops_calling(function, counting) if has_for else set()
            counted = [loop for _, loop in heads if isinstance(loop, scf.ForOp) and loop not in eager]
            iterations = _iteration_count(code, function) if counted or fills else None
            for fill, array in fills.items():
                assert interrupts is not None and iterations is not None
                _count_fill(code, fill, array, iterations, [error, *interrupts])
                _zeroed_by_the_allocator(fill, array)
            for block, loop in heads:
                assert interrupts is not None
                code.builder.insertion_point = InsertPoint.at_start(block)
                if isinstance(loop, scf.ForOp) and loop not in eager:
                    assert iterations is not None
                    _poll_now_and_then(code, loop, iterations, [error, *interrupts])
                else:
                    code.call_runtime(POLL, [error, *interrupts], [], loop)
            _check_allocations(code, function)
        _define(op, runtime)
        op.attributes[CHECKS_ATTR] = ArrayAttr([StringAttr(e) for e in checks.entries])


def _check_allocations(code: CheckedCode, function: func.FuncOp) -> None:
    """Give each ``memref.alloc`` of ``function`` the check that stops the
    run with ``CANNOT_ALLOCATE`` where ``malloc`` gives no memory (its
    id, ``ALLOCATION_CHECK_ATTR``): ``convert-std-to-llvm`` tests the
    pointer after the call, which std IR has no op for (an address is no
    value the interpreter has); the zeroing after it wrote through a null
    pointer.  One the module brings (no ``SOURCE_OP_ATTR``: not an
    ``anc.array_alloc``'s, which ``rev-lower-to-std`` checked) first gets
    the interpreter's size checks, since a negative or huge size wraps
    ``malloc``'s byte count to a small block the stores then overrun."""
    for alloc in list(nested_ops(function)):
        if isinstance(alloc, memref.AllocaOp) and SOURCE_OP_ATTR not in alloc.attributes:
            _check_frame_allocation(code, alloc, function.body.blocks[0])
        if isinstance(alloc, memref.AllocOp):
            if SOURCE_OP_ATTR not in alloc.attributes:
                code.builder.insertion_point = InsertPoint.before(alloc)
                type = alloc.memref.type
                assert isinstance(type, MemRefType)
                code.checked_elements(alloc, alloc.dynamic_sizes, type)
            identifier = code.checks.register(alloc, CANNOT_ALLOCATE, ["i64"], code.function, ExecutionError)
            alloc.attributes[ALLOCATION_CHECK_ATTR] = IntegerAttr(identifier, i64)
            code.runtime.setdefault(REPORT, func.FuncOp.external(REPORT, list(REPORT_INPUTS), []))


def _check_frame_allocation(code: CheckedCode, alloca: memref.AllocaOp, entry: Block) -> None:
    """A ``memref.alloca`` the module brings gets the interpreter's size
    checks and its bound, ``MAX_STACK_ALLOCATION``, and, where it may be
    larger than the stack's slack (over ``FRAME_ARRAY_BYTES``, what
    ``rev-lower-to-std`` itself puts in a frame), a test that the thread's
    stack has room for it (``STACK_ROOM``): one that does not fit moved the
    stack pointer past the thread's stack, and the first store faulted.
    Both before the stack pointer moves, so an array of static size, which
    ``convert-std-to-llvm`` would make on entry to the function, before
    any check, is made there after them instead, with constant sizes (so in
    place, once per call) and cast to its type.  One whose static size
    passes the bound fails when reached, and is made a heap allocation,
    which never runs."""
    type = alloca.memref.type
    assert isinstance(type, MemRefType)
    itemsize = element_bytes(type.element_type)
    most = MAX_STACK_ALLOCATION // itemsize
    shape = type.get_shape()
    if not alloca.dynamic_sizes and prod(shape) * itemsize <= FRAME_ARRAY_BYTES:
        return
    if alloca.dynamic_sizes or prod(shape) > most:
        code.builder.insertion_point = InsertPoint.before(alloca)
        elements = code.checked_elements(alloca, alloca.dynamic_sizes, type)
        fits = code.emit(arith.CmpfOp(elements, code.const(float(most), f64, alloca), "ole"), alloca).results[0]
        code.check(fits, alloca, too_large_for_the_stack(itemsize), [elements], ExecutionError)
        if not alloca.dynamic_sizes:
            heap = memref.AllocOp([], [], type)
            heap.attributes[SOURCE_OP_ATTR] = StringAttr(alloca.name)
            Rewriter.replace_op(alloca, heap)
            return
        count = code.emit(arith.FPToSIOp(elements, i64), alloca).results[0]
        _check_room(code, alloca, code.emit(arith.MuliOp(count, code.const(itemsize, i64, alloca)), alloca).results[0])
        return
    code.builder.insertion_point = InsertPoint.at_start(entry)
    _check_room(code, alloca, code.const(prod(shape) * itemsize, i64, alloca))
    sizes = [code.const(extent, IndexType(), alloca) for extent in shape]
    placed = memref.AllocaOp.get(type.element_type, shape=[DYNAMIC_INDEX] * len(shape), dynamic_sizes=sizes)
    placed.attributes[SOURCE_OP_ATTR] = StringAttr(alloca.name)
    code.emit(placed, alloca)
    cast = code.emit(memref.CastOp.get(placed.memref, type), alloca)
    alloca.memref.replace_all_uses_with(cast.results[0])
    alloca.detach()
    alloca.erase()


def _check_room(code: CheckedCode, alloca: memref.AllocaOp, bytes: SSAValue) -> None:
    """Stop the run at ``alloca`` with ``STACK_EXHAUSTED`` unless ``bytes``
    below the stack pointer stay above the limit the recursion check uses."""
    (ok,) = code.call_runtime(STACK_ROOM, [code.error, bytes], [i1], alloca)
    code.check(ok, alloca, STACK_EXHAUSTED, [bytes], ExecutionError)


def polling_functions(module: ModuleOp) -> frozenset[str]:
    """The functions of a module after ``rev-host-safety`` whose runs may
    poll for Ctrl-C: those with a loop or a recursive call, and those
    that call one; and those whose runs test the stack's room for an
    array (``STACK_ROOM``), which needs the calling thread's stack as a
    recursion does.  A call
    of any other needs no interrupt count (it ends soon enough on its
    own), which spares Python's caller the work of arming one."""
    functions = (f for f, _ in _checked_functions(module))
    return frozenset(
        _reaching(functions, lambda op: isinstance(op, func.CallOp) and op.callee.string_value() in (COUNT, STACK_ROOM))
    )


def _reaching(functions: Iterable[func.FuncOp], seed: Callable[[Operation], bool]) -> set[str]:
    """The names of the ``functions`` with an op ``seed`` holds for, and of
    those that call one of them, directly or not."""
    callers: dict[str, set[str]] = {}
    found: list[str] = []
    for function in functions:
        name = function.sym_name.data
        for op in function.walk():
            if seed(op):
                found.append(name)
            elif isinstance(op, func.CallOp):
                callers.setdefault(op.callee.string_value(), set()).add(name)
    reached: set[str] = set()
    while found:
        if (name := found.pop()) not in reached:
            reached.add(name)
            found.extend(callers.get(name, ()))
    return reached


def _loops_calling(function: func.FuncOp, callees: set[str]) -> set[scf.ForOp]:
    """The ``for`` loops of ``function`` whose body calls one of
    ``callees`` outside any inner ``for`` loop."""
    loops: set[scf.ForOp] = set()
    for call in function.walk():
        if isinstance(call, func.CallOp) and call.callee.string_value() in callees:
            loop = call.parent_op()
            while loop is not None and not isinstance(loop, scf.ForOp | func.FuncOp):
                loop = loop.parent_op()
            if isinstance(loop, scf.ForOp):
                loops.add(loop)
    return loops


def _interrupts(code: CheckedCode, error: SSAValue, like: Operation) -> tuple[SSAValue, SSAValue]:
    """The address of the interrupt count and the count the run started
    with, which ``revmlir.poll`` compares, looked up here."""
    (count,) = code.call_runtime(COUNT, [error], [i64], like)
    (seen,) = code.call_runtime(SEEN, [error], [i64], like)
    return count, seen


POLL_SPAN = 1 << 16
"""How many iterations of a function's ``for`` loops run between polls."""


def _iteration_count(code: CheckedCode, function: func.FuncOp) -> SSAValue:
    """A count of the iterations of ``function``'s ``for`` loops, from 0 on
    entry: a word of the frame, which LLVM keeps in a register (nothing
    else takes its address)."""
    entry = function.body.blocks[0]
    code.builder.insertion_point = InsertPoint.at_start(entry)
    count = code.emit(memref.AllocaOp.get(i64, shape=[1]), function).results[0]
    zero = code.const(0, i64, function)
    code.emit(memref.StoreOp.get(zero, count, [code.const(0, IndexType(), function)]), function)
    return count


def _poll_now_and_then(code: CheckedCode, loop: scf.ForOp, iterations: SSAValue, args: Sequence[SSAValue]) -> None:
    """Add one to the function's count of ``for`` iterations and poll where
    it reaches a multiple of ``POLL_SPAN``.

    *Why one count for every loop of the function*: a nest of loops that
    are each shorter than ``POLL_SPAN`` iterations (four loops of 1000)
    runs as long as one loop of their product, and a count per loop, or
    the loop's own index, never reaches the span in any of them.  Counted
    in 64 bits whatever the loops' types, the count polls an ``i8`` loop
    as it polls an ``index`` one.  It costs an addition, a mask and a
    comparison per iteration, as the index did, and less than the flag's
    atomic load, which LLVM keeps in the loop and optimises around; a poll
    in every iteration of the loops around an inner one made a nest whose
    inner loop runs 3 iterations 1.3× slower."""
    moved = _add_to_count(code, iterations, 1, loop)[1]
    low = code.emit(arith.AndIOp(moved, code.const(POLL_SPAN - 1, i64, loop)), loop).results[0]
    _poll_if(code, code.emit(arith.CmpiOp(low, code.const(0, i64, loop), "eq"), loop).results[0], args, loop)


def _count_fill(
    code: CheckedCode, fill: scf.ForOp, array: SSAValue, iterations: SSAValue, args: Sequence[SSAValue]
) -> None:
    """Add the iterations of ``fill``'s loops (over ``array``) to the
    function's count of ``for`` iterations in one step before it, and poll
    after it where the count passed a multiple of ``POLL_SPAN``: the fill
    itself never polls (it ends as a ``memset``), but the time between
    polls stays bounded by the work done, so a loop that fills a large
    array in each iteration polls as often as one that stores each element
    in a loop of its own.  Every loop of the nest counts, not only the
    innermost one's stores: an array with a zero extent past its first
    (``rv.zeros((n, 0))``) has no elements, but its outer loops run ``n``
    iterations, which only LLVM's deleting the empty nest made free."""
    assert isinstance(array.type, MemRefType)
    code.builder.insertion_point = InsertPoint.before(fill)
    index = IndexType()
    sizes = [
        code.emit(memref.DimOp(array, code.const(d, index, fill)), fill).results[0]
        for d in range(len(array.type.get_shape()))
    ]
    # the loops at each depth run the product of the sizes down to it
    runs = iterations_run = sizes[0]
    for size in sizes[1:]:
        runs = code.emit(arith.MuliOp(runs, size), fill).results[0]
        iterations_run = code.emit(arith.AddiOp(iterations_run, runs), fill).results[0]
    amount = code.emit(arith.IndexCastOp(iterations_run, i64), fill).results[0]
    counted, moved = _add_to_count(code, iterations, amount, fill)
    changed = code.emit(arith.XOrIOp(counted, moved), fill).results[0]
    due = code.emit(arith.CmpiOp(changed, code.const(POLL_SPAN - 1, i64, fill), "ugt"), fill).results[0]
    code.builder.insertion_point = InsertPoint.after(fill)
    _poll_if(code, due, args, fill)


def _zeroed_by_the_allocator(fill: scf.ForOp, array: SSAValue) -> None:
    """Where ``fill`` stores zeros (every bit 0) into a heap allocation,
    the allocation is marked zeroed (``stacks.ZEROED_ATTR``: ``calloc``)
    and the fill left to the frame's: removed where the array is always on
    the heap, run only where the frame-or-heap choice took the frame (an
    ``scf.if`` that yields a ``memref.alloc`` or a ``memref.alloca``).

    Only a fill that is the first thing done to the new array: in the
    allocation's block, with nothing between the two that uses the array
    but for its shape (a fill of zeros later, or in a loop, zeroes again
    what was written since); where an ``scf.if`` chooses, its heap
    allocation is made last in its branch and used by its ``yield`` alone
    (``_only_yielded``), else the branch may have written it.

    *Why*: past glibc's ``mmap`` threshold ``calloc`` gives the kernel's
    new pages, which are zero already, and touches none; the fill wrote all
    of them (2²² ``f64``s allocated, read by a checked free and freed:
    29 ms, 11 with ``calloc``; ``benchmarks/RESULTS.md``).  Below it
    ``calloc`` zeroes as the fill did.  The count the fill added stays
    (``_count_fill``): it bounds the time between polls by the work asked,
    and costs nothing measurable."""
    (store,) = [op for op in nested_ops(fill) if isinstance(op, memref.StoreOp)]
    constant = store.value.owner
    assert isinstance(constant, arith.ConstantOp)
    made = array.owner
    if isinstance(made, memref.AllocaOp) or not _zero_bits(constant.value) or not _fills_first(fill, array):
        return
    if isinstance(made, memref.AllocOp):
        made.attributes[stacks.ZEROED_ATTR] = UnitAttr()
        Rewriter.erase_op(fill)
        return
    assert isinstance(made, scf.IfOp) and isinstance(array, OpResult)  # as _allocated found it
    yielded = [region.blocks[0].last_op.operands[array.index].owner for region in made.regions]
    heap = [isinstance(owner, memref.AllocOp) for owner in yielded]
    if heap.count(True) != 1 or not all(isinstance(o, memref.AllocOp | memref.AllocaOp) for o in yielded):
        return
    if not _only_yielded(yielded[heap.index(True)], array.index):
        return
    yielded[heap.index(True)].attributes[stacks.ZEROED_ATTR] = UnitAttr()
    skipped, filled = Block([scf.YieldOp()]), Block()
    choice = scf.IfOp(made.cond, [], Region(skipped if heap[0] else filled), Region(filled if heap[0] else skipped))
    Rewriter.insert_op(choice, InsertPoint.before(fill))
    fill.detach()
    filled.add_ops([fill, scf.YieldOp()])


def _fills_first(fill: scf.ForOp, array: OpResult) -> bool:
    """Whether ``fill`` follows the op that makes ``array`` in its block
    with no use of the array between them but ``memref.dim``."""
    block = fill.parent_block()
    if block is None or array.op.parent_block() is not block:
        return False
    between: set[Operation] = set()
    op = array.op.next_op
    while op is not fill:
        if op is None:
            return False  # the fill comes first
        between.add(op)
        op = op.next_op
    for use in array.uses:
        user: Operation | None = use.operation
        while user is not None and user.parent_block() is not block:
            user = user.parent_op()
        if user in between and not isinstance(user, memref.DimOp):
            return False
    return True


def _only_yielded(alloc: memref.AllocOp, position: int) -> bool:
    """Whether ``alloc`` is the last op of its branch, whose ``scf.yield``
    is its one use, at ``position``: then the ``scf.if``'s result is the
    array's first use, and ``_fills_first`` of that result is the whole
    story (a store in the branch, or an allocation made before the ``if``
    and yielded by it, writes what the fill must zero; nothing in the
    branch follows the allocation to use it otherwise)."""
    end = alloc.next_op
    return isinstance(end, scf.YieldOp) and [(u.operation, u.index) for u in alloc.memref.uses] == [(end, position)]


def _zero_bits(value: Attribute) -> bool:
    """Whether a constant is all zero bits (a float's +0.0, not -0.0)."""
    if isinstance(value, IntegerAttr):
        return value.value.data == 0
    return isinstance(value, FloatAttr) and value.value.data == 0.0 and math.copysign(1.0, value.value.data) > 0


def _add_to_count(
    code: CheckedCode, iterations: SSAValue, amount: int | SSAValue, like: Operation
) -> tuple[SSAValue, SSAValue]:
    """Add ``amount`` (an ``i64``) to the function's count of ``for``
    iterations: the count before and after."""
    word = code.const(0, IndexType(), like)
    counted = code.emit(memref.LoadOp.get(iterations, [word]), like).results[0]
    step = code.const(amount, i64, like) if isinstance(amount, int) else amount
    moved = code.emit(arith.AddiOp(counted, step), like).results[0]
    code.emit(memref.StoreOp.get(moved, iterations, [word]), like)
    return counted, moved


def _poll_if(code: CheckedCode, due: SSAValue, args: Sequence[SSAValue], like: Operation) -> None:
    """Poll for Ctrl-C where ``due`` holds."""
    saved = code.builder.insertion_point
    poll = Block()
    code.builder.insertion_point = InsertPoint.at_end(poll)
    code.call_runtime(POLL, args, [], like)
    code.emit(scf.YieldOp(), like)
    code.builder.insertion_point = saved
    code.emit(scf.IfOp(due, [], Region(poll)), like)


def _define(module: ModuleOp, runtime: dict[str, func.FuncOp]) -> None:
    """Add what the checks call: ``revmlir.report`` and ``revmlir.fail`` if
    the module has none yet, and std bodies for ``revmlir.poll`` (nothing
    to do), ``revmlir.interrupt_count`` and ``revmlir.interrupts_seen``
    (0), ``revmlir.stack_ok`` (true) and ``revmlir.call_returned``
    (nothing to do), which native code replaces."""
    if POLL in runtime:
        # native code's poll leaves the run through revmlir.fail
        runtime.setdefault(FAIL, func.FuncOp.external(FAIL, [ERROR_SLOT], []))
    present = {f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)}
    for name in sorted(runtime.keys() - present):
        declaration = runtime[name]
        if name in (FAIL, REPORT):
            module.body.block.add_op(declaration)
            continue
        function = func.FuncOp(name, declaration.function_type, visibility="private")
        function.body.block.args[0].name_hint = "error"
        if name in (STACK_OK, STACK_ROOM, COUNT, SEEN, RECORD):
            truth = int(name in (STACK_OK, STACK_ROOM))
            value = arith.ConstantOp.from_int_and_width(truth, function.function_type.outputs.data[0])
            function.body.block.add_ops([value, func.ReturnOp(value)])
        else:
            function.body.block.add_op(func.ReturnOp())
        module.body.block.add_op(function)
    define_fail(module)
