"""Runs the lit/FileCheck suite under tests/filecheck as part of pytest."""

import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).parent / "filecheck"


def test_filecheck_suite():
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lit"), "-v", str(SUITE)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout
