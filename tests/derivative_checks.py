"""Comparisons shared by the differentiation tests."""

from collections.abc import Sequence
from typing import Any

import numpy as np


def assert_per_argument_close(
    found: Sequence[Any], expected: Sequence[Any], rtol: float = 1e-7, atol: float = 1e-9
) -> None:
    """One derivative per argument; ``None`` expected means the argument
    carries none (``0.0`` for a scalar, ``None`` for an array)."""
    assert len(found) == len(expected)
    for got, want in zip(found, expected):
        if want is None:
            assert got is None or got == 0.0
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
