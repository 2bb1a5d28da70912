"""The ``rev`` dialect: reversible statements.

Scalars have value semantics: an instruction consumes the current version of its
target and produces the next one (``%y1 = rev.add %y, %t``).  Arrays are memrefs;
an element is borrowed with ``rev.take``, updated by ordinary instructions and
given back with ``rev.put`` (NiLang's data views ``x[i]``).  Control flow follows
NiLang's pre/post-condition semantics (seed 000, section 3.3 and appendix G).

Every op states here what it consumes and how it is inverted; passes only talk
to the interfaces in ``revmlir.interfaces``.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar, Self

from xdsl.dialects.builtin import (
    AnyFloat,
    AnyFloatConstr,
    ComplexType,
    FlatSymbolRefAttr,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    UnitAttr,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from revmlir.dialects.numbers import (  # noqa: F401 - the dialect's number systems, re-exported
    NUMBER_OPS,
    NUMBER_TYPES,
    REAL,
    FixedAddOp,
    FixedMulOp,
    FixedSubOp,
    FixedType,
    FromFixedOp,
    FromNumberOp,
    FromTropicalOp,
    ToFixedOp,
    ToNumberOp,
    ToTropicalOp,
    TropicalType,
)
from revmlir.dialects.primitives import ApplyOp, ExternOp, InvokeOp
from revmlir.errors import unsupported
from revmlir.interfaces import (
    AdjointBuilder,
    ChecksWhenInverted,
    DifferentiableOp,
    ForwardDifferentiableOp,
    InverseBuilder,
    InvertibleOp,
    NotDifferentiable,
    NotInvertible,
    RuntimeCheckedOp,
    StateConsumer,
    StateType,
    TangentBuilder,
    is_reference_type,
    is_state_type,
)
from revmlir.ir_utils import as_value, constant_index, init_as_created
from revmlir.naming import inverse_name

if TYPE_CHECKING:
    from xdsl.pattern_rewriter import RewritePattern


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


@irdl_attr_definition
class LogType(ParametrizedAttribute, TypeAttribute, StateType):
    """A positive real stored as its logarithm (NiLang's ``ULogarithmic``).

    ``*=`` and ``/=`` are exact inverses of each other on it, which makes
    products reversible without a stack (seed 000, appendix B.3).
    """

    name = "rev.log"
    element_type: AnyFloat = param_def(AnyFloatConstr)


# ---------------------------------------------------------------------------
# Canonicalization hook shared by every invertible op
# ---------------------------------------------------------------------------


class InverseCancellationTrait(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        # lazy: xDSL's hook; the patterns are built from the dialect's ops
        from revmlir.canonicalization import CancelInversePair

        return (CancelInversePair(),)


class InvFoldingTrait(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        # lazy: xDSL's hook; the patterns are built from the dialect's ops
        from revmlir.canonicalization import CancelInversePair, FoldInvOfInv

        return (FoldInvOfInv(), CancelInversePair())


# ---------------------------------------------------------------------------
# Instructions
# ---------------------------------------------------------------------------


class InstructionOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """A reversible instruction on scalars.

    The first ``TARGETS`` operands are consumed and reappear, updated, as the
    results in the same order; the remaining operands are only read.  The
    inverse is another instruction (``inverse_class``) applied to the results
    with the same read operands.
    """

    TARGETS: ClassVar[int] = 1

    traits = traits_def(InverseCancellationTrait())

    @classmethod
    @abc.abstractmethod
    def inverse_class(cls) -> type[InstructionOp]:
        """The instruction that undoes this one."""

    def targets(self) -> Sequence[SSAValue]:
        return self.operands[: self.TARGETS]

    def reads(self) -> Sequence[SSAValue]:
        return self.operands[self.TARGETS :]

    def consumed_operands(self) -> Sequence[SSAValue]:
        return self.targets()

    def invert(self, inverter: InverseBuilder) -> None:
        operands = [inverter.lookup(r) for r in self.results]
        operands += [inverter.lookup(v) for v in self.reads()]
        inverse = inverter.insert(
            self.inverse_class().create(
                operands=operands,
                result_types=[r.type for r in self.results],
                properties=dict(self.properties),
                attributes=dict(self.attributes),
            ),
            like=self,
        )
        for target, new in zip(self.targets(), inverse.results, strict=True):
            inverter.bind(target, new)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, self.inverse_class()) and list(other.operands[other.TARGETS :]) == list(self.reads())

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """Instructions on integers and booleans carry no gradient: the
        adjoint is the inverse."""
        if any(adjointer.gradient_type(v.type) for v in (*self.operands, *self.results)):
            raise unsupported(self, f"'{self.name}' has no float adjoint rule")
        yield  # the inverse step

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The same instruction on the tangents (``rev.neg``, ``rev.swap``);
        instructions on integers and booleans are only copied."""
        tangenter.mirror(self)


_ArithT = base(IntegerType) | base(IndexType) | AnyFloatConstr | base(ComplexType) | base(FixedType)
_IntT = base(IntegerType) | base(IndexType)
_NumT = base(IntegerType) | base(IndexType) | AnyFloatConstr | base(ComplexType)


class _UpdateOp(InstructionOp):
    """``target ⊙= value``: one target, one read value of the same type."""

    T: ClassVar = VarConstraint("T", _ArithT)
    target = operand_def(T)
    value = operand_def(T)
    result = result_def(T)

    assembly_format = "$target `,` $value attr-dict `:` type($target)"

    def __init__(self, target: SSAValue | Operation, value: SSAValue | Operation):
        target = as_value(target)
        init_as_created(self, [target, value], [target.type])

    GRADIENT_SIGN: ClassVar[int] = 1
    """``∂(y ⊙ v)/∂v`` for float targets (log numbers: in log space)."""

    ACCUMULATES: ClassVar[bool] = False
    """Whether ``y ⊙ v`` is ``y + GRADIENT_SIGN·v``: such updates of one
    element commute, so iterations of a parallel loop may apply them to a
    shared element in any order (atomically)."""

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """``y' = y ± v``: uncompute ``y``; its gradient passes through
        unchanged and ``±ḡy'`` flows into the expression ``v``."""
        g = adjointer.gradient_value(self.result)
        if g is not None:
            seed = g if self.GRADIENT_SIGN > 0 else adjointer.neg(g)
            adjointer.accumulate([(self.value, seed)])
        yield  # the inverse step
        if g is not None:
            adjointer.bind_gradient(self.target, g)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """``y' = y ± v``: ``ẏ' = ẏ ± v̇`` (for log numbers ``rev.mul``/
        ``rev.div`` add/subtract the tangents of the logarithms)."""
        dot = tangenter.tangent(self.target)
        increment = tangenter.tangent(self.value)
        tangenter.copy(self)
        if dot is None:
            return
        if increment is not None:
            update = AddOp if self.GRADIENT_SIGN > 0 else SubOp
            dot = tangenter.emit(update(dot, increment))
        tangenter.bind_tangent(self.result, dot)


@irdl_op_definition
class AddOp(_UpdateOp):
    """``y += v``.  Inverse: ``rev.sub``."""

    name = "rev.add"
    ACCUMULATES: ClassVar[bool] = True

    @classmethod
    def inverse_class(cls):
        return SubOp


@irdl_op_definition
class SubOp(_UpdateOp):
    """``y -= v``.  Inverse: ``rev.add``."""

    name = "rev.sub"
    GRADIENT_SIGN: ClassVar[int] = -1
    ACCUMULATES: ClassVar[bool] = True

    @classmethod
    def inverse_class(cls):
        return AddOp


@irdl_op_definition
class XorOp(_UpdateOp):
    """``y ^= v`` on integers and booleans.  Its own inverse."""

    name = "rev.xor"
    T: ClassVar = VarConstraint("T", _IntT)
    target = operand_def(T)
    value = operand_def(T)
    result = result_def(T)

    @classmethod
    def inverse_class(cls):
        return XorOp


class _LogUpdateOp(_UpdateOp):
    """On log numbers and tropical numbers, whose products add what they
    store."""

    T: ClassVar = VarConstraint("T", base(LogType) | base(TropicalType))
    target = operand_def(T)
    value = operand_def(T)
    result = result_def(T)


@irdl_op_definition
class MulOp(_LogUpdateOp):
    """``y *= v`` on log numbers (adds the logarithms) and tropical numbers
    (adds the reals).  Inverse: ``rev.div``."""

    name = "rev.mul"

    @classmethod
    def inverse_class(cls):
        return DivOp


@irdl_op_definition
class DivOp(_LogUpdateOp):
    """``y /= v`` on log and tropical numbers.  Inverse: ``rev.mul``."""

    name = "rev.div"
    GRADIENT_SIGN: ClassVar[int] = -1

    @classmethod
    def inverse_class(cls):
        return MulOp


class _UnaryOp(InstructionOp):
    T: ClassVar = VarConstraint("T", _NumT)
    target = operand_def(T)
    result = result_def(T)

    assembly_format = "$target attr-dict `:` type($target)"

    def __init__(self, target: SSAValue):
        super().__init__(operands=[target], result_types=[target.type])


@irdl_op_definition
class NegOp(_UnaryOp):
    """``y = -y``.  Its own inverse."""

    name = "rev.neg"

    @classmethod
    def inverse_class(cls):
        return NegOp

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """``y' = -y``: ``ḡy = -ḡy'``."""
        g = adjointer.gradient_value(self.result)
        yield  # the inverse step
        if g is None:
            return
        if adjointer.is_zero(g):
            adjointer.bind_gradient(self.target, g)
            return
        negated = adjointer.emit(NegOp(g))
        adjointer.bind_gradient(self.target, negated)


class _IntUnaryOp(_UnaryOp):
    T: ClassVar = VarConstraint("T", _IntT)
    target = operand_def(T)
    result = result_def(T)


@irdl_op_definition
class IncOp(_IntUnaryOp):
    """``y += 1`` on integers.  Inverse: ``rev.dec``."""

    name = "rev.inc"

    @classmethod
    def inverse_class(cls):
        return DecOp


@irdl_op_definition
class DecOp(_IntUnaryOp):
    """``y -= 1`` on integers.  Inverse: ``rev.inc``."""

    name = "rev.dec"

    @classmethod
    def inverse_class(cls):
        return IncOp


@irdl_op_definition
class SwapOp(InstructionOp):
    """Exchange two values.  Its own inverse."""

    name = "rev.swap"
    TARGETS: ClassVar[int] = 2
    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    new_lhs = result_def(T)
    new_rhs = result_def(T)

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type, rhs.type])

    @classmethod
    def inverse_class(cls):
        return SwapOp

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """The gradients swap with the values (a renaming, no code)."""
        g_lhs = adjointer.gradient_value(self.new_lhs)
        g_rhs = adjointer.gradient_value(self.new_rhs)
        yield  # the inverse step
        if g_lhs is not None and g_rhs is not None:
            adjointer.bind_gradient(self.lhs, g_rhs)
            adjointer.bind_gradient(self.rhs, g_lhs)


