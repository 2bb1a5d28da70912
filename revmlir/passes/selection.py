"""Choosing which functions a pass touches (the ``functions=`` option)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from revmlir.dialects.rev import FuncOp


def selected_functions(module: ModuleOp, names: Sequence[str]) -> Iterator[FuncOp]:
    """The module's ``rev.func``s, or only those named; unknown names are errors."""
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    if not names:
        yield from funcs
        return
    by_name = {f.sym_name.data: f for f in funcs}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise PassFailedException(
            f"no rev.func named {', '.join('@' + n for n in missing)} in the module"
        )
    for name in names:
        yield by_name[name]
