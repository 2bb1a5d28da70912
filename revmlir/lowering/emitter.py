"""What the lowering of one op may ask of the function being lowered.

Op lowerings that live in their own modules (prints, number types) emit
through this protocol, which ``rev_to_std.FunctionLowering`` implements, so
that they import no part of the lowering that calls them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from xdsl.ir import Attribute, Operation, SSAValue

from revmlir.errors import InvertibilityError, LocatedError


class Emitter(Protocol):
    """The lowered function under construction, at the builder's insertion point."""

    def get(self, value: SSAValue) -> SSAValue:
        """The value ``value`` of the source stands for here."""
        ...

    def set(self, old: SSAValue, new: SSAValue) -> None:
        """Let ``new`` stand for the source value ``old`` from now on."""
        ...

    def emit(self, op: Operation, like: Operation) -> Operation:
        """Insert ``op`` with the location of ``like``."""
        ...

    def const(self, value: int | float | bool, type: Attribute, like: Operation) -> SSAValue: ...

    def words(self, value: SSAValue, like: Operation) -> list[SSAValue]:
        """A value's 64-bit patterns, as a check's payload carries it (a
        complex number's parts, one word each)."""
        ...

    def check(
        self,
        ok: SSAValue,
        op: Operation,
        message: str,
        payload: Sequence[SSAValue] = (),
        error: type[LocatedError] = InvertibilityError,
        kinds: Sequence[str] | None = None,
    ) -> None:
        """Leave the run with ``error`` at ``op`` when ``ok`` is false."""
        ...

    def call_runtime(
        self, name: str, args: Sequence[SSAValue], results: Sequence[Attribute], like: Operation
    ) -> Sequence[SSAValue]: ...