class _RotationOp(InstructionOp):
    TARGETS: ClassVar[int] = 2
    T: ClassVar = VarConstraint("T", AnyFloatConstr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    angle = operand_def(T)
    new_lhs = result_def(T)
    new_rhs = result_def(T)

    assembly_format = "$lhs `,` $rhs `,` $angle attr-dict `:` type($lhs)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, angle: SSAValue):
        super().__init__(operands=[lhs, rhs, angle], result_types=[lhs.type] * 2)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """Rotating by θ: the gradients rotate back (the inverse rotation
        applied to ``(ḡa', ḡb')``) and θ receives ``ḡb'·a' − ḡa'·b'``
        (negated for ``rev.irot``)."""
        g_a = adjointer.gradient(self.new_lhs)
        g_b = adjointer.gradient(self.new_rhs)
        assert g_a is not None and g_b is not None
        a = adjointer.lookup(self.new_lhs)
        b = adjointer.lookup(self.new_rhs)
        if adjointer.wants(self.angle):
            first, second = adjointer.mul(g_b, a), adjointer.mul(g_a, b)
            if isinstance(self, IRotOp):
                first, second = second, first
            adjointer.accumulate([(self.angle, adjointer.sub(first, second))])
        yield  # the inverse step
        back = self.inverse_class()(g_a, g_b, adjointer.lookup(self.angle))
        adjointer.insert(back, like=self)
        adjointer.bind_gradient(self.lhs, back.results[0])
        adjointer.bind_gradient(self.rhs, back.results[1])

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The tangents rotate with the values, and θ̇ adds
        ``θ̇·∂(a', b')/∂θ = θ̇·(−b', a')`` (``θ̇·(b', −a')`` for ``rev.irot``)."""
        d_a, d_b = tangenter.tangent(self.lhs), tangenter.tangent(self.rhs)
        d_angle = tangenter.tangent(self.angle)
        tangenter.copy(self)
        assert d_a is not None and d_b is not None
        rotated = type(self)(d_a, d_b, tangenter.lookup(self.angle))
        d_a, d_b = tangenter.insert(rotated, like=self).results
        if d_angle is not None:
            a, b = tangenter.lookup(self.new_lhs), tangenter.lookup(self.new_rhs)
            by_a, by_b = tangenter.mul(d_angle, b), tangenter.mul(d_angle, a)
            first, second = (SubOp, AddOp) if isinstance(self, RotOp) else (AddOp, SubOp)
            d_a = tangenter.emit(first(d_a, by_a))
            d_b = tangenter.emit(second(d_b, by_b))
        tangenter.bind_tangent(self.new_lhs, d_a)
        tangenter.bind_tangent(self.new_rhs, d_b)


@irdl_op_definition
class RotOp(_RotationOp):
    """Givens rotation ``(a, b) ← (a cos θ − b sin θ, a sin θ + b cos θ)``.
    Inverse: ``rev.irot``."""

    name = "rev.rot"

    @classmethod
    def inverse_class(cls):
        return IRotOp


@irdl_op_definition
class IRotOp(_RotationOp):
    """Rotation by ``−θ``.  Inverse: ``rev.rot``."""

    name = "rev.irot"

    @classmethod
    def inverse_class(cls):
        return RotOp


# ---------------------------------------------------------------------------
# Data views: memref elements and complex parts
# ---------------------------------------------------------------------------


@irdl_op_definition
class TakeOp(IRDLOperation, InvertibleOp, RuntimeCheckedOp, DifferentiableOp, ForwardDifferentiableOp):
    """Borrow ``m[i...]`` as a state value until the matching ``rev.put``.

    While borrowed, the element must not be read (``memref.load``) or taken
    again: that would be a shared read/write.  Inverse: ``rev.put``.
    """

    name = "rev.take"
    T: ClassVar = VarConstraint("T", AnyAttr())
    memref = operand_def(MemRefType.constr(T))
    indices = var_operand_def(IndexType())
    result = result_def(T)

    traits = traits_def(InverseCancellationTrait())
    assembly_format = "$memref `[` $indices `]` attr-dict `:` type($memref)"

    def __init__(self, memref: SSAValue | Operation, indices: SSAValue | Operation | Sequence[SSAValue | Operation]):
        memref = as_value(memref)
        assert isinstance(memref.type, MemRefType)
        init_as_created(self, [memref, indices], [memref.type.element_type])

    @classmethod
    def runtime_check(cls) -> str:
        return "the element is not already borrowed (dynamic indices only)"

    def needs_runtime_check(self) -> bool:
        return any(constant_index(i) is None for i in self.indices)

    def verify_(self) -> None:
        _verify_rank(self, self.memref.type, self.indices)

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def accumulation(self) -> tuple[list[_UpdateOp], PutOp] | None:
        """The updates and the put when this borrow only accumulates: the
        element goes through ``rev.add``/``rev.sub`` as their target (nothing
        else uses it) and is put back where it came from, in this block.
        Such a borrow never reads the element, so parallel iterations may
        share it (``y[j] += v`` lowers to an atomic add)."""
        updates: list[_UpdateOp] = []
        current: SSAValue = self.result
        while True:
            uses = list(current.uses)
            if len(uses) != 1 or uses[0].index != 0:
                return None
            user = uses[0].operation
            if user.parent_block() is not self.parent_block():
                return None
            if isinstance(user, PutOp):
                same = user.memref == self.memref and tuple(user.indices) == tuple(self.indices)
                return (updates, user) if same and updates else None
            if not isinstance(user, _UpdateOp) or not user.ACCUMULATES:
                return None
            updates.append(user)
            current = user.result

    def returned_unchanged(self) -> bool:
        """Whether the element is put back unchanged where it came from, in
        this block: it is a state value, consumed once, and that put
        consumes it, so the borrow only reads the element (the adjoint of a
        shared accumulation ``y[j] += v`` reads ``ḡy[j]`` so).  Parallel
        iterations may share such a borrow as they share a load."""
        return any(
            isinstance(use.operation, PutOp)
            and use.index == 0
            and use.operation.parent_block() is self.parent_block()
            and use.operation.memref == self.memref
            and tuple(use.operation.indices) == tuple(self.indices)
            for use in self.result.uses
        )

    def accumulated_memrefs(self) -> Sequence[SSAValue]:
        return (self.memref,) if self.accumulation() is not None else ()

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The element's tangent is borrowed from the shadow tangent array
        along with the element."""
        tangenter.mirror(self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """The element goes back, and its gradient goes back into the shadow
        array (which the matching ``rev.put``'s adjoint borrowed it from)."""
        shadow = adjointer.gradient(self.memref)
        gradient = adjointer.gradient(self.result)
        yield  # the inverse step
        if shadow is not None and gradient is not None:
            indices = [adjointer.lookup(i) for i in self.indices]
            adjointer.put_gradient(gradient, shadow, indices, like=self)

    def invert(self, inverter: InverseBuilder) -> None:
        put = PutOp(
            inverter.lookup(self.result),
            inverter.lookup(self.memref),
            [inverter.lookup(i) for i in self.indices],
        )
        put.attributes.update(self.attributes)
        inverter.insert(put, like=self)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, PutOp) and other.memref == self.memref and list(other.indices) == list(self.indices)


@irdl_op_definition
class PutOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """Give a borrowed element back: ``m[i...] ← v``, consuming ``v``.

    Must follow a ``rev.take`` of the same element (same memref and index
    values) in the same block.  Inverse: ``rev.take``.
    """

    name = "rev.put"
    T: ClassVar = VarConstraint("T", AnyAttr())
    value = operand_def(T)
    memref = operand_def(MemRefType.constr(T))
    indices = var_operand_def(IndexType())

    traits = traits_def(InverseCancellationTrait(), ChecksWhenInverted())
    assembly_format = "$value `,` $memref `[` $indices `]` attr-dict `:` type($memref)"

    def __init__(
        self,
        value: SSAValue | Operation,
        memref: SSAValue | Operation,
        indices: SSAValue | Operation | Sequence[SSAValue | Operation],
    ):
        init_as_created(self, [value, memref, indices])

    def verify_(self) -> None:
        _verify_rank(self, self.memref.type, self.indices)

    def consumed_operands(self) -> Sequence[SSAValue]:
        return (self.value,)

    def written_memrefs(self) -> Sequence[SSAValue]:
        return (self.memref,)

    def accumulated_memrefs(self) -> Sequence[SSAValue]:
        """The array when this put ends a borrow that only accumulates."""
        current = self.value
        while isinstance(current.owner, _UpdateOp) and current.owner.ACCUMULATES:
            current = current.owner.target
        take = current.owner
        found = take.accumulation() if isinstance(take, TakeOp) else None
        return (self.memref,) if found is not None and found[1] is self else ()

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The element's tangent goes back into the shadow tangent array."""
        tangenter.mirror(self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """The element is borrowed again, and so is its gradient, from the
        shadow array: GVar arrays with values and gradients kept apart."""
        shadow = adjointer.gradient(self.memref)
        yield  # the inverse step
        if shadow is not None:
            indices = [adjointer.lookup(i) for i in self.indices]
            adjointer.bind_gradient(self.value, adjointer.take_gradient(shadow, indices, like=self))

    def invert(self, inverter: InverseBuilder) -> None:
        take = TakeOp(inverter.lookup(self.memref), [inverter.lookup(i) for i in self.indices])
        take.attributes.update(self.attributes)
        inverter.insert(take, like=self)
        inverter.bind(self.value, take.result)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, TakeOp) and other.memref == self.memref and list(other.indices) == list(self.indices)


def _verify_rank(op: Operation, memref_type: Attribute, indices: Sequence[SSAValue]):
    assert isinstance(memref_type, MemRefType)
    if memref_type.get_num_dims() != len(indices):
        raise VerifyException(
            f"'{op.name}' expects {memref_type.get_num_dims()} indices for {memref_type}, got {len(indices)}"
        )


@irdl_op_definition
class UnpackOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """Split a complex value into its real and imaginary parts (NiLang's
    ``y.re`` / ``y.im`` views).  Inverse: ``rev.pack``."""

    name = "rev.unpack"
    T: ClassVar = VarConstraint("T", AnyFloatConstr)
    value = operand_def(ComplexType.constr(T))
    re = result_def(T)
    im = result_def(T)

    traits = traits_def(InverseCancellationTrait())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        assert isinstance(value.type, ComplexType)
        element = value.type.element_type
        super().__init__(operands=[value], result_types=[element, element])

    def consumed_operands(self) -> Sequence[SSAValue]:
        return (self.value,)

    def invert(self, inverter: InverseBuilder) -> None:
        pack = inverter.insert(PackOp(inverter.lookup(self.re), inverter.lookup(self.im)), like=self)
        inverter.bind(self.value, pack.result)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The parts' tangents are the parts of the tangent."""
        tangenter.mirror(self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """The gradient of ``z = x + iy`` is ``ḡx + i ḡy``: the parts'
        gradients are packed the same way."""
        g_re, g_im = adjointer.gradient(self.re), adjointer.gradient(self.im)
        yield  # the inverse step
        assert g_re is not None and g_im is not None
        pack = adjointer.insert(PackOp(g_re, g_im), like=self)
        adjointer.bind_gradient(self.value, pack.result)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, PackOp)


@irdl_op_definition
class PackOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """Join real and imaginary parts into a complex value.  Inverse: ``rev.unpack``."""

    name = "rev.pack"
    T: ClassVar = VarConstraint("T", AnyFloatConstr)
    re = operand_def(T)
    im = operand_def(T)
    result = result_def(ComplexType.constr(T))

    traits = traits_def(InverseCancellationTrait())
    assembly_format = "$re `,` $im attr-dict `:` type($result)"

    def __init__(self, re: SSAValue, im: SSAValue):
        super().__init__(operands=[re, im], result_types=[ComplexType(re.type)])

    def consumed_operands(self) -> Sequence[SSAValue]:
        return (self.re, self.im)

    def invert(self, inverter: InverseBuilder) -> None:
        unpack = inverter.insert(UnpackOp(inverter.lookup(self.result)), like=self)
        inverter.bind(self.re, unpack.re)
        inverter.bind(self.im, unpack.im)

    def tangent(self, tangenter: TangentBuilder) -> None:
        tangenter.mirror(self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        g = adjointer.gradient(self.result)
        yield  # the inverse step
        assert g is not None
        unpack = adjointer.insert(UnpackOp(g), like=self)
        adjointer.bind_gradient(self.re, unpack.re)
        adjointer.bind_gradient(self.im, unpack.im)

    def is_inverse_of(self, other: Operation) -> bool:
        return isinstance(other, UnpackOp)


# ---------------------------------------------------------------------------
# Log-number conversions (pure expressions)
# ---------------------------------------------------------------------------


@irdl_op_definition
class ToLogOp(ToNumberOp):
    """The log number equal to a positive real (stores ``log(x)``)."""

    name = "rev.to_log"
    NUMBER: ClassVar = LogType
    result = result_def(ParamAttrConstraint(LogType, (REAL,)))


@irdl_op_definition
class FromLogOp(FromNumberOp):
    """The real value of a log number (``exp`` of the stored logarithm)."""

    name = "rev.from_log"
    value = operand_def(ParamAttrConstraint(LogType, (REAL,)))


# ---------------------------------------------------------------------------
# Terminators
# ---------------------------------------------------------------------------


class _ConsumingTerminator(IRDLOperation, StateConsumer):
    values = var_operand_def()

    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])

    def consumed_operands(self) -> Sequence[SSAValue]:
        return self.values


