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

Rules whose partial is infinite or ``NaN`` at some input (``sqrt``, ``log``,
``asin`` at their edges, a division by 0) apply it with
``revmlir.ad.singular``, so that a zero gradient contributes exactly 0.

Ops not in the table are not differentiable: the adjointer reports them at
their location when a gradient has to flow through them.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math, memref
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import ComplexType
from xdsl.ir import Attribute, Operation, SSAValue

from revmlir.ad import power
from revmlir.ad.remainder import minus_quotient
from revmlir.ad.singular import nonzero, over, times
from revmlir.dialects import rev
from revmlir.dialects.float_functions import HypotOp, RemFOp
from revmlir.dialects.primitives import ApplyOp, carries_derivative, has_shadow, invoke_rule
from revmlir.errors import unsupported
from revmlir.interfaces import AdjointBuilder
from revmlir.ir_utils import RuleTable

Contributions = Sequence[SSAValue | None]
DerivativeRule = Callable[[AdjointBuilder, Operation, SSAValue], Contributions]

derivatives: RuleTable[DerivativeRule] = RuleTable()
"""op class → rule.  ``derivatives.get(type(op))`` is ``None`` for ops without
a rule."""


def _operand(op: Operation, i: int) -> SSAValue:
    return op.operands[i]


def _conj(d: AdjointBuilder, value: SSAValue) -> SSAValue:
    """The primal ``value``, conjugated if complex: holomorphic rules are
    the real ones with ``ḡz = ḡr · conj(f'(z))`` (NiLang's convention)."""
    return d.conj(d.primal(value))


# -- arith ------------------------------------------------------------------


