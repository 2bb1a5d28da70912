"""``rev-lower-to-std``: reversible functions as ordinary func/scf/arith/math/
memref/complex code, the input of every native backend.

Before lowering, the pass removes the ops that only exist to describe
reversibility: routines are expanded, ``rev.inv`` regions and every function
that is run backwards (``rev.uncall``) are inverted, so only forward code is
left.  State values simply become SSA values; log numbers become their
logarithm; borrowed elements become loads and stores.

Run-time checks become explicit code that reports through an *error slot*:
every lowered function takes a trailing ``memref<6xi64>``; a failing check
calls the module's ``revmlir.report`` with its id and the values it saw
(``revmlir.runtime_checks``: four words, a complex number's two parts
each), which stores them there and calls ``revmlir.fail``, which does not
return: native code jumps back to the entry point the call
came in by (``revmlir.runtime.guard``), so nothing runs after the first
failure, however deep in loops and calls it happens.  Besides the
reversibility checks, every array access, integer division and shift is
checked (``revmlir.safety``), whatever ``nocheck`` says.  The module
attribute ``rev.checks`` maps ids (1-based) to ``error|op|location|function|
payload kinds|message`` so a caller can raise the same error the interpreter
would, at the right source location and in the function that failed.

Stacks become ``memref<3xi64>`` headers in the frame and calls of a small
runtime that ``convert-std-to-llvm`` defines (``revmlir.lowering.stacks``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from math import prod

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, cf, func, math, memref, printf, scf
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    ComplexType,
    DenseArrayBase,
    FlatSymbolRefAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from revmlir.checkpoint.cursor import SCHEMES
from revmlir.collector import take_apart
from revmlir.dialects import anc, rev
from revmlir.dialects.ad import FunctionRequestOp, NextOp
from revmlir.dialects.float_functions import HypotOp
from revmlir.dialects.primitives import ARRAYS_ATTR, DIFFERENT_LENGTHS, ApplyOp, ExternOp, InvokeOp
from revmlir.dialects.upstream_forms import AtomicRMWOp, ParallelOp
from revmlir.errors import SOURCE_OP_ATTR, ExecutionError, InversionError, describe_op
from revmlir.expansion import backward_region, forward_only
from revmlir.fast_ops import arith_cmpf, arith_cmpi, arith_select, binary, cast, memref_load, memref_store, unary
from revmlir.inversion import derive_inverse
from revmlir.ir_utils import (
    RuleTable,
    constant_index,
    constant_shape,
    is_float_type,
    known_positive,
    nested_ops,
)
from revmlir.lowering import cursor_functions, numbers, stacks
from revmlir.lowering.checked_code import CheckedCode, define_fail
from revmlir.lowering.host_safety import check_pushes
from revmlir.lowering.native_types import FRAME_ARRAY_BYTES, element_bytes, shown_kind
from revmlir.lowering.printing import lower_print
from revmlir.lowering.remainder import fast_remainders
from revmlir.naming import DERIVED_INVERSE_ATTR, RUNTIME_PREFIX, inverse_name
from revmlir.parallel import accumulated_arrays, shared_arguments
from revmlir.runtime_checks import (
    ANCILLA_FREED,
    CHECKS_ATTR,
    DEFAULT_TOLERANCE,
    ERROR_SLOT,
    FINITE_ARGUMENTS_ATTR,
    POPPED_OTHER,
    STACK_ARGUMENTS_ATTR,
    CheckTable,
    array_freed,
    borrowed_element,
    freed_element,
    literal_template,
    shape_mismatch,
    shown_indices,
)
from revmlir.safety import (
    EMPTY_STACK,
    NONPOSITIVE_STEP,
    STACK_NOT_GROWN,
)
from revmlir.semantics import is_expression_op
from revmlir.verifier import check_snapshots


def std_type(type: Attribute) -> Attribute:
    """The type a rev value has after lowering (log numbers are their log,
    fixed-point numbers the integer they store, tropical numbers their real,
    stacks their header)."""
    if isinstance(type, anc.StackType):
        return stacks.HEADER
    if isinstance(type, rev.FixedType):
        return IntegerType(type.width.data)
    return type.element_type if isinstance(type, rev.LogType | rev.TropicalType) else type


def stack_element(type: Attribute) -> Attribute:
    """The lowered type of a stack's elements."""
    assert isinstance(type, anc.StackType)
    return std_type(type.element_type)


# ---------------------------------------------------------------------------
# Preparation: leave only forward code
# ---------------------------------------------------------------------------


def check_reserved_names(module: ModuleOp) -> None:
    """Refuse, at its op, a function of the program named like the runtime's
    functions, which lowering adds to the same module (host and device code
    alike): it would take the place of one of them."""
    for function in module.ops:
        if isinstance(function, rev.FuncOp | func.FuncOp) and function.body.blocks:
            name = function.sym_name.data
            if name.startswith(RUNTIME_PREFIX):
                raise PassFailedException(
                    f"{describe_op(function)}: @{name} has a name reserved for revmlir's runtime functions "
                    f"(names starting with '{RUNTIME_PREFIX}'): rename it"
                )


def _materialize_uncalled_inverses(module: ModuleOp) -> dict[Operation, str]:
    """Each ``rev.uncall @f`` becomes ``rev.call @f.inv``, adding ``@f.inv``.
    An uncall of a function the inverter cannot invert stays, to fail where
    a run reaches it (``_uncall``); the inverter's reason is returned, per
    such uncall."""
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, rev.FuncOp)}
    reasons: dict[str, str] = {}
    no_inverse: dict[Operation, str] = {}
    pending = True
    while pending:
        pending = False
        for op in nested_ops(module):
            if not isinstance(op, rev.UncallOp) or op in no_inverse:
                continue
            name = op.callee.string_value()
            target = inverse_name(name)
            if target not in funcs:
                try:
                    inverse = derive_inverse(funcs[name], target) if name not in reasons else None
                except InversionError as error:
                    reasons[name] = str(error)
                    inverse = None
                if inverse is None:
                    no_inverse[op] = reasons[name]
                    continue
                module.body.block.add_op(inverse)
                funcs[target] = inverse
                pending = True
            call = rev.CallOp(target, list(op.args))
            call.attributes.update(op.attributes)
            call.attributes[SOURCE_OP_ATTR] = StringAttr(op.name)
            call.location = op.location
            Rewriter.replace_op(op, call)
    return no_inverse


def _regions_without_inverse(module: ModuleOp) -> dict[Operation, str]:
    """The inverter's reason for each ``rev.inv`` and ``rev.routine`` that
    ``forward_only`` left (``_region_without_inverse``), asked before
    ``declare_primitives`` renames the primitives they invoke, so that the
    message names them as the interpreter's does."""
    no_inverse: dict[Operation, str] = {}
    for op in nested_ops(module):
        if isinstance(op, rev.InvOp | rev.RoutineOp):
            try:
                backward_region(op)
            except InversionError as error:
                no_inverse[op] = str(error)
    return no_inverse


# ---------------------------------------------------------------------------
# Lowering
# ---------------------------------------------------------------------------

Lowering = Callable[["FunctionLowering", Operation], None]
lowers: RuleTable[Lowering] = RuleTable()


