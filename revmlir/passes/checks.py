"""``rev-insert-checks`` / ``rev-strip-checks``: run-time reversibility checks as
an IR property.

The checks that cannot be done statically (an ancilla's value at ``anc.free``,
postconditions, borrowed elements at dynamic indices, an empty stack at
``anc.stack_free``) live on the ops that need them.  The ``nocheck`` attribute
turns one off; these passes set or clear it, which is NiLang's
``@invcheckoff`` as a transformation.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from revmlir.interfaces import RuntimeCheckedOp, has_switchable_checks, set_checks
from revmlir.passes.selection import selected_functions


@dataclass(frozen=True)
class RevStripChecksPass(ModulePass):
    """Turn run-time reversibility checks off (mark ops `nocheck`)."""

    name = "rev-strip-checks"

    functions: tuple[str, ...] = ()
    """Only inside these functions (default: all)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in selected_functions(op, self.functions):
            for checked in func.walk():
                if has_switchable_checks(checked):
                    set_checks(checked, False)


@dataclass(frozen=True)
class RevInsertChecksPass(ModulePass):
    """Turn run-time checks on wherever no static proof makes them redundant."""

    name = "rev-insert-checks"

    functions: tuple[str, ...] = ()
    """Only inside these functions (default: all)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in selected_functions(op, self.functions):
            for checked in func.walk():
                if isinstance(checked, RuntimeCheckedOp):
                    checked.set_checks(checked.needs_runtime_check())
                elif has_switchable_checks(checked):
                    set_checks(checked, True)
