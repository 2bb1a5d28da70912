"""LLVM IR text straight from a module of ``llvm`` ops, for the kinds of op
the translation to ``llvm`` gives device code.

``revmlir.lowering.llvm_ir`` builds llvmlite's IR of a module (xDSL's
``convert_module``), which llvmlite prints and LLVM parses: for BA's GPU
kernel, 6,200 ops become as many llvmlite objects, made only to be printed
(docs/design.md decision 149).  ``llvm_text`` prints the same module as
LLVM IR text in one walk: each op's line is what ``convert_op`` makes of
it, read as LLVM reads llvmlite's text (the same instruction, types,
flags and constants; values and blocks are named differently, which
LLVM does not keep in the code it emits).  Types and constants are
formatted by xDSL's and llvmlite's own code, once each.

What it prints is the text the conversion gives, including what the
conversion drops (an ``fcmp``'s fast-math flags; ``musttail`` and
``notail`` are written ``tail``), and what the conversion refuses it
refuses with the same error (a compare-and-swap read other than by
``llvm.extractvalue``: ``llvm_ir.check_swap``; a ``volatile`` store and an
atomic access LLVM does not take: ``llvm_ir.atomic_access``, which gives
both routes an atomic access's ordering and alignment).  A module holding an op or attribute without a
line here (an ``llvm`` op of another kind that a user's ``func.func``
passes through, a global, a parameter attribute other than ``noalias``, a
variadic function, an intrinsic called with two signatures) is not
printed: ``llvm_text`` returns None and the caller converts it with
``llvm_ir``.  While it prints, it reads what ``ptx_from_llvm`` needs of
each function (``revmlir.lowering.llvm_code``).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from llvmlite import ir
from xdsl.backend.llvm.convert_op import create_constant
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import AnyFloat, Float32Type, Float64Type, FloatAttr, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.type import get_element_type_or_self

from revmlir.dialects.upstream_forms import CmpXchgOp
from revmlir.lowering.llvm_code import FunctionCalls, LLVMCode, global_reference
from revmlir.lowering.llvm_ir import atomic_access, check_swap
from revmlir.lowering.unwinding_asm import inline_asm, unwinds


class _Unprintable(Exception):
    """The module holds what this printer has no line for."""


@functools.cache
def _type_text(type: Attribute) -> str:
    """``type`` as LLVM IR writes it, by xDSL's conversion."""
    return str(convert_type(type))


_FLOATS: dict[type[Attribute], Callable[[float], str]] = {
    Float64Type: ir.DoubleType().format_constant,
    Float32Type: ir.FloatType().format_constant,
}
"""llvmlite's writing of a float constant of each type (the hexadecimal of
its double; an f32 rounded to f32 first)."""


@functools.cache
def _constant_text(type: Attribute, value: Attribute) -> str:
    """``llvm.mlir.constant``'s value as llvmlite writes it."""
    return create_constant(type, value).get_reference()


@functools.cache
def _zero_text(type: Attribute) -> str:
    """``llvm.mlir.zero`` of ``type`` as llvmlite writes it (``null``,
    ``zeroinitializer``)."""
    return ir.Constant(convert_type(type), None).get_reference()


@functools.cache
def _inline_assembly(
    asm: str,
    constraints: str,
    result: Attribute | None,
    inputs: tuple[Attribute, ...],
    side_effects: bool,
    unwinding: bool,
) -> str:
    """An inline-assembly callee as llvmlite writes it (its string escaped)."""
    returned = convert_type(result) if result is not None else ir.VoidType()
    signature = ir.FunctionType(returned, [convert_type(t) for t in inputs])
    return inline_asm(signature, asm, constraints, side_effects, unwinding).get_reference()


_BINARY = {
    llvm.AddOp: "add",
    llvm.SubOp: "sub",
    llvm.MulOp: "mul",
    llvm.UDivOp: "udiv",
    llvm.SDivOp: "sdiv",
    llvm.URemOp: "urem",
    llvm.SRemOp: "srem",
    llvm.ShlOp: "shl",
    llvm.LShrOp: "lshr",
    llvm.AShrOp: "ashr",
    llvm.AndOp: "and",
    llvm.OrOp: "or",
    llvm.XOrOp: "xor",
    llvm.FAddOp: "fadd",
    llvm.FSubOp: "fsub",
    llvm.FMulOp: "fmul",
    llvm.FDivOp: "fdiv",
}
_CASTS = {
    llvm.TruncOp: "trunc",
    llvm.ZExtOp: "zext",
    llvm.SExtOp: "sext",
    llvm.PtrToIntOp: "ptrtoint",
    llvm.IntToPtrOp: "inttoptr",
    llvm.BitcastOp: "bitcast",
    llvm.FPExtOp: "fpext",
    llvm.FPTruncOp: "fptrunc",
    llvm.SIToFPOp: "sitofp",
}


