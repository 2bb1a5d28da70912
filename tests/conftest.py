"""Test runs get a compile cache of their own (``revmlir.runtime.cache``):
they never load objects from, nor write to, the user's cache."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_CACHE = "XDG_CACHE_HOME"
_private = pytest.StashKey[tuple[str | None, str]]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_private] = (os.environ.get(_CACHE), tempfile.mkdtemp(prefix="revmlir-tests-"))
    os.environ[_CACHE] = config.stash[_private][1]


def pytest_unconfigure(config: pytest.Config) -> None:
    previous, directory = config.stash[_private]
    shutil.rmtree(directory, ignore_errors=True)
    if previous is None:
        os.environ.pop(_CACHE, None)
    else:
        os.environ[_CACHE] = previous


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked ``upstream_mlir`` need upstream MLIR's tools: they skip
    where the binaries are missing (``.ci/run`` installs them).  Tests marked
    ``gpu`` need a CUDA GPU and the ``cuda`` extra."""
    if item.get_closest_marker("upstream_mlir") is not None:
        from upstream_tools import missing

        if (reason := missing()) is not None:
            pytest.skip(reason)
    if item.get_closest_marker("gpu") is not None:
        from revmlir.gpu.runtime import unavailable_reason

        if (reason := unavailable_reason()) is not None:
            pytest.skip(f"no GPU to launch on: {reason}")
