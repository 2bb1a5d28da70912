"""The complex functions, written once for both engines.

Each function computes a complex op from the real parts of its operands
with the operations of a ``Real`` arithmetic: native code passes one that
emits LLVM instructions (``std_to_llvm``), the interpreter one that computes
Python floats with the same C math library calls (``interpreter.pure``).
One description of every algorithm, run operation for operation alike, is
what makes both engines give the same bits on every input, overflows and
NaNs included, where ``cmath`` and numpy each had their own algorithms
(ulps apart, and ``cmath`` raising where native code gave infinities).

Branches are ``select``s of values both computed, as in native code: the
interpreter computes the unused one too, which cannot raise (IEEE
arithmetic, no exceptions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from xdsl.dialects import complex as complexd
from xdsl.ir import Operation

V = TypeVar("V")

Pair = tuple[V, V]


class Real(Protocol, Generic[V]):
    """Real arithmetic on values ``V``, conditions and integers of the
    engine's own kinds: IEEE doubles (or the operand's float type), the
    ``llvm.*`` intrinsics and C library functions by name."""

    OEQ: int
    OGT: int
    OGE: int
    OLT: int

    def c(self, value: float) -> V: ...
    def add(self, a: V, b: V) -> V: ...
    def sub(self, a: V, b: V) -> V: ...
    def mul(self, a: V, b: V) -> V: ...
    def div(self, a: V, b: V) -> V: ...
    def neg(self, a: V) -> V: ...
    def cmp(self, predicate: int, a: V, b: V) -> Any: ...
    def both(self, first: Any, second: Any) -> Any: ...
    def select(self, condition: Any, a: V, b: V) -> V: ...
    def intrinsic(self, name: str, *args: V) -> V: ...
    def libm(self, name: str, *args: V) -> V: ...
    def integer(self, value: V) -> Any: ...
    def has_bit(self, integer: Any, bit: int) -> Any: ...


def select_pair(r: Real[V], condition: Any, x: Pair[V], y: Pair[V]) -> Pair[V]:
    return r.select(condition, x[0], y[0]), r.select(condition, x[1], y[1])


def absolute(r: Real[V], x: V, y: V) -> V:
    """|x + iy| = hypot(x, y): no spurious overflow, ∞ (not an error) where
    the size itself overflows."""
    return r.libm("hypot", x, y)


def angle(r: Real[V], x: V, y: V) -> V:
    return r.libm("atan2", y, x)


LOG_NEAR_ONE = (0.5, 2.0)
"""Between these |z|, ``log`` takes log |z| from the parts themselves."""


def two_sum(r: Real[V], p: V, q: V) -> Pair[V]:
    """p + q rounded, and what the rounding lost (Knuth's two-sum: exact,
    whatever the operands' sizes, without overflow)."""
    total = r.add(p, q)
    q_part = r.sub(total, p)
    return total, r.add(r.sub(p, r.sub(total, q_part)), r.sub(q, q_part))


def log(r: Real[V], x: V, y: V) -> Pair[V]:
    """log |z| + i arg z.  Near |z| = 1, log |z| is small, and the log of
    hypot(x, y), rounded to 1 or its neighbours, lost it (log(1 + 4·10⁻¹²i)
    has the real part 8·10⁻²⁴, not 0).  Inside ``LOG_NEAR_ONE`` it is
    ½ log1p(|z|² − 1), with |z|² − 1 = x² + y² − 1 summed exactly: each
    square as its rounded value and its error (an ``fma``), the sums'
    errors kept (``two_sum``), so the cancellation near the circle leaves
    the digits that are there (as numpy's ``npy_clog`` does)."""
    size = absolute(r, x, y)
    x2, y2 = r.mul(x, x), r.mul(y, y)
    x2_error, y2_error = r.intrinsic("fma", x, x, r.neg(x2)), r.intrinsic("fma", y, y, r.neg(y2))
    shifted, shift_error = two_sum(r, x2, r.c(-1.0))
    total, total_error = two_sum(r, shifted, y2)
    errors = r.add(r.add(shift_error, total_error), r.add(x2_error, y2_error))
    near_re = r.mul(r.c(0.5), r.libm("log1p", r.add(total, errors)))
    low, high = LOG_NEAR_ONE
    near = r.both(r.cmp(r.OGT, size, r.c(low)), r.cmp(r.OLT, size, r.c(high)))
    return r.select(near, near_re, r.intrinsic("log", size)), angle(r, x, y)


def multiply(r: Real[V], x: Pair[V], y: Pair[V]) -> Pair[V]:
    """(a + ib)(c + id) = (ac − bd) + i(ad + bc), as numpy multiplies."""
    return r.sub(r.mul(x[0], y[0]), r.mul(x[1], y[1])), r.add(r.mul(x[0], y[1]), r.mul(x[1], y[0]))


def divide(r: Real[V], ar: V, ai: V, br: V, bi: V) -> Pair[V]:
    """(ar + i ai) / (br + i bi) by Smith's algorithm, as numpy divides: the
    ratio of the divisor's smaller part to its larger keeps every product in
    range where (a·conj b)/|b|² overflows or underflows ((1+i)/(10⁻²⁰⁰+10⁻²⁰⁰i)
    is 10²⁰⁰, not ∞ + NaN·i); a zero divisor gives (ar/0, ai/0), infinities
    or NaN."""
    one = r.c(1.0)
    size_r, size_i = r.intrinsic("fabs", br), r.intrinsic("fabs", bi)
    real_larger = r.cmp(r.OGE, size_r, size_i)
    ratio = r.div(bi, br)
    scale = r.div(one, r.add(br, r.mul(bi, ratio)))
    by_real = (r.mul(r.add(ar, r.mul(ai, ratio)), scale), r.mul(r.sub(ai, r.mul(ar, ratio)), scale))
    zero = r.cmp(r.OEQ, size_r, r.c(0.0))
    by_real = (r.select(zero, r.div(ar, size_r), by_real[0]), r.select(zero, r.div(ai, size_r), by_real[1]))
    ratio = r.div(br, bi)
    scale = r.div(one, r.add(bi, r.mul(br, ratio)))
    by_imag = (r.mul(r.add(r.mul(ar, ratio), ai), scale), r.mul(r.sub(r.mul(ai, ratio), ar), scale))
    return select_pair(r, real_larger, by_real, by_imag)


EXP_OVERFLOW = 709.0
"""Below ln(DBL_MAX) ≈ 709.78: e^x is finite, one multiplication is exact
enough."""


def exp(r: Real[V], x: V, y: V) -> Pair[V]:
    """e^x (cos y + i sin y): where e^x overflows but a part of the result
    may not (x past ln(DBL_MAX)), as (e^(x/2) cos y) e^(x/2); a real
    argument keeps its imaginary zero (e^1000 is ∞ + 0i, not ∞ + NaN·i)."""
    cos, sin = r.intrinsic("cos", y), r.intrinsic("sin", y)
    scale = r.intrinsic("exp", x)
    half = r.intrinsic("exp", r.mul(r.c(0.5), x))
    large = r.cmp(r.OGT, x, r.c(EXP_OVERFLOW))
    re = r.select(large, r.mul(r.mul(half, cos), half), r.mul(scale, cos))
    im = r.select(large, r.mul(r.mul(half, sin), half), r.mul(scale, sin))
    return re, r.select(r.cmp(r.OEQ, y, r.c(0.0)), y, im)


def expm1(r: Real[V], x: V, y: V) -> Pair[V]:
    """e^z − 1 without the cancellation of ``exp`` near 0: the real part as
    expm1(x) cos y − 2 sin²(y/2) (e^x cos y − 1 exactly, each term computed
    to a few ulps, so the sum is accurate wherever e^z is near 1, at
    z ≈ 2πik too); the imaginary part and what overflows (x past
    ``EXP_OVERFLOW``, where the −1 does not count) as ``exp`` gives them."""
    exp_re, exp_im = exp(r, x, y)
    half_sin = r.intrinsic("sin", r.mul(r.c(0.5), y))
    near = r.sub(r.mul(r.libm("expm1", x), r.intrinsic("cos", y)), r.mul(r.c(2.0), r.mul(half_sin, half_sin)))
    large = r.cmp(r.OGT, x, r.c(EXP_OVERFLOW))
    return r.select(large, r.sub(exp_re, r.c(1.0)), near), exp_im


LOG1P_NEAR = 0.5
"""Below this |z|, log |1 + z| is computed from z itself (1 + z is at
least 1/2 away from 0 there, so nothing cancels)."""


def log1p(r: Real[V], x: V, y: V) -> Pair[V]:
    """log(1 + z) without rounding z into 1 + z: for |z| < ``LOG1P_NEAR``,
    log |1 + z| = ½ log1p(x(2 + x) + y²); otherwise ``log`` of 1 + z, which
    is accurate there and overflows nowhere.  The argument atan2(y, 1 + x)
    keeps y's sign (and its zero)."""
    one, half = r.c(1.0), r.c(0.5)
    shifted = r.add(one, x)
    far_re, arg = log(r, shifted, y)
    near_re = r.mul(half, r.libm("log1p", r.add(r.mul(x, r.add(r.c(2.0), x)), r.mul(y, y))))
    near = r.cmp(r.OLT, absolute(r, x, y), r.c(LOG1P_NEAR))
    return r.select(near, near_re, far_re), arg


def rsqrt(r: Real[V], x: V, y: V) -> Pair[V]:
    """1/√z: ``divide`` of 1 by ``sqrt``, the bits of ``complex.div`` of
    ``complex.sqrt`` (so 1/√0 is ∞ + NaN·i, as 1/(0 + 0i) is)."""
    root_re, root_im = sqrt(r, x, y)
    return divide(r, r.c(1.0), r.c(0.0), root_re, root_im)


def sign(r: Real[V], x: V, y: V) -> Pair[V]:
    """z/|z|, and z itself for z = ±0 ± 0i (signs kept): the parts are
    divided by the larger first, so that |z| of that (between 1 and √2)
    overflows nowhere (sign(10³⁰⁸ + 10³⁰⁸i) is (1 + i)/√2, not 0); where a
    part is infinite, infinite parts count as ±1 and finite ones as ±0
    (sign(∞ − 2i) is 1 − 0i), a NaN stays NaN."""
    infinity = r.c(float("inf"))
    size_x, size_y = r.intrinsic("fabs", x), r.intrinsic("fabs", y)
    larger = r.select(r.cmp(r.OGE, size_x, size_y), size_x, size_y)
    infinite = r.cmp(r.OEQ, larger, infinity)

    def scaled(part: V, size: V) -> V:
        unit = r.select(r.cmp(r.OEQ, size, infinity), r.intrinsic("copysign", r.c(1.0), part), r.mul(r.c(0.0), part))
        return r.select(infinite, unit, r.div(part, larger))

    scaled_x, scaled_y = scaled(x, size_x), scaled(y, size_y)
    size = absolute(r, scaled_x, scaled_y)
    zero = r.cmp(r.OEQ, larger, r.c(0.0))
    return r.select(zero, x, r.div(scaled_x, size)), r.select(zero, y, r.div(scaled_y, size))


def sqrt(r: Real[V], a: V, b: V) -> Pair[V]:
    """The principal root: t = √((|a| + |z|)/2), then (t, b/2t) for a ≥ 0
    and (|b|/2t, ±t) with b's sign otherwise; √0 = (0, b)."""
    half = r.c(0.5)
    size = absolute(r, a, b)
    root = r.intrinsic("sqrt", r.add(r.mul(half, r.intrinsic("fabs", a)), r.mul(half, size)))
    twice = r.add(root, root)
    right = r.cmp(r.OGE, a, r.c(0.0))
    re = r.select(right, root, r.div(r.intrinsic("fabs", b), twice))
    im = r.select(right, r.div(b, twice), r.intrinsic("copysign", root, b))
    zero = r.cmp(r.OEQ, root, r.c(0.0))
    return r.select(zero, r.c(0.0), re), r.select(zero, b, im)


def sin(r: Real[V], a: V, b: V) -> Pair[V]:
    """sin(a + ib) = sin a cosh b + i cos a sinh b."""
    sin, cos = r.intrinsic("sin", a), r.intrinsic("cos", a)
    cosh, sinh = r.libm("cosh", b), r.libm("sinh", b)
    return r.mul(sin, cosh), r.mul(cos, sinh)


def cos(r: Real[V], a: V, b: V) -> Pair[V]:
    """cos(a + ib) = cos a cosh b − i sin a sinh b."""
    sin, cos = r.intrinsic("sin", a), r.intrinsic("cos", a)
    cosh, sinh = r.libm("cosh", b), r.libm("sinh", b)
    return r.mul(cos, cosh), r.neg(r.mul(sin, sinh))


def tanh(r: Real[V], x: V, y: V) -> Pair[V]:
    """tanh(x + iy), Kahan's formula: with s = sinh x, β = 1 + tan²y,
    ρ = √(1 + s²), tanh = (βρs + i tan y) / (1 + βs²); beyond |x| = 22,
    where tanh x rounds to ±1, the imaginary part is 4 sin y cos y e^(−2|x|)."""
    tan, sinh = r.libm("tan", y), r.libm("sinh", x)
    beta = r.add(r.c(1.0), r.mul(tan, tan))
    rho = r.intrinsic("sqrt", r.add(r.c(1.0), r.mul(sinh, sinh)))
    denominator = r.add(r.c(1.0), r.mul(beta, r.mul(sinh, sinh)))
    re = r.div(r.mul(beta, r.mul(rho, sinh)), denominator)
    im = r.div(tan, denominator)
    size = r.intrinsic("fabs", x)
    far = r.cmp(r.OGT, size, r.c(22.0))
    decay = r.intrinsic("exp", r.mul(r.c(-2.0), size))
    far_im = r.mul(r.mul(r.c(4.0), r.intrinsic("sin", y)), r.mul(r.intrinsic("cos", y), decay))
    return r.select(far, r.intrinsic("copysign", r.c(1.0), x), re), r.select(far, far_im, im)


def tan(r: Real[V], a: V, b: V) -> Pair[V]:
    """tan z = −i tanh(iz)."""
    re, im = tanh(r, r.neg(b), a)
    return im, r.neg(re)


POWER_BY_SQUARING = 100
"""numpy raises a complex to an integer power below this by squaring."""


def power(r: Real[V], a: V, b: V, c: V, d: V) -> Pair[V]:
    """(a + ib)^(c + id) as numpy's power: 1 for w = 0; for z = 0, 0 when
    Re w > 0 and NaN otherwise; for an integer w = n, |n| < 100, repeated
    squaring (1/z^|n| by ``divide`` for n < 0), exact where exp(n log z) is
    off by |n log z| ulps; otherwise exp(w log z)."""
    log_size, arg = log(r, a, b)
    result = exp(r, r.sub(r.mul(c, log_size), r.mul(d, arg)), r.add(r.mul(c, arg), r.mul(d, log_size)))
    zero, nan = r.c(0.0), r.c(float("nan"))
    size = r.intrinsic("fabs", c)
    integer = r.both(
        r.both(r.cmp(r.OEQ, d, zero), r.cmp(r.OEQ, r.intrinsic("floor", size), size)),
        r.cmp(r.OLT, size, r.c(float(POWER_BY_SQUARING))),
    )
    bits = r.integer(r.select(integer, size, zero))
    powered, square = (r.c(1.0), zero), (a, b)
    for bit in range(POWER_BY_SQUARING.bit_length()):
        powered = select_pair(r, r.has_bit(bits, bit), multiply(r, powered, square), powered)
        if bit + 1 < POWER_BY_SQUARING.bit_length():
            square = multiply(r, square, square)
    powered = select_pair(r, r.cmp(r.OLT, c, zero), divide(r, r.c(1.0), zero, *powered), powered)
    result = select_pair(r, integer, powered, result)

    def is_zero(x: V, y: V) -> Any:
        return r.both(r.cmp(r.OEQ, x, zero), r.cmp(r.OEQ, y, zero))

    base_zero, exponent_zero = is_zero(a, b), is_zero(c, d)
    vanishing = r.select(r.cmp(r.OGT, c, zero), zero, nan)
    result = select_pair(r, base_zero, (vanishing, vanishing), result)
    return select_pair(r, exponent_zero, (r.c(1.0), zero), result)


UNARY: dict[type[Operation], Callable[[Any, Any, Any], Pair[Any]]] = {
    complexd.LogOp: log,
    complexd.ExpOp: exp,
    complexd.Expm1Op: expm1,
    complexd.Log1pOp: log1p,
    complexd.RsqrtOp: rsqrt,
    complexd.SignOp: sign,
    complexd.SqrtOp: sqrt,
    complexd.SinOp: sin,
    complexd.CosOp: cos,
    complexd.TanhOp: tanh,
    complexd.TanOp: tan,
}
"""The complex functions of one complex operand, by op."""

TO_REAL: dict[type[Operation], Callable[[Any, Any, Any], Any]] = {complexd.AbsOp: absolute, complexd.AngleOp: angle}
"""The real functions of one complex operand, by op."""