def _flags(op: Operation) -> list[str]:
    """The flags ``convert_op`` gives an arithmetic op or a cast, read as
    it reads them: xDSL keeps an ``add``'s, ``sub``'s, ``mul``'s and
    ``shl``'s overflow flags as the ``i32`` of their bits, a cast's as
    ``#llvm.overflow``."""
    if isinstance(op, llvm.ArithmeticBinOpOverflow):
        bits = op.overflowFlags
        return [] if not bits else [f.value for f in llvm.OverflowAttr.from_int(bits.value.data).data]
    if isinstance(op, llvm.IntegerConversionOpOverflow):
        return [] if not op.overflowFlags else [f.value for f in op.overflowFlags.data]
    if isinstance(op, llvm.AbstractFloatArithOp):
        return [f.value for f in op.fastmathFlags.data] if op.fastmathFlags else []
    if isinstance(op, llvm.ArithmeticBinOpExact):
        return ["exact"] if op.is_exact else []
    if isinstance(op, llvm.ArithmeticBinOpDisjoint):
        return ["disjoint"] if op.is_disjoint else []
    if isinstance(op, llvm.IntegerConversionOpNNeg):
        return ["nneg"] if op.non_neg else []
    return []


class _Texts:
    """The texts of the module's types, looked up by identity first:
    hashing an xDSL type hashes each of its fields, and the module's ops
    share few type objects (printing BA's kernel hashed 58,000 times)."""

    def __init__(self) -> None:
        self.types: dict[int, tuple[Attribute, str]] = {}
        """Each type met and its text, by its ``id`` (kept, so that the
        ``id`` is no other object's)."""

    def type(self, type: Attribute) -> str:
        known = self.types.get(id(type))
        if known is None or known[0] is not type:
            known = self.types[id(type)] = (type, _type_text(type))
        return known[1]

    @staticmethod
    def constant(type: Attribute, value: Attribute) -> str:
        if value.__class__ is IntegerAttr and type.__class__ is IntegerType:
            return str(value.value.data)
        if value.__class__ is FloatAttr and (written := _FLOATS.get(type.__class__)) is not None:
            return written(value.value.data)
        return _constant_text(type, value)


