"""``printf.print_format`` in native code: a call of ``revmlir.print``.

Native code has no Python ``str`` to format numbers with, and C's ``printf``
formats them otherwise (``%g`` is not ``repr``), so a print passes its values
and its format to the host, which formats them as the interpreter does
(``str.format``) and writes them to ``sys.stdout`` (``revmlir.runtime.printing``).

The call takes one ``memref<N x i64>`` built on the stack: the number of
value words, the number of text bytes, the values' 64-bit patterns (two
words for a complex number), then the text, eight bytes a word, little
endian: the values' kinds joined by commas, a NUL, and the format.
"""

from __future__ import annotations

from xdsl.dialects import memref, printf
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import PassFailedException

from revmlir.errors import describe_op
from revmlir.lowering.emitter import Emitter
from revmlir.runtime_checks import payload_kind

PRINT = "revmlir.print"
"""``revmlir.print(words)``: format and print; the host defines it."""


def lower_print(code: Emitter, op: printf.PrintFormatOp) -> None:
    """The words ``op`` prints and the call that prints them, at the
    builder's insertion point."""
    kinds: list[str] = []
    values: list[SSAValue] = []
    for operand in op.format_vals:
        value = code.get(operand)
        kind = payload_kind(value.type)
        if kind is None:
            raise PassFailedException(f"{describe_op(op)} cannot print a {value.type} in native code")
        kinds.append(kind)
        values.extend(code.words(value, op))
    text = (",".join(kinds) + "\0" + op.format_str.data).encode()
    padded = text + b"\0" * (-len(text) % 8)
    words: list[SSAValue | int] = [len(values), len(text), *values]
    words.extend(int.from_bytes(padded[i : i + 8], "little", signed=True) for i in range(0, len(padded), 8))
    buffer = code.emit(memref.AllocaOp.get(i64, shape=[len(words)]), op).results[0]
    for index, word in enumerate(words):
        value = code.const(word, i64, op) if isinstance(word, int) else word
        code.emit(memref.StoreOp.get(value, buffer, [code.const(index, IndexType(), op)]), op)
    code.call_runtime(PRINT, [buffer], [], op)
