"""Fixed-point numbers on the Python side of a call.

A fixed-point argument or result is a ``FixedPoint``: the integer the number
stores and its format, so that what a function returns goes back into its
inverse bit for bit (a float would round the 63 significant bits of a
``Fixed[43]``).  A format is ``Fixed[fraction]`` (64 bits, NiLang's
``Fixed43`` is ``Fixed[43]``) or ``Fixed[fraction, width]``; calling one
makes the number nearest a real.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from revmlir.dialects.numbers import FIXED_WIDTHS, FixedType


@dataclass(frozen=True)
class Fixed:
    """A fixed-point format: ``fraction`` bits after the point in a signed
    integer of ``width`` bits.  As a parameter annotation it fixes the
    parameter's type."""

    fraction: int
    width: int = 64

    def __post_init__(self) -> None:
        if any(isinstance(n, bool) or not isinstance(n, int) for n in (self.fraction, self.width)):
            raise TypeError(
                f"Fixed[{self.fraction!r}, {self.width!r}]: the fraction bits and the width are integers, "
                "as in Fixed[43] or Fixed[16, 32]"
            )
        if self.width not in FIXED_WIDTHS or not 0 <= self.fraction < self.width:
            raise ValueError(
                f"Fixed[{self.fraction}, {self.width}]: a fixed-point number is stored in "
                f"{FIXED_WIDTHS} bits with 0 to width - 1 fraction bits"
            )

    def __class_getitem__(cls, item: int | tuple[int, int]) -> Fixed:
        if not isinstance(item, tuple):
            return cls(item)
        if len(item) not in (1, 2):
            raise TypeError(f"Fixed{list(item)}: give the fraction bits, and the width, as in Fixed[16, 32]")
        return cls(*item)

    @property
    def type(self) -> FixedType:
        return FixedType(self.width, self.fraction)

    def __call__(self, x: float) -> FixedPoint:
        """The number of this format nearest ``x`` (ties to even)."""
        raw = self.type.nearest(float(x))
        if raw is None:
            raise OverflowError(f"{x!r} has no fixed-point number in {self}")
        return FixedPoint(raw, self)

    def from_raw(self, raw: int) -> FixedPoint:
        """The number storing ``raw``."""
        if not self.type.holds(raw):
            raise OverflowError(f"{raw} is not a {self.width}-bit integer")
        return FixedPoint(raw, self)

    def __repr__(self) -> str:
        return self.type.describe()


@dataclass(frozen=True)
class FixedPoint:
    """A fixed-point number: ``raw · 2^-fraction``."""

    raw: int
    format: Fixed

    def __float__(self) -> float:
        return self.format.type.real(self.raw)

    def __repr__(self) -> str:
        return f"{self.format!r}({float(self)!r})"


def fixed_format(type: FixedType) -> Fixed:
    return Fixed(type.fraction.data, type.width.data)


def fixed_raw(type: FixedType, value: Any) -> int | None:
    """The integer a ``type`` argument stores for ``value`` (a ``FixedPoint``
    of that format, exactly, or a real, rounded), None where there is none."""
    if isinstance(value, FixedPoint):
        return value.raw if value.format == fixed_format(type) else None
    if isinstance(value, complex | str | bytes) or value is None:
        return None
    try:
        return type.nearest(float(value))
    except (TypeError, ValueError):
        return None
