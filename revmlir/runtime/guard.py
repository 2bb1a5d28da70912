"""Failing checks leave native code at once.

``rev-lower-to-std`` ends every failing check with a call of
``revmlir.fail(error slot)`` (``revmlir.lowering.rev_to_std``), which must
not return: the code after a failed check may be what the check guards (a
load outside its array, a division by zero), and a loop may never end
otherwise.  This module completes the LLVM module for that:

- every C entry point ``<f>_ciface`` becomes a guard that keeps a
  ``jmp_buf`` in its frame, stores its address in the error slot's last
  word, calls ``_setjmp`` and runs the original entry point (now internal);
- ``revmlir.fail`` gets a body (in place of std IR's ``abort``) that
  ``longjmp``\\ s to the address it finds
  in the slot, so the guard returns to its caller at once, out of any
  depth of loops and calls, with the check's id and values in the slot.
  ``revmlir.report``, which stores them there and calls it, stays out of
  line (``noinline``, ``cold``, ``noreturn``): a check costs a compare and
  a branch to one call.

Nothing below the entry point is unwound: memory the run allocated itself
(ancilla arrays on the heap, stack buffers of local stacks) is not freed
when a check fails.  The buffers of stacks passed as arguments are the
caller's and are given back as usual.

Beyond the jump, the guard keeps what ``rev-host-safety`` asks at run time
(``revmlir.lowering.host_safety``) in a *record* in its frame, whose
address replaces the context in the slot's last word:

- on entry, that word is 0 or the address of a run context ``[interrupt
  count address, the count when the call started, stack budget in
  bytes, the lowest address the stack may reach or 0]`` (``revmlir.runtime.interrupt`` makes Python's, one per call
  frame, and keeps the SIGINT action that moves the count installed); a C
  caller passes a zeroed slot, and gets ``DEFAULT_STACK_BUDGET``, bounded
  by its thread's stack, and no interruption;
- the guard stores the stack limit (its own frame's address less the
  budget, or the lowest address where that is higher; for a C caller,
  ``revmlir.thread_floor``'s, the end of the calling thread's stack as
  the C library says it, which an object looks up at the thread's first
  call and keeps in a ``thread_local`` word), the count's address and
  the count the call started with in the record; it changes no signal action and writes nothing the run
  context names, so calls in several threads, and calls nested in a
  callback, each see every Ctrl-C that comes after their own start; it
  zeroes the word when it returns, so a slot can be reused;
- ``revmlir.stack_room`` says whether an array of the bytes asked fits
  between the stack pointer and the limit;
- ``revmlir.stack_ok`` compares the stack pointer with the limit and the
  calls that may recurse running with ``MAX_CALL_DEPTH``, and counts one
  more, which ``revmlir.call_returned`` takes off,
  ``revmlir.interrupt_count`` and ``revmlir.interrupts_seen`` give the
  count's address and starting value, and ``revmlir.poll`` leaves the run
  with ``INTERRUPTED`` in the slot once the count has moved.

``_mlir_ciface_<f>`` entry points (upstream's C interface) get the same
guard, so a failed check under them returns to the C caller with the
check's id in the slot, and a function's scalar result is 0.  Both guards
leave a slot that has no last word (its size, in its descriptor, is
smaller, or its data pointer is null) to the entry point, which refuses it
before it runs (``revmlir.lowering.std_to_llvm``).
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable, Mapping, Sequence

from llvmlite import ir

from revmlir.collector import take_apart_llvm_blocks
from revmlir.lowering.host_safety import CALL_RETURNED, COUNT, INTERRUPTED, POLL, RECORD, SEEN, STACK_OK, STACK_ROOM
from revmlir.lowering.std_to_llvm import (
    CIFACE_SUFFIX,
    GUARD_FUNCTIONS,
    LONGJMP,
    MLIR_CIFACE_PREFIX,
    SETJMP,
    SYSCALL,
    UNGUARDED,
)
from revmlir.runtime_checks import FAIL, JUMP_WORD, REPORT
from revmlir.safety import MAX_CALL_DEPTH

JMP_BUF_WORDS = 64
"""512 bytes, more than any libc's ``jmp_buf`` (glibc: 200 on x86-64, 312
on AArch64)."""
LIMIT, COUNT_WORD, SEEN_WORD, NO_COUNT, DEPTH = range(JMP_BUF_WORDS, JMP_BUF_WORDS + 5)
"""Words of the guard's record after the ``jmp_buf``: the lowest stack
address a call may start at, the interrupt count's address, the count the
call started with, a zero word that stands for the count when the caller
gave none, and the calls that may recurse running now."""
RECORD_WORDS = DEPTH + 1
CONTEXT_COUNT, CONTEXT_SEEN, CONTEXT_BUDGET, CONTEXT_FLOOR = range(4)
"""Words of a run context (see the module docstring)."""
CONTEXT_WORDS = CONTEXT_FLOOR + 1
DEFAULT_STACK_BUDGET = 1 << 20
"""The stack a run may use below its entry point when its caller gave no
context (C callers): 1 MiB, and not past the thread's stack
(``THREAD_FLOOR``)."""
STACK_MARGIN = 64 << 10
"""The stack left below the lowest address a run may reach: for the C
library's and the guard's frames, and the report's."""
PTHREAD_ATTR_WORDS = 32
"""256 bytes, more than any libc's ``pthread_attr_t`` (glibc: 56 on
x86-64, 64 on AArch64)."""
THREAD_FLOOR = "revmlir.thread_floor"
"""``revmlir.thread_floor()``: the lowest address a run of the calling
thread whose caller gave no context may reach (see
``_define_thread_floor``)."""
THREAD_FLOOR_CELL = "revmlir.thread_floor.cell"
"""An object's ``thread_local`` word that keeps ``THREAD_FLOOR``'s answer
for its thread, 0 until the thread's first call (see
``_define_thread_floor``)."""
UNKNOWN_FLOOR = 1
"""The floor of a thread whose stack's end is unknown: nonzero, so that
the cell tells it from one not looked up yet, and below any stack."""
SYS_GETTID = {"x86_64": 186, "aarch64": 178, "arm64": 178, "riscv64": 178, "ppc64le": 207, "ppc64": 207, "s390x": 236}
"""Linux's number of the ``gettid`` system call per architecture (the
host's: objects are compiled for it), called through ``syscall``: glibc's
``gettid`` function is 2.30's, and an object that names it links with no
older C library.  Where the number is not known here, the thread's stack
is taken as unknown."""

