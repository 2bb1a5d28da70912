"""A function of a module replaced, for one test, by one that counts its
calls: the cache tests count LLVM's runs and the GPU compiler's lowerings,
each a miss of the cache."""

from __future__ import annotations

from typing import Any

import pytest


class CountedCalls:
    """The calls of ``owner.name`` from now to the end of the test."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: object, name: str):
        self.count = 0
        function = getattr(owner, name)

        def counted(*args: Any, **options: Any) -> Any:
            self.count += 1
            return function(*args, **options)

        monkeypatch.setattr(owner, name, counted)
