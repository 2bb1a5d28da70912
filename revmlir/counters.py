"""Counters: array arguments that only ``rev.safe`` regions use.

A safe region may count events into an array argument (``c[0] += 1`` in a
``with rv.safe():`` block): host state that the caller reads after the
call, and that no reversible op reads, so that running backwards, which
does not undo the count, still restores everything it must.  An array
argument is a *counter* of its function when

- every use of it is inside a ``rev.safe`` region, a ``memref.dim``, or a
  call that passes it to a counter of the callee (a greatest fixpoint over
  the call graph, from "every array argument", so that a recursive function
  passes its counter on), and
- something counts into it: a ``memref.store`` in a safe region, or a call
  that passes it to a counter (a least fixpoint, so that an array a
  function never touches is no counter: a caller may pass any array there).

The verifier lets safe regions store only into counters, and calls pass a
callee's counter only a counter of the caller's own: reversible state
never reaches a store that running backwards skips.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Operation

from revmlir.dialects.rev import CallOp, FuncOp, SafeOp, UncallOp
from revmlir.ir_utils import nested_ops
from revmlir.kept_answers import kept
from revmlir.semantics import ArgumentUse, argument_uses


def in_safe_region(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, SafeOp):
            return True
        parent = parent.parent_op()
    return False


def counter_arguments(module: ModuleOp, roots: Iterable[str] | None = None) -> dict[str, frozenset[int]]:
    """Per ``rev.func`` of ``module``, or per function that ``roots`` reach
    by calls and uncalls: the positions of its counters.  A function without
    a block is left out, as ``argument_writes`` leaves it: its callers are
    verified before it, and its own verifier refuses it, at the function.  A function's
    counters depend only on the functions it reaches, so the verifier, which
    asks about one callee per call, pays for that callee's part of the call
    graph instead of the whole module's at every call."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp) and op.body.blocks}
    if roots is not None:
        functions = _reached(functions, roots)
    uses = {name: argument_uses(func) for name, func in functions.items()}

    def passed(use: ArgumentUse, counters: dict[str, frozenset[int]]) -> bool:
        op, index = use
        return isinstance(op, CallOp | UncallOp) and index in counters.get(op.callee.string_value(), ())

    def only_safe(use: ArgumentUse, found: dict[str, frozenset[int]]) -> bool:
        op, _ = use
        return in_safe_region(op) or isinstance(op, memref.DimOp) or passed(use, found)

    def counts(use: ArgumentUse, found: dict[str, frozenset[int]]) -> bool:
        op, index = use
        return (isinstance(op, memref.StoreOp) and index == 1) or passed(use, found)

    arrays = {
        name: frozenset(k for k, arg in enumerate(func.body.block.args) if isinstance(arg.type, MemRefType))
        for name, func in functions.items()
    }
    safe_only = _fixpoint(arrays, lambda name, k, found: all(only_safe(u, found) for u in uses[name][k]))
    none = {name: frozenset[int]() for name in functions}
    return _fixpoint(
        none, lambda name, k, found: k in safe_only[name] and any(counts(u, found) for u in uses[name][k]), arrays
    )


def _reached(functions: dict[str, FuncOp], roots: Iterable[str]) -> dict[str, FuncOp]:
    """The functions of ``functions`` that ``roots`` reach by calls and uncalls."""
    reached: dict[str, FuncOp] = {}
    pending = [name for name in roots if name in functions]
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached[name] = functions[name]
        pending.extend(callee for callee in kept(_callees, functions[name]) if callee in functions)
    return reached


def _callees(function: FuncOp) -> list[str]:
    """The names ``function`` calls and uncalls, in the order of its ops:
    kept while the IR is unchanged (``revmlir.kept_answers``), since the
    verifier asks for the part of the call graph below each call."""
    return [op.callee.string_value() for op in nested_ops(function) if isinstance(op, CallOp | UncallOp)]


def _fixpoint(
    start: dict[str, frozenset[int]],
    holds: Callable[[str, int, dict[str, frozenset[int]]], bool],
    among: dict[str, frozenset[int]] | None = None,
) -> dict[str, frozenset[int]]:
    """Per function, the positions (of ``among``, default ``start``) where
    ``holds``, iterated from ``start`` until nothing changes."""
    found = dict(start)
    changed = True
    while changed:
        changed = False
        for name, positions in (among or start).items():
            new = frozenset(k for k in positions if holds(name, k, found))
            if new != found[name]:
                found[name], changed = new, True
    return found
