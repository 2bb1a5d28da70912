"""LLVM IR as text, with what a compile of device code reads of each
function it defines: the functions it calls, at how many places, whether
LLVM's inliner may inline it anywhere, its linkage and ``noinline``.

``revmlir.gpu.program`` decides from these which functions are inlined
before the pipeline and which of libdevice's are pure
(``_inline_single_calls``, ``_called_repeatedly``).  Device code reaches it
printed from ``llvm`` ops (``revmlir.lowering.llvm_text``, which counts as
it prints) or as an llvmlite module (``of_llvmlite``): both give an
``LLVMCode``, so that neither is walked again, nor LLVM's parsed module
read through its C API (BA's 6,900 instructions took 88 ms).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from llvmlite import ir


@dataclass(frozen=True)
class FunctionCalls:
    calls: Counter[str]
    """How many times the function calls each function it calls by name."""
    inlinable: bool
    """Whether LLVM's inliner may inline it whatever its caller: it has no
    ``alloca`` of a run-time size or outside its entry block, which the
    inliner refuses unless simplification removed it or the call gives its
    size, so that a call in a loop does not grow the stack on every
    iteration."""


@dataclass(frozen=True)
class LLVMCode:
    text: str
    """LLVM IR, without metadata numbered from ``metadata`` on."""
    functions: dict[str, FunctionCalls]
    """What each function the text defines calls."""
    internal: frozenset[str]
    """The functions of internal linkage."""
    noinline: frozenset[str]
    """The functions marked ``noinline``."""
    metadata: int = 0
    """How many numbered metadata nodes the text holds."""


def global_reference(name: str) -> str:
    """A function's reference in LLVM IR, ``@"name"``, written as llvmlite
    writes it (a quote and a backslash as ``\\22`` and ``\\5c``): quoted,
    as device functions' names may hold ``$``."""
    return '@"' + name.replace("\\", "\\5c").replace('"', "\\22") + '"'


def of_llvmlite(module: ir.Module) -> LLVMCode:
    """An llvmlite module as text, with its functions' calls."""
    defined = [f for f in module.functions if not f.is_declaration]
    return LLVMCode(
        str(module),
        {f.name: _function_calls(f) for f in defined},
        frozenset(f.name for f in defined if f.linkage == "internal"),
        frozenset(f.name for f in module.functions if "noinline" in f.attributes),
        len(module.metadata),
    )


def _function_calls(function: ir.Function) -> FunctionCalls:
    calls: Counter[str] = Counter()
    inlinable = True
    for block in function.blocks:
        for instruction in block.instructions:
            if isinstance(instruction, ir.CallInstr) and isinstance(instruction.callee, ir.Function):
                calls[instruction.callee.name] += 1
            elif isinstance(instruction, ir.AllocaInstr):
                entry = block is function.entry_basic_block
                inlinable &= entry and all(isinstance(count, ir.Constant) for count in instruction.operands)
    return FunctionCalls(calls, inlinable)