@irdl_op_definition
class ReturnOp(_ConsumingTerminator):
    """Ends a ``rev.func``, consuming the final versions of its scalar arguments."""

    name = "rev.return"
    traits = traits_def(
        IsTerminator(),
        NotInvertible("inverted together with its rev.func"),
        NotDifferentiable("differentiated together with its rev.func"),
    )

    def verify_(self) -> None:
        func = self.parent_op()
        if not isinstance(func, FuncOp):
            raise VerifyException("'rev.return' must be inside a 'rev.func'")
        # xDSL verifies an op's regions before its properties: a 'rev.func'
        # whose properties are missing or of the wrong kind reports that
        # itself, after its body, so the return compares against nothing yet.
        function_type, name = func.properties.get("function_type"), func.properties.get("sym_name")
        if not isinstance(function_type, FunctionType) or not isinstance(name, StringAttr):
            return
        expected = function_type.outputs.data
        if tuple(self.values.types) != tuple(expected):
            raise VerifyException(
                f"'rev.return' must return the final versions of every scalar "
                f"argument of @{name.data}: expected "
                f"({', '.join(map(str, expected))}), got "
                f"({', '.join(map(str, self.values.types))})"
            )


@irdl_op_definition
class YieldOp(_ConsumingTerminator):
    """Ends a state-carrying region of a ``rev`` control-flow op."""

    name = "rev.yield"
    traits = traits_def(
        IsTerminator(),
        NotInvertible("inverted together with the region's owner"),
        NotDifferentiable("differentiated together with the region's owner"),
    )


