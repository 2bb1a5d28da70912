"""Op interfaces that carry the semantics of reversible programs.

Passes never ask "is this a ``rev.add``?".  They ask an op what it consumes,
what it writes, how to invert it and which run-time checks it performs, and each
op answers next to its own definition.  The interfaces follow xDSL's
``HasCanonicalizationPatternsInterface`` pattern: abstract mixins on the op class.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import BlockArgument, Operation, Region, SSAValue
from xdsl.traits import OpTrait

if TYPE_CHECKING:
    from revmlir.ad.adjoint import Adjointer
    from revmlir.ad.tangent import Tangenter
    from revmlir.inversion import Inverter


class StateConsumer(Operation, abc.ABC):
    """An op that consumes state values.

    State values are linear: each SSA version of a reversible variable is
    consumed by exactly one op (an instruction, a free, a push, a call or a
    terminator).  Operands not listed here are only read.
    """

    @abc.abstractmethod
    def consumed_operands(self) -> Sequence[SSAValue]:
        raise NotImplementedError()


class InvertibleOp(StateConsumer, abc.ABC):
    """An op with an inverse.  All its results are new state versions."""

    @abc.abstractmethod
    def invert(self, inverter: Inverter) -> None:
        """Emit the inverse of this op at the inverter's insertion point.

        The inverse reads the inverse-side values of this op's results through
        ``inverter.lookup`` and binds the values it produces to this op's
        consumed operands with ``inverter.bind``.
        """
        raise NotImplementedError()

    def state_block_args(self, region: Region) -> Sequence[BlockArgument]:
        """Block arguments of ``region`` that carry state into it (and so must be
        consumed exactly once inside).  Condition regions carry none."""
        return ()

    def written_memrefs(self) -> Sequence[SSAValue]:
        """Memrefs whose contents this op itself (not its regions) may change."""
        return ()

    def accumulated_memrefs(self) -> Sequence[SSAValue]:
        """Memrefs this op uses only as a step of an accumulation
        (``rev.take``, ``rev.add``/``rev.sub``, ``rev.put`` of one element):
        such a step neither reads the element nor depends on other writes,
        so concurrent steps on one element commute."""
        return ()

    def is_inverse_of(self, other: Operation) -> bool:
        """Whether ``other`` followed by this op, on the same values, is the
        identity; canonicalization then removes both."""
        return False

    def ended_operands(self) -> Sequence[SSAValue]:
        """The operands whose life this op ends, and its inverse's results
        begin again: the state it consumes, and a reference it releases
        (an ancilla array).  Cancelling this op with its inverse puts them
        in place of those results."""
        return self.consumed_operands()


class RuntimeCheckedOp(Operation, abc.ABC):
    """An op whose reversibility is checked while the program runs.

    The ``nocheck`` unit attribute turns the check off (NiLang's
    ``@invcheckoff``); inserting and stripping checks are IR transformations
    that toggle it.
    """

    CHECK_ATTR: ClassVar[str] = "nocheck"

    @classmethod
    @abc.abstractmethod
    def runtime_check(cls) -> str:
        """One line saying what is checked, for docs and diagnostics."""
        raise NotImplementedError()

    def needs_runtime_check(self) -> bool:
        """False when the verifier already proved what the check would test."""
        return True

    @property
    def checks_enabled(self) -> bool:
        return self.CHECK_ATTR not in self.attributes

    def set_checks(self, enabled: bool) -> None:
        set_checks(self, enabled)


@dataclass(frozen=True)
class ChecksWhenInverted(OpTrait):
    """The inverse of this op performs a run-time check (``anc.alloc`` becomes
    a checked ``anc.free``).  Inversion copies attributes, so ``nocheck`` on
    this op turns the inverse's check off; stripping checks marks it too."""


def has_switchable_checks(op: Operation) -> bool:
    """Whether ``nocheck`` on ``op`` turns a run-time check off, forward or in
    its inverse."""
    return isinstance(op, RuntimeCheckedOp) or op.has_trait(ChecksWhenInverted)


