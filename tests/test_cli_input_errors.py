"""rev-run and rev-translate on input a user gets wrong: a file that is not
UTF-8, an output path that is a directory or in a missing one, negative
numbers as values, integers the argument's type cannot hold, an unknown or
empty GPU, a closed standard input or a closed or full standard output
(rev-opt's too), and a string literal
without its closing quote (which made xDSL's lexer take exponential time).
Each is one line on stderr and exit code 1."""

from __future__ import annotations

import errno
import importlib.metadata
import io
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.utils.exceptions import ParseError

from revmlir.parsing import parse_module
from revmlir.tools import rev_opt, rev_run, rev_translate

ROOT = Path(__file__).parent.parent
BIN = Path(sys.executable).parent
MULTIPLIER = str(ROOT / "examples" / "multiplier.mlir")

PROGRAM = """
rev.func @f(%y: f64, %x: f64) {
  %y1 = rev.add %y, %x : f64
  rev.return %y1, %x : f64, f64
}
rev.func @narrow(%y: i8, %x: i8) {
  %y1 = rev.add %y, %x : i8
  rev.return %y1, %x : i8, i8
}
rev.func @shift(%x: memref<?xi16>) {
  rev.return
}
"""


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


TOOLS = {"rev-run": rev_run.main, "rev-translate": rev_translate.main}


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """A tool's ``main`` in this process (starting one costs seconds); the
    console scripts themselves are run in ``test_the_console_scripts``."""

    def run_tool(tool: str, *args: str) -> Result:
        capsys.readouterr()
        try:
            code = TOOLS[tool](list(args))
        except SystemExit as exit:  # argparse's own usage errors
            code = exit.code if isinstance(exit.code, int) else 1
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run_tool


