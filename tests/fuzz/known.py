"""Findings of the fuzzers that are known and open, each with the smallest
input that shows it.  The bounded run in the test suite tolerates these and
nothing else; ``tests/test_fuzz.py`` holds each reproducer as a strict
expected failure, so fixing one makes the suite say to remove it here."""

from __future__ import annotations

from dataclasses import dataclass

from .outcomes import Finding


@dataclass(frozen=True)
class Known:
    error: str  # "Type: message fragment", as it appears in the finding's detail
    where: str  # the code that should turn it into a diagnostic
    reproducer: str

    def matches(self, finding: Finding) -> bool:
        return finding.kind == "traceback" and self.error in finding.detail


KNOWN: list[Known] = []


def is_known(finding: Finding) -> bool:
    return any(known.matches(finding) for known in KNOWN)
