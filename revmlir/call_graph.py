"""The call graph of a module's functions and its cycles: which calls may
recurse.

Two transformations ask it: ``make-resumable`` lays out each function of a
cycle once and calls it through frames (``revmlir.reversibilize``), and
``rev-host-safety`` checks the machine stack before each call within a cycle
(``revmlir.lowering.host_safety``).  A cycle is a strongly connected
component of the graph with an edge inside it, found by Tarjan's algorithm
in one pass over the calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

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
    component: dict[str, int] = {}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    path: list[str] = []
    # Tarjan's algorithm with the recursion's frames on a list, each a
    # function and the calls of it not yet followed: a call chain deeper
    # than Python's recursion limit is a graph like any other.
    for root in calls:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        path.append(root)
        frames: list[tuple[str, Iterator[func.CallOp]]] = [(root, iter(calls[root]))]
        while frames:
            name, pending = frames[-1]
            call = next(pending, None)
            if call is not None:
                callee = call.callee.string_value()
                if callee not in index:
                    index[callee] = low[callee] = len(index)
                    path.append(callee)
                    frames.append((callee, iter(calls[callee])))
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
    return {
        call
        for name, found in calls.items()
        for call in found
        if component[call.callee.string_value()] == component[name]
    }


def recursive_functions(functions: Iterable[func.FuncOp]) -> set[str]:
    """The functions that can call themselves, directly or through others
    (the callees of ``recursive_calls``)."""
    return {call.callee.string_value() for call in recursive_calls(functions)}
