"""``ruff check`` and ``ruff format --check`` pass on the whole repository,
with the rules, the per-file exceptions and the formatter's settings of
``[tool.ruff]`` in pyproject.toml.

Both checks are tried on a planted violation too, so that a linter or a
formatter check that checks nothing cannot pass by accident.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ruff(command: str, *arguments: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            command,
            "--no-cache",
            "--config",
            str(ROOT / "pyproject.toml"),
            *map(str, arguments),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_check_passes_on_the_repository():
    result = ruff("check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_finds_a_planted_violation(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import sys\nimport os\n\nprint(os.sep)\n")
    result = ruff("check", planted)
    assert result.returncode == 1
    assert "I001" in result.stdout and "F401" in result.stdout, result.stdout


def test_the_repository_is_formatted():
    result = ruff("format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_check_finds_a_planted_violation(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("x = {  'a':1 }\n")
    result = ruff("format", "--check", planted)
    assert result.returncode == 1
    assert "planted.py" in result.stdout + result.stderr
