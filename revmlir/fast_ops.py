"""The ops the compilers build by the thousand (constants, calls, a check's
``scf.if``, ``scf.yield``, comparison and ``xori``, an array's size, binary
arithmetic, branches), built as their xDSL constructors build them, with
``Operation.create``.  Below every layer that builds IR (the frontend's
builder, the derivative passes, the lowerings, the translation to LLVM),
so that each builds these ops the one way.

A constructor runs xDSL's generic argument processing (every operand
group, property, region and successor checked against the op's
definition, segment sizes built and range-checked) and costs 2 to 8 times
what the op itself costs: an ``llvm.call`` of a check's report with its
seven arguments took 250 µs to build, 30 µs made this way.  BA's GPU
kernel builds about 600 such calls at each level, 600 checks' ``scf.if``,
700 conditional and 1,300 plain branches, 4,000 constants.  The properties
are the constructors' own (a prototype's, where there are defaults), the
attributes that repeat (a callee's symbol, segment sizes, a constant's
value) made once each: attributes are immutable, and every op gets a
properties dict of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

OpT = TypeVar("OpT", bound=Operation)

_LLVM_CALL_PROPERTIES = {
    name: value
    for name, value in llvm.CallOp("prototype").properties.items()
    if name not in ("callee", "operandSegmentSizes")
}
"""What ``llvm.CallOp``'s constructor gives every call without a variadic
callee type: its calling convention, fast-math flags, tail-call kind and
operand bundles (none)."""
_DEFAULT_PROPERTIES: dict[type[Operation], dict[str, Attribute]] = {}
"""Per class of op built by ``as_constructed``, the properties its
constructor gave the first one built (default flags: overflow, fast-math,
exactness, ordering), in the constructor's order."""


def number_attr(value: int | float, type: Attribute) -> IntegerAttr | FloatAttr:
    """``value`` as an attribute of ``type``: a ``FloatAttr`` for a float,
    else an ``IntegerAttr``; one object per value and type."""
    if isinstance(value, float):
        return _number_attr(type, repr(value), True)
    return _number_attr(type, str(int(value)), False)


@functools.lru_cache(maxsize=4096)
def _number_attr(type: Attribute, text: str, is_float: bool) -> IntegerAttr | FloatAttr:
    # keyed by the text: 0.0 and -0.0 are equal, and so are their hashes
    if is_float:
        return FloatAttr(float(text), type)
    return IntegerAttr(int(text), type)


@functools.lru_cache(maxsize=4096)
def _symbol(name: str) -> SymbolRefAttr:
    return SymbolRefAttr(name)


@functools.lru_cache(maxsize=256)
def _segments(*sizes: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, sizes)


def as_constructed(
    kind: type[OpT],
    construct: Callable[[], OpT],
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    properties: Mapping[str, Attribute] = {},
) -> OpT:
    """The op ``construct()`` builds, of class ``kind``, with these operands,
    results and ``properties`` (given by every call for ``kind``, the
    others being defaults that do not depend on the arguments).  The first
    op of each class is built by ``construct``, to learn those defaults and
    their order; later ones get them with ``Operation.create``."""
    defaults = _DEFAULT_PROPERTIES.get(kind)
    if defaults is None:
        op = construct()
        _DEFAULT_PROPERTIES[kind] = dict(op.properties)
        return op
    merged = dict(defaults)
    merged.update(properties)
    return kind.create(operands=operands, result_types=result_types, properties=merged)


def binary(kind: type[Operation], lhs: SSAValue, rhs: SSAValue) -> Operation:
    """``kind(lhs, rhs)`` for an arith, llvm or complex binary op
    (``complex.add`` … ``complex.div``, derived code's arithmetic of
    complex numbers) whose result has ``lhs``'s type, as its constructor
    builds it."""
    return as_constructed(kind, lambda: kind(lhs, rhs), [lhs, rhs], [lhs.type])


def unary(kind: type[Operation], value: SSAValue) -> Operation:
    """``kind(value)`` for an arith, math or complex op of one operand
    whose result has its type (``math.absf``, ``arith.negf``,
    ``complex.neg``), as its constructor builds it."""
    return as_constructed(kind, lambda: kind(value), [value], [value.type])


def cast(kind: type[OpT], value: SSAValue, type: Attribute) -> OpT:
    """``kind(value, type)`` for an llvm conversion (``sext``, ``zext``,
    ``trunc``, ``sitofp``, ``fpext``, ``fptrunc``, ``bitcast``) or an arith
    cast (``arith.bitcast``, ``extsi``, ``extui``, ``extf``), as its
    constructor builds it."""
    return as_constructed(kind, lambda: kind(value, type), [value], [type])


@functools.lru_cache(maxsize=64)
def _predicate(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


# -- std ----------------------------------------------------------------------


def arith_constant(value: int | float, type: Attribute) -> arith.ConstantOp:
    """``arith.constant value : type`` (``value`` an int or a float)."""
    return arith.ConstantOp.create(properties={"value": number_attr(value, type)}, result_types=[type])


def func_call(callee: str, args: Sequence[SSAValue], results: Sequence[Attribute]) -> func.CallOp:
    """``func.call @callee(args)``, as ``func.CallOp`` builds it."""
    return func.CallOp.create(operands=args, result_types=results, properties={"callee": _symbol(callee)})


CMPI_PREDICATES = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5, "ult": 6, "ule": 7, "ugt": 8, "uge": 9}
"""``arith.cmpi``'s predicates by name, numbered as ``arith.CmpiOp`` and
LLVM's ``icmp`` number them."""


