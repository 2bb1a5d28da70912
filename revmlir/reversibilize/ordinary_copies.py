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
makes; a copy that nothing calls any more is erased.  A copy is tagged
(``rev.ordinary_copy_of = "g"``) so that only copies are ever erased, not a
user's function that happens to have such a name, and so that diagnostics
about a copy name the function the user wrote.
"""

from __future__ import annotations

from collections.abc import Collection

from xdsl.dialects import func
from xdsl.dialects.builtin import FlatSymbolRefAttr, ModuleOp, StringAttr
from xdsl.traits import SymbolTable

from revmlir.errors import describe_op
from revmlir.naming import ORDINARY_COPY_ATTR, ORDINARY_SUFFIX
from revmlir.reachability import reached_functions
from revmlir.reversibilize.analysis import ReversibilizeError
from revmlir.semantics import Function


def keep_ordinary_copies(module: ModuleOp, converted: Collection[str]) -> None:
    """Make the ordinary functions of ``module`` other than ``converted``
    (the functions a run rewrites) call private copies of the
    ``converted`` ones instead of them (the copies' own calls likewise).
    Every copy's name is checked before the module changes, so a name
    already taken leaves it as it was."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration}
    callers = [f for name, f in functions.items() if name not in converted]
    needed = _copied(callers, converted, functions)
    for callee, call in needed.items():
        if (taken := SymbolTable.lookup_symbol(module, callee + ORDINARY_SUFFIX)) is not None:
            raise ReversibilizeError(
                f"{describe_op(call)}: @{callee} is rewritten, so this ordinary call needs "
                f"a copy of it, @{callee + ORDINARY_SUFFIX}, a name {describe_op(taken)} already has"
            )
    for callee in needed:
        copy = functions[callee].clone()
        copy.sym_name = StringAttr(callee + ORDINARY_SUFFIX)
        copy.sym_visibility = StringAttr("private")
        copy.attributes[ORDINARY_COPY_ATTR] = StringAttr(callee)
        module.body.block.insert_op_after(copy, functions[callee])
        callers.append(copy)
    for caller in callers:
        for call in caller.walk():
            if isinstance(call, func.CallOp) and (callee := call.callee.string_value()) in needed:
                call.callee = FlatSymbolRefAttr(callee + ORDINARY_SUFFIX)


def changed_by_copies(module: ModuleOp, converted: Collection[str]) -> list[func.FuncOp]:
    """The functions of ``module`` that ``keep_ordinary_copies(module,
    converted)`` and then ``erase_unused_copies`` may change or erase: the
    other ordinary functions that call a ``converted`` one (redirected to
    its copy) and the copies earlier runs made (redirected too, or erased
    once nothing calls them).  The rest they leave as they are."""
    return [
        f
        for f in module.ops
        if isinstance(f, func.FuncOp)
        and f.sym_name.data not in converted
        and (
            copied(f) is not None
            or any(isinstance(op, func.CallOp) and op.callee.string_value() in converted for op in f.walk())
        )
    ]


def _copied(
    callers: list[func.FuncOp], converted: Collection[str], functions: dict[str, func.FuncOp]
) -> dict[str, func.CallOp]:
    """The ``converted`` functions that ``callers`` call, directly or
    through the copies (which call what the function calls), each with
    the first call that needs its copy (the callers' in the module's
    order first): the call a diagnostic about the copy points to."""
    needed: dict[str, func.CallOp] = {}
    pending = list(callers)
    while pending:
        for call in pending.pop(0).walk():
            if isinstance(call, func.CallOp) and (callee := call.callee.string_value()) in converted:
                if callee not in needed:
                    needed[callee] = call
                    pending.append(functions[callee])
    return needed


def copied(function: func.FuncOp) -> str | None:
    """The function ``function`` is a copy of, if it is one: tagged with a
    name, named after it, and private, as ``keep_ordinary_copies`` makes
    them.  A tag alone does not make a copy (one pasted from an earlier
    output onto a function of another name, or onto a public one, is the
    user's function), so such a function is never erased and diagnostics
    name it as it is."""
    tag = function.attributes.get(ORDINARY_COPY_ATTR)
    private = function.sym_visibility is not None and function.sym_visibility.data == "private"
    if isinstance(tag, StringAttr) and private and function.sym_name.data == tag.data + ORDINARY_SUFFIX:
        return tag.data
    return None


def written_name(function: func.FuncOp) -> str:
    """The name the user gave ``function``: that of the function it
    copies, for a copy, so that a diagnostic about it names that one."""
    return copied(function) or function.sym_name.data


def erase_unused_copies(module: ModuleOp) -> None:
    """Erase the copies ``keep_ordinary_copies`` made (``copied``: a
    user's function named or tagged like one is not a copy) that no other
    function reaches any more (their callers were rewritten since)."""
    copies = [f for f in module.ops if isinstance(f, func.FuncOp) and copied(f) is not None]
    others = [f.sym_name.data for f in module.ops if isinstance(f, Function) and f not in copies]
    reached = reached_functions(module, others)
    for copy in copies:
        if copy.sym_name.data not in reached:
            module.body.block.erase_op(copy)
