"""Diagnostics located at the user's line: a test file marks each faulty
line with a comment ending it (``# E:name``), and a diagnostic must name the
file and that line."""

from __future__ import annotations

from pathlib import Path


class MarkedLines:
    """The marked lines of one test file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines = path.read_text().splitlines()

    def line_of(self, marker: str) -> int:
        """The line holding ``marker`` (a comment on the faulty line)."""
        matches = [i + 1 for i, line in enumerate(self.lines) if line.rstrip().endswith(marker)]
        assert len(matches) == 1, marker
        return matches[0]

    def located(self, error: BaseException, marker: str, *fragments: str) -> None:
        """``error`` names the file and the line marked ``marker``, and says
        each of ``fragments``."""
        text = str(error)
        assert f"{self.path}:{self.line_of(marker)}:" in text, text
        for fragment in fragments:
            assert fragment in text, text
