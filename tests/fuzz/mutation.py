"""Mutation fuzzing of the command-line tools.

Each case takes a module from the repository's ``.mlir`` files (examples and
FileCheck tests, one ``// -----`` chunk each), applies one to three textual
mutations (swap operands, replace a use by another value, change an op name,
a type or a constant, delete, duplicate or swap lines), and runs ``rev-opt``
with a few pass pipelines, ``rev-translate`` and ``rev-run`` on both
backends, in-process, in a worker process.  The oracle: every tool ends with
a result or a clean diagnostic (``outcomes.CLEAN_ERRORS``); an unexpected
exception, a crash of the worker or a hang is a finding.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest.mock import patch

from .outcomes import Finding, summary_of, unexpected

ROOT = Path(__file__).resolve().parents[2]
SSA = re.compile(r"%[A-Za-z0-9_.$-]+")
OP_NAME = re.compile(r"\b(?:rev|anc|arith|math|memref|complex|ad)\.[a-z_]+\b")
TYPE = re.compile(r"\b(?:i1|i8|i32|i64|index|f32|f64)\b")
INTEGER = re.compile(r"(?<![%\w.])-?\d+(?![\w.])")
FLOAT = re.compile(r"-?\d+\.\d+(?:e[+-]?\d+)?")

PIPELINES = [
    "rev-verify",
    "rev-invert",
    "rev-invert{in_place=true},rev-invert{in_place=true}",
    "canonicalize",
    "rev-expand-routines,canonicalize",
    "rev-strip-checks,rev-insert-checks",
    "ad-adjoint",
    "ad-tangent",
    "rev-lower-to-std",
    "rev-lower-to-std,convert-std-to-llvm",
]
EDGE_INTEGERS = ["0", "1", "-1", "2", "63", "64", "65", "-9223372036854775808", "9223372036854775807"]
EDGE_FLOATS = ["0.0", "-0.0", "1.0e+308", "1.0e-320", "-1.5"]
TYPES = ["i1", "i8", "i32", "i64", "index", "f32", "f64"]


def corpus(ordinary: bool = True) -> list[str]:
    """Every module of the repository's .mlir files, one per split chunk;
    without ``ordinary``, only those of reversible functions alone (no
    ``func.func``)."""
    files = sorted((ROOT / "examples").glob("*.mlir")) + sorted(
        (ROOT / "tests" / "filecheck").rglob("*.mlir")
    )
    chunks = []
    for path in files:
        for chunk in path.read_text().split("// -----"):
            if "func.func" in chunk and not ordinary:
                continue
            if "rev.func" in chunk or "func.func" in chunk:
                chunks.append(chunk)
    return chunks


# -- mutations --------------------------------------------------------------------


def _replace_match(rng: random.Random, text: str, pattern: re.Pattern[str], choices: list[str]) -> str:
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    match = rng.choice(matches)
    return text[: match.start()] + rng.choice(choices) + text[match.end() :]


def _code_lines(text: str) -> list[int]:
    lines = text.splitlines()
    return [i for i, line in enumerate(lines) if line.strip() and not line.strip().startswith("//")]


def swap_operands(rng: random.Random, text: str) -> str:
    lines = text.splitlines()
    uses_of = {i: list(SSA.finditer(lines[i], lines[i].find("=") + 1)) for i in _code_lines(text)}
    candidates = [i for i, uses in uses_of.items() if len(uses) >= 2]
    if not candidates:
        return text
    i = rng.choice(candidates)
    a, b = sorted(rng.sample(uses_of[i], 2), key=lambda match: match.start())
    line = lines[i]
    lines[i] = line[: a.start()] + b.group() + line[a.end() : b.start()] + a.group() + line[b.end() :]
    return "\n".join(lines)


def replace_use(rng: random.Random, text: str) -> str:
    return _replace_match(rng, text, SSA, sorted(set(SSA.findall(text))))


def change_op(rng: random.Random, text: str) -> str:
    return _replace_match(rng, text, OP_NAME, sorted(set(OP_NAME.findall(text))) or ["rev.add"])


def change_type(rng: random.Random, text: str) -> str:
    return _replace_match(rng, text, TYPE, TYPES)


def change_integer(rng: random.Random, text: str) -> str:
    return _replace_match(rng, text, INTEGER, EDGE_INTEGERS)


def change_float(rng: random.Random, text: str) -> str:
    return _replace_match(rng, text, FLOAT, EDGE_FLOATS)


def _edit_lines(rng: random.Random, text: str, edit: Callable[[list[str], int, int], None]) -> str:
    lines = text.splitlines()
    code = _code_lines(text)
    if len(code) < 2:
        return text
    i, j = rng.sample(code, 2)
    edit(lines, i, j)
    return "\n".join(lines)


def delete_line(rng: random.Random, text: str) -> str:
    return _edit_lines(rng, text, lambda lines, i, j: lines.pop(i))


def duplicate_line(rng: random.Random, text: str) -> str:
    return _edit_lines(rng, text, lambda lines, i, j: lines.insert(j, lines[i]))


def swap_lines(rng: random.Random, text: str) -> str:
    def swap(lines: list[str], i: int, j: int) -> None:
        lines[i], lines[j] = lines[j], lines[i]

    return _edit_lines(rng, text, swap)


MUTATIONS = [
    swap_operands, replace_use, change_op, change_type, change_integer, change_float,
    delete_line, duplicate_line, swap_lines,
]


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        text = rng.choice(MUTATIONS)(rng, text)
    return text


# -- running the tools ----------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    text: str
    pipelines: tuple[str, ...]


def _argument(type_text: str) -> str:
    """A rev-run argument for an MLIR type: small values, arrays of four."""
    if type_text.startswith("memref<"):
        shape = type_text[len("memref<") :].split("x")[:-1]
        element = "1.5" if "f" in type_text.rsplit("x", 1)[-1] else "1"
        value = element
        for size in reversed(shape):
            count = int(size) if size.isdigit() and int(size) <= 16 else 4
            value = "[" + ", ".join([value] * count) + "]"
        return value
    if type_text.startswith("!anc.stack"):
        return "[]"
    if type_text.startswith(("f", "complex")):
        return "0.75"
    return "True" if type_text == "i1" else "2"


def _tool(stage: str, main: Callable[[list[str]], int], argv: list[str]) -> list[tuple[str, str, str]]:
    """Runs a tool's main; an escaping unexpected exception is a finding."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(argv)
    except SystemExit:
        pass
    except RecursionError as error:
        return [(stage, summary_of(error), "RecursionError")]
    except BaseException as error:  # the oracle itself: any exception may come
        if (trace := unexpected(error)) is not None:
            return [(stage, summary_of(error), trace)]
    if "internal error" in err.getvalue() or "Traceback" in err.getvalue():
        return [(stage, err.getvalue().strip().splitlines()[-1][:200], err.getvalue())]
    return []