@irdl_op_definition
class CondOp(IRDLOperation):
    """Ends a condition region with the condition's value."""

    name = "rev.cond"
    condition = operand_def(IntegerType(1))
    traits = traits_def(
        IsTerminator(),
        NotInvertible("a condition is re-evaluated, never inverted"),
        NotDifferentiable("a condition is piecewise constant: no gradient flows"),
    )
    assembly_format = "$condition attr-dict"

    def __init__(self, condition: SSAValue):
        super().__init__(operands=[condition])


# ---------------------------------------------------------------------------
# Helpers for region ops
# ---------------------------------------------------------------------------


def _print_state(printer: Printer, state: Sequence[SSAValue]) -> None:
    printer.print_string(" (")
    printer.print_list(state, printer.print_operand)
    printer.print_string(")")
    if state:
        printer.print_string(" : ")
        printer.print_list([v.type for v in state], printer.print_attribute)


def _parse_state(parser: Parser) -> list[SSAValue]:
    pos = parser.pos
    unresolved: list[UnresolvedOperand] = parser.parse_comma_separated_list(
        Parser.Delimiter.PAREN, parser.parse_unresolved_operand
    )
    types: list[Attribute] = []
    if unresolved:
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
    return parser.resolve_operands(unresolved, types, pos)


def _print_attributes(printer: Printer, op: Operation) -> None:
    if op.attributes:
        printer.print_op_attributes(op.attributes, print_keyword=True)


def _parse_attributes(parser: Parser) -> dict[str, Attribute]:
    attrs = parser.parse_optional_attr_dict_with_keyword()
    return dict(attrs.data) if attrs is not None else {}


def _verify_carrying_region(
    op: Operation,
    region: Region,
    kind: str,
    args: Sequence[Attribute],
    yields: Sequence[Attribute],
) -> None:
    block = region.block
    if tuple(a.type for a in block.args) != tuple(args):
        raise VerifyException(
            f"'{op.name}' {kind} region must take ({', '.join(map(str, args))}), "
            f"got ({', '.join(str(a.type) for a in block.args)})"
        )
    term = block.last_op
    if not isinstance(term, YieldOp):
        raise VerifyException(f"'{op.name}' {kind} region must end with 'rev.yield'")
    if tuple(term.values.types) != tuple(yields):
        raise VerifyException(
            f"'{op.name}' {kind} region must yield ({', '.join(map(str, yields))}), "
            f"got ({', '.join(map(str, term.values.types))})"
        )


