"""``arith.remf`` (``fmod``) in native code and GPU kernels: an exact fast
path, the C library's ``fmod`` for the rest.

``fmod`` costs a call of about 25 ns and keeps a loop from vectorising:
``y[i] += x[i] % d`` took 30 ms per 10⁶ elements where the rounded
``a − b·floor(a/b)`` took 1.8.  Where ``a/b`` is finite with
``|a/b| < 2ᵖ`` (``p`` the significand's bits: 53 for a float64, 24 for a
float32) and ``b`` is finite, ``q = trunc(a/b)`` is the truncated
quotient ``n`` or one more in magnitude (``a/b`` rounded up to an
integer), and ``fma(−q, b, a)`` is ``a − q·b`` exactly, because the
remainder is representable: it is ``fmod`` where its sign is ``a``'s, and
``fmod`` less ``b`` (one ``b`` added or taken away) where ``q`` was one
too large.  A zero takes ``a``'s sign, as ``fmod``'s.  Elsewhere (``a`` or
``b`` infinite or NaN, ``b`` zero, a quotient past 2ᵖ) the op stays,
in the other branch of an ``scf.if``, so that the call runs only there.
The interpreter computes ``fmod`` itself; the results are equal bit for
bit (``tests/test_float_functions.py``).
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, math, scf
from xdsl.dialects.builtin import FloatAttr, ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from revmlir.dialects.float_functions import RemFOp
from revmlir.ir_utils import nested_ops

_PRECISION = {16: 11, 32: 24, 64: 53, 80: 64, 128: 113}
"""The significand's bits of a float of each width: below 2 to that power
every integer is a float, so ``trunc(a/b)`` is off by at most one (above
it, a float32 quotient of 3·10⁹ has an ulp of 256)."""


def fast_remainders(module: ModuleOp) -> None:
    """Each ``arith.remf`` of ``module`` as the fast path and ``fmod``."""
    # by exact class (``RemFOp`` has no subclass): every op of a kernel is asked
    for op in [op for op in nested_ops(module) if op.__class__ is RemFOp]:
        a, b = op.lhs, op.rhs
        type = op.result.type
        before = Builder(InsertPoint.before(op))

        def const(value: float) -> SSAValue:
            return before.insert(arith.ConstantOp(FloatAttr(value, type))).result

        quotient = before.insert(arith.DivfOp(a, b)).result
        exact = const(2.0 ** _PRECISION[type.bitwidth])
        small = before.insert(arith.CmpfOp(before.insert(math.AbsFOp(quotient)).result, exact, "olt")).result
        finite = before.insert(arith.CmpfOp(before.insert(math.AbsFOp(b)).result, const(float("inf")), "olt")).result
        fast_block, slow_block = Block(), Block()
        fast = Builder(InsertPoint.at_end(fast_block))
        q = fast.insert(math.TruncOp(quotient)).result
        r = fast.insert(math.FmaOp(fast.insert(arith.NegfOp(q)).result, b, a)).result
        zero = fast.insert(arith.ConstantOp(FloatAttr(0.0, type))).result
        a_negative = fast.insert(arith.CmpfOp(a, zero, "olt")).result
        # q one too large: a nonzero r of the other sign than a
        over = fast.insert(
            arith.AndIOp(
                fast.insert(arith.CmpfOp(r, zero, "une")).result,
                fast.insert(arith.CmpiOp(fast.insert(arith.CmpfOp(r, zero, "olt")).result, a_negative, "ne")).result,
            )
        ).result
        same_signs = fast.insert(arith.CmpiOp(a_negative, fast.insert(arith.CmpfOp(b, zero, "olt")).result, "eq"))
        corrected = fast.insert(
            arith.SelectOp(same_signs, fast.insert(arith.AddfOp(r, b)).result, fast.insert(arith.SubfOp(r, b)).result)
        ).result
        r = fast.insert(arith.SelectOp(over, corrected, r)).result
        # a zero remainder has a's sign (a is finite here)
        signed_zero = fast.insert(arith.MulfOp(zero, a)).result
        r = fast.insert(arith.SelectOp(fast.insert(arith.CmpfOp(r, zero, "oeq")).result, signed_zero, r)).result
        fast.insert(scf.YieldOp(r))
        both = before.insert(arith.AndIOp(small, finite)).result
        branch = before.insert(scf.IfOp(both, [type], Region(fast_block), Region(slow_block)))
        op.result.replace_all_uses_with(branch.results[0])
        op.detach()
        slow_block.add_ops([op, scf.YieldOp(op.result)])
