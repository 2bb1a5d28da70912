"""Functions at the top level of a module, which pickle sends by name:
``tests/test_pickling.py`` sends them to processes that import this
module."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import revmlir as rv


@rv.reversible
def scaled_sum(y, a, c):
    for i in range(len(a)):
        y += a[i] * c


@rv.ordinary
def cube(x):
    return x * x * x


def call(function: Callable[..., Any], *args: Any) -> Any:
    """Run ``function`` (received pickled) in a worker process."""
    return function(*args)
