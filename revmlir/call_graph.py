"""The call graph of a module's functions and its cycles: which calls may
recurse.

Two transformations ask it: ``make-resumable`` lays out each function of a
cycle once and calls it through frames (``revmlir.reversibilize``), and
``rev-host-safety`` checks the machine stack and counts the depth before
each call within a cycle (``revmlir.lowering.host_safety``); the interpreter
counts the same calls (``revmlir.interpreter.recursion``).  A cycle is a strongly connected
component of the graph with an edge inside it, found by Tarjan's algorithm
in one pass over the calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from xdsl.dialects import func


def recursive_calls(functions: Iterable[func.FuncOp]) -> set[func.CallOp]:
    """The calls among ``functions`` whose callee can call their caller
    again (both in one strongly connected component); calls of functions
    not among them are no edges."""
    by_name = {f.sym_name.data: f for f in functions}
    calls = {
        name: [op for op in f.walk() if isinstance(op, func.CallOp) and op.callee.string_value() in by_name]
        for name, f in by_name.items()
    }
    component = components({name: [call.callee.string_value() for call in found] for name, found in calls.items()})
    return {
        call
        for name, found in calls.items()
        for call in found
        if component[call.callee.string_value()] == component[name]
    }


def components(callees: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """The strongly connected component of each function of a call graph
    (``callees``: each function's callees, all of them keys): a call whose
    caller and callee have one may recurse.  The interpreter asks it of
    reversible functions, whose calls and uncalls are both edges.  The
    functions come in the order Tarjan's algorithm closes their components,
    each component after every one its functions call (``revmlir.counters``
    finds callees' counters first so)."""
    component: dict[str, int] = {}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    path: list[str] = []
    # Tarjan's algorithm with the recursion's frames on a list, each a
    # function and the callees of it not yet followed: a call chain deeper
    # than Python's recursion limit is a graph like any other.
    for root in callees:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        path.append(root)
        frames: list[tuple[str, Iterator[str]]] = [(root, iter(callees[root]))]
        while frames:
            name, pending = frames[-1]
            callee = next(pending, None)
            if callee is not None:
                if callee not in index:
                    index[callee] = low[callee] = len(index)
                    path.append(callee)
                    frames.append((callee, iter(callees[callee])))
                elif callee not in component:
                    low[name] = min(low[name], index[callee])
                continue
            frames.pop()
            if frames:
                caller = frames[-1][0]
                low[caller] = min(low[caller], low[name])
            if low[name] == index[name]:
                while True:
                    member = path.pop()
                    component[member] = index[name]
                    if member == name:
                        break
    return component


def recursive_functions(functions: Iterable[func.FuncOp]) -> set[str]:
    """The functions that can call themselves, directly or through others
    (the callees of ``recursive_calls``)."""
    return {call.callee.string_value() for call in recursive_calls(functions)}
