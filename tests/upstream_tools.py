"""Upstream MLIR's tools, where installed (Debian's ``mlir-22-tools``):
``mlir-opt-22``/``mlir-runner-22`` or unsuffixed, and the C runner utilities
``mlir-runner`` loads for printing."""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path

VERSION = 22


@cache
def tool(name: str) -> str | None:
    """The path of ``name``: suffixed with the version first."""
    for candidate in (f"{name}-{VERSION}", name):
        if (path := shutil.which(candidate)) is not None:
            return path
    return None


@cache
def c_runner_utils() -> str | None:
    """``libmlir_c_runner_utils.so`` beside the installed ``mlir-runner``."""
    runner = tool("mlir-runner")
    if runner is None:
        return None
    library = Path(runner).resolve().parent.parent / "lib"
    found = sorted(library.glob("libmlir_c_runner_utils.so*"))
    return str(found[0]) if found else None


def missing() -> str | None:
    """What is missing to run upstream MLIR, or None."""
    if tool("mlir-opt") is None:
        return f"mlir-opt-{VERSION} is not installed"
    if tool("mlir-runner") is None or c_runner_utils() is None:
        return f"mlir-runner-{VERSION} (with libmlir_c_runner_utils) is not installed"
    return None
