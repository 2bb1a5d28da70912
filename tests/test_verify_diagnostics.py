"""rev-opt --verify-diagnostics checks expected-* annotations as mlir-opt
does: a missing or an unexpected diagnostic fails the run with a message at
the annotation or at the diagnostic."""

from __future__ import annotations

from pathlib import Path

import pytest

from revmlir.tools.rev_opt import main
from revmlir.tools.verify_diagnostics import (
    AnnotationError,
    Diagnostic,
    check,
    read_diagnostic,
    read_expectations,
)


def where(text: str, first_line: int = 1) -> list[tuple[str, int | None, str]]:
    return [(e.severity, e.line, e.text) for e in read_expectations(text, first_line)]


def test_designators_name_lines():
    text = "\n".join(
        [
            "op0",  # 1
            "op1 // expected-error {{here}}",  # 2: annotated code
            "// expected-note@above {{above}}",  # 3: op1
            "// expected-remark@below {{below}}",  # 4
            "// expected-warning@below {{also}}",  # 5
            "op2",  # 6
            "// expected-error@-6 {{minus}}",  # 7
            "// expected-error@+2 {{plus}}",  # 8
            "// expected-error@unknown {{nowhere}}",
        ]
    )
    assert where(text) == [
        ("error", 2, "here"),
        ("note", 2, "above"),
        ("remark", 6, "below"),
        ("warning", 6, "also"),
        ("error", 1, "minus"),
        ("error", 10, "plus"),
        ("error", None, "nowhere"),
    ]
    # In a chunk of --split-input-file, lines count in the whole file.
    assert where("x\n// expected-error@above {{a}}", first_line=41) == [("error", 41, "a")]


def test_message_is_a_substring_and_regex_only_with_re():
    plain, regex = read_expectations(
        "x // expected-error {{[rule] a.b}}\ny // expected-error-re {{[rule] {{[0-9]+}} at {{.*}}f.mlir:3:1}}\n"
    )
    assert plain.matches(Diagnostic("error", "'op': [rule] a.b c", 1))
    assert not plain.matches(Diagnostic("error", "'op': [rule] aXb c", 1))
    assert not plain.matches(Diagnostic("error", "'op': [rule] a.b c", 2))
    assert not plain.matches(Diagnostic("warning", "'op': [rule] a.b c", 1))
    assert regex.matches(Diagnostic("error", "[rule] 42 at /x/f.mlir:3:1 and", 2))
    assert not regex.matches(Diagnostic("error", "rule 42 at /x/f.mlir:3:1", 2))


@pytest.mark.parametrize(
    "text, message, line",
    [
        ("x\n// expected-error {{unclosed", "expected '{{message}}'", 2),
        ("x // expected-error@+x {{m}}", "expected '{{message}}'", 1),
        ("// expected-error@above {{m}}\nx", "no line above", 1),
        ("x\n// expected-error@below {{m}}", "no line below", 2),
        ("x // expected-error-re {{a {{[}}}}", "invalid regex", 1),
        ("x // expected-error-re {{a {{b}}", "without '}}'", 1),
    ],
)
def test_malformed_annotations(text: str, message: str, line: int):
    with pytest.raises(AnnotationError, match=message.replace("{", r"\{")) as caught:
        read_expectations(text)
    assert caught.value.line == line


def test_check_reports_like_mlir_opt():
    expectations = read_expectations("a // expected-error {{right}}\nb // expected-error {{wrong}}\n")
    produced = [Diagnostic("error", "the right one", 1, 3), Diagnostic("error", "other", 2, 5)]
    assert check(expectations, produced, "f.mlir") == [
        "f.mlir:2:5: error: unexpected error: other",
        'f.mlir:2:6: error: expected error "wrong" was not produced',
    ]
    assert check(expectations[:1], produced[:1], "f.mlir") == []
    assert check([], [Diagnostic("error", "lost")], "f.mlir") == ["f.mlir: error: unexpected error: lost"]


def test_read_diagnostic_locates_pass_failures():
    assert read_diagnostic("f.mlir:3:5: error: 'op' at f.mlir:9:1 m", "f.mlir") == (
        Diagnostic("error", "'op' at f.mlir:9:1 m", 3, 5)
    )
    assert read_diagnostic("f.mlir: error: 'math.cbrt' at f.mlir:7:3 cannot", "f.mlir") == (
        Diagnostic("error", "'math.cbrt' at f.mlir:7:3 cannot", 7, 3)
    )
    assert read_diagnostic("f.mlir: error: no rev.func named @g", "f.mlir") == (
        Diagnostic("error", "no rev.func named @g")
    )


# -- rev-opt --verify-diagnostics -------------------------------------------

SELF_READ = """\
rev.func @f(%x: f64) {
  %sq = arith.mulf %x, %x : f64
  %x1 = rev.sub %x, %sq : f64ANNOTATION
  rev.return %x1 : f64
}
"""
MESSAGE = "[self-read] 'rev.sub' reads its own target %x"


