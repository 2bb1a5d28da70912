"""The ops ``revmlir.fast_ops`` builds are the ops their xDSL
constructors build: the same operands, results, properties, attributes,
successors and regions."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, func, llvm, math, memref, scf
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IndexType, IntegerAttr, MemRefType, f32, f64, i1, i32, i64
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import IRDLOperation

from revmlir import fast_ops
from revmlir.dialects import anc, rev

STRUCT = llvm.LLVMStructType.from_type_list([llvm.LLVMPointerType(), i64])
ARGS = Block(arg_types=[f64, f64, i64, i64, i1, IndexType(), MemRefType(f64, [-1]), llvm.LLVMPointerType(), STRUCT])
X, Y, A, B, C, N, ARRAY, PTR, DESCRIPTOR = ARGS.args
FIRST, SECOND = DenseArrayBase.from_list(i64, [0]), DenseArrayBase.from_list(i64, [1])
THEN, ELSE = Block(arg_types=[i64]), Block(arg_types=[f64, f64])
NARROW, SMALL = Block(arg_types=[f32, i32]).args


def _same(fast: Operation, built: Operation) -> None:
    assert type(fast) is type(built)
    assert list(fast.operands) == list(built.operands)
    assert fast.result_types == built.result_types
    assert fast.properties == built.properties
    assert fast.attributes == built.attributes
    assert list(fast.successors) == list(built.successors)
    assert [len(r.blocks) for r in fast.regions] == [len(r.blocks) for r in built.regions]


@pytest.mark.parametrize(
    "fast, built",
    [
        (lambda: fast_ops.arith_constant(3, i64), lambda: arith.ConstantOp(IntegerAttr(3, i64))),
        (lambda: fast_ops.arith_constant(-0.0, f64), lambda: arith.ConstantOp(FloatAttr(-0.0, f64))),
        (lambda: fast_ops.arith_constant(1, i1), lambda: arith.ConstantOp(IntegerAttr(1, i1))),
        (lambda: fast_ops.llvm_constant(2.5, f64), lambda: llvm.ConstantOp(FloatAttr(2.5, f64), f64)),
        (lambda: fast_ops.llvm_constant(7, i32), lambda: llvm.ConstantOp(IntegerAttr(7, i32), i32)),
        (lambda: fast_ops.func_call("g", [X, A], [f64]), lambda: func.CallOp("g", [X, A], [f64])),
        (lambda: fast_ops.arith_cmpi(A, B, "ult"), lambda: arith.CmpiOp(A, B, "ult")),
        (lambda: fast_ops.arith_cmpi(N, N, "sge"), lambda: arith.CmpiOp(N, N, "sge")),
        (lambda: fast_ops.memref_dim(ARRAY, N), lambda: memref.DimOp(ARRAY, N)),
        (lambda: fast_ops.scf_if(C, Region(Block())), lambda: scf.IfOp(C, [], Region(Block()))),
        (lambda: fast_ops.scf_yield(), lambda: scf.YieldOp()),
        (
            lambda: fast_ops.llvm_icmp(A, B, fast_ops.CMPI_PREDICATES["slt"]),
            lambda: llvm.ICmpOp(A, B, IntegerAttr(2, i64)),
        ),
        (lambda: fast_ops.llvm_call("g", [X, A], f64), lambda: llvm.CallOp("g", X, A, return_type=f64)),
        (lambda: fast_ops.llvm_call("h", [], None), lambda: llvm.CallOp("h", return_type=None)),
        (lambda: fast_ops.llvm_branch(THEN, [A]), lambda: llvm.BrOp(THEN, A)),
        (
            lambda: fast_ops.llvm_cond_branch(C, THEN, [A], ELSE, [X, Y]),
            lambda: llvm.CondBrOp(C, THEN, [A], ELSE, [X, Y]),
        ),
    ],
)
def test_a_fast_op_is_the_constructors(fast, built):
    _same(fast(), built())


@pytest.mark.parametrize(
    "kind",
    [
        llvm.AddOp,
        llvm.MulOp,
        llvm.UDivOp,
        llvm.OrOp,
        llvm.FAddOp,
        arith.XOrIOp,
        arith.OrIOp,
        arith.AndIOp,
        arith.AddiOp,
        arith.ShLIOp,
        arith.AddfOp,
        arith.SubfOp,
        arith.MulfOp,
    ],
)
def test_binary_ops_after_the_first_are_the_constructors(kind):
    lhs, rhs = (X, Y) if kind in (llvm.FAddOp, arith.AddfOp, arith.SubfOp, arith.MulfOp) else (A, B)
    for _ in range(2):
        _same(fast_ops.binary(kind, lhs, rhs), kind(lhs, rhs))


@pytest.mark.parametrize(
    "kind, value, type",
    [
        (llvm.SExtOp, C, i64),
        (llvm.ZExtOp, C, i32),
        (llvm.TruncOp, A, i32),
        (llvm.SIToFPOp, A, f64),
        (llvm.FPExtOp, X, f64),
        (llvm.FPTruncOp, X, f32),
        (llvm.BitcastOp, A, f64),
        (arith.SIToFPOp, A, f64),
        (arith.FPToSIOp, X, i64),
        (arith.IndexCastOp, N, i64),
        (arith.TruncIOp, A, i32),
        (arith.TruncFOp, X, f32),
        (arith.BitcastOp, X, i64),
        (arith.ExtSIOp, SMALL, i64),
        (arith.ExtUIOp, C, i64),
        (arith.ExtFOp, NARROW, f64),
    ],
)
def test_casts_after_the_first_are_the_constructors(kind, value, type):
    for _ in range(2):
        _same(fast_ops.cast(kind, value, type), kind(value, type))


@pytest.mark.parametrize(
    "fast, built",
    [
        (
            lambda: fast_ops.llvm_gep(PTR, A, f64),
            lambda: llvm.GEPOp(PTR, [llvm.GEP_USE_SSA_VAL], f64, ssa_indices=[A], inbounds=True),
        ),
        (
            lambda: fast_ops.llvm_gep(PTR, B, i32),
            lambda: llvm.GEPOp(PTR, [llvm.GEP_USE_SSA_VAL], i32, [B], inbounds=True),
        ),
        (lambda: fast_ops.llvm_load(PTR, f64), lambda: llvm.LoadOp(PTR, f64)),
        (lambda: fast_ops.llvm_store(X, PTR), lambda: llvm.StoreOp(X, PTR)),
        (
            lambda: fast_ops.llvm_extract(FIRST, DESCRIPTOR, llvm.LLVMPointerType()),
            lambda: llvm.ExtractValueOp(FIRST, DESCRIPTOR, llvm.LLVMPointerType()),
        ),
        (lambda: fast_ops.llvm_insert(SECOND, DESCRIPTOR, A), lambda: llvm.InsertValueOp(SECOND, DESCRIPTOR, A)),
        (lambda: fast_ops.llvm_undef(STRUCT), lambda: llvm.UndefOp(STRUCT)),
        (lambda: fast_ops.llvm_select(C, X, Y), lambda: llvm.SelectOp(C, X, Y)),
        (
            lambda: fast_ops.llvm_fcmp(X, Y, fast_ops.CMPF_PREDICATES["olt"]),
            lambda: llvm.FCmpOp(X, Y, IntegerAttr(4, i64)),
        ),
        (lambda: fast_ops.llvm_fcmp(X, Y, fast_ops.CMPF_PREDICATES["une"]), lambda: llvm.FCmpOp(X, Y, "une")),
        (lambda: fast_ops.arith_cmpf(X, Y, "oeq"), lambda: arith.CmpfOp(X, Y, "oeq")),
        (lambda: fast_ops.arith_cmpf(X, Y, "ole"), lambda: arith.CmpfOp(X, Y, "ole")),
        (lambda: fast_ops.arith_cmpf(X, Y, "une"), lambda: arith.CmpfOp(X, Y, "une")),
        (lambda: fast_ops.llvm_fneg(X), lambda: llvm.FNegOp(X)),
        (lambda: fast_ops.unary(math.AbsFOp, X), lambda: math.AbsFOp(X)),
        (lambda: fast_ops.arith_select(C, X, Y), lambda: arith.SelectOp(C, X, Y)),
        (lambda: fast_ops.unary(arith.NegfOp, X), lambda: arith.NegfOp(X)),
        (lambda: fast_ops.memref_load(ARRAY, [N]), lambda: memref.LoadOp.get(ARRAY, [N])),
        (lambda: fast_ops.memref_store(X, ARRAY, [N]), lambda: memref.StoreOp.get(X, ARRAY, [N])),
        (lambda: fast_ops.index_cast(N, i64), lambda: arith.IndexCastOp(N, i64)),
        (
            lambda: fast_ops.llvm_intrinsic("llvm.exp.f64", [X], [f64]),
            lambda: llvm.CallIntrinsicOp("llvm.exp.f64", [X], [f64]),
        ),
        (lambda: fast_ops.llvm_intrinsic("llvm.trap", [], []), lambda: llvm.CallIntrinsicOp("llvm.trap", [], [])),
    ],
)
def test_ops_after_the_first_are_the_constructors(fast, built):
    """Each builder learns its class's defaults from the first op it
    builds: the second is built by ``Operation.create``, with the
    arguments' properties in the constructor's order."""
    for _ in range(2):
        op = fast()
        _same(op, built())
        assert list(op.properties) == list(built().properties)


def test_each_op_has_properties_of_its_own():
    """Renaming one call's callee (as the device translation does) leaves
    the others alone."""
    first, second = fast_ops.llvm_call("g", [X], f64), fast_ops.llvm_call("g", [X], f64)
    first.callee = fast_ops.llvm_call("other", [], None).callee
    assert second.callee.string_value() == "g"


def test_predicates_are_numbered_as_the_constructors_number_them():
    """The names the builders take, and the lowering names predicates by,
    mean what xDSL's comparisons mean by them."""
    for name, number in fast_ops.CMPI_PREDICATES.items():
        assert arith.CmpiOp(A, B, name).predicate.value.data == number
    for name, number in fast_ops.CMPF_PREDICATES.items():
        assert arith.CmpfOp(X, Y, name).predicate.value.data == number
    assert sorted(fast_ops.CMPI_PREDICATES.values()) == list(range(10))
    assert sorted(fast_ops.CMPF_PREDICATES.values()) == list(range(16))