def fails_with(result: Result | subprocess.CompletedProcess[str], expected: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr, result.stderr


@pytest.fixture
def program(tmp_path: Path) -> str:
    path = tmp_path / "program.mlir"
    path.write_text(PROGRAM)
    return str(path)


@pytest.fixture
def latin1(tmp_path: Path) -> str:
    path = tmp_path / "latin1.mlir"
    path.write_bytes(PROGRAM.encode() + "// Grüße\n".encode("latin-1"))
    return str(path)


def test_rev_translate_on_a_file_that_is_not_utf8(run, latin1: str):
    fails_with(run("rev-translate", latin1), f"rev-translate: error: {latin1}:13:6: byte 0xfc is not UTF-8 text")


def test_rev_run_on_a_file_that_is_not_utf8(run, latin1: str):
    fails_with(run("rev-run", latin1, "-e", "f", "--args", "1", "2"), f"rev-run: error: {latin1}:13:6: byte 0xfc")


@pytest.mark.parametrize("emit", ["llvm", "obj", "header"])
def test_rev_translate_into_a_missing_directory(run, tmp_path: Path, emit: str):
    target = tmp_path / "missing" / "out"
    result = run("rev-translate", MULTIPLIER, f"--emit={emit}", "-o", str(target))
    fails_with(result, f"rev-translate: error: cannot write {target}: no directory {target.parent}")


def test_rev_translate_onto_a_directory(run, tmp_path: Path):
    result = run("rev-translate", MULTIPLIER, "--emit=obj", "-o", str(tmp_path))
    fails_with(result, f"rev-translate: error: cannot write {tmp_path}: it is a directory")


def test_rev_translate_when_the_write_fails(run):
    fails_with(run("rev-translate", MULTIPLIER, "-o", "/dev/full"), "cannot write /dev/full: No space left on device")


def test_rev_translate_still_writes_where_it_can(run, tmp_path: Path):
    target = tmp_path / "multiplier.h"
    result = run("rev-translate", MULTIPLIER, "--emit=header", "-o", str(target))
    assert result.returncode == 0 and result.stderr == ""
    assert "multiplier_ciface" in target.read_text()


@pytest.mark.parametrize("emit", ["ptx", "cubin"])
@pytest.mark.parametrize("arch", ["sm_50", ""])
def test_rev_translate_for_an_unknown_gpu(run, tmp_path: Path, emit: str, arch: str):
    """A mistyped ``--gpu-arch`` is the command line's error, before the
    file is read or anything compiled; an empty one too (it is no default)."""
    result = run(
        "rev-translate", "no-such-file.mlir", f"--emit={emit}", f"--gpu-arch={arch}", "-o", str(tmp_path / "k")
    )
    fails_with(result, f"rev-translate: error: --gpu-arch: unknown GPU architecture '{arch}' (known: sm_60,")


@pytest.mark.parametrize("emit", ["llvm", "header"])
def test_rev_translate_for_a_gpu_with_a_host_output(run, emit: str):
    """The output would be the host's whatever the flag said: the flag is
    a mistake, most likely a missing --emit=ptx."""
    result = run("rev-translate", MULTIPLIER, f"--emit={emit}", "--gpu-arch=sm_80")
    fails_with(result, f"rev-translate: error: --gpu-arch applies to --emit=ptx and --emit=cubin, not --emit={emit}")


def test_rev_translate_on_a_missing_file(run):
    fails_with(
        run("rev-translate", "no-such-file.mlir"), "rev-translate: error: cannot read no-such-file.mlir: No such file"
    )


@pytest.mark.parametrize(
    "values, expected",
    [
        (["-1e-3", "2"], ["1.999 : f64", "2.0 : f64"]),
        (["-.5", "-2.5E+1"], ["-25.5 : f64", "-25.0 : f64"]),
        (["1", "-2"], ["-1.0 : f64", "-2.0 : f64"]),
    ],
)
def test_negative_numbers_are_values(run, program: str, values: list[str], expected: list[str]):
    result = run("rev-run", program, "-e", "f", "--args", *values)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected


def test_negative_numbers_in_inverse_runs_and_arrays(run, program: str):
    result = run("rev-run", program, "-e", "narrow", "--inverse", "--args", "-3", "-4")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["1 : i8", "-4 : i8"]
    result = run("rev-run", program, "-e", "shift", "--args", "[-1, -2]")
    assert result.stdout.splitlines() == ["[-1, -2] : memref<?xi16>"]


@pytest.mark.parametrize(
    "entry, values, expected",
    [
        ("narrow", ["300", "1"], "argument #0: 300 is out of range for i8 (-128 to 127)"),
        ("narrow", ["1", "-129"], "argument #1: -129 is out of range for i8 (-128 to 127)"),
        (
            "f",
            ["1" + "0" * 400, "1.0"],
            "argument #0: an integer of 1329 bits is out of range for f64 (magnitude at most 1.7976931348623157e+308)",
        ),
        ("shift", ["[1, 70000]"], "argument #0 (memref<?xi16>): Python integer 70000 out of bounds for int16"),
        ("narrow", ["9" * 5000, "1"], "argument #0 (i8): cannot read"),
    ],
)
def test_integers_out_of_range(run, program: str, entry: str, values: list[str], expected: str):
    fails_with(run("rev-run", program, "-e", entry, "--args", *values), f"rev-run: error: {expected}")


@pytest.mark.parametrize("tolerance", ["-1e-3", "nan"])
def test_a_negative_tolerance_is_refused(run, program: str, tolerance: str):
    result = run("rev-run", program, "-e", "f", "--tolerance", tolerance, "--args", "1", "2")
    fails_with(result, "rev-run: error: --tolerance must be a number >= 0, got ")


def test_the_ends_of_the_range_are_accepted(run, program: str):
    result = run("rev-run", program, "-e", "narrow", "--backend", "interpreter", "--args", "-128", "127")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["-1 : i8", "127 : i8"]


@pytest.mark.parametrize("value", ["3", "(1, 2)"])
def test_an_array_is_a_list(run, program: str, value: str):
    """A number for an array made a 0-d array, refused as one 'with shape
    []': the argument's spelling is what was wrong."""
    result = run("rev-run", program, "-e", "shift", "--args", value)
    fails_with(
        result, f"rev-run: error: argument #0 (memref<?xi16>): an array is written as a (nested) list, got {value}"
    )


def test_an_array_argument(run, program: str):
    result = run("rev-run", program, "-e", "shift", "--args", "[[1], [2]]")
    fails_with(
        result, "rev-run: error: argument #0 of @shift must be an array of int16 with shape ['?'], got int16 [2, 1]"
    )
    assert run("rev-run", program, "-e", "shift", "--args", "[1, 2]").stdout == "[1, 2] : memref<?xi16>\n"


@pytest.mark.parametrize("tool", ["rev-run", "rev-translate"])
def test_standard_input_is_named_stdin(run, monkeypatch: pytest.MonkeyPatch, tool: str):
    """``-`` reads standard input, as for rev-opt, so that the tools chain
    in pipes; diagnostics name it ``stdin``."""
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(b"rev.func @f(%x: i64) {\n  rev.return %y : i64\n}\n"))
    )
    fails_with(
        run(tool, "-", *(["-e", "f", "--args", "1"] if tool == "rev-run" else [])),
        "stdin:2:14: error: use of undefined value %y",
    )