class _FunctionPrinter:
    """One ``llvm.func``'s body: a block's arguments are φ-nodes, whose
    incoming values the branches to it give."""

    def __init__(self, declare: Callable[[str, str], str], texts: _Texts):
        self.type = texts.type
        self.constant = texts.constant
        self.names: dict[SSAValue, str] = {}
        self.labels: dict[Block, str] = {}
        self.incoming: dict[Block, list[tuple[list[str], str]]] = {}
        self.calls: Counter[str] = Counter()
        self.inlinable = True
        self.declare = declare

    def name(self, value: SSAValue) -> str:
        owner = value.owner
        if owner.__class__ is llvm.ConstantOp:
            return self.constant(value.type, owner.value)
        if owner.__class__ is llvm.UndefOp:
            return "undef"
        if owner.__class__ is llvm.ZeroOp:
            return _zero_text(value.type)
        name = self.names.get(value)
        if name is None:
            name = self.names[value] = f"%v{len(self.names)}"
        return name

    def typed(self, value: SSAValue) -> str:
        return f"{self.type(value.type)} {self.name(value)}"

    def label(self, block: Block) -> str:
        label = self.labels.get(block)
        if label is None:
            label = self.labels[block] = f"b{len(self.labels)}"
        return label

    def branch(self, block: Block, successor: Block, arguments: tuple[SSAValue, ...] | list[SSAValue]) -> str:
        if arguments:
            self.incoming.setdefault(successor, []).append(([self.name(a) for a in arguments], self.label(block)))
        return f"label %{self.label(successor)}"

    def function(self, op: llvm.FuncOp, header: str, types: list[str], attributes: str) -> list[str]:
        blocks = list(op.body.blocks)
        for block in blocks:
            self.label(block)
        parameters = ", ".join(f"{t} {self.name(a)}" for t, a in zip(types, blocks[0].args))
        bodies = [self.block(block, block is blocks[0]) for block in blocks]
        lines = [f"{header}({parameters}) {attributes} {{" if attributes else f"{header}({parameters}) {{"]
        for block, body in zip(blocks, bodies):
            lines.append(f"{self.labels[block]}:")
            for position, argument in enumerate(block.args if block is not blocks[0] else ()):
                incoming = ", ".join(
                    f"[{values[position]}, %{label}]" for values, label in self.incoming.get(block, [])
                )
                lines.append(f"  {self.name(argument)} = phi {self.type(argument.type)} {incoming}")
            lines.extend(body)
        lines.append("}")
        return lines

    def block(self, block: Block, entry: bool) -> list[str]:
        lines = []
        for op in block.ops:
            line = self.line(op, block, entry)
            if line is not None:
                lines.append(f"  {self.name(op.results[0])} = {line}" if op.results else f"  {line}")
        return lines

    def line(self, op: Operation, block: Block, entry: bool) -> str | None:
        kind = op.__class__
        if kind is llvm.ConstantOp or kind is llvm.UndefOp or kind is llvm.ZeroOp:
            return None
        if (name := _BINARY.get(kind)) is not None:
            flags = "".join(f" {f}" for f in _flags(op))
            return f"{name}{flags} {self.typed(op.operands[0])}, {self.name(op.operands[1])}"
        if (name := _CASTS.get(kind)) is not None:
            flags = "".join(f" {f}" for f in _flags(op))
            return f"{name}{flags} {self.typed(op.operands[0])} to {self.type(op.results[0].type)}"
        if kind is llvm.ICmpOp:
            predicate = llvm.ICmpPredicateFlag.from_int(op.predicate.value.data).value
            return f"icmp {predicate} {self.typed(op.lhs)}, {self.name(op.rhs)}"
        if kind is llvm.FCmpOp:
            predicate = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data).value
            if predicate.startswith("_"):  # _false and _true, which the conversion does not take
                raise _Unprintable
            return f"fcmp {predicate} {self.typed(op.lhs)}, {self.name(op.rhs)}"
        if kind is llvm.FNegOp:
            flags = "".join(f" {f.value}" for f in op.fastmathFlags.data)
            return f"fneg{flags} {self.typed(op.arg)}"
        if kind is llvm.SelectOp:
            return f"select {self.typed(op.cond)}, {self.typed(op.lhs)}, {self.typed(op.rhs)}"
        if kind is llvm.LoadOp:
            if (atomic := atomic_access(op)) is not None:
                return (
                    f"load atomic {self.type(op.results[0].type)}, {self.typed(op.ptr)} {atomic[0]}, align {atomic[1]}"
                )
            align = f", align {op.alignment.value.data}" if op.alignment else ""
            return f"load {self.type(op.results[0].type)}, {self.typed(op.ptr)}{align}"
        if kind is llvm.StoreOp:
            if (atomic := atomic_access(op)) is not None:
                return f"store atomic {self.typed(op.value)}, {self.typed(op.ptr)} {atomic[0]}, align {atomic[1]}"
            align = f", align {op.alignment.value.data}" if op.alignment else ""
            return f"store {self.typed(op.value)}, {self.typed(op.ptr)}{align}"
        if kind is llvm.AllocaOp:
            if not entry or op.size.owner.__class__ is not llvm.ConstantOp:
                self.inlinable = False
            align = f", align {op.alignment.value.data}" if op.alignment else ""
            return f"alloca {self.type(op.elem_type)}, {self.typed(op.size)}{align}"
        if kind is llvm.GEPOp:
            indices = iter(op.ssa_indices)
            offsets = ", ".join(
                self.typed(next(indices)) if i == llvm.GEP_USE_SSA_VAL else f"i32 {i}"
                for i in op.rawConstantIndices.iter_values()
            )
            inbounds = " inbounds" if op.inbounds is not None else ""
            return f"getelementptr{inbounds} {self.type(op.elem_type)}, {self.typed(op.ptr)}, {offsets}"
        if kind is llvm.ExtractValueOp:
            positions = ", ".join(str(p) for p in op.position.iter_values())
            return f"extractvalue {self.typed(op.container)}, {positions}"
        if kind is llvm.InsertValueOp:
            positions = ", ".join(str(p) for p in op.position.iter_values())
            return f"insertvalue {self.typed(op.container)}, {self.typed(op.value)}, {positions}"
        if kind is llvm.CallOp:
            if op.op_bundle_operands or op.op_bundle_sizes or op.callee is None or op.var_callee_type is not None:
                raise _Unprintable
            callee = op.callee.string_value()
            self.calls[callee] += 1
            returned = op.returned
            fastmath = (
                "".join(f" {f.value}" for f in op.fastmathFlags.data)
                if returned is not None and isinstance(get_element_type_or_self(returned.type), AnyFloat)
                else ""
            )
            tail = "tail " if op.TailCallKind.data != "none" else ""
            result = self.type(returned.type) if returned is not None else "void"
            arguments = ", ".join(self.typed(a) for a in op.args)
            return f"{tail}call{fastmath} {op.CConv.cconv_name} {result} {global_reference(callee)}({arguments})"
        if kind is llvm.CallIntrinsicOp:
            if op.op_bundle_operands or op.op_bundle_sizes or any(op.fastmathFlags.data):
                raise _Unprintable
            name = op.intrin.data
            self.calls[name] += 1
            result = self.type(op.ress.type) if op.ress is not None else "void"
            declaration = f"declare {result} {global_reference(name)}({', '.join(self.type(a.type) for a in op.args)})"
            if self.declare(name, declaration) != declaration:  # called with other types before
                raise _Unprintable
            return f"call {result} {global_reference(name)}({', '.join(self.typed(a) for a in op.args)})"
        if kind is llvm.InlineAsmOp:
            inputs = tuple(a.type for a in op.operands_)
            gives = op.res.type if op.res else None
            callee = _inline_assembly(
                op.asm_string.data, op.constraints.data, gives, inputs, op.has_side_effects is not None, unwinds(op)
            )
            returned = self.type(gives) if gives is not None else "void"
            return f"call {returned} {callee}({', '.join(self.typed(a) for a in op.operands_)})"
        if kind is CmpXchgOp:
            check_swap(op)
            orderings = f"{op.success_ordering.data} {op.failure_ordering.data}"
            return f"cmpxchg {self.typed(op.ptr)}, {self.typed(op.cmp)}, {self.typed(op.val)} {orderings}"
        if kind is llvm.BrOp:
            return f"br {self.branch(block, op.successor, op.arguments)}"
        if kind is llvm.CondBrOp:
            then = self.branch(block, op.then_block, op.then_arguments)
            otherwise = self.branch(block, op.else_block, op.else_arguments)
            return f"br {self.typed(op.cond)}, {then}, {otherwise}"
        if kind is llvm.ReturnOp:
            return f"ret {self.typed(op.operands[0])}" if op.operands else "ret void"
        raise _Unprintable


