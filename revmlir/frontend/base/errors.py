"""Errors the Python frontend reports: ``SyntaxError``s pointing at the user's
source, so Python, IDEs and tracebacks show the file, line and a caret."""

from __future__ import annotations

import linecache

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation


class ReversibleSyntaxError(SyntaxError):
    """A construct that is not reversible Python, with a hint saying what to
    write instead.  Raised when a function is decorated or first called."""

    def __init__(
        self,
        message: str,
        filename: str | None,
        line: int | None,
        column: int | None,
        hint: str | None = None,
    ):
        text = linecache.getline(filename, line) if filename and line else None
        full = f"{message}; {hint}" if hint else message
        super().__init__(full, (filename, line, column, text))
        self.hint = hint
        self.reason = message

    def __str__(self) -> str:
        where = f"{self.filename}:{self.lineno}:{self.offset}" if self.filename else ""
        return f"{where}: {self.msg}" if where else str(self.msg)


def at_op(op: Operation, message: str) -> ReversibleSyntaxError:
    """``message`` at the source location of ``op``, an op the frontend
    built from the user's source (so its location is the source's), where
    a later step refuses it."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return ReversibleSyntaxError(message, loc.filename.data, loc.line.data, loc.column.data)
    return ReversibleSyntaxError(message, None, None, None)