def _verify_condition_region(op: Operation, region: Region, kind: str, args: Sequence[Attribute]) -> None:
    block = region.block
    if tuple(a.type for a in block.args) != tuple(args):
        raise VerifyException(
            f"'{op.name}' {kind} condition must take ({', '.join(map(str, args))}), "
            f"got ({', '.join(str(a.type) for a in block.args)})"
        )
    if not isinstance(block.last_op, CondOp):
        raise VerifyException(f"'{op.name}' {kind} condition must end with 'rev.cond'")


class _StateRegionOp(IRDLOperation, InvertibleOp):
    """Region ops thread the state they modify through operands, block
    arguments, ``rev.yield`` and results; everything else they only read."""

    state = var_operand_def()
    res = var_result_def()

    def consumed_operands(self) -> Sequence[SSAValue]:
        return self.state

    def state_types(self) -> list[Attribute]:
        return [v.type for v in self.state]

    def verify_results(self) -> None:
        if tuple(self.res.types) != tuple(self.state_types()):
            raise VerifyException(f"'{self.name}' results must have the types of its state operands")

    REGION_KEYWORDS: ClassVar[tuple[str, ...]] = ()
    """The keyword printed before each region, in constructor order."""

    OPTIONAL_REGION: ClassVar[str | None] = None
    """A trailing region that may be absent (printed only when present)."""

    @abc.abstractmethod
    def inverse_regions(self, inverter: InverseBuilder) -> Sequence[Region | None]:
        """The regions of the inverse op, in constructor order."""

    def invert(self, inverter: InverseBuilder) -> None:
        op = type(self)([inverter.lookup(r) for r in self.res], *self.inverse_regions(inverter))
        op.attributes.update(self.attributes)
        inverter.insert(op, like=self)
        for old, new in zip(self.state, op.res, strict=True):
            inverter.bind(old, new)

    def print(self, printer: Printer) -> None:
        _print_state(printer, self.state)
        _print_attributes(printer, self)
        for keyword, region in zip(self.REGION_KEYWORDS, self.regions, strict=True):
            if region.blocks:
                printer.print_string(f" {keyword} " if keyword else " ")
                printer.print_region(region)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        state = _parse_state(parser)
        attrs = _parse_attributes(parser)
        regions: list[Region | None] = []
        for keyword in cls.REGION_KEYWORDS:
            if keyword == cls.OPTIONAL_REGION:
                present = parser.parse_optional_keyword(keyword) is not None
                regions.append(parser.parse_region() if present else None)
                continue
            if keyword:
                parser.parse_keyword(keyword)
            regions.append(parser.parse_region())
        op = cls(state, *regions)
        op.attributes.update(attrs)
        return op


# ---------------------------------------------------------------------------
# Structured control flow
# ---------------------------------------------------------------------------


@irdl_op_definition
class IfOp(_StateRegionOp, RuntimeCheckedOp, DifferentiableOp, ForwardDifferentiableOp):
    """NiLang's ``if (pre, post)``.

    ``pre`` decides the branch going forward; ``post``, evaluated on the
    results, must agree (it decides the branch going backward).  Without a
    ``post`` region the precondition is re-evaluated on the results.
    Inverse: swap ``pre`` and ``post`` and invert both branches.
    """

    name = "rev.if"
    TANGENT_OF_ALL_LANES: ClassVar[bool] = True
    ADJOINT_OF_ALL_LANES: ClassVar[bool] = True
    REGION_KEYWORDS: ClassVar[tuple[str, ...]] = ("pre", "then", "else", "post")
    OPTIONAL_REGION: ClassVar[str | None] = "post"
    pre = region_def("single_block")
    then_region = region_def("single_block")
    else_region = region_def("single_block")
    post = region_def()

    def __init__(
        self,
        state: Sequence[SSAValue],
        pre: Region,
        then_region: Region,
        else_region: Region,
        post: Region | None = None,
    ):
        super().__init__(
            operands=[state],
            result_types=[[v.type for v in state]],
            regions=[pre, then_region, else_region, post or Region()],
        )

    @classmethod
    def runtime_check(cls) -> str:
        return "the postcondition equals the precondition's value"

    def has_post(self) -> bool:
        return bool(self.post.blocks)

    def state_block_args(self, region: Region) -> Sequence[BlockArgument]:
        if region is self.then_region or region is self.else_region:
            return region.block.args
        return ()

    def verify_(self) -> None:
        types = self.state_types()
        self.verify_results()
        _verify_condition_region(self, self.pre, "pre", types)
        if self.has_post():
            _verify_condition_region(self, self.post, "post", types)
        _verify_carrying_region(self, self.then_region, "then", types, types)
        _verify_carrying_region(self, self.else_region, "else", types, types)

    def inverse_regions(self, inverter: InverseBuilder) -> Sequence[Region | None]:
        if self.has_post():
            pre, post = inverter.clone_region(self.post), inverter.clone_region(self.pre)
        else:
            pre, post = inverter.clone_region(self.pre), None
        then_region = inverter.invert_region(self.then_region)
        return pre, then_region, inverter.invert_region(self.else_region), post

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The same branch runs on the values and their tangents, which the
        state carries; the conditions ignore them."""
        state = tangenter.carried_state(self.state)
        pre = tangenter.condition(self.pre, state)
        post = tangenter.condition(self.post, state) if self.has_post() else None
        then_region = tangenter.tangent_region(self.then_region)
        else_region = tangenter.tangent_region(self.else_region)
        op = tangenter.insert(IfOp(state, pre, then_region, else_region, post), like=self)
        tangenter.bind_carried(self.res, op.res)

    def adjoint(self, adjointer: AdjointBuilder) -> None:
        """Like the inverse (the postcondition picks the branch, both
        branches are adjoint regions), carrying the gradients of the state and
        of the outer values the branches read."""

        def build(state: list[SSAValue], captured: list[SSAValue]) -> IfOp:
            extra = [v.type for v in state[len(self.res) :]]
            if self.has_post():
                pre = adjointer.clone_condition(self.post, extra)
                post: Region | None = adjointer.clone_condition(self.pre, extra)
            else:
                pre, post = adjointer.clone_condition(self.pre, extra), None
            then_region = adjointer.adjoint_region(self.then_region, captured)
            else_region = adjointer.adjoint_region(self.else_region, captured)
            return IfOp(state, pre, then_region, else_region, post)

        adjointer.adjoint_region_op(self, self.state, self.res, build, loop=False)


@irdl_op_definition
class WhileOp(_StateRegionOp, RuntimeCheckedOp, DifferentiableOp, ForwardDifferentiableOp):
    """NiLang's ``while (pre, post)``.

    ``post`` must be false on entry and true after every iteration; the loop
    runs while ``pre`` holds.  Inverse: swap ``pre`` and ``post`` and invert
    the body.
    """

    name = "rev.while"
    TANGENT_OF_ALL_LANES: ClassVar[bool] = True
    ADJOINT_OF_ALL_LANES: ClassVar[bool] = True
    REGION_KEYWORDS: ClassVar[tuple[str, ...]] = ("pre", "post", "do")
    pre = region_def("single_block")
    post = region_def("single_block")
    body = region_def("single_block")

    def __init__(self, state: Sequence[SSAValue], pre: Region, post: Region, body: Region):
        super().__init__(
            operands=[state],
            result_types=[[v.type for v in state]],
            regions=[pre, post, body],
        )

    @classmethod
    def runtime_check(cls) -> str:
        return "the postcondition is false on entry and true after each iteration"

    def state_block_args(self, region: Region) -> Sequence[BlockArgument]:
        return region.block.args if region is self.body else ()

    def verify_(self) -> None:
        types = self.state_types()
        self.verify_results()
        _verify_condition_region(self, self.pre, "pre", types)
        _verify_condition_region(self, self.post, "post", types)
        _verify_carrying_region(self, self.body, "body", types, types)

    def inverse_regions(self, inverter: InverseBuilder) -> Sequence[Region | None]:
        return (
            inverter.clone_region(self.post),
            inverter.clone_region(self.pre),
            inverter.invert_region(self.body),
        )

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The same loop over tangent iterations; the state carries the
        tangents and the conditions ignore them."""
        state = tangenter.carried_state(self.state)
        op = WhileOp(
            state,
            tangenter.condition(self.pre, state),
            tangenter.condition(self.post, state),
            tangenter.tangent_region(self.body),
        )
        tangenter.insert(op, like=self)
        tangenter.bind_carried(self.res, op.res)

    def adjoint(self, adjointer: AdjointBuilder) -> None:
        """The inverse loop (conditions swapped) over adjoint iterations,
        carrying gradients."""

        def build(state: list[SSAValue], captured: list[SSAValue]) -> WhileOp:
            extra = [v.type for v in state[len(self.res) :]]
            return WhileOp(
                state,
                adjointer.clone_condition(self.post, extra),
                adjointer.clone_condition(self.pre, extra),
                adjointer.adjoint_region(self.body, captured),
            )

        adjointer.adjoint_region_op(self, self.state, self.res, build, loop=True)


