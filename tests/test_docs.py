"""The documentation in docs/ is executable and must stay accurate.

Conventions (see docs/writing-a-pass.md, "Documentation conventions"):

- a ```mlir block parses and verifies as a module;
- a ```mlir-invalid block is rejected; each of its ``// -----`` chunks carries
  a comment ``// error: [rule] text`` (a rule of ``revmlir.verifier.RULES``;
  the text, when given, is part of the message) or ``// error: text`` (part
  of the message of a non-rule verifier error);
- a block containing ``// RUN:`` lines is a lit/FileCheck test and is run by
  lit instead (with the passes defined in docs/writing-a-pass.md known to
  ``rev-opt``);
- a ```python block preceded by ``<!-- test -->`` is executed; the tested
  blocks of one document share a namespace, in order; one preceded by
  ``<!-- test torch -->`` needs PyTorch: the torch blocks of a document run
  on their own, in a namespace of their own, where torch is importable;
- a ```console block preceded by ``<!-- test -->`` is a transcript: each
  ``$ command`` runs in the repository root and must print exactly the lines
  that follow it (stdout and stderr together).

Coverage checks make sure every op, type, verifier rule, run-time check and
pass is documented.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.utils.exceptions import ParseError, VerifyException

from revmlir.dialects.anc import Anc
from revmlir.dialects.rev import Rev
from revmlir.errors import RuleViolation
from revmlir.interfaces import RuntimeCheckedOp
from revmlir.parsing import parse_module
from revmlir.passes import get_all_passes
from revmlir.verifier import RULES

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BIN = Path(sys.executable).parent
DOC_NAMES = ["dialects.md", "writing-a-pass.md", "tools.md", "design.md", "python.md", "checkpointing.md", "gpu.md"]
README = "../README.md"  # its Python example runs with the docs' (a path relative to docs/)

_FENCE = re.compile(r"^```([\w-]*)[ \t]*$")
NEW_NAMESPACE = "<!-- test: new namespace -->"
"""Splits a long document's Python examples into parts that run (and are
reported) as tests of their own, each in a namespace holding the
document's imports."""


@dataclass
class CodeBlock:
    doc: str
    line: int  # line of the first code line, 1-based
    lang: str
    text: str
    tested: bool
    torch: bool = False
    """Needs PyTorch (``<!-- test torch -->``)."""
    part: int = 0
    """Which namespace of its document the block runs in: a
    ``<!-- test: new namespace -->`` line starts the next one."""

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def _blocks() -> list[CodeBlock]:
    found: list[CodeBlock] = []
    for name in [*DOC_NAMES, README]:
        path = DOCS / name
        if not path.exists():
            continue
        lines = path.read_text().splitlines()
        i = part = 0
        while i < len(lines):
            match = _FENCE.match(lines[i])
            if match is None:
                part += lines[i].strip() == NEW_NAMESPACE
                i += 1
                continue
            start = i + 1
            end = start
            while end < len(lines) and lines[end].rstrip() != "```":
                end += 1
            previous = next(
                (lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()),
                "",
            )
            found.append(
                CodeBlock(
                    doc=name,
                    line=start + 1,
                    lang=match.group(1),
                    text="\n".join(lines[start:end]) + "\n",
                    tested=previous == "<!-- test -->",
                    torch=previous == "<!-- test torch -->",
                    part=part,
                )
            )
            i = end + 1
    return found


BLOCKS = _blocks()


def _of(lang: str, lit: bool | None = None) -> list[CodeBlock]:
    return [b for b in BLOCKS if b.lang == lang and (lit is None or ("// RUN:" in b.text) == lit)]


def _params(blocks: list[CodeBlock]):
    return [pytest.param(b, id=b.id) for b in blocks]


def test_docs_exist():
    for name in DOC_NAMES:
        assert (DOCS / name).is_file(), f"docs/{name} is missing"


# -- IR examples ---------------------------------------------------------------


@pytest.mark.parametrize("block", _params(_of("mlir", lit=False)))
def test_mlir_example_verifies(block: CodeBlock):
    parse_module(block.text, block.doc, line_offset=block.line - 1)


def _chunks(block: CodeBlock) -> list[tuple[int, str]]:
    chunks: list[tuple[int, str]] = []
    line, current = block.line, []
    start = line
    for text in block.text.splitlines():
        if text.strip() == "// -----":
            chunks.append((start, "\n".join(current) + "\n"))
            current, start = [], line + 1
        else:
            current.append(text)
        line += 1
    chunks.append((start, "\n".join(current) + "\n"))
    return chunks


