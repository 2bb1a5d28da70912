"""Remarks: what an analysis tells the user about an op without failing,
the way MLIR's ``emitRemark`` does.

A pass calls ``remark(op, message)``; ``rev-opt`` collects the remarks of
each chunk (``collect_remarks``) and prints them as ``file:line:col: remark:
message``, the format ``--verify-diagnostics`` reads back, so ``expected-
remark`` annotations check them like errors.  Outside a collector (a pass run
from Python) remarks go to stderr, as MLIR's default handler prints them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from xdsl.ir import Operation

from revmlir.errors import format_location


@dataclass(frozen=True)
class Remark:
    """A remark about ``op``."""

    op: Operation
    message: str

    def render(self, file: str) -> str:
        """``file:line:col: remark: message`` (the op's location, else ``file``)."""
        return f"{format_location(self.op.location) or file}: remark: {self.message}"


_collector: ContextVar[list[Remark] | None] = ContextVar("revmlir_remarks", default=None)


def remark(op: Operation, message: str) -> None:
    """Report ``message`` about ``op`` to the innermost collector, or to stderr."""
    collected = _collector.get()
    if collected is None:
        print(Remark(op, message).render("<unknown>"), file=sys.stderr)
    else:
        collected.append(Remark(op, message))


@contextmanager
def collect_remarks() -> Iterator[list[Remark]]:
    """The remarks made inside the ``with`` block, in order."""
    collected: list[Remark] = []
    token = _collector.set(collected)
    try:
        yield collected
    finally:
        _collector.reset(token)