I64 = ir.IntType(64)

FAIL_ATTRIBUTES = ("noreturn", "cold", "noinline")
"""What ``revmlir.report`` and ``revmlir.fail`` are declared to LLVM.  Not
``nounwind``: the jump leaves the run's frames as an exception would, to a
caller that reads the arrays, and LLVM must keep every store before a
failing check for that caller.  Declared ``nounwind``, a call that never
returns ends a path no one observes: a store to an element that the
passing path overwrites (``y[0] += x[0]; y[0] += x[k]``) was dead to
LLVM's dead-store elimination, since the report, not given the array,
cannot read a ``noalias`` parameter (``revmlir.lowering.aliasing``), and the
run stopped at the failing line without the line before's write.  A call
that may unwind keeps the store (LLVM takes a ``noalias`` parameter's
memory as seen by the caller on unwinding), and costs nothing where checks
pass: the calls are on the cold path."""


def add_guards(module: ir.Module, entries: Mapping[str, int], for_c: bool = False) -> None:
    """Guard the entry points ``entries`` (``<f>_ciface`` → position of the
    error slot among its arguments) and ``_mlir_ciface_<f>``, and define
    ``revmlir.fail``, ``revmlir.poll``, ``revmlir.interrupt_count``,
    ``revmlir.interrupts_seen``, ``revmlir.stack_ok`` and
    ``revmlir.stack_room``, if the module calls them.  ``for_c``: an
    object a C program links, whose threads keep their stack's end
    (``_define_thread_floor``)."""
    fail = module.globals.get(FAIL)
    if not isinstance(fail, ir.Function):
        return
    i32 = ir.IntType(32)
    # std IR defines revmlir.fail, so its error slot arrives as a defined
    # function's array does: the data pointer, then the size
    pointer = fail.function_type.args[0]
    assert isinstance(pointer, ir.PointerType), fail.function_type
    setjmp = ir.Function(module, ir.FunctionType(i32, [pointer]), SETJMP)
    setjmp.attributes.add("returns_twice")
    longjmp = ir.Function(module, ir.FunctionType(ir.VoidType(), [pointer, i32]), LONGJMP)
    longjmp.attributes.add("noreturn")
    _define_fail(fail, longjmp)
    if isinstance(report := module.globals.get(REPORT), ir.Function) and not report.is_declaration:
        # out of line: inlined, the stores of every check's report would
        # be most of the checked code again; and not nounwind (FAIL_ATTRIBUTES)
        for attribute in FAIL_ATTRIBUTES:
            report.attributes.add(attribute)
        report.linkage = "internal"
    if isinstance(poll := module.globals.get(POLL), ir.Function):
        _define_poll(poll, fail)
    for name, word in ((COUNT, COUNT_WORD), (SEEN, SEEN_WORD)):
        if isinstance(function := module.globals.get(name), ir.Function):
            _define_record_word(function, word)
    if isinstance(record := module.globals.get(RECORD), ir.Function):
        _define_record(record)
    stack_ok, room = (module.globals.get(name) for name in (STACK_OK, STACK_ROOM))
    thread_floor = None
    if isinstance(stack_ok, ir.Function) or isinstance(room, ir.Function):
        thread_floor = _define_thread_floor(module, pointer, for_c)
        if isinstance(stack_ok, ir.Function):
            _define_stack_ok(stack_ok)
        if isinstance(room, ir.Function):
            _define_stack_room(room)
    if isinstance(returned := module.globals.get(CALL_RETURNED), ir.Function):
        _define_call_returned(returned)
    for name, slot in entries.items():
        # std functions whose results are not their scalar arguments have
        # only upstream's _mlir_ciface_ entry point
        if name in module.globals:
            guard_entry(module, module.get_global(name), slot, setjmp, pointer, record=True, thread_floor=thread_floor)
        upstream = module.globals.get(MLIR_CIFACE_PREFIX + name.removesuffix(CIFACE_SUFFIX))
        if isinstance(upstream, ir.Function):
            _guard(module, upstream, _upstream_slot, setjmp, pointer, JUMP_WORD, True, thread_floor)


