"""Semantics of the pure upstream ops (arith, math, complex), of the
log-number and tropical conversions and of fixed-point expressions (on the
stored integers, checked by ``normalize``), as one table: op class → Python function.

Floats follow IEEE semantics (division by zero gives ±inf, log(0) gives -inf)
because numpy computes them; the runner evaluates under
``numpy.errstate(all="ignore")``.  Transcendental functions and ``fma`` are
the C math library's (``revmlir.runtime.libm``), which native code calls, so
that both engines agree bit for bit; the complex functions are native
code's algorithms (``complex_numbers``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import arith, ub
from xdsl.dialects import complex as complexd
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    ComplexType,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from revmlir.dialects import rev
from revmlir.dialects.float_functions import HypotOp, RemFOp
from revmlir.interpreter.complex_numbers import COMPLEX_SEMANTICS, single_precision
from revmlir.runtime import libm
from revmlir.runtime.values import int_width, normalize, numpy_dtype, saturated, to_unsigned, wrap_int, wrap_to
from revmlir.safety import (
    DIVISION_BY_ZERO,
    NEGATIVE_POWER,
    NOT_LOG,
    NOT_TROPICAL,
    REMAINDER_BY_ZERO,
    not_fixed,
    shift_out_of_range,
)

Semantics = Callable[..., Any]


def _f(fn: Callable[..., Any]) -> Semantics:
    """A float function evaluated in IEEE double precision by numpy."""
    return lambda op, *args: float(fn(*(np.float64(a) for a in args)))


def _c(name: str, arity: int = 1) -> Semantics:
    """The C math library's ``name``, the function native code calls: its
    single-precision form (``expf``) where the op computes an f32."""
    double, single = libm.function(name, arity), libm.function(name, arity, single=True)

    def run(op: Operation, *args: float) -> float:
        return (single if single_precision(op) else double)(*args)

    return run


def _width(op: Operation) -> int:
    return int_width(op.operands[0].type)


def _unsigned(fn: Callable[[int, int], Any]) -> Semantics:
    """``fn`` of both integer operands read as unsigned."""
    return lambda op, a, b: fn(to_unsigned(a, _width(op)), to_unsigned(b, _width(op)))


def _signed_pair(fn: Callable[[int, int], Any]) -> Semantics:
    """``fn`` of both integer operands read as signed: a value of an
    unsigned type is held from zero (``revmlir.runtime.values``), and a
    signed op reads its bits as two's complement whatever the type says."""
    return lambda op, a, b: fn(wrap_int(a, _width(op)), wrap_int(b, _width(op)))


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        raise InterpretationError(DIVISION_BY_ZERO)
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _floor_div(a: int, b: int) -> int:
    if b == 0:
        raise InterpretationError(DIVISION_BY_ZERO)
    return a // b


def _trunc_rem(a: int, b: int) -> int:
    if b == 0:
        raise InterpretationError(REMAINDER_BY_ZERO)
    return a - b * _trunc_div(a, b)


def _unsigned_rem(a: int, b: int) -> int:
    if b == 0:
        raise InterpretationError(REMAINDER_BY_ZERO)
    return a % b


def _shift(fn: Callable[[int, int, int], int]) -> Semantics:
    """A shift ``fn(value, count, width)`` of a count within the width."""

    def run(op: Operation, a: int, b: int) -> int:
        width = _width(op)
        if not 0 <= b < width:
            raise InterpretationError(shift_out_of_range(width).format(b))
        return fn(a, b, width)

    return run


def _signed(op: Operation, a: int) -> int:
    """The operand read as a signed integer of its width (MLIR's ``extsi``,
    ``sitofp``, ``index_cast``: an ``i1`` true is −1)."""
    return wrap_int(int(a), _width(op))


def _truncated(op: Operation, a: int) -> int:
    """MLIR's ``trunci``: the low bits of the result's width (an ``i1``
    is the low bit, so 2 is false), as native code keeps them."""
    type = op.results[0].type
    assert isinstance(type, IntegerType)
    return wrap_to(type, a)


def _constant(op: arith.ConstantOp) -> Any:
    value = op.value
    if isinstance(value, IntegerAttr | FloatAttr):
        return value.value.data
    raise InterpretationError(f"arith.constant of {value} is not supported")