@irdl_op_definition
class ForOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """A loop over the immutable range ``lb, lb+step, ... < ub`` (``step > 0``).

    The body receives the induction variable and the carried state.  With
    ``reverse`` the same index set is visited in descending order.  Inverse:
    toggle ``reverse`` and invert the body.

    The indices are exactly Python's ``range(lb, ub, step)`` of the
    numbers the bounds mean (``ui8`` 0 to 255 on the interpreter), on every
    engine: every index fits the type, since ``lb ≤ i < ub``, and nothing
    wraps, however near the type's limits the bounds are and however large
    the step (an ``i8`` loop from 0 to 127 by 2 runs 64 iterations, the
    last at 126; backwards it starts there).

    With ``parallel`` the iterations are independent, so they may run in any
    order or at once: such a loop carries no state, its index is an
    ``index``, and what an iteration writes is private to it or a shared
    accumulation (``revmlir.parallel`` states the rule; ``verify-rev`` checks
    it).  Its inverse, tangent and adjoint are parallel too.
    """

    name = "rev.for"
    TANGENT_OF_ALL_LANES: ClassVar[bool] = True
    ADJOINT_OF_ALL_LANES: ClassVar[bool] = True
    T: ClassVar = VarConstraint("T", _IntT)
    lb = operand_def(T)
    ub = operand_def(T)
    step = operand_def(T)
    state = var_operand_def()
    res = var_result_def()
    body = region_def("single_block")
    reverse = opt_prop_def(UnitAttr)
    parallel = opt_prop_def(UnitAttr)

    def __init__(
        self,
        lb: SSAValue,
        ub: SSAValue,
        step: SSAValue,
        state: Sequence[SSAValue],
        body: Region,
        reverse: bool = False,
        parallel: bool = False,
    ):
        flags = {"reverse": reverse, "parallel": parallel}
        super().__init__(
            operands=[lb, ub, step, state],
            result_types=[[v.type for v in state]],
            regions=[body],
            properties={name: UnitAttr() for name, on in flags.items() if on},
        )

    @property
    def is_reverse(self) -> bool:
        return self.reverse is not None

    @property
    def is_parallel(self) -> bool:
        return self.parallel is not None

    def consumed_operands(self) -> Sequence[SSAValue]:
        return self.state

    def state_block_args(self, region: Region) -> Sequence[BlockArgument]:
        return region.block.args[1:]

    def verify_(self) -> None:
        types = [v.type for v in self.state]
        if tuple(self.res.types) != tuple(types):
            raise VerifyException("'rev.for' results must have the types of its state operands")
        _verify_carrying_region(self, self.body, "body", [self.lb.type, *types], types)
        if self.is_parallel and types:
            raise VerifyException("'rev.for parallel' carries no state: its iterations are independent")
        if self.is_parallel and not isinstance(self.lb.type, IndexType):
            raise VerifyException(f"'rev.for parallel' runs over index, not {self.lb.type}")

    def invert(self, inverter: InverseBuilder) -> None:
        op = ForOp(
            inverter.lookup(self.lb),
            inverter.lookup(self.ub),
            inverter.lookup(self.step),
            [inverter.lookup(r) for r in self.res],
            inverter.invert_region(self.body),
            reverse=not self.is_reverse,
            parallel=self.is_parallel,
        )
        op.attributes.update(self.attributes)
        inverter.insert(op, like=self)
        for old, new in zip(self.state, op.res, strict=True):
            inverter.bind(old, new)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """The same loop over tangent iterations, carrying the tangents."""
        op = ForOp(
            tangenter.lookup(self.lb),
            tangenter.lookup(self.ub),
            tangenter.lookup(self.step),
            tangenter.carried_state(self.state),
            tangenter.tangent_region(self.body),
            reverse=self.is_reverse,
            parallel=self.is_parallel,
        )
        tangenter.insert(op, like=self)
        tangenter.bind_carried(self.res, op.res)

    def adjoint(self, adjointer: AdjointBuilder) -> None:
        """The reversed loop over adjoint iterations, carrying gradients."""

        def build(state: list[SSAValue], captured: list[SSAValue]) -> ForOp:
            return ForOp(
                adjointer.lookup(self.lb),
                adjointer.lookup(self.ub),
                adjointer.lookup(self.step),
                state,
                adjointer.adjoint_region(self.body, captured),
                reverse=not self.is_reverse,
                parallel=self.is_parallel,
            )

        adjointer.adjoint_region_op(self, self.state, self.res, build, loop=True)

    def print(self, printer: Printer) -> None:
        if self.is_parallel:
            printer.print_string(" parallel")
        if self.is_reverse:
            printer.print_string(" reverse")
        printer.print_string(" ")
        printer.print_operand(self.lb)
        printer.print_string(" to ")
        printer.print_operand(self.ub)
        printer.print_string(" step ")
        printer.print_operand(self.step)
        printer.print_string(" : ")
        printer.print_attribute(self.lb.type)
        _print_state(printer, self.state)
        _print_attributes(printer, self)
        printer.print_string(" ")
        printer.print_region(self.body)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        parallel = parser.parse_optional_keyword("parallel") is not None
        reverse = parser.parse_optional_keyword("reverse") is not None
        lb = parser.parse_unresolved_operand()
        parser.parse_keyword("to")
        ub = parser.parse_unresolved_operand()
        parser.parse_keyword("step")
        step = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        index_type = parser.parse_type()
        lb_v, ub_v, step_v = (parser.resolve_operand(o, index_type) for o in (lb, ub, step))
        state = _parse_state(parser)
        attrs = _parse_attributes(parser)
        body = parser.parse_region()
        op = cls(lb_v, ub_v, step_v, state, body, reverse=reverse, parallel=parallel)
        op.attributes.update(attrs)
        return op