def run_case(case: Case) -> list[tuple[str, str, str]]:
    """Runs the tools on one mutated module (in the worker); returns
    (stage, summary, detail) for each unexpected outcome."""
    from revmlir.parsing import parse_module
    from revmlir.tools import rev_opt, rev_run, rev_translate

    # unexpected exceptions escape the tools (only while this case runs: a
    # test may run a case in its own process)
    with patch.dict(os.environ, {"REVMLIR_TRACEBACK": "1"}), tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "case.mlir")
        Path(path).write_text(case.text)
        try:
            module = parse_module(case.text, path)
        except BaseException as error:  # the oracle itself: any exception may come
            trace = unexpected(error)
            return [] if trace is None else [("parse and verify", summary_of(error), trace)]
        findings = []
        for pipeline in case.pipelines:
            findings += _tool(f"rev-opt -p {pipeline}", rev_opt.main, [path, "-p", pipeline])
        findings += _tool("rev-translate", rev_translate.main, [path, "-O", "1"])
        from revmlir.dialects.rev import FuncOp

        for func in module.ops:
            if not isinstance(func, FuncOp):
                continue
            args = [_argument(str(t)) for t in func.function_type.inputs.data]
            for backend in ("interpreter", "native"):
                argv = [path, "-e", func.sym_name.data, "--backend", backend, "--args", *args]
                findings += _tool(f"rev-run --backend {backend}", rev_run.main, argv)
            break  # one entry point per case: native compilation dominates the time
        return findings


def cases(seed: int, ordinary: bool) -> Iterator[Case]:
    rng = random.Random(seed)
    sources = corpus(ordinary)
    while True:
        text = mutate(rng, rng.choice(sources))
        yield Case(text, tuple(rng.sample(PIPELINES, 2)))


def fuzz(
    seed: int, more: Callable[[int], bool], ordinary: bool = True, timeout: float = 60.0
) -> tuple[int, list[Finding]]:
    """Runs cases while ``more(cases run so far)``; returns how many ran and
    the findings (one per distinct summary).  ``ordinary`` includes the
    modules of ordinary functions (``func.func``, reversibilize's input)."""
    from .worker import Died, Worker

    worker: Worker[Case] = Worker(run_case, timeout)
    findings: dict[tuple[str, str], Finding] = {}
    count = 0
    try:
        for case in cases(seed, ordinary):
            if not more(count):
                break
            count += 1
            outcome = worker.run(case)
            if isinstance(outcome, Died):
                key = (outcome.kind, "tools")
                findings.setdefault(key, Finding(outcome.kind, "tools", outcome.detail, case.text, ", ".join(case.pipelines)))
                continue
            for stage, summary, detail in outcome:
                findings.setdefault((stage, summary), Finding("traceback", stage, summary, case.text, detail))
    finally:
        worker.close()
    return count, list(findings.values())
