"""``scf.parallel`` and ``memref.atomic_rmw`` in upstream MLIR's custom form,
and ``llvm.cmpxchg``, which xDSL's ``llvm`` dialect lacks.

A parallel ``rev.for`` lowers to ``scf.parallel`` and a shared accumulation in
it (``y[j] += v`` from several iterations) to ``memref.atomic_rmw addf``.
xDSL defines both ops but prints them generically, ``atomic_rmw``'s kind as a
bare ``i64`` that ``mlir-opt`` does not read.  These subclasses keep xDSL's
definitions (so ``scf.reduce``'s parent check and every ``isinstance`` on
xDSL's classes still hold) and read and print upstream's spelling::

    scf.parallel (%i) = (%lb) to (%ub) step (%s) {
      %old = memref.atomic_rmw addf %v, %m[%j] : (f64, memref<?xf64>) -> f64
      scf.reduce
    }

``get_all_dialects`` registers ``scf`` and ``memref`` with them in place of
xDSL's, and ``llvm`` with ``llvm.cmpxchg`` added: the compare-and-swap with
which a GPU thread takes the launch's error slot (``revmlir.gpu.to_nvvm``),
which a ``func.func`` may hold too, spelled as upstream spells it::

    %r = llvm.cmpxchg %p, %expected, %new monotonic monotonic : !llvm.ptr, i64
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import llvm, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType, StringAttr, i1, i64
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

KINDS: tuple[str, ...] = (
    "addf",
    "addi",
    "assign",
    "maximumf",
    "maxs",
    "maxu",
    "minimumf",
    "mins",
    "minu",
    "mulf",
    "muli",
    "ori",
    "andi",
    "maxnumf",
    "minnumf",
)
"""Upstream's ``arith::AtomicRMWKind`` in its enum order (the stored ``i64``)."""


class AtomicRMWOp(memref.AtomicRMWOp):
    """``m[i...] ⊙= value`` as one indivisible step; the result is the old
    element."""

    def __init__(self, kind: str, value: SSAValue, array: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(
            operands=[value, array, indices],
            result_types=[value.type],
            properties={"kind": IntegerAttr(KINDS.index(kind), i64)},
        )

    @property
    def kind_name(self) -> str:
        kind = self.kind.value.data
        return KINDS[kind] if 0 <= kind < len(KINDS) else str(kind)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind_name} ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        printer.print_operand(self.memref)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_operand)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_attribute(self.value.type)
        printer.print_string(", ")
        printer.print_attribute(self.memref.type)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> AtomicRMWOp:
        start = parser.pos
        kind = parser.parse_identifier()
        if kind not in KINDS:
            parser.raise_error(f"unknown atomic_rmw kind '{kind}' (one of {', '.join(KINDS)})", start, parser.pos)
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        array = parser.parse_unresolved_operand()
        indices = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        parser.parse_punctuation("(")
        value_type = parser.parse_type()
        parser.parse_punctuation(",")
        at = parser.pos
        array_type = parser.parse_type()
        if not isinstance(array_type, MemRefType):
            parser.raise_error(f"'memref.atomic_rmw' updates a memref, not {array_type}", at, parser.pos)
        parser.parse_punctuation(")")
        parser.parse_punctuation("->")
        parser.parse_type()
        op = cls(
            kind,
            parser.resolve_operand(value, value_type),
            parser.resolve_operand(array, array_type),
            [parser.resolve_operand(i, IndexType()) for i in indices],
        )
        op.attributes.update(attributes)
        return op