@pytest.mark.parametrize("tool", ["rev-run", "rev-translate", "rev-opt"])
def test_a_closed_standard_input(run, monkeypatch: pytest.MonkeyPatch, tool: str):
    """Run with standard input closed (``<&-``), Python has no
    ``sys.stdin``: ``-`` is then the command line's mistake."""
    monkeypatch.setattr(sys, "stdin", None)
    main = {**TOOLS, "rev-opt": rev_opt.main}[tool]
    monkeypatch.setitem(TOOLS, tool, main)
    fails_with(run(tool, "-", *(["-e", "f"] if tool == "rev-run" else [])), f"{tool}: error: cannot read stdin: ")


def test_rev_run_reads_standard_input(run, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(MULTIPLIER).read_bytes())))
    result = run("rev-run", "-", "-e", "multiplier", "--args", "2", "3", "5")
    assert (result.returncode, result.stdout) == (0, "17 : i64\n3 : i64\n5 : i64\n"), result.stderr


@pytest.mark.parametrize("length", [28, 40, 10_000])
def test_an_unterminated_string_literal_fails_in_linear_time(length: int):
    text = 'rev.func @f(%x: f64) attributes {note = "' + "a" * length + "\n"
    start = time.perf_counter()
    with pytest.raises(ParseError, match="End of file reached before closing string literal"):
        parse_module(text)
    assert time.perf_counter() - start < 0.5


def test_string_literals_still_parse():
    module = parse_module('"builtin.module"() ({\n^bb0:\n}) {sym_name = "a\\n\\"b\\0A\\\\", note = "é"} : () -> ()')
    assert module.sym_name is not None and module.sym_name.data == 'a\n"b\n\\'
    assert module.attributes["note"].data == "é"


def test_rev_translate_on_an_unterminated_string(run, tmp_path: Path):
    path = tmp_path / "open.mlir"
    path.write_text('rev.func @f(%x: f64) attributes {note = "' + "a" * 40 + "\n")
    start = time.perf_counter()
    result = run("rev-translate", str(path))
    assert time.perf_counter() - start < 2
    fails_with(result, f"{path}:1:41: error: End of file reached before closing string literal")


def test_the_console_scripts(latin1: str, tmp_path: Path):
    """The installed commands report like their ``main``: one line, exit 1."""
    result = subprocess.run(
        [str(BIN / "rev-run"), latin1, "-e", "f", "--args", "-1e-3", "2"], capture_output=True, text=True
    )
    fails_with(result, f"rev-run: error: {latin1}:13:6: byte 0xfc")
    target = tmp_path / "missing" / "out.ll"
    result = subprocess.run([str(BIN / "rev-translate"), MULTIPLIER, "-o", str(target)], capture_output=True, text=True)
    fails_with(result, f"rev-translate: error: cannot write {target}")


