"""Per-op rule tables for translations (the lowering analogue of xDSL's
interpreter ``@impl`` registry)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from xdsl.ir import Operation

RuleT = TypeVar("RuleT", bound=Callable[..., None])


class RuleTable(Generic[RuleT]):
    """Maps op classes to the rule that translates them."""

    def __init__(self) -> None:
        self.rules: dict[type[Operation], RuleT] = {}

    def __call__(self, *op_types: type[Operation]) -> Callable[[RuleT], RuleT]:
        """Decorator registering a rule for ``op_types``."""

        def register(rule: RuleT) -> RuleT:
            for op_type in op_types:
                self.rules[op_type] = rule
            return rule

        return register

    def get(self, op_type: type[Operation]) -> RuleT | None:
        return self.rules.get(op_type)

    def __contains__(self, op_type: type[Operation]) -> bool:
        return op_type in self.rules