class ParallelOp(scf.ParallelOp):
    """``scf.parallel`` printed as upstream prints it."""

    def print(self, printer: Printer) -> None:
        def operands(values: Sequence[SSAValue]) -> None:
            printer.print_string("(")
            printer.print_list(values, printer.print_operand)
            printer.print_string(")")

        printer.print_string(" ")
        operands(self.body.block.args)
        printer.print_string(" = ")
        operands(self.lowerBound)
        printer.print_string(" to ")
        operands(self.upperBound)
        printer.print_string(" step ")
        operands(self.step)
        if self.initVals:
            printer.print_string(" init ")
            operands(self.initVals)
            printer.print_string(" -> ")
            printer.print_list(self.res.types, printer.print_attribute)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ParallelOp:
        def operands() -> list[UnresolvedOperand]:
            return parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)

        def resolved(values: list[UnresolvedOperand], types: Sequence[Attribute]) -> list[SSAValue]:
            return [parser.resolve_operand(v, t) for v, t in zip(values, types, strict=True)]

        variables = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        parser.parse_punctuation("=")
        lower = operands()
        parser.parse_keyword("to")
        upper = operands()
        parser.parse_keyword("step")
        steps = operands()
        if not len(variables) == len(lower) == len(upper) == len(steps):
            parser.raise_error("'scf.parallel' needs as many bounds and steps as induction variables")
        init: list[SSAValue] = []
        if parser.parse_optional_keyword("init") is not None:
            values = operands()
            parser.parse_punctuation("->")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if len(types) != len(values):
                parser.raise_error("'scf.parallel' needs one type per init value")
            init = resolved(values, types)
        index = [IndexType()] * len(variables)
        body = parser.parse_region([v.resolve(IndexType()) for v in variables])
        attributes = parser.parse_optional_attr_dict()
        op = cls(resolved(lower, index), resolved(upper, index), resolved(steps, index), body, init)
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class CmpXchgOp(IRDLOperation):
    """``llvm.cmpxchg``: where the integer at ``ptr`` is ``cmp``, make it
    ``val``, as one indivisible step; the result is the old integer and
    whether it was ``cmp`` (``!llvm.struct<(T, i1)>``).  The orderings are
    LLVM's (``monotonic`` at the least; the failure's neither ``release``
    nor ``acq_rel``, as it stores nothing, and it may be stronger than the
    success's, as LLVM 13 and later allow).  NVPTX selects it as PTX's
    ``atom.cas``; host and device code convert it alike
    (``revmlir.lowering.llvm_ir``)."""

    name = "llvm.cmpxchg"
    ORDERINGS: ClassVar[tuple[str, ...]] = ("monotonic", "acquire", "release", "acq_rel", "seq_cst")

    ptr = operand_def(llvm.LLVMPointerType)
    cmp = operand_def(IntegerType)
    val = operand_def(IntegerType)
    res = result_def(llvm.LLVMStructType)
    success_ordering = prop_def(StringAttr)
    failure_ordering = prop_def(StringAttr)

    def __init__(
        self, ptr: SSAValue, cmp: SSAValue, val: SSAValue, success: str = "monotonic", failure: str = "monotonic"
    ):
        super().__init__(
            operands=[ptr, cmp, val],
            result_types=[llvm.LLVMStructType.from_type_list([val.type, i1])],
            properties={"success_ordering": StringAttr(success), "failure_ordering": StringAttr(failure)},
        )

    def verify_(self) -> None:
        if self.cmp.type != self.val.type:
            raise VerifyException(f"'{self.name}' compares {self.cmp.type} but stores {self.val.type}")
        if self.res.type != llvm.LLVMStructType.from_type_list([self.val.type, i1]):
            raise VerifyException(f"'{self.name}' gives !llvm.struct<({self.val.type}, i1)>, not {self.res.type}")
        orderings = (self.success_ordering.data, self.failure_ordering.data)
        if any(o not in self.ORDERINGS for o in orderings):
            raise VerifyException(f"'{self.name}' orders by one of {', '.join(self.ORDERINGS)}")
        if orderings[1] in ("release", "acq_rel"):
            raise VerifyException(f"'{self.name}' cannot fail with {orderings[1]} ordering: it stores nothing then")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list((self.ptr, self.cmp, self.val), printer.print_operand)
        printer.print_string(f" {self.success_ordering.data} {self.failure_ordering.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list((self.ptr.type, self.val.type), printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> CmpXchgOp:
        operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        if len(operands) != 3:
            parser.raise_error("'llvm.cmpxchg' takes an address, the value compared and the value stored")
        success, failure = parser.parse_identifier(), parser.parse_identifier()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pointer = parser.parse_type()
        parser.parse_punctuation(",")
        value = parser.parse_type()
        ptr, cmp, val = (parser.resolve_operand(o, t) for o, t in zip(operands, (pointer, value, value), strict=True))
        op = cls(ptr, cmp, val, success, failure)
        op.attributes.update(attributes)
        return op


def _replaced(dialect: Dialect, replacements: dict[type[Operation], type[Operation]]) -> Dialect:
    operations = [replacements.get(op, op) for op in dialect.operations]
    return Dialect(dialect.name, operations, list(dialect.attributes))


def memref_dialect() -> Dialect:
    """xDSL's ``memref`` dialect with ``memref.atomic_rmw`` in upstream's form."""
    return _replaced(memref.MemRef, {memref.AtomicRMWOp: AtomicRMWOp})


def scf_dialect() -> Dialect:
    """xDSL's ``scf`` dialect with ``scf.parallel`` in upstream's form."""
    return _replaced(scf.Scf, {scf.ParallelOp: ParallelOp})


def llvm_dialect() -> Dialect:
    """xDSL's ``llvm`` dialect with ``llvm.cmpxchg``."""
    return Dialect(llvm.LLVM.name, [*llvm.LLVM.operations, CmpXchgOp], list(llvm.LLVM.attributes))
