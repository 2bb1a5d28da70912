"""Is a function constant-width, and if not, what are its lumps?

Inverse accumulation costs what forward and reverse mode cost when every
step overwrites one of its inputs (Pearlmutter and Siskind: a
*constant-width* computation).  For a ``rev.func`` that is what the
reversibility verifier checks: each update ``y ⊕= g(x)`` overwrites ``y``
and reads only other values, so the answer follows from
``verify_function``.  For ordinary code it is a property of the data flow
(``revmlir.ad.lumps``): the function is constant-width when some order of
its ops cuts it into lumps of width 1: steps (an op, or an expression of
several with temporaries) that each overwrite one active value, the seed's
(2.6f) with ``l = 1``.  Otherwise the report names the first lump that
overwrites more at once, and gives the lump widths greedy cutting and (for
small graphs) exhaustive search find.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from revmlir.ad.lumps import (
    EXHAUSTIVE_LIMIT,
    Graph,
    Lumping,
    check_steps,
    exhaustive,
    greedy,
    lumps_of,
    program_order,
)
from revmlir.dialects import rev
from revmlir.errors import describe_op
from revmlir.verifier import verify_function


@dataclass(frozen=True)
class WidthReport:
    """What the analysis found for ``function``: ``why`` says why it is
    constant-width or what breaks it."""

    function: Operation
    constant_width: bool
    why: str
    written: Lumping | None = None
    greedy: Lumping | None = None
    exhaustive: Lumping | None = None

    def message(self) -> str:
        """The report as one line (the remark of ``rev-lump-widths``)."""
        name = self.function.properties.get("sym_name") or self.function.attributes.get("sym_name")
        verdict = "constant-width" if self.constant_width else "not constant-width"
        parts = [f"@{name.data if name is not None else '?'}: {verdict}: {self.why}"]
        for how, lumping in (
            ("in program order", self.written),
            ("greedy", self.greedy),
            ("exhaustive", self.exhaustive),
        ):
            if lumping is not None:
                parts.append(f"lumps {how}: {_widths(lumping)}")
        return "; ".join(parts)


def _widths(lumping: Lumping) -> str:
    widths = ",".join(str(w) for w in lumping.widths) or "none"
    return f"widths {widths} (cost {lumping.cost})"


def reversible_width(function: rev.FuncOp) -> WidthReport:
    """A ``rev.func`` that passes the verifier is constant-width."""
    verify_function(function)
    return WidthReport(
        function,
        True,
        "reversible, every step overwrites one of its inputs (checked by the rev verifier)",
    )


def ordinary_width(graph: Graph, limit: int = EXHAUSTIVE_LIMIT) -> WidthReport:
    """The lumps of ``graph`` in program order, by greedy cutting and, when
    it has at most ``limit`` ops, by exhaustive search; a lump that is
    singular for sure is a ``SingularLumpError``."""
    found = greedy(graph)
    check_steps(graph, found)
    best = exhaustive(graph, limit)
    chosen = best if best is not None and best.cost < found.cost else found
    wide = next((lump for lump in chosen.lumps if lump.width > 1), None)
    if wide is None:
        why = f"n = {graph.n}, every lump overwrites one active value"
    else:
        first = graph.nodes[wide.nodes[0]].op
        assert first is not None
        why = (
            f"n = {graph.n}, the lump from {describe_op(first)} ({len(wide.nodes)} ops, up to "
            f"{wide.peak} active values live) overwrites {wide.width} at once"
        )
    written = lumps_of(graph, program_order(graph))
    return WidthReport(graph.function, wide is None, why, written, found, best)