@pytest.mark.parametrize(
    "kind, operands, results",
    [
        (rev.AddOp, [X, Y], [f64]),
        (rev.XorOp, [A, B], [i64]),
        (rev.TakeOp, [ARRAY, [N]], [f64]),
        (rev.PutOp, [X, ARRAY, [N]], []),
        (anc.AllocOp, [X], [f64]),
        (anc.FreeOp, [X, Y], []),
    ],
)
def test_ops_initialised_as_created_are_the_irdl_constructors(kind, operands, results):
    """The inverter's and the derivative passes' updates, borrows and
    ancillas (``ir_utils.init_as_created``) are the ops xDSL's IRDL
    constructor builds of the same arguments."""
    built = IRDLOperation.__new__(kind)
    IRDLOperation.__init__(built, operands=operands, result_types=results)
    _same(kind(*operands), built)


def test_memory_ops_read_their_indices_once(monkeypatch: pytest.MonkeyPatch):
    """A load's or a store's indices may be a one-shot iterator, for the
    first op of the class (built by the constructor) and the later ones."""
    monkeypatch.setattr(fast_ops, "_DEFAULT_PROPERTIES", {})
    for _ in range(2):
        assert list(fast_ops.memref_load(ARRAY, iter([N])).operands) == [ARRAY, N]
        assert list(fast_ops.memref_store(X, ARRAY, iter([N])).operands) == [X, ARRAY, N]


