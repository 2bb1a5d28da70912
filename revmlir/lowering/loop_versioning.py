"""Bounds checks hoisted out of counted loops by versioning the loop.

An ``scf.for`` whose body checks indices that are affine in its induction
variable (``x[i]``, ``x[i + c]``, ``x[k·i + c]``, ``x[last − i]`` of a
reversed loop: a constant coefficient ``k``, a loop-invariant ``c``) into
axes of loop-invariant size runs as

    if every such index is in range at i = lb and at i = ub − 1:
        the loop without those checks
    else:
        the loop as it was

(``rev-version-loops`` in native code, ``rev-gpu-outline`` in the code a
kernel runs, for loops with no loop inside them, on the output of
``rev-lower-to-std``).  An affine index takes its extremes at the ends of
the range, so two unsigned comparisons per access before the loop stand for
one per access and iteration; where they fail, the loop that runs is the
checked one, which stops at the same element with the same error as
before.  A check is recognized by what it reports (its entry in the module's
check table is an index out of bounds), not by the shape of its code.

*The invariant part* ``c`` may be any value the body computes from values
defined before the loop by additions, subtractions, products, casts between
64-bit integers, array sizes, integer minima and maxima, and divisions or
remainders by a constant other than zero (``_INVARIANT_OPS``): ADBench's
packed triangle ``icf[ik, d + i·(2d − i − 1) // 2 + j − i − 1]`` is affine
in ``j``.  The precondition computes it again before the loop, which no
such op can make trap; a division by a variable is left out, as it could
divide by zero before the body reports that division.

*Why exactly, with wrapping arithmetic*: the lowered index is computed
modulo 2⁶⁴, so it equals ``k·i + b (mod 2⁶⁴)`` for the invariant ``b`` the
body computes.  The precondition also asks ``lb ≥ −2³¹``, ``ub ≤ 2³¹``,
``|k| < 2³¹`` (so ``k·i`` is exact) and a size of at most 2⁶²; then an end
whose wrapped index is within ``[0, size)`` is exactly that index, and so
is every index between the ends.  ``ub − 1`` rather than the last value the
variable takes avoids a division per loop entry; it is the same bound for
step 1 and only stricter otherwise.

*Why innermost loops only, and a size limit*: each versioned loop doubles
its body, and an outer loop would double the versions of the loops inside
it (GMM's objective: 49 % more LLVM IR with every loop versioned, 24 % with
innermost loops only), while an outer loop's own checks run once per run
of its inner loops; a loop of more than ``MAX_BODY_OPS`` ops stays as it
is.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, IntegerType, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from revmlir.fast_ops import arith_cmpi, arith_constant, binary
from revmlir.ir_utils import clone, nested_ops
from revmlir.lowering.checked_code import DIVISIONS, reported_check, std_size
from revmlir.lowering.std_to_llvm import frame_shape
from revmlir.runtime_checks import CHECKS_ATTR
from revmlir.safety import is_out_of_bounds

MAX_BODY_OPS = 4000
"""The largest loop body (ops, nested ones included, a check counted as its
std form's ops: ``std_size``) that is versioned."""
INDUCTION_LIMIT = 1 << 31
"""The bound on ``|lb|``, ``|ub|`` and ``|k|`` that keeps ``k·i`` exact."""
SIZE_LIMIT = 1 << 62
"""The largest axis size for which an end in range proves the middle."""
_INVARIANT_OPS = (
    arith.ConstantOp,
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.IndexCastOp,
    memref.DimOp,
    arith.MaxSIOp,
    arith.MinSIOp,
    arith.MaxUIOp,
    arith.MinUIOp,
    *DIVISIONS,
)
"""Ops of the body whose results are invariant when their operands are,
and which the precondition may therefore compute before the loop: pure
ops defined for every operand (integers wrap, a signed division by −1
too), and the divisions (``DIVISIONS``) by a constant other than zero
(``_computable``): by another divisor one could trap before the loop
where the body reports its division by zero."""


@dataclass(frozen=True)
class _Access:
    check: Operation
    """The check, in either form (``reported_check``)."""
    index: SSAValue
    size: SSAValue


def _is_64_bit(value: SSAValue) -> bool:
    type = value.type
    return isinstance(type, IndexType) or (isinstance(type, IntegerType) and type.width.data == 64)


def _inside(value: SSAValue, loop: scf.ForOp) -> bool:
    """Whether ``value`` is defined in ``loop``'s body."""
    op = value.owner if isinstance(value.owner, Operation) else value.owner.parent_op()
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False


def _coefficient(value: SSAValue, loop: scf.ForOp) -> int | None:
    """``k`` where ``value`` is ``k·i + b`` (mod 2⁶⁴) for the loop's
    variable ``i`` and an invariant ``b``; ``None`` where it is not."""
    if value is loop.body.block.args[0]:
        return 1
    if not _inside(value, loop):
        return 0
    op = value.owner
    if not isinstance(op, _INVARIANT_OPS) or not _is_64_bit(value) or not _computable(op):
        return None
    found = [_coefficient(operand, loop) for operand in op.operands]
    parts = [p for p in found if p is not None]
    if len(parts) < len(found) or (isinstance(op, arith.IndexCastOp) and not _is_64_bit(op.operands[0])):
        return None
    if isinstance(op, arith.AddiOp):
        return parts[0] + parts[1]
    if isinstance(op, arith.SubiOp):
        return parts[0] - parts[1]
    if isinstance(op, arith.MuliOp):
        if parts[0] and parts[1]:
            return None
        factor = [_constant(operand) for operand, part in zip(op.operands, parts) if not part]
        if parts[0] or parts[1]:
            return None if factor[0] is None else (parts[0] or parts[1]) * factor[0]
        return 0
    return 0 if not any(parts) else (parts[0] if isinstance(op, arith.IndexCastOp) else None)


def _computable(op: Operation) -> bool:
    """Whether ``op`` cannot trap before the loop: a division's divisor is
    a constant other than zero (``b // 2`` of an index ``a + b // 2``)."""
    return not isinstance(op, DIVISIONS) or _constant(op.operands[1]) not in (None, 0)


def _constant(value: SSAValue) -> int | None:
    """The integer ``value`` is, seen through casts between 64-bit types
    and the 64-bit sums, differences and products of constants (the Python
    frontend writes ``-1`` as ``0 − 1``), as a signed 64-bit value."""
    op = value.owner
    if isinstance(op, arith.IndexCastOp) and _is_64_bit(op.operands[0]):
        return _constant(op.operands[0])
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    if isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp) and _is_64_bit(value):
        a, b = (_constant(operand) for operand in op.operands)
        if a is not None and b is not None:
            folded = a + b if isinstance(op, arith.AddiOp) else a - b if isinstance(op, arith.SubiOp) else a * b
            return (folded + (1 << 63)) % (1 << 64) - (1 << 63)
    return None


