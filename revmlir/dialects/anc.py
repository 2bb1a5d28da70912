"""The ``anc`` dialect: ancilla memory.

Reversible memory management (seed 000, section 3.2) needs the content of a
variable to be known when it is deallocated.  ``anc.alloc`` makes a state value
holding a known value and ``anc.free`` gives it back after checking it holds
that value again.  A value that cannot be cleared goes onto a stack and comes
back with ``anc.pop`` when the program runs backwards.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, Float64Type, IndexType, IntegerType, MemRefType
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    param_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from revmlir.dialects.rev import InverseCancellationTrait
from revmlir.errors import InversionError, describe_op
from revmlir.interfaces import (
    AdjointBuilder,
    ChecksWhenInverted,
    DifferentiableOp,
    ForwardDifferentiableOp,
    InverseBuilder,
    InvertibleOp,
    NotDifferentiable,
    NotInvertible,
    ReferenceType,
    RuntimeCheckedOp,
    StateConsumer,
    TangentBuilder,
    set_checks,
)
from revmlir.ir_utils import as_value, init_as_created
from revmlir.naming import FORGETFUL_ATTR


@irdl_attr_definition
class StackType(ParametrizedAttribute, TypeAttribute, ReferenceType):
    """A LIFO stack of values of one type, mutated in place like a memref."""

    name = "anc.stack"
    element_type: Attribute = param_def()


@irdl_op_definition
class AllocOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """``x ← e``: a new state value holding the known value ``e``.
    Inverse: ``anc.free`` with the same ``e``."""

    name = "anc.alloc"
    T: ClassVar = VarConstraint("T", AnyAttr())
    value = operand_def(T)
    result = result_def(T)

    traits = traits_def(InverseCancellationTrait(), ChecksWhenInverted())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue | Operation):
        value = as_value(value)
        init_as_created(self, [value], [value.type])

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def invert(self, inverter: InverseBuilder) -> None:
        free = FreeOp(inverter.lookup(self.result), inverter.lookup(self.value))
        free.attributes.update(self.attributes)
        inverter.insert(free, like=self)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """``x ← e``: ``ẋ ← ė`` (zero when ``e`` is a constant)."""
        tangenter.mirror(self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """``x ← e``: the ancilla's gradient flows into ``e`` (NiLang drops
        it, which is wrong when ``e`` is not a constant); then the ancilla is
        freed and its gradient discarded."""
        g = adjointer.gradient_value(self.result)
        if g is not None:
            adjointer.accumulate([(self.value, g)])
        yield  # the inverse step
        if g is not None:
            adjointer.discard_gradient(g)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, FreeOp) and other.value == self.value


@irdl_op_definition
class FreeOp(IRDLOperation, InvertibleOp, RuntimeCheckedOp, DifferentiableOp, ForwardDifferentiableOp):
    """``x → e``: consume the ancilla ``x``, which must hold ``e``.
    Inverse: ``anc.alloc`` of ``e``."""

    name = "anc.free"
    T: ClassVar = VarConstraint("T", AnyAttr())
    ancilla = operand_def(T)
    value = operand_def(T)

    traits = traits_def(InverseCancellationTrait())
    assembly_format = "$ancilla `,` $value attr-dict `:` type($ancilla)"

    def __init__(self, ancilla: SSAValue | Operation, value: SSAValue | Operation):
        init_as_created(self, [ancilla, value])

    @classmethod
    def runtime_check(cls) -> str:
        return "the ancilla holds its known value (floats: within tolerance)"

    def consumed_operands(self) -> Sequence[SSAValue]:
        return (self.ancilla,)

    def invert(self, inverter: InverseBuilder) -> None:
        if FORGETFUL_ATTR in self.attributes:
            raise InversionError(
                f"{describe_op(self)} forgets the value it frees (the gradient an ancilla has at its "
                "birth, a derivative with respect to a constant), so its function has no inverse"
            )
        alloc = AllocOp(inverter.lookup(self.value))
        # keeps `nocheck`: inert on the alloc, it makes the alloc's inverse an
        # unchecked free again (invert(invert(f)) == f)
        alloc.attributes.update(self.attributes)
        inverter.insert(alloc, like=self)
        inverter.bind(self.ancilla, alloc.result)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """``x → e``: ``ẋ → ė``, unchecked (the check on ``x`` covers it)."""
        tangenter.mirror(self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """``x → e``: nothing after the free depends on ``x``, so the
        re-allocated ancilla starts with a zero gradient."""
        yield  # the inverse step
        if (type := adjointer.gradient_type(self.ancilla.type)) is not None:
            adjointer.bind_gradient(self.ancilla, adjointer.new_gradient(type))

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, AllocOp) and other.value == self.value and FORGETFUL_ATTR not in self.attributes


@irdl_op_definition
class ArrayAllocOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """A new array of zeros, sized by ``sizes`` (one per dynamic dimension):
    an ancilla array (NiLang's ``zeros``), which ``anc.array_free`` gives
    back holding zeros again.  Inverse: ``anc.array_free`` with the same
    sizes."""

    name = "anc.array_alloc"
    sizes = var_operand_def(IndexType)
    result = result_def(MemRefType)

    traits = traits_def(InverseCancellationTrait(), ChecksWhenInverted())
    assembly_format = "`(` $sizes `)` attr-dict `:` type($result)"

    def __init__(self, type: MemRefType, sizes: Sequence[SSAValue]):
        super().__init__(operands=[sizes], result_types=[type])

    def verify_(self) -> None:
        _verify_array(self, self.result.type, self.sizes)

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def invert(self, inverter: InverseBuilder) -> None:
        free = ArrayFreeOp(inverter.lookup(self.result), [inverter.lookup(s) for s in self.sizes])
        free.attributes.update(self.attributes)
        inverter.insert(free, like=self)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """An array of floats has a tangent array, born zero with it."""
        tangenter.mirror(self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """The array's gradient, which the adjoint created where the array
        was freed, ends here: nothing before the array's birth depends on
        its initial zeros."""
        shadow = adjointer.gradient(self.result)
        yield  # the inverse step
        if shadow is not None:
            adjointer.discard_shadow(shadow, [adjointer.lookup(s) for s in self.sizes], like=self)

    def is_inverse_of(self, other: Operation) -> bool:
        return (
            isinstance(other, ArrayFreeOp)
            and other.array.type == self.result.type
            and list(other.sizes) == list(self.sizes)
        )


@irdl_op_definition
class ArrayFreeOp(IRDLOperation, InvertibleOp, RuntimeCheckedOp, DifferentiableOp, ForwardDifferentiableOp):
    """Release an ancilla array, which must hold only zeros (floats: within
    tolerance); ``sizes`` restate the ones it was allocated with, for the
    inverse.  Inverse: ``anc.array_alloc``."""

    name = "anc.array_free"
    array = operand_def(MemRefType)
    sizes = var_operand_def(IndexType)

    assembly_format = "$array `(` $sizes `)` attr-dict `:` type($array)"

    def __init__(self, array: SSAValue, sizes: Sequence[SSAValue]):
        super().__init__(operands=[array, sizes])

    def verify_(self) -> None:
        _verify_array(self, self.array.type, self.sizes)

    @classmethod
    def runtime_check(cls) -> str:
        return "the array holds only zeros (floats: within tolerance)"

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def ended_operands(self) -> Sequence[SSAValue]:
        return (self.array,)

    def invert(self, inverter: InverseBuilder) -> None:
        assert isinstance(self.array.type, MemRefType)
        alloc = ArrayAllocOp(self.array.type, [inverter.lookup(s) for s in self.sizes])
        alloc.attributes.update(self.attributes)
        inverter.insert(alloc, like=self)
        inverter.bind(self.array, alloc.result)

    def tangent(self, tangenter: TangentBuilder) -> None:
        tangenter.mirror(self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """Re-allocated backwards, an array of floats gets a shadow of zeros:
        nothing after the free depends on it."""
        yield  # the inverse step
        if isinstance(type := adjointer.gradient_type(self.array.type), MemRefType):
            sizes = [adjointer.lookup(s) for s in self.sizes]
            adjointer.bind_gradient(self.array, adjointer.new_shadow(type, sizes, like=self))

    def is_inverse_of(self, other: Operation) -> bool:
        return (
            isinstance(other, ArrayAllocOp)
            and other.result.type == self.array.type
            and list(other.sizes) == list(self.sizes)
        )


def _verify_array(op: Operation, type: Attribute, sizes: Sequence[SSAValue]) -> None:
    assert isinstance(type, MemRefType)
    if not isinstance(type.element_type, IntegerType | IndexType | AnyFloat):
        raise VerifyException(f"'{op.name}': ancilla arrays hold integers or floats, not {type.element_type}")
    dynamic = sum(1 for d in type.get_shape() if d < 0)
    if len(sizes) != dynamic:
        raise VerifyException(
            f"'{op.name}' takes one size per dynamic dimension of {type}: {dynamic}, got {len(sizes)}"
        )


@irdl_op_definition
class StackAllocOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """A new, empty stack.  Inverse: ``anc.stack_free``."""

    name = "anc.stack_alloc"
    result = result_def(StackType)

    traits = traits_def(ChecksWhenInverted())

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, type: StackType):
        super().__init__(result_types=[type])

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def invert(self, inverter: InverseBuilder) -> None:
        inverter.insert(StackFreeOp(inverter.lookup(self.result)), like=self)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """A stack of floats has a shadow stack of tangents, born with it."""
        tangenter.mirror(self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """A stack of floats has a shadow stack of gradients, born and
        released with it."""
        shadow = adjointer.gradient(self.result)
        yield  # the inverse step
        if shadow is not None:
            adjointer.insert(StackFreeOp(shadow), like=self)


@irdl_op_definition
class StackFreeOp(IRDLOperation, InvertibleOp, RuntimeCheckedOp, DifferentiableOp, ForwardDifferentiableOp):
    """Release a stack, which must be empty.  Inverse: ``anc.stack_alloc``."""

    name = "anc.stack_free"
    stack = operand_def(StackType)

    assembly_format = "$stack attr-dict `:` type($stack)"

    def __init__(self, stack: SSAValue):
        super().__init__(operands=[stack])

    @classmethod
    def runtime_check(cls) -> str:
        return "the stack is empty"

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def invert(self, inverter: InverseBuilder) -> None:
        assert isinstance(self.stack.type, StackType)
        alloc = inverter.insert(StackAllocOp(self.stack.type), like=self)
        inverter.bind(self.stack, alloc.result)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The shadow stack of tangents is released with the stack.  Its
        emptiness is exact (it mirrors the stack push for push), so unlike
        the checks on tangent values, which would repeat the op's up to
        rounding, this check stays as the op has it: a checkpointed
        gradient's snapshot stores must be freed checked."""
        twin = tangenter.mirror(self)
        if twin is not None:
            set_checks(twin, self.checks_enabled)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        yield  # the inverse step
        if isinstance(type := adjointer.gradient_type(self.stack.type), StackType):
            shadow = adjointer.insert(StackAllocOp(type), like=self)
            adjointer.bind_gradient(self.stack, shadow.result)


_ElementT = VarConstraint("T", AnyAttr())
_StackT = ParamAttrConstraint(StackType, (_ElementT,))


class _StackOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """Shared behaviour; each op declares ``stack`` first so it is operand 0.

    The adjoint of each op moves values on the stack as its inverse does and
    moves their gradients on the shadow stack (``AdjointBuilder.gradient`` of the
    stack; ``None`` for stacks of integers and booleans) the same way.
    """

    traits = traits_def(InverseCancellationTrait())

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The same op on the shadow stack of tangents, with the tangent in
        place of the value (stacks of integers and booleans have none)."""
        tangenter.mirror(self)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, _StackOp) and other.operands[0] == self.operands[0]


@irdl_op_definition
class PushOp(_StackOp):
    """Move a value onto a stack, consuming it.  Inverse: ``anc.pop``."""

    name = "anc.push"
    stack = operand_def(_StackT)
    value = operand_def(_ElementT)

    assembly_format = "$stack `,` $value attr-dict `:` type($stack)"

    def __init__(self, stack: SSAValue, value: SSAValue):
        super().__init__(operands=[stack, value])

    def consumed_operands(self) -> Sequence[SSAValue]:
        return (self.value,)

    def invert(self, inverter: InverseBuilder) -> None:
        pop = inverter.insert(PopOp(inverter.lookup(self.stack)), like=self)
        inverter.bind(self.value, pop.result)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        shadow = adjointer.gradient(self.stack)
        yield  # the inverse step
        if shadow is not None:
            gradient = adjointer.insert(PopOp(shadow), like=self)
            adjointer.bind_gradient(self.value, gradient.result)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, PopOp) and super().is_inverse_of(other)


@irdl_op_definition
class PopOp(_StackOp):
    """Take the top of a stack as a new state value.  Inverse: ``anc.push``.

    Popping an empty stack is always an error, checks on or off.
    """

    name = "anc.pop"
    stack = operand_def(_StackT)
    result = result_def(_ElementT)

    assembly_format = "$stack attr-dict `:` type($stack)"

    def __init__(self, stack: SSAValue):
        assert isinstance(stack.type, StackType)
        super().__init__(operands=[stack], result_types=[stack.type.element_type])

    def invert(self, inverter: InverseBuilder) -> None:
        inverter.insert(
            PushOp(inverter.lookup(self.stack), inverter.lookup(self.result)),
            like=self,
        )

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        shadow = adjointer.gradient(self.stack)
        gradient = adjointer.gradient(self.result)
        yield  # the inverse step
        if shadow is not None and gradient is not None:
            adjointer.insert(PushOp(shadow, gradient), like=self)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, PushOp) and super().is_inverse_of(other)


@irdl_op_definition
class CopyPushOp(_StackOp):
    """Push a copy of a value, which stays live.  Inverse: ``anc.copy_pop``."""

    name = "anc.copy_push"
    stack = operand_def(_StackT)
    value = operand_def(_ElementT)

    traits = traits_def(InverseCancellationTrait(), ChecksWhenInverted())

    assembly_format = "$stack `,` $value attr-dict `:` type($stack)"

    def __init__(self, stack: SSAValue, value: SSAValue):
        super().__init__(operands=[stack, value])

    def invert(self, inverter: InverseBuilder) -> None:
        inverter.insert(
            CopyPopOp(inverter.lookup(self.stack), inverter.lookup(self.value)),
            like=self,
        )

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """The copy's gradient flows into the value it was copied from."""
        shadow = adjointer.gradient(self.stack)
        yield  # the inverse step
        if shadow is not None:
            copy = adjointer.insert(PopOp(shadow), like=self).result
            adjointer.accumulate([(self.value, copy)])
            adjointer.discard_gradient(copy)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, CopyPopOp) and super().is_inverse_of(other) and other.value == self.value