def _upstream_slot(builder: ir.IRBuilder, args: Sequence[ir.Value]) -> tuple[ir.Value, ir.Value]:
    """The error slot's data and size under ``_mlir_ciface_<f>``: its last
    argument points to upstream's descriptor ``{allocated, aligned, offset,
    sizes[1], strides[1]}``; a slot with a null aligned pointer, a negative
    offset or a stride other than 1 has no words
    (``std_to_llvm._check_entry``): the words are written contiguously."""
    descriptor = args[-1]
    fields = ir.LiteralStructType([descriptor.type, descriptor.type, I64, I64, I64])
    aligned = builder.load(builder.gep(descriptor, [_i32(0), _i32(1)], source_etype=fields), typ=descriptor.type)
    offset = builder.load(builder.gep(descriptor, [_i32(0), _i32(2)], source_etype=fields), typ=I64)
    size = builder.load(builder.gep(descriptor, [_i32(0), _i32(3)], source_etype=fields), typ=I64)
    stride = builder.load(builder.gep(descriptor, [_i32(0), _i32(4)], source_etype=fields), typ=I64)
    usable = builder.and_(_not_null(builder, aligned), builder.icmp_signed(">=", offset, ir.Constant(I64, 0)))
    usable = builder.and_(usable, builder.icmp_signed("==", stride, ir.Constant(I64, 1)))
    return builder.gep(aligned, [offset], source_etype=I64), builder.select(usable, size, ir.Constant(I64, 0))


def _not_null(builder: ir.IRBuilder, pointer: ir.Value) -> ir.Value:
    return builder.icmp_unsigned("!=", builder.ptrtoint(pointer, I64), ir.Constant(I64, 0))


def _i32(value: int) -> ir.Constant:
    return ir.Constant(ir.IntType(32), value)