class FunctionLowering(CheckedCode):
    """Translates one ``rev.func`` into a ``func.func``."""

    def __init__(
        self,
        source: rev.FuncOp,
        checks: CheckTable,
        tolerance: float,
        runtime: dict[str, func.FuncOp],
        shared: frozenset[int],
        no_inverse: Mapping[Operation, str],
        check_ops: bool = False,
    ):
        self.source = source
        self.tolerance = tolerance
        self.no_inverse = no_inverse
        """Why each op left in the source that runs something backwards
        (an uncall, a ``rev.inv``, a routine) finds no inverse
        (``_materialize_uncalled_inverses``, ``_regions_without_inverse``)."""
        self.mapping: dict[SSAValue, SSAValue] = {}
        self.borrows: list[tuple[SSAValue, list[SSAValue], rev.TakeOp]] = []
        self.atomic: dict[Operation, _SharedElement] = {}
        """The updates and puts of shared accumulations in parallel loops,
        with the element they update (``_take`` fills it in)."""
        entry = source.body.block.args
        self.shared_arrays: list[set[SSAValue]] = [{entry[k] for k in shared}]
        """The arguments at positions ``shared`` (``shared_arguments``: the
        iterations of a parallel loop may be accumulating into them at once),
        then per parallel loop being lowered (outermost first): the arrays
        its iterations accumulate into at shared elements."""
        self.heap_arrays: dict[SSAValue, SSAValue | None] = {}
        """Ancilla arrays that may be on the heap, which their free releases:
        always (None) or when an ``i1`` says so."""
        self.checked_ahead: set[Operation] = set()
        """Frees whose check an earlier free of their run made (``_free``)."""
        arg_types = [std_type(t) for t in source.function_type.inputs.data]
        self.block = Block(arg_types=[*arg_types, ERROR_SLOT])
        self.block.args[-1].name_hint = "err"
        super().__init__(
            source,
            checks,
            runtime,
            self.block.args[-1],
            Builder(InsertPoint.at_end(self.block)),
            check_ops,
        )

    def lower(self) -> func.FuncOp:
        entry = self.source.body.block
        for old, new in zip(entry.args, self.block.args):
            new.name_hint = old.name_hint
            self.mapping[old] = new
        self.lower_ops(entry)
        inputs = [a.type for a in self.block.args]
        outputs = [std_type(t) for t in self.source.function_type.outputs.data]
        lowered = func.FuncOp(self.source.sym_name.data, (inputs, outputs), Region(self.block))
        lowered.location = self.source.location
        if (derived := self.source.attributes.get(DERIVED_INVERSE_ATTR)) is not None:
            lowered.attributes[DERIVED_INVERSE_ATTR] = derived
        # dense arrays: attributes upstream MLIR's parser reads
        inputs = self.source.function_type.inputs.data
        if finite := [i for i, t in enumerate(inputs) if isinstance(t, rev.LogType | rev.TropicalType)]:
            lowered.attributes[FINITE_ARGUMENTS_ATTR] = DenseArrayBase.from_list(i64, finite)
        stacked = [element_bytes(t.element_type) if isinstance(t, anc.StackType) else 0 for t in inputs]
        if any(stacked):
            lowered.attributes[STACK_ARGUMENTS_ATTR] = DenseArrayBase.from_list(i64, stacked)
        return lowered

    # -- helpers used by the rules ------------------------------------------------

    def get(self, value: SSAValue) -> SSAValue:
        return self.mapping[value]

    def set(self, old: SSAValue, new: SSAValue) -> None:
        if old.name_hint and not new.name_hint:
            new.name_hint = old.name_hint
        self.mapping[old] = new

    def lower_ops(self, block: Block) -> None:
        for op in block.ops:
            if is_expression_op(op) and type(op) not in lowers:
                self._clone_expression(op)
                continue
            rule = _accumulate if op in self.atomic else lowers.get(type(op))
            if rule is None:
                raise PassFailedException(f"{describe_op(op)} cannot be lowered to std")
            rule(self, op)

    def _clone_expression(self, op: Operation) -> None:
        if isinstance(op, memref.LoadOp):
            self.check_indices(op, self.get(op.memref), [self.get(i) for i in op.indices])
            self._check_borrowed_read(op, op.memref, list(op.indices))
        self.check_arithmetic(op)
        if any(isinstance(r.type, rev.LogType) for r in op.results):
            raise PassFailedException(f"{describe_op(op)} computes a log number; only rev.to_log can")
        # an expression has no regions (``is_expression_op``): its copy is
        # one op, whose results the copy maps in ``self.mapping`` itself
        self.emit(op.clone_without_regions(self.mapping), op)

    def lower_region(
        self, region: Region, args: Sequence[SSAValue], terminator: Callable[[list[SSAValue]], Operation]
    ) -> Region:
        """A new single-block region: ``region``'s block arguments are bound to
        ``args``; ``terminator`` receives what the region yields."""
        block = Block()
        saved = self.builder.insertion_point
        self.builder.insertion_point = InsertPoint.at_end(block)
        try:
            for old, new in zip(region.block.args, args, strict=True):
                self.set(old, new)
            self.lower_ops(region.block)
            last = region.block.last_op
            assert last is not None
            yielded = [self.get(v) for v in last.operands]
            self.builder.insert(terminator(yielded))
        finally:
            self.builder.insertion_point = saved
        return Region(block)

    def inline_region(self, region: Region, args: Sequence[SSAValue]) -> list[SSAValue]:
        """Lower ``region``'s ops here with its arguments bound to ``args``;
        return the lowered operands of its terminator."""
        for old, new in zip(region.block.args, args, strict=True):
            self.set(old, new)
        self.lower_ops(region.block)
        last = region.block.last_op
        assert last is not None
        return [self.get(v) for v in last.operands]

    def block_with_args(self, types: Sequence[Attribute]) -> Block:
        return Block(arg_types=[std_type(t) for t in types])

    def same(self, a: SSAValue, b: SSAValue, like: Operation, b_is_zero: bool = False) -> SSAValue:
        """Equality for checks: exact on integers, on floats and complex
        numbers what ``math.isclose`` decides with ``tol`` as both
        tolerances (the interpreter's test, ``complex_numbers.close`` for
        complex numbers): ``a = b``, or a finite
        ``|a − b|`` within ``tol·|a|``, ``tol·|b|`` or ``tol`` (which is
        ``|a| ≤ tol`` when ``b`` is known to be zero and ``tol < 1``),
        where a NaN is the value a NaN is (``_shared_nans_zeroed``).

        *Why* comparisons and no ``max``: LLVM's ``maximum`` must
        propagate NaN and order signed zeros, a dozen instructions on x86
        where a comparison is one, and a free's check runs for every
        ancilla a routine uncomputes (the BA objective paid 1.6× for it)."""
        if isinstance(a.type, IntegerType | IndexType):
            return self.emit(arith_cmpi(a, b, "eq"), like).results[0]
        if b_is_zero and is_float_type(a.type) and self.tolerance < 1:
            size = self.emit(unary(math.AbsFOp, a), like).results[0]
            limit = self.const(self.tolerance, a.type, like)
            return self.emit(arith_cmpf(size, limit, "ole"), like).results[0]
        if isinstance(a.type, ComplexType):
            equal = self.emit(complexd.EqualOp(a, b), like).results[0]
        else:
            equal = self.emit(arith_cmpf(a, b, "oeq"), like).results[0]
        # Equal values, the common case, cost one comparison; the tolerance
        # is computed only when they differ.
        near = Block()
        saved = self.builder.insertion_point
        try:
            self.builder.insertion_point = InsertPoint.at_end(near)
            self.emit(scf.YieldOp(self._within_tolerance(a, b, like)), like)
        finally:
            self.builder.insertion_point = saved
        exact = Block()
        exact.add_op(scf.YieldOp(equal))
        return self.emit(scf.IfOp(equal, [i1], Region(exact), Region(near)), like).results[0]

    def _within_tolerance(self, a: SSAValue, b: SSAValue, like: Operation) -> SSAValue:
        """A finite ``|a − b|`` within ``tol·|a|``, ``tol·|b|`` or ``tol``,
        the parts that are NaN in both taken as 0 (``_shared_nans_zeroed``),
        or complex numbers equal once those are: ``nan+∞j`` is itself, though
        the difference of the infinite parts is NaN."""
        a, b = self._shared_nans_zeroed(a, b, like)
        equal = None
        if isinstance(a.type, ComplexType):
            equal = self.emit(complexd.EqualOp(a, b), like).results[0]
            difference = self.emit(complexd.SubOp(a, b), like).results[0]
            gap = self.emit(complexd.AbsOp(difference), like).results[0]
            size_a = self.emit(complexd.AbsOp(a), like).results[0]
            size_b = self.emit(complexd.AbsOp(b), like).results[0]
        else:
            difference = self.emit(binary(arith.SubfOp, a, b), like).results[0]
            gap = self.emit(unary(math.AbsFOp, difference), like).results[0]
            size_a = self.emit(unary(math.AbsFOp, a), like).results[0]
            size_b = self.emit(unary(math.AbsFOp, b), like).results[0]
        float_type = gap.type
        tolerance = self.const(self.tolerance, float_type, like)
        # an infinite gap is close to nothing, not even where tol·|a| is
        # infinite too; a NaN fails every comparison
        finite = self.emit(arith_cmpf(gap, self.const(float("inf"), float_type, like), "olt"), like).results[0]
        close = self.emit(arith_cmpf(gap, tolerance, "ole"), like).results[0]
        for size in (size_a, size_b):
            relative = self.emit(binary(arith.MulfOp, size, tolerance), like).results[0]
            within = self.emit(arith_cmpf(gap, relative, "ole"), like).results[0]
            close = self.emit(binary(arith.OrIOp, close, within), like).results[0]
        near = self.emit(binary(arith.AndIOp, finite, close), like).results[0]
        return near if equal is None else self.emit(binary(arith.OrIOp, near, equal), like).results[0]

    def _shared_nans_zeroed(self, a: SSAValue, b: SSAValue, like: Operation) -> tuple[SSAValue, SSAValue]:
        """``a`` and ``b`` with each part (a float, a complex number's real
        or imaginary part) that is NaN in both set to 0: a NaN is the
        value a NaN is expected to be (an ancilla holding a copy of a NaN
        is recreated from it on the way back).  Any NaN, not its bits: the
        engines and the GPU make different NaNs of one computation."""
        if isinstance(a.type, ComplexType):
            parts = []
            for part in (complexd.ReOp, complexd.ImOp):
                part_a, part_b = (self.emit(part(z), like).results[0] for z in (a, b))
                parts.append(self._shared_nans_zeroed(part_a, part_b, like))
            (re_a, re_b), (im_a, im_b) = parts
            created = (
                self.emit(complexd.CreateOp(re, im, a.type), like).results[0] for re, im in ((re_a, im_a), (re_b, im_b))
            )
            return next(created), next(created)
        nan_a, nan_b = (self.emit(arith_cmpf(z, z, "uno"), like).results[0] for z in (a, b))
        both = self.emit(binary(arith.AndIOp, nan_a, nan_b), like).results[0]
        zero = self.const(0.0, a.type, like)
        zeroed = [self.emit(arith_select(both, zero, z), like).results[0] for z in (a, b)]
        return zeroed[0], zeroed[1]

    def _check_borrowed_read(
        self, op: Operation, array: SSAValue, indices: list[SSAValue], taking: bool = False
    ) -> None:
        for borrowed, borrowed_indices, take in self.borrows:
            if borrowed is not self.get(array) or not take.checks_enabled:
                continue
            known = [constant_index(i) for i in indices]
            taken = [constant_index(i) for i in take.indices]
            if None not in known and None not in taken:
                continue  # the verifier compared them statically
            lowered = [self.get(i) for i in indices]
            differs: SSAValue | None = None
            for a, b in zip(lowered, borrowed_indices):
                ne = self.emit(arith_cmpi(a, b, "ne"), op).results[0]
                differs = ne if differs is None else self.emit(binary(arith.OrIOp, differs, ne), op).results[0]
            assert differs is not None
            message = borrowed_element(len(lowered), not taking, describe_op(take))
            self.check(differs, op, message, shown_indices(lowered))


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------


def _update(lowering: FunctionLowering, op: Operation, kinds: dict[str, type[Operation]]) -> None:
    target, value = (lowering.get(v) for v in op.operands)
    t = target.type
    kind = "int" if isinstance(t, IntegerType | IndexType) else "complex" if isinstance(t, ComplexType) else "float"
    new = lowering.emit(binary(kinds[kind], target, value), op).results[0]
    lowering.set(op.results[0], new)


@lowers(rev.AddOp)
def _add(lowering: FunctionLowering, op: Operation) -> None:
    if numbers.is_fixed(op.results[0]):
        return numbers.checked_fixed(lowering, op)
    _update(lowering, op, {"int": arith.AddiOp, "float": arith.AddfOp, "complex": complexd.AddOp})


@lowers(rev.SubOp)
def _sub(lowering: FunctionLowering, op: Operation) -> None:
    if numbers.is_fixed(op.results[0]):
        return numbers.checked_fixed(lowering, op)
    _update(lowering, op, {"int": arith.SubiOp, "float": arith.SubfOp, "complex": complexd.SubOp})


@lowers(rev.XorOp)
def _xor(lowering: FunctionLowering, op: Operation) -> None:
    _update(lowering, op, {"int": arith.XOrIOp})


@lowers(rev.MulOp)
def _mul(lowering: FunctionLowering, op: Operation) -> None:
    _update(lowering, op, {"float": arith.AddfOp})


@lowers(rev.DivOp)
def _div(lowering: FunctionLowering, op: Operation) -> None:
    _update(lowering, op, {"float": arith.SubfOp})


@lowers(rev.NegOp)
def _neg(lowering: FunctionLowering, op: Operation) -> None:
    (target,) = (lowering.get(v) for v in op.operands)
    if isinstance(target.type, IntegerType | IndexType):
        zero = lowering.const(0, target.type, op)
        new = lowering.emit(arith.SubiOp(zero, target), op)
    elif isinstance(target.type, ComplexType):
        new = lowering.emit(complexd.NegOp(target), op)
    else:
        new = lowering.emit(arith.NegfOp(target), op)
    lowering.set(op.results[0], new.results[0])


@lowers(rev.IncOp, rev.DecOp)
def _step(lowering: FunctionLowering, op: Operation) -> None:
    target = lowering.get(op.operands[0])
    one = lowering.const(1, target.type, op)
    kind = arith.AddiOp if isinstance(op, rev.IncOp) else arith.SubiOp
    lowering.set(op.results[0], lowering.emit(kind(target, one), op).results[0])


@lowers(rev.SwapOp)
def _swap(lowering: FunctionLowering, op: Operation) -> None:
    a, b = (lowering.get(v) for v in op.operands)
    lowering.set(op.results[0], b)
    lowering.set(op.results[1], a)


