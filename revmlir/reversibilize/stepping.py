"""A loop variable stepped as a variable, by the rewrites of ordinary code
that turn an ``scf.for`` into a loop of their own (the resumable form, the
flattening of split loops).

They keep ``i ← i + step`` an addition, which tape mode undoes in place,
and compare the stepped variable with ``ub``: exact unless ``i + step``
passes the top of the loop's type, where it would wrap below ``ub`` and
the loop would never end.  Ending such a loop exactly needs the variable
before the step at the comparison, which the resumable form's repeated
body does not keep, or a select, which tape mode saves in every
iteration; so a step that overflows stops the run with a located error,
on both engines alike, instead (decision 115).  A step that is not
positive is refused where the loop starts, as every loop form refuses it
(``positive``): the overflow test would refuse it after the first
iteration, saying it overflowed."""

from __future__ import annotations

from xdsl.dialects import arith, cf
from xdsl.dialects.builtin import IntegerAttr, StringAttr
from xdsl.ir import Operation, SSAValue

from revmlir.ir_utils import known_positive
from revmlir.safety import STEP_NOT_POSITIVE

INDEX_OVERFLOW = "the loop's index passes the largest value of its type: i + step overflows"


def positive(step: SSAValue, where: Operation) -> list[Operation]:
    """The ops that stop the run at ``where`` unless ``step`` is positive,
    to go before the loop's first iteration: none for a positive constant
    (the frontends' steps)."""
    if known_positive(step):
        return []
    zero = arith.ConstantOp(IntegerAttr(0, step.type))
    above = arith.CmpiOp(step, zero.result, "sgt")
    check = cf.AssertOp(above.result, StringAttr(STEP_NOT_POSITIVE))
    for op in (zero, above, check):
        op.location = where.location
    return [zero, above, check]


def stepped(iv: SSAValue, step: SSAValue, where: Operation) -> tuple[SSAValue, list[Operation]]:
    """``iv + step`` and the ops that compute it, the last a check that it
    did not wrap (``step`` is positive, so it wrapped where it is below
    ``iv``), located at ``where``."""
    added = arith.AddiOp(iv, step)
    grew = arith.CmpiOp(added.result, iv, "sgt")
    check = cf.AssertOp(grew.result, StringAttr(INDEX_OVERFLOW))
    for op in (added, grew, check):
        op.location = where.location
    return added.result, [added, grew, check]
