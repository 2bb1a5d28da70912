"""Every op of every revmlir dialect has an inverse rule, is a pure
expression, or is explicitly marked as inverted by its owner.

This is the guard against "could not compute the inverse of this operation"
at run time: adding an op without deciding how it inverts fails here.
"""

import pytest
from xdsl.traits import Pure

from revmlir.dialects import get_all_dialects
from revmlir.dialects.primitives import ReadsItsArrays
from revmlir.interfaces import InvertibleOp, NotInvertible, RuntimeCheckedOp

OURS = ("rev", "anc")


def all_ops():
    dialects = get_all_dialects()
    for name in OURS:
        yield from dialects[name]().operations


@pytest.mark.parametrize("op", list(all_ops()), ids=lambda op: op.name)
def test_every_op_has_an_inverse_rule_or_a_mark(op):
    invertible = issubclass(op, InvertibleOp)
    pure = op.has_trait(Pure) or op.has_trait(ReadsItsArrays)
    marked = op.has_trait(NotInvertible)
    assert [invertible, pure, marked].count(True) == 1, (
        f"{op.name}: invertible={invertible} pure={pure} marked={marked}; "
        "implement InvertibleOp, mark it Pure, or give it NotInvertible(reason)"
    )
    if marked:
        assert op.get_trait(NotInvertible).reason


@pytest.mark.parametrize("op", list(all_ops()), ids=lambda op: op.name)
def test_runtime_checked_ops_describe_their_check(op):
    if issubclass(op, RuntimeCheckedOp):
        assert op.runtime_check()


def test_instruction_inverses_are_involutive():
    from revmlir.dialects.rev import InstructionOp

    for op in all_ops():
        if issubclass(op, InstructionOp):
            assert op.inverse_class().inverse_class() is op, op.name


@pytest.mark.parametrize("op", list(all_ops()), ids=lambda op: op.name)
def test_every_op_has_an_adjoint_rule_or_a_mark(op):
    """The same guard for differentiation: an op has an adjoint rule
    (DifferentiableOp), is a pure expression with a derivative rule in
    revmlir/ad/derivatives.py, or is marked NotDifferentiable(reason)."""
    from revmlir.ad.derivatives import derivatives
    from revmlir.interfaces import DifferentiableOp, NotDifferentiable

    differentiable = issubclass(op, DifferentiableOp)
    rule = (op.has_trait(Pure) or op.has_trait(ReadsItsArrays)) and op in derivatives
    marked = op.has_trait(NotDifferentiable)
    assert [differentiable, rule, marked].count(True) == 1, (
        f"{op.name}: adjoint rule={differentiable} derivative rule={rule} "
        f"marked={marked}; implement DifferentiableOp, add a derivative rule, "
        "or give it NotDifferentiable(reason)"
    )
    if marked:
        assert op.get_trait(NotDifferentiable).reason


def test_every_rule_kind_of_a_primitive_has_a_table_entry():
    """A primitive (rev.extern) is differentiated through the rule functions
    it names: each kind of rule the verifier checks is one a derivative
    table calls for rev.apply."""
    from revmlir.ad.derivatives import derivatives
    from revmlir.ad.tangent_rules import tangents
    from revmlir.dialects.primitives import RULE_KINDS, ApplyOp, InvokeOp
    from revmlir.interfaces import DifferentiableOp, ForwardDifferentiableOp

    tables = {"adjoint": derivatives, "tangent": tangents}
    interfaces = {"adjoint": DifferentiableOp, "tangent": ForwardDifferentiableOp}
    assert set(RULE_KINDS) == set(tables) == set(interfaces)
    for kind in RULE_KINDS:
        assert ApplyOp in tables[kind], kind
        # a primitive that updates arrays is invoked: its rules run from the op's own
        assert issubclass(InvokeOp, interfaces[kind]), kind