@lowers(rev.RotOp, rev.IRotOp)
def _rotate(lowering: FunctionLowering, op: Operation) -> None:
    a, b, angle = (lowering.get(v) for v in op.operands)
    if isinstance(op, rev.IRotOp):
        angle = lowering.emit(arith.NegfOp(angle), op).results[0]
    c = lowering.emit(math.CosOp(angle), op).results[0]
    s = lowering.emit(math.SinOp(angle), op).results[0]

    def mul(x: SSAValue, y: SSAValue) -> SSAValue:
        return lowering.emit(arith.MulfOp(x, y), op).results[0]

    new_a = lowering.emit(arith.SubfOp(mul(a, c), mul(b, s)), op).results[0]
    new_b = lowering.emit(arith.AddfOp(mul(a, s), mul(b, c)), op).results[0]
    lowering.set(op.results[0], new_a)
    lowering.set(op.results[1], new_b)


@lowers(rev.TakeOp)
def _take(lowering: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, rev.TakeOp)
    array = lowering.get(op.memref)
    indices = [lowering.get(i) for i in op.indices]
    lowering.check_indices(op, array, indices)
    shared = op.accumulation() if any(op.memref in arrays for arrays in lowering.shared_arrays) else None
    if shared is not None:
        updates, put = shared
        element = _SharedElement(array, indices)
        for update in (*updates, put):
            lowering.atomic[update] = element
        return
    lowering._check_borrowed_read(op, op.memref, list(op.indices), taking=True)
    load = lowering.emit(memref_load(array, indices), op)
    lowering.set(op.result, load.results[0])
    lowering.borrows.append((array, indices, op))


@lowers(rev.PutOp)
def _put(lowering: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, rev.PutOp)
    array = lowering.get(op.memref)
    indices = [lowering.get(i) for i in op.indices]
    taken = next((e for e in lowering.borrows if e[0] is array and e[2].indices == op.indices), None)
    if taken is None or taken[1] != indices:  # else the take checked them
        lowering.check_indices(op, array, indices)
    lowering.emit(memref_store(lowering.get(op.value), array, indices), op)
    if taken is not None:
        lowering.borrows.remove(taken)


@dataclass
class _SharedElement:
    """An element a parallel loop's iterations accumulate into, and the sum
    of what this borrow adds so far."""

    array: SSAValue
    indices: list[SSAValue]
    delta: SSAValue | None = None


def _accumulate(lowering: FunctionLowering, op: Operation) -> None:
    """A step of a shared accumulation (``rev.TakeOp.accumulation``): the
    updates sum their signed values, the put adds the sum to the element in
    one atomic step (the take checked the indices and loaded nothing)."""
    shared = lowering.atomic.pop(op)
    if isinstance(op, rev.PutOp):
        assert shared.delta is not None
        kind = "addf" if isinstance(shared.delta.type, AnyFloat) else "addi"
        lowering.emit(AtomicRMWOp(kind, shared.delta, shared.array, shared.indices), op)
        return
    assert isinstance(op, rev._UpdateOp)
    value = lowering.get(op.value)
    floating = isinstance(value.type, AnyFloat)
    add, sub = (arith.AddfOp, arith.SubfOp) if floating else (arith.AddiOp, arith.SubiOp)
    if shared.delta is not None:
        update = add if op.GRADIENT_SIGN > 0 else sub
        value = lowering.emit(update(shared.delta, value), op).results[0]
    elif op.GRADIENT_SIGN < 0:
        negated = arith.NegfOp(value) if floating else sub(lowering.const(0, value.type, op), value)
        value = lowering.emit(negated, op).results[0]
    shared.delta = value


@lowers(rev.UnpackOp)
def _unpack(lowering: FunctionLowering, op: Operation) -> None:
    z = lowering.get(op.operands[0])
    lowering.set(op.results[0], lowering.emit(complexd.ReOp(z), op).results[0])
    lowering.set(op.results[1], lowering.emit(complexd.ImOp(z), op).results[0])


@lowers(rev.PackOp)
def _pack(lowering: FunctionLowering, op: Operation) -> None:
    re, im = (lowering.get(v) for v in op.operands)
    created = lowering.emit(complexd.CreateOp(re, im, op.results[0].type), op)
    lowering.set(op.results[0], created.results[0])


@lowers(rev.FromLogOp)
def _from_log(lowering: FunctionLowering, op: Operation) -> None:
    value = lowering.get(op.operands[0])
    lowering.set(op.results[0], lowering.emit(math.ExpOp(value), op).results[0])


lowers(rev.ToLogOp)(numbers.to_log)
lowers(rev.FixedAddOp, rev.FixedSubOp, rev.FixedMulOp)(numbers.checked_fixed)
lowers(rev.ToFixedOp)(numbers.to_fixed)
lowers(rev.FromFixedOp)(numbers.from_fixed)
lowers(rev.ToTropicalOp)(numbers.to_tropical)
lowers(rev.FromTropicalOp)(numbers.from_tropical)


@lowers(anc.AllocOp)
def _alloc(lowering: FunctionLowering, op: Operation) -> None:
    lowering.set(op.results[0], lowering.get(op.operands[0]))


def _is_zero_constant(value: SSAValue) -> bool:
    from xdsl.ir import OpResult

    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        return isinstance(attr, FloatAttr) and attr.value.data == 0.0
    return False


def _zero_float_frees(lowering: FunctionLowering, op: anc.FreeOp) -> list[anc.FreeOp]:
    """``op`` and the checked frees after it, with only constants between
    them, of float ancillas of ``op``'s type known to be zero and already
    computed: the run whose checks ``_free`` makes at once."""
    kind = op.ancilla.type
    if not (isinstance(kind, Float64Type | Float32Type) and _is_zero_constant(op.value) and lowering.tolerance < 1):
        return [op]
    run = [op]
    following = op.next_op
    while following is not None:
        if isinstance(following, anc.FreeOp):
            if not (
                following.checks_enabled
                and following.ancilla.type == kind
                and _is_zero_constant(following.value)
                and following.ancilla in lowering.mapping
            ):
                break
            run.append(following)
        elif not isinstance(following, arith.ConstantOp):
            break
        following = following.next_op
    return run


def _check_zero_run(lowering: FunctionLowering, run: list[anc.FreeOp]) -> None:
    """The checks of a run of frees of float ancillas known to be zero, as
    one branch: when every value is ±0 (its bits but the sign are zero) all
    of them pass; otherwise each check runs, in order, so the first that
    fails reports as it would alone.

    *Why*: each check alone is a subtraction (the uncompute LLVM folded),
    an absolute value, a comparison and a branch out of the function; the
    leapfrog's pair interaction frees eight ancillas per ~70 instructions of
    work, and their checks made it 1.5× slower."""
    first = run[0]
    nonzero = _any_nonzero_bits(lowering, [lowering.get(free.ancilla) for free in run], first)

    def each() -> None:
        for free in run:
            _check_free(lowering, free)

    _only_if(lowering, nonzero, first, each)


def _any_nonzero_bits(lowering: FunctionLowering, values: Sequence[SSAValue], like: Operation) -> SSAValue:
    """Whether any of ``values`` (integers or floats, all of one type) is
    not zero, in straight-line code: their bits (a float's but the sign,
    so that ±0 is zero) or-ed and compared with 0.  It is the fast test of
    checks made at once (``_check_zero_run``, ``_array_free``): a value it
    does not pass, even one within tolerance, goes to the cold path, whose
    checks decide.  *Why* bits and not ``same``: one ``or`` per value and
    one comparison in all, where ``same`` is an absolute value and a
    comparison per float, and an ``scf.if`` per float for a tolerance ≥ 1."""
    element = values[0].type
    floats = isinstance(element, AnyFloat)
    bits_type: Attribute = IntegerType(element.bitwidth) if floats else element
    bits = [lowering.emit(cast(arith.BitcastOp, v, bits_type), like).results[0] for v in values] if floats else values
    union = bits[0]
    for more in bits[1:]:
        union = lowering.emit(binary(arith.OrIOp, union, more), like).results[0]
    if floats:
        union = lowering.emit(binary(arith.ShLIOp, union, lowering.const(1, bits_type, like)), like).results[0]
    return lowering.emit(arith_cmpi(union, lowering.const(0, bits_type, like), "ne"), like).results[0]


def _only_if(lowering: FunctionLowering, condition: SSAValue, like: Operation, lower: Callable[[], object]) -> None:
    """What ``lower()`` emits, run only when ``condition`` holds: the cold
    path of checks made at once (``_check_zero_run``, ``_array_free``)."""
    body = Block()
    saved = lowering.builder.insertion_point
    try:
        lowering.builder.insertion_point = InsertPoint.at_end(body)
        lower()
        lowering.emit(scf.YieldOp(), like)
    finally:
        lowering.builder.insertion_point = saved
    lowering.emit(scf.IfOp(condition, [], Region(body)), like)


def _check_free(lowering: FunctionLowering, op: anc.FreeOp) -> None:
    value = lowering.get(op.ancilla)
    if op.value in lowering.mapping:
        expected = lowering.get(op.value)
    else:  # the constant of a later free of a run (``_check_zero_run``), not lowered yet
        assert isinstance(op.value, OpResult)
        expected = lowering.emit(op.value.op.clone(), op).results[0]
    ok = lowering.same(value, expected, op, b_is_zero=_is_zero_constant(op.value))
    lowering.check(ok, op, ANCILLA_FREED, [value, expected], kinds=_shown_as(op.ancilla.type, 2))


def _shown_as(type: Attribute, count: int) -> list[str] | None:
    """The payload kinds of ``count`` values of ``type`` that a check
    compared, where its message shows them other than as their lowered
    type (``shown_kind``)."""
    kind = shown_kind(type)
    return None if kind is None else [kind] * count


@lowers(anc.FreeOp)
def _free(lowering: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, anc.FreeOp)
    if not op.checks_enabled or op in lowering.checked_ahead:
        return
    run = _zero_float_frees(lowering, op)
    if len(run) == 1:
        _check_free(lowering, op)
        return
    lowering.checked_ahead.update(run[1:])
    _check_zero_run(lowering, run)


@lowers(rev.IfOp)
def _if(lowering: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, rev.IfOp)
    state = [lowering.get(v) for v in op.state]
    (pre,) = lowering.inline_region(op.pre, state)
    types = [std_type(t) for t in op.res.types]
    # scf.if regions take no arguments: the branches read the operands directly.
    branches = [
        lowering.lower_region(region, state, lambda ys: scf.YieldOp(*ys)) for region in (op.then_region, op.else_region)
    ]
    result = lowering.emit(scf.IfOp(pre, types, *branches), op)
    for old, new in zip(op.res, result.results, strict=True):
        lowering.set(old, new)
    if op.checks_enabled:
        (post,) = lowering.inline_region(op.post if op.has_post() else op.pre, list(result.results))
        agree = lowering.emit(arith.CmpiOp(post, pre, "eq"), op).results[0]
        lowering.check(
            agree,
            op,
            "postcondition is {0} after the {branch} branch, but the precondition was {1}",
            [post, pre],
        )


