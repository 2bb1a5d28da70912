"""``ruff check`` passes on the whole repository, with the rules and the
per-file exceptions of ``[tool.ruff]`` in pyproject.toml.

Only the linter is part of the test command: the formatter's check
(``ruff format --check``, which ``python3 tools/dev.py lint`` also runs)
would rewrap most files, and is left out until the code base is formatted.
The check is tried on a planted violation too, so that a linter that checks
nothing cannot pass by accident.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ruff_check(*paths: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), *map(str, paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_check_passes_on_the_repository():
    result = ruff_check(".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_finds_a_planted_violation(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import sys\nimport os\n\nprint(os.sep)\n")
    result = ruff_check(planted)
    assert result.returncode == 1
    assert "I001" in result.stdout and "F401" in result.stdout, result.stdout
