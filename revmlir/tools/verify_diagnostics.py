"""``rev-opt --verify-diagnostics``: the diagnostics a run produces, checked
against the ``expected-*`` annotations of its input the way mlir-opt checks
them.

A test that only prints its diagnostics and matches them with FileCheck passes
as long as *some* line matches; an annotation next to the op states which
diagnostic, where, and fails the run when it is missing or when another one
appears. The annotation syntax is MLIR's::

    // expected-error {{substring of the message}}       on this line
    // expected-error@+1 {{...}}  @-2, @above, @below   on another line
    // expected-error@unknown {{...}}                   without a location
    // expected-error-re {{literal {{regex}} literal}}  regex parts

``@above`` and ``@below`` skip the lines whose annotations all have a
designator (``@...``): they name the nearest line of code.
Severities are ``error``, ``warning``, ``note`` and ``remark``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SEVERITIES = ("error", "warning", "note", "remark")

_MENTION = re.compile(r"expected-(?:error|warning|note|remark)\b")
_ANNOTATION = re.compile(
    r"expected-(?P<severity>error|warning|note|remark)(?P<regex>-re)?"
    r" *(?:@(?P<where>[+-][0-9]+|above|below|unknown))?"
    r" *\{\{(?P<text>.*)\}\}\s*$"
)


@dataclass(frozen=True)
class Diagnostic:
    """A diagnostic the run produced; ``line`` is ``None`` when it has no
    location in the input."""

    severity: str
    message: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class Expectation:
    """One ``expected-*`` annotation: the diagnostic it asks for, on ``line``
    (``None`` for ``@unknown``), and where the annotation itself is."""

    severity: str
    text: str
    line: int | None
    annotation_line: int
    annotation_column: int
    pattern: re.Pattern[str] | None = None

    def matches(self, diagnostic: Diagnostic) -> bool:
        if diagnostic.severity != self.severity or diagnostic.line != self.line:
            return False
        if self.pattern is not None:
            return self.pattern.search(diagnostic.message) is not None
        return self.text in diagnostic.message


class AnnotationError(Exception):
    """An annotation that cannot be read, at its ``line`` and ``column``."""

    def __init__(self, line: int, column: int, message: str):
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message


def _regex(text: str, line: int, column: int) -> re.Pattern[str]:
    """``expected-*-re`` text: literal, except the ``{{...}}`` parts."""
    parts: list[str] = []
    position = 0
    while (start := text.find("{{", position)) != -1:
        end = text.find("}}", start + 2)
        if end == -1:
            raise AnnotationError(line, column, "'{{' without '}}' in the regex")
        parts += [re.escape(text[position:start]), f"(?:{text[start + 2 : end]})"]
        position = end + 2
    parts.append(re.escape(text[position:]))
    try:
        return re.compile("".join(parts))
    except re.error as error:
        raise AnnotationError(line, column, f"invalid regex: {error}") from error


def read_expectations(text: str, first_line: int = 1) -> list[Expectation]:
    """The annotations of ``text``, whose first line is line ``first_line`` of
    the input (a chunk of ``--split-input-file``)."""
    expectations: list[Expectation] = []
    below: list[tuple[int, int, re.Match[str]]] = []
    previous_plain: int | None = None

    def expect(line: int | None, where: tuple[int, int], found: re.Match[str]):
        pattern = _regex(found["text"], *where) if found["regex"] else None
        expectations.append(Expectation(found["severity"], found["text"], line, *where, pattern))

    for index, content in enumerate(text.split("\n")):
        number = first_line + index
        mention = _MENTION.search(content)
        if mention is None:
            for annotation_line, below_column, below_found in below:
                expect(number, (annotation_line, below_column), below_found)
            below.clear()
            previous_plain = number
            continue
        column = mention.start() + 1
        found = _ANNOTATION.match(content, mention.start())
        if found is None:
            raise AnnotationError(number, column, "expected '{{message}}' after the annotation")
        match found["where"]:
            case None:  # an annotated line of code: one @above/@below may name
                expect(number, (number, column), found)
                for annotation_line, below_column, below_found in below:
                    expect(number, (annotation_line, below_column), below_found)
                below.clear()
                previous_plain = number
            case "unknown":
                expect(None, (number, column), found)
            case "below":
                below.append((number, column, found))
            case "above":
                if previous_plain is None:
                    raise AnnotationError(number, column, "no line above to annotate")
                expect(previous_plain, (number, column), found)
            case offset:
                expect(number + int(offset), (number, column), found)
    if below:
        number, column, _ = below[0]
        raise AnnotationError(number, column, "no line below to annotate")
    return expectations


def check(expectations: Sequence[Expectation], produced: Sequence[Diagnostic], file: str) -> list[str]:
    """mlir-opt's complaints, one line each: every produced diagnostic that no
    annotation expects, then every annotation no diagnostic matched."""
    failures: list[str] = []
    used: set[int] = set()
    for diagnostic in produced:
        candidates = [i for i, e in enumerate(expectations) if e.matches(diagnostic)]
        fresh = [i for i in candidates if i not in used]
        if candidates:
            used.add((fresh or candidates)[0])
            continue
        where = f"{file}:{diagnostic.line}:{diagnostic.column or 1}" if diagnostic.line is not None else file
        failures.append(f"{where}: error: unexpected {diagnostic.severity}: {diagnostic.message}")
    for index, expectation in enumerate(expectations):
        if index not in used:
            failures.append(
                f"{file}:{expectation.annotation_line}:{expectation.annotation_column}:"
                f' error: expected {expectation.severity} "{expectation.text}"'
                " was not produced"
            )
    return failures


def read_diagnostic(rendered: str, file: str) -> Diagnostic:
    """A diagnostic rendered as ``file[:line:col]: severity: message`` (see
    ``revmlir.diagnostics``), with its location in ``file`` read back.

    A pass failure names its op in the message (``'op' at file:line:col``)
    instead of carrying a location; the first op of ``file`` it cites is where
    the diagnostic is, as if the pass had reported it on that op.
    """
    name = re.escape(file)
    found = re.match(rf"{name}(?::(\d+):(\d+))?: ({'|'.join(SEVERITIES)}): (.*)\Z", rendered, re.S)
    if found is None:
        return Diagnostic("error", rendered)
    line, column, severity, message = found.groups()
    if line is None:
        cited = re.search(rf"' at {name}:(\d+):(\d+)", message)
        if cited is not None:
            line, column = cited.groups()
    if line is None:
        return Diagnostic(severity, message)
    return Diagnostic(severity, message, int(line), int(column))
