"""Local derivative rules of the pure (upstream) ops, in one table.

An instruction such as ``y += e(x…)`` sends the gradient of ``y`` into the
expression ``e``; the adjointer sweeps the expression DAG backwards and asks
this table, op by op, for the contributions to the op's operands.  A rule
receives the adjointer (to read primal values at the inverse point with
``primal`` — they are recomputed there, like every expression of the inverse —
and to emit arithmetic), the forward op and ``g``, the gradient of the op's
result; it returns one contribution per operand (``g · ∂result/∂operand``), or
``None`` where no gradient flows (conditions, integer operands, operands that
do not need one: ``sweep.wants(v)``).

Gradients of log numbers (``!rev.log<T>``) are taken with respect to the
stored logarithm, so ``rev.mul``/``rev.div`` behave like ``rev.add``/``rev.sub``
and ``rev.to_log``/``rev.from_log`` are ``log``/``exp`` here.

Ops not in the table are not differentiable: the adjointer reports them at
their location when a gradient has to flow through them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith, math
from xdsl.ir import Operation, SSAValue

from revmlir.dialects import rev
from revmlir.lowering.rules import RuleTable

if TYPE_CHECKING:
    from revmlir.ad.adjoint import Adjointer

Contributions = Sequence[SSAValue | None]
DerivativeRule = Callable[["Adjointer", Operation, SSAValue], Contributions]

derivatives: RuleTable[DerivativeRule] = RuleTable()  # type: ignore[type-var]
"""op class → rule.  ``derivatives.get(type(op))`` is ``None`` for ops without
a rule."""


def _operand(op: Operation, i: int) -> SSAValue:
    return op.operands[i]


# -- arith ------------------------------------------------------------------


@derivatives(arith.AddfOp)
def _addf(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    return [g, g]


@derivatives(arith.SubfOp)
def _subf(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    return [g, d.neg(g) if d.wants(_operand(op, 1)) else None]


@derivatives(arith.MulfOp)
def _mulf(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    a, b = op.operands
    return [
        d.mul(g, d.primal(b)) if d.wants(a) else None,
        d.mul(g, d.primal(a)) if d.wants(b) else None,
    ]


@derivatives(arith.DivfOp)
def _divf(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    # r = a / b:  ∂r/∂a = 1/b,  ∂r/∂b = -a/b² = -r/b
    a, b = op.operands
    q = d.div(g, d.primal(b))
    return [
        q if d.wants(a) else None,
        d.neg(d.mul(q, d.primal(op.results[0]))) if d.wants(b) else None,
    ]


@derivatives(arith.NegfOp)
def _negf(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    return [d.neg(g)]


@derivatives(arith.SelectOp)
def _select(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    cond, a, b = op.operands
    c = d.primal(cond)
    zero = d.const(0.0, g.type)
    return [
        None,
        d.emit(arith.SelectOp(c, g, zero)) if d.wants(a) else None,
        d.emit(arith.SelectOp(c, zero, g)) if d.wants(b) else None,
    ]


# -- math -------------------------------------------------------------------


@derivatives(math.ExpOp)
def _exp(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    return [d.mul(g, d.primal(op.results[0]))]


@derivatives(math.LogOp)
def _log(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    return [d.div(g, d.primal(op.operands[0]))]


@derivatives(math.SqrtOp)
def _sqrt(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    r = d.primal(op.results[0])
    return [d.div(g, d.add(r, r))]


@derivatives(math.SinOp)
def _sin(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    return [d.mul(g, d.emit(math.CosOp(d.primal(op.operands[0]))))]


@derivatives(math.CosOp)
def _cos(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    return [d.neg(d.mul(g, d.emit(math.SinOp(d.primal(op.operands[0])))))]


@derivatives(math.TanOp)
def _tan(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    # 1 + tan²
    r = d.primal(op.results[0])
    return [d.mul(g, d.add(d.const(1.0, g.type), d.mul(r, r)))]


@derivatives(math.TanhOp)
def _tanh(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    # 1 - tanh²
    r = d.primal(op.results[0])
    return [d.mul(g, d.sub(d.const(1.0, g.type), d.mul(r, r)))]


@derivatives(math.PowFOp)
def _powf(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    # r = x^y:  ∂r/∂x = y·x^(y-1) (no division by x, so x = 0 works),
    #           ∂r/∂y = r·log x
    x, y = op.operands
    dx = dy = None
    if d.wants(x):
        px, py = d.primal(x), d.primal(y)
        lowered = d.emit(math.PowFOp(px, d.sub(py, d.const(1.0, g.type))))
        dx = d.mul(g, d.mul(py, lowered))
    if d.wants(y):
        log_x = d.emit(math.LogOp(d.primal(x)))
        dy = d.mul(g, d.mul(d.primal(op.results[0]), log_x))
    return [dx, dy]


@derivatives(math.Atan2Op)
def _atan2(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    # r = atan2(y, x):  ∂r/∂y = x/(x²+y²),  ∂r/∂x = -y/(x²+y²)
    y, x = op.operands
    py, px = d.primal(y), d.primal(x)
    q = d.div(g, d.add(d.mul(px, px), d.mul(py, py)))
    return [
        d.mul(q, px) if d.wants(y) else None,
        d.neg(d.mul(q, py)) if d.wants(x) else None,
    ]


@derivatives(math.AbsFOp)
def _absf(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    # sign(x) (the subgradient +1 at +0, -1 at -0)
    one = d.const(1.0, g.type)
    return [d.mul(g, d.emit(math.CopySignOp(one, d.primal(op.operands[0]))))]


# -- log-number conversions (gradients of log numbers are w.r.t. the logarithm)


@derivatives(rev.ToLogOp)
def _to_log(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    return [d.div(g, d.primal(op.operands[0]))]


@derivatives(rev.FromLogOp)
def _from_log(d: Adjointer, op: Operation, g: SSAValue) -> Contributions:
    return [d.mul(g, d.primal(op.results[0]))]
