"""``checkpoint=`` of ``rv.gradient`` and ``rv.vjp``: how the gradient of an
``@rv.ordinary`` function is checkpointed with no annotation in its source.

The function runs as its resumable form (``make-resumable``), one loop of
primitive steps, and the policy picks the schedule over those steps:
``"bisection"`` (seed 001), ``"binomial"`` with ``snapshots=k`` (Revolve),
``"store_all"`` (every state kept), or ``"auto"``: Revolve with as many
snapshots as ``memory=`` holds.  ``base=b`` makes a checkpointed step ``b``
primitive steps, reversed on one tape (the schedules' base case); the
default, ``base="auto"``, takes ``b`` from the size of one snapshot
(``CheckpointPolicy.steps_per_base``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from revmlir.checkpoint.cursor import MAX_COUNT
from revmlir.checkpoint.schedule import count
from revmlir.dialects.ad import ScheduleAttr

POLICIES = ("bisection", "binomial", "store_all", "auto")
OPTIONS = ("checkpoint", "snapshots", "memory", "base")
"""The keyword arguments a ``checkpoint=`` request is made of."""
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


class CheckpointOptions(TypedDict, total=False):
    """``checkpoint=`` and its options, as the transformations that take
    them (``rv.hvp``, ``rv.hessian``) spell them."""

    checkpoint: str | None
    snapshots: int | None
    memory: int | str | None
    base: int | str | None


@dataclass(frozen=True)
class CheckpointPolicy:
    """A checked ``checkpoint=`` request (module docstring)."""

    scheme: str
    snapshots: int = 0
    memory: int = 0
    """Bytes the snapshots may take (``"auto"`` only)."""
    base: int | None = None
    """Primitive steps per checkpointed step; ``None``: ``"auto"``."""

    @staticmethod
    def of(
        checkpoint: Any,
        snapshots: Any = None,
        memory: Any = None,
        base: Any = None,
        *,
        api: str,
    ) -> CheckpointPolicy | None:
        """The policy the keyword arguments of ``rv.{api}`` ask for, ``None``
        without ``checkpoint=``; a ``ValueError`` or ``TypeError`` names
        what is wrong."""
        if checkpoint is None:
            given = [
                name
                for name, value in (("snapshots", snapshots), ("memory", memory), ("base", base))
                if value is not None
            ]
            if given:
                raise ValueError(
                    f"{given[0]}= needs checkpoint=: write checkpoint='binomial' "
                    "(snapshots=), checkpoint='auto' (memory=) or "
                    "checkpoint='bisection' (base=)"
                )
            return None
        if checkpoint not in POLICIES:
            raise ValueError(f"checkpoint must be one of {', '.join(map(repr, POLICIES))}, not {checkpoint!r}")
        if (checkpoint == "binomial") != (snapshots is not None):
            raise ValueError("snapshots=k is required by checkpoint='binomial' and only by it")
        if (checkpoint == "auto") != (memory is not None):
            raise ValueError("memory= is required by checkpoint='auto' and only by it, e.g. memory='64MB'")
        if isinstance(base, str) and base != "auto":
            raise TypeError(f"rv.{api}: base must be an integer or 'auto', got {base!r}")
        count = 0 if snapshots is None else _positive(api, "snapshots", snapshots)
        steps = None if base is None or base == "auto" else _positive(api, "base", base)
        return CheckpointPolicy(checkpoint, count, parse_memory(memory) if memory is not None else 0, steps)

    @staticmethod
    def of_options(options: Mapping[str, Any], api: str) -> CheckpointPolicy | None:
        """``of`` for the keyword arguments of ``rv.{api}``, which are the
        policy's and no others."""
        for name in options:
            if name not in OPTIONS:
                raise TypeError(f"rv.{api}() got an unexpected keyword argument {name!r}")
        return CheckpointPolicy.of(**{name: options.get(name) for name in OPTIONS}, api=api)

    def steps_per_base(self, snapshot_bytes: int) -> int:
        """``base``, or for ``"auto"`` four primitive steps per word of one
        snapshot, rounded up to a power of two.  A checkpointed step then
        costs its snapshot, restore and cursor entry a quarter of a word's
        copy per primitive step, and its tape (a word or a few per
        primitive step that overwrites something) holds about as much as a
        few snapshots: the base depends on the state alone, not on the run's
        length, so memory stays the schedule's snapshots plus one tape, flat
        in the length under bisection.  Seed 001's rotations (8 080-byte
        snapshots) get 4096."""
        if self.base is not None:
            return self.base
        words = -(-snapshot_bytes // 8)
        return 1 << max(0, 4 * words - 1).bit_length()

    def schedule(self, snapshot_bytes: int) -> ScheduleAttr:
        """The schedule for a state of ``snapshot_bytes`` bytes: ``"auto"``
        keeps as many snapshots as its budget holds (Revolve is optimal for
        any number of steps, and needs no more than the steps)."""
        if self.scheme != "auto":
            return ScheduleAttr(self.scheme, self.snapshots)
        count = min(self.memory // max(snapshot_bytes, 1), MAX_COUNT)
        if count < 1:
            raise ValueError(
                f"memory={self.memory} bytes holds no snapshot of the "
                f"function's state ({snapshot_bytes} bytes); allow more memory"
            )
        return ScheduleAttr("binomial", count)


def _positive(api: str, name: str, value: Any) -> int:
    """``value`` of the keyword argument ``name`` of ``rv.{api}`` as a
    count, taken as ``revmlir.checkpoint``'s functions take theirs
    (``schedule.count``: numpy's integers too, no bool, no float), and at
    most what the schedule's cursor counts in its words."""
    number = count(f"rv.{api}", name, value, 1)
    if number > MAX_COUNT:
        raise ValueError(f"rv.{api}: {name} must be at most {MAX_COUNT}, got {number}")
    return number


def parse_memory(memory: Any) -> int:
    """Bytes from ``64_000_000``, ``1e9``, ``"64MB"``, ``"1.5 GiB"`` or
    ``"512kB"``."""
    if isinstance(memory, int | float) and not isinstance(memory, bool):
        if not memory >= 1:
            raise ValueError(f"memory must be at least one byte, not {memory}")
        if memory == math.inf:
            raise ValueError("memory must be a number of bytes, not inf")
        return int(memory)
    if isinstance(memory, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([a-zA-Z]*)\s*", memory)
        if match is not None and match.group(2).lower() in _UNITS:
            value = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
            if value >= 1:
                return value
    raise ValueError(f"memory must be a number of bytes or a size like '64MB' or '1GiB', not {memory!r}")
