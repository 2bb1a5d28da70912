"""rev-opt and rev-run as a user meets them: one-line diagnostics, non-zero
exit codes, never a Python traceback.

Each tool runs as a process of its own with its arguments and standard
files, forked from the tests' tool server (``served``), which has
imported the tools' modules once; the installed console scripts are
started in ``test_rev_opt.py`` and ``test_cli_input_errors.py``."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


BAD_INPUTS = {
    "garbage": ("garbage {", "error: "),
    "unknown-op": ('"foo.bar"() : () -> ()', "foo.bar is not registered"),
    "irreversible": (
        "rev.func @f(%x: f64) {\n  %t = arith.mulf %x, %x : f64\n"
        "  %x1 = rev.sub %x, %t : f64\n  rev.return %x1 : f64\n}\n",
        "stdin:3:3: error: [self-read]",
    ),
    "type-error": (
        "rev.func @f(%x: f64) {\n  rev.return %x : i64\n}\n",
        "error:",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_rev_opt_bad_input_is_one_line(served, case):
    text, expected = BAD_INPUTS[case]
    result = served("rev-opt", input=text)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert expected in lines[0]


@pytest.mark.parametrize(
    "pipeline, expected",
    [
        ("nosuchpass", "Unrecognized passes: ['nosuchpass']"),
        ("rev-invert{bogus=1}", "bogus"),
        ("rev-invert{in-place=maybe}", "Incompatible types"),
        ("rev-invert{functions=nope}", "no rev.func named @nope"),
    ],
)
def test_rev_opt_bad_pipeline(served, pipeline, expected):
    result = served("rev-opt", str(ROOT / "examples" / "multiplier.mlir"), "-p", pipeline)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_rev_opt_help_lists_every_pass(served):
    from revmlir.passes import get_all_passes

    result = served("rev-opt", "--help")
    assert result.returncode == 0
    for name in get_all_passes():
        assert name in result.stdout


def test_rev_run_forward_and_inverse(served):
    path = str(ROOT / "examples" / "multiplier.mlir")
    forward = served("rev-run", path, "-e", "multiplier", "--args", "2", "3", "5")
    assert forward.returncode == 0
    assert forward.stdout.split("\n")[:3] == ["17 : i64", "3 : i64", "5 : i64"]
    backward = served(
        "rev-run",
        path,
        "-e",
        "multiplier",
        "--inverse",
        "--counters",
        "--args",
        "17",
        "3",
        "5",
    )
    assert backward.stdout.splitlines()[0] == "2 : i64"
    assert "// @multiplier: calls=0 uncalls=1 instructions=1" in backward.stdout


def test_rev_run_does_not_load_the_python_frontend():
    """rev-run reads a .mlir file: the frontend that compiles Python
    functions (a quarter of a second of start-up for every rev-run, a lit
    RUN line's among them) is not what it needs, nor is a range check of
    an argument (``revmlir.runtime.arguments``)."""
    code = (
        "import sys\n"
        "from revmlir.tools.rev_run import main\n"
        f"status = main([{str(ROOT / 'examples' / 'multiplier.mlir')!r}, '-e', 'multiplier', '--args', '2', '3', '5'])\n"
        "print(status, [m for m in sys.modules if m.startswith('revmlir.frontend')], file=sys.stderr)\n"
        f"status = main([{str(ROOT / 'examples' / 'multiplier.mlir')!r}, '-e', 'multiplier', '--args', '2', '3', str(2**63)])\n"
        "print(status, [m for m in sys.modules if m.startswith('revmlir.frontend')], file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stderr.splitlines() == [
        "0 []",
        "rev-run: error: argument #2: 9223372036854775808 is out of range for i64 "
        "(-9223372036854775808 to 9223372036854775807)",
        "1 []",
    ], result.stderr
    assert result.stdout.splitlines()[:3] == ["17 : i64", "3 : i64", "5 : i64"]


def test_rev_run_reports_invertibility_errors(served, tmp_path):
    program = tmp_path / "dirty.mlir"
    program.write_text(
        "rev.func @f(%x: f64) {\n"
        "  %zero = arith.constant 0.0 : f64\n"
        "  %n = anc.alloc %zero : f64\n"
        "  %n1 = rev.add %n, %x : f64\n"
        "  anc.free %n1, %zero : f64\n"
        "  rev.return %x : f64\n"
        "}\n"
    )
    result = served("rev-run", str(program), "-e", "f", "--args", "3.0")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"{program}:5:3: error: [invertibility] 'anc.free' in @f: ancilla freed holding 3.0, expected 0.0"
    )


@pytest.mark.parametrize(
    "args, expected",
    [
        (["-e", "nope", "--args", "1"], "no rev.func named @nope"),
        (["-e", "multiplier", "--args", "1", "2"], "takes 3 argument(s)"),
        (["-e", "multiplier", "--args", "1", "2", "x"], "cannot read 'x'"),
        (["-e", "multiplier", "--args", "1.5", "2", "3"], "must be an integer"),
    ],
)
def test_rev_run_usage_errors(served, args, expected):
    result = served("rev-run", str(ROOT / "examples" / "multiplier.mlir"), *args)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert expected in result.stderr
