"""Tangent rules of the pure (upstream) ops, in one table: forward mode's
counterpart of ``revmlir.ad.derivatives``.

An instruction ``y += e(x…)`` updates ``ẏ += ė``; the tangenter sweeps the
expression DAG of ``e`` forward and asks this table, op by op, for the tangent
of the op's result from the tangents of its operands.  A rule receives the
tangenter (to read primal values with ``primal`` — recomputed at the point of
use, like every expression — and to emit arithmetic), the forward op and one
tangent per operand, ``None`` where it is zero (constants, integers, values
that do not depend on float state); at least one is not ``None``.  It returns
the result's tangent, ``None`` for zero.  Rules whose partial is infinite or
``NaN`` at some input apply it with ``revmlir.ad.singular``, so that a zero
tangent contributes exactly 0.

Rules are written once for floats and complex numbers (the tangenter's
arithmetic picks the op from the type): a complex tangent is ``ẋ + iẏ``, so
holomorphic ops multiply it by ``f'(z)`` and the others (``re``, ``abs``,
``angle``, ``conj``) have rules of their own.  Log numbers (``!rev.log<T>``) have tangents with respect to the stored
logarithm, as their gradients do, so ``rev.to_log``/``rev.from_log`` are
``log``/``exp`` here.  The tangent of an element of a float array read with
``memref.load`` is the same element of its shadow tangent array.
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
from revmlir.dialects.primitives import ApplyOp, is_primitive_call, tangent_operands
from revmlir.errors import unsupported_in_forward_mode
from revmlir.interfaces import TangentBuilder
from revmlir.ir_utils import RuleTable
from revmlir.naming import TANGENT_SUFFIX

Dots = Sequence[SSAValue | None]
TangentRule = Callable[[TangentBuilder, Operation, Dots], SSAValue | None]

tangents: RuleTable[TangentRule] = RuleTable()
"""op class → rule.  ``tangents.get(type(op))`` is ``None`` for ops without
a rule."""


def _result(t: TangentBuilder, op: Operation) -> SSAValue:
    return t.primal(op.results[0])


def _operand(t: TangentBuilder, op: Operation, i: int = 0) -> SSAValue:
    return t.primal(op.operands[i])


def _negated(t: TangentBuilder, dot: SSAValue | None) -> SSAValue | None:
    return None if dot is None else t.neg(dot)


def _unary(partial: Callable[[TangentBuilder, Operation], SSAValue]) -> TangentRule:
    """The rule of ``r = f(x)``: ``ṙ = f'(x)·ẋ``."""

    def rule(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
        return t.scaled(dots[0], lambda: partial(t, op))

    return rule


def _singular(denominator: Callable[[TangentBuilder, Operation], SSAValue]) -> TangentRule:
    """The rule of ``r = f(x)`` with ``f'(x) = 1/denominator``, which is
    infinite or ``NaN`` at some ``x``: ``ṙ = ẋ / denominator``, exactly 0
    where ``ẋ`` is (``revmlir.ad.singular``)."""

    def rule(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
        return None if dots[0] is None else over(t, dots[0], denominator(t, op))

    return rule


# -- arith ------------------------------------------------------------------


@tangents(arith.AddfOp, complexd.AddOp)
def _addf(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    return t.sum(*dots)


@tangents(arith.SubfOp, complexd.SubOp)
def _subf(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    return t.sum(dots[0], _negated(t, dots[1]))


@tangents(arith.MulfOp, complexd.MulOp)
def _mulf(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    da, db = dots
    return t.sum(t.scaled(da, lambda: _operand(t, op, 1)), t.scaled(db, lambda: _operand(t, op, 0)))


@tangents(arith.DivfOp, complexd.DivOp)
def _divf(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    # r = a / b:  ṙ = (ȧ − r·ḃ) / b
    da, db = dots
    numerator = t.sum(da, _negated(t, None if db is None else times(t, db, _result(t, op))))
    assert numerator is not None
    return over(t, numerator, _operand(t, op, 1))


@tangents(arith.NegfOp, complexd.NegOp)
def _negf(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    return _negated(t, dots[0])


@tangents(arith.SelectOp)
def _select(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    _, da, db = dots
    da, db = (d if d is not None else t.zero(op.results[0]) for d in (da, db))
    return t.emit(arith.SelectOp(_operand(t, op, 0), da, db))


@tangents(arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp)
def _extremum(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    """The tangent of the operand the result is (the first on ties), as the
    adjoint's rule chooses: the number where ``fmin``'s other operand is
    NaN, the second where the result is NaN."""
    da, db = (d if d is not None else t.zero(op.results[0]) for d in dots)
    first = t.emit(arith.CmpfOp(_operand(t, op, 0), _result(t, op), "oeq"))
    return t.emit(arith.SelectOp(first, da, db))


@tangents(arith.ExtFOp, arith.TruncFOp)
def _convert(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    assert dots[0] is not None
    return t.emit(type(op)(dots[0], op.results[0].type))


# -- math -------------------------------------------------------------------


def _one(t: TangentBuilder, op: Operation) -> SSAValue:
    return t.const(1.0, op.results[0].type)


tangents(math.ExpOp, complexd.ExpOp)(_unary(_result))
tangents(math.ExpM1Op)(_unary(lambda t, op: t.add(_result(t, op), _one(t, op))))
tangents(math.LogOp, complexd.LogOp)(_singular(_operand))
tangents(math.Log1pOp)(_singular(lambda t, op: t.add(_one(t, op), _operand(t, op))))
tangents(math.Log2Op)(_singular(lambda t, op: t.mul(_operand(t, op), t.const(pymath.log(2), op.results[0].type))))
tangents(math.Log10Op)(_singular(lambda t, op: t.mul(_operand(t, op), t.const(pymath.log(10), op.results[0].type))))
# 1 / (2·sqrt x)
tangents(math.SqrtOp, complexd.SqrtOp)(_singular(lambda t, op: t.add(_result(t, op), _result(t, op))))


def _apply(t: TangentBuilder, value: SSAValue, real: type[Operation], complex_op: type[Operation]) -> SSAValue:
    """``f(value)`` with the math op for floats or the complex op."""
    op = complex_op if isinstance(value.type, ComplexType) else real
    return t.emit(op(value))


tangents(math.SinOp, complexd.SinOp)(_unary(lambda t, op: _apply(t, _operand(t, op), math.CosOp, complexd.CosOp)))
tangents(math.CosOp, complexd.CosOp)(
    _unary(lambda t, op: t.neg(_apply(t, _operand(t, op), math.SinOp, complexd.SinOp)))
)
tangents(math.SinhOp)(_unary(lambda t, op: t.emit(math.CoshOp(_operand(t, op)))))
tangents(math.CoshOp)(_unary(lambda t, op: t.emit(math.SinhOp(_operand(t, op)))))


def _one_plus_square(t: TangentBuilder, op: Operation, value: SSAValue, sign: float) -> SSAValue:
    square = t.mul(value, value)
    return t.add(_one(t, op), square) if sign > 0 else t.sub(_one(t, op), square)


# tan' = 1 + tan², tanh' = 1 − tanh², atan' = 1 / (1 + x²)
tangents(math.TanOp, complexd.TanOp)(_unary(lambda t, op: _one_plus_square(t, op, _result(t, op), 1)))
tangents(math.TanhOp, complexd.TanhOp)(_unary(lambda t, op: _one_plus_square(t, op, _result(t, op), -1)))
tangents(math.AtanOp)(_unary(lambda t, op: t.div(_one(t, op), _one_plus_square(t, op, _operand(t, op), 1))))


def _arcsine(t: TangentBuilder, op: Operation) -> SSAValue:
    """sqrt(1 − x²), the reciprocal of asin'"""
    return t.emit(math.SqrtOp(_one_plus_square(t, op, _operand(t, op), -1)))


tangents(math.AsinOp)(_singular(_arcsine))
tangents(math.AcosOp)(_singular(lambda t, op: t.neg(_arcsine(t, op))))


def _erf(t: TangentBuilder, op: Operation) -> SSAValue:
    """2/sqrt(π) · exp(−x²)"""
    x = _operand(t, op)
    gauss = t.emit(math.ExpOp(t.neg(t.mul(x, x))))
    return t.mul(t.const(2 / pymath.sqrt(pymath.pi), op.results[0].type), gauss)


tangents(math.ErfOp)(_unary(_erf))


@tangents(math.FloorOp, math.CeilOp, math.RoundEvenOp)
def _step(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    return None  # piecewise constant


def _sign(t: TangentBuilder, op: Operation, value: SSAValue) -> SSAValue:
    """±1 with the sign of ``value`` (+1 at +0, −1 at −0, as the adjoint)."""
    return t.emit(math.CopySignOp(_one(t, op), value))


tangents(math.AbsFOp)(_unary(lambda t, op: _sign(t, op, _operand(t, op))))


@tangents(math.CopySignOp)
def _copysign(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    # r = |a|·sign(b):  ṙ = sign(a)·sign(b)·ȧ (the sign of b is piecewise constant)
    return t.scaled(
        dots[0],
        lambda: t.mul(_sign(t, op, _operand(t, op, 0)), _sign(t, op, _operand(t, op, 1))),
    )


@tangents(math.PowFOp, complexd.PowOp)
def _pow(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    # r = x^y:  ṙ = y·x^(y−1)·ẋ + r·log x·ẏ, with JAX's values where these are 0·∞
    dx, dy = dots
    x, y = _operand(t, op, 0), _operand(t, op, 1)
    return t.sum(
        None if dx is None else times(t, dx, power.by_base(t, x, y)),
        None if dy is None else times(t, dy, power.by_exponent(t, x, _result(t, op))),
    )


@tangents(math.Atan2Op)
def _atan2(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    # r = atan2(y, x):  ṙ = x/(x² + y²)·ẏ − y/(x² + y²)·ẋ
    dy, dx = dots
    y, x = _operand(t, op, 0), _operand(t, op, 1)
    square = t.add(t.mul(x, x), t.mul(y, y))
    return t.sum(
        None if dy is None else times(t, dy, t.div(x, square)),
        _negated(t, None if dx is None else times(t, dx, t.div(y, square))),
    )


@tangents(HypotOp)
def _hypot(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    # r = hypot(a, b):  ṙ = (a·ȧ + b·ḃ) / r, 0 at the origin, as for the
    # modulus of the complex number a + bi
    da, db = dots
    numerator = t.sum(t.scaled(da, lambda: _operand(t, op, 0)), t.scaled(db, lambda: _operand(t, op, 1)))
    return None if numerator is None else t.div(numerator, nonzero(t, _result(t, op)))


@tangents(RemFOp)
def _remf(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    # r = fmod(a, b) = a − n·b, n the truncated quotient (piecewise constant):
    # ṙ = ȧ − n·ḃ
    da, db = dots
    return t.sum(da, t.scaled(db, lambda: minus_quotient(t, _operand(t, op, 0), _operand(t, op, 1), _result(t, op))))


# -- complex (beyond the holomorphic rules registered with the real ones) ----


@tangents(complexd.ConjOp)
def _conj(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    assert dots[0] is not None
    return t.conj(dots[0])


def _complex(t: TangentBuilder, re: SSAValue, im: SSAValue, type: Attribute) -> SSAValue:
    assert isinstance(type, ComplexType)
    return t.emit(complexd.CreateOp(re, im, type))


@tangents(complexd.CreateOp)
def _create(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    d_re, d_im = (d if d is not None else t.zero(o) for d, o in zip(dots, op.operands))
    return _complex(t, d_re, d_im, op.results[0].type)


@tangents(complexd.ReOp)
def _re(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    assert dots[0] is not None
    return t.emit(complexd.ReOp(dots[0]))


@tangents(complexd.ImOp)
def _im(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    assert dots[0] is not None
    return t.emit(complexd.ImOp(dots[0]))


@tangents(complexd.AbsOp)
def _cabs(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    # r = |z|:  ṙ = Re(conj(z)·ż) / r = (x ẋ + y ẏ) / r, 0 at z = 0 (JAX's)
    assert dots[0] is not None
    product = t.mul(t.conj(_operand(t, op)), dots[0])
    return t.div(t.emit(complexd.ReOp(product)), nonzero(t, _result(t, op)))


@tangents(complexd.AngleOp)
def _angle(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    # r = atan2(y, x):  ṙ = Im(conj(z)/|z|² · ż) = (x ẏ − y ẋ) / |z|²
    assert dots[0] is not None
    z = _operand(t, op)
    modulus = t.emit(complexd.AbsOp(z))
    square = _complex(t, t.mul(modulus, modulus), t.const(0.0, modulus.type), z.type)
    return t.emit(complexd.ImOp(times(t, dots[0], t.div(t.conj(z), square))))


# -- memory -------------------------------------------------------------------


@tangents(memref.LoadOp)
def _load(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    # the tangent of the memref operand is its shadow tangent array
    assert isinstance(op, memref.LoadOp) and dots[0] is not None
    return t.emit(memref.LoadOp.get(dots[0], [t.primal(i) for i in op.indices]))


# -- log-number conversions (tangents of log numbers are w.r.t. the logarithm)


tangents(rev.ToLogOp)(_singular(_operand))
tangents(rev.FromLogOp)(_unary(_result))


# -- fixed-point and tropical numbers (tangents of their real value) ---------


tangents(rev.ToFixedOp, rev.FromFixedOp, rev.ToTropicalOp, rev.FromTropicalOp)(lambda t, op, dots: dots[0])
tangents(rev.FixedAddOp)(_addf)
tangents(rev.FixedSubOp)(_subf)


@tangents(rev.FixedMulOp)
def _fixed_mul(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    da, db = dots
    return t.sum(t.scaled(da, lambda: _real(t, op, 1)), t.scaled(db, lambda: _real(t, op, 0)))


def _real(t: TangentBuilder, op: Operation, i: int) -> SSAValue:
    return t.emit(rev.FromFixedOp(_operand(t, op, i)))


# -- user primitives ----------------------------------------------------------


@tangents(ApplyOp)
def _primitive(t: TangentBuilder, op: Operation, dots: Dots) -> SSAValue | None:
    """A primitive has no body: its tangent rule ``(args…, ȧ…) -> ṙ`` gives
    the tangent of its result, from the tangents of its float scalars and
    the tangent arrays of its float arrays (docs/design.md, decisions 37,
    44 and 53).  Ordinary code (a rule that derived code applies) has a
    derived tangent ``@g.tan``, which returns its result and then the
    tangent (``revmlir.ad.tangent.derive_ordinary_tangents``)."""
    assert isinstance(op, ApplyOp)
    name = op.callee.string_value()
    inputs = [*(t.primal(a) for a in op.args), *tangent_operands(t, op, op.args, dots)]
    result = op.res.types[0]
    if not is_primitive_call(op, name):
        return t.emit_op(ApplyOp(name + TANGENT_SUFFIX, inputs, [result, result])).results[1]
    return t.emit(ApplyOp(op.rule("tangent", unsupported_in_forward_mode), inputs, [result]))
