"""Runs the lit/FileCheck suite under tests/filecheck as part of pytest: one
item per test file, so that pytest-xdist spreads the files over its workers
(the suite as one item kept one worker busy for minutes while the other sat
idle). Each item runs lit itself on its file, with the suite's ``lit.cfg.py``
and its substitutions, as ``lit tests/filecheck`` does.  That lit and the
tools its RUN lines start are served by ``tool_server.py``, one server per
worker (``served_tools``), which imports lit, xDSL and the tools once
instead of once per process."""

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import tool_server

SUITE = Path(__file__).parent / "filecheck"
EXAMPLES = Path(__file__).parent.parent / "examples"
LIT = str(Path(sys.executable).parent / "lit")
EXCLUDED = {"lit.cfg.py", "inputs"}
"""``config.excludes`` of ``lit.cfg.py``: names lit does not look into."""


def _test_files() -> list[str]:
    """The suite's test files, as lit finds them (``config.suffixes``),
    relative to the suite."""
    return sorted(
        path.relative_to(SUITE).as_posix()
        for path in SUITE.rglob("*.mlir")
        if not EXCLUDED & set(path.relative_to(SUITE).parts)
    )


TEST_FILES = _test_files()


@pytest.mark.parametrize("test_file", TEST_FILES)
def test_filecheck(test_file: str, served_tools: dict[str, str]):
    lit = os.path.join(served_tools["REVMLIR_LIT_TOOLS"], "lit")
    result = subprocess.run([lit, "-v", str(SUITE / test_file)], capture_output=True, text=True, env=served_tools)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed: 1" in result.stdout, result.stdout


def test_items_are_what_lit_discovers():
    """The parametrisation covers exactly the tests lit runs for the whole
    suite: a file lit would run and pytest not (or the reverse) fails here."""
    result = subprocess.run([LIT, "--show-tests", str(SUITE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    discovered = sorted(
        line.strip().removeprefix("revmlir :: ")
        for line in result.stdout.splitlines()
        if line.strip().startswith("revmlir :: ")
    )
    assert discovered == TEST_FILES


def test_served_tools_behave_as_the_installed_ones(served_tools: dict[str, str], tmp_path: Path):
    """A served tool gives what the installed one gives: the same output,
    errors and exit code, reading a file, reading standard input, and
    failing (a located parse error; FileCheck finding a CHECK unmet; an
    entry ``rev-run`` does not find), ``rev-opt`` inverting the lit
    suite's inversions, ``rev-run`` running a program and
    ``rev-translate`` lowering one to LLVM IR (whose imports, llvmlite's
    among them, the installed command makes on its own)."""
    installed = Path(sys.executable).parent
    unmet = tmp_path / "unmet.mlir"
    unmet.write_text("// CHECK: rev.func @nowhere\n")
    source = (SUITE / "tools" / "unknown_op.mlir").read_text()
    runs = [
        (["rev-opt", str(SUITE / "tools" / "unknown_op.mlir")], None, 1),
        (["rev-opt", "-", "-p", "rev-invert"], (SUITE / "passes" / "invert.mlir").read_text(), 0),
        (["filecheck", str(unmet)], source, 1),
        (["rev-run", str(EXAMPLES / "multiplier.mlir"), "-e", "multiplier", "--args", "2", "3", "5"], None, 0),
        (["rev-run", str(EXAMPLES / "multiplier.mlir"), "-e", "mul", "--args", "2", "3", "5"], None, 1),
        (["rev-translate", str(EXAMPLES / "fibonacci.mlir"), "--emit=llvm"], None, 0),
    ]
    for command, given, code in runs:
        results = [
            subprocess.run(
                [str(directory / command[0]), *command[1:]],
                input=given,
                capture_output=True,
                text=True,
                env=served_tools,
            )
            for directory in (installed, Path(served_tools["REVMLIR_LIT_TOOLS"]))
        ]
        expected, got = ((r.returncode, r.stdout, r.stderr) for r in results)
        assert got == expected and expected[0] == code, command


@pytest.mark.parametrize("answer", [b"", b"oops"])
def test_a_malformed_answer_of_the_server_names_what_came_and_the_tool(tmp_path: Path, answer: bytes):
    """A client whose server answers no wait status (a handler that died
    sends nothing) says what it received and for which tool, instead of
    ``int``'s bare ``ValueError``."""
    path = str(tmp_path / "server")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def answer_once() -> None:
        connection, _ = listener.accept()
        with connection:
            _, files, _, _ = socket.recv_fds(connection, 1 << 16, tool_server.STREAMS)
            for file in files:
                os.close(file)
            connection.sendall(answer)

    server = threading.Thread(target=answer_once)
    server.start()
    try:
        with pytest.raises(ValueError) as raised:
            tool_server.client(path, "rev-opt")
    finally:
        server.join(timeout=30)
        listener.close()
    assert str(raised.value).startswith(f"rev-opt: the tool server at {path} answered {answer!r}, not the wait status")