PARAMETER_ATTRIBUTES = {"llvm.noalias": " noalias"}
"""The parameter attributes printed (the translation gives an array's
pointer ``noalias`` where no other argument may be the same array); a
function whose parameters have another is converted by ``llvm_ir``."""


def _parameter_attribute(name: str) -> str:
    printed = PARAMETER_ATTRIBUTES.get(name)
    if printed is None:
        raise _Unprintable
    return printed


def llvm_text(
    module: ModuleOp,
    internal: frozenset[str] = frozenset(),
    conventions: Mapping[str, str] = {},
    attributes: Mapping[str, Sequence[str]] = {},
) -> LLVMCode | None:
    """LLVM IR text of ``module`` (of ``llvm.func``s of the kinds of op
    above): the functions of ``internal`` of internal linkage, each of
    ``conventions`` of its calling convention and each of ``attributes``
    with those function attributes.  None where ``module`` holds what this
    module cannot print (the caller converts it with ``llvm_ir``)."""
    declared: dict[str, str] = {}
    texts = _Texts()
    lines: list[str] = []
    calls: dict[str, FunctionCalls] = {}
    try:
        for op in module.ops:
            if op.__class__ is not llvm.FuncOp or op.res_attrs is not None or op.function_type.is_variadic:
                raise _Unprintable
            name = op.sym_name.data
            signature = op.function_type
            returned = texts.type(signature.output)
            given = [{}] * len(signature.inputs) if op.arg_attrs is None else [a.data for a in op.arg_attrs.data]
            parameters = [
                texts.type(t) + "".join(_parameter_attribute(a) for a in p) for t, p in zip(signature.inputs, given)
            ]
            if not op.body.blocks:
                declared[name] = f"declare {returned} {global_reference(name)}({', '.join(parameters)})"
                continue
            linkage = " internal" if name in internal else ""
            convention = f" {conventions[name]}" if name in conventions else ""
            header = f"define{linkage}{convention} {returned} {global_reference(name)}"
            printer = _FunctionPrinter(declared.setdefault, texts)
            lines += printer.function(op, header, parameters, " ".join(attributes.get(name, ())))
            calls[name] = FunctionCalls(printer.calls, printer.inlinable)
    except _Unprintable:
        return None
    noinline = frozenset(name for name, marks in attributes.items() if "noinline" in marks)
    return LLVMCode("\n".join([*declared.values(), *lines, ""]), calls, internal & calls.keys(), noinline)