_EXPECTED = re.compile(r"^\s*//\s*error:\s*(?:\[([\w-]+)\])?\s*(.*?)\s*$")

INVALID = [
    pytest.param(block, offset, chunk, id=f"{block.doc}:{offset}")
    for block in _of("mlir-invalid", lit=False)
    for offset, chunk in _chunks(block)
]


@pytest.mark.parametrize("block,offset,chunk", INVALID)
def test_invalid_example_is_rejected(block: CodeBlock, offset: int, chunk: str):
    expectations = [m for m in map(_EXPECTED.match, chunk.splitlines()) if m]
    assert expectations, f"{block.doc}:{offset}: an mlir-invalid example needs a '// error: [rule] ...' comment"
    rule, text = expectations[0].groups()
    with pytest.raises((ParseError, VerifyException)) as caught:
        parse_module(chunk, block.doc, line_offset=offset - 1)
    error = caught.value
    message = str(error)
    if rule is not None:
        assert rule in RULES, f"[{rule}] is not a verifier rule"
        assert isinstance(error, RuleViolation), message
        assert error.rule == rule, message
    if text:
        assert text in " ".join(message.split()), message


# -- lit / FileCheck examples --------------------------------------------------

_WRAPPER = """\
import contextlib, io, sys, types
from xdsl.passes import ModulePass
from revmlir.tools.rev_opt import RevOptMain

module = types.ModuleType("docs_passes")
sys.modules[module.__name__] = module
with contextlib.redirect_stdout(io.StringIO()):
    exec(compile(open(sys.argv.pop(1)).read(), "docs", "exec"), module.__dict__)
extra = [
    v for v in vars(module).values()
    if isinstance(v, type) and issubclass(v, ModulePass) and v is not ModulePass
]

class DocsOpt(RevOptMain):
    def register_all_passes(self):
        super().register_all_passes()
        for p in extra:
            if p.name not in self.available_passes:
                self.register_pass(p.name, lambda p=p: p)

sys.exit(DocsOpt().run())
"""


def _tested_python(doc: str) -> str:
    return "\n".join(b.text for b in BLOCKS if b.doc == doc and b.lang == "python" and b.tested)


LIT = [b for b in BLOCKS if b.lang.startswith("mlir") and "// RUN:" in b.text]


