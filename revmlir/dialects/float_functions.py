"""Float functions of the C library that xDSL's ``arith`` and ``math``
dialects lack: ``arith.remf`` (upstream MLIR's op, LLVM's ``frem``) and
``math.hypot`` (revmlir's own; upstream's ``math`` has no ``hypot``).

Python's float ``%`` and ``//`` are made from ``fmod``, which is exact,
and ``math.hypot`` is a function of its own because ``sqrt(a² + b²)``
overflows above 1e154, underflows below 1e-154 and loses
``hypot(inf, nan) = inf``.  Both are in the dialects of the functions they
sit beside, so that whatever takes an ``arith`` or ``math`` op for a pure
expression (the value model, ``reversibilize``) takes them too; every
engine computes them with the C library's function (``fmod``, ``hypot``;
libdevice's on a GPU)::

    %r = arith.remf %a, %b : f64
    %h = math.hypot %a, %b : f64
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.ir import Dialect
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure


@irdl_op_definition
class RemFOp(arith.FloatingPointLikeBinaryOperation):
    """``fmod(a, b)``: ``a - n·b`` for ``n`` the quotient ``a / b``
    truncated towards zero, with the sign of ``a``; exact (never rounded),
    NaN where ``b`` is 0 or ``a`` infinite."""

    name = "arith.remf"

    traits = traits_def(Pure())


@irdl_op_definition
class HypotOp(math.FloatingPointLikeBinaryMathOperation):
    """``hypot(a, b)``: √(a² + b²) without overflow or underflow of the
    squares, ∞ where either operand is infinite (NaN or not the other)."""

    name = "math.hypot"

    traits = traits_def(Pure())


def arith_dialect() -> Dialect:
    """xDSL's ``arith`` dialect with ``arith.remf``."""
    return Dialect(arith.Arith.name, [*arith.Arith.operations, RemFOp], list(arith.Arith.attributes))


def math_dialect() -> Dialect:
    """xDSL's ``math`` dialect with ``math.hypot``."""
    return Dialect(math.Math.name, [*math.Math.operations, HypotOp], list(math.Math.attributes))