def _accesses(loop: scf.ForOp, entries: Sequence[str]) -> Iterator[_Access]:
    """The index checks in ``loop`` (nested regions included) whose index
    is affine in its variable and whose size is invariant."""
    for op in loop.body.walk():
        if (found := reported_check(op)) is None:
            continue
        identifier, ok = found
        entry = entries[identifier - 1] if 0 < identifier <= len(entries) else None
        if entry is None or not is_out_of_bounds(entry.split("|", 5)[-1]):
            continue
        compare = ok.owner
        if not isinstance(compare, arith.CmpiOp) or compare.predicate.value.data != 6:  # ult
            continue
        index, size = compare.lhs, compare.rhs
        coefficient = _coefficient(index, loop)
        if coefficient is None or abs(coefficient) >= INDUCTION_LIMIT or _coefficient(size, loop) != 0:
            continue
        yield _Access(op, index, size)


class _Before:
    """Emits the precondition before the loop: invariant values of the body
    computed again there, and indices at either end of the range."""

    def __init__(self, loop: scf.ForOp):
        self.loop = loop

    def insert(self, op: Operation) -> Operation:
        op.location = self.loop.location
        self.loop.parent_block().insert_op_before(op, self.loop)
        return op

    def emit(self, op: Operation) -> SSAValue:
        return self.insert(op).results[0]

    def value(self, value: SSAValue, variable: SSAValue | None, cache: dict[SSAValue, SSAValue]) -> SSAValue:
        """``value`` with the loop's variable replaced by ``variable``."""
        if value is self.loop.body.block.args[0]:
            assert variable is not None
            return variable
        if not _inside(value, self.loop):
            return value
        if (known := cache.get(value)) is None:
            op = value.owner
            assert isinstance(op, Operation)
            operands = [self.value(operand, variable, cache) for operand in op.operands]
            # an invariant op has no regions (``_INVARIANT_OPS``)
            known = cache[value] = self.emit(op.clone_without_regions(dict(zip(op.operands, operands))))
        return known

    def constant(self, value: int, type: IndexType | IntegerType) -> SSAValue:
        return self.emit(arith_constant(value, type))

    def compare(self, lhs: SSAValue, rhs: SSAValue, predicate: str) -> SSAValue:
        return self.emit(arith_cmpi(lhs, rhs, predicate))

    def all(self, conditions: list[SSAValue]) -> SSAValue:
        result = conditions[0]
        for condition in conditions[1:]:
            result = self.emit(binary(arith.AndIOp, result, condition))
        return result