@pytest.mark.parametrize("block", _params(LIT))
def test_lit_example_passes(block: CodeBlock, tmp_path: Path):
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(ROOT / "tests" / "filecheck" / "lit.cfg.py", suite / "lit.cfg.py")
    (suite / "example.mlir").write_text(block.text)
    code = tmp_path / "passes.py"
    code.write_text(_tested_python("writing-a-pass.md"))
    tools = tmp_path / "bin"
    tools.mkdir()
    wrapper = tools / "rev-opt"
    wrapper.write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} "
        f"{shlex.quote(str(tmp_path / 'rev_opt.py'))} "
        f'{shlex.quote(str(code))} "$@"\n'
    )
    wrapper.chmod(0o755)
    (tmp_path / "rev_opt.py").write_text(_WRAPPER)
    env = dict(os.environ, PATH=f"{tools}{os.pathsep}{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    # lit.cfg.py puts the interpreter's bin directory first; keep ours first.
    cfg = (suite / "lit.cfg.py").read_text()
    (suite / "lit.cfg.py").write_text(
        cfg + f"\nconfig.environment['PATH'] = {str(tools)!r} + os.pathsep + config.environment['PATH']\n"
    )
    result = subprocess.run([str(BIN / "lit"), "-v", str(suite)], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr


# -- Python examples -----------------------------------------------------------


def _tested_python_blocks(doc: str) -> list[CodeBlock]:
    return [b for b in BLOCKS if b.doc == doc and b.lang == "python" and b.tested]


def _imports(doc: str) -> str:
    """The top-level imports of ``doc``'s tested examples: what a part
    after the first starts from."""
    found: dict[str, None] = {}
    for block in _tested_python_blocks(doc):
        for node in ast.parse(block.text).body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found[ast.unparse(node)] = None
    return "\n".join(found) + "\n"


@pytest.mark.parametrize(
    ("doc", "part"),
    sorted({(b.doc, b.part) for d in [*DOC_NAMES, README] for b in _tested_python_blocks(d)}),
    ids=lambda value: str(value),
)
def test_python_examples_run(doc: str, part: int, monkeypatch: pytest.MonkeyPatch):
    blocks = [b for b in _tested_python_blocks(doc) if b.part == part]
    _run_python(blocks, doc, monkeypatch, _imports(doc) if part else "")


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("doc", sorted({b.doc for b in BLOCKS if b.lang == "python" and b.torch}))
def test_python_torch_examples_run(doc: str, monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("torch")
    _run_python([b for b in BLOCKS if b.doc == doc and b.lang == "python" and b.torch], doc, monkeypatch)


def _run_python(blocks: list[CodeBlock], doc: str, monkeypatch: pytest.MonkeyPatch, prelude: str = "") -> None:
    """Run ``prelude``, then ``blocks`` in order, in one namespace,
    reporting errors at their lines in the document."""
    monkeypatch.chdir(ROOT)
    # A real module, so that dataclasses and pickling can find it.
    module = types.ModuleType(f"docs_{doc.replace('-', '_').replace('.', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(prelude, f"<imports of {doc}>", "exec", dont_inherit=True), module.__dict__)
    for block in blocks:
        code = compile(
            "\n" * (block.line - 1) + block.text,
            str(DOCS / doc),
            "exec",
            dont_inherit=True,
        )
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, module.__dict__)


def test_worked_example_is_tested():
    assert _tested_python("writing-a-pass.md").strip(), (
        "writing-a-pass.md must contain a tested (<!-- test -->) python example"
    )


# -- console transcripts -------------------------------------------------------


def _transcript(block: CodeBlock) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"{block.id}: a transcript starts with '$ command'"
            steps[-1][1].append(line.rstrip())
    for _, expected in steps:
        while expected and not expected[-1]:
            expected.pop()
    return steps


@pytest.mark.parametrize("block", _params([b for b in _of("console") if b.tested]))
def test_console_transcript(block: CodeBlock, served_tools: dict[str, str]):
    """revmlir's tools run served (``served_tools``): each in a process of
    its own, as a user's shell starts them, without importing its modules
    again; the others (``xdsl-opt``) are the installed ones."""
    tools = served_tools["REVMLIR_LIT_TOOLS"]
    env = dict(served_tools, PATH=os.pathsep.join([tools, str(BIN), os.environ.get("PATH", "")]))
    env.pop("REVMLIR_TRACEBACK", None)
    for command, expected in _transcript(block):
        result = subprocess.run(command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True)
        output = (result.stdout + result.stderr).rstrip("\n").splitlines()
        assert [line.rstrip() for line in output] == expected, (
            f"{block.id}: $ {command}\n" + result.stdout + result.stderr
        )


# -- coverage ------------------------------------------------------------------


def _headings(doc: str) -> str:
    return "\n".join(line for line in (DOCS / doc).read_text().splitlines() if line.startswith("#"))


@pytest.mark.parametrize("name", [op.name for dialect in (Rev, Anc) for op in dialect.operations])
def test_every_op_is_documented(name: str):
    assert f"`{name}`" in _headings("dialects.md"), f"no heading for {name}"


@pytest.mark.parametrize("name", [t.name for dialect in (Rev, Anc) for t in dialect.attributes])
def test_every_type_is_documented(name: str):
    assert f"`!{name}<" in _headings("dialects.md"), f"no heading for !{name}"


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_is_documented(rule: str):
    """In the rules table, with the verifier's summary of the rule in its
    second column (a parenthesis after it may say more)."""
    rows = [line for line in (DOCS / "dialects.md").read_text().splitlines() if line.startswith(f"| `{rule}` |")]
    assert len(rows) == 1, f"rule {rule} is missing from the rules table, or there twice"
    summary = rows[0].split(" | ")[1]
    said = summary == RULES[rule] or summary.startswith(RULES[rule] + " (")
    assert said, f"{rule}: the table says {summary!r}, the verifier {RULES[rule]!r}"


@pytest.mark.parametrize(
    "op",
    [op for dialect in (Rev, Anc) for op in dialect.operations if issubclass(op, RuntimeCheckedOp)],
    ids=lambda op: op.name,
)
def test_every_runtime_check_is_documented(op: type[RuntimeCheckedOp]):
    text = " ".join((DOCS / "dialects.md").read_text().split())
    assert op.runtime_check() in text, f"{op.name}: {op.runtime_check()!r}"


@pytest.mark.parametrize("name", sorted(get_all_passes()))
def test_every_pass_is_documented(name: str):
    from xdsl.passes import get_pass_option_infos

    text = (DOCS / "tools.md").read_text()
    assert f"`{name}`" in text
    for info in get_pass_option_infos(get_all_passes()[name]()):
        assert f"`{info.name}`" in text, f"option {info.name} of {name}"