@irdl_op_definition
class CopyPopOp(_StackOp, RuntimeCheckedOp):
    """Pop a value that must equal a live value (undoes ``anc.copy_push``).
    Inverse: ``anc.copy_push``."""

    name = "anc.copy_pop"
    stack = operand_def(_StackT)
    value = operand_def(_ElementT)

    assembly_format = "$stack `,` $value attr-dict `:` type($stack)"

    def __init__(self, stack: SSAValue, value: SSAValue):
        super().__init__(operands=[stack, value])

    @classmethod
    def runtime_check(cls) -> str:
        return "the popped value equals the live value (floats: within tolerance)"

    def invert(self, inverter: InverseBuilder) -> None:
        push = CopyPushOp(inverter.lookup(self.stack), inverter.lookup(self.value))
        inverter.insert(push, like=self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """The discarded copy was uncomputed from a live value; like a freed
        ancilla, nothing after it depends on it: its gradient starts at zero."""
        shadow = adjointer.gradient(self.stack)
        yield  # the inverse step
        if shadow is not None:
            zero = adjointer.zero_gradient_state(adjointer.gradient_type(self.value.type))
            adjointer.insert(PushOp(shadow, zero), like=self)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, CopyPushOp) and super().is_inverse_of(other) and other.value == self.value


