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
  bytes), revmlir's own code (``revmlir.runtime.cache.source_digest``, a
  SHA-256 of the package's modules, whatever its version says: a changed
  lowering must never load an entry an older one made) and xDSL's version
  (its ``convert_module``, printer and parser run after the key is taken;
  an xDSL without metadata, a source checkout, is a digest of its
  modules).  Where a digest cannot be taken (``cache.package_digest``
  warns once) no program is keyed, loaded or stored.

Entries are ``revmlir.runtime.cache``'s ``GPU_PROGRAM`` kind, in the same
directory as the host's objects, under the same seal, size bound and
switch (``REVMLIR_CACHE=0``).  What an entry holds is the caller's
(``revmlir.gpu.program``): this module keys, stores and loads bytes, and
prints and parses the IR attributes a program carries.  Compiles that fail
are not stored: their errors come from compiling again.  An entry that
passes its seal but does not decode (one this revmlir did not write, or a
bug in ``encode``) is a miss: it is deleted and compiled again.

ptxas's cubins (``cubin``, ``rev-translate --emit=cubin``) are entries of
the ``CUBIN`` kind, under the same rules, keyed by what ptxas's output is a
function of: the PTX, the architecture, ptxas's options and which ptxas it
is, as ``ptxas --version`` names it.  What ``ptxas -v`` reports of each
function's registers, stack frame and spills (``resource_usage``) is an
entry of the ``USAGE`` kind, keyed alike and by revmlir's own code, which
reads the report.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import json
from collections.abc import Callable, Sequence
from io import StringIO
from pathlib import Path
from typing import TypeVar

import xdsl
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from revmlir.gpu import toolkit
from revmlir.parsing import make_context
from revmlir.runtime import cache

XDSL = Path(xdsl.__file__).resolve().parent
"""xDSL's files, whose digest stands for its version when it has none."""

T = TypeVar("T")

UNREADABLE = (ValueError, KeyError, TypeError, ParseError, VerifyException)
"""What a ``decode`` raises for sealed bytes that are not an entry it reads:
``json``'s errors and undecodable UTF-8 (``ValueError``s), a field missing
(``KeyError``), one more or a value out of its range (``ValueError``) or
of another kind (``TypeError``), an attribute that does not parse or is
followed by more text (``ParseError``) or is refused as it is built
(``VerifyException``).  Anything else is a bug, and propagates rather
than turning every load into a silent recompile."""


@functools.cache
def xdsl_version() -> str | None:
    """xDSL's version, from its metadata (``pyproject.toml`` allows any
    patch release); an xDSL without metadata, imported from a source
    checkout, may be edited under any version, so it is its modules'
    digest (None where that cannot be taken)."""
    try:
        return importlib.metadata.version("xdsl")
    except importlib.metadata.PackageNotFoundError:
        digest = cache.package_digest(XDSL, "GPU programs")
        return f"unversioned {digest}" if digest is not None else None


@functools.cache
def libdevice_digest() -> str:
    """A SHA-256 of the libdevice a compile would link, read once per
    process (``none`` without one: a kernel that calls it then fails to
    compile, and is never loaded from an entry made with one)."""
    path = toolkit.find_libdevice()
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
    """An attribute ``print_ir`` printed, and nothing after it: text past
    the attribute is a ``ParseError`` (``UNREADABLE``), not dropped, so a
    damaged entry never reads as its first attribute."""
    parser = Parser(make_context(), text)
    attribute = parser.parse_attribute()
    # xDSL's Parser has no public end-of-input check: its public ``pos``,
    # where the next token starts (whitespace and comments skipped), is the
    # text's end only when nothing but the end of input follows
    if parser.pos < len(text):
        parser.raise_error("text after the attribute")
    return attribute


def expect(value: object, kind: type[T]) -> T:
    """``value``, a field read from an entry, if it is a ``kind``; else
    the ``TypeError`` of an entry of another shape (``UNREADABLE``).  A
    boolean is no integer here, though Python's ``bool`` is an ``int``:
    JSON tells ``true`` from ``1``, and an entry is decoded exactly."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise TypeError(f"an entry holds {type(value).__name__} where {kind.__name__} is read")
    return value


def record(value: object, names: Sequence[str]) -> dict[str, object]:
    """``value``, a record read from an entry, if it holds exactly the
    fields ``names``: one missing is a ``KeyError``, one more a
    ``ValueError`` (``UNREADABLE``), as an entry of another format."""
    fields = expect(value, dict)
    if missing := [name for name in names if name not in fields]:
        raise KeyError(f"an entry lacks {', '.join(missing)}")
    if extra := sorted(set(fields) - set(names)):
        raise ValueError(f"an entry holds {', '.join(map(str, extra))} besides {', '.join(names)}")
    return fields


def key(module: ModuleOp, what: str, options: Sequence[object]) -> str | None:
    """The entry name for compiling ``module`` into ``what`` (``kernels``,
    ``ptx``) with ``options`` (the names, architecture, …, in the order the
    compile takes them); None where revmlir's or xDSL's digest cannot be
    taken."""
    source, compiler = cache.source_digest(), xdsl_version()
    if source is None or compiler is None:
        return None
    return cache.GPU_PROGRAM.key(
        source, compiler, libdevice_digest(), what, *(repr(o) for o in options), print_ir(module)
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
    and otherwise compiled and stored (``encode``).  With the cache off or
    unusable (refused, or not to be made) nothing is printed, keyed, read
    or written: the key is a tenth of a second for a large kernel."""
    return _cached(cache.GPU_PROGRAM, lambda: key(module, what, options), compile, encode, decode)


