"""Calls of LLVM intrinsics that a source writes (``llvm.call_intrinsic``),
checked before the module reaches LLVM.

The translation keeps a source's ``llvm`` ops as they are, so an intrinsic
called with types it does not take (``llvm.fabs.i32``, ``llvm.smax.f64``)
reached LLVM's verifier, whose "Intrinsic has incorrect return type!" names
neither the op nor the line.  Which types each of LLVM's hundreds of
intrinsics takes is LLVM's knowledge, so rather than a copy of it that would
drift, each distinct call signature is verified by LLVM alone, in a module of
that one call, and a refusal of its types is a located error at the op.
"""

from __future__ import annotations

import functools

from xdsl.dialects import llvm
from xdsl.ir import Attribute
from xdsl.utils.exceptions import LLVMTranslationException, PassFailedException

from revmlir.errors import describe_op

TYPE_REFUSALS = ("Intrinsic has incorrect", "Intrinsic name not mangled correctly")
"""How LLVM's verifier begins a refusal of an intrinsic's types; its other
refusals may depend on the operands' values, which the check does not
have (it passes zeros, so that an ``immarg`` operand is a constant)."""


@functools.lru_cache(maxsize=256)
def _llvm_refusal(name: str, operands: tuple[str, ...], result: str) -> str | None:
    """What LLVM's verifier says against the types of a call of intrinsic
    ``name`` with these LLVM types (``result`` ``void`` for none), or None
    if it takes them.  LLVM is loaded here, not at import: a tool that emits
    a header or a diagnostic never needs it."""
    import llvmlite.binding as binding

    arguments = ", ".join(f"{t} zeroinitializer" for t in operands)
    call = f'call {result} @"{name}"({arguments})'
    body = f"{call}\n  ret void" if result == "void" else f"%r = {call}\n  ret {result} %r"
    text = f'declare {result} @"{name}"({", ".join(operands)})\ndefine {result} @caller() {{\n  {body}\n}}\n'
    try:
        binding.parse_assembly(text).verify()
    except RuntimeError as error:
        refusal = str(error).splitlines()[0].strip()
        return refusal if refusal.startswith(TYPE_REFUSALS) else None
    return None


def _llvm_type_text(type: Attribute) -> str | None:
    from xdsl.backend.llvm.convert_type import convert_type

    try:
        return str(convert_type(type))
    except LLVMTranslationException:
        return None


def check_intrinsic_call(op: llvm.CallIntrinsicOp, operands: list[Attribute], results: list[Attribute]) -> None:
    """A located ``PassFailedException`` where LLVM refuses ``op``'s call
    (``operands`` and ``results``: its types as the translation gives them
    to LLVM).  Types LLVM has no spelling for are left to the checks of the
    ops that made them."""
    texts = [_llvm_type_text(t) for t in (*operands, *results)]
    if any(t is None for t in texts) or len(results) > 1:
        return
    typed = [t for t in texts if t is not None]
    arguments, result = tuple(typed[: len(operands)]), (typed[-1] if results else "void")
    name = op.intrin.data
    if (refusal := _llvm_refusal(name, arguments, result)) is not None:
        signature = f"({', '.join(arguments)}) -> {result}"
        raise PassFailedException(f"{describe_op(op)}: LLVM refuses {name} on {signature}: {refusal}")
