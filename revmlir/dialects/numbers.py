"""Number systems of the ``rev`` dialect beyond floats, integers and complex
numbers (log numbers stay with the instructions that define them, in
``revmlir.dialects.rev``).

Fixed-point numbers (``!rev.fixed<64, 43>``: a signed integer of 64 bits
counting units of 2⁻⁴³) make ``+=`` and ``-=`` exact, so a program of them
inverts bit for bit (seed 000, section 2.1.3: "for integer and fixed point
number system, y += f(args...) and y -= f(args...) are rigorously
reversible").  The expression ops below compute on the stored integer; every
result outside the storage is an error on both engines, never a silent wrap.

Tropical numbers (``!rev.tropical<f64>``: the max-plus semiring, stored as
the real number itself) make ``*=`` and ``/=`` (adding and subtracting the
stored reals) inverse to each other, as on log numbers (seed 002, section
2.1.3).  Their ``+`` is ``max``, which forgets the smaller operand: it may
appear in an expression, but no instruction applies it to a variable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, AnyFloatConstr, IntAttr, f64
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    EqAttrConstraint,
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    param_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from revmlir.interfaces import StateType

FIXED_WIDTHS = (8, 16, 32, 64)
"""Storage widths: those of the machine's integers, so that a product fits
twice the width (at most i128) before it is rounded back."""


@irdl_attr_definition
class FixedType(ParametrizedAttribute, TypeAttribute, StateType):
    """``!rev.fixed<width, fraction>``: the real ``raw · 2^-fraction`` of a
    signed ``width``-bit integer ``raw`` (NiLang's ``Fixed43`` is
    ``!rev.fixed<64, 43>``)."""

    name = "rev.fixed"
    width: IntAttr = param_def(IntAttr)
    fraction: IntAttr = param_def(IntAttr)

    def __init__(self, width: int, fraction: int):
        super().__init__(IntAttr(width), IntAttr(fraction))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            width = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation(",")
            fraction = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return (IntAttr(width), IntAttr(fraction))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.width.data}, {self.fraction.data}>")

    def verify(self) -> None:
        width, fraction = self.width.data, self.fraction.data
        if width not in FIXED_WIDTHS:
            raise VerifyException(f"a fixed-point number is stored in {FIXED_WIDTHS} bits, not {width}")
        if not 0 <= fraction < width:
            raise VerifyException(
                f"a {width}-bit fixed-point number has 0 to {width - 1} fraction bits, not {fraction}"
            )

    @property
    def bounds(self) -> tuple[int, int]:
        """The smallest and largest stored integers."""
        half = 1 << (self.width.data - 1)
        return -half, half - 1

    def holds(self, raw: int) -> bool:
        low, high = self.bounds
        return low <= raw <= high

    def nearest(self, x: float) -> int | None:
        """The stored integer of the fixed-point number nearest ``x`` (ties
        to even, as ``rev.to_fixed``), or None where there is none."""
        try:
            raw = round(math.ldexp(x, self.fraction.data))
        except (OverflowError, ValueError):  # too large, inf, nan
            return None
        return raw if self.holds(raw) else None

    def real(self, raw: int) -> float:
        """The nearest f64 to the number ``raw`` stores (``rev.from_fixed``)."""
        return math.ldexp(float(raw), -self.fraction.data)

    def describe(self) -> str:
        """How a Python user would call the type."""
        return (
            f"Fixed[{self.fraction.data}]"
            if self.width.data == 64
            else (f"Fixed[{self.fraction.data}, {self.width.data}]")
        )


@irdl_attr_definition
class TropicalType(ParametrizedAttribute, TypeAttribute, StateType):
    """A tropical (max-plus) number, stored as the real it is: ``a ⊗ b`` is
    ``a + b``, ``a ⊕ b`` is ``max(a, b)``.  Its zero, ``-inf``, is not one
    of its values: ``⊗`` by it could not be undone (seed 002, section
    2.1.3)."""

    name = "rev.tropical"
    element_type: AnyFloat = param_def(AnyFloatConstr)


# ---------------------------------------------------------------------------
# Fixed-point expressions (pure)
# ---------------------------------------------------------------------------


@irdl_op_definition
class ToFixedOp(IRDLOperation):
    """The fixed-point number nearest a real (ties to even); a real outside
    the type's range, or not finite, is an error."""

    name = "rev.to_fixed"
    value = operand_def(EqAttrConstraint(f64))
    result = result_def(FixedType)

    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: SSAValue, type: FixedType):
        super().__init__(operands=[value], result_types=[type])


@irdl_op_definition
class FromFixedOp(IRDLOperation):
    """The real value of a fixed-point number as the nearest f64 (exact when
    the stored integer has at most 53 significant bits)."""

    name = "rev.from_fixed"
    value = operand_def(FixedType)
    result = result_def(EqAttrConstraint(f64))

    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[f64])


class FixedBinaryOp(IRDLOperation):
    """``a ⊙ b`` on two fixed-point numbers of one type, computed on the
    stored integers; a result outside the type is an error."""

    T: ClassVar = VarConstraint("T", base(FixedType))
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[lhs.type])


@irdl_op_definition
class FixedAddOp(FixedBinaryOp):
    """``a + b``: exact."""

    name = "rev.fixed_add"


@irdl_op_definition
class FixedSubOp(FixedBinaryOp):
    """``a - b``: exact."""

    name = "rev.fixed_sub"


@irdl_op_definition
class FixedMulOp(FixedBinaryOp):
    """``a · b``, rounded down to the type's last fraction bit (the
    product of the stored integers, shifted right arithmetically).  It is a
    function of ``a`` and ``b`` alone, so ``y -= a * b`` takes back exactly
    what ``y += a * b`` added."""

    name = "rev.fixed_mul"


# ---------------------------------------------------------------------------
# Tropical conversions (pure)
# ---------------------------------------------------------------------------


REAL = VarConstraint("T", AnyFloatConstr)
"""The float a number type over floats is parameterized by."""


class ToNumberOp(IRDLOperation):
    """The number of type ``NUMBER<T>`` made from a real of type ``T``."""

    NUMBER: ClassVar[type[ParametrizedAttribute]]
    value = operand_def(REAL)

    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[self.NUMBER(value.type)])


class FromNumberOp(IRDLOperation):
    """The real of type ``T`` a number of type ``NUMBER<T>`` stands for."""

    result = result_def(REAL)

    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[value.type.element_type])


@irdl_op_definition
class ToTropicalOp(ToNumberOp):
    """The tropical number whose value is a real (the same bits); a real
    that is not finite is an error (``-inf`` is the tropical zero, which no
    ``/=`` undoes)."""

    name = "rev.to_tropical"
    NUMBER: ClassVar = TropicalType
    result = result_def(ParamAttrConstraint(TropicalType, (REAL,)))


@irdl_op_definition
class FromTropicalOp(FromNumberOp):
    """The real a tropical number is (the same bits)."""

    name = "rev.from_tropical"
    value = operand_def(ParamAttrConstraint(TropicalType, (REAL,)))


NUMBER_OPS = (ToFixedOp, FromFixedOp, FixedAddOp, FixedSubOp, FixedMulOp, ToTropicalOp, FromTropicalOp)
NUMBER_TYPES = (FixedType, TropicalType)
