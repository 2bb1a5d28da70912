"""Run-time checks as both engines make them.

The reference interpreter and native code must fail the same runs with the
same errors: they share the tolerance of float checks, and native code
reports a failed check through an *error slot* whose layout, and the table
of checks a lowered module carries, are defined here once.  The lowering
writes them, the native runtime, the GPU runtime and the interpreter (when
it runs lowered std IR) read them.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import AnyFloat, ArrayAttr, IndexType, IntegerType, MemRefType, ModuleOp, StringAttr, i64
from xdsl.ir import Attribute, Operation

from revmlir.errors import ExecutionError, InvertibilityError, LocatedError, format_location

DEFAULT_TOLERANCE = 1e-8
"""Relative and absolute tolerance when a float must equal a known value
(NiLang's default); integers are compared exactly."""

PAYLOAD_SLOTS = 2
JUMP_WORD = 1 + PAYLOAD_SLOTS
ERROR_SLOT = MemRefType(i64, [JUMP_WORD + 1])
"""``[check id, payload…, jump]``: the failing check and up to two values it
saw, as 64-bit patterns, so native errors read like the interpreter's; the
last word is the entry point's, where ``revmlir.fail`` finds the way back
(``revmlir.runtime.guard``)."""
FAIL = "revmlir.fail"
"""``revmlir.fail(error slot)``: leave the run; it never returns."""
REPORT = "revmlir.report"
"""``revmlir.report(error slot, check id, payload words…)``: what a failing
check calls, once, with its id and ``PAYLOAD_SLOTS`` 64-bit words (those its
message does not use are 0); it stores them in the slot and leaves the run
through ``revmlir.fail``.  One function a module instead of the stores
inlined at each of its checks: the failure paths are most of a checked
module's code, and the slot's layout is known in one place."""
REPORT_INPUTS = (ERROR_SLOT, *[i64] * (1 + PAYLOAD_SLOTS))
"""The argument types of ``revmlir.report``."""
CHECKS_ATTR = "rev.checks"
"""The module attribute holding the check table (``CheckTable.entries``)."""
ERRORS: dict[str, type[LocatedError]] = {e.__name__: e for e in (InvertibilityError, ExecutionError)}
"""What a check raises: a broken reversibility rule, or a run leaving
defined behaviour (``revmlir.safety``)."""


@dataclass
class CheckTable:
    """Entries are ``error|op|location|function|payload kinds|message``; the
    message is a ``str.format`` template over the payload (``{branch}``
    names the branch an ``if`` took, from its second payload value)."""

    entries: list[str] = field(default_factory=list[str])

    def register(
        self, op: Operation, message: str, kinds: Sequence[str], function: str, error: type[LocatedError]
    ) -> int:
        where = format_location(op.location) or ""
        self.entries.append(f"{error.__name__}|{op.name}|{where}|{function}|{','.join(kinds)}|{message}")
        return len(self.entries)


def check_error_slot(module: ModuleOp, slot: Sequence[int]) -> None:
    """Raise the error a lowered run reported in its error slot."""
    code = int(slot[0])
    if code == 0:
        return
    table = module.attributes.get(CHECKS_ATTR)
    assert isinstance(table, ArrayAttr)
    entry = table.data[code - 1]
    assert isinstance(entry, StringAttr)
    error, op_name, location, function, kinds, template = entry.data.split("|", 5)
    values = [_decode(kind, int(bits)) for kind, bits in zip(filter(None, kinds.split(",")), slot[1:])]
    branch = "then" if len(values) > 1 and values[1] else "else"
    message = template.format(*(repr(v) for v in values), branch=branch)
    raise ERRORS[error](message, op_name=op_name, location=location or None, function=function)


def _decode(kind: str, bits: int) -> float | int | bool:
    if kind == "f64":
        return struct.unpack("<d", struct.pack("<q", bits))[0]
    if kind == "i1":
        return bool(bits)
    return bits


def payload_kind(type: Attribute) -> str | None:
    """How a value of ``type`` travels as one 64-bit payload word (``i1``,
    ``i64`` or ``f64``), or ``None`` when it does not fit in one."""
    if isinstance(type, IndexType):
        return "i64"
    if isinstance(type, IntegerType):
        return "i1" if type.width.data == 1 else "i64"
    if isinstance(type, AnyFloat):
        return "f64"
    return None