_CMPI: dict[int, Callable[[int, int, int], bool]] = {
    0: lambda a, b, w: a == b,
    1: lambda a, b, w: a != b,
    2: lambda a, b, w: wrap_int(a, w) < wrap_int(b, w),
    3: lambda a, b, w: wrap_int(a, w) <= wrap_int(b, w),
    4: lambda a, b, w: wrap_int(a, w) > wrap_int(b, w),
    5: lambda a, b, w: wrap_int(a, w) >= wrap_int(b, w),
    6: lambda a, b, w: to_unsigned(a, w) < to_unsigned(b, w),
    7: lambda a, b, w: to_unsigned(a, w) <= to_unsigned(b, w),
    8: lambda a, b, w: to_unsigned(a, w) > to_unsigned(b, w),
    9: lambda a, b, w: to_unsigned(a, w) >= to_unsigned(b, w),
}


def _cmpf(predicate: int, a: float, b: float) -> bool:
    unordered = math.isnan(a) or math.isnan(b)
    ordered_results = {
        1: a == b,
        2: a > b,
        3: a >= b,
        4: a < b,
        5: a <= b,
        6: a != b,
    }
    if predicate == 0:
        return False
    if predicate == 15:
        return True
    if predicate == 7:
        return not unordered
    if predicate == 14:
        return unordered
    if predicate <= 6:
        return not unordered and ordered_results[predicate]
    return unordered or ordered_results[predicate - 7]


def _complex_constant(op: complexd.ConstantOp) -> complex:
    value = op.value
    assert isinstance(value, ArrayAttr)
    re, im = (v.value.data for v in value.data)
    return complex(re, im)


def _bitcast(op: arith.BitcastOp, value: Any) -> Any:
    """The bits of ``value`` in its type read as the result's type, at the
    width both share: ``i32`` 5 is a tiny ``f32``, and a ``ui64`` above
    2^63 is the ``f64`` of its bits (the error slot stores floats this way)."""
    source, target = op.operands[0].type, op.results[0].type
    if isinstance(source, IntegerType) and isinstance(target, IntegerType):
        # at any width (i24, i128: no numpy type), the same bits read with
        # the target's signedness
        return wrap_to(target, value)
    try:
        dtypes = numpy_dtype(source), numpy_dtype(target)
    except (TypeError, KeyError):  # bf16, f80, or a float of a width numpy has no type for
        raise InterpretationError(f"the interpreter cannot bitcast {source} to {target}") from None
    return np.array(value, dtype=dtypes[0]).view(dtypes[1]).item()


def _extremum(smaller: bool, number_wins: bool = False) -> Semantics:
    """``arith.minimumf`` (``smaller``) or ``maximumf``: IEEE 754-2019's
    minimum and maximum, which native code's ``llvm.minimum`` and
    ``llvm.maximum`` are: a NaN operand gives NaN, and ``-0.0`` is below
    ``0.0``.  Not numpy's ``minimum``, which returns the second of two
    equal operands, so ``min(-0.0, 0.0)`` was ``0.0``.  With
    ``number_wins``, ``arith.minnumf`` or ``maxnumf``: its minimumNumber
    and maximumNumber (``llvm.minimumnum``, ``llvm.maximumnum``), where a
    NaN loses to a number, as in numpy's ``fmin`` and ``fmax``; of signed
    zeros, the same rule (numpy's ``fmin`` returns either zero, its
    scalars the first and its arrays the second)."""

    def run(op: Operation, a: float, b: float) -> float:
        if number_wins and math.isnan(a) != math.isnan(b):
            return b if math.isnan(a) else a
        if math.isnan(a) or math.isnan(b):
            return math.nan
        if a == b:  # signed zeros: the one of the sign that is the extremum
            negative = math.copysign(1.0, a) < 0
            return a if negative == smaller else b
        return min(a, b) if smaller else max(a, b)

    return run


_pow = libm.function("pow", 2)


def _fpowi(a: float, b: int) -> float:
    """``pow(a, (double) b)``, as native code computes it."""
    return _pow(a, float(b))


def _fptosi(op: Operation, a: float) -> int:
    """Saturating, as native code's ``llvm.fptosi.sat``: NaN gives 0, values
    beyond the signed range of the result's width its nearest end."""
    half = 1 << (int_width(op.results[0].type) - 1)
    return saturated(a, -half, half - 1)