@irdl_op_definition
class RoutineOp(_StateRegionOp):
    """Compute–copy–uncompute (NiLang's ``@routine … ~@routine``).

    ``compute`` maps the state to the state plus extra values (typically
    ancillas); ``do`` uses them; then ``compute`` runs backwards, so the extra
    values must be back to what ``compute`` made.  Inverse: same ``compute``,
    inverted ``do``.
    """

    name = "rev.routine"
    REGION_KEYWORDS: ClassVar[tuple[str, ...]] = ("compute", "do")
    compute = region_def("single_block")
    body = region_def("single_block")

    traits = traits_def(
        InverseCancellationTrait(),
        NotDifferentiable(
            "differentiated after expansion: ad-adjoint first inlines it as compute; do; ~compute (rev-expand-routines)"
        ),
    )

    def __init__(self, state: Sequence[SSAValue], compute: Region, body: Region):
        super().__init__(
            operands=[state],
            result_types=[[v.type for v in state]],
            regions=[compute, body],
        )

    def extra_types(self) -> list[Attribute]:
        term = self.compute.block.last_op
        assert isinstance(term, YieldOp)
        return list(term.values.types[len(self.state) :])

    def state_block_args(self, region: Region) -> Sequence[BlockArgument]:
        return region.block.args

    def verify_(self) -> None:
        types = self.state_types()
        self.verify_results()
        term = self.compute.block.last_op
        if not isinstance(term, YieldOp) or len(term.values) < len(types):
            raise VerifyException(
                "'rev.routine' compute region must yield the state followed by the values it computes"
            )
        full = [*types, *self.extra_types()]
        _verify_carrying_region(self, self.compute, "compute", types, full)
        _verify_carrying_region(self, self.body, "do", full, full)

    def inverse_regions(self, inverter: InverseBuilder) -> Sequence[Region | None]:
        return inverter.clone_region(self.compute), inverter.invert_region(self.body)


@irdl_op_definition
class InvOp(_StateRegionOp):
    """Run a region backwards (NiLang's ``~begin … end``).

    The results are the region's block arguments as they were before the
    region ran forward to produce the operands.  Inverse: ``rev.inv`` of the
    inverted region (so inverting twice is the identity on the IR).
    """

    name = "rev.inv"
    REGION_KEYWORDS: ClassVar[tuple[str, ...]] = ("",)
    body = region_def("single_block")

    traits = traits_def(
        InvFoldingTrait(),
        NotDifferentiable("differentiated after expansion: ad-adjoint first inlines it as the inverse of its region"),
    )

    def __init__(self, state: Sequence[SSAValue], body: Region):
        super().__init__(operands=[state], result_types=[[v.type for v in state]], regions=[body])

    def state_block_args(self, region: Region) -> Sequence[BlockArgument]:
        return region.block.args

    def verify_(self) -> None:
        types = self.state_types()
        self.verify_results()
        _verify_carrying_region(self, self.body, "body", types, types)

    def inverse_regions(self, inverter: InverseBuilder) -> Sequence[Region | None]:
        return (inverter.invert_region(self.body),)


SAFE_MODES = ("forward", "inverse", "both")


@irdl_op_definition
class SafeOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """Irreversible host side effects (logging, counters) that touch no state.

    ``when`` says in which direction the region runs: ``forward`` (the
    default; the inverse program skips it), ``inverse`` (only when run as part
    of an inverse) or ``both`` (NiLang's ``@safe``).  Inverse: swap
    ``forward`` and ``inverse``.
    """

    name = "rev.safe"
    TANGENT_OF_ALL_LANES: ClassVar[bool] = True
    when = opt_prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    def __init__(self, body: Region, when: str = "forward"):
        super().__init__(
            regions=[body],
            properties={} if when == "forward" else {"when": StringAttr(when)},
        )

    @property
    def mode(self) -> str:
        return self.when.data if self.when is not None else "forward"

    @property
    def runs_forward(self) -> bool:
        return self.mode in ("forward", "both")

    def verify_(self) -> None:
        if self.mode not in SAFE_MODES:
            raise VerifyException(f"'rev.safe' mode must be one of {', '.join(SAFE_MODES)}, got '{self.mode}'")

    def consumed_operands(self) -> Sequence[SSAValue]:
        return ()

    def invert(self, inverter: InverseBuilder) -> None:
        flipped = {"forward": "inverse", "inverse": "forward"}.get(self.mode, "both")
        op = SafeOp(inverter.clone_region(self.body), flipped)
        op.attributes.update(self.attributes)
        inverter.insert(op, like=self)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """Touches no state, so no tangent: it runs as it is."""
        op = SafeOp(tangenter.clone_region(self.body), self.mode)
        tangenter.insert(op, like=self)

    def adjoint(self, adjointer: AdjointBuilder) -> Iterator[None]:
        """Touches no state, so no gradient: the adjoint is the inverse."""
        yield  # the inverse step

    def print(self, printer: Printer) -> None:
        if self.mode != "forward":
            printer.print_string(f" {self.mode}")
        _print_attributes(printer, self)
        printer.print_string(" ")
        printer.print_region(self.body)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        mode = parser.parse_optional_keyword_in(SAFE_MODES) or "forward"
        attrs = _parse_attributes(parser)
        body = parser.parse_region()
        op = cls(body, mode)
        op.attributes.update(attrs)
        return op