def _checked_range(access: _Access) -> tuple[object, ...]:
    """What an access's precondition compares: its index and the axis it
    indexes (an array read twice, as an adjoint reads ``x[i]``, is checked
    twice in the body, each check with a ``memref.dim`` of its own, and
    once before the loop)."""
    size = access.size.owner
    if isinstance(size, memref.DimOp) and (axis := _constant(size.index)) is not None:
        return (access.index, size.source, axis)
    return (access.index, access.size)


def _version(loop: scf.ForOp, accesses: list[_Access]) -> scf.ForOp:
    before = _Before(loop)
    type = loop.lb.type
    assert isinstance(type, IndexType | IntegerType)
    one = before.constant(1, type)
    last = before.emit(binary(arith.SubiOp, loop.ub, one))
    conditions = [
        before.compare(loop.lb, before.constant(-INDUCTION_LIMIT, type), "sge"),
        before.compare(loop.ub, before.constant(INDUCTION_LIMIT, type), "sle"),
    ]
    invariant: dict[SSAValue, SSAValue] = {}
    for access in {_checked_range(access): access for access in accesses}.values():
        size = before.value(access.size, None, invariant)
        limit = before.constant(SIZE_LIMIT, size.type)
        conditions.append(before.compare(size, limit, "ule"))
        for end in (loop.lb, last):
            index = before.value(access.index, end, dict(invariant))
            conditions.append(before.compare(index, size, "ult"))
    fast = before.all(conditions)
    _hoist_frame_arrays(loop)
    unchecked = clone(loop)
    checks = {access.check for access in accesses}
    for original, copy in zip(list(loop.walk()), list(unchecked.walk()), strict=True):
        if original in checks:
            # a check's first operand is its condition in either form: ``ok``
            # of a ``CheckOp``, ``ok xor true`` of an ``scf.if``
            condition = copy.operands[0]
            copy.detach()
            copy.erase()
            _erase_if_unused(condition, unchecked)
    versions = scf.IfOp(fast, loop.result_types, Region(Block()), Region(Block()))
    before.insert(versions)
    for old, new in zip(loop.results, versions.results, strict=True):
        old.replace_all_uses_with(new)
    loop.detach()
    versions.true_region.block.add_ops([unchecked, scf.YieldOp(*unchecked.results)])
    versions.false_region.block.add_ops([loop, scf.YieldOp(*loop.results)])
    return unchecked