def _word(builder: ir.IRBuilder, base: ir.Value, index: int | ir.Value) -> ir.Value:
    """The address of 64-bit word ``index`` from ``base``."""
    offset = ir.Constant(I64, index) if isinstance(index, int) else index
    return builder.gep(base, [offset], source_etype=I64)


def _record(builder: ir.IRBuilder, data: ir.Value, pointer: ir.Type) -> ir.Value:
    """The record of the guard whose slot's data is ``data``."""
    return builder.inttoptr(builder.load(_word(builder, data, JUMP_WORD), typ=I64), pointer)


def _define_fail(fail: ir.Function, longjmp: ir.Function) -> None:
    """Replace the std body of ``revmlir.fail`` (an ``abort``) by a
    ``longjmp`` to the entry point's guard."""
    builder = _replace_body(fail, *FAIL_ATTRIBUTES)
    word = _word(builder, fail.args[0], JUMP_WORD)
    target = builder.load(word, typ=longjmp.function_type.args[0])
    builder.call(longjmp, [target, _i32(1)])
    builder.unreachable()


def _replace_body(function: ir.Function, *attributes: str) -> ir.IRBuilder:
    take_apart_llvm_blocks(function.blocks)  # dropped: freed now, not by the collector
    function.blocks = []
    for attribute in attributes:
        function.attributes.add(attribute)
    function.attributes.discard("readnone")
    function.linkage = "internal"
    return ir.IRBuilder(function.append_basic_block())


def _define_poll(poll: ir.Function, fail: ir.Function) -> None:
    """Leave the run with ``INTERRUPTED`` in the slot once the count has
    moved from where it was when the run started: one atomic load, a
    compare and a branch per iteration."""
    builder = _replace_body(poll, "alwaysinline")  # it may leave by revmlir.fail (FAIL_ATTRIBUTES)
    data, _, count, seen = poll.args
    value = builder.load_atomic(builder.inttoptr(count, data.type), "monotonic", 8, typ=I64)
    with builder.if_then(builder.icmp_unsigned("!=", value, seen), likely=False):
        builder.store(ir.Constant(I64, INTERRUPTED), data)
        builder.call(fail, list(poll.args[:2]))
        builder.unreachable()
    builder.ret_void()


def _define_record_word(function: ir.Function, word: int) -> None:
    """Word ``word`` of the record (the count's address, or the count the
    call started with)."""
    builder = _replace_body(function, "nounwind", "alwaysinline")
    data = function.args[0]
    builder.ret(builder.load(_word(builder, _record(builder, data, data.type), word), typ=I64))


def _define_record(function: ir.Function) -> None:
    """The record's address, which ``revmlir.stack_ok`` and
    ``revmlir.call_returned`` are then given: each counted call loaded it
    through the slot twice (3 ns of a call that does nothing)."""
    builder = _replace_body(function, "nounwind", "alwaysinline")
    builder.ret(builder.load(_word(builder, function.args[0], JUMP_WORD), typ=I64))


def _define_stack_ok(stack_ok: ir.Function) -> None:
    """Whether the stack pointer is above the record's limit (stacks grow
    down on every target LLVM runs revmlir on) and fewer than
    ``MAX_CALL_DEPTH`` calls that may recurse are running; the call it is
    asked for is then counted (``revmlir.call_returned`` takes it off)."""
    builder = _replace_body(stack_ok, "nounwind")
    data = stack_ok.args[0]
    record = builder.inttoptr(stack_ok.args[-1], data.type)
    here = builder.ptrtoint(builder.alloca(ir.IntType(8)), I64)  # the stack pointer, near enough
    depth = _word(builder, record, DEPTH)
    running = builder.load(depth, typ=I64)
    shallow = builder.icmp_unsigned("<", running, ir.Constant(I64, MAX_CALL_DEPTH))
    limit = builder.load(_word(builder, record, LIMIT), typ=I64)
    ok = builder.and_(builder.icmp_unsigned(">", here, limit), shallow)
    builder.store(builder.add(running, builder.zext(ok, I64)), depth)
    builder.ret(ok)


