"""LLVM IR text read and verified by LLVM, its refusals said of a function.

llvmlite reports what LLVM's parser or verifier refuses as a bare
``RuntimeError`` whose first line is ``LLVM IR parsing error`` (the line
and column of LLVM's own text follow), or the verifier's words without a
function.  What revmlir makes of a user's ``llvm`` ops can be refused so
(``llvm.bitcast`` of an ``i64`` to an ``f32``, which xDSL's verifier
takes), and every tool printed only that first line.  Every parse and
verification of a module's LLVM IR goes through here, so a refusal is an
``LLVMRejected`` (``revmlir.errors``): a compile failure, as any other
refusal of a module, that names the function LLVM refused, LLVM's reason
and the instruction it read.  The instruction is LLVM's, not an op: its
values are named by the translation, and an op's location does not reach
the text; a tool locates the refusal at the function of that name
(``diagnostics.format_error``).
"""

from __future__ import annotations

import re

import llvmlite.binding as llvm

from revmlir.errors import LLVMRejected

_PARSE_ERROR = re.compile(r"^<string>:(\d+):\d+: error: (.*)$", re.MULTILINE)
"""LLVM's parser's message: the line and column in the text, and why."""

_DEFINITION = re.compile(r'^define [^@]*@("(?:[^"\\]|\\.)*"|[-\w$.]+)\(', re.MULTILINE)
"""The start of a function's definition, and its name as LLVM writes it."""


def parse_llvm(text: str) -> llvm.ModuleRef:
    """``text`` parsed by LLVM; an ``LLVMRejected`` where LLVM refuses it."""
    try:
        return llvm.parse_assembly(text)
    except RuntimeError as error:
        found = _PARSE_ERROR.search(str(error))
        if found is None:
            raise _rejected(text, -1, " ".join(str(error).split()), "") from None
        lines = text.splitlines(keepends=True)
        line = int(found[1])
        instruction = lines[line - 1].strip() if line <= len(lines) else ""
        raise _rejected(text, len("".join(lines[: line - 1])), found[2], instruction) from None


def verify_llvm(module: llvm.ModuleRef) -> None:
    """``module`` verified by LLVM; an ``LLVMRejected`` where LLVM's
    verifier refuses it.  The verifier writes the instruction it refuses
    as LLVM writes the module's own, which finds its function."""
    try:
        module.verify()
    except RuntimeError as error:
        reason, *rest = [line.strip() for line in str(error).splitlines() if line.strip()] or [repr(error)]
        instruction = rest[0] if rest else ""
        functions = [
            f.name
            for f in module.functions
            if instruction and any(str(i).strip() == instruction for b in f.blocks for i in b.instructions)
        ]
        raise _refusal(functions[0] if functions else None, reason, instruction) from None


def _rejected(text: str, offset: int, reason: str, instruction: str) -> LLVMRejected:
    """The refusal of the instruction at ``offset`` of ``text`` (-1 where
    unknown), in the function defined last before it."""
    functions = _DEFINITION.findall(text, 0, offset) if offset >= 0 else []
    return _refusal(functions[-1].strip('"') if functions else None, reason, instruction)


def _refusal(function: str | None, reason: str, instruction: str) -> LLVMRejected:
    """The refusal of ``instruction`` of ``function`` (None where unknown)."""
    subject = f"the code of @{function}" if function is not None else "the code"
    at = f" (at '{instruction}')" if instruction else ""
    return LLVMRejected(f"LLVM refuses {subject}: {reason}{at}", function)
