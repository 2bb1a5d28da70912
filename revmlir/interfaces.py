"""Op interfaces that carry the semantics of reversible programs.

Passes never ask "is this a ``rev.add``?".  They ask an op what it consumes,
what it writes, how to invert it and which run-time checks it performs, and each
op answers next to its own definition.  The interfaces follow xDSL's
``HasCanonicalizationPatternsInterface`` pattern: abstract mixins on the op class.

The rules receive the transformation that calls them typed as a narrow
protocol (``InverseBuilder``, ``AdjointBuilder``, ``TangentBuilder``): the
methods a rule may call, and no more.  The inverter and the differentiators
implement them a layer above, so the dialects never import the
transformations that use them.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, TypeGuard, TypeVar

from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    IndexType,
    IntegerType,
    MemRefType,
    UnitAttr,
)
from xdsl.ir import Attribute, BlockArgument, Operation, Region, SSAValue
from xdsl.traits import OpTrait
from xdsl.utils.exceptions import PassFailedException

_OpT = TypeVar("_OpT", bound=Operation)


# ---------------------------------------------------------------------------
# Kinds of values
# ---------------------------------------------------------------------------


class StateType:
    """Marks a dialect type whose values are reversible state (linear SSA
    versions), like the builtin integers, indices, floats and complex
    numbers: ``rev.log``, ``rev.fixed``, ``rev.tropical``."""


class ReferenceType:
    """Marks a dialect type whose values are references, mutated in place
    by element or stack instructions, like memrefs: ``anc.stack``."""


def is_state_type(type: Attribute) -> bool:
    """Whether values of ``type`` are reversible state."""
    return _is_state_class(type.__class__)


def is_reference_type(type: Attribute) -> bool:
    """Whether values of ``type`` are references (memrefs and stacks)."""
    return _is_reference_class(type.__class__)


@functools.cache
def _is_state_class(kind: type[Attribute]) -> bool:
    """``is_state_type`` of the types of class ``kind``, decided once per
    class: the answer depends on the class alone, and every analysis asks
    it of every value, so an ``isinstance`` against a union of xDSL's type
    classes (ABCs, a dozen of them for the floats) cost more than the rest
    of the question."""
    return issubclass(kind, IntegerType | IndexType | ComplexType | AnyFloat | StateType)


@functools.cache
def _is_reference_class(kind: type[Attribute]) -> bool:
    """``is_reference_type`` of the types of class ``kind``, decided once per
    class (as ``_is_state_class``)."""
    return issubclass(kind, MemRefType | ReferenceType)


# ---------------------------------------------------------------------------
# What rules may ask of the transformation calling them
# ---------------------------------------------------------------------------


class InverseBuilder(Protocol):
    """What an inverse rule (``InvertibleOp.invert``) may ask of the
    inverter: the inverse-side values, and where to put the inverse."""

    def lookup(self, value: SSAValue) -> SSAValue:
        """The inverse-side value standing for forward ``value`` here."""
        ...

    def bind(self, forward: SSAValue, inverse: SSAValue) -> None:
        """Record that ``inverse`` is the inverse-side version of ``forward``."""
        ...

    def insert(self, op: _OpT, like: Operation) -> _OpT:
        """Insert ``op`` as the inverse of ``like`` (its location and
        attributes carried over)."""
        ...

    def clone_region(self, region: Region, extra_args: Sequence[Attribute] = ()) -> Region:
        """A forward copy of ``region`` with its captured values mapped."""
        ...

    def invert_region(self, region: Region) -> Region:
        """A new region computing the inverse of ``region``."""
        ...


class DerivativeBuilder(InverseBuilder, Protocol):
    """What both modes' rules share: the lane being differentiated, the
    primal values, and float arithmetic emitted at the insertion point."""

    lane: int
    """The lane (vector mode) the rule is running for."""

    lanes: int
    """How many lanes there are."""

    def each_lane(self) -> Iterator[int]:
        """Make each lane current in turn (then lane 0 again): for the rules
        of ops that carry every lane (``TANGENT_OF_ALL_LANES``)."""
        ...

    def fail(self, op: Operation, why: str) -> PassFailedException:
        """The mode's diagnostic for ``op``, which cannot be differentiated."""
        ...

    def emit(self, op: Operation) -> SSAValue:
        """Insert ``op`` at the insertion point; its result."""
        ...

    def emit_op(self, op: Operation) -> Operation:
        """Insert ``op`` at the insertion point; the op (for several results)."""
        ...

    def primal(self, value: SSAValue) -> SSAValue:
        """The forward ``value`` here (recomputed if needed)."""
        ...

    def const(self, value: float, type: Attribute) -> SSAValue:
        """``value`` as a float of ``type`` (``value + 0i`` if complex)."""
        ...

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue: ...

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue: ...

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue: ...

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue: ...

    def neg(self, a: SSAValue) -> SSAValue: ...

    def conj(self, a: SSAValue) -> SSAValue:
        """``conj(a)``; the identity on floats."""
        ...


