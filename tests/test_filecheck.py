"""Runs the lit/FileCheck suite under tests/filecheck as part of pytest: one
item per test file, so that pytest-xdist spreads the files over its workers
(the suite as one item kept one worker busy for minutes while the other sat
idle). Each item runs lit itself on its file, with the suite's ``lit.cfg.py``
and its substitutions, as ``lit tests/filecheck`` does."""

import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).parent / "filecheck"
LIT = str(Path(sys.executable).parent / "lit")
EXCLUDED = {"lit.cfg.py", "inputs"}
"""``config.excludes`` of ``lit.cfg.py``: names lit does not look into."""


def _test_files() -> list[str]:
    """The suite's test files, as lit finds them (``config.suffixes``),
    relative to the suite."""
    return sorted(
        path.relative_to(SUITE).as_posix()
        for path in SUITE.rglob("*.mlir")
        if not EXCLUDED & set(path.relative_to(SUITE).parts)
    )


TEST_FILES = _test_files()


@pytest.mark.parametrize("test_file", TEST_FILES)
def test_filecheck(test_file: str):
    result = subprocess.run([LIT, "-v", str(SUITE / test_file)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed: 1" in result.stdout, result.stdout


def test_items_are_what_lit_discovers():
    """The parametrisation covers exactly the tests lit runs for the whole
    suite: a file lit would run and pytest not (or the reverse) fails here."""
    result = subprocess.run([LIT, "--show-tests", str(SUITE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    discovered = sorted(
        line.strip().removeprefix("revmlir :: ")
        for line in result.stdout.splitlines()
        if line.strip().startswith("revmlir :: ")
    )
    assert discovered == TEST_FILES