def verify(capsys, tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    source = tmp_path / "input.mlir"
    source.write_text(text)
    status = main([str(source), "--verify-diagnostics", *args])
    out, err = capsys.readouterr()
    return status, out, err.replace(str(source), "input.mlir")


def test_the_expected_error_passes(capsys, tmp_path: Path):
    status, out, err = verify(
        capsys, tmp_path, SELF_READ.replace("ANNOTATION", " // expected-error {{" + MESSAGE + "}}")
    )
    assert (status, out, err) == (0, "", "")


@pytest.mark.parametrize(
    "annotation, complaints",
    [
        (
            " // expected-error {{reads its own target %y}}",
            [
                f"input.mlir:3:3: error: unexpected error: {MESSAGE}",
                'input.mlir:3:34: error: expected error "reads its own target %y" was not produced',
            ],
        ),
        (
            " // expected-error@+1 {{" + MESSAGE + "}}",
            [
                f"input.mlir:3:3: error: unexpected error: {MESSAGE}",
                f'input.mlir:3:34: error: expected error "{MESSAGE}" was not produced',
            ],
        ),
        (
            " // expected-warning {{" + MESSAGE + "}}",
            [
                f"input.mlir:3:3: error: unexpected error: {MESSAGE}",
                f'input.mlir:3:34: error: expected warning "{MESSAGE}" was not produced',
            ],
        ),
        ("", [f"input.mlir:3:3: error: unexpected error: {MESSAGE}"]),
    ],
    ids=["wrong-text", "wrong-line", "wrong-severity", "unannotated"],
)
def test_a_wrong_expectation_fails(capsys, tmp_path: Path, annotation, complaints):
    status, out, err = verify(capsys, tmp_path, SELF_READ.replace("ANNOTATION", annotation))
    assert status == 1
    assert out == ""
    assert [line.split(" instead")[0].split("; use")[0] for line in err.splitlines()] == (complaints)


def test_an_expected_error_that_never_comes(capsys, tmp_path: Path):
    status, out, err = verify(
        capsys,
        tmp_path,
        "// expected-error@+1 {{never}}\nrev.func @f(%x: f64) {\n  rev.return %x : f64\n}\n",
    )
    assert status == 1
    assert "rev.func @f" in out  # the chunk succeeded and is printed
    assert err == 'input.mlir:1:4: error: expected error "never" was not produced\n'


def test_split_input_file_checks_every_chunk(capsys, tmp_path: Path):
    good = SELF_READ.replace("ANNOTATION", " // expected-error {{" + MESSAGE + "}}")
    bad = SELF_READ.replace("ANNOTATION", " // expected-error {{nope}}")
    status, out, err = verify(capsys, tmp_path, good + "\n// -----\n" + bad, "--split-input-file")
    assert status == 1
    assert out == "// -----\n"  # between the two chunks, which print nothing
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"input.mlir:10:3: error: unexpected error: {MESSAGE}")
    assert lines[1] == 'input.mlir:10:34: error: expected error "nope" was not produced'


def test_pass_failures_are_expected_on_their_op(capsys, tmp_path: Path):
    program = (
        "rev.func @f(%y: f64, %x: f64) {\n"
        "  // expected-error@+1 {{'math.cbrt' has no derivative rule}}\n"
        "  %t = math.cbrt %x : f64\n"
        "  %y1 = rev.add %y, %t : f64\n"
        "  rev.return %y1, %x : f64, f64\n"
        "}\n"
        "ad.adjoint @f\n"
    )
    assert verify(capsys, tmp_path, program, "-p", "ad-adjoint")[0] == 0
    moved = program.replace("@+1", "@+2")
    status, _, err = verify(capsys, tmp_path, moved, "-p", "ad-adjoint")
    assert status == 1
    assert err.startswith("input.mlir:3:3: error: unexpected error: 'math.cbrt' at ")
    assert err.endswith(
        "input.mlir:2:6: error: expected error \"'math.cbrt' has no derivative rule\" was not produced\n"
    )


def test_parse_errors_are_diagnostics_too(capsys, tmp_path: Path):
    status, _, err = verify(
        capsys,
        tmp_path,
        "rev.func @f(%x: f64) {\n  rev.frobnicate %x : f64 // expected-error {{rev.frobnicate is not registered}}\n}\n",
    )
    assert (status, err) == (0, "")


def test_a_malformed_annotation_fails(capsys, tmp_path: Path):
    status, _, err = verify(capsys, tmp_path, "// expected-error@below {{m}}")
    assert status == 1
    assert err == "input.mlir:1:4: error: no line below to annotate\n"


def test_a_failure_without_a_location_is_expected_at_unknown(capsys, tmp_path: Path):
    program = "rev.func @f(%x: f64) {\n  rev.return %x : f64\n}\n"
    annotated = program + "// expected-error@unknown {{no rev.func named @g in the module}}\n"
    args = ("-p", "rev-invert{functions=g}")
    assert verify(capsys, tmp_path, annotated, *args)[:2] == (0, "")
    status, _, err = verify(capsys, tmp_path, program, *args)
    assert (status, err) == (1, "input.mlir: error: unexpected error: no rev.func named @g in the module\n")