BUFFERED = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
"""The environment with Python's standard output buffered, as it is by
default: what a failed write leaves is then flushed again at the exit
(``cli._flush_at_exit``), where an unbuffered one holds nothing."""

STANDARD_OUTPUTS = {
    # the shell's ``>&-``, for the process itself: a file 1 closed by the
    # parent (``subprocess.DEVNULL`` is an open file)
    "closed": ('exec "$@" >&-', "it is closed"),
    "full": ('exec "$@" >/dev/full', "No space left on device"),
}


@pytest.mark.parametrize("output", STANDARD_OUTPUTS)
@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("rev-opt", [MULTIPLIER, "--rev-invert"]),
        ("rev-translate", [MULTIPLIER, "--emit=header"]),
        ("rev-run", [MULTIPLIER, "-e", "multiplier", "--backend=interpreter", "--args", "2", "3", "5"]),
        *[(tool, [flag]) for tool in ("rev-opt", "rev-run", "rev-translate") for flag in ("--help", "--version")],
    ],
)
def test_a_standard_output_that_takes_nothing(output: str, tool: str, arguments: list[str]):
    """The installed command, with its standard output closed or full, says
    so on one line and exits 1: not an internal error, a silent exit 0, or
    Python's "Exception ignored" lines and exit 120 from the interpreter's
    last flush.  Help and version text too, which argparse's own actions
    lost with exit 0."""
    redirection, why = STANDARD_OUTPUTS[output]
    if output == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    result = subprocess.run(
        ["sh", "-c", redirection, "sh", str(BIN / tool), *arguments], capture_output=True, text=True, env=BUFFERED
    )
    fails_with(result, f"{tool}: error: cannot write standard output: {why}")


MAINS = {"rev-opt": rev_opt.main, "rev-run": rev_run.main, "rev-translate": rev_translate.main}


@pytest.mark.parametrize("tool", MAINS)
def test_every_tool_prints_its_version(capsys: pytest.CaptureFixture[str], tool: str):
    with pytest.raises(SystemExit) as exit:
        MAINS[tool](["--version"])
    assert exit.value.code == 0
    revmlir, xdsl = importlib.metadata.version("revmlir"), importlib.metadata.version("xdsl")
    assert capsys.readouterr() == (f"{tool} (revmlir {revmlir}) on xDSL {xdsl}\n", "")


class FullOutput(io.StringIO):
    """A standard output that takes nothing, as ``/dev/full``."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("rev-opt", [MULTIPLIER, "--rev-invert"]),
        ("rev-translate", [MULTIPLIER, "--emit=header"]),
        ("rev-run", [MULTIPLIER, "-e", "multiplier", "--backend=interpreter", "--args", "2", "3", "5"]),
        *[(tool, [flag]) for tool in MAINS for flag in ("--help", "--version")],
    ],
)
def test_a_failed_write_leaves_the_callers_standard_output(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tool: str, arguments: list[str]
):
    """A program calling a tool's ``main`` gets the tool's one line and
    exit 1, and goes on with its own ``sys.stdout``: the tool does not
    replace it process-wide."""
    full = FullOutput()
    monkeypatch.setattr(sys, "stdout", full)
    assert MAINS[tool](arguments) == 1
    assert sys.stdout is full
    assert capsys.readouterr().err == f"{tool}: error: cannot write standard output: No space left on device\n"


CLOSES_ITS_OUTPUT = """
import errno, io, sys
from revmlir.tools import rev_translate

class Full(io.StringIO):
    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")

own = sys.stdout
sys.stdout = Full()
print(rev_translate.main(["--version"]), file=sys.stderr)
sys.stdout = own
sys.stdout.close()
"""


def test_a_program_may_close_its_output_after_a_failed_write():
    """A program whose call of a tool's ``main`` failed to write, and which
    then closes its own standard output, exits as it would have without
    the call: the exit's flush (``cli._flush_at_exit``) skips a closed
    stream, as Python's does."""
    result = subprocess.run(
        [sys.executable, "-c", CLOSES_ITS_OUTPUT], capture_output=True, text=True, env=BUFFERED, timeout=120
    )
    assert (result.returncode, result.stderr) == (
        0,
        "rev-translate: error: cannot write standard output: No space left on device\n1\n",
    )