def _fptoui(op: Operation, a: float) -> int:
    """Saturating, as native code's ``llvm.fptoui.sat``: NaN gives 0, values
    beyond the unsigned range of the result's width its nearest end."""
    return saturated(a, 0, (1 << int_width(op.results[0].type)) - 1)


def _poison(op: ub.PoisonOp) -> Any:
    """Zero, a value poison may be refined to (native code's choice too)."""
    type = op.result.type
    if isinstance(type, IntegerType | IndexType | AnyFloat | ComplexType):
        return 0
    raise InterpretationError(f"a poison {type} has no value to run with")


def _ipowi(op: Operation, a: int, b: int) -> int:
    """``a ** b`` wrapped to the result's width, as native code's
    exponentiation by squaring: computed modulo 2 ** width, so an exponent
    of any size costs its bits, not a number of its digits (``0 ** 0`` is 1)."""
    if b < 0:
        raise InterpretationError(NEGATIVE_POWER.format(a, b))
    return wrap_int(pow(a, b, 1 << _width(op)), _width(op))


def _to_log(log: Semantics) -> Semantics:
    """The logarithm, of a positive, finite real only (``NOT_LOG``)."""

    def run(op: Operation, x: float) -> float:
        if not 0 < x < math.inf:
            raise InterpretationError(NOT_LOG.format(x))
        return log(op, x)

    return run