# ---------------------------------------------------------------------------
# Functions and calls
# ---------------------------------------------------------------------------


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A reversible function.

    Scalar arguments are state and come back, updated and in order, as the
    results; memref and stack arguments are references updated in place.
    """

    name = "rev.func"
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    body = region_def("single_block")

    traits = traits_def(
        IsolatedFromAbove(),
        SymbolOpInterface(),
        NotInvertible("rev-invert builds a whole inverse function"),
        NotDifferentiable("ad-adjoint and ad-tangent build whole derived functions (@f.adj, @f.tan)"),
    )

    def __init__(self, name: str, arg_types: Sequence[Attribute], body: Region):
        outputs = [t for t in arg_types if is_state_type(t)]
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(arg_types, outputs),
            },
            regions=[body],
        )

    @staticmethod
    def outputs_for(arg_types: Sequence[Attribute]) -> list[Attribute]:
        return [t for t in arg_types if is_state_type(t)]

    def verify_(self) -> None:
        inputs = self.function_type.inputs.data
        for i, t in enumerate(inputs):
            if not (is_state_type(t) or is_reference_type(t)):
                raise VerifyException(
                    f"argument #{i} of @{self.sym_name.data} has type {t}; "
                    "reversible functions take scalars, memrefs and stacks"
                )
            if isinstance(t, MemRefType) and is_reference_type(t.element_type):
                raise VerifyException(
                    f"argument #{i} of @{self.sym_name.data} has type {t}; "
                    "a reversible function's arrays hold scalars (no engine takes an array of arrays)"
                )
        if tuple(self.function_type.outputs.data) != tuple(self.outputs_for(inputs)):
            raise VerifyException(f"@{self.sym_name.data} must return exactly its scalar arguments")
        if tuple(a.type for a in self.body.block.args) != tuple(inputs):
            raise VerifyException(f"entry block arguments of @{self.sym_name.data} do not match its function type")
        # lazy: the dialect's verifier hook; the rules are stated over its ops
        from revmlir.verifier import verify_function

        verify_function(self)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(")")
        _print_attributes(printer, self)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        name = parser.parse_symbol_name().data
        args = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
        )
        attrs = _parse_attributes(parser)
        body = parser.parse_region(args)
        op = cls(name, [a.type for a in args], body)
        op.attributes.update(attrs)
        return op


class _CallLikeOp(IRDLOperation, InvertibleOp, DifferentiableOp, ForwardDifferentiableOp):
    """Scalar arguments are consumed and come back as the results; memrefs and
    stacks are passed by reference (and may be written by the callee)."""

    TANGENT_OF_ALL_LANES: ClassVar[bool] = True
    ADJOINT_OF_ALL_LANES: ClassVar[bool] = True

    callee = prop_def(FlatSymbolRefAttr)
    args = var_operand_def()
    res = var_result_def()

    traits = traits_def(InverseCancellationTrait())
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(self, callee: str, args: Sequence[SSAValue]):
        super().__init__(
            operands=[args],
            result_types=[FuncOp.outputs_for([a.type for a in args])],
            properties={"callee": FlatSymbolRefAttr(callee)},
        )

    @classmethod
    @abc.abstractmethod
    def inverse_call(cls) -> type[_CallLikeOp]:
        """``rev.uncall`` for ``rev.call`` and the other way round."""

    def scalar_args(self) -> list[SSAValue]:
        return [a for a in self.args if is_state_type(a.type)]

    def consumed_operands(self) -> Sequence[SSAValue]:
        return self.scalar_args()

    def written_memrefs(self) -> Sequence[SSAValue]:
        return [a for a in self.args if is_reference_type(a.type)]

    def verify_(self) -> None:
        expected = FuncOp.outputs_for(self.args.types)
        if tuple(self.res.types) != tuple(expected):
            raise VerifyException(
                f"'{self.name}' must return the types of its scalar arguments ({', '.join(map(str, expected))})"
            )

    def invert(self, inverter: InverseBuilder) -> None:
        results = iter(self.res)
        operands = [inverter.lookup(next(results) if a in self.scalar_args() else a) for a in self.args]
        op = self.inverse_call()(self.callee.string_value(), operands)
        op.attributes.update(self.attributes)
        inverter.insert(op, like=self)
        for old, new in zip(self.scalar_args(), op.res, strict=True):
            inverter.bind(old, new)

    def tangent(self, tangenter: TangentBuilder) -> None:
        """``rev.call @g`` → ``rev.call @g.tan`` (``rev.uncall @g`` →
        ``rev.call @g.inv.tan``) on the arguments and their tangents (shadows
        for arrays and stacks); it returns the results and their tangents."""
        callee = self.callee.string_value()
        if isinstance(self, UncallOp):
            callee = inverse_name(callee)
        target = tangenter.tangent_of(callee, self)
        operands = [tangenter.lookup(a) for a in self.args]
        dots = tangenter.carried_tangents(self.args)
        call = tangenter.insert(CallOp(target, [*operands, *dots]), like=self)
        tangenter.bind_carried(self.res, call.res)

    def adjoint(self, adjointer: AdjointBuilder) -> None:
        """``rev.call @g`` → ``rev.call @g.adj`` (``rev.uncall @g`` →
        ``rev.call @g.inv.adj``) on the results and their gradients (the
        shadows of arrays and stacks); it returns the arguments and their
        gradients (lane by lane in vector mode: ``@g.adjL``).  Gradients
        known zero here select an adjoint specialised for them
        (``@g.adj.zero_…``), whose own zeros at its return the caller then
        knows; with all of them zero the call is just inverted."""
        scalars = self.scalar_args()
        results = iter(self.res)
        after = [next(results) if a in scalars else a for a in self.args]
        known = adjointer.lane_gradient_values(after)
        zeros = frozenset(i for i, g in enumerate(known) if adjointer.is_zero(g))
        if len(zeros) == len(known):
            # no gradient to move: the adjoint is the inverse, and the
            # gradients of the arguments are those (zero) of the results
            self.invert(adjointer)
            adjointer.bind_lane_gradients(scalars, adjointer.lane_gradient_values(list(self.res)))
            return
        gradients = adjointer.lane_gradients(after)
        callee = self.callee.string_value()
        if isinstance(self, UncallOp):
            callee = inverse_name(callee)
        target, exits = adjointer.adjoint_of(callee, self, zeros)
        operands = [adjointer.lookup(a) for a in after]
        call = CallOp(target, [*operands, *gradients])
        adjointer.insert(call, like=self)
        for arg, new in zip(scalars, call.res):
            adjointer.bind(arg, new)
        adjointer.bind_lane_gradients(scalars, call.res[len(scalars) :])
        adjointer.note_zeros_after(after, gradients, call.res[len(scalars) :], exits)

    def is_inverse_of(self, other: Operation) -> bool:
        if not isinstance(other, self.inverse_call()):
            return False
        if other.callee != self.callee:
            return False
        refs = [a for a in self.args if is_reference_type(a.type)]
        other_refs = [a for a in other.args if is_reference_type(a.type)]
        return refs == other_refs


@irdl_op_definition
class CallOp(_CallLikeOp):
    """Call a reversible function.  Inverse: ``rev.uncall`` of the same function."""

    name = "rev.call"

    @classmethod
    def inverse_call(cls):
        return UncallOp


@irdl_op_definition
class UncallOp(_CallLikeOp):
    """Run a reversible function backwards (NiLang's ``~f(args)``).
    Inverse: ``rev.call``."""

    name = "rev.uncall"

    @classmethod
    def inverse_call(cls):
        return CallOp


Rev = Dialect(
    "rev",
    [
        AddOp,
        SubOp,
        XorOp,
        MulOp,
        DivOp,
        NegOp,
        IncOp,
        DecOp,
        SwapOp,
        RotOp,
        IRotOp,
        TakeOp,
        PutOp,
        UnpackOp,
        PackOp,
        ToLogOp,
        FromLogOp,
        IfOp,
        WhileOp,
        ForOp,
        RoutineOp,
        InvOp,
        SafeOp,
        FuncOp,
        ReturnOp,
        YieldOp,
        CondOp,
        CallOp,
        UncallOp,
        *NUMBER_OPS,
        ExternOp,
        ApplyOp,
        InvokeOp,
    ],
    [LogType, *NUMBER_TYPES],
)