@lowers(rev.WhileOp)
def _while(lowering: FunctionLowering, op: Operation) -> None:
    """scf.while; with checks on, an iteration counter rides along for the
    error message."""
    assert isinstance(op, rev.WhileOp)
    state = [lowering.get(v) for v in op.state]
    types = [std_type(t) for t in op.res.types]
    checking = op.checks_enabled
    counter: list[SSAValue] = []
    if checking:
        (post,) = lowering.inline_region(op.post, state)
        true = lowering.const(True, i1, op)
        not_post = lowering.emit(arith.XOrIOp(post, true), op).results[0]
        lowering.check(not_post, op, "postcondition must be false when the loop starts")
        counter = [lowering.const(0, i64, op)]
    carried = [*types, *([i64] if checking else [])]
    before = lowering.block_with_args(carried)
    saved = lowering.builder.insertion_point
    lowering.builder.insertion_point = InsertPoint.at_end(before)
    (pre,) = lowering.inline_region(op.pre, list(before.args[: len(types)]))
    lowering.emit(scf.ConditionOp(pre, *before.args), op)
    after = lowering.block_with_args(carried)
    lowering.builder.insertion_point = InsertPoint.at_end(after)
    new_state = lowering.inline_region(op.body, list(after.args[: len(types)]))
    if checking:
        one = lowering.const(1, i64, op)
        iteration = lowering.emit(arith.AddiOp(after.args[-1], one), op).results[0]
        (post_after,) = lowering.inline_region(op.post, new_state)
        lowering.check(post_after, op, "postcondition must be true after iteration {0}", [iteration])
        new_state = [*new_state, iteration]
    lowering.emit(scf.YieldOp(*new_state), op)
    lowering.builder.insertion_point = saved
    result = lowering.emit(scf.WhileOp([*state, *counter], carried, Region(before), Region(after)), op)
    for old, new in zip(op.res, result.results[: len(types)], strict=True):
        lowering.set(old, new)


@lowers(rev.ForOp)
def _for(lowering: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, rev.ForOp)
    lb, ub, step = (lowering.get(v) for v in (op.lb, op.ub, op.step))
    state = [lowering.get(v) for v in op.state]
    check_step(lowering, step, op)
    if op.is_parallel:
        return _parallel_for(lowering, op)
    last: SSAValue | None = None
    if op.is_reverse:
        # Visit lb + j·step for j = n−1 … 0 as (lb + last) − i for the
        # forward loop's i: last = lb + ((ub − lb − 1) ÷ step)·step.  Where
        # the loop runs, ub − lb − 1 is from 0 to 2^N − 2, exact only read
        # unsigned, so the division is unsigned (the step is positive
        # here); the products and sums wrap to values within [lb, ub),
        # which they therefore are exactly.
        one = lowering.const(1, lb.type, op)
        span = lowering.emit(arith.SubiOp(ub, lb), op).results[0]
        distance = lowering.emit(arith.SubiOp(span, one), op).results[0]
        count = lowering.emit(arith.DivUIOp(distance, step), op).results[0]
        offset = lowering.emit(arith.MuliOp(count, step), op).results[0]
        last = lowering.emit(arith.AddiOp(lb, lowering.emit(arith.AddiOp(lb, offset), op).results[0]), op).results[0]
    body = lowering.block_with_args([lb.type, *op.state.types])
    saved = lowering.builder.insertion_point
    lowering.builder.insertion_point = InsertPoint.at_end(body)
    index = body.args[0]
    if last is not None:
        index = lowering.emit(arith.SubiOp(last, body.args[0]), op).results[0]
    new_state = lowering.inline_region(op.body, [index, *body.args[1:]])
    lowering.emit(scf.YieldOp(*new_state), op)
    lowering.builder.insertion_point = saved
    result = lowering.emit(scf.ForOp(lb, ub, step, state, Region(body)), op)
    for old, new in zip(op.res, result.results, strict=True):
        lowering.set(old, new)


def check_step(code: CheckedCode, step: SSAValue, loop: Operation) -> None:
    """Stop the run at ``loop`` where ``step`` is not positive, as the
    interpreter does (``NONPOSITIVE_STEP``), unless it is a positive
    constant: every loop the passes build, and the frontends'.  Native
    code reads the step unsigned (``std_to_llvm``'s counted loop, the GPU's
    grid-stride loop), so without the check a negative step ran one
    iteration and a zero step never ended."""
    if known_positive(step):
        return
    positive = code.emit(arith_cmpi(step, code.const(0, step.type, loop), "sgt"), loop).results[0]
    code.check(positive, loop, NONPOSITIVE_STEP, [step], ExecutionError)


def _parallel_for(lowering: FunctionLowering, op: rev.ForOp) -> None:
    """``scf.parallel`` without reductions: a parallel loop carries no state,
    and its iterations may run in any order, so ``reverse`` is dropped."""
    lb, ub, step = (lowering.get(v) for v in (op.lb, op.ub, op.step))
    body = lowering.block_with_args([lb.type])
    saved = lowering.builder.insertion_point
    lowering.builder.insertion_point = InsertPoint.at_end(body)
    lowering.shared_arrays.append(accumulated_arrays(op))
    lowering.inline_region(op.body, [body.args[0]])
    lowering.shared_arrays.pop()
    lowering.emit(scf.ReduceOp(), op)
    lowering.builder.insertion_point = saved
    lowering.emit(ParallelOp([lb], [ub], [step], Region(body)), op)


_COUNT_STEPS: dict[type[Operation], bool] = {
    arith.AddiOp: False,
    arith.AddfOp: False,
    arith.SubiOp: True,
    arith.SubfOp: True,
}
"""The operations of a count ``c[i] += e`` / ``c[i] -= e``: whether the
step is subtracted."""


def _parallel_counts(block: Block, counted: set[SSAValue]) -> dict[memref.StoreOp, tuple[SSAValue, bool]]:
    """The counts of safe region ``block`` that stand in a parallel loop, as
    the frontend builds them (``safe_blocks``: the element loaded, the step
    added or subtracted, the sum stored back to the same element), with the
    step and whether it is subtracted.  Iterations count into one element at
    once, so each becomes an atomic addition of the step; a store of another
    shape in a parallel loop is refused (``_safe``), and so is a count into
    bool elements or one whose step reads an array of ``counted``, which
    are of that shape but have no atomic form (``_unshared_store``)."""
    counts: dict[memref.StoreOp, tuple[SSAValue, bool]] = {}
    for op in block.ops:
        if not isinstance(op, memref.StoreOp):
            continue
        update = op.value.owner
        if type(update) not in _COUNT_STEPS or not op.value.has_one_use():
            continue
        assert isinstance(update, Operation)
        old, step = update.operands
        load = old.owner
        if (
            isinstance(load, memref.LoadOp)
            and old.has_one_use()
            and load.memref is op.memref
            and list(load.indices) == list(op.indices)
            and load.parent_block() is block
            and op.value.type != i1
            and _counted_read(step, block, counted) is None
        ):
            counts[op] = (step, _COUNT_STEPS[type(update)])
    return counts


def _counted_arrays(safe: Operation) -> set[SSAValue]:
    """The arrays that the outermost parallel loop around ``safe`` counts
    into: the stores of its safe regions."""
    loop: Operation | None = None
    parent = safe.parent_op()
    while parent is not None:
        if isinstance(parent, rev.ForOp) and parent.is_parallel:
            loop = parent
        parent = parent.parent_op()
    if loop is None:
        return set()
    return {
        store.memref
        for region in loop.walk()
        if isinstance(region, rev.SafeOp)
        for store in region.body.block.ops
        if isinstance(store, memref.StoreOp)
    }


