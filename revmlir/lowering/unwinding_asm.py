"""Inline assembly that LLVM must take as possibly unwinding: LLVM IR's
``asm sideeffect unwind "…"``, which MLIR's ``llvm.inline_asm`` has no
property for, so the op carries it as the unit attribute ``MAY_UNWIND``.

LLVM takes any other inline assembly as ``nounwind`` (InstCombine marks
its call so), and a function whose calls all are as ``nounwind`` too.  The
GPU's ``revmlir.report`` ends its thread with PTX's ``exit`` (inline
assembly, ``revmlir.gpu.nvptx``): inferred ``nounwind`` and never
returning, a failing check's call ended a path that no one observes, and
dead-store elimination dropped a store to a kernel's ``noalias`` array
that the passing path wrote again (``y[i] += x[i]; y[i] += x[i + k]``
stored ``y[i]`` once), where the host reads the array after the launch.
An ``exit`` that may unwind keeps such stores, as the CPU's report, which
leaves by ``longjmp``, keeps them (``revmlir.runtime.guard.FAIL_ATTRIBUTES``).

Both routes to LLVM IR write the keyword: the printer
(``revmlir.lowering.llvm_text``) and xDSL's backend, after which
``mark_unwinding`` gives the calls it wrote the same callee.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from llvmlite import ir
from xdsl.dialects import llvm
from xdsl.dialects.builtin import UnitAttr

MAY_UNWIND = "revmlir.may_unwind"
"""The unit attribute of an ``llvm.inline_asm`` that may unwind."""


def may_unwind(op: llvm.InlineAsmOp) -> llvm.InlineAsmOp:
    """``op``, marked as possibly unwinding."""
    op.attributes[MAY_UNWIND] = UnitAttr()
    return op


def unwinds(op: llvm.InlineAsmOp) -> bool:
    """Whether ``op`` is marked as possibly unwinding (``may_unwind``)."""
    return MAY_UNWIND in op.attributes


class UnwindingInlineAsm(ir.InlineAsm):
    """llvmlite's inline assembly, written with ``unwind`` (after
    ``sideeffect``, where LLVM's grammar puts it)."""

    def descr(self, buf: list[str]) -> None:
        sideeffect = "sideeffect " if self.side_effect else ""
        buf.append(f'asm {sideeffect}unwind "{self.asm}", "{self.constraint}"')


def inline_asm(
    function_type: ir.FunctionType, asm: str, constraints: str, side_effects: bool, unwinding: bool
) -> ir.InlineAsm:
    """llvmlite's inline assembly, unwinding or not."""
    kind = UnwindingInlineAsm if unwinding else ir.InlineAsm
    return kind(function_type, asm, constraints, side_effect=side_effects)


def mark_unwinding(module: ir.Module, marks: Mapping[str, Sequence[bool]]) -> None:
    """Give the inline-assembly calls of ``module`` that xDSL's backend
    converted from ``MAY_UNWIND`` ops their unwinding callee.  ``marks``:
    for a function's ``llvm.inline_asm`` ops, in order, whether each may
    unwind; the backend writes one call for each, in the same order."""
    for function in module.functions:
        if (flags := marks.get(function.name)) is None:
            continue
        calls = [
            instruction
            for block in function.blocks
            for instruction in block.instructions
            if isinstance(instruction, ir.CallInstr) and isinstance(instruction.callee, ir.InlineAsm)
        ]
        assert len(calls) == len(flags), f"@{function.name}: {len(calls)} inline-assembly calls for {len(flags)} ops"
        for call, unwinding in zip(calls, flags, strict=True):
            if unwinding:
                asm = call.callee
                call.callee = UnwindingInlineAsm(asm.function_type, asm.asm, asm.constraint, asm.side_effect)
