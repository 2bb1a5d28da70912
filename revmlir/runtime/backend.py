"""What every way of running a reversible module has in common: finding the
function, checking and converting the arguments, and returning every argument,
updated.  The interpreter and native code implement ``_execute``."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from revmlir.dialects.rev import FuncOp
from revmlir.errors import ExecutionError
from revmlir.runtime.arguments import from_runtime, to_runtime
from revmlir.semantics import is_state_type


class Backend(abc.ABC):
    module: ModuleOp

    def function(self, name: str) -> FuncOp:
        for op in self.module.ops:
            if isinstance(op, FuncOp) and op.sym_name.data == name:
                return op
        known = ", ".join(
            "@" + op.sym_name.data for op in self.module.ops if isinstance(op, FuncOp)
        )
        raise ExecutionError(f"no rev.func named @{name} (module has: {known or 'none'})")

    def call(self, name: str, *args: Any) -> tuple[Any, ...]:
        """Run ``@name`` forward; returns every argument, updated."""
        return self._run(name, args, backward=False)

    def uncall(self, name: str, *args: Any) -> tuple[Any, ...]:
        """Run ``@name`` backward (its inverse); returns every argument."""
        return self._run(name, args, backward=True)

    def _signature(self, name: str) -> tuple[FuncOp, list[Attribute], list[bool]]:
        """The function, its argument types and which of them are scalars
        (looked up once per function: calls are often small)."""
        cache: dict[str, tuple[FuncOp, list[Attribute], list[bool]]] = self.__dict__.setdefault(
            "_signatures", {}
        )
        if (found := cache.get(name)) is None:
            func = self.function(name)
            types = list(func.function_type.inputs.data)
            found = cache[name] = (func, types, [is_state_type(t) for t in types])
        return found

    def _run(self, name: str, args: Sequence[Any], backward: bool) -> tuple[Any, ...]:
        func, types, scalar = self._signature(name)
        if len(args) != len(types):
            raise TypeError(f"@{name} takes {len(types)} argument(s), got {len(args)}")
        values = [to_runtime(t, a, name, i) for i, (t, a) in enumerate(zip(types, args))]
        outputs = iter(self._execute(func, values, backward))
        return tuple(
            from_runtime(t, next(outputs)) if is_scalar else value
            for t, is_scalar, value in zip(types, scalar, values)
        )

    @abc.abstractmethod
    def _execute(self, func: FuncOp, values: list[Any], backward: bool) -> Sequence[Any]:
        """Run ``func`` (or its inverse) on canonical values; return the final
        values of its scalar arguments, in order (arrays are updated in place)."""
        raise NotImplementedError()
