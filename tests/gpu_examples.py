"""The GPU examples (``examples/python/gpu_*.py``) and small inputs for
them, shared by the CPU tests and the GPU tests."""

from __future__ import annotations

from types import ModuleType

import numpy as np

from python_examples import load_example


def examples() -> dict[str, ModuleType]:
    """The GPU examples, after the examples they import."""
    for name in ("paper_basics", "graph_embedding", "adbench_data", "adbench_ba", "adbench_gmm"):
        load_example(name)
    return {name: load_example(f"gpu_{name}") for name in ("elementwise", "graph_embedding", "ba", "gmm")}


def positive(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.1, 10.0, n)


def complex_values(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(0.1, 10.0, n) * np.exp(1j * rng.uniform(-3.0, 3.0, n))
