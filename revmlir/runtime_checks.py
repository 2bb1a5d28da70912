"""Run-time checks as both engines make them.

The reference interpreter and native code must fail the same runs with the
same errors: they share the tolerance of float checks, and native code
reports a failed check through an *error slot* whose layout, and the table
of checks a lowered module carries, are defined here once.  The lowering
writes them, the native runtime, the GPU runtime and the interpreter (when
it runs lowered std IR) read them.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    ComplexType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Operation

from revmlir.errors import ExecutionError, InvertibilityError, LocatedError, format_location, source_op_name

DEFAULT_TOLERANCE = 1e-8
"""Relative and absolute tolerance when a float must equal a known value
(NiLang's default); integers are compared exactly."""

T = TypeVar("T")

PAYLOAD_SLOTS = 4
JUMP_WORD = 1 + PAYLOAD_SLOTS
ERROR_WORDS = JUMP_WORD + 1
"""The words of a host error slot (``REVMLIR_ERROR_WORDS`` in a C header)."""
ERROR_SLOT = MemRefType(i64, [ERROR_WORDS])
"""``[check id, payload…, jump]``: the failing check and the values it saw
as 64-bit patterns, up to four words (a complex number takes two: two
complex numbers compared fill it), so
native errors read like the interpreter's; the last word is the entry
point's, where ``revmlir.fail`` finds the way back
(``revmlir.runtime.guard``)."""
SHORT_ERROR_SLOT = -2
"""The id a C entry point leaves in word 0 of an error slot of fewer than
``ERROR_WORDS`` words (where it has a word 0), returning without running:
its guard would read and write the slot's last word
(``revmlir.runtime.guard``).  Not in the check table: no op of the
program failed, and Python's calls always pass a whole slot."""
SHAPE_MISMATCH = -3
"""The id a C entry point leaves in the error slot, returning without
running, where an array's size differs from its static type's: the
payload is the argument's position, the dimension, the type's size and
the size passed.  Not in the check table: Python's calls refuse such an
array before they call (``ArgumentTypeError``)."""
NEGATIVE_SIZE = -4
"""The id a C entry point leaves where a dynamic size of an array is
negative (the argument's position, the dimension, the size): the code's
index checks take sizes as counts, so a negative one let every index pass.
Not in the check table, as the ids below: a numpy array's sizes, and
everything else these refuse, are always right."""
ARRAY_TOO_LARGE = -5
"""Where the product of an array's nonzero sizes, in bytes, passes
``INT64_MAX`` (numpy's own limit): the position, the dimension where it
does, the size; the code's index arithmetic would wrap."""
NULL_DATA = -6
"""Where an array of at least one element has a null data pointer: the
position and the descriptor's field (0 for ``revmlir_memrefN``'s
``data``; upstream's: 0 allocated, 1 aligned)."""
NEGATIVE_OFFSET = -7
"""Where an upstream descriptor's offset is negative: the position and
the offset."""
STRIDE_MISMATCH = -8
"""Where an upstream descriptor's strides are not the row-major ones its
identity layout says: the position, the dimension, the row-major stride
and the stride given."""
OUT_OF_DOMAIN = -9
"""Where a scalar is outside its type's values (``FINITE_ARGUMENTS_ATTR``):
the position and the value as a ``double``'s bits."""
BAD_STACK = -10
"""Where a stack's header ``[buffer, size, capacity]`` is inconsistent:
a size below 0 or above the capacity, a capacity whose bytes pass
``INT64_MAX``, or a null buffer of a nonzero capacity (the position, the
size, the capacity, the buffer's address); a push or pop would write or
read outside the buffer."""
STACK_ARGUMENTS_ATTR = "rev.stack_arguments"
"""On a lowered function some of whose arguments are stacks, lowered to
their header (a ``memref<3xi64>`` like any other): a dense ``i64`` array
of, per argument, the bytes of a stack's element, 0 for any other."""
FINITE_ARGUMENTS_ATTR = "rev.finite_arguments"
"""On a lowered function some of whose arguments are tropical or log
numbers, lowered to the float they store: their positions, a dense
``i64`` array (upstream MLIR's parser reads it).  Such a float
must be finite (-inf, the tropical zero, has no inverse; a log number is
the logarithm of a positive, finite real, decision 152): Python's calls
refuse any other (``revmlir.runtime.arguments``), the C entry points
with ``OUT_OF_DOMAIN``."""
ELEMENT_WORD = 1 + PAYLOAD_SLOTS
"""Where a GPU launch's shared slot holds the failing thread's element,
after the check id and the payload."""
GPU_ERROR_WORDS = ELEMENT_WORD + 3
"""The shared slot of a GPU launch: ``[check id, payload…, element,
unused, unused]``."""
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
ALLOCATION_CHECK_ATTR = "rev.allocation_check"
"""On a ``memref.alloc`` of native code: the id of the check that stops
the run with ``CANNOT_ALLOCATE`` where ``malloc`` gives no memory
(``rev-host-safety`` registers it, ``convert-std-to-llvm`` tests the
pointer ``malloc`` returns)."""
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
        self.entries.append(f"{error.__name__}|{source_op_name(op)}|{where}|{function}|{','.join(kinds)}|{message}")
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
    words = iter(int(bits) for bits in slot[1 : 1 + PAYLOAD_SLOTS])
    values = [_decode(kind, words) for kind in filter(None, kinds.split(","))]
    raise ERRORS[error](format_message(template, values), op_name=op_name, location=location or None, function=function)


def check_table_errors(module: ModuleOp) -> None:
    """Nothing if ``module``'s check table (where it has one) is one
    ``CheckTable`` could have written, else the ``TypeError`` or
    ``ValueError`` of a table of another shape: an array of strings, each
    of six fields, naming an error of ``ERRORS``, payload kinds that fit
    the error slot, and a message whose fields are payload values or
    ``{branch}``.  For a table read back from elsewhere (the GPU compile
    cache): a failed check then never meets an entry it cannot read."""
    table = module.attributes.get(CHECKS_ATTR)
    if table is None:
        return
    if not isinstance(table, ArrayAttr):
        raise TypeError(f"a check table is {table.name}, not an array")
    for entry in table.data:
        if not isinstance(entry, StringAttr):
            raise TypeError(f"a check table holds {entry.name}, not a string")
        fields = entry.data.split("|", 5)
        kinds = list(filter(None, fields[4].split(","))) if len(fields) == 6 else []
        if (
            len(fields) != 6
            or fields[0] not in ERRORS
            or not set(kinds) <= set(PAYLOAD_KINDS)
            or sum(map(payload_words, kinds)) > PAYLOAD_SLOTS
        ):
            raise ValueError(f"not a check of a check table: {entry.data!r}")
        try:
            format_message(fields[5], [0] * len(kinds))
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as error:
            raise ValueError(f"a check's message is not a template of its payload: {entry.data!r}") from error


def format_message(template: str, values: Sequence[object]) -> str:
    r"""A check's message: its template over the values it saw, as their
    ``repr``\ s (``{branch}`` names the branch an ``if`` took, from its
    second value).  Both engines format their messages with it, so a check
    reads the same on both whatever the values' types."""
    branch = "then" if len(values) > 1 and values[1] else "else"
    return template.format(*(repr(v) for v in values), branch=branch)


def literal_template(text: str) -> str:
    """``text`` as a template that formats to itself, for a message fixed
    when the check is made (an assertion's, the inverter's)."""
    return text.replace("{", "{{").replace("}", "}}")


def element_template(count: int, first: int = 0) -> str:
    """``[{first}, {first + 1}, …]``: the indices of an element, payload
    values ``first`` on, as a message shows them."""
    return "[" + ", ".join(f"{{{k}}}" for k in range(first, first + count)) + "]"


def shows_indices(rank: int, value_words: int = 0) -> bool:
    """Whether a check's payload holds an element's ``rank`` indices after
    ``value_words`` words of values; where it does not (past four words),
    the message of the check says "an element" on both engines."""
    return value_words + rank <= PAYLOAD_SLOTS


ANCILLA_FREED = "ancilla freed holding {0}, expected {1}"
POPPED_OTHER = "popped {0}, but the live value is {1}"


def array_freed(rank: int) -> str:
    """The message of an ancilla array freed holding a value other than
    zero: the value (a real, one word), then its indices where they fit
    beside it (``freed_element``)."""
    where = element_template(rank, 1) if shows_indices(rank, 1) else "an element"
    return f"array freed holding {{0}} at {where}, expected zeros"


def freed_element(value: T, indices: Sequence[T]) -> list[T]:
    """The payload of ``array_freed``: the value, and its indices where
    they fit."""
    return [value, *shown_indices(indices, 1)]


def shape_mismatch(shape: Sequence[int]) -> str:
    """The message of an ancilla array freed with sizes other than its
    own, whose type has ``shape`` (``DYNAMIC_INDEX`` for a size known at
    run time): the payload holds the dynamic sizes, the array's, then the
    ones the free restates, or none where they do not fit."""
    dynamic = sum(1 for size in shape if size == DYNAMIC_INDEX)
    if not shows_indices(2 * dynamic):
        return "array freed with sizes other than its own"
    numbers = iter(range(2 * dynamic))

    def text() -> str:
        return "[" + ", ".join(f"{{{next(numbers)}}}" if size == DYNAMIC_INDEX else str(size) for size in shape) + "]"

    array = text()
    return f"array of shape {array} freed as one of shape {text()}"


def borrowed_element(rank: int, reading: bool, take: str) -> str:
    """The message of an element read, or taken, while ``take`` (the op
    described) has it borrowed: its indices, where they fit."""
    element = f"element {element_template(rank)}" if shows_indices(rank) else "an element"
    if not reading:
        return f"{element} is already borrowed by {take}"
    return f"reads {element} while it is borrowed by {take}; a shared read/write is not reversible"


def shown_indices(indices: Sequence[T], value_words: int = 0) -> list[T]:
    """The indices (or sizes) a check's payload carries after
    ``value_words`` words of values: all of them, or none where they do not
    fit (``shows_indices``)."""
    return list(indices) if shows_indices(len(indices), value_words) else []


def _decode(kind: str, words: Iterator[int]) -> float | int | bool | complex:
    if kind == "complex":
        return complex(_decode("f64", words), _decode("f64", words))
    bits = next(words)
    if kind in ("f64", LOG_KIND):
        return shown(kind, struct.unpack("<d", struct.pack("<q", bits))[0])
    if kind == "i1":
        return bool(bits)
    return bits


LOG_KIND = "log"
"""The payload kind of a log number: its logarithm travels as an ``f64``
word, and a message shows the number it stands for (``shown``)."""
PAYLOAD_KINDS = ("i1", "i64", "f64", "complex", LOG_KIND)
"""How values travel in an error slot's payload (``payload_kind``, and
``LOG_KIND``, which the caller of a check names)."""


def shown(kind: str | None, value: T) -> T | float:
    """``value`` as a message shows a value of payload ``kind``: a log
    number as the positive real the program wrote (``exp`` of its
    logarithm, infinite beyond ``f64``), anything else as it is.  Both
    engines show it so: the interpreter before it formats, native code
    when it reads the error slot."""
    if kind != LOG_KIND:
        return value
    assert isinstance(value, float)
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


def payload_kind(type: Attribute) -> str | None:
    """How a value of ``type`` travels in the payload: ``i1``, ``i64`` or
    ``f64`` as one 64-bit word, ``complex`` as two ``f64`` words (its
    parts), or ``None`` where it cannot."""
    if isinstance(type, IndexType):
        return "i64"
    if isinstance(type, IntegerType):
        return "i1" if type.width.data == 1 else "i64"
    if isinstance(type, AnyFloat):
        return "f64"
    if isinstance(type, ComplexType):
        return "complex"
    return None


def payload_words(kind: str) -> int:
    """The 64-bit words a value of payload ``kind`` takes."""
    return 2 if kind == "complex" else 1


def payload_kinds(types: Sequence[Attribute]) -> list[str] | None:
    """How values of ``types`` travel together in one payload
    (``payload_kind``), or ``None`` where one cannot travel or they take
    more than its ``PAYLOAD_SLOTS`` words."""
    kinds = [payload_kind(type) for type in types]
    known = [kind for kind in kinds if kind is not None]
    if len(known) < len(kinds) or sum(map(payload_words, known)) > PAYLOAD_SLOTS:
        return None
    return known
