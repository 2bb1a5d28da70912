"""``rev-verify``: check the static reversibility rules.

Parsing already runs them (they are part of ``rev.func``'s verifier); the pass
exists for IR built through the Python builder API and as an explicit pipeline
step before lowering.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from revmlir.kept_answers import ir_unchanged


@dataclass(frozen=True)
class RevVerifyPass(ModulePass):
    """Check every rev.func against the reversibility rules."""

    name = "rev-verify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # every rev.func's verifier runs the rules (``verify_function``):
        # once per function, its callees' answers kept meanwhile
        with ir_unchanged():
            op.verify()
