"""What the fuzzers report: a finding is anything but a result or a clean
diagnostic, with the input that produced it."""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from xdsl.utils.exceptions import DiagnosticException, ParseError

from revmlir.errors import ExecutionError, InvertibilityError

# The exceptions the tools turn into a one-line diagnostic on purpose: parse
# and verification errors, failed passes (all DiagnosticExceptions), and the
# errors of a run.  Any other exception is a bug, even where a tool's
# catch-all prints it on one line.
CLEAN_ERRORS = (DiagnosticException, ParseError, InvertibilityError, ExecutionError)


@dataclass(frozen=True)
class Finding:
    kind: str  # "traceback" | "crash" | "hang" | "soundness" | "engines"
    stage: str  # what was running: "rev-opt -p …", "native call", …
    summary: str  # one line, the same for every instance of one bug
    reproducer: str  # the .mlir text (and arguments) that shows it
    detail: str = ""  # a traceback, the differing values


def unexpected(error: BaseException) -> str | None:
    """The traceback of an error no tool should let through, else None."""
    if isinstance(error, CLEAN_ERRORS):
        return None
    return "".join(traceback.format_exception(error))


def summary_of(error: BaseException) -> str:
    """The exception type and the line that raised it: one bug, one summary."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(error).__name__}{where}"
