"""The value model's questions (``revmlir.semantics``), answered once per
class: the answers are ``isinstance``'s, for every number, reference and
marker type, asked again after the class's answer is kept."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    NoneType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i64,
)
from xdsl.ir import Block, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition

from revmlir.dialects import anc, rev
from revmlir.interfaces import ReferenceType, StateType
from revmlir.ir_utils import is_float_type
from revmlir.semantics import is_expression_op, is_reference_type, is_state_type


@irdl_attr_definition
class _Marked(ParametrizedAttribute, TypeAttribute, StateType):
    """A dialect type that says it holds state, as ``rev.log`` does."""

    name = "test.marked"


TYPES = [
    i1,
    i64,
    IndexType(),
    f16,
    bf16,
    f32,
    f64,
    ComplexType(f64),
    rev.LogType(f64),
    MemRefType(f64, [3]),
    anc.StackType(f64),
    FunctionType.from_lists([], []),
    NoneType(),
    _Marked(),
]


@pytest.mark.parametrize("type", TYPES, ids=str)
def test_class_answers_are_isinstances(type):
    for _ in range(2):
        assert is_state_type(type) == isinstance(type, IntegerType | IndexType | ComplexType | AnyFloat | StateType)
        assert is_reference_type(type) == isinstance(type, MemRefType | ReferenceType)
        assert is_float_type(type) == isinstance(type, AnyFloat)


def test_expressions_are_decided_by_class_and_then_by_effects():
    """A state consumer never is one; a load, a pure dialect's op or an op
    without effects is; a store (a write) or a call is not."""
    block = Block(arg_types=[f64, MemRefType(f64, [3]), IndexType()])
    x, array, i = block.args
    ops = {
        arith.AddfOp(x, x): True,
        memref.LoadOp.get(array, [i]): True,
        memref.DimOp(array, i): True,
        memref.StoreOp.get(x, array, [i]): False,
        func.CallOp("g", [x], [f64]): False,
        rev.AddOp(x, x): False,
    }
    for _ in range(2):
        assert {op.name: is_expression_op(op) for op in ops} == {op.name: kept for op, kept in ops.items()}
