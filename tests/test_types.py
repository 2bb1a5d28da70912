"""The package type-checks with mypy, configured in ``[tool.mypy]`` of
pyproject.toml: every module but those its ``exclude`` lists, which do not
yet (the list only shrinks: a fixed module leaves it, a new one is checked).

Third-party types (xDSL, numpy) are taken as ``Any`` there, so the check is
of revmlir's own annotations and protocols. The checker is tried on a
planted error too, so that a check that checks nothing cannot pass by
accident.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"


def mypy(cache: Path, *paths: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(PYPROJECT), "--cache-dir", str(cache), *map(str, paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_package_type_checks(tmp_path):
    result = mypy(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"Success: no issues found in \d+ source files", result.stdout), result.stdout


def test_the_checker_finds_a_planted_error(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def half(x: int) -> int:\n    return x / 2\n")
    result = mypy(tmp_path / "cache", planted)
    assert result.returncode == 1
    assert "[return-value]" in result.stdout, result.stdout


def test_the_excluded_modules_exist():
    """An entry of the exclude list that names no module (one renamed or
    removed) would hide nothing and stay forever."""
    excluded = tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"]["exclude"]
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "revmlir").rglob("*.py")}
    stale = [pattern for pattern in excluded if not any(re.search(pattern, m) for m in modules)]
    assert not stale, stale
