"""Choosing which functions a pass touches (the ``functions=`` option, and
the ``ad`` dialect's requests)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from revmlir.dialects.ad import FunctionRequestOp
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
        raise PassFailedException(f"no rev.func named {', '.join('@' + n for n in missing)} in the module")
    for name in names:
        yield by_name[name]


def expand_requests(
    module: ModuleOp,
    request: type[FunctionRequestOp],
    functions: Sequence[str],
    generate: Callable[[ModuleOp, list[str]], object],
) -> None:
    """Run ``generate`` on the functions named by the module's ``request``
    ops (``ad.adjoint @f`` …) and by the ``functions=`` option, then remove
    the requests: what the ``ad-*`` passes share."""
    requests = [r for r in module.ops if isinstance(r, request)]
    names = [r.function_name for r in requests]
    names += [f.sym_name.data for f in selected_functions(module, functions)] if functions else []
    generate(module, list(dict.fromkeys(names)))
    for found in requests:
        found.detach()
        found.erase()
