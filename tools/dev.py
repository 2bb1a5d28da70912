#!/usr/bin/env python3
"""Developer entry point: ``python3 tools/dev.py demo|test|lint [args...]``.

Needs only Python 3.11+ and the package index: it creates ``.venv`` beside
the repository, installs revmlir with its test extras into it (again only when
``pyproject.toml`` or the extras changed), then runs the demo or the whole
test suite (pytest, which also runs the lit/FileCheck suite, on up to 4
processes), or the linters: ``ruff check``, ``ruff format --check`` and
import-linter's layer contracts (``lint-imports``), each on the whole
repository, configured in ``pyproject.toml``; ``lint`` fails if any does.

``REVMLIR_EXTRAS`` adds extras to the install, e.g. ``REVMLIR_EXTRAS=torch``:
CI does, so the PyTorch tests run there; elsewhere they are skipped unless
torch is importable (its only CPU-only release on the package index for some
machines is pinned by the extra, and other machines would download a CUDA
build of several GB).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
STAMP = VENV / ".revmlir-installed"


def ensure_environment() -> None:
    if sys.version_info < (3, 11):
        sys.exit("revmlir needs Python 3.11 or newer")
    if not PYTHON.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    extras = ",".join(["test", *filter(None, os.environ.get("REVMLIR_EXTRAS", "").split(","))])
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return
    print(f"installing revmlir[{extras}] into .venv", flush=True)
    subprocess.run([str(PYTHON), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[{extras}]"],
        check=True,
    )
    STAMP.write_text(digest)


def parallel(rest: list[str]) -> list[str]:
    """pytest-xdist's options: one worker per core, at most 4 (each holds
    its own JIT and JAX), unless the caller chose (``-n``) or there is one
    core.  A worker that runs out of tests takes some of another's
    (``worksteal``): the suite's items take from milliseconds to half a
    minute, and xdist's default deals tests out one by one ahead of time,
    where they stay while another worker sits idle at the end; worksteal
    first splits the suite in contiguous halves, which also keeps a file's
    tests, and the functions they compile, on one worker."""
    workers = min(os.cpu_count() or 1, 4)
    chosen = any(a.startswith(("-n", "--numprocesses")) for a in rest)
    return [] if chosen or workers < 2 else ["-n", str(workers), "--dist", "worksteal"]


LINTERS = (
    ("ruff", "check", "."),
    ("ruff", "format", "--check", "."),
    ("lint-imports", "--no-cache"),
)


def lint(env: dict[str, str]) -> int:
    """Run every linter (all of them, so one run reports every problem);
    the first nonzero exit status, else 0."""
    statuses = [subprocess.run([str(BIN / tool), *args], cwd=ROOT, env=env).returncode for tool, *args in LINTERS]
    return next((s for s in statuses if s), 0)


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("demo", "test", "lint"):
        print(__doc__)
        return 2
    ensure_environment()
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    command, rest = sys.argv[1], sys.argv[2:]
    if command == "lint":
        return lint(env)
    if command == "demo":
        args = [str(PYTHON), str(ROOT / "examples" / "demo.py"), *rest]
    else:
        args = [str(PYTHON), "-m", "pytest", "-q", *parallel(rest), *rest]
    return subprocess.run(args, cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
