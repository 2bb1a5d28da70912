"""What every way of running a reversible module has in common: finding the
function, checking and converting the arguments, and returning every argument,
updated.  The interpreter and native code implement ``_execute``."""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from revmlir.dialects.rev import FuncOp
from revmlir.errors import ExecutionError
from revmlir.runtime.arguments import converter, from_runtime
from revmlir.semantics import is_state_type


@dataclass(frozen=True)
class _Signature:
    func: FuncOp
    types: list[Attribute]
    scalar: list[bool]
    converters: list[Callable[[Any], Any]]


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

    def _signature(self, name: str) -> _Signature:
        """The function, its argument types, which are scalars, and their
        converters (worked out once per function: calls are often small)."""
        cache: dict[str, _Signature] = self.__dict__.setdefault("_signatures", {})
        if (found := cache.get(name)) is None:
            func = self.function(name)
            types = list(func.function_type.inputs.data)
            found = cache[name] = _Signature(
                func,
                types,
                [is_state_type(t) for t in types],
                [converter(t, name, i) for i, t in enumerate(types)],
            )
        return found

    def _run(self, name: str, args: Sequence[Any], backward: bool) -> tuple[Any, ...]:
        signature = self._signature(name)
        types = signature.types
        if len(args) != len(types):
            raise TypeError(f"@{name} takes {len(types)} argument(s), got {len(args)}")
        values = [convert(a) for convert, a in zip(signature.converters, args)]
        outputs = iter(self._execute(signature.func, values, backward))
        return tuple(
            from_runtime(t, next(outputs)) if is_scalar else value
            for t, is_scalar, value in zip(types, signature.scalar, values)
        )

    @abc.abstractmethod
    def _execute(self, func: FuncOp, values: list[Any], backward: bool) -> Sequence[Any]:
        """Run ``func`` (or its inverse) on canonical values; return the final
        values of its scalar arguments, in order (arrays are updated in place)."""
        raise NotImplementedError()