@pytest.mark.parametrize(
    "kind, operands, results",
    [
        (rev.AddOp, [A, arith.ConstantOp(IntegerAttr(3, i64))], [i64]),
        (rev.AddOp, [arith.ConstantOp(IntegerAttr(3, i64)), A], [i64]),
        (rev.TakeOp, [ARRAY, N], [f64]),
        (rev.PutOp, [X, ARRAY, N], []),
        (rev.PutOp, [X, ARRAY, [arith.ConstantOp(IntegerAttr(0, IndexType()))]], []),
        (anc.AllocOp, [arith.ConstantOp(FloatAttr(1.0, f64))], [f64]),
    ],
)
def test_ops_initialised_as_created_take_what_the_irdl_constructor_takes(kind, operands, results):
    """An op of one result stands for its value, and a single value for a
    variadic group, as in xDSL's IRDL constructor."""
    built = IRDLOperation.__new__(kind)
    IRDLOperation.__init__(built, operands=operands, result_types=results)
    _same(kind(*operands), built)


def test_an_op_initialised_as_created_that_fails_leaves_its_operands_unused():
    """The operands are all taken before the op uses any: a call refused
    for its third operand (a sequence for a single one, an op of no
    result) leaves the first two as they were."""
    value, ancilla = Block(arg_types=[i64, i64]).args
    with pytest.raises(ValueError, match="anc.free builder"):
        anc.FreeOp(ancilla, [value, value])
    with pytest.raises(ValueError, match="single result"):
        rev.PutOp(value, ARRAY, [N, scf.YieldOp()])
    with pytest.raises(ValueError, match="single result"):
        rev.AddOp(value, scf.YieldOp())
    assert not list(value.uses) and not list(ancilla.uses)