PURE_SEMANTICS: dict[type[Operation], Semantics] = {
    arith.ConstantOp: _constant,
    arith.AddiOp: lambda op, a, b: a + b,
    arith.SubiOp: lambda op, a, b: a - b,
    arith.MuliOp: lambda op, a, b: a * b,
    arith.DivSIOp: _signed_pair(_trunc_div),
    arith.DivUIOp: _unsigned(_floor_div),
    arith.RemSIOp: _signed_pair(_trunc_rem),
    arith.RemUIOp: _unsigned(_unsigned_rem),
    arith.FloorDivSIOp: _signed_pair(_floor_div),
    arith.CeilDivSIOp: _signed_pair(lambda a, b: -_floor_div(-a, b)),
    arith.MinSIOp: _signed_pair(min),
    arith.MaxSIOp: _signed_pair(max),
    arith.MinUIOp: _unsigned(min),
    arith.MaxUIOp: _unsigned(max),
    arith.CeilDivUIOp: _unsigned(lambda a, b: -_floor_div(-a, b)),
    arith.AndIOp: lambda op, a, b: int(a) & int(b),
    arith.OrIOp: lambda op, a, b: int(a) | int(b),
    arith.XOrIOp: lambda op, a, b: int(a) ^ int(b),
    arith.ShLIOp: _shift(lambda a, b, width: a << b),
    arith.ShRSIOp: _shift(lambda a, b, width: wrap_int(a, width) >> b),
    arith.ShRUIOp: _shift(lambda a, b, width: to_unsigned(a, width) >> b),
    arith.CmpiOp: lambda op, a, b: _CMPI[op.predicate.value.data](a, b, _width(op)),
    arith.CmpfOp: lambda op, a, b: _cmpf(op.predicate.value.data, a, b),
    arith.SelectOp: lambda op, c, a, b: a if c else b,
    arith.AddfOp: _f(np.add),
    arith.SubfOp: _f(np.subtract),
    arith.MulfOp: _f(np.multiply),
    arith.DivfOp: _f(np.divide),
    arith.NegfOp: _f(np.negative),
    arith.MaximumfOp: _extremum(smaller=False),
    arith.MinimumfOp: _extremum(smaller=True),
    arith.MaxnumfOp: _extremum(smaller=False, number_wins=True),
    arith.MinnumfOp: _extremum(smaller=True, number_wins=True),
    arith.IndexCastOp: _signed,
    arith.BitcastOp: _bitcast,
    arith.SIToFPOp: lambda op, a: float(_signed(op, a)),
    arith.UIToFPOp: lambda op, a: float(to_unsigned(a, _width(op))),
    arith.FPToSIOp: _fptosi,
    arith.FPToUIOp: _fptoui,
    arith.ExtFOp: lambda op, a: a,
    arith.TruncFOp: lambda op, a: a,
    arith.ExtSIOp: _signed,
    arith.ExtUIOp: lambda op, a: to_unsigned(a, _width(op)),
    arith.TruncIOp: _truncated,
    mathd.AbsFOp: _f(np.abs),
    mathd.AbsIOp: lambda op, a: abs(a),
    mathd.CtPopOp: lambda op, a: to_unsigned(a, _width(op)).bit_count(),
    mathd.ExpOp: _c("exp"),
    mathd.Exp2Op: _c("exp2"),
    mathd.ExpM1Op: _c("expm1"),
    mathd.LogOp: _c("log"),
    mathd.Log2Op: _c("log2"),
    mathd.Log10Op: _c("log10"),
    mathd.Log1pOp: _c("log1p"),
    mathd.SqrtOp: _f(np.sqrt),
    mathd.RsqrtOp: _f(lambda x: 1.0 / np.sqrt(x)),
    mathd.CbrtOp: _c("cbrt"),
    mathd.SinOp: _c("sin"),
    mathd.CosOp: _c("cos"),
    mathd.TanOp: _c("tan"),
    mathd.AsinOp: _c("asin"),
    mathd.AcosOp: _c("acos"),
    mathd.AtanOp: _c("atan"),
    mathd.Atan2Op: _c("atan2", 2),
    HypotOp: _c("hypot", 2),
    RemFOp: _c("fmod", 2),
    mathd.SinhOp: _c("sinh"),
    mathd.CoshOp: _c("cosh"),
    mathd.TanhOp: _c("tanh"),
    mathd.AsinhOp: _c("asinh"),
    mathd.AcoshOp: _c("acosh"),
    mathd.AtanhOp: _c("atanh"),
    mathd.ErfOp: _c("erf"),
    mathd.PowFOp: _c("pow", 2),
    mathd.FPowIOp: lambda op, a, b: _fpowi(a, b),
    mathd.IPowIOp: _ipowi,
    mathd.FloorOp: _f(np.floor),
    mathd.CeilOp: _f(np.ceil),
    mathd.RoundOp: _c("round"),
    mathd.RoundEvenOp: _f(np.rint),
    mathd.TruncOp: _f(np.trunc),
    mathd.CopySignOp: _f(np.copysign),
    mathd.FmaOp: _c("fma", 3),
    complexd.ConstantOp: _complex_constant,
    complexd.CreateOp: lambda op, re, im: complex(re, im),
    complexd.ReOp: lambda op, z: z.real,
    complexd.ImOp: lambda op, z: z.imag,
    complexd.AddOp: lambda op, a, b: a + b,
    complexd.SubOp: lambda op, a, b: a - b,
    **COMPLEX_SEMANTICS,
    complexd.NegOp: lambda op, z: -z,
    complexd.ConjOp: lambda op, z: z.conjugate(),
    complexd.EqualOp: lambda op, a, b: a == b,
    complexd.NotEqualOp: lambda op, a, b: a != b,
    ub.PoisonOp: _poison,
    rev.ToLogOp: _to_log(_c("log")),
    rev.FromLogOp: _c("exp"),
    rev.ToFixedOp: lambda op, x: _to_fixed(op.results[0].type, x),
    rev.FromFixedOp: lambda op, raw: op.operands[0].type.real(raw),
    rev.FixedAddOp: lambda op, a, b: a + b,
    rev.FixedSubOp: lambda op, a, b: a - b,
    rev.FixedMulOp: lambda op, a, b: (a * b) >> op.results[0].type.fraction.data,
    rev.ToTropicalOp: lambda op, x: _to_tropical(x),
    rev.FromTropicalOp: lambda op, x: x,
}


def _to_fixed(type: rev.FixedType, x: float) -> int:
    raw = type.nearest(x)
    if raw is None:
        raise InterpretationError(not_fixed(type.describe()).format(x))
    return raw


def _to_tropical(x: float) -> float:
    if not math.isfinite(x):
        raise InterpretationError(NOT_TROPICAL.format(x))
    return x


def _make_impl(semantics: Semantics):
    def run(
        self: InterpreterFunctions,
        interpreter: Interpreter,
        op: Operation,
        args: PythonValues,
    ) -> PythonValues:
        return (normalize(op.results[0].type, semantics(op, *args)),)

    return run


def _pure_functions() -> type[InterpreterFunctions]:
    namespace = {
        f"run_{op_type.name}": impl(op_type)(_make_impl(semantics)) for op_type, semantics in PURE_SEMANTICS.items()
    }
    return register_impls(type("PureFunctions", (InterpreterFunctions,), namespace))


PureFunctions = _pure_functions()
