"""Test runs get a compile cache of their own (``revmlir.runtime.cache``):
they never load objects from, nor write to, the user's cache.  The workers of
one ``pytest -n`` run share their run's cache, so that a function that tests
on two workers compile is optimised by LLVM once (the cache is made for
concurrent processes); the process that made the cache removes it.

Python's cyclic garbage collector is off while pytest collects, and what
collecting left alive is frozen (``gc.freeze``) before the first test.
Collecting imports every test module, and with them JAX, PyTorch, SciPy,
hypothesis and all of revmlir: a heap of millions of objects that
survives to the end of the session.  Each full collection traversed all of
it, about 15 of them during the imports of each worker (2–3 s of CPU),
and each full collection a test's allocations triggered later traversed it
again (0.2–0.5 s each) to find it alive.  One collection at the end of
collecting frees what the imports dropped; the tests' own objects are
collected as before.

The lit suite, the documentation's console transcripts and the tests of
the tools' command lines run their tools through one ``tool_server.py`` per
worker (``served_tools``, ``served``)."""

from __future__ import annotations

import gc
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import tool_server

_CACHE = "XDG_CACHE_HOME"
_RUN_CACHE = "REVMLIR_TESTS_CACHE"
"""The run's cache, as its first process made it: xdist's workers inherit it."""
_private = pytest.StashKey[tuple[str | None, str, bool]]()


def pytest_configure(config: pytest.Config) -> None:
    inherited = os.environ.get(_RUN_CACHE)
    if "PYTEST_XDIST_WORKER" in os.environ and inherited is not None:
        config.stash[_private] = (os.environ.get(_CACHE), inherited, False)
    else:
        made = tempfile.mkdtemp(prefix="revmlir-tests-")
        config.stash[_private] = (os.environ.get(_CACHE), made, True)
        os.environ[_RUN_CACHE] = made
    os.environ[_CACHE] = config.stash[_private][1]


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    was = gc.isenabled()
    gc.disable()
    try:
        return (yield)
    finally:
        gc.collect()
        gc.freeze()
        if was:
            gc.enable()


def pytest_unconfigure(config: pytest.Config) -> None:
    previous, directory, made = config.stash[_private]
    if made:
        os.environ.pop(_RUN_CACHE, None)
        shutil.rmtree(directory, ignore_errors=True)
    if previous is None:
        os.environ.pop(_CACHE, None)
    else:
        os.environ[_CACHE] = previous


@pytest.fixture
def cache_home(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """A compile cache of the test's own, on, with the default size bound:
    its directory (made by the first store).  The argument marshaller is
    compiled first, into the run's cache: compiled once per process, it is
    none of the entries a test counts."""
    # lazy: collecting the suite imports no revmlir before its tests do
    from revmlir.runtime import cache, marshal

    marshal.marshaller()
    monkeypatch.setenv(_CACHE, str(tmp_path))
    monkeypatch.delenv(cache.ENABLE_ENV, raising=False)
    monkeypatch.delenv(cache.MAX_MB_ENV, raising=False)
    return tmp_path / "revmlir"


@pytest.fixture(scope="session")
def served_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An environment whose ``REVMLIR_LIT_TOOLS`` names a directory of
    clients of a ``tool_server.py`` of this process, one per tool (``lit``,
    ``rev-opt``, ``rev-run``, ``rev-translate``, ``filecheck``), and whose
    ``PATH`` starts there.  The server ends with the session."""
    directory = tmp_path_factory.mktemp("tools")
    path = str(directory / "server")
    server = subprocess.Popen(
        [sys.executable, tool_server.__file__, path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    with server.stdout:
        try:
            assert server.stdout.readline() == "ready\n", "the tool server did not start"
            tool_server.shims(str(directory), path)
            yield {
                **os.environ,
                "REVMLIR_LIT_TOOLS": str(directory),
                "PATH": os.pathsep.join([str(directory), os.environ.get("PATH", "")]),
            }
        finally:
            server.terminate()
            server.wait(timeout=60)


@pytest.fixture
def served(served_tools: dict[str, str]) -> Callable[..., subprocess.CompletedProcess[Any]]:
    """Run a served tool, ``served("rev-opt", *arguments, input=...)``:
    a process of its own, forked from ``served_tools``' server, whose
    output is captured (as text unless ``text=False``).  It starts in
    milliseconds where the installed script imports the tool's modules
    again (a second for ``rev-run``).

    Its environment is the test's at the call (``monkeypatch.setenv``
    reaches it) with the served tools first on ``PATH``, and ``env=``
    adds to it.  A tool that hangs fails its test after ``timeout``
    seconds (300 unless given) instead of stalling the worker.

    A fork of the server is not a fresh start, and does not reproduce:
    a closed standard file (the client sends its files 0 to 2, and
    ``>&-`` leaves it none to send), a signal sent to the client (the
    tool does not get it), Python's start-up options (``-u``,
    ``PYTHONUNBUFFERED``), environment variables read at import time
    (the server read them), the imports a fresh start makes (the server
    has made them all, lazy ones included) and the hash seed (the
    server's).  The tests of those run the installed scripts."""
    tools = served_tools["REVMLIR_LIT_TOOLS"]

    def run(tool: str, *arguments: str, **options: Any) -> subprocess.CompletedProcess[Any]:
        env = {
            **os.environ,
            "REVMLIR_LIT_TOOLS": tools,
            "PATH": os.pathsep.join([tools, os.environ.get("PATH", "")]),
            **options.pop("env", {}),
        }
        return subprocess.run(
            [os.path.join(tools, tool), *arguments],
            capture_output=True,
            env=env,
            **{"text": True, "timeout": 300, **options},
        )

    return run


@pytest.fixture
def switching_often() -> Iterator[None]:
    """Threads switch every few bytecodes, as a busy machine makes them
    (the thread-safety tests)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


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