def _define_stack_room(stack_room: ir.Function) -> None:
    """Whether the bytes asked fit between the stack pointer and the
    record's limit, the one ``revmlir.stack_ok`` compares with."""
    builder = _replace_body(stack_room, "nounwind")
    data, bytes = stack_room.args[0], stack_room.args[-1]
    here = builder.ptrtoint(builder.alloca(ir.IntType(8)), I64)  # the stack pointer, near enough
    limit = builder.load(_word(builder, _record(builder, data, data.type), LIMIT), typ=I64)
    above = builder.icmp_unsigned(">", here, limit)
    room = builder.select(above, builder.sub(here, limit), ir.Constant(I64, 0))
    builder.ret(builder.icmp_unsigned(">", room, bytes))


def _define_thread_floor(module: ir.Module, pointer: ir.Type, for_c: bool) -> ir.Function:
    """``revmlir.thread_floor()``: the lowest address a run whose caller
    gave no context (C callers, XLA's handler) may reach, ``STACK_MARGIN``
    above the low end of the calling thread's stack, as the C library
    reports it, or ``UNKNOWN_FLOOR``.  Linux's does (``pthread_getattr_np``)
    for a thread it started; the process's first thread grows its stack to
    ``RLIMIT_STACK``, a bound the program may lower, so its end is taken as
    unknown there, as elsewhere, and the budget alone bounds the run.

    The guard asks it on entry, before the run, so that no check passes on
    a limit the thread's stack does not have.  The look-up costs 1 µs in a
    thread (it locks the thread and allocates), so an object keeps the
    answer in a ``thread_local`` word (``THREAD_FLOOR_CELL``), a load after
    the thread's first call.  Machine code in Python looks it up at every
    call without a context (only XLA's handler makes those): MCJIT cannot
    allocate thread-local storage."""
    function = ir.Function(module, ir.FunctionType(I64, []), THREAD_FLOOR)
    function.linkage = "internal"
    function.attributes.add("nounwind")
    builder = ir.IRBuilder(function.append_basic_block())
    look_up = _look_up_floor(module, pointer)
    if not for_c or not sys.platform.startswith("linux"):
        builder.ret(builder.call(look_up, []))
        return function
    cell = ir.GlobalVariable(module, I64, THREAD_FLOOR_CELL)
    cell.linkage = "internal"
    cell.storage_class = "thread_local"  # printed where LLVM's syntax puts it
    cell.initializer = ir.Constant(I64, 0)
    known = builder.load(cell, typ=I64)
    with builder.if_then(builder.icmp_unsigned("==", known, ir.Constant(I64, 0)), likely=False):
        builder.store(builder.call(look_up, []), cell)
    builder.ret(builder.load(cell, typ=I64))
    return function


def _look_up_floor(module: ir.Module, pointer: ir.Type) -> ir.Function:
    """``revmlir.thread_floor.look_up()``: ``THREAD_FLOOR``'s answer, asked
    of the C library (cold: an object asks it once per thread)."""
    function = ir.Function(module, ir.FunctionType(I64, []), THREAD_FLOOR + ".look_up")
    function.linkage = "internal"
    for attribute in ("cold", "noinline", "nounwind"):
        function.attributes.add(attribute)
    builder = ir.IRBuilder(function.append_basic_block())
    floor = builder.alloca(I64)
    builder.store(ir.Constant(I64, UNKNOWN_FLOOR), floor)
    if sys.platform.startswith("linux") and (gettid := SYS_GETTID.get(platform.machine())) is not None:
        _thread_floor(module, builder, floor, pointer, gettid)
    builder.ret(builder.load(floor, typ=I64))
    return function