def arith_cmpi(lhs: SSAValue, rhs: SSAValue, predicate: str) -> arith.CmpiOp:
    """``arith.cmpi predicate, lhs, rhs`` of two integers or indices."""
    properties = {"predicate": _predicate(CMPI_PREDICATES[predicate])}
    return arith.CmpiOp.create(operands=[lhs, rhs], result_types=[i1], properties=properties)


CMPF_PREDICATES = {
    "false": 0,
    "oeq": 1,
    "ogt": 2,
    "oge": 3,
    "olt": 4,
    "ole": 5,
    "one": 6,
    "ord": 7,
    "ueq": 8,
    "ugt": 9,
    "uge": 10,
    "ult": 11,
    "ule": 12,
    "une": 13,
    "uno": 14,
    "true": 15,
}
"""``arith.cmpf``'s predicates by name, numbered as ``arith.CmpfOp`` and
LLVM's ``fcmp`` number them."""


def arith_cmpf(lhs: SSAValue, rhs: SSAValue, predicate: str) -> arith.CmpfOp:
    """``arith.cmpf predicate, lhs, rhs`` of two floats, as ``arith.CmpfOp``
    builds it."""
    number = CMPF_PREDICATES[predicate]
    return as_constructed(
        arith.CmpfOp,
        lambda: arith.CmpfOp(lhs, rhs, number),
        [lhs, rhs],
        [i1],
        {"predicate": _predicate(number)},
    )


def arith_select(condition: SSAValue, then: SSAValue, otherwise: SSAValue) -> arith.SelectOp:
    """``arith.select``, as ``arith.SelectOp`` builds it."""
    return as_constructed(
        arith.SelectOp, lambda: arith.SelectOp(condition, then, otherwise), [condition, then, otherwise], [then.type]
    )


def index_cast(value: SSAValue, type: Attribute) -> arith.IndexCastOp:
    """``arith.index_cast`` of ``value`` to ``type``."""
    return cast(arith.IndexCastOp, value, type)


def memref_load(array: SSAValue, indices: Iterable[SSAValue]) -> memref.LoadOp:
    """``memref.load array[indices]``, as ``memref.LoadOp.get`` builds it."""
    indices = list(indices)  # read twice: by the constructor or by create
    type = array.type
    assert isinstance(type, MemRefType)
    return as_constructed(
        memref.LoadOp, lambda: memref.LoadOp.get(array, indices), [array, *indices], [type.element_type]
    )


def memref_store(value: SSAValue, array: SSAValue, indices: Iterable[SSAValue]) -> memref.StoreOp:
    """``memref.store value, array[indices]``, as ``memref.StoreOp.get``
    builds it."""
    indices = list(indices)  # read twice: by the constructor or by create
    return as_constructed(
        memref.StoreOp, lambda: memref.StoreOp.get(value, array, indices), [value, array, *indices], []
    )


def memref_dim(array: SSAValue, axis: SSAValue) -> memref.DimOp:
    """``memref.dim`` of ``array`` along ``axis``."""
    return memref.DimOp.create(operands=[array, axis], result_types=[IndexType()])


def scf_if(condition: SSAValue, then: Region) -> scf.IfOp:
    """``scf.if`` without results or else region, as ``scf.IfOp`` builds it."""
    return scf.IfOp.create(operands=[condition], regions=[then, Region()])


def scf_yield() -> scf.YieldOp:
    """``scf.yield`` of nothing."""
    return scf.YieldOp.create()


# -- llvm ---------------------------------------------------------------------


def llvm_constant(value: int | float, type: Attribute) -> llvm.ConstantOp:
    """``llvm.mlir.constant`` of ``value`` (an int or a float) and ``type``."""
    return llvm.ConstantOp.create(properties={"value": number_attr(value, type)}, result_types=[type])


def llvm_icmp(lhs: SSAValue, rhs: SSAValue, predicate: int) -> llvm.ICmpOp:
    """``llvm.icmp`` of two scalars (``predicate`` numbered as
    ``CMPI_PREDICATES`` numbers them)."""
    return llvm.ICmpOp.create(operands=[lhs, rhs], result_types=[i1], properties={"predicate": _predicate(predicate)})


def llvm_call(callee: str, args: Sequence[SSAValue], result: Attribute | None) -> llvm.CallOp:
    """``llvm.call @callee(args)``, as ``llvm.CallOp(callee, *args,
    return_type=result)`` builds it."""
    properties = {**_LLVM_CALL_PROPERTIES, "callee": _symbol(callee), "operandSegmentSizes": _segments(len(args), 0)}
    return llvm.CallOp.create(operands=args, result_types=[] if result is None else [result], properties=properties)


