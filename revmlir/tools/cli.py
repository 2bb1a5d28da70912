"""What ``rev-run`` and ``rev-translate`` share: the files they read and
write, with the failures a user causes (a missing or unreadable file, text
that is not UTF-8, an output path that is a directory or lies in a
directory that does not exist, a standard output that is closed or fails)
turned into ``UsageError``s, and a ``main`` that prints those as one line
and exits 1, and anything else as an internal error (exit 2) unless
``REVMLIR_TRACEBACK`` asks for the traceback.  Help and version text go
out as every other output does (``HelpAction``, ``VersionAction``)."""

from __future__ import annotations

import argparse
import atexit
import errno
import importlib.metadata
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from revmlir.diagnostics import internal_error
from revmlir.version import revmlir_version

TRACEBACK_ENV = "REVMLIR_TRACEBACK"
"""Set, a tool re-raises what it would report as internal (or Ctrl-C)."""

STDIN = "-"


def stdin_bytes() -> IO[bytes]:
    """Standard input, which ``-`` names.  Run with it closed (``<&-``),
    Python has no ``sys.stdin``: an ``OSError`` that says so."""
    if sys.stdin is None:
        raise OSError(errno.EBADF, "standard input is closed")
    return sys.stdin.buffer


class UsageError(Exception):
    """Bad command-line input: reported as ``<tool>: error: ...``."""


def input_name(path: str) -> str:
    """What diagnostics call the input: ``stdin`` for ``-``, as ``rev-opt``
    names it (``-`` reads standard input, so that the tools chain in pipes:
    ``rev-opt f.mlir -p … | rev-run - -e f``)."""
    return "stdin" if path == STDIN else path


def read_text(path: str) -> str:
    """The UTF-8 text of ``path`` (standard input for ``-``); a byte that
    is not UTF-8 is reported at its line and column."""
    try:
        data = stdin_bytes().read() if path == STDIN else Path(path).read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {input_name(path)}: {error.strerror or error}") from None
    path = input_name(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise UsageError(
            f"{path}:{line}:{column}: byte 0x{data[error.start]:02x} is not UTF-8 text (.mlir files are UTF-8)"
        ) from None


def check_output(path: str) -> None:
    """Refuse an output path that cannot be written, before any work is
    done for it."""
    if os.path.isdir(path):
        raise UsageError(f"cannot write {path}: it is a directory")
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise UsageError(f"cannot write {path}: no directory {parent}")


def write_output(path: str, data: str | bytes) -> None:
    try:
        if isinstance(data, bytes):
            Path(path).write_bytes(data)
        else:
            Path(path).write_text(data, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror or error}") from None


def write_stdout(text: str) -> None:
    """Write ``text`` to standard output, flushed, as every tool writes its
    output there: closed (``>&-``), where Python has no ``sys.stdout``, or
    failing (a full disk, ``/dev/full``, a pipe whose reader has gone) is a
    ``UsageError``, one line and exit 1, not an internal error or an
    output lost without a word.  ``sys.stdout`` stays the caller's (a
    program calling a tool's ``main`` goes on with its own); only the
    process's exit replaces it where it still fails then
    (``_flush_at_exit``)."""
    if sys.stdout is None:
        raise UsageError("cannot write standard output: it is closed")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as error:
        atexit.unregister(_flush_at_exit)  # registered once however often a write fails
        atexit.register(_flush_at_exit)
        raise UsageError(f"cannot write standard output: {error.strerror or error}") from None


def _flush_at_exit() -> None:
    """At the exit of a process whose standard output failed: flush it,
    and where that fails again replace it by a stream to ``os.devnull``, so
    that the interpreter's own last flush of what the failed write left
    cannot fail (Python's "Exception ignored" lines, exit 120; Python's
    advice for a broken pipe).  Run before that flush, by ``atexit``.  A
    standard output the program has closed since is left: Python's flush
    skips it too, and flushing it would raise."""
    try:
        if sys.stdout is not None and not sys.stdout.closed:
            sys.stdout.flush()
    except OSError:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")


class _WritingAction(argparse.Action):
    """An option that writes ``text(parser)`` as any output is written
    (``write_stdout``) and exits, where argparse's own help and version
    actions ignore a failed write and exit 0."""

    HELP = ""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        kwargs.setdefault("default", argparse.SUPPRESS)
        kwargs.setdefault("help", self.HELP)
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        write_stdout(self.text(parser))
        parser.exit()

    def text(self, parser: argparse.ArgumentParser) -> str:
        raise NotImplementedError


class HelpAction(_WritingAction):
    """``-h``/``--help``: the parser's help."""

    HELP = "show this help message and exit"

    def text(self, parser: argparse.ArgumentParser) -> str:
        return parser.format_help()


def version_text(tool: str) -> str:
    """What ``--version`` prints: the tool, revmlir's version and xDSL's,
    on which every tool's parsing and passes run."""
    return f"{tool} (revmlir {revmlir_version()}) on xDSL {importlib.metadata.version('xdsl')}"


class VersionAction(_WritingAction):
    """``--version``: ``version_text`` of the parser's program."""

    HELP = "print the versions of revmlir and xDSL, and exit"

    def text(self, parser: argparse.ArgumentParser) -> str:
        return version_text(parser.prog) + "\n"


def tool_parser(tool: str, description: str) -> argparse.ArgumentParser:
    """The parser of ``rev-run`` or ``rev-translate``, with ``-h``/``--help``
    and ``--version`` written as the tool's other output."""
    parser = argparse.ArgumentParser(prog=tool, description=description, add_help=False)
    parser.add_argument("-h", "--help", action=HelpAction)
    parser.add_argument("--version", action=VersionAction)
    return parser


def run_tool(tool: str, run: Callable[[argparse.Namespace], int], parse: Callable[[], argparse.Namespace]) -> int:
    """``run(parse())``'s exit code, with its failures reported on one line
    (help or version text that cannot be written among them)."""
    try:
        return run(parse())
    except UsageError as error:
        print(f"{tool}: error: {error}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, Exception) as error:
        return unexpected(tool, error)


def unexpected(tool: str, error: BaseException) -> int:
    """Every tool's exit status for what is no mistake of its user: Ctrl-C
    (which stops a long run: native loops poll for it) one line and 130,
    the shell's status for SIGINT; anything else an internal error named
    by its class, exit 2; either re-raised, for its traceback, where
    ``REVMLIR_TRACEBACK`` is set."""
    if os.environ.get(TRACEBACK_ENV):
        raise error
    if isinstance(error, KeyboardInterrupt):
        print(f"{tool}: interrupted", file=sys.stderr)
        return 130
    print(f"{tool}: {internal_error(error)}", file=sys.stderr)
    return 2
