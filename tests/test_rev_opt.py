"""rev-opt where mlir-opt users' fingers expect it: pipelines (-p,
--pass-pipeline with builtin.module(...), a flag per pass), stdin as ``-``,
inputs of any name, the --mlir-print-* flags, and a --verify-diagnostics that
checks expected-* annotations. Every failure is one line and exit code 1."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from revmlir.tools.rev_opt import PipelineArgument, PipelineError, QuotedPipeline, Traced, main, module_pipeline

ROOT = Path(__file__).parent.parent
BIN = Path(sys.executable).parent
MULTIPLIER = ROOT / "examples" / "multiplier.mlir"
LANES = ROOT / "tests" / "filecheck" / "passes" / "ad_adjoint_lanes.mlir"


def rev_opt(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """rev-opt in this process: exit code, stdout, stderr."""
    status = main([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- pipelines ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("rev-invert", "rev-invert"),
        ("builtin.module(rev-verify, rev-invert{in_place=true})", "rev-verify,rev-invert{in_place=true}"),
        (' builtin.module( a{x=1,2 y="p, q"} ,b ) ', 'a{x=1,2 y="p, q"},b'),
        ("builtin.module()", ""),
    ],
)
def test_module_pipeline_reads_both_forms(text: str, expected: str):
    assert module_pipeline(Traced.typed(text)).text == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("rev-strip-checks{functions=f.inv,g}", 'rev-strip-checks{functions="f.inv",g}'),
        ('ad-adjoint{functions="f.inv",h.adj.loss0 lanes=2}', 'ad-adjoint{functions="f.inv","h.adj.loss0" lanes=2}'),
        ("rev-lower-to-std{tolerance=0.000001}", "rev-lower-to-std{tolerance=0.000001}"),
        ("builtin.module(rev-gpu-outline{kernels=k.adj})", 'rev-gpu-outline{kernels="k.adj"}'),
    ],
)
def test_names_with_dots_are_quoted_for_xdsl(text: str, expected: str):
    """Derived functions have dots in their names, which xDSL's pipeline
    lexer reads only quoted ("Unknown token" at the dot)."""
    assert QuotedPipeline.of([PipelineArgument(text, module_pipeline(Traced.typed(text)))]).text == expected


@pytest.mark.parametrize(
    "args, line, at",
    [
        # at: what the caret points at, the first time it stands in what is shown
        (["-p", "rev-invert{functions=abs.inv in_place=true x%}"], 1, "%"),
        (["--rev-invert=functions=a.b,c.d.e x=.5"], 1, ".5"),
        (["-p", "rev-invert,f.inv"], 1, "f.inv"),
        (["-p", "  builtin.module(rev-invert,   rev-strip-checks{x%})"], 1, "%"),
        (["-p", "rev-invert", "-p", 'rev-strip-checks{functions="f.inv",g.h x%}'], 2, "%"),
        (["--rev-invert", '--rev-strip-checks={functions=f.inv  y="a b" %}'], 2, "%"),
        (["--canonicalize", "-p", "cse", "--rev-invert=functions=f.inv @"], 3, "@"),
        (["-p", "rev-invert", "--rev-strip-checks=functions="], 2, None),
    ],
)
def test_a_syntax_error_is_shown_in_the_argument_as_written(capsys, args: list[str], line: int, at: str | None):
    """The rewriting before xDSL reads the pipeline (the pieces joined,
    ``builtin.module`` and spaces dropped, flags made ``name{…}``, quotes
    added around dotted names) is no part of what the message shows, nor
    of its place: line N is the Nth pipeline argument, as typed."""
    status, _, err = rev_opt(capsys, MULTIPLIER, *args)
    assert status == 1
    typed = [arg if arg.startswith("--") or i and args[i - 1] == "-p" else None for i, arg in enumerate(args)]
    shown = [text for text in typed if text is not None and text != "-p"][line - 1]
    column = (shown.index(at) if at is not None else len(shown)) + 1
    assert pipeline_syntax_error(err)[:3] == (f"pass-pipeline:{line}:{column}", shown, " " * (column - 1) + "^")
    assert shown.count('"') == err.count('"')


def pipeline_syntax_error(err: str) -> tuple[str, str, str, str]:
    """A pipeline syntax error's lines: the place, the argument, the caret
    line (to its first caret) and the reason."""
    heading, place, shown, carets, reason = err.rstrip("\n").split("\n")
    assert heading == "rev-opt: error: Error parsing pass pipeline specification:", err
    return place, shown, carets[: carets.index("^") + 1], reason.strip()


@pytest.mark.parametrize(
    "args, place, shown",
    [
        # past the end of the first argument, not at the start of the empty second
        (["-p", "cse{", "-p", ""], "pass-pipeline:1:5", "cse{"),
        # the comma joining the arguments stands after the first, where its `}` is missing
        (["-p", "cse{", "-p", "cse"], "pass-pipeline:1:5", "cse{"),
        # a line break inside an argument is a space: its columns and the line count stay
        (["-p", "cse,\ncse{x%}"], "pass-pipeline:1:11", "cse, cse{x%}"),
        (["-p", "cse\r\n", "-p", "cse{x%}"], "pass-pipeline:2:6", "cse{x%}"),
    ],
)
def test_a_syntax_error_stands_in_its_argument(capsys, args: list[str], place: str, shown: str):
    """Line L is the Lth argument whatever it holds, and the caret stands
    under the column shown: the message keeps its lines and spaces."""
    status, _, err = rev_opt(capsys, MULTIPLIER, *args)
    assert status == 1
    column = int(place.rsplit(":", 1)[1])
    assert pipeline_syntax_error(err)[:3] == (place, shown, " " * (column - 1) + "^")


def test_derived_functions_are_named_in_every_pipeline_spelling(capsys):
    spellings = [
        ["-p", "rev-invert,rev-strip-checks{functions=multiplier.inv}"],
        ["--rev-invert", "--rev-strip-checks=functions=multiplier.inv"],
        ["--pass-pipeline=builtin.module(rev-invert, rev-strip-checks{functions=multiplier.inv})"],
    ]
    results = [rev_opt(capsys, MULTIPLIER, *spelling) for spelling in spellings]
    assert results[0][0] == 0, results[0][2]
    assert results[0] == results[1] == results[2]


@pytest.mark.parametrize(
    "text, message",
    [
        ("builtin.module(func.func(canonicalize))", "'func.func(...)'"),
        ("builtin.module(rev-invert", "without its closing ')'"),
        ("rev-verify,rev-invert)", "nested pass pipelines are not supported"),
    ],
)
def test_module_pipeline_refuses_what_xdsl_cannot_run(text: str, message: str):
    with pytest.raises(PipelineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        module_pipeline(Traced.typed(text))


def test_every_pipeline_spelling_gives_the_same_program(capsys):
    comma = rev_opt(capsys, MULTIPLIER, "-p", "rev-invert{in_place=true},rev-invert")
    anchored = rev_opt(
        capsys,
        MULTIPLIER,
        "--pass-pipeline=builtin.module(rev-invert{in_place=true}, rev-invert)",
    )
    flags = rev_opt(capsys, "--rev-invert=in_place=true", MULTIPLIER, "--rev-invert")
    braces = rev_opt(capsys, MULTIPLIER, "--rev-invert={in_place=true}", "--rev-invert")
    assert comma[0] == 0 and "@multiplier.inv" in comma[1]
    assert comma == anchored == flags == braces


def test_pass_flags_run_in_command_line_order(capsys):
    # Inverting after lowering finds no rev.func left to invert.
    invert_first = rev_opt(capsys, MULTIPLIER, "--rev-invert", "--rev-lower-to-std")
    lower_first = rev_opt(capsys, MULTIPLIER, "--rev-lower-to-std", "--rev-invert")
    assert invert_first[0] == lower_first[0] == 0
    assert "func.func @multiplier.inv" in invert_first[1]
    assert "@multiplier.inv" not in lower_first[1]
    assert invert_first == rev_opt(capsys, MULTIPLIER, "-p", "rev-invert,rev-lower-to-std")
    # -p and pass flags mix, still in order.
    assert lower_first == rev_opt(capsys, MULTIPLIER, "-p", "rev-lower-to-std", "--rev-invert")
    assert invert_first == rev_opt(capsys, MULTIPLIER, "--rev-invert", "-p", "rev-lower-to-std")


def test_pass_flag_options_in_mlir_opt_form(capsys):
    pipeline = rev_opt(capsys, LANES, "-p", "ad-adjoint{functions=sum lanes=2}")
    flag = rev_opt(capsys, LANES, "--ad-adjoint=functions=sum lanes=2")
    assert pipeline[0] == 0 and "@sum.adj2" in pipeline[1]
    assert flag == pipeline


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rev-invert=bogus=1"], 'rev-invert{bogus=1}: Provided arguments ["bogus"] not found'),
        (
            ["--rev-invert=in_place=maybe"],
            "rev-opt: error: rev-invert{in_place=\"maybe\"}: Incompatible types: given ('maybe',), expected bool",
        ),
        (
            ["-p", "rev-invert,ad-adjoint{lanes=x}"],
            "rev-opt: error: ad-adjoint{lanes=\"x\"}: Incompatible types: given ('x',), expected int",
        ),
        (["-p", "rev-lower-to-std{tolerance=1e-6}"], "expected float (write tolerance=1.0e-6: a float in a pipeline"),
        (["-p", "rev-lower-to-std{tolerance=-2}"], "given (-2,), expected float (write tolerance=-2.0: a float in"),
        (["-p", "rev-invert{in_place=yes},nosuch"], "rev-opt: error: Unrecognized passes: ['nosuch']"),
        (["--rev-frobnicate"], "unrecognized arguments: --rev-frobnicate"),
        (["--rev-inv"], "unrecognized arguments: --rev-inv"),  # no abbreviations
        (["-p", "builtin.module(func.func(canonicalize))"], "nested pass pipelines"),
        (["--pass-pipeline", "builtin.module(rev-invert"], "closing ')'"),
    ],
)
def test_bad_pipelines_are_one_line(capsys, args: list[str], message: str):
    try:
        status = main([str(MULTIPLIER), *args])
    except SystemExit as exit:  # argparse's own usage errors
        status = exit.code
    _, err = capsys.readouterr()
    assert status in (1, 2)
    assert message in err.strip().splitlines()[-1]
    assert "Traceback" not in err


def test_a_float_option_takes_a_decimal_point(capsys):
    """The hint rewrites the number given; with no number it has nothing
    to say, and a float with an exponent and a decimal point is read."""
    status, _, err = rev_opt(capsys, MULTIPLIER, "-p", "rev-lower-to-std{tolerance=x}")
    assert status == 1 and one_line_error(err).endswith("given ('x',), expected float")
    assert rev_opt(capsys, MULTIPLIER, "-p", "rev-lower-to-std{tolerance=1.0e-6}")[0] == 0


def test_help_lists_a_flag_per_pass():
    from revmlir.passes import get_all_passes

    result = subprocess.run([str(BIN / "rev-opt"), "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for name in [*get_all_passes(), "canonicalize", "cse"]:
        assert f"--{name} OPTIONS" in result.stdout, name
    for flag in ["--pass-pipeline", "--mlir-print-ir-after-all", "--verify-diagnostics"]:
        assert flag in result.stdout
    # xdsl-opt's flags without a help of their own get one
    assert "--disable-verify do not verify the input after parsing" in " ".join(result.stdout.split())
    assert "-v, --version print the versions of revmlir and xDSL, and exit" in " ".join(result.stdout.split())
    # Without white space: argparse wraps the flags' help, at hyphens too.
    text = "".join(result.stdout.split())
    for name, factory in get_all_passes().items():
        # The whole first paragraph: a summary cut at the docstring's first
        # line break stopped mid-sentence.
        paragraph = (factory().__doc__ or "").strip().split("\n\n")[0]
        summary = "".join(paragraph.split()).replace("``", "`")
        assert summary.endswith("."), name
        assert f"--{name}OPTIONS{summary}" in text, name  # the flag's own help
        assert f"{name}{summary}" in text.split("revmlirpasses", 1)[1], name  # the list
    options = result.stdout.split("revmlir passes", 1)[1]
    assert "tolerance: float (default: 1e-08)" in options
    assert "all_functions: bool (default: false)" in options
    assert "'" not in "".join(line.partition(": ")[2] for line in options.splitlines() if line.startswith("      "))


def test_each_request_names_the_pass_that_expands_it(capsys, tmp_path: Path):
    """``rev-lower-to-std`` refuses an ``ad`` request by the pass its
    ``EXPANDED_BY`` names: that pass must take the request away (and
    the lowering then runs)."""
    from revmlir.dialects.ad import FunctionRequestOp

    requests = FunctionRequestOp.__subclasses__()
    assert len(requests) == 7
    for request in requests:
        path = tmp_path / "request.mlir"
        path.write_text(
            f"rev.func @f(%x: f64) {{\n  %x1 = rev.neg %x : f64\n  rev.return %x1 : f64\n}}\n{request.name} @f\n"
        )
        status, out, err = rev_opt(capsys, path, "-p", f"{request.EXPANDED_BY},rev-lower-to-std")
        assert (status, err) == (0, ""), request.name
        assert request.name not in out and "func.func @f(" in out, request.name


@pytest.mark.parametrize(("text", "line"), [("", 1), ("// a comment only\n", 2)])
def test_an_input_without_an_operation(capsys, tmp_path: Path, text: str, line: int):
    path = tmp_path / "empty.mlir"
    path.write_text(text)
    status, out, err = rev_opt(capsys, path)
    assert (status, out) == (1, "")
    assert one_line_error(err) == (
        f"{path}:{line}:1: error: the input holds no operation (an empty module is written 'builtin.module {{}}')"
    )


def test_a_run_loads_only_the_passes_it_runs():
    """The help's pass list and flag summaries load every pass module (the
    interpreter's and the lowering's among them), seconds of start-up that a
    run of rev-opt, e.g. each RUN line of the lit suite, must not pay."""
    code = (
        "import sys\n"
        "from revmlir.tools.rev_opt import main\n"
        f"status = main([{str(MULTIPLIER)!r}, '-p', 'rev-verify,rev-invert'])\n"
        "loaded = [m for m in ('revmlir.interpreter', 'revmlir.lowering.rev_to_std',"
        " 'revmlir.passes.adjoint', 'llvmlite', 'numpy') if m in sys.modules]\n"
        "print(status, loaded, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stderr.strip().splitlines()[-1] == "0 []", result.stderr
    assert "rev.func @multiplier.inv" in result.stdout


@pytest.mark.parametrize(
    "flags, verified",
    [
        ([], 1),  # the input
        (["-p", "rev-invert"], 2),  # the input, then after the pass
        (["-p", "rev-invert,rev-invert"], 3),
        (["-p", "rev-invert", "--time-passes"], 3),  # xDSL's callback also before the first pass
        (["-p", "rev-invert", "--disable-verify"], 0),
    ],
)
def test_the_input_is_verified_once(capsys, monkeypatch: pytest.MonkeyPatch, flags: list[str], verified: int):
    """Every run verifies the parsed input (``verify_module``); xDSL's
    callback between passes verifies after each pass, and not the input
    again (a verification of every RUN line's whole input)."""
    from xdsl.dialects.builtin import ModuleOp

    calls: list[ModuleOp] = []
    original = ModuleOp.verify

    def counting(self: ModuleOp, verify_nested_ops: bool = True) -> None:
        calls.append(self)
        original(self, verify_nested_ops)

    monkeypatch.setattr(ModuleOp, "verify", counting)
    status, out, err = rev_opt(capsys, MULTIPLIER, *flags)
    assert status == 0, err
    assert len(calls) == verified
    assert ("rev.func @multiplier.inv" in out) == bool(flags)


# -- input and output ---------------------------------------------------------


def test_stdin_as_dash_with_an_anchored_pipeline(served):
    result = served(
        "rev-opt", "--pass-pipeline=builtin.module(rev-verify,rev-invert)", "-", input=MULTIPLIER.read_text()
    )
    assert result.returncode == 0, result.stderr
    assert "rev.func @multiplier.inv(%y: i64, %a: i64, %b: i64)" in result.stdout


def test_any_file_extension(capsys, tmp_path: Path):
    text = tmp_path / "multiplier.txt"
    text.write_text(MULTIPLIER.read_text())
    assert rev_opt(capsys, text)[1] == rev_opt(capsys, MULTIPLIER)[1]


def test_diagnostics_name_the_input(capsys, tmp_path: Path):
    source = tmp_path / "self.rev"
    source.write_text("rev.func @f(%x: f64) {\n  %x1 = rev.sub %x, %x : f64\n  rev.return %x1 : f64\n}\n")
    status, _, err = rev_opt(capsys, source)
    assert status == 1
    assert one_line_error(err).startswith(f"{source}:2:3: error: [self-read]")


NOT_UTF8 = b"rev.func @f(%x: f64) {\n  // caf\xe9\n  rev.return %x : f64\n}\n"


@pytest.mark.parametrize(
    "make_args, message",
    [
        (
            lambda tmp: [tmp / "missing.mlir"],
            "rev-opt: error: cannot open '{tmp}/missing.mlir': No such file or directory",
        ),
        (lambda tmp: [tmp], "rev-opt: error: cannot open '{tmp}': Is a directory"),
        (
            lambda tmp: [MULTIPLIER, "-o", tmp / "nowhere" / "out.mlir"],
            "rev-opt: error: cannot open '{tmp}/nowhere/out.mlir': No such file or directory",
        ),
        (lambda tmp: [tmp / "latin1.mlir"], "{tmp}/latin1.mlir:2:9: error: the input is not UTF-8 text (byte 0xe9)"),
    ],
    ids=["missing", "directory", "output-directory", "not-utf8"],
)
def test_unreadable_input_and_unwritable_output(capsys, tmp_path: Path, make_args, message):
    (tmp_path / "latin1.mlir").write_bytes(NOT_UTF8)
    status, _, err = rev_opt(capsys, *make_args(tmp_path))
    assert status == 1
    assert one_line_error(err) == message.format(tmp=tmp_path)


def test_not_utf8_on_stdin(served):
    result = served("rev-opt", "-", input=NOT_UTF8, text=False)
    assert result.returncode == 1
    assert result.stderr.decode() == ("stdin:2:9: error: the input is not UTF-8 text (byte 0xe9)\n")


# -- printing -----------------------------------------------------------------


def test_mlir_print_flags_are_xdsl_opts(capsys):
    generic = rev_opt(capsys, MULTIPLIER, "--mlir-print-op-generic")
    assert generic == rev_opt(capsys, MULTIPLIER, "--print-op-generic")
    assert '"rev.add"(%y, %t) : (i64, i64) -> i64' in generic[1]
    located = rev_opt(capsys, MULTIPLIER, "--mlir-print-debuginfo")
    assert located == rev_opt(capsys, MULTIPLIER, "--print-debuginfo")
    assert f'loc("{MULTIPLIER}":' in located[1]
    # xDSL never prints aliases: local scope is what it prints anyway.
    assert rev_opt(capsys, MULTIPLIER, "--mlir-print-debuginfo", "--mlir-print-local-scope") == located


def test_print_ir_after_and_before_all(capsys):
    status, out, err = rev_opt(
        capsys,
        MULTIPLIER,
        "-p",
        "rev-verify,rev-invert",
        "--mlir-print-ir-before-all",
        "--mlir-print-ir-after-all",
    )
    assert status == 0
    headers = [line for line in err.splitlines() if line.startswith("// -----//")]
    assert headers == [
        "// -----// IR Dump Before RevVerifyPass (rev-verify) //----- //",
        "// -----// IR Dump After RevVerifyPass (rev-verify) //----- //",
        "// -----// IR Dump Before RevInvertPass (rev-invert) //----- //",
        "// -----// IR Dump After RevInvertPass (rev-invert) //----- //",
    ]
    after_invert = err.split(headers[-1] + "\n")[1]
    assert after_invert.strip() == out.strip()
    before_invert = err.split(headers[2] + "\n")[1].split("// -----//")[0]
    assert "@multiplier.inv" not in before_invert and "@multiplier(" in before_invert


def test_print_ir_after_all_in_the_generic_form(capsys):
    _, _, err = rev_opt(capsys, MULTIPLIER, "--rev-invert", "--mlir-print-ir-after-all", "--mlir-print-op-generic")
    assert err.startswith("// -----// IR Dump After RevInvertPass (rev-invert) //----- //\n")
    assert '"rev.func"() <{sym_name = "multiplier.inv"' in err


# -- xdsl-opt plug-in ---------------------------------------------------------


def test_xdsl_opt_runs_revmlir_passes(tmp_path: Path):
    """Stock xdsl-opt finds revmlir through the entry point pyproject.toml
    declares (installed here as the metadata of a distribution on the path)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())
    group = "xdsl.universe"
    entry = declared["project"]["entry-points"][group]
    info = tmp_path / "revmlir_plugin-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: revmlir-plugin\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entry.items())
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]))
    result = subprocess.run(
        [str(BIN / "xdsl-opt"), str(MULTIPLIER), "-p", "rev-invert"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "rev.func @multiplier.inv(%y: i64, %a: i64, %b: i64)" in result.stdout
    assert "%y_1 = rev.sub %y, %t : i64" in result.stdout


def test_several_kernels_are_named_as_a_list(capsys):
    """``kernels=f,f.inv`` as tools.md writes it: the option was one string,
    which a list (or a dotted name) did not fit."""
    parallel = ROOT / "tests" / "filecheck" / "lowering" / "parallel.mlir"
    both = rev_opt(capsys, parallel, "-p", "rev-invert,rev-lower-to-std,rev-gpu-outline{kernels=gather,gather.inv}")
    assert both[0] == 0, both[2]
    assert both[1].count('"gpu.func"') == 2 and "@module_kernels::@gather.inv" in both[1]
    one = rev_opt(capsys, parallel, "-p", "rev-invert,rev-lower-to-std,rev-gpu-outline{kernels=gather}")
    assert (one[0], one[1].count('"gpu.func"')) == (0, 1)