def llvm_branch(destination: Block, args: Sequence[SSAValue] = ()) -> llvm.BrOp:
    """``llvm.br``, as ``llvm.BrOp(destination, *args)`` builds it."""
    return llvm.BrOp.create(operands=args, successors=[destination])


def llvm_cond_branch(
    condition: SSAValue,
    then_block: Block,
    then_args: Sequence[SSAValue],
    else_block: Block,
    else_args: Sequence[SSAValue],
) -> llvm.CondBrOp:
    """``llvm.cond_br``, as ``llvm.CondBrOp`` builds it."""
    return llvm.CondBrOp.create(
        operands=[condition, *then_args, *else_args],
        successors=[then_block, else_block],
        properties={"operandSegmentSizes": _segments(1, len(then_args), len(else_args))},
    )


_PTR = llvm.LLVMPointerType()
_ONE_SSA_INDEX = DenseArrayBase.from_list(i32, [llvm.GEP_USE_SSA_VAL])
_IN_BOUNDS = UnitAttr()


def llvm_gep(pointer: SSAValue, index: SSAValue, element: Attribute) -> llvm.GEPOp:
    """``llvm.getelementptr inbounds`` of the ``index``-th ``element`` from
    ``pointer``, as ``llvm.GEPOp(pointer, [GEP_USE_SSA_VAL], element,
    ssa_indices=[index], inbounds=True)`` builds it."""
    return as_constructed(
        llvm.GEPOp,
        lambda: llvm.GEPOp(pointer, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[index], inbounds=True),
        [pointer, index],
        [_PTR],
        {"rawConstantIndices": _ONE_SSA_INDEX, "elem_type": element, "inbounds": _IN_BOUNDS},
    )


def llvm_load(address: SSAValue, type: Attribute) -> llvm.LoadOp:
    """``llvm.load`` of a ``type`` from ``address``, as ``llvm.LoadOp``
    builds it."""
    return as_constructed(llvm.LoadOp, lambda: llvm.LoadOp(address, type), [address], [type])


def llvm_store(value: SSAValue, address: SSAValue) -> llvm.StoreOp:
    """``llvm.store`` of ``value`` at ``address``, as ``llvm.StoreOp``
    builds it."""
    return as_constructed(llvm.StoreOp, lambda: llvm.StoreOp(value, address), [value, address], [])


def llvm_extract(position: DenseArrayBase, container: SSAValue, type: Attribute) -> llvm.ExtractValueOp:
    """``llvm.extractvalue`` of the field of ``container`` at ``position``."""
    return as_constructed(
        llvm.ExtractValueOp,
        lambda: llvm.ExtractValueOp(position, container, type),
        [container],
        [type],
        {"position": position},
    )


def llvm_insert(position: DenseArrayBase, container: SSAValue, value: SSAValue) -> llvm.InsertValueOp:
    """``llvm.insertvalue`` of ``value`` into ``container`` at ``position``."""
    return as_constructed(
        llvm.InsertValueOp,
        lambda: llvm.InsertValueOp(position, container, value),
        [container, value],
        [container.type],
        {"position": position},
    )


def llvm_undef(type: Attribute) -> llvm.UndefOp:
    """``llvm.mlir.undef`` of ``type``."""
    return as_constructed(llvm.UndefOp, lambda: llvm.UndefOp(type), [], [type])


def llvm_select(condition: SSAValue, then: SSAValue, otherwise: SSAValue) -> llvm.SelectOp:
    """``llvm.select``, as ``llvm.SelectOp`` builds it."""
    return as_constructed(
        llvm.SelectOp, lambda: llvm.SelectOp(condition, then, otherwise), [condition, then, otherwise], [then.type]
    )


def llvm_fcmp(lhs: SSAValue, rhs: SSAValue, predicate: int) -> llvm.FCmpOp:
    """``llvm.fcmp`` of two floats (``predicate`` numbered as
    ``arith.cmpf`` and LLVM's ``fcmp`` number them)."""
    return as_constructed(
        llvm.FCmpOp,
        lambda: llvm.FCmpOp(lhs, rhs, _predicate(predicate)),
        [lhs, rhs],
        [i1],
        {"predicate": _predicate(predicate)},
    )


def llvm_fneg(value: SSAValue) -> llvm.FNegOp:
    """``llvm.fneg``, as ``llvm.FNegOp`` builds it."""
    return as_constructed(llvm.FNegOp, lambda: llvm.FNegOp(value), [value], [value.type])


@functools.lru_cache(maxsize=1024)
def _intrinsic_name(name: str) -> StringAttr:
    return StringAttr(name)


def llvm_intrinsic(name: str, args: Sequence[SSAValue], results: Sequence[Attribute]) -> llvm.CallIntrinsicOp:
    """``llvm.call_intrinsic`` of ``name``, as ``llvm.CallIntrinsicOp(name,
    args, results)`` builds it (no operand bundles)."""
    return as_constructed(
        llvm.CallIntrinsicOp,
        lambda: llvm.CallIntrinsicOp(name, args, results),
        args,
        results,
        {"intrin": _intrinsic_name(name), "operandSegmentSizes": _segments(len(args), 0)},
    )