def _counted_read(value: SSAValue, block: Block, counted: set[SSAValue]) -> memref.LoadOp | None:
    """A load of an array of ``counted`` that ``value`` is computed from
    in ``block``: another iteration may count into the element between the
    read and the atomic addition of a step made from it."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent_block() is not block:
        return None
    if isinstance(owner, memref.LoadOp) and owner.memref in counted:
        return owner
    for operand in owner.operands:
        if (read := _counted_read(operand, block, counted)) is not None:
            return read
    return None


@lowers(rev.SafeOp)
def _safe(lowering: FunctionLowering, op: Operation) -> None:
    """A safe region's host effects, forward.  In a parallel loop (one
    being lowered: ``shared_arrays`` holds its accumulated arrays) a count
    is an atomic addition, as a shared accumulation is: every iteration
    counts into the same element, on a GPU at once."""
    assert isinstance(op, rev.SafeOp)
    if not op.runs_forward:
        return
    counted = _counted_arrays(op) if len(lowering.shared_arrays) > 1 else set[SSAValue]()
    counts = _parallel_counts(op.body.block, counted) if len(lowering.shared_arrays) > 1 else None
    skipped = set[Operation]()
    if counts:
        for store in counts:
            update = store.value.owner
            assert isinstance(update, Operation)
            skipped.update((update, update.operands[0].owner))
    for inner in op.body.block.ops:
        if inner in skipped:
            continue
        if is_expression_op(inner):
            lowering._clone_expression(inner)
        elif isinstance(inner, printf.PrintFormatOp):
            lower_print(lowering, inner)
        elif isinstance(inner, memref.StoreOp) and counts is not None:
            if inner not in counts:
                raise PassFailedException(f"{describe_op(inner)}: {_unshared_store(inner, counted)}")
            _atomic_count(lowering, inner, *counts[inner])
        elif isinstance(inner, memref.StoreOp):  # a count (revmlir.counters)
            lowering.check_indices(inner, lowering.get(inner.memref), [lowering.get(i) for i in inner.indices])
            lowering.emit(inner.clone_without_regions(lowering.mapping), inner)
        elif isinstance(inner, cf.AssertOp):
            lowering.check(lowering.get(inner.arg), inner, literal_template(inner.msg.data), error=ExecutionError)
        else:
            raise PassFailedException(f"{describe_op(inner)} in rev.safe cannot be lowered")


def _unshared_store(store: memref.StoreOp, counted: set[SSAValue]) -> str:
    """Why a store of a safe region in a parallel loop is no count that an
    atomic addition makes."""
    array_type = store.memref.type
    assert isinstance(array_type, MemRefType)
    if isinstance(array_type.element_type, ComplexType):
        return (
            "a count into complex elements in a parallel loop, whose iterations may count at once: "
            "no atomic addition updates a complex number; count its real and imaginary parts "
            "into two elements of a float counter"
        )
    if array_type.element_type == i1:
        return (
            "a count into bool elements in a parallel loop, whose iterations may count at once: "
            "no atomic addition updates a bool; count into an int32 or int64 counter"
        )
    update, block = store.value.owner, store.parent_block()
    if isinstance(update, Operation) and type(update) in _COUNT_STEPS and block is not None:
        read = _counted_read(update.operands[1], block, counted)
        if read is not None:
            return (
                f"a count in a parallel loop whose step reads {_array_name(read.memref)}, which the loop counts "
                "into: another iteration may count between the read and the addition; count a step that the "
                "loop does not count into"
            )
    return (
        "a store in rev.safe inside a parallel loop, whose iterations may run at once: only a count "
        "(an element loaded, a step added to or subtracted from it, the sum stored back) can be made atomic"
    )


def _array_name(array: SSAValue) -> str:
    """The array's name in the user's source where the frontend kept it."""
    return array.name_hint or "an array"


def _atomic_count(lowering: FunctionLowering, store: memref.StoreOp, step: SSAValue, subtracted: bool) -> None:
    """Count ``step`` (``-step`` where ``subtracted``) into ``store``'s
    element in one atomic addition; the indices are checked as the count's
    load checks them on the interpreter, which runs it first."""
    array = lowering.get(store.memref)
    indices = [lowering.get(i) for i in store.indices]
    update = store.value.owner
    assert isinstance(update, Operation)
    load = update.operands[0].owner
    assert isinstance(load, memref.LoadOp)
    lowering.check_indices(load, array, indices)
    delta = lowering.get(step)
    floating = isinstance(delta.type, AnyFloat)
    if subtracted:
        negated = arith.NegfOp(delta) if floating else arith.SubiOp(lowering.const(0, delta.type, store), delta)
        delta = lowering.emit(negated, store).results[0]
    lowering.emit(AtomicRMWOp("addf" if floating else "addi", delta, array, indices), store)


@lowers(rev.CallOp)
def _call(lowering: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, rev.CallOp)
    args = [lowering.get(a) for a in op.args] + [lowering.error]
    types = [std_type(t) for t in op.res.types]
    call = lowering.emit(func.CallOp(op.callee.string_value(), args, types), op)
    # a check native code puts before it (rev-host-safety's recursion
    # depth) names the op the interpreter runs: this one, or the uncall
    # it was made of
    call.attributes[SOURCE_OP_ATTR] = op.attributes.get(SOURCE_OP_ATTR, StringAttr(op.name))
    for old, new in zip(op.res, call.results, strict=True):
        lowering.set(old, new)


@lowers(rev.UncallOp)
def _uncall(lowering: FunctionLowering, op: Operation) -> None:
    """An uncall of a function without an inverse (the others are calls of
    inverses by now) fails where a run reaches it, with the inverter's
    reason, as on the interpreter, which inverts a callee when an uncall of
    it first runs: a module that holds one runs every input that does not
    reach it."""
    assert isinstance(op, rev.UncallOp)
    _fail_without_inverse(lowering, op, [lowering.get(a) for a in op.scalar_args()])


@lowers(rev.InvOp, rev.RoutineOp)
def _region_without_inverse(lowering: FunctionLowering, op: Operation) -> None:
    """A ``rev.inv`` or ``rev.routine`` that ``forward_only`` left, since the
    region it runs backwards has no inverse, fails where a run reaches that
    region, as on the interpreter, which inverts it there: a routine runs
    compute and body first."""
    assert isinstance(op, rev.InvOp | rev.RoutineOp)
    state = [lowering.get(v) for v in op.state]
    if isinstance(op, rev.RoutineOp):
        state = lowering.inline_region(op.body, lowering.inline_region(op.compute, state))[: len(state)]
    _fail_without_inverse(lowering, op, state)


def _fail_without_inverse(lowering: FunctionLowering, op: Operation, results: Sequence[SSAValue]) -> None:
    """Leave the run at ``op``, which runs something backwards that has no
    inverse, with the inverter's reason (``FunctionLowering.no_inverse``).
    ``op``'s results stand for ``results``: nothing runs after the check."""
    never = lowering.const(False, i1, op)
    lowering.check(never, op, literal_template(lowering.no_inverse[op]), error=ExecutionError)
    for old, new in zip(op.results, results, strict=True):
        lowering.set(old, new)


@lowers(ApplyOp, InvokeOp)
def _primitive_call(lowering: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, ApplyOp | InvokeOp)
    for old, new in zip(op.res, lower_primitive_call(lowering, op).results, strict=True):
        lowering.set(old, new)


def lower_primitive_call(code: CheckedCode, op: ApplyOp | InvokeOp) -> func.CallOp:
    """A primitive is called as the external function it names
    (``declare_primitives``), after checking that the arrays of a BLAS
    convention have the one length its C function takes; a rule written as
    ordinary code takes the error slot like every function lowered here."""
    callee = op.callee.string_value()
    target = SymbolTable.lookup_symbol(op, callee)
    args = [code.get(a) for a in op.args]
    if isinstance(target, func.FuncOp) and target.body.blocks:
        args.append(code.error)
    elif isinstance(target, func.FuncOp) and isinstance(convention := target.attributes.get(ARRAYS_ATTR), StringAttr):
        arrays = [a for a in args if isinstance(a.type, MemRefType)]
        if convention.data != "pointer_length" and len(arrays) > 1:
            zero = code.const(0, IndexType(), op)
            first = code.emit(memref.DimOp(arrays[0], zero), op).results[0]
            for other in arrays[1:]:
                size = code.emit(memref.DimOp(other, zero), op).results[0]
                same = code.emit(arith.CmpiOp(first, size, "eq"), op).results[0]
                code.check(same, op, DIFFERENT_LENGTHS, error=ExecutionError)
    return code.emit(func.CallOp(callee, args, [std_type(t) for t in op.res.types]), op)


def declare_primitives(module: ModuleOp) -> None:
    """Each ``rev.extern`` becomes the external ``func.func`` of its C symbol,
    which its calls name: native code calls that function (a backward
    ``rev.invoke`` its inverse rule).  A primitive without a symbol runs on
    the interpreter only."""
    externs = {op.sym_name.data: op for op in module.ops if isinstance(op, ExternOp)}
    symbols = {name: extern.symbol.data for name, extern in externs.items() if extern.symbol is not None}
    signatures: dict[str, tuple[FunctionType, str | None]] = {}
    for name, symbol in symbols.items():
        extern = externs[name]
        convention = (
            extern.array_convention()
            if any(isinstance(t, MemRefType) for t in extern.function_type.inputs.data)
            else None
        )
        declared = (extern.function_type, convention)
        if symbol not in externs and SymbolTable.lookup_symbol(module, symbol) is not None:
            raise PassFailedException(
                f"{describe_op(extern)} names the C symbol '{symbol}', which is also the name of a "
                "function of the module"
            )
        if signatures.setdefault(symbol, declared) != declared:
            raise PassFailedException(
                f"{describe_op(extern)} names the C symbol '{symbol}' with type {declared[0]}, "
                f"another primitive with type {signatures[symbol][0]}"
                + (" (or passes arrays otherwise)" if declared[0] == signatures[symbol][0] else "")
            )
    for call in [op for op in nested_ops(module) if isinstance(op, ApplyOp | InvokeOp)]:
        if isinstance(call, InvokeOp) and call.backward is not None:
            call.callee = FlatSymbolRefAttr(call.function())
            del call.attributes["backward"]
        name = call.callee.string_value()
        if name not in externs:
            continue
        if name not in symbols:
            raise PassFailedException(
                f"{describe_op(call)} calls primitive @{name}, which has no C symbol (it runs on the interpreter only)"
            )
        call.callee = FlatSymbolRefAttr(symbols[name])
    for name, extern in externs.items():
        if (symbol := symbols.get(name)) is not None and symbol in signatures:
            signature, convention = signatures.pop(symbol)
            declaration = func.FuncOp.external(symbol, signature.inputs.data, signature.outputs.data)
            if convention is not None:
                declaration.attributes[ARRAYS_ATTR] = StringAttr(convention)
            declaration.location = extern.location
            module.body.block.insert_op_before(declaration, extern)
        extern.detach()
        extern.erase()


@lowers(rev.ReturnOp)
def _return(lowering: FunctionLowering, op: Operation) -> None:
    lowering.emit(func.ReturnOp(*[lowering.get(v) for v in op.operands]), op)


@lowers(rev.YieldOp, rev.CondOp)
def _region_end(lowering: FunctionLowering, op: Operation) -> None:
    """Region terminators are produced by the rule of the region's owner."""


def _stack_size(lowering: FunctionLowering, stack: SSAValue, like: Operation) -> SSAValue:
    index = lowering.const(stacks.SIZE, IndexType(), like)
    return lowering.emit(memref.LoadOp.get(stack, [index]), like).results[0]


def _checked_pop(lowering: FunctionLowering, op: Operation) -> SSAValue:
    """The top of ``op``'s stack.  An empty stack is reported whatever
    ``nocheck`` says (the pop then yields zero and the run goes on)."""
    stack = lowering.get(op.operands[0])
    size = _stack_size(lowering, stack, op)
    nonempty = lowering.emit(arith.CmpiOp(size, lowering.const(0, i64, op), "sgt"), op).results[0]
    lowering.check(nonempty, op, EMPTY_STACK)
    element = stack_element(op.operands[0].type)
    name = stacks.runtime_name(stacks.POP, element)
    return lowering.call_runtime(name, [stack], [element], op)[0]