class Messageless(Exception):
    """An exception raised without a message, as a bare ``raise`` of a
    class or an ``assert`` raises it."""


OUTSIDE_DIAGNOSTICS = [
    # the engine and the compile are made outside the diagnostics of the
    # program's own mistakes: their failures reach ``run_tool``
    ("rev-run", rev_run, "RevInterpreter", ["-e", "f", "--backend=interpreter", "--args", "1.0", "2.0"]),
    ("rev-run", rev_run, "_compile", ["-e", "f", "--args", "1.0", "2.0"]),
    ("rev-translate", rev_translate, "write_output", ["-o", "out.ll"]),
]


@pytest.mark.parametrize(
    "raised, code, shown",
    [(Messageless, 2, "internal error (Messageless)"), (KeyboardInterrupt, 130, "interrupted")],
)
@pytest.mark.parametrize("tool, module, step, args", OUTSIDE_DIAGNOSTICS)
def test_a_failure_outside_the_diagnostics_is_one_line(
    run,
    program: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    tool: str,
    module,
    step: str,
    args: list[str],
    raised: type[BaseException],
    code: int,
    shown: str,
):
    """An internal error without a message is named by its class (exit 2);
    Ctrl-C is told in one line with the shell's status for SIGINT, as
    rev-opt tells it; neither is a traceback."""

    def fail(*_: object, **__: object) -> None:
        raise raised

    monkeypatch.setattr(module, step, fail)
    monkeypatch.delenv("REVMLIR_TRACEBACK", raising=False)
    monkeypatch.chdir(tmp_path)
    result = run(tool, program, *args)
    assert result.returncode == code
    assert result.stderr == f"{tool}: {shown}\n"


def test_an_internal_error_with_a_message_is_named_by_its_class_too(run, program: str, monkeypatch):
    def fail(*_: object, **__: object) -> None:
        raise KeyError("f")

    monkeypatch.setattr(rev_run, "_compile", fail)
    monkeypatch.delenv("REVMLIR_TRACEBACK", raising=False)
    result = run("rev-run", program, "-e", "f", "--args", "1.0", "2.0")
    assert result.stderr == "rev-run: internal error (KeyError): 'f'\n"


@pytest.mark.parametrize(
    "step, error, shown",
    [
        ("__init__", Messageless(), "internal error (Messageless)"),
        ("__init__", KeyError("f"), "internal error (KeyError): 'f'"),
        ("run", OSError(), "internal error (OSError)"),
        ("run", KeyError("f"), "internal error (KeyError): 'f'"),
    ],
)
def test_rev_opt_names_an_internal_failure_by_its_class_as_rev_run_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, step: str, error: Exception, shown: str
):
    """Making the driver (its passes and pipeline) and opening its files
    are outside the per-chunk diagnostics; a failure there that is no
    pipeline or file mistake is internal, with or without a message (an
    ``OSError()`` has neither a message nor an ``strerror``)."""

    def fail(*_: object, **__: object) -> None:
        raise error

    monkeypatch.setattr(rev_opt.RevOptMain, step, fail)
    monkeypatch.delenv("REVMLIR_TRACEBACK", raising=False)
    assert rev_opt.main([MULTIPLIER]) == 2
    assert capsys.readouterr().err == f"rev-opt: {shown}\n"


@pytest.mark.parametrize("step", ["__init__", "run"])
def test_rev_opt_interrupted_exits_cleanly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, step: str
):
    """Ctrl-C while the driver is made (its passes, which import code) or
    while it runs is told in one line, with the shell's status for SIGINT,
    not a traceback."""

    def interrupt(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(rev_opt.RevOptMain, step, interrupt)
    monkeypatch.delenv("REVMLIR_TRACEBACK", raising=False)
    assert rev_opt.main([MULTIPLIER]) == 130
    assert capsys.readouterr().err == "rev-opt: interrupted\n"