def _thread_floor(module: ir.Module, builder: ir.IRBuilder, floor: ir.Value, pointer: ir.Type, gettid: int) -> None:
    """Store in ``floor`` the low end of the calling thread's stack plus
    ``STACK_MARGIN``, where Linux's C library started the thread (its id,
    system call ``gettid``, is not the process's) and says where its stack
    is; leave it alone otherwise."""
    i32 = ir.IntType(32)

    def declare(name: str, returned: ir.Type, *parameters: ir.Type, var_arg: bool = False) -> ir.Function:
        return ir.Function(module, ir.FunctionType(returned, parameters, var_arg=var_arg), name)

    getpid, syscall = declare("getpid", i32), declare(SYSCALL, I64, I64, var_arg=True)
    self, get = declare("pthread_self", I64), declare("pthread_getattr_np", i32, I64, pointer)
    stack, destroy = (
        declare("pthread_attr_getstack", i32, pointer, pointer, pointer),
        declare("pthread_attr_destroy", i32, pointer),
    )
    assert {f.name for f in (getpid, syscall, self, get, stack, destroy)} <= set(GUARD_FUNCTIONS)
    attributes = builder.alloca(ir.ArrayType(I64, PTHREAD_ATTR_WORDS))
    attributes.align = 16
    words = builder.inttoptr(builder.ptrtoint(attributes, I64), pointer)
    start, size = builder.alloca(I64), builder.alloca(I64)
    builder.store(ir.Constant(I64, 0), start)
    tid = builder.call(syscall, [ir.Constant(I64, gettid)])
    started = builder.icmp_signed("!=", tid, builder.sext(builder.call(getpid, []), I64))
    with builder.if_then(started):
        with builder.if_then(builder.icmp_signed("==", builder.call(get, [builder.call(self, []), words]), _i32(0))):
            addresses = [builder.inttoptr(builder.ptrtoint(a, I64), pointer) for a in (start, size)]
            found = builder.icmp_signed("==", builder.call(stack, [words, *addresses]), _i32(0))
            builder.call(destroy, [words])
            low = builder.load(start, typ=I64)
            known = builder.and_(found, builder.icmp_unsigned("!=", low, ir.Constant(I64, 0)))
            with builder.if_then(known):
                builder.store(builder.add(low, ir.Constant(I64, STACK_MARGIN)), floor)


def _define_call_returned(returned: ir.Function) -> None:
    """One call that may recurse fewer running (``_define_stack_ok``)."""
    builder = _replace_body(returned, "nounwind", "alwaysinline")
    depth = _word(builder, builder.inttoptr(returned.args[-1], returned.args[0].type), DEPTH)
    builder.store(builder.sub(builder.load(depth, typ=I64), ir.Constant(I64, 1)), depth)
    builder.ret_void()


def guard_entry(
    module: ir.Module,
    guard: ir.Function,
    slot: int,
    setjmp: ir.Function,
    pointer: ir.Type,
    word: int = JUMP_WORD,
    record: bool = False,
    thread_floor: ir.Function | None = None,
) -> None:
    """Move the body of entry point ``guard`` (``<f>_ciface``: an array of
    pointers to the arguments) into an internal function, which ``guard``
    now calls under ``_setjmp``, with the ``jmp_buf``'s address in word
    ``word`` of its argument ``slot``; with ``record``, with the whole
    record, filled from the run context (see the module docstring), or
    where there is none, with ``thread_floor``'s floor (``None``: the
    module checks no stack)."""

    def slot_data(builder: ir.IRBuilder, args: Sequence[ir.Value]) -> tuple[ir.Value, ir.Value]:
        (arguments,) = args
        descriptor = builder.load(builder.gep(arguments, [ir.Constant(I64, slot)], source_etype=pointer), typ=pointer)
        data, size = builder.load(descriptor, typ=pointer), builder.load(_word(builder, descriptor, 1), typ=I64)
        return data, builder.select(_not_null(builder, data), size, ir.Constant(I64, 0))

    _guard(module, guard, slot_data, setjmp, pointer, word, record, thread_floor)


