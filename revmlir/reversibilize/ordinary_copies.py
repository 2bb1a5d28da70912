"""Ordinary callers of the functions ``make-resumable`` rewrites.

``make-resumable{functions=g}`` replaces ``@g`` by its resumable machine,
and ``ad-checkpoint{functions=g policy=…}`` then by the machine's
reversible form (a ``rev.func``), and only ``@g``: the other ordinary
functions stay ordinary, so that a later run may rewrite one of them.  An
ordinary function that calls ``@g`` would then call a ``rev.func``, which
ordinary code cannot, or a machine, whose frames a later run that lays it
out refuses (they are its own to write).  It calls a private copy of
``@g`` as written instead, ``@g.ordinary``, made before ``@g`` is
rewritten (and so on for what the copy calls that the run rewrites).  A
later run that rewrites the caller lays the copy out like any callee, from
the source, so its machine is the one a single run naming both functions
makes; a copy that nothing calls any more is erased.
"""

from __future__ import annotations

from collections.abc import Collection

from xdsl.dialects import func
from xdsl.dialects.builtin import FlatSymbolRefAttr, ModuleOp, StringAttr
from xdsl.traits import SymbolTable

from revmlir.errors import describe_op
from revmlir.naming import ORDINARY_SUFFIX
from revmlir.reachability import reached_functions
from revmlir.reversibilize.analysis import ReversibilizeError
from revmlir.semantics import Function


def keep_ordinary_copies(module: ModuleOp, converted: Collection[str]) -> None:
    """Make the ordinary functions of ``module`` other than ``converted``
    (the functions a run rewrites) call private copies of the
    ``converted`` ones instead of them (the copies' own calls likewise)."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration}
    copies: dict[str, str] = {}
    pending = [f for name, f in functions.items() if name not in converted]
    while pending:
        for call in pending.pop().walk():
            if not isinstance(call, func.CallOp) or (callee := call.callee.string_value()) not in converted:
                continue
            if callee not in copies:
                copies[callee] = callee + ORDINARY_SUFFIX
                if (taken := SymbolTable.lookup_symbol(module, copies[callee])) is not None:
                    raise ReversibilizeError(
                        f"{describe_op(call)}: @{callee} is rewritten, so this ordinary call needs "
                        f"a copy of it, @{copies[callee]}, a name {describe_op(taken)} already has"
                    )
                copy = functions[callee].clone()
                copy.sym_name = StringAttr(copies[callee])
                copy.sym_visibility = StringAttr("private")
                module.body.block.insert_op_after(copy, functions[callee])
                pending.append(copy)
            call.callee = FlatSymbolRefAttr(copies[callee])


def erase_unused_copies(module: ModuleOp) -> None:
    """Erase the copies ``keep_ordinary_copies`` made that no other
    function reaches any more (their callers were rewritten since)."""
    names = {f.sym_name.data for f in module.ops if isinstance(f, Function)}
    copies = [
        f
        for f in module.ops
        if isinstance(f, func.FuncOp)
        and f.sym_visibility == StringAttr("private")
        and f.sym_name.data.endswith(ORDINARY_SUFFIX)
        and f.sym_name.data.removesuffix(ORDINARY_SUFFIX) in names
    ]
    others = [f.sym_name.data for f in module.ops if isinstance(f, Function) and f not in copies]
    reached = reached_functions(module, others)
    for copy in copies:
        if copy.sym_name.data not in reached:
            module.body.block.erase_op(copy)
