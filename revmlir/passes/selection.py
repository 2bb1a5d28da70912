"""Choosing which functions a pass touches (the ``functions=`` option, and
the ``ad`` dialect's requests)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from revmlir.dialects.ad import FunctionRequestOp
from revmlir.dialects.rev import FuncOp
from revmlir.naming import INVERSE_SUFFIX, inverse_name
from revmlir.passes.rollback import rolled_back_on_failure


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


def requestable(module: ModuleOp, names: Sequence[str]) -> list[str]:
    """``names``, each a ``rev.func`` of the module or the inverse of one
    (``@f.inv``, which the derived functions' build adds when missing): what
    a request op may name, so that ``functions=f.inv`` asks what
    ``ad.adjoint @f.inv`` does.  Other names are errors."""
    funcs = {op.sym_name.data for op in module.ops if isinstance(op, FuncOp)}
    missing = [n for n in names if n not in funcs and not (n.endswith(INVERSE_SUFFIX) and inverse_name(n) in funcs)]
    if missing:
        named = [
            f"@{n} (nor @{inverse_name(n)}, whose inverse it names)" if n.endswith(INVERSE_SUFFIX) else f"@{n}"
            for n in missing
        ]
        raise PassFailedException(f"no rev.func named {', '.join(named)} in the module")
    return list(names)


def requested(module: ModuleOp, request: type[FunctionRequestOp]) -> list[str]:
    """The names of the functions the module's ``request`` ops name, in order."""
    return [r.function_name for r in module.ops if isinstance(r, request)]


def expand_requests(
    module: ModuleOp,
    request: type[FunctionRequestOp],
    functions: Sequence[str],
    generate: Callable[[ModuleOp, list[str]], object],
) -> None:
    """Run ``generate`` on the functions named by the module's ``request``
    ops (``ad.adjoint @f`` …) and by the ``functions=`` option, then remove
    the requests: what the ``ad-*`` passes share.

    A ``generate`` only adds functions (the derived functions, a callee's
    ``@g.inv``), so when it fails, whatever the failure (a derived name
    another kind of function holds, found once the functions it calls are
    built; a construct without a rule in the second function named),
    removing what it added leaves the module as it was
    (``rolled_back_on_failure``)."""
    requests = [r for r in module.ops if isinstance(r, request)]
    names = requested(module, request) + requestable(module, functions)
    with rolled_back_on_failure(module):
        generate(module, list(dict.fromkeys(names)))
    for found in requests:
        found.detach()
        found.erase()
