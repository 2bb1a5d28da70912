"""Imports the reversible-Python examples (``examples/python/*.py``) and
the benchmark scripts (``benchmarks/*.py``) as modules for the tests: they
are scripts, not a package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples" / "python"


def load_example(name: str) -> ModuleType:
    """``examples/python/<name>.py``, imported once."""
    return _load(EXAMPLES / f"{name}.py")


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py``, imported once."""
    return _load(ROOT / "benchmarks" / f"{name}.py")


def _load(path: Path) -> ModuleType:
    name = path.stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