@derivatives(arith.AddfOp, complexd.AddOp)
def _addf(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [g, g]


@derivatives(arith.SubfOp, complexd.SubOp)
def _subf(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [g, d.neg(g) if d.wants(_operand(op, 1)) else None]


@derivatives(arith.MulfOp, complexd.MulOp)
def _mulf(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    a, b = op.operands
    return [
        d.mul(g, _conj(d, b)) if d.wants(a) else None,
        d.mul(g, _conj(d, a)) if d.wants(b) else None,
    ]


@derivatives(arith.DivfOp, complexd.DivOp)
def _divf(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # r = a / b:  ∂r/∂a = 1/b,  ∂r/∂b = -a/b² = -r/b
    a, b = op.operands
    q = over(d, g, _conj(d, b))
    return [
        q if d.wants(a) else None,
        d.neg(times(d, q, _conj(d, op.results[0]))) if d.wants(b) else None,
    ]


@derivatives(arith.NegfOp, complexd.NegOp)
def _negf(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [d.neg(g)]


@derivatives(arith.SelectOp)
def _select(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    cond, a, b = op.operands
    c = d.primal(cond)
    zero = d.const(0.0, g.type)
    return [
        None,
        d.emit(arith.SelectOp(c, g, zero)) if d.wants(a) else None,
        d.emit(arith.SelectOp(c, zero, g)) if d.wants(b) else None,
    ]


# -- math -------------------------------------------------------------------


@derivatives(math.ExpOp, complexd.ExpOp)
def _exp(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [d.mul(g, _conj(d, op.results[0]))]


@derivatives(math.LogOp, complexd.LogOp)
def _log(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [over(d, g, _conj(d, op.operands[0]))]


@derivatives(math.SqrtOp, complexd.SqrtOp)
def _sqrt(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    r = _conj(d, op.results[0])
    return [over(d, g, d.add(r, r))]


def _apply(d: AdjointBuilder, value: SSAValue, real: type[Operation], complex_op: type[Operation]) -> SSAValue:
    """``f(value)`` with the math op for floats or the complex op."""
    op = complex_op if isinstance(value.type, ComplexType) else real
    return d.emit(op(value))


@derivatives(math.SinOp, complexd.SinOp)
def _sin(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    x = d.primal(op.operands[0])
    return [d.mul(g, d.conj(_apply(d, x, math.CosOp, complexd.CosOp)))]


@derivatives(math.CosOp, complexd.CosOp)
def _cos(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    x = d.primal(op.operands[0])
    return [d.neg(d.mul(g, d.conj(_apply(d, x, math.SinOp, complexd.SinOp))))]


@derivatives(math.TanOp, complexd.TanOp)
def _tan(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # 1 + tan²
    r = _conj(d, op.results[0])
    return [d.mul(g, d.add(d.const(1.0, g.type), d.mul(r, r)))]


@derivatives(math.TanhOp, complexd.TanhOp)
def _tanh(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # 1 - tanh²
    r = _conj(d, op.results[0])
    return [d.mul(g, d.sub(d.const(1.0, g.type), d.mul(r, r)))]


@derivatives(math.ExpM1Op)
def _expm1(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    r = d.primal(op.results[0])
    return [d.mul(g, d.add(r, d.const(1.0, g.type)))]


@derivatives(math.Log1pOp)
def _log1p(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [over(d, g, d.add(d.primal(op.operands[0]), d.const(1.0, g.type)))]


@derivatives(math.Log2Op, math.Log10Op)
def _log_base(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    base = 2.0 if isinstance(op, math.Log2Op) else 10.0
    scale = d.const(pymath.log(base), g.type)
    return [over(d, g, d.mul(d.primal(op.operands[0]), scale))]


def _one_minus_square_root(d: AdjointBuilder, x: SSAValue) -> SSAValue:
    """``sqrt(1 - x²)``, the denominator of asin' and acos'."""
    px = d.primal(x)
    return d.emit(math.SqrtOp(d.sub(d.const(1.0, px.type), d.mul(px, px))))


@derivatives(math.AsinOp)
def _asin(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [over(d, g, _one_minus_square_root(d, op.operands[0]))]


@derivatives(math.AcosOp)
def _acos(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [d.neg(over(d, g, _one_minus_square_root(d, op.operands[0])))]


@derivatives(math.AtanOp)
def _atan(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    x = d.primal(op.operands[0])
    return [d.div(g, d.add(d.const(1.0, g.type), d.mul(x, x)))]


@derivatives(math.SinhOp)
def _sinh(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [d.mul(g, d.emit(math.CoshOp(d.primal(op.operands[0]))))]


@derivatives(math.CoshOp)
def _cosh(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [d.mul(g, d.emit(math.SinhOp(d.primal(op.operands[0]))))]


@derivatives(math.ErfOp)
def _erf(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # 2/√π · exp(-x²)
    x = d.primal(op.operands[0])
    bell = d.emit(math.ExpOp(d.neg(d.mul(x, x))))
    return [d.mul(g, d.mul(d.const(2.0 / pymath.sqrt(pymath.pi), g.type), bell))]


@derivatives(math.FloorOp, math.CeilOp, math.RoundEvenOp)
def _step(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [None]  # piecewise constant


@derivatives(math.CopySignOp)
def _copysign(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # r = |a|·sign(b):  ∂r/∂a = sign(a)·sign(b) = copysign(1, a)·copysign(1, b)
    a, b = (d.primal(v) for v in op.operands)
    one = d.const(1.0, g.type)
    sign = d.mul(d.emit(math.CopySignOp(one, a)), d.emit(math.CopySignOp(one, b)))
    return [d.mul(g, sign), None]


@derivatives(arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp)
def _extremum(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # the gradient goes to the operand that was chosen (the first one on ties)
    a, b = op.operands
    chosen = d.emit(arith.CmpfOp(d.primal(a), d.primal(op.results[0]), "oeq"))
    zero = d.const(0.0, g.type)
    return [
        d.emit(arith.SelectOp(chosen, g, zero)) if d.wants(a) else None,
        d.emit(arith.SelectOp(chosen, zero, g)) if d.wants(b) else None,
    ]


@derivatives(arith.ExtFOp, arith.TruncFOp)
def _float_cast(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    source = op.operands[0].type
    cast = arith.TruncFOp if isinstance(op, arith.ExtFOp) else arith.ExtFOp
    return [d.emit(cast(g, source))]


@derivatives(math.PowFOp, complexd.PowOp)
def _pow(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # r = x^y:  ∂r/∂x = y·x^(y−1),  ∂r/∂y = r·log x, with JAX's values where these are 0·∞
    x, y = op.operands
    px, py = d.primal(x), d.primal(y)
    return [
        times(d, g, d.conj(power.by_base(d, px, py))) if d.wants(x) else None,
        times(d, g, d.conj(power.by_exponent(d, px, d.primal(op.results[0])))) if d.wants(y) else None,
    ]


@derivatives(math.Atan2Op)
def _atan2(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # r = atan2(y, x):  ∂r/∂y = x/(x²+y²),  ∂r/∂x = -y/(x²+y²)
    y, x = op.operands
    py, px = d.primal(y), d.primal(x)
    q = over(d, g, d.add(d.mul(px, px), d.mul(py, py)))
    return [
        d.mul(q, px) if d.wants(y) else None,
        d.neg(d.mul(q, py)) if d.wants(x) else None,
    ]


@derivatives(HypotOp)
def _hypot(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # r = hypot(a, b):  ∂r/∂a = a/r,  ∂r/∂b = b/r, 0 at the origin, as for
    # the modulus of the complex number a + bi
    q = d.div(g, nonzero(d, d.primal(op.results[0])))
    return [d.mul(q, d.primal(v)) if d.wants(v) else None for v in op.operands]


@derivatives(RemFOp)
def _remf(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # r = fmod(a, b) = a − n·b, n the truncated quotient (piecewise constant):
    # ∂r/∂a = 1,  ∂r/∂b = −n
    a, b = op.operands
    partial = minus_quotient(d, d.primal(a), d.primal(b), d.primal(op.results[0])) if d.wants(b) else None
    return [g, None if partial is None else d.mul(g, partial)]


@derivatives(math.AbsFOp)
def _absf(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # sign(x) (the subgradient +1 at +0, -1 at -0)
    one = d.const(1.0, g.type)
    return [d.mul(g, d.emit(math.CopySignOp(one, d.primal(op.operands[0]))))]


# -- complex (beyond the holomorphic rules registered with the real ones) ----


@derivatives(complexd.ConjOp)
def _conj_rule(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # conj flips the sign of ∂L/∂y
    return [d.conj(g)]


@derivatives(complexd.CreateOp)
def _create(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    re, im = op.operands
    return [
        d.emit(complexd.ReOp(g)) if d.wants(re) else None,
        d.emit(complexd.ImOp(g)) if d.wants(im) else None,
    ]


def _complex(d: AdjointBuilder, re: SSAValue, im: SSAValue, type: Attribute) -> SSAValue:
    assert isinstance(type, ComplexType)
    return d.emit(complexd.CreateOp(re, im, type))


@derivatives(complexd.ReOp)
def _re(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [_complex(d, g, d.const(0.0, g.type), op.operands[0].type)]


@derivatives(complexd.ImOp)
def _im(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [_complex(d, d.const(0.0, g.type), g, op.operands[0].type)]


def _parts(d: AdjointBuilder, z: SSAValue) -> tuple[SSAValue, SSAValue]:
    value = d.primal(z)
    return d.emit(complexd.ReOp(value)), d.emit(complexd.ImOp(value))


@derivatives(complexd.AbsOp)
def _cabs(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # r = |z|:  ∂r/∂x = x/r,  ∂r/∂y = y/r, 0 at z = 0 (JAX's)
    x, y = _parts(d, op.operands[0])
    q = d.div(g, nonzero(d, d.primal(op.results[0])))
    return [_complex(d, d.mul(q, x), d.mul(q, y), op.operands[0].type)]


@derivatives(complexd.AngleOp)
def _angle(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # r = atan2(y, x):  ∂r/∂x = -y/|z|²,  ∂r/∂y = x/|z|²
    x, y = _parts(d, op.operands[0])
    q = over(d, g, d.add(d.mul(x, x), d.mul(y, y)))
    return [_complex(d, d.neg(d.mul(q, y)), d.mul(q, x), op.operands[0].type)]


# -- memory -------------------------------------------------------------------


@derivatives(memref.LoadOp)
def _load(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # a leaf of the expression: the element's gradient lives in the shadow array
    assert isinstance(op, memref.LoadOp)
    d.add_to_element(op.memref, op.indices, g)
    return [None] * len(op.operands)


# -- log-number conversions (gradients of log numbers are w.r.t. the logarithm)


@derivatives(rev.ToLogOp)
def _to_log(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [over(d, g, d.primal(op.operands[0]))]


@derivatives(rev.FromLogOp)
def _from_log(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return [d.mul(g, d.primal(op.results[0]))]


# -- fixed-point and tropical numbers (gradients w.r.t. their real value) ----


@derivatives(rev.ToFixedOp, rev.FromFixedOp, rev.ToTropicalOp, rev.FromTropicalOp)
def _same_real(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # rounding to the fixed-point grid is differentiated as the identity
    return [g]


@derivatives(rev.FixedAddOp)
def _fixed_add(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return _addf(d, op, g)


@derivatives(rev.FixedSubOp)
def _fixed_sub(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    return _subf(d, op, g)


@derivatives(rev.FixedMulOp)
def _fixed_mul(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    # the real product's rule: the rounding is not differentiated
    a, b = op.operands
    return [
        d.mul(g, _real(d, b)) if d.wants(a) else None,
        d.mul(g, _real(d, a)) if d.wants(b) else None,
    ]


def _real(d: AdjointBuilder, value: SSAValue) -> SSAValue:
    return d.emit(rev.FromFixedOp(d.primal(value)))


# -- user primitives ----------------------------------------------------------


@derivatives(ApplyOp)
def _primitive(d: AdjointBuilder, op: Operation, g: SSAValue) -> Contributions:
    """A primitive has no body: its adjoint rule ``(args…, ḡ) -> (ḡa…)``
    gives the gradients of its float arguments (docs/design.md, decision 37)."""
    assert isinstance(op, ApplyOp)
    rule = op.rule("adjoint", unsupported)
    if any(has_shadow(a.type) for a in op.args):
        # the rule adds to the shadows of the arrays: an invoke, which
        # sweeps the scalars' gradients into their expressions itself
        invoke_rule(d, rule, op.args, [g])
        return [None] * len(op.args)
    inputs = [d.primal(a) for a in op.args]
    gradients = iter(d.emit_op(ApplyOp(rule, [*inputs, g], op.derivative_types())).results)
    return [next(gradients) if carries_derivative(a.type) else None for a in op.args]