@lowers(anc.ArrayAllocOp)
def _array_alloc(lowering: FunctionLowering, op: Operation) -> None:
    """Zeroed element by element in a nest of loops that stores the zero
    and nothing else, which ``rev-host-safety`` counts in one step and
    leaves without polls (``host_safety._filled``: LLVM makes it a
    ``memset``), after checking, as the
    interpreter does, that its sizes are not negative and its bytes within
    ``MAX_ALLOCATION``.  In the function's frame
    (``memref.alloca``, released when it returns) when it takes at most
    ``FRAME_ARRAY_BYTES`` (for run-time sizes: decided when it runs) and no
    loop would allocate it again and again, else on the heap
    (``memref.alloc``, released by the free)."""
    assert isinstance(op, anc.ArrayAllocOp)
    type = op.result.type
    assert isinstance(type, MemRefType)
    sizes = [lowering.get(s) for s in op.sizes]
    itemsize = element_bytes(type.element_type)
    in_loop = any(isinstance(parent, rev.ForOp | rev.WhileOp) for parent in _ancestors(op))
    elements = lowering.checked_elements(op, sizes, type)

    def frame() -> Operation:
        # checked here: rev-host-safety leaves it (it checks the module's own)
        alloca = memref.AllocaOp.get(type.element_type, shape=type.get_shape(), dynamic_sizes=sizes)
        alloca.attributes[SOURCE_OP_ATTR] = StringAttr(op.name)
        return alloca

    def heap() -> Operation:
        # a check after it (native code's rev-host-safety) names the op
        # the interpreter runs
        alloc = memref.AllocOp(sizes, [], type)
        alloc.attributes[SOURCE_OP_ATTR] = StringAttr(op.name)
        return alloc

    on_heap: SSAValue | None = None
    """Where the choice is made at run time: whether the array is on the heap."""
    if in_loop or prod(type.get_shape()) * itemsize > FRAME_ARRAY_BYTES:
        array = lowering.emit(heap(), op).results[0]
        lowering.heap_arrays[array] = None
    elif sizes:
        limit = lowering.const(float(FRAME_ARRAY_BYTES // itemsize), f64, op)
        on_heap = lowering.emit(arith.CmpfOp(elements, limit, "ogt"), op).results[0]
        branches = []
        for make in (heap, frame):
            block = Block()
            allocated = make()
            allocated.location = op.location
            block.add_ops([allocated, scf.YieldOp(allocated.results[0])])
            branches.append(Region(block))
        array = lowering.emit(scf.IfOp(on_heap, [type], *branches), op).results[0]
        lowering.heap_arrays[array] = on_heap
    else:
        array = lowering.emit(frame(), op).results[0]
    zero = lowering.const(0, type.element_type, op)
    _each_element(lowering, array, op, lambda at: lowering.emit(memref.StoreOp.get(zero, array, at), op))
    lowering.set(op.result, array)


def _ancestors(op: Operation) -> Iterator[Operation]:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, rev.FuncOp):
        yield parent
        parent = parent.parent_op()


def _check_sizes(lowering: FunctionLowering, op: anc.ArrayFreeOp, array: SSAValue) -> None:
    """The sizes a free restates are the array's own (as the interpreter
    checks them first): one comparison per size known at run time."""
    type = op.array.type
    assert isinstance(type, MemRefType)
    shape = type.get_shape()
    dynamic = [axis for axis, size in enumerate(shape) if size == DYNAMIC_INDEX]
    if not dynamic:
        return
    own = [lowering.emit(memref.DimOp(array, lowering.const(a, IndexType(), op)), op).results[0] for a in dynamic]
    restated = [lowering.get(size) for size in op.sizes]
    same: SSAValue | None = None
    for a, b in zip(own, restated, strict=True):
        equal = lowering.emit(arith.CmpiOp(a, b, "eq"), op).results[0]
        same = equal if same is None else lowering.emit(arith.AndIOp(same, equal), op).results[0]
    assert same is not None
    lowering.check(same, op, shape_mismatch(shape), shown_indices([*own, *restated]))


FREED_AT_ONCE = 30
"""The most elements a freed array of known size may have for its zero
check to be made at once (``_array_free``): each is a load and a test kept
live until the one branch, so the registers a kernel needs grow with them.
For a kernel that fills, uses, uncomputes and frees an ``rv.zeros((N,))``
the test costs at most 4 registers up to 30 elements and 16 at 31 (80 →
96); for the same kernel on a static ``memref<Nxf64>`` at most 1 up to
26, but 16 at 28 and 40 at 30 (34 → 74).  30 is kept for BA's
Jacobian-blocks kernel, whose gain is all in its 30-element block (222
registers instead of 218), at that cost to kernels like the second
(docs/design.md decisions 123 and 125).  These were measured with each
element's own test; with the bit test (decision 127) at 30 elements the
first kernel needs 70 registers instead of 80, the second and BA's the
same."""


@lowers(anc.ArrayFreeOp)
def _array_free(lowering: FunctionLowering, op: Operation) -> None:
    """A checked free of an array whose sizes are known at compile time and
    that has at most ``FREED_AT_ONCE`` elements tests every element at once
    (straight-line code: each element's load, their bits or-ed,
    ``_any_nonzero_bits``, then one branch) and only when one is not ±0
    checks the elements again in row-major order, so the first that is not
    zero within tolerance reports as it would alone;
    nothing is stored in between, so the checks see the values the test
    saw.  *Why*: a branch to a report after each element's load made a
    kernel wait for each load in turn (BA's Jacobian blocks free 73
    elements per observation, in arrays of at most 30).  The test is not a
    loop, which native code would poll for Ctrl-C in every iteration.  A
    larger array, one of run-time size, or one given a negative constant
    size (its allocation reports that first, where it runs; the free must
    still compile, with a location for that report) is checked element by
    element (docs/design.md decisions 121, 123 and 125)."""
    assert isinstance(op, anc.ArrayFreeOp)
    array = lowering.get(op.array)
    if op.checks_enabled:
        type = op.array.type
        assert isinstance(type, MemRefType)
        _check_sizes(lowering, op, array)
        zero = lowering.const(0, type.element_type, op)
        message = array_freed(type.get_num_dims())

        def check(at: list[SSAValue]) -> None:
            element = lowering.emit(memref_load(array, at), op).results[0]
            ok = lowering.same(element, zero, op, b_is_zero=True)
            lowering.check(ok, op, message, freed_element(element, at))

        shape = constant_shape(type.get_shape(), op.sizes)
        if shape is None or min(shape, default=0) < 0 or prod(shape) > FREED_AT_ONCE:
            _each_element(lowering, array, op, check)
        elif prod(shape):
            elements = product(*(range(size) for size in shape))
            indices = ([lowering.const(i, IndexType(), op) for i in at] for at in elements)
            loaded = [lowering.emit(memref_load(array, at), op).results[0] for at in indices]
            nonzero = _any_nonzero_bits(lowering, loaded, op)
            _only_if(lowering, nonzero, op, lambda: _each_element(lowering, array, op, check))
    if array not in lowering.heap_arrays:
        return
    if (on_heap := lowering.heap_arrays[array]) is None:
        lowering.emit(memref.DeallocOp.get(array), op)
        return
    release = Block()
    release.add_ops([memref.DeallocOp.get(array), scf.YieldOp()])
    for released in release.ops:
        released.location = op.location
    lowering.emit(scf.IfOp(on_heap, [], Region(release)), op)


@lowers(anc.StackAllocOp)
def _stack_alloc(lowering: FunctionLowering, op: Operation) -> None:
    header = lowering.emit(memref.AllocaOp.get(i64, shape=stacks.HEADER.get_shape()), op).results[0]
    zero = lowering.const(0, i64, op)
    for word in (stacks.DATA, stacks.SIZE, stacks.CAPACITY):
        index = lowering.const(word, IndexType(), op)
        lowering.emit(memref.StoreOp.get(zero, header, [index]), op)
    lowering.set(op.results[0], header)


@lowers(anc.StackFreeOp)
def _stack_free(lowering: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, anc.StackFreeOp)
    stack = lowering.get(op.stack)
    if op.checks_enabled:
        size = _stack_size(lowering, stack, op)
        empty = lowering.emit(arith.CmpiOp(size, lowering.const(0, i64, op), "eq"), op).results[0]
        lowering.check(empty, op, "stack freed holding {0} value(s)", [size])
    lowering.call_runtime(stacks.runtime_name(stacks.FREE), [stack], [], op)


@lowers(anc.PushOp, anc.CopyPushOp)
def _push(lowering: FunctionLowering, op: Operation) -> None:
    stack, value = (lowering.get(v) for v in op.operands)
    # check_pushes's check after the call names the op the interpreter runs
    lowering.call_runtime(stacks.runtime_name(stacks.PUSH, value.type), [stack, value], [], op, source=True)


@lowers(anc.PopOp)
def _pop(lowering: FunctionLowering, op: Operation) -> None:
    lowering.set(op.results[0], _checked_pop(lowering, op))


@lowers(anc.CopyPopOp)
def _copy_pop(lowering: FunctionLowering, op: Operation) -> None:
    assert isinstance(op, anc.CopyPopOp)
    popped = _checked_pop(lowering, op)
    if not op.checks_enabled:
        return
    value = lowering.get(op.value)
    same = lowering.same(popped, value, op)
    lowering.check(same, op, POPPED_OTHER, [popped, value], kinds=_shown_as(op.value.type, 2))


# ---------------------------------------------------------------------------
# Checkpointed gradients: action tables and snapshot records on stacks
# ---------------------------------------------------------------------------


@lowers(NextOp)
def _next(lowering: FunctionLowering, op: Operation) -> None:
    """A call of the cursor machine (``revmlir.lowering.cursor_functions``), added to
    the module with the stack functions it calls.  The machine has no error
    slot: its caller checks that a transition one level deeper grew the
    frames, as ``check_pushes`` checks the pushes of the function itself."""
    assert isinstance(op, NextOp)
    for function in cursor_functions.definitions():
        lowering.runtime.setdefault(function.sym_name.data, function)
    header, index = stacks.HEADER, IndexType()
    lowering.runtime.setdefault(cursor_functions.PUSH, func.FuncOp.external(cursor_functions.PUSH, [header, index], []))
    lowering.runtime.setdefault(cursor_functions.POP, func.FuncOp.external(cursor_functions.POP, [header], [index]))
    schedule = op.schedule
    constants = [
        lowering.const(SCHEMES.index(schedule.scheme.data), index, op),
        lowering.const(schedule.snapshots.data, index, op),
    ]
    operands = [lowering.get(v) for v in (op.frames, op.steps, *op.words)]
    frames, depth = operands[0], operands[-1]
    size = _stack_size(lowering, frames, op)
    results = lowering.call_runtime(
        cursor_functions.NAME, [frames, *constants, *operands[1:]], [index] * len(op.results), op
    )
    # A transition that goes one level deeper pushes a frame; a push that
    # could not grow the stack left its size as it was.
    deeper = lowering.emit(arith.CmpiOp(results[-1], depth, "sgt"), op).results[0]
    unchanged = lowering.emit(arith.CmpiOp(_stack_size(lowering, frames, op), size, "eq"), op).results[0]
    failed = lowering.emit(arith.AndIOp(deeper, unchanged), op).results[0]
    pushed = lowering.emit(arith.XOrIOp(failed, lowering.const(True, i1, op)), op).results[0]
    lowering.check(pushed, op, STACK_NOT_GROWN, [size], ExecutionError)
    # A transition one level up pops a frame, which hand-written words can
    # ask of empty frames.
    shallower = lowering.emit(arith.CmpiOp(results[-1], depth, "slt"), op).results[0]
    empty = lowering.emit(arith.CmpiOp(size, lowering.const(0, i64, op), "eq"), op).results[0]
    underflow = lowering.emit(arith.AndIOp(shallower, empty), op).results[0]
    popped = lowering.emit(arith.XOrIOp(underflow, lowering.const(True, i1, op)), op).results[0]
    lowering.check(popped, op, EMPTY_STACK)
    for old, new in zip(op.results, results, strict=True):
        lowering.set(old, new)


def _each_element(
    lowering: FunctionLowering,
    array: SSAValue,
    like: Operation,
    visit: Callable[[list[SSAValue]], object],
    reverse: bool = False,
) -> None:
    """``visit(indices)`` inside loops over every element of ``array``, in
    row-major order or (``reverse``) its reverse."""
    assert isinstance(array.type, MemRefType)
    rank = len(array.type.get_shape())

    def nest(dimension: int, indices: list[SSAValue]) -> None:
        if dimension == rank:
            visit(indices)
            return
        index = IndexType()
        extent = lowering.emit(memref.DimOp(array, lowering.const(dimension, index, like)), like).results[0]
        body = Block(arg_types=[index])
        saved = lowering.builder.insertion_point
        lowering.builder.insertion_point = InsertPoint.at_end(body)
        position: SSAValue = body.args[0]
        if reverse:
            last = lowering.emit(arith.SubiOp(extent, lowering.const(1, index, like)), like)
            position = lowering.emit(arith.SubiOp(last.results[0], position), like).results[0]
        nest(dimension + 1, [*indices, position])
        lowering.emit(scf.YieldOp(), like)
        lowering.builder.insertion_point = saved
        start, step = lowering.const(0, index, like), lowering.const(1, index, like)
        lowering.emit(scf.ForOp(start, extent, step, [], Region(body)), like)

    nest(0, [])


def _flat_index(lowering: FunctionLowering, array: SSAValue, at: Sequence[SSAValue], like: Operation) -> SSAValue:
    """The row-major position of element ``at`` of ``array``."""
    flat = at[0] if at else lowering.const(0, IndexType(), like)
    for dimension, index in enumerate(at[1:], start=1):
        size = lowering.emit(memref.DimOp(array, lowering.const(dimension, IndexType(), like)), like).results[0]
        flat = lowering.emit(
            arith.AddiOp(lowering.emit(arith.MuliOp(flat, size), like).results[0], index), like
        ).results[0]
    return flat


def _element_count(lowering: FunctionLowering, array: SSAValue, like: Operation) -> SSAValue:
    """How many elements ``array`` (a memref) has, as an index."""
    assert isinstance(array.type, MemRefType)
    count = lowering.const(1, IndexType(), like)
    for axis in range(array.type.get_num_dims()):
        size = lowering.emit(memref.DimOp(array, lowering.const(axis, IndexType(), like)), like).results[0]
        count = lowering.emit(arith.MuliOp(count, size), like).results[0]
    return count


def _record_length(lowering: FunctionLowering, op: anc.SnapshotOp | anc.RestoreOp | anc.DropOp) -> SSAValue:
    """The elements of ``op``'s scalars and memrefs: one per scalar, every
    element of each memref (a stack's part, last, comes on top)."""
    length = lowering.const(len(op.scalars()), IndexType(), op)
    for operand in op.values:
        if isinstance(operand.type, MemRefType):
            count = _element_count(lowering, lowering.get(operand), op)
            length = lowering.emit(arith.AddiOp(length, count), op).results[0]
    return lowering.emit(arith.IndexCastOp(length, i64), op).results[0]


def _length_as(lowering: FunctionLowering, length: SSAValue, element: Attribute, like: Operation) -> SSAValue:
    """An ``i64`` length as an element of a record (``anc.holds_length``)."""
    if isinstance(element, IndexType):
        return lowering.emit(arith.IndexCastOp(length, element), like).results[0]
    if is_float_type(element):
        return lowering.emit(arith.SIToFPOp(length, element), like).results[0]
    return length


def _length_of(lowering: FunctionLowering, stored: SSAValue, like: Operation) -> SSAValue:
    """A length stored as an element, as an ``i64``."""
    if isinstance(stored.type, IndexType):
        return lowering.emit(arith.IndexCastOp(stored, i64), like).results[0]
    if is_float_type(stored.type):
        return lowering.emit(arith.FPToSIOp(stored, i64), like).results[0]
    return stored


def _copy_stack(
    lowering: FunctionLowering,
    op: Operation,
    target: tuple[SSAValue, SSAValue],
    source: tuple[SSAValue, SSAValue],
    count: SSAValue,
    element: Attribute,
) -> None:
    """``count`` elements of ``source`` (a stack, a first position) written
    at ``target`` (a stack, a position) in one memory copy, the target grown
    and its size raised to the copy's end where they were less
    (``revmlir.stack.copy``)."""
    width = stacks.element_width(lambda built: lowering.emit(built, op).results[0], element)
    copy = stacks.runtime_name(stacks.COPY)
    lowering.call_runtime(copy, [target[0], target[1], source[0], source[1], count, width], [], op)


def _check_grown(lowering: FunctionLowering, op: Operation, stack: SSAValue, end: SSAValue, size: SSAValue) -> None:
    """Stop the run, as after a push, where ``stack`` did not grow to
    ``end`` elements (its buffer could not grow; ``size``: before)."""
    grown = lowering.emit(arith_cmpi(_stack_size(lowering, stack, op), end, "eq"), op).results[0]
    lowering.check(grown, op, STACK_NOT_GROWN, [size], ExecutionError)


def _each_in_record(
    lowering: FunctionLowering,
    op: anc.SnapshotOp | anc.RestoreOp,
    start: SSAValue,
    visit: Callable[[int, SSAValue, list[SSAValue] | None], object],
) -> None:
    """``visit(operand number, position, indices)`` for every element of
    ``op``'s record, which starts at position ``start`` (an ``i64``) of its
    store: a scalar (``indices`` ``None``) takes one position, a memref
    its elements in row-major order (``visit`` runs inside loops over
    them).  The record is whole in the buffer, so positions need no check."""
    position = start
    for number, operand in enumerate(op.values):
        if isinstance(operand.type, anc.StackType):
            continue
        value = lowering.get(operand)
        if not isinstance(value.type, MemRefType):
            visit(number, position, None)
            position = lowering.emit(arith.AddiOp(position, lowering.const(1, i64, op)), op).results[0]
            continue

        def element(
            at: list[SSAValue], number: int = number, value: SSAValue = value, first: SSAValue = position
        ) -> None:
            flat = lowering.emit(arith.IndexCastOp(_flat_index(lowering, value, at, op), i64), op).results[0]
            visit(number, lowering.emit(arith.AddiOp(first, flat), op).results[0], at)

        _each_element(lowering, value, op, element)
        count = lowering.emit(arith.IndexCastOp(_element_count(lowering, value, op), i64), op).results[0]
        position = lowering.emit(arith.AddiOp(position, count), op).results[0]


def _zero(lowering: FunctionLowering, element: Attribute, like: Operation) -> SSAValue:
    """Zero of a stack's element type."""
    if isinstance(element, ComplexType):
        zero = FloatAttr(0.0, element.element_type)
        return lowering.emit(complexd.ConstantOp(ArrayAttr([zero, zero]), element), like).results[0]
    return lowering.const(0, element, like)


def _fill(lowering: FunctionLowering, op: Operation, stack: SSAValue, count: SSAValue, element: Attribute) -> SSAValue:
    """Push ``count`` zeros on ``stack`` at once, stopping the run where its
    buffer cannot grow (as after a push); the size before."""
    size = _stack_size(lowering, stack, op)
    fill = stacks.runtime_name(stacks.FILL, element)
    lowering.call_runtime(fill, [stack, count, _zero(lowering, element, op)], [], op)
    _check_grown(lowering, op, stack, lowering.emit(arith.AddiOp(size, count), op).results[0], size)
    return size


def _held_record(lowering: FunctionLowering, op: anc.RestoreOp | anc.DropOp) -> tuple[SSAValue, SSAValue | None]:
    """Where the top record of ``op``'s store starts, and the length of its
    stack's part (stored on top) if it holds one.  A store holding less
    than a record is reported whatever ``nocheck`` says, as the interpreter
    does: the verifier proves it held only for straight-line snapshots, not
    for those of a loop driven by ``ad.next``.  The stored length is read
    only where the store holds it; one that does not holds less than the
    record whatever it would say, which the one check reports.  The length
    read is bounded, ``0 <= held <= size - with_top`` (``_within``): a
    hand-written store's top word would otherwise place the record outside
    the store, and its part be read past the buffer."""
    store, element = lowering.get(op.store), stack_element(op.store.type)
    size = _stack_size(lowering, store, op)
    length = _record_length(lowering, op)
    what = "restore" if isinstance(op, anc.RestoreOp) else "drop"
    held: SSAValue | None = None
    if op.stack() is not None:
        one = lowering.const(1, i64, op)
        with_top = lowering.emit(binary(arith.AddiOp, length, one), op).results[0]
        room = lowering.emit(arith_cmpi(size, with_top, "sge"), op).results[0]
        top = lowering.emit(binary(arith.SubiOp, size, one), op).results[0]
        at = lowering.emit(arith.SelectOp(room, top, lowering.const(0, i64, op)), op).results[0]
        stored = _read_if(lowering, op, room, store, at, element)
        held = _length_of(lowering, stored, op)
        space = lowering.emit(binary(arith.SubiOp, size, with_top), op).results[0]
        enough = lowering.emit(binary(arith.AndIOp, room, _within(lowering, stored, held, space, op)), op).results[0]
        length = lowering.emit(binary(arith.AddiOp, with_top, held), op).results[0]
    else:
        enough = lowering.emit(arith_cmpi(size, length, "sge"), op).results[0]
    lowering.check(enough, op, f"no snapshot to {what}")
    return lowering.emit(binary(arith.SubiOp, size, length), op).results[0], held


def _within(lowering: FunctionLowering, stored: SSAValue, held: SSAValue, space: SSAValue, like: Operation) -> SSAValue:
    """Whether a stored length (``stored``, as an ``i64``: ``held``) lies
    in ``0..space``.  An integer takes one unsigned comparison (a negative
    one is a huge unsigned one); a float is compared as a float, before its
    conversion counts (NaN and what ``i64`` cannot hold convert to nothing
    defined), as the interpreter compares it."""
    if not is_float_type(stored.type):
        return lowering.emit(arith_cmpi(held, space, "ule"), like).results[0]
    zero = lowering.const(0.0, stored.type, like)
    room = lowering.emit(arith.SIToFPOp(space, stored.type), like).results[0]
    low = lowering.emit(arith_cmpf(stored, zero, "oge"), like).results[0]
    high = lowering.emit(arith_cmpf(stored, room, "ole"), like).results[0]
    return lowering.emit(binary(arith.AndIOp, low, high), like).results[0]


def _read_if(
    lowering: FunctionLowering, op: Operation, ok: SSAValue, stack: SSAValue, at: SSAValue, element: Attribute
) -> SSAValue:
    """The element at ``at`` where ``ok`` holds, else zero: a record's top
    is read only when the store holds one (a failed check goes on)."""
    regions = []
    saved = lowering.builder.insertion_point
    for read in (True, False):
        block = Block()
        lowering.builder.insertion_point = InsertPoint.at_end(block)
        if read:
            value = lowering.call_runtime(stacks.runtime_name(stacks.GET, element), [stack, at], [element], op)[0]
        else:
            value = _zero(lowering, element, op)
        lowering.emit(scf.YieldOp(value), op)
        regions.append(Region(block))
    lowering.builder.insertion_point = saved
    return lowering.emit(scf.IfOp(ok, [element], *regions), op).results[0]


@lowers(anc.SnapshotOp)
def _snapshot(lowering: FunctionLowering, op: Operation) -> None:
    """The record's room is pushed at once as zeros (``_fill``), then
    written element by element in place: no growth check per element, and
    a loop over a memref that LLVM makes a copy.  A stack's part follows:
    its elements, in one memory copy, then its length."""
    assert isinstance(op, anc.SnapshotOp)
    store, element = lowering.get(op.store), stack_element(op.store.type)
    fixed = _record_length(lowering, op)
    length, held = fixed, None
    if (stack := op.stack()) is not None:
        held = _stack_size(lowering, lowering.get(stack), op)
        length = lowering.emit(arith.AddiOp(fixed, held), op).results[0]
        length = lowering.emit(arith.AddiOp(length, lowering.const(1, i64, op)), op).results[0]
    start = _fill(lowering, op, store, length, element)
    put = stacks.runtime_name(stacks.PUT, element)

    def write(number: int, position: SSAValue, at: list[SSAValue] | None) -> None:
        value = lowering.get(op.values[number])
        if at is not None:
            value = lowering.emit(memref.LoadOp.get(value, at), op).results[0]
        lowering.call_runtime(put, [store, position, value], [], op)

    _each_in_record(lowering, op, start, write)
    if stack is not None and held is not None:
        first = lowering.emit(arith.AddiOp(start, fixed), op).results[0]
        _copy_stack(lowering, op, (store, first), (lowering.get(stack), lowering.const(0, i64, op)), held, element)
        top = lowering.emit(arith.AddiOp(first, held), op).results[0]
        lowering.call_runtime(put, [store, top, _length_as(lowering, held, element, op)], [], op)


@lowers(anc.RestoreOp)
def _restore(lowering: FunctionLowering, op: Operation) -> None:
    """The top record read in place, into the memrefs, the stack (emptied,
    then its part of the record copied onto it at once, as a fill grows
    it) and the results; the record stays."""
    assert isinstance(op, anc.RestoreOp)
    store, element = lowering.get(op.store), stack_element(op.store.type)
    start, held = _held_record(lowering, op)
    get = stacks.runtime_name(stacks.GET, element)
    scalars: dict[int, SSAValue] = {}

    def read(number: int, position: SSAValue, at: list[SSAValue] | None) -> None:
        value = lowering.call_runtime(get, [store, position], [element], op)[0]
        if at is None:
            scalars[number] = value
        else:
            lowering.emit(memref.StoreOp.get(value, lowering.get(op.values[number]), at), op)

    _each_in_record(lowering, op, start, read)
    if (stack := op.stack()) is not None and held is not None:
        target = lowering.get(stack)
        word = lowering.const(stacks.SIZE, IndexType(), op)
        empty = lowering.const(0, i64, op)
        lowering.emit(memref.StoreOp.get(empty, target, [word]), op)
        first = lowering.emit(arith.AddiOp(start, _record_length(lowering, op)), op).results[0]
        _copy_stack(lowering, op, (target, empty), (store, first), held, element)
        _check_grown(lowering, op, target, held, empty)
    for old, number in zip(op.results, sorted(scalars), strict=True):
        lowering.set(old, scalars[number])


@lowers(anc.DropOp)
def _drop(lowering: FunctionLowering, op: Operation) -> None:
    """The top record forgotten: the size lowered past it."""
    assert isinstance(op, anc.DropOp)
    start, _ = _held_record(lowering, op)
    word = lowering.const(stacks.SIZE, IndexType(), op)
    lowering.emit(memref.StoreOp.get(start, lowering.get(op.store), [word]), op)


@lowers(anc.ZeroPadOp)
def _zero_pad(lowering: FunctionLowering, op: Operation) -> None:
    """The shadow padded with zeros up to the stack's size, all at once."""
    assert isinstance(op, anc.ZeroPadOp)
    shadow, stack = lowering.get(op.shadow), lowering.get(op.stack)
    missing = lowering.emit(
        arith.SubiOp(_stack_size(lowering, stack, op), _stack_size(lowering, shadow, op)), op
    ).results[0]
    count = lowering.emit(arith.MaxSIOp(missing, lowering.const(0, i64, op)), op).results[0]
    _fill(lowering, op, shadow, count, stack_element(op.shadow.type))


def _check_std_function(
    function: func.FuncOp, defined: set[str], checks: CheckTable, runtime: dict[str, func.FuncOp], check_ops: bool
) -> None:
    """A ``func.func`` the module brought with it (ordinary code that runs as
    it is) gets an error slot, which its calls pass on, and the checks of
    ``revmlir.safety`` before its array accesses, divisions, shifts and
    loops (in every block: upstream's ``cf`` form has several); its
    ``cf.assert`` ops become checks too."""
    block = function.body.blocks[0]
    error = block.insert_arg(ERROR_SLOT, len(block.args))
    error.name_hint = "err"
    inputs, outputs = function.function_type.inputs.data, function.function_type.outputs.data
    function.function_type = FunctionType.from_lists([*inputs, ERROR_SLOT], list(outputs))
    code = CheckedCode(function, checks, runtime, error, Builder(InsertPoint.at_start(block)), check_ops)
    for op in nested_ops(function):
        code.builder.insertion_point = InsertPoint.before(op)
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            code.check_indices(op, op.memref, list(op.indices))
        code.check_arithmetic(op)
        if isinstance(op, scf.ForOp):
            check_step(code, op.step, op)
        if isinstance(op, scf.ParallelOp):
            for step in op.step:
                check_step(code, step, op)
        if isinstance(op, cf.AssertOp):
            # a failed assertion leaves the run like any check, with its
            # message, instead of trapping the process
            code.check(op.arg, op, literal_template(op.msg.data), error=ExecutionError)
            op.detach()
            op.erase()
        if isinstance(op, ApplyOp | InvokeOp):
            call = lower_primitive_call(code, op)
            for old, new in zip(op.results, call.results, strict=True):
                old.replace_all_uses_with(new)
            op.detach()
            op.erase()
        if isinstance(op, func.CallOp) and op.callee.string_value() in defined:
            call = func.CallOp(op.callee.string_value(), [*op.arguments, error], list(op.res.types))
            call.location = op.location
            Rewriter.replace_op(op, call)


LOWERED_ATTR = "rev.lowered"
"""The mark the pass leaves on the module it lowered: what only it
writes (``rev-host-safety`` and ``rev-gpu-outline`` write the check table
``rev.checks`` too, and a program may bring one)."""


@dataclass(frozen=True)
class RevLowerToStdPass(ModulePass):
    """Lower rev/anc functions to func/scf/arith/math/memref/complex."""

    name = "rev-lower-to-std"

    tolerance: float = DEFAULT_TOLERANCE
    """Relative and absolute tolerance of float checks at anc.free."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if lowered_already(op):
            return
        refuse_requests(op)
        lower_to_std(op, self.tolerance)
        call_hypot(op)
        op.attributes[LOWERED_ATTR] = UnitAttr()


def lowered_already(module: ModuleOp) -> bool:
    """Whether the pass has run on ``module`` (it carries ``rev.lowered``):
    a second run leaves it as it is, where it would have given every
    function a second error slot and refused the runtime's own functions as
    the program's.  A ``rev.func`` in such a module, which that run did not
    lower, is refused at the function."""
    if LOWERED_ATTR not in module.attributes:
        return False
    for function in module.ops:
        if isinstance(function, rev.FuncOp):
            raise PassFailedException(
                f"{describe_op(function)}: the module has been lowered by rev-lower-to-std already "
                f"(it carries {LOWERED_ATTR}), but not @{function.sym_name.data}: lower every rev.func in one run"
            )
    return True


def refuse_requests(module: ModuleOp) -> None:
    """Refuse, at the request, an ``ad`` op the module still holds: lowering
    replaces the ``rev.func`` it names by a ``func.func``, after which no
    ``ad-*`` pass can derive what it asks for, and the op names a function
    that is no ``rev.func`` any more."""
    for request in module.ops:
        if isinstance(request, FunctionRequestOp):
            raise PassFailedException(
                f"{describe_op(request)}: what it requests of @{request.function_name} is not derived yet: "
                f"run {request.EXPANDED_BY} before rev-lower-to-std"
            )


def call_hypot(module: ModuleOp) -> None:
    """Each ``math.hypot`` becomes a call of the C library's ``hypot``
    (``hypotf`` on f32), declared in the module, for the pass's output,
    which upstream MLIR reads: upstream's ``math`` has no ``hypot``, and
    its lowering of ``complex.abs`` is a formula of its own, not libm's
    (``hypot(inf, nan)`` would be NaN).  Native code and GPU kernels keep
    the op, which they lower to libm's or libdevice's function."""
    declared: set[str] = set()
    for op in [op for op in nested_ops(module) if isinstance(op, HypotOp)]:
        type = op.result.type
        name = "hypotf" if isinstance(type, Float32Type) else "hypot"
        if name not in declared:
            if SymbolTable.lookup_symbol(module, name) is not None:
                raise PassFailedException(
                    f"{describe_op(op)} calls the C library's '{name}', which is also the name of a "
                    "function of the module: rename it"
                )
            module.body.block.add_op(func.FuncOp.external(name, [type, type], [type]))
            declared.add(name)
        Rewriter.replace_op(op, func.CallOp(name, [op.lhs, op.rhs], [type]))


def lower_to_std(
    op: ModuleOp,
    tolerance: float = DEFAULT_TOLERANCE,
    check_ops: bool = False,
    numbered_after: Sequence[str] = (),
    owned: bool = False,
) -> None:
    """``rev-lower-to-std`` on ``op``; with ``check_ops``, each run-time
    check is one ``CheckOp`` instead of its std form, for the pipelines
    that translate the result to LLVM themselves (native code, GPU
    kernels): the pass's output is std IR that MLIR tools read, and
    ``CheckOp`` has no textual form (``revmlir.lowering.checked_code``).
    The module's check table starts with ``numbered_after``, the table of
    a module whose machine code this one's calls (``revmlir.runtime.native``
    compiles a module's inverses beside its functions): a check id then
    names one check of either.  Where ``owned`` (``op`` is the compile's
    own copy, whose functions no one else holds) each rev function is taken
    apart once its std function replaces it, for reference counting to
    free (``revmlir.collector``): left to the collector, BA's kernel's
    were most of what its first collection after the compile went
    through."""
    check_reserved_names(op)
    check_snapshots(op)
    forward_only(op)
    no_inverse = _materialize_uncalled_inverses(op) | _regions_without_inverse(op)
    declare_primitives(op)
    checks = CheckTable(list(numbered_after))
    runtime: dict[str, func.FuncOp] = {}
    plain = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]
    for function in plain:
        _check_std_function(function, {f.sym_name.data for f in plain}, checks, runtime, check_ops)
    shared = shared_arguments(op)
    for source in [f for f in op.ops if isinstance(f, rev.FuncOp)]:
        name = source.sym_name.data
        lowered = FunctionLowering(source, checks, tolerance, runtime, shared[name], no_inverse, check_ops).lower()
        Rewriter.replace_op(source, lowered)
        if owned:
            take_apart(source)
    check_pushes(op, checks, runtime, check_ops)
    if check_ops:
        fast_remainders(op)
    op.body.block.add_ops(runtime[name] for name in sorted(runtime))
    stacks.define_runtime(op)
    define_fail(op)
    op.attributes[CHECKS_ATTR] = ArrayAttr([StringAttr(e) for e in checks.entries])