class AdjointBuilder(DerivativeBuilder, Protocol):
    """What an adjoint rule (``DifferentiableOp.adjoint``) and a derivative
    rule (``revmlir.ad.derivatives``) may ask of the adjointer: gradients
    of values, of array elements and of whole arrays, and the lane-by-lane
    helpers of region ops and calls."""

    def gradient_type(self, type: Attribute) -> Attribute | None:
        """The type of the gradient a value of ``type`` carries, ``None``
        for none (``revmlir.semantics.gradient_type``)."""
        ...

    def wants(self, value: SSAValue) -> bool:
        """Whether gradient must flow into ``value``."""
        ...

    def gradient(self, value: SSAValue) -> SSAValue | None:
        """The gradient of forward ``value`` here, as state."""
        ...

    def gradient_value(self, value: SSAValue) -> SSAValue | None:
        """The gradient of ``value`` for reading only (maybe a symbolic zero)."""
        ...

    def bind_gradient(self, forward: SSAValue, gradient: SSAValue) -> None: ...

    def is_zero(self, value: SSAValue) -> bool:
        """Whether the gradient ``value`` is known to be zero."""
        ...

    def new_gradient(self, type: Attribute) -> SSAValue:
        """A zero gradient (symbolic until something needs it as state)."""
        ...

    def zero_gradient_state(self, type: Attribute) -> SSAValue:
        """A zero gradient made into state at once."""
        ...

    def discard_gradient(self, gradient: SSAValue) -> None:
        """End a gradient's life, unchecked."""
        ...

    def accumulate(self, seeds: Sequence[tuple[SSAValue, SSAValue]]) -> None:
        """Add each seed's gradient to the expression it belongs to."""
        ...

    def add_to_element(self, memref_value: SSAValue, indices: Sequence[SSAValue], contribution: SSAValue) -> None:
        """``shadow[i…] += contribution`` for an element the forward program read."""
        ...

    def take_gradient(self, shadow: SSAValue, indices: Sequence[SSAValue], like: Operation) -> SSAValue:
        """Borrow an element's gradient from its shadow."""
        ...

    def put_gradient(self, gradient: SSAValue, shadow: SSAValue, indices: Sequence[SSAValue], like: Operation) -> None:
        """Return an element's gradient to its shadow."""
        ...

    def new_shadow(self, type: MemRefType, sizes: Sequence[SSAValue], like: Operation) -> SSAValue:
        """The zero gradient of an ancilla array."""
        ...

    def discard_shadow(self, shadow: SSAValue, sizes: Sequence[SSAValue], like: Operation) -> None:
        """End an ancilla array's gradient, unchecked."""
        ...

    def lane_gradients(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """The gradients of ``values`` that carry one, lane by lane, as state."""
        ...

    def lane_gradient_values(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """``lane_gradients`` for reading only."""
        ...

    def bind_lane_gradients(self, values: Sequence[SSAValue], gradients: Sequence[SSAValue]) -> None:
        """Bind gradients laid out as ``lane_gradients`` makes them."""
        ...

    def carried_state(self, op: Operation, results: Sequence[SSAValue]) -> tuple[list[SSAValue], list[SSAValue]]:
        """The state of the adjoint of region op ``op``, and the gradients
        of the outer values its regions read."""
        ...

    def bind_carried(
        self, inputs: Sequence[SSAValue], new_results: Sequence[SSAValue], captured: Sequence[SSAValue]
    ) -> None:
        """Bind the results of an adjoint region op built on ``carried_state``."""
        ...

    def adjoint_region(self, region: Region, captured: Sequence[SSAValue]) -> Region:
        """A new region computing the adjoint of state-carrying ``region``."""
        ...

    def adjoint_region_op(
        self,
        op: Operation,
        inputs: Sequence[SSAValue],
        results: Sequence[SSAValue],
        build: Callable[[list[SSAValue], list[SSAValue]], Operation],
        loop: bool,
    ) -> None:
        """Emit the adjoint of region op ``op``, built by ``build``."""
        ...

    def clone_condition(self, region: Region, extra: Sequence[Attribute]) -> Region:
        """A copy of condition ``region`` taking ``extra`` ignored arguments."""
        ...

    def adjoint_of(self, callee: str, call: Operation, zeros: frozenset[int]) -> tuple[str, frozenset[int]]:
        """The adjoint a call of ``@callee`` calls, given its zero
        gradients, and the positions whose gradients it leaves zero."""
        ...

    def note_zeros_after(
        self,
        values: Sequence[SSAValue],
        gradients: Sequence[SSAValue],
        results: Sequence[SSAValue],
        exits: frozenset[int],
    ) -> None:
        """After a call of an adjoint: the positions ``exits`` are zero again."""
        ...


MakeCall = Callable[[str, Sequence[SSAValue], Sequence[Attribute]], Operation]
"""``make(callee, operands, result types)``: a call op of some kind."""


class TangentBuilder(DerivativeBuilder, Protocol):
    """What a tangent rule (``ForwardDifferentiableOp.tangent``) and a
    tangent-table rule (``revmlir.ad.tangent_rules``) may ask of the
    tangenter."""

    def tangent(self, value: SSAValue) -> SSAValue | None:
        """The tangent of forward ``value`` here (``None``: zero or none)."""
        ...

    def bind_tangent(self, forward: SSAValue, tangent: SSAValue) -> None: ...

    def zero(self, forward: SSAValue) -> SSAValue:
        """A zero of the tangent type of float ``forward``."""
        ...

    def sum(self, *terms: SSAValue | None) -> SSAValue | None:
        """The sum of the terms that are not zero (``None``)."""
        ...

    def scaled(self, dot: SSAValue | None, partial: Callable[[], SSAValue]) -> SSAValue | None:
        """``dot · partial``, the partial built only for a nonzero tangent."""
        ...

    def copy(self, op: Operation) -> None:
        """Emit region-free ``op`` itself on the tangent program's values."""
        ...

    def mirror(self, op: Operation) -> Operation | None:
        """Copy region-free ``op``, then run the same op on tangents."""
        ...

    def carried_state(self, state: Sequence[SSAValue]) -> list[SSAValue]:
        """The state of the tangent of a region op."""
        ...

    def carried_tangents(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """The tangents of ``values`` that carry one, lane by lane."""
        ...

    def bind_carried(self, results: Sequence[SSAValue], new: Sequence[SSAValue]) -> None:
        """Bind the results of an op built on ``carried_state``."""
        ...

    def tangent_region(self, region: Region) -> Region:
        """The tangent program of a state-carrying region."""
        ...

    def condition(self, region: Region, state: Sequence[SSAValue]) -> Region:
        """A copy of condition ``region`` taking the tangents in ``state``."""
        ...

    def tangent_of(self, callee: str, call: Operation) -> str:
        """The tangent program a call of ``@callee`` calls."""
        ...

    def ordinary_tangent(
        self, callee: str, args: Sequence[SSAValue], results: Sequence[SSAValue], make: MakeCall
    ) -> None:
        """Emit, in place of the call of ordinary code ``@callee``, the call
        ``make(name, operands, result types)`` of its derived tangent, which
        runs it with every lane's tangents."""
        ...


# ---------------------------------------------------------------------------
# Op interfaces
# ---------------------------------------------------------------------------


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
    def invert(self, inverter: InverseBuilder) -> None:
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


def is_invertible_op(op: Operation | None) -> TypeGuard[InvertibleOp]:
    """``isinstance(op, InvertibleOp)``, decided once per class: the value
    model asks it of the owner of every value (``is_state_value``), and an
    instance check against an ABC costs more than the rest of the
    question."""
    return op is not None and _is_invertible_class(op.__class__)


@functools.cache
def _is_invertible_class(kind: type[Operation]) -> bool:
    return issubclass(kind, InvertibleOp)


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
    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None] | None:
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
    def tangent(self, tangenter: TangentBuilder) -> None:
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
