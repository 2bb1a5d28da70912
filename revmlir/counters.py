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
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation

from revmlir.call_graph import components
from revmlir.dialects.rev import CallOp, FuncOp, SafeOp, UncallOp
from revmlir.ir_utils import nested_ops
from revmlir.semantics import ArgumentUse, argument_uses


def in_safe_region(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, SafeOp):
            return True
        parent = parent.parent_op()
    return False


def counter_arguments(module: ModuleOp, roots: Iterable[str] | None = None) -> dict[str, frozenset[int]]:
    """Per ``rev.func`` of ``module``, or per one that a function named in
    ``roots`` reaches through calls and uncalls: the positions of its
    counters.

    A function's counters depend only on the functions it reaches, so each
    is found once, after those of every function it calls and uncalls: the
    fixpoints run over one strongly connected component of the call graph
    at a time, callees' first (``call_graph.components``), with what the
    components below found fixed.  A fixpoint over the whole module took a
    round per function of a call chain, each round over all of them, and
    the verifier asked it below every call: a chain of 150 functions took
    5 s to verify.  The verifier asks it of the whole module once per
    verification inside ``ir_unchanged`` (``revmlir.kept_answers``), and
    outside one of what the function it checks reaches, so that verifying
    each function of a module does not analyse the whole module again.

    Functions whose own checks would refuse their name or body are left
    out, as if they were outside the module: xDSL verifies the functions
    one by one, and a broken one later in the module is reported by its
    own verifier, located, not by a crash of this analysis under
    another's."""
    named = {
        name.data: op
        for op in module.ops
        if isinstance(op, FuncOp) and isinstance(name := op.properties.get("sym_name"), StringAttr)
    }
    reached: dict[str, list[str]] = {}  # the callees of each function analysed, as it names them
    pending = list(named if roots is None else roots)
    while pending:
        name = pending.pop()
        function = named.get(name)
        if name not in reached and function is not None and _one_block(function):
            reached[name] = _callees(function)
            pending.extend(reached[name])
    callees = {name: [c for c in found if c in reached] for name, found in reached.items()}
    safe_only: dict[str, frozenset[int]] = {}
    counters: dict[str, frozenset[int]] = {}

    def passed(use: ArgumentUse, found: dict[str, frozenset[int]]) -> bool:
        op, index = use
        return isinstance(op, CallOp | UncallOp) and index in found.get(_callee(op), ())

    def only_safe(use: ArgumentUse) -> bool:
        op, _ = use
        return in_safe_region(op) or isinstance(op, memref.DimOp) or passed(use, safe_only)

    def counts(use: ArgumentUse) -> bool:
        op, index = use
        return (isinstance(op, memref.StoreOp) and index == 1) or passed(use, counters)

    for members in _components_callees_first(callees):
        uses = {name: argument_uses(named[name]) for name in members}
        arrays = {
            name: frozenset(k for k, arg in enumerate(named[name].body.block.args) if isinstance(arg.type, MemRefType))
            for name in members
        }
        # the greatest fixpoint (from every array argument), then the least (from none)
        safe_only.update(arrays)
        _fixpoint(safe_only, arrays, lambda name, k: all(only_safe(u) for u in uses[name][k]))
        counters.update(dict.fromkeys(members, frozenset[int]()))
        _fixpoint(counters, arrays, lambda name, k: k in safe_only[name] and any(counts(u) for u in uses[name][k]))
    return counters


def _components_callees_first(callees: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected components of the call graph ``callees``,
    each after every component its functions call."""
    grouped: dict[int, list[str]] = {}
    for name, component in components(callees).items():  # in the order Tarjan's algorithm closes them
        grouped.setdefault(component, []).append(name)
    return list(grouped.values())


def _one_block(function: FuncOp) -> bool:
    """Whether ``function``'s body is the one block its verifier requires."""
    return len(function.regions) == 1 and len(function.body.blocks) == 1


def _callees(function: FuncOp) -> list[str]:
    """The names ``function`` calls and uncalls, in the order of its ops."""
    return [name for op in nested_ops(function) if isinstance(op, CallOp | UncallOp) and (name := _callee(op))]


def _callee(call: CallOp | UncallOp) -> str:
    """The name ``call`` calls, or "" where its ``callee`` is missing or no
    symbol (its own verifier refuses it, maybe after this analysis ran)."""
    callee = call.properties.get("callee")
    return callee.string_value() if isinstance(callee, SymbolRefAttr) else ""


def _fixpoint(
    found: dict[str, frozenset[int]],
    among: dict[str, frozenset[int]],
    holds: Callable[[str, int], bool],
) -> None:
    """Per function of ``among``, its positions where ``holds``, updated in
    ``found`` (which ``holds`` reads) from what ``found`` holds until
    nothing changes."""
    changed = True
    while changed:
        changed = False
        for name, positions in among.items():
            new = frozenset(k for k in positions if holds(name, k))
            if new != found[name]:
                found[name], changed = new, True
