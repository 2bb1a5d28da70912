"""The disk cache of GPU compiles.

Everything after the frontend (inversion, lowering, outlining, the
translation to LLVM IR, libdevice, ``-O3`` and NVPTX: 1.6 s of the BA
Jacobian-blocks kernel's 2 s) is a pure function of:

* the verified rev module, printed in xDSL's generic form with every op's
  and block argument's location (a run-time check's message names its op's
  location, and the check table goes with the program);
* what is asked of it: the kernels' names (or the whole module), the
  architecture, the optimisation level and the register bound;
* the compiler: llvmlite's and LLVM's versions (part of every key of
  ``revmlir.runtime.cache``), the libdevice linked in (a SHA-256 of its
  bytes) and revmlir's own code (a SHA-256 of the package's files: a
  source checkout is ``unversioned``, and a changed lowering must never
  load an entry an older one made).

Entries are ``revmlir.runtime.cache``'s ``GPU_PROGRAM`` kind, in the same
directory as the host's objects, under the same seal, size bound and
switch (``REVMLIR_CACHE=0``).  What an entry holds is the caller's
(``revmlir.gpu.program``): this module keys, stores and loads bytes, and
prints and parses the IR attributes a program carries.  Compiles that fail
are not stored: their errors come from compiling again.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from io import StringIO
from pathlib import Path
from typing import TypeVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.printer import Printer

from revmlir.gpu.toolkit import find_libdevice
from revmlir.parsing import make_context
from revmlir.runtime import cache

PACKAGE = Path(__file__).resolve().parents[1]
"""revmlir's own files, whose digest is part of every key."""

T = TypeVar("T")


@functools.cache
def source_digest() -> str:
    """A SHA-256 of every file of the revmlir package (its path and bytes;
    compiled bytecode aside), read once per process: about 170 files, 2 MB,
    in a few milliseconds."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        relative = path.relative_to(PACKAGE)
        if "__pycache__" in relative.parts or not path.is_file():
            continue
        data = path.read_bytes()
        digest.update(f"{relative.as_posix()}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


@functools.cache
def libdevice_digest() -> str:
    """A SHA-256 of the libdevice a compile would link, read once per
    process (``none`` without one: a kernel that calls it then fails to
    compile, and is never loaded from an entry made with one)."""
    path = find_libdevice()
    return hashlib.sha256(path.read_bytes()).hexdigest() if path is not None else "none"


_ESCAPES = str.maketrans(
    {byte: f"\\{byte:02X}" for byte in range(256) if byte < 0x20 or byte > 0x7E or byte == 0x22} | {0x5C: "\\\\"}
)
"""How xDSL's printer writes each byte of a string literal."""


class _Printer(Printer):
    """xDSL's printer with string literals (every location's file name,
    every check's message) escaped in one step rather than printed byte by
    byte, which was a third of a module's printing time."""

    def print_bytes_literal(self, bytestring: bytes) -> None:
        self.print_string('"' + bytestring.decode("latin-1").translate(_ESCAPES) + '"')


def print_ir(item: ModuleOp | Attribute) -> str:
    """``item`` as text that holds all of it: a module in the generic form,
    with the locations of its ops and block arguments."""
    stream = StringIO()
    printer = _Printer(stream=stream, print_generic_format=True, print_debuginfo=True)
    if isinstance(item, ModuleOp):
        printer.print_op(item)
    else:
        printer.print_attribute(item)
    return stream.getvalue()


def parse_attribute(text: str) -> Attribute:
    """An attribute ``print_ir`` printed."""
    return Parser(make_context(), text).parse_attribute()


def key(module: ModuleOp, what: str, options: Sequence[object]) -> str:
    """The entry name for compiling ``module`` into ``what`` (``kernels``,
    ``ptx``) with ``options`` (the names, architecture, …, in the order the
    compile takes them)."""
    return cache.GPU_PROGRAM.key(
        source_digest(), libdevice_digest(), what, *(repr(o) for o in options), print_ir(module)
    )


def cached(
    module: ModuleOp,
    what: str,
    options: Sequence[object],
    compile: Callable[[], T],
    encode: Callable[[T], bytes],
    decode: Callable[[bytes], T],
) -> T:
    """What ``compile()`` gives, loaded from the entry of ``module``,
    ``what`` and ``options`` when there is one (``decode`` of its bytes),
    and otherwise compiled and stored (``encode``).  With the cache off
    nothing is printed, keyed, read or written."""
    if cache.directory() is None:
        return compile()
    name = key(module, what, options)
    if (data := cache.load(name, cache.GPU_PROGRAM)) is not None:
        return decode(data)
    result = compile()
    cache.store(name, encode(result), cache.GPU_PROGRAM)
    return result
