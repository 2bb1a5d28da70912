"""The package type-checks with mypy, configured in ``[tool.mypy]`` of
pyproject.toml: every module of ``revmlir/``, none excluded.

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


def test_every_module_of_the_package_type_checks(tmp_path):
    result = mypy(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.search(r"Success: no issues found in (\d+) source files", result.stdout)
    assert found, result.stdout
    modules = list((ROOT / "revmlir").rglob("*.py"))
    assert int(found[1]) == len(modules), (found[1], len(modules))


def test_the_checker_finds_a_planted_error(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def half(x: int) -> int:\n    return x / 2\n")
    result = mypy(tmp_path / "cache", planted)
    assert result.returncode == 1
    assert "[return-value]" in result.stdout, result.stdout


def test_no_module_is_excluded():
    """The configuration names no module to skip (an ``exclude`` would hide
    a module from the check above, which counts only those it checks)."""
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"]
    assert "exclude" not in config and config["files"] == ["revmlir"], config