@functools.cache
def _ptxas_version(ptxas: Path, signature: tuple[int, int, int]) -> str | None:
    """``toolkit.ptxas_version``, asked once per process and binary (its
    inode, size and modification time: one replaced meanwhile is asked
    again)."""
    return toolkit.ptxas_version(ptxas)


def ptxas_identity() -> str | None:
    """The ptxas ``toolkit.emit_cubin`` would run, as its version names it;
    None when there is none, or it does not say which it is."""
    ptxas = toolkit.find_ptxas()
    if ptxas is None:
        return None
    try:
        info = ptxas.stat()
    except OSError:
        return None
    return _ptxas_version(ptxas, (info.st_ino, info.st_size, info.st_mtime_ns))


def _assembly_key(kind: cache.Kind, options: Sequence[str], ptx: str, arch: str, *reader: str) -> str | None:
    """The entry name of what ptxas gives of ``ptx`` for ``arch`` with
    ``options``: those, which ptxas it is (None when it cannot say: its
    output is not cached) and what ``reader`` names of the code that makes
    the entry of ptxas's output."""
    identity = ptxas_identity()
    return kind.key(identity, arch, repr(tuple(options)), *reader, ptx) if identity is not None else None


def cubin_key(ptx: str, arch: str) -> str | None:
    """The entry name of ptxas's cubin of ``ptx`` for ``arch``."""
    return _assembly_key(cache.CUBIN, toolkit.CUBIN_OPTIONS, ptx, arch)


def usage_key(ptx: str, arch: str) -> str | None:
    """The entry name of what ptxas reports of the functions of ``ptx``
    assembled for ``arch``.  The entry is revmlir's reading of ptxas's
    text (``toolkit.resource_usage``), so revmlir's own code is part of
    the key, as it is of a program's: a changed reading never loads what
    an older one read (None where its digest cannot be taken)."""
    source = cache.source_digest()
    return _assembly_key(cache.USAGE, toolkit.USAGE_OPTIONS, ptx, arch, source) if source is not None else None


ELF_MAGIC = b"\x7fELF"


def _cubin(data: bytes) -> bytes:
    """A cubin entry's bytes, if they are an ELF file, as every cubin is."""
    if not data.startswith(ELF_MAGIC):
        raise ValueError("a cubin entry holds no ELF file")
    return data


def cubin(ptx: str, arch: str = toolkit.DEFAULT_ARCH) -> bytes:
    """``toolkit.emit_cubin(ptx, arch)``, loaded from its entry when an
    earlier assembly stored one, and otherwise assembled by ptxas and
    stored; ptxas's refusal is raised each time, never stored."""
    return _cached(cache.CUBIN, lambda: cubin_key(ptx, arch), lambda: toolkit.emit_cubin(ptx, arch), bytes, _cubin)


USAGE_FIELDS = tuple(field.name for field in dataclasses.fields(toolkit.Usage))


def _encode_usage(usage: dict[str, toolkit.Usage]) -> bytes:
    return json.dumps({name: dataclasses.asdict(found) for name, found in usage.items()}, sort_keys=True).encode()


def _decode_usage(data: bytes) -> dict[str, toolkit.Usage]:
    """A usage entry's functions, each exactly a ``Usage``'s fields, of
    integers (``registers`` may be null, as a ``.func``'s is)."""
    usage: dict[str, toolkit.Usage] = {}
    for name, value in expect(json.loads(data), dict).items():
        fields = record(value, USAGE_FIELDS)
        registers = fields["registers"]
        counts = [expect(fields[field], int) for field in USAGE_FIELDS[1:]]
        usage[name] = toolkit.Usage(None if registers is None else expect(registers, int), *counts)
    return usage


def resource_usage(ptx: str, arch: str = toolkit.DEFAULT_ARCH) -> dict[str, toolkit.Usage]:
    """``toolkit.resource_usage(ptx, arch)``, loaded from its entry when an
    earlier run of ``ptxas -v`` on the same PTX stored one, under the
    cubin's key rules (the PTX, the architecture, ptxas's options and
    which ptxas it is); ptxas's refusal is raised each time."""
    return _cached(
        cache.USAGE,
        lambda: usage_key(ptx, arch),
        lambda: toolkit.resource_usage(ptx, arch),
        _encode_usage,
        _decode_usage,
    )


def _cached(
    kind: cache.Kind,
    name: Callable[[], str | None],
    compile: Callable[[], T],
    encode: Callable[[T], bytes],
    decode: Callable[[bytes], T],
) -> T:
    """``cached``, for an entry of ``kind`` called ``name()``: computed
    only for a cache that can be used, and None for an output that is not
    to be cached."""
    with cache.opened() as directory:
        entry = name() if directory is not None else None
        if directory is None or entry is None:
            return compile()
        if (data := directory.load(entry, kind)) is not None:
            try:
                return decode(data)
            except UNREADABLE:
                directory.discard(entry, kind)
        result = compile()
        directory.store(entry, encode(result), kind)
        return result