def _hoist_frame_arrays(loop: scf.ForOp) -> None:
    """Move the body's arrays of a size known at compile time before the
    loop, so that its two versions share them.  Their translation allocates
    them once in the function's entry block anyway (``frame_shape``), one
    slot for every iteration; cloned with the body, each was a slot of its
    own, and a kernel's 480,000-byte array took 960,000 bytes of a thread's
    local memory.  Sizes the body gives by constants get constants before
    the loop."""
    block = loop.parent_block()
    assert block is not None
    for alloca in [op for op in loop.body.walk() if isinstance(op, memref.AllocaOp)]:
        type = alloca.memref.type
        assert isinstance(type, MemRefType)
        inner = [(i, v.owner) for i, v in enumerate(alloca.operands) if _inside(v, loop)]
        if frame_shape(type, alloca.dynamic_sizes) is None or any(
            not isinstance(owner, arith.ConstantOp) for _, owner in inner
        ):
            continue
        for index, owner in inner:
            assert isinstance(owner, arith.ConstantOp)
            constant = owner.clone()
            block.insert_op_before(constant, loop)
            alloca.operands[index] = constant.result
        alloca.detach()
        block.insert_op_before(alloca, loop)


def _erase_if_unused(value: SSAValue, loop: scf.ForOp) -> None:
    """Erase what computed a removed check's condition in ``loop``, as far
    as nothing else uses it (``xori``, ``cmpi``, ``memref.dim``, constants)."""
    op = value.owner
    if not isinstance(op, (*_INVARIANT_OPS, arith.XOrIOp, arith.CmpiOp)) or not _inside(value, loop):
        return
    if any(result.uses for result in op.results):
        return
    operands = list(op.operands)
    op.detach()
    op.erase()
    for operand in operands:
        _erase_if_unused(operand, loop)


def version_loop(loop: scf.ForOp, entries: Sequence[str]) -> scf.ForOp | None:
    """Version ``loop`` on its index checks (``entries``: the module's
    check table) if it is innermost, counted in 64 bits, of at most
    ``MAX_BODY_OPS`` ops and checks an affine index; the loop without
    those checks, if it did.  Native code versions every such loop; a GPU
    kernel its grid-stride loop, or else the loops inside that, and in
    either case those of every device function it calls."""
    if not _is_64_bit(loop.lb) or _has_inner_loop(loop) or std_size(loop) > MAX_BODY_OPS:
        return None
    accesses = list(_accesses(loop, entries))
    return _version(loop, accesses) if accesses else None


def _has_inner_loop(loop: scf.ForOp) -> bool:
    return any(isinstance(op, scf.ForOp | scf.WhileOp | scf.ParallelOp) for op in loop.body.walk())


@dataclass(frozen=True)
class LoopVersioningPass(ModulePass):
    """Version counted loops on their index checks (native code: after
    ``rev-lower-to-std``, whose check table tells the index checks apart)."""

    name = "rev-version-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        version_loops(op)


def version_loops(module: ModuleOp, skipped: Collection[str] = ()) -> None:
    """``rev-version-loops`` on ``module``, except in the functions named
    in ``skipped``, whose code is not compiled (``revmlir.runtime.native``
    borrows it from another module)."""
    table = module.attributes.get(CHECKS_ATTR)
    if not isinstance(table, ArrayAttr):
        return
    entries = [e.data if isinstance(e, StringAttr) else "" for e in table.data]
    for function in module.ops:
        if isinstance(function, func.FuncOp) and function.sym_name.data not in skipped:
            version_loops_in(function, entries)


def version_loops_in(op: Operation, entries: Sequence[str]) -> None:
    """``version_loop`` on every counted loop inside ``op`` (``entries``:
    the module's check table); not on ``op`` itself, which the caller has
    tried where it is a loop (a kernel's grid-stride loop)."""
    for loop in [o for o in nested_ops(op)[1:] if isinstance(o, scf.ForOp)]:
        version_loop(loop, entries)