# ---------------------------------------------------------------------------
# Snapshots: the checkpointed gradient's deliberate forgetting
# ---------------------------------------------------------------------------

GRADIENT_ONLY = (
    "appears only in checkpointed gradient programs (ad-checkpoint), which are "
    "differentiated in forward mode only (Hessians)"
)


def holds_length(element: Attribute) -> bool:
    """Whether a record may hold a stack of ``element``s: its length is
    stored exactly as an element after its elements (index, i64, f64)."""
    return isinstance(element, IndexType | Float64Type) or element == IntegerType(64)


class _SnapshotOp(IRDLOperation, StateConsumer, ForwardDifferentiableOp):
    """A snapshot record on a stack ``store``: every scalar of ``values``,
    every element of each memref of ``values``, in order, and the live part
    of a stack last among ``values`` (its elements bottom first, then its
    length, so the record's size is read from its top), all of the store's
    element type.  Records are last in, first out, like the schedules that
    use them (store-all, bisection, binomial)."""

    store = operand_def(StackType)
    values = var_operand_def()

    traits = traits_def(NotInvertible(GRADIENT_ONLY), NotDifferentiable(GRADIENT_ONLY))

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def scalars(self) -> list[SSAValue]:
        return [v for v in self.values if not isinstance(v.type, MemRefType | StackType)]

    def stack(self) -> SSAValue | None:
        """The stack whose live part the record holds, if any (last)."""
        last = self.values[-1] if self.values else None
        return last if last is not None and isinstance(last.type, StackType) else None

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The tangent of a checkpointed gradient (a Hessian-vector product)
        keeps the tangents of the state with the state: the same record of
        them on the store's shadow, so a restore brings back the state and
        its tangents together (stores of integers have no shadow)."""
        tangenter.mirror(self)

    def verify_(self) -> None:
        assert isinstance(self.store.type, StackType)
        element = self.store.type.element_type
        for number, value in enumerate(self.values):
            type = value.type.element_type if isinstance(value.type, MemRefType | StackType) else value.type
            if type != element:
                raise VerifyException(f"'{self.name}' stores {value.type} on a stack of {element}")
            if isinstance(value.type, StackType):
                if number != len(self.values) - 1:
                    raise VerifyException(f"'{self.name}' holds a stack only as its last value")
                if not holds_length(element):
                    raise VerifyException(
                        f"'{self.name}' cannot hold a stack of {element}: its length is stored as an "
                        "element, so the element type is index, i64 or f64"
                    )


@irdl_op_definition
class SnapshotOp(_SnapshotOp):
    """Push a snapshot of ``values`` (copies: nothing is consumed)."""

    name = "anc.snapshot"
    assembly_format = "$store `,` $values attr-dict `:` type($store) `,` type($values)"

    def __init__(self, store: SSAValue, values: Sequence[SSAValue]):
        super().__init__(operands=[store, values])


@irdl_op_definition
class RestoreOp(_SnapshotOp):
    """Make the top snapshot current again, keeping it stored: memrefs (and
    a stack) are overwritten with their stored elements, scalar operands are consumed
    and the stored scalars returned (as plain values: ``anc.alloc`` makes
    them state again).

    This is where a checkpointed gradient forgets: the working state it
    overwrites is not kept, because the schedule never needs it again (it
    is recomputed from this snapshot when it is)."""

    name = "anc.restore"
    res = var_result_def()
    assembly_format = "$store `,` $values attr-dict `:` type($store) `,` type($values) `->` `(` type($res) `)`"

    def __init__(self, store: SSAValue, values: Sequence[SSAValue]):
        scalars = [v.type for v in values if not isinstance(v.type, MemRefType | StackType)]
        super().__init__(operands=[store, values], result_types=[scalars])

    def consumed_operands(self) -> Sequence[SSAValue]:
        return self.scalars()


@irdl_op_definition
class DropOp(_SnapshotOp):
    """Release the top snapshot, a record shaped like ``values`` (which are
    only read, for their number and sizes)."""

    name = "anc.drop"
    assembly_format = "$store `,` $values attr-dict `:` type($store) `,` type($values)"

    def __init__(self, store: SSAValue, values: Sequence[SSAValue]):
        super().__init__(operands=[store, values])


@irdl_op_definition
class ZeroPadOp(IRDLOperation, StateConsumer, ForwardDifferentiableOp):
    """Push zeros on ``shadow`` until it holds as many values as ``stack``.

    The gradient of a value pushed and never popped again is zero: a
    checkpointed gradient runs a taped step and then its adjoint, which
    pops the step's tape and, with it, one gradient per value from the
    shadow; this op provides them."""

    name = "anc.zero_pad"
    shadow = operand_def(StackType)
    stack = operand_def(StackType)

    traits = traits_def(NotInvertible(GRADIENT_ONLY), NotDifferentiable(GRADIENT_ONLY))
    assembly_format = "$shadow `,` $stack attr-dict `:` type($shadow) `,` type($stack)"

    def __init__(self, shadow: SSAValue, stack: SSAValue):
        super().__init__(operands=[shadow, stack])

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The padding zeros have zero tangents: pad the shadow's tangents
        to the tape's tangents, which mirror the tape value for value."""
        tangenter.mirror(self)


Anc = Dialect(
    "anc",
    [
        AllocOp,
        FreeOp,
        ArrayAllocOp,
        ArrayFreeOp,
        StackAllocOp,
        StackFreeOp,
        PushOp,
        PopOp,
        CopyPushOp,
        CopyPopOp,
        SnapshotOp,
        RestoreOp,
        DropOp,
        ZeroPadOp,
    ],
    [StackType],
)
