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

Nothing below the entry point is unwound: memory the run allocated itself
(ancilla arrays on the heap, stack buffers of local stacks) is not freed
when a check fails.  The buffers of stacks passed as arguments are the
caller's and are given back as usual.
"""

from __future__ import annotations

from collections.abc import Mapping

from llvmlite import ir

from revmlir.runtime_checks import FAIL, JUMP_WORD

JMP_BUF_WORDS = 64
"""512 bytes, more than any libc's ``jmp_buf`` (glibc: 200 on x86-64, 312
on AArch64)."""
UNGUARDED = ".unguarded"


def add_guards(module: ir.Module, entries: Mapping[str, int]) -> None:
    """Guard the entry points ``entries`` (symbol → position of the error
    slot among its arguments) and define ``revmlir.fail``, if the module
    calls it."""
    fail = module.globals.get(FAIL)
    if not isinstance(fail, ir.Function):
        return
    i32 = ir.IntType(32)
    # std IR defines revmlir.fail, so its error slot arrives as a defined
    # function's array does: the data pointer, then the size
    pointer = fail.function_type.args[0]
    assert isinstance(pointer, ir.PointerType), fail.function_type
    setjmp = ir.Function(module, ir.FunctionType(i32, [pointer]), "_setjmp")
    setjmp.attributes.add("returns_twice")
    longjmp = ir.Function(module, ir.FunctionType(ir.VoidType(), [pointer, i32]), "longjmp")
    longjmp.attributes.add("noreturn")
    _define_fail(fail, longjmp)
    for name, slot in entries.items():
        # std functions whose results are not their scalar arguments have
        # only upstream's _mlir_ciface_ entry point, which is not guarded
        if name in module.globals:
            guard_entry(module, module.get_global(name), slot, setjmp, pointer)


def _define_fail(fail: ir.Function, longjmp: ir.Function) -> None:
    """Replace the std body of ``revmlir.fail`` (an ``abort``) by a
    ``longjmp`` to the entry point's guard."""
    fail.blocks = []
    for attribute in ("noreturn", "cold", "noinline", "nounwind"):
        fail.attributes.add(attribute)
    fail.attributes.discard("readnone")
    fail.linkage = "internal"
    builder = ir.IRBuilder(fail.append_basic_block())
    word = builder.gep(fail.args[0], [ir.Constant(ir.IntType(64), JUMP_WORD)], source_etype=ir.IntType(64))
    target = builder.load(word, typ=longjmp.function_type.args[0])
    builder.call(longjmp, [target, ir.Constant(ir.IntType(32), 1)])
    builder.unreachable()


def guard_entry(
    module: ir.Module, guard: ir.Function, slot: int, setjmp: ir.Function, pointer: ir.Type, word: int = JUMP_WORD
) -> None:
    """Move the body of entry point ``guard`` into an internal function,
    which ``guard`` now calls under ``_setjmp``, with the ``jmp_buf``'s
    address in word ``word`` of its argument ``slot``."""
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
    buffer = builder.alloca(ir.ArrayType(ir.IntType(64), JMP_BUF_WORDS))
    buffer.align = 16
    (arguments,) = guard.args
    i64 = ir.IntType(64)
    address = builder.gep(arguments, [ir.Constant(i64, slot)], source_etype=pointer)
    descriptor = builder.load(address, typ=pointer)
    data = builder.load(descriptor, typ=pointer)
    target = builder.gep(data, [ir.Constant(i64, word)], source_etype=i64)
    builder.store(builder.bitcast(buffer, pointer), target)
    jumped = builder.call(setjmp, [builder.bitcast(buffer, pointer)])
    run, done = guard.append_basic_block("run"), guard.append_basic_block("done")
    builder.cbranch(builder.icmp_signed("==", jumped, ir.Constant(ir.IntType(32), 0)), run, done)
    builder.position_at_end(run)
    builder.call(entry, [arguments])
    builder.branch(done)
    builder.position_at_end(done)
    builder.ret_void()