def _guard(
    module: ir.Module,
    guard: ir.Function,
    slot_data: Callable[[ir.IRBuilder, Sequence[ir.Value]], tuple[ir.Value, ir.Value]],
    setjmp: ir.Function,
    pointer: ir.Type,
    word: int,
    record: bool,
    thread_floor: ir.Function | None,
) -> None:
    entry = ir.Function(module, guard.function_type, guard.name + UNGUARDED)
    entry.linkage = "internal"
    entry.attributes.add("noinline")
    entry.blocks, guard.blocks = guard.blocks, []
    for block in entry.blocks:
        block.parent = entry
        for instruction in block.instructions:
            for old, new in zip(guard.args, entry.args):
                instruction.replace_usage(old, new)
    builder = ir.IRBuilder(guard.append_basic_block())
    buffer = builder.alloca(ir.ArrayType(I64, RECORD_WORDS if record else JMP_BUF_WORDS))
    buffer.align = 16
    returned = guard.function_type.return_type
    result = None
    if not isinstance(returned, ir.VoidType):
        result = builder.alloca(returned)
        builder.store(ir.Constant(returned, None), result)
    data, size = slot_data(builder, list(guard.args))
    # a slot without the guard's word is the entry point's to refuse
    # (``std_to_llvm._check_entry``), before it runs
    whole, short = guard.append_basic_block("whole"), guard.append_basic_block("short")
    builder.cbranch(builder.icmp_signed(">", size, ir.Constant(I64, word)), whole, short)
    builder.position_at_end(short)
    refused = builder.call(entry, list(guard.args))
    builder.ret_void() if result is None else builder.ret(refused)
    builder.position_at_end(whole)
    target = _word(builder, data, word)
    # an opaque pointer, which llvmlite's bitcast does not give
    words = builder.inttoptr(builder.ptrtoint(buffer, I64), pointer)
    if record:
        _fill(builder, words, builder.load(target, typ=I64), pointer, thread_floor)
    builder.store(words, target)
    jumped = builder.call(setjmp, [words])
    run, done = guard.append_basic_block("run"), guard.append_basic_block("done")
    builder.cbranch(builder.icmp_signed("==", jumped, _i32(0)), run, done)
    builder.position_at_end(run)
    value = builder.call(entry, list(guard.args))
    if result is not None:
        builder.store(value, result)
    builder.branch(done)
    builder.position_at_end(done)
    if record:
        builder.store(ir.Constant(I64, 0), target)
    builder.ret_void() if result is None else builder.ret(builder.load(result, typ=returned))


def _fill(
    builder: ir.IRBuilder, record: ir.Value, context: ir.Value, pointer: ir.Type, thread_floor: ir.Function | None
) -> None:
    """Fill the record from the run ``context``, or where it is 0, with
    ``DEFAULT_STACK_BUDGET`` and ``thread_floor``'s floor."""
    address = builder.ptrtoint(record, I64)
    builder.store(ir.Constant(I64, 0), _word(builder, record, NO_COUNT))
    builder.store(ir.Constant(I64, 0), _word(builder, record, DEPTH))
    builder.store(builder.ptrtoint(_word(builder, record, NO_COUNT), I64), _word(builder, record, COUNT_WORD))
    builder.store(ir.Constant(I64, 0), _word(builder, record, SEEN_WORD))
    given = builder.icmp_unsigned("!=", context, ir.Constant(I64, 0))
    with builder.if_else(given) as (then, otherwise):
        with then:
            words = builder.inttoptr(context, pointer)
            for word, into in ((CONTEXT_COUNT, COUNT_WORD), (CONTEXT_SEEN, SEEN_WORD)):
                builder.store(builder.load(_word(builder, words, word), typ=I64), _word(builder, record, into))
            budget, floor = (
                builder.load(_word(builder, words, word), typ=I64) for word in (CONTEXT_BUDGET, CONTEXT_FLOOR)
            )
            _set_limit(builder, record, address, budget, floor)
        with otherwise:
            floor = ir.Constant(I64, 0) if thread_floor is None else builder.call(thread_floor, [])
            _set_limit(builder, record, address, ir.Constant(I64, DEFAULT_STACK_BUDGET), floor)


def _set_limit(builder: ir.IRBuilder, record: ir.Value, address: ir.Value, budget: ir.Value, floor: ir.Value) -> None:
    """The lowest address a call may start at: ``budget`` below the record
    (0 where that would wrap), and not below ``floor``: a call that starts
    with most of a thread's stack used stops before the stack's end."""
    room = builder.icmp_unsigned(">", address, budget)
    limit = builder.select(room, builder.sub(address, budget), ir.Constant(I64, 0))
    limit = builder.select(builder.icmp_unsigned(">", floor, limit), floor, limit)
    builder.store(limit, _word(builder, record, LIMIT))
