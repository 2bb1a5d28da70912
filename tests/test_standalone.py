"""The repository stands alone: a copy of its files with nothing beside it
collects the whole test suite, and no file points outside the repository.

The copy holds what a clone would (the files git tracks, plus those it does
not ignore yet) in a temporary folder with no siblings, and imports revmlir
from that copy, not from the checkout the suite runs in."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def repository_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [f for f in listed.split("\0") if f and (ROOT / f).is_file()]


def test_a_lone_copy_collects_every_test(tmp_path):
    clone = tmp_path / "lone" / "revmlir"
    for name in repository_files():
        target = clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    env = dict(os.environ, PYTHONPATH=str(clone), PYTHONDONTWRITEBYTECODE="1")
    # Collecting imports every test module; rewriting their asserts, which
    # only changes what a failing assert reports, took some 40% of it.
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--assert=plain"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert re.search(r"^\d+ tests collected", result.stdout, re.MULTILINE), result.stdout[-2000:]
    assert "error" not in result.stdout.splitlines()[-1].lower()


def test_the_copy_imports_its_own_revmlir(tmp_path):
    """The check above is only meaningful if the copy's package is the one
    imported: a stale editable install must not stand in for it."""
    clone = tmp_path / "revmlir"
    shutil.copytree(ROOT / "revmlir", clone / "revmlir", ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run(
        [sys.executable, "-c", "import revmlir; print(revmlir.__file__)"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(clone)),
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(result.stdout.strip()).resolve().is_relative_to(clone.resolve())


# Paths that leave the repository: a parent folder's sibling or an absolute
# path into the machine that built it.
OUTSIDE = re.compile(r"\.\./shared\b|/w[o]rk/|parents\[3\]")


def test_no_file_points_outside_the_repository():
    offenders = []
    for name in repository_files():
        path = ROOT / name
        if name.startswith("data/") or path.suffix not in {".py", ".md", ".toml", ".cfg", ".mlir", ".txt", ""}:
            continue
        text = path.read_text(errors="replace")
        offenders += [f"{name}:{i}" for i, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
    assert offenders == [], offenders


def test_adbench_inputs_ship_with_their_licence():
    data = ROOT / "data" / "adbench"
    assert "MIT License" in (data / "LICENSE.TXT").read_text()
    sources = (data / "SOURCES.md").read_text()
    listed = re.findall(r"^([0-9a-f]{64})  (\S+)$", sources, re.MULTILINE)
    assert len(listed) > 20
    for digest, name in listed:
        assert hashlib.sha256((data / name).read_bytes()).hexdigest() == digest, name
