"""A custom pass (docs/writing-a-pass.md) that raises an exception of its
own or leaves IR that does not verify is named in the diagnostic: the
message is the pass's exception, or the verifier's about its output, not
one that blames the input the user wrote."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.utils.exceptions import PassFailedException

from revmlir.dialects import rev
from revmlir.errors import describe_op
from revmlir.tools.rev_opt import RevOptMain

SOURCE = """rev.func @f(%y: f64, %a: f64) {
  %t = arith.mulf %a, %a : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %a : f64, f64
}
"""


class _EraseAdd(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rev.AddOp, rewriter: PatternRewriter) -> None:
        rewriter.erase(op)  # its result is still returned


class _ReadTarget(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rev.AddOp, rewriter: PatternRewriter) -> None:
        if op.operands[1] is not op.operands[0]:
            op.operands = [op.operands[0], op.operands[0]]


@dataclass(frozen=True)
class EraseUsed(ModulePass):
    name = "my-erase-used"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_EraseAdd()).rewrite_module(op)


@dataclass(frozen=True)
class BreakRule(ModulePass):
    name = "my-break-rule"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_ReadTarget(), apply_recursively=False).rewrite_module(op)


@dataclass(frozen=True)
class Refuse(ModulePass):
    name = "my-refuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        function = next(iter(op.ops))
        raise PassFailedException(f"{describe_op(function)}: cannot do that")


class MyOpt(RevOptMain):
    def register_all_passes(self) -> None:
        super().register_all_passes()
        for custom in (EraseUsed, BreakRule, Refuse):
            self.register_pass(custom.name, (lambda p: lambda: p)(custom))


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        (
            "my-erase-used",
            "f.mlir: error: after pass 'my-erase-used': ValueError: Attempting to delete SSA value that still has uses",
        ),
        ("canonicalize,my-break-rule", "f.mlir:3:3: error: after pass 'my-break-rule': [self-read] 'rev.add' reads"),
        ("my-refuse", "f.mlir: error: 'rev.func' at f.mlir:1:1: cannot do that"),
    ],
)
def test_a_custom_pass_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], pipeline: str, message: str
) -> None:
    """A pass's own exception and a verifier failure after it name the
    pass; a refusal by the conventions (a located ``PassFailedException``)
    is printed as the pass wrote it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REVMLIR_TRACEBACK", raising=False)
    Path("f.mlir").write_text(SOURCE)
    assert MyOpt(["f.mlir", "-p", pipeline]).run() == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err


@pytest.mark.parametrize("taken", ["rev-invert", "canonicalize", "my-refuse"])
def test_a_pass_named_like_a_registered_one_is_refused(taken: str) -> None:
    """A pass registered under a name taken (revmlir's, xDSL's, or one
    registered before) would silently run in its place: refused."""

    class Colliding(MyOpt):
        def register_all_passes(self) -> None:
            super().register_all_passes()
            self.register_pass(taken, lambda: Refuse)

    with pytest.raises(ValueError, match=f"a pass named '{taken}' is registered already"):
        Colliding(["f.mlir"])
