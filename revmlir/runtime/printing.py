"""``revmlir.print``, which native code calls to print (``printf.print_format``
in a ``rev.safe`` region, see ``revmlir.lowering.printing``): it formats the
values with ``str.format``, as the interpreter does, and writes them to
``sys.stdout`` (whatever it is at the time, so redirections and pytest's
capture see native output as they see the interpreter's)."""

from __future__ import annotations

import ctypes
import functools
import struct
import sys
from typing import Any

_PRINT = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_int64))


def _decode(kind: str, words: list[int]) -> Any:
    if kind == "complex":
        return complex(*(struct.unpack("<d", struct.pack("<q", w))[0] for w in words))
    if kind == "f64":
        return struct.unpack("<d", struct.pack("<q", words[0]))[0]
    if kind == "i1":
        return bool(words[0])
    return words[0]


def print_words(words: Any) -> None:
    """Print what the words of ``revmlir.lowering.printing`` say."""
    count, size = words[0], words[1]
    values = [words[2 + i] for i in range(count)]
    start = 2 + count
    raw = b"".join(words[start + i].to_bytes(8, "little", signed=True) for i in range((size + 7) // 8))[:size]
    kinds, template = raw.decode().split("\0", 1)
    decoded: list[Any] = []
    position = 0
    for kind in filter(None, kinds.split(",")):
        width = 2 if kind == "complex" else 1
        decoded.append(_decode(kind, values[position : position + width]))
        position += width
    sys.stdout.write(template.format(*decoded))


@functools.cache
def print_callback() -> Any:
    """The C-callable ``revmlir.print`` (alive for the process)."""
    return _PRINT(print_words)


def print_address() -> int:
    address = ctypes.cast(print_callback(), ctypes.c_void_p).value
    assert address is not None
    return address