def set_checks(op: Operation, enabled: bool) -> None:
    if enabled:
        op.attributes.pop(RuntimeCheckedOp.CHECK_ATTR, None)
    else:
        op.attributes[RuntimeCheckedOp.CHECK_ATTR] = UnitAttr()


@dataclass(frozen=True)
class NotInvertible(OpTrait):
    """Marks an op that has no inverse rule of its own, with the reason.

    Structural ops (functions, terminators, condition yields) are inverted by
    the op that owns them; the op-coverage test requires every revmlir op to be
    invertible, pure, or marked with this trait.
    """

    reason: str = ""


class DifferentiableOp(Operation, abc.ABC):
    """An op with an adjoint rule (reverse mode by reverse computing).

    NiLang's GVar semantics (seed 000, appendix C): the adjoint program is the
    inverse program in which every value carries a gradient.  Walking the
    forward block backwards, each op emits its inverse step and updates the
    gradients of the values it read or consumed, from the gradients of the
    values it produced.
    """

    ADJOINT_OF_ALL_LANES: ClassVar[bool] = False
    """Region ops and calls set this: one op carries every lane's gradients
    (vector mode, ``@f.adjL``), so their rule is a plain method that runs
    once, emits the whole adjoint op and uses the lane-by-lane helpers
    (``carried_state``, ``adjoint_region``, ``bind_carried``,
    ``lane_gradients``)."""

    @abc.abstractmethod
    def adjoint(self, adjointer: Adjointer) -> Iterator[None] | None:
        """A generator emitting this op's gradient updates around its inverse
        step, which it marks with ``yield``.

        Before the ``yield``: read the gradients of this op's results with
        ``adjointer.gradient`` and push gradients into the expressions it read
        with ``adjointer.accumulate`` (a local reverse sweep using the
        derivative table of ``revmlir.ad.derivatives``): the values after the
        op are still current.  At the ``yield`` the adjointer emits the op's
        inverse (``InvertibleOp.invert``).  After it: bind the gradients of
        the consumed operands with ``adjointer.bind_gradient``.  In vector
        mode the rule runs once per lane (``adjointer.lane``): every lane up
        to the ``yield``, one inverse step, every lane to the end.
        """
        raise NotImplementedError()


class ForwardDifferentiableOp(Operation, abc.ABC):
    """An op with a tangent rule (forward mode).

    The tangent program runs forward: each op is copied and followed by the
    updates of the tangents of the values it produced, from the tangents of
    the values it read or consumed (``y += e`` gives ``ẏ += ė``).  Tangents
    are state of the tangent program, so it is itself reversible.
    """

    TANGENT_OF_ALL_LANES: ClassVar[bool] = False
    """In vector mode the rule runs once per lane (``tangenter.lane``);
    region ops and calls set this: one op carries every lane's tangents, so
    their rule runs once and uses the lane-by-lane helpers
    (``carried_state``, ``tangent_region``, ``bind_carried``)."""

    @abc.abstractmethod
    def tangent(self, tangenter: Tangenter) -> None:
        """Emit a copy of this op plus its tangent updates.

        Read the tangents of operands with ``tangenter.tangent`` (``None``:
        zero, or a value that carries none; expressions are swept forward
        with the tangent table of ``revmlir.ad.tangent_rules``), copy the op
        with ``tangenter.copy`` and bind the tangents of its results with
        ``tangenter.bind_tangent``.
        """
        raise NotImplementedError()


@dataclass(frozen=True)
class NotDifferentiable(OpTrait):
    """Marks an op that has no adjoint rule of its own, nor a tangent rule
    unless it is a ``ForwardDifferentiableOp``, with the reason (it is
    differentiated by its owner, expanded before differentiation, its
    values carry no derivative yet, or it appears only in programs that are
    differentiated forward only).  ``ad-adjoint`` and ``ad-tangent`` report
    the reason at the op."""

    reason: str = ""
