"""What the fuzzers report: a finding is anything but a result or a clean
diagnostic, with the input that produced it; and how the differential
fuzzer's engines' runs are compared."""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.utils.exceptions import DiagnosticException, ParseError

from revmlir.errors import AfterPass, ExecutionError, InvertibilityError

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
    if isinstance(error, AfterPass) and error.verifying and isinstance(error.cause, CLEAN_ERRORS):
        # a pass's output refused by the verifier: located at the op, and
        # told as the pass's (the tools print it on one line)
        return None
    return "".join(traceback.format_exception(error))


def summary_of(error: BaseException) -> str:
    """The exception type and the line that raised it: one bug, one summary."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(error).__name__}{where}"


@dataclass
class Run:
    """One engine's run: the results, or the error it ended with."""

    values: tuple[Any, ...] | None = None
    error: str | None = None  # "Type: message" of a clean error
    trace: str | None = None  # an unexpected exception
    summary: str = ""


def run_engine(call: Callable[[], tuple[Any, ...]]) -> Run:
    try:
        return Run(values=tuple(call()))
    except RecursionError as error:
        return Run(trace="RecursionError", summary=summary_of(error))
    except BaseException as error:  # the oracle itself: any exception may come
        if (trace := unexpected(error)) is not None:
            return Run(trace=trace, summary=summary_of(error))
        return Run(error=f"{type(error).__name__}: {error}")


REORDERED = 2.0**-40
"""How far, relative to the sum of the magnitudes added, two runs may take
a float element apart by adding the same terms in another order: each
addition rounds by at most 2**-53 of the partial sum, and a generated
kernel adds far fewer than 2**13 terms into one element."""


def equal(a: Any, b: Any, exact: bool, scale: Any = None) -> bool:
    """Values alike: numbers to the bit (NaN equal to NaN) when ``exact``,
    else within 1e-9, or within ``REORDERED`` of the magnitude ``scale``
    gives them (shaped like the values, None where not known); integers
    always to the bit; arrays and stacks element by element."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        scale = None if scale is None else np.asarray(scale).ravel().tolist()
        return a.shape == b.shape and equal(a.ravel().tolist(), b.ravel().tolist(), exact, scale)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        scales = [None] * len(a) if scale is None else scale
        return len(a) == len(b) and all(equal(x, y, exact, s) for x, y, s in zip(a, b, scales))
    if isinstance(a, float) or isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        if exact:
            return a == b
        reordered = scale is not None and abs(a - b) <= REORDERED * scale
        return reordered or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return type(a) is type(b) and a == b


@dataclass
class Outcome:
    """What the worker reports on a case: (kind, stage, summary, detail)."""

    problems: list[tuple[str, str, str, str]] = field(default_factory=list)

    def add(self, kind: str, stage: str, summary: str, detail: str = "") -> None:
        self.problems.append((kind, stage, summary, detail))

    def failed(self, stage: str, run: Run) -> None:
        """A run that had to succeed: a clean error is a difference, an
        unexpected exception a traceback."""
        self.add("traceback" if run.trace else "engines", stage, run.summary or (run.error or "")[:120],
                 run.trace or run.error or "")

    def compare(
        self, stage: str, expected: tuple[str, Run], actual: tuple[str, Run], exact: bool, scale: Any = None
    ) -> None:
        """Two runs that must agree: the same results (floats within
        ``scale``'s tolerance, see ``equal``), or the same error (runs that
        ended in an unexpected exception are reported apart)."""
        (a_name, a), (b_name, b) = expected, actual
        if a.trace is not None or b.trace is not None:
            return
        if (a.values is None) != (b.values is None):
            which = a.error or b.error or ""
            self.add("engines", stage, f"only one engine fails: {which.split(':')[0]}",
                     f"{a_name} {a.values or a.error!r}\n{b_name} {b.values or b.error!r}")
        elif a.values is not None and b.values is not None:
            if not equal(a.values, b.values, exact, scale):
                self.add("engines", stage, "the engines compute different results",
                         f"{a_name} {a.values!r}\n{b_name} {b.values!r}")
        elif a.error != b.error:
            self.add("engines", stage, "the engines fail differently", f"{a_name} {a.error}\n{b_name} {b.error}")
