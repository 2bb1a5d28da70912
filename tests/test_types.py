"""The package type-checks with mypy, configured in ``[tool.mypy]`` of
pyproject.toml: every module of ``revmlir/``, none excluded.

Third-party types (xDSL, numpy) are taken as ``Any`` there, so the check is
of revmlir's own annotations and protocols. The checker is tried on a
planted error too, so that a check that checks nothing cannot pass by
accident.  The ``# type: ignore`` comments left are few, each with its
error code and the reason it cannot go, and mypy reports any the code no
longer needs (``warn_unused_ignores``).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

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


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the module's checks: the planted error's check
    reads the standard library's types that the package's check stored,
    instead of analysing them again (some seconds)."""
    return tmp_path_factory.mktemp("mypy")


def test_every_module_of_the_package_type_checks(cache):
    result = mypy(cache)
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.search(r"Success: no issues found in (\d+) source files", result.stdout)
    assert found, result.stdout
    modules = list((ROOT / "revmlir").rglob("*.py"))
    assert int(found[1]) == len(modules), (found[1], len(modules))


def test_the_checker_finds_a_planted_error(cache, tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "def half(x: int) -> int:\n    return x / 2\n\n\nTWO: int = 2  # type: ignore[assignment]  # none\n"
    )
    result = mypy(cache, planted)
    assert result.returncode == 1
    assert "[return-value]" in result.stdout and "[unused-ignore]" in result.stdout, result.stdout


# The ignores the package holds: raise it only for one that cannot go, and
# lower it when one goes.
IGNORES = 0

IGNORE = re.compile(r"#\s*type:\s*ignore(?P<code>\[[a-z-]+(?:,\s*[a-z-]+)*\])?(?:\s+#\s*(?P<reason>\S.*))?")


def type_ignores(text: str) -> list[tuple[int, str | None, str | None]]:
    """Each ``# type: ignore`` of a module: its line, its codes and the
    reason the comment after them gives."""
    return [
        (number, found["code"], found["reason"])
        for number, line in enumerate(text.splitlines(), 1)
        if (found := IGNORE.search(line))
    ]


def test_ignores_carry_a_code_and_a_reason_and_do_not_grow():
    found = [
        (f"{path.relative_to(ROOT)}:{number}", code, reason)
        for path in sorted((ROOT / "revmlir").rglob("*.py"))
        for number, code, reason in type_ignores(path.read_text())
    ]
    bare = [where for where, code, reason in found if code is None or reason is None]
    assert not bare, f"a type: ignore needs its [code] and a '# reason' after it: {bare}"
    assert len(found) <= IGNORES, [where for where, _, _ in found]


def test_the_ignore_check_finds_bare_ones():
    assert type_ignores("x = 1  # type: ignore\ny = 2\n") == [(1, None, None)]
    assert type_ignores("x = f()  # type: ignore[arg-type]\n") == [(1, "[arg-type]", None)]
    assert type_ignores("x = f()  # type: ignore[arg-type, misc]  # f's stub says int\n") == [
        (1, "[arg-type, misc]", "f's stub says int")
    ]


def test_no_module_is_excluded():
    """The configuration names no module to skip (an ``exclude`` would hide
    a module from the check above, which counts only those it checks)."""
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"]
    assert "exclude" not in config and config["files"] == ["revmlir"], config
    assert config["warn_unused_ignores"] is True, config
