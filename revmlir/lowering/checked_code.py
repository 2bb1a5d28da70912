"""Run-time checks as lowered code: ``CheckedCode`` emits them into one
``func.func``, and ``define_fail`` gives ``revmlir.fail`` its std body.

Every lowering that adds checks builds on this: ``rev-lower-to-std``'s
function lowering (a ``CheckedCode`` of its own), the checks it adds to
plain ``func.func`` code, and ``rev-host-safety`` (checked stack pushes,
the recursion bound).  A failing check calls ``revmlir.report`` with its id
and the values it saw (``revmlir.runtime_checks``), which stores them in the
error slot and calls ``revmlir.fail``.

A check has two forms.  In std IR, what ``rev-lower-to-std`` prints, it is
``scf.if (ok xor true) { report(error, id, words…) }``: code that any MLIR
tool reads.  Inside the compilers' own pipelines (``lower_to_std`` with
``check_ops``: native code and GPU kernels), whose IR is never printed, it
is one ``CheckOp``, which ``convert-std-to-llvm`` expands into the branch
and the report's block: a kernel has a check at nearly every array access,
and the std form built, walked and translated ten ops for each.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from math import prod

from xdsl.builder import Builder
from xdsl.dialects import arith, func, llvm, math, memref, scf
from xdsl.dialects import complex as complexd
from xdsl.dialects.builtin import (
    ComplexType,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, traits_def, var_operand_def
from xdsl.rewriter import InsertPoint
from xdsl.traits import MemoryWriteEffect, SymbolTable
from xdsl.utils.exceptions import PassFailedException, VerifyException

from revmlir.dialects.rev import FuncOp
from revmlir.errors import SOURCE_OP_ATTR, ExecutionError, InvertibilityError, LocatedError
from revmlir.fast_ops import (
    arith_cmpi,
    arith_constant,
    binary,
    cast,
    func_call,
    index_cast,
    memref_dim,
    number_attr,
    scf_if,
    scf_yield,
)
from revmlir.implicit_builder import implicit_builder
from revmlir.ir_utils import constant_index, is_float_type
from revmlir.lowering.native_types import element_bytes
from revmlir.naming import DERIVED_INVERSE_ATTR, shown_name
from revmlir.runtime_checks import (
    ERROR_SLOT,
    FAIL,
    PAYLOAD_SLOTS,
    REPORT,
    REPORT_INPUTS,
    CheckTable,
    payload_kinds,
)
from revmlir.safety import (
    DIVISION_BY_ZERO,
    MAX_ALLOCATION,
    NEGATIVE_POWER,
    NEGATIVE_SIZE,
    REMAINDER_BY_ZERO,
    out_of_bounds,
    shift_out_of_range,
    too_large,
)

ABORT = "abort"
"""The C library's ``abort``: what ``revmlir.fail`` does in std IR."""
DIVISIONS = (
    arith.DivSIOp,
    arith.DivUIOp,
    arith.RemSIOp,
    arith.RemUIOp,
    arith.FloorDivSIOp,
    arith.CeilDivSIOp,
    arith.CeilDivUIOp,
)
SHIFTS = (arith.ShLIOp, arith.ShRSIOp, arith.ShRUIOp)


@functools.cache
def _is_division(kind: type[Operation]) -> bool:
    """Whether ``check_arithmetic`` checks ops of class ``kind`` for a zero
    divisor, decided once per class: it asks every op it lowers, and the
    class checks (ABCs) cost more than the answer."""
    return issubclass(kind, DIVISIONS)


@functools.cache
def _is_shift(kind: type[Operation]) -> bool:
    """Whether ``check_arithmetic`` checks ops of class ``kind`` for a shift
    count past the width (once per class, as ``_is_division``)."""
    return issubclass(kind, SHIFTS)


@irdl_op_definition
class CheckOp(IRDLOperation):
    """``revmlir.check %ok, %error, payload… {check = id}``: where ``ok`` is
    false, call ``revmlir.report(error, id, words…)`` with the payload's
    64-bit words (``report_words``), 0 for the slots it leaves, and go on
    after it (the report does not return).  The one-op form of a check
    (module docstring): ``convert-std-to-llvm`` translates it into a
    conditional branch to a block of its own that computes the words and
    calls the report.  No dialect registers it, so no textual IR holds it
    (the parser refuses its name): only the compilers' pipelines make it,
    and they hand it straight to the translation.

    It declares a write (``MemoryWriteEffect``), as its std form's call of
    the report, which writes the error slot and leaves the run, has: so
    nothing moves a load above it (``revmlir.gpu.load_order``: an index is
    loaded only once it is known in range) and dead code elimination keeps
    it although it has no results."""

    name = "revmlir.check"
    ok = operand_def(i1)
    error = operand_def(ERROR_SLOT)
    payload = var_operand_def()
    check = prop_def(IntegerAttr)
    """The check's id: its entry in the module's check table."""

    traits = traits_def(MemoryWriteEffect())

    def verify_(self) -> None:
        """The payload must fit the report's words, which ``_check`` in
        ``convert-std-to-llvm`` passes as they come."""
        if payload_kinds([value.type for value in self.payload]) is None:
            types = ", ".join(str(value.type) for value in self.payload)
            raise VerifyException(
                f"revmlir.check cannot report ({types}): a payload is of integers, indices, floats and "
                f"complex numbers, at most {PAYLOAD_SLOTS} 64-bit words (a complex number takes two)"
            )


def display_name(function: func.FuncOp | FuncOp) -> str:
    """How errors name ``function`` (a ``rev.func`` or its lowered
    ``func.func``, which keeps its mark): ``~f`` for an inverse of ``@f``
    the compile derived, as the interpreter names ``f`` run backwards, and
    a tape function by the function it runs (``naming.shown_name``)."""
    return shown_name(function.sym_name.data, DERIVED_INVERSE_ATTR in function.attributes)


class CheckedCode:
    """Emits run-time checks into one ``func.func`` at the builder's
    insertion point, reporting through its error slot ``error``."""

    def __init__(
        self,
        function: func.FuncOp | FuncOp,
        checks: CheckTable,
        runtime: dict[str, func.FuncOp],
        error: SSAValue,
        builder: Builder,
        check_ops: bool = False,
    ):
        self.function = display_name(function)
        self.checks = checks
        self.runtime = runtime
        self.error = error
        self.builder = builder
        self.check_ops = check_ops
        """Whether a check is one ``CheckOp`` rather than its std form."""

    def get(self, value: SSAValue) -> SSAValue:
        """The value ``value`` of the source stands for here."""
        return value

    def emit(self, op: Operation, like: Operation) -> Operation:
        """Insert ``op`` at the builder's insertion point, located at
        ``like``.  Straight into the block: the builder has no listener and
        no name hint, and ``Builder.insert``'s handling of them cost as much
        as placing the op (a GPU kernel's lowering emits 10,000)."""
        op.location = like.location
        point = self.builder.insertion_point
        if point.insert_before is None:
            point.block.add_op(op)
        else:
            point.block.insert_op_before(op, point.insert_before)
        return op

    def const(self, value: int | float | bool, type: Attribute, like: Operation) -> SSAValue:
        number = float(value) if is_float_type(type) else int(value)
        return self.emit(arith_constant(number, type), like).results[0]

    def call_runtime(
        self,
        name: str,
        args: Sequence[SSAValue],
        results: Sequence[Attribute],
        like: Operation,
        source: bool = False,
    ) -> Sequence[SSAValue]:
        """Call a runtime function, declaring it in the module on first use;
        where ``source``, the call is marked as made for ``like``
        (``SOURCE_OP_ATTR``), which a check registered at it names."""
        if name not in self.runtime:
            self.runtime[name] = func.FuncOp.external(name, [a.type for a in args], list(results))
        call = func_call(name, args, results)
        if source:
            call.attributes[SOURCE_OP_ATTR] = StringAttr(like.name)
        return self.emit(call, like).results

    def check(
        self,
        ok: SSAValue,
        op: Operation,
        message: str,
        payload: Sequence[SSAValue] = (),
        error: type[LocatedError] = InvertibilityError,
        kinds: Sequence[str] | None = None,
        function: str | None = None,
    ) -> None:
        """Leave the run with ``error`` at ``op`` when ``ok`` is false, with
        the ``payload`` values the message template formats: as their types
        travel, or as ``kinds`` says where they stand for other values (a
        log number's logarithm, ``LOG_KIND``), in ``function`` (the one
        being lowered unless the error names another)."""
        kinds = payload_kinds([v.type for v in payload]) if kinds is None else list(kinds)
        if kinds is None:
            raise PassFailedException(f"cannot report {[str(v.type) for v in payload]}")
        identifier = self.checks.register(op, message, kinds, function or self.function, error)
        if REPORT not in self.runtime:
            self.runtime[REPORT] = func.FuncOp.external(REPORT, list(REPORT_INPUTS), [])
        for built in check_form(ok, self.error, identifier, payload, self.check_ops):
            for nested in built.walk():
                nested.location = op.location
            self.emit(built, op)

    def checked_elements(self, op: Operation, sizes: Sequence[SSAValue], type: MemRefType) -> SSAValue:
        """The number of elements of an array of ``type`` with the dynamic
        ``sizes``, as an ``f64`` (which cannot overflow), after checking, as
        the interpreter's ``checked_shape`` does, that no size is negative
        and the array within ``MAX_ALLOCATION`` bytes: ``malloc``'s byte
        count, a product that wraps, is then exact."""
        itemsize = element_bytes(type.element_type)
        static = float(prod(d for d in type.get_shape() if d >= 0))
        elements = self.const(static, f64, op)
        for size in sizes:
            natural = self.emit(arith.CmpiOp(size, self.const(0, size.type, op), "sge"), op).results[0]
            self.check(natural, op, NEGATIVE_SIZE, [size], ExecutionError)
            count = self.emit(arith.IndexCastOp(size, i64), op).results[0]
            count = self.emit(arith.SIToFPOp(count, f64), op).results[0]
            elements = self.emit(arith.MulfOp(elements, count), op).results[0]
        limit = float(MAX_ALLOCATION // itemsize)
        if sizes or static > limit:
            fits = self.emit(arith.CmpfOp(elements, self.const(limit, f64, op), "ole"), op).results[0]
            self.check(fits, op, too_large(itemsize), [elements], ExecutionError)
        return elements

    def check_indices(self, op: Operation, array: SSAValue, indices: Sequence[SSAValue]) -> None:
        """Every index within its axis, as the interpreter checks them: one
        unsigned comparison per axis (a negative index is a huge unsigned
        one), which LLVM can hoist out of a loop whose range it knows."""
        type = array.type
        assert isinstance(type, MemRefType)
        for axis, (index, extent) in enumerate(zip(indices, type.get_shape(), strict=True)):
            known = constant_index(index)
            if known is not None and 0 <= known < extent:
                continue
            size = self.emit(memref_dim(array, self.const(axis, IndexType(), op)), op).results[0]
            inside = self.emit(arith_cmpi(index, size, "ult"), op).results[0]
            self.check(inside, op, out_of_bounds(axis), [index, size], ExecutionError)

    def check_arithmetic(self, op: Operation) -> None:
        """A divisor that is not zero, a shift count within the width: LLVM
        traps on the first and gives poison for the second; an integer
        power's exponent not negative (``NEGATIVE_POWER``)."""
        kind = op.__class__
        if kind is math.IPowIOp:
            base, exponent = (self.get(value) for value in op.operands)
            natural = self.emit(arith_cmpi(exponent, self.const(0, exponent.type, op), "sge"), op).results[0]
            self.check(natural, op, NEGATIVE_POWER, [base, exponent], ExecutionError)
        elif _is_division(kind):
            divisor = self.get(op.operands[1])
            nonzero = self.emit(arith_cmpi(divisor, self.const(0, divisor.type, op), "ne"), op).results[0]
            message = REMAINDER_BY_ZERO if isinstance(op, arith.RemSIOp | arith.RemUIOp) else DIVISION_BY_ZERO
            self.check(nonzero, op, message, (), ExecutionError)
        elif _is_shift(kind):
            count = self.get(op.operands[1])
            type = count.type
            width = 64 if isinstance(type, IndexType) else type.width.data
            within = self.emit(arith_cmpi(count, self.const(width, type, op), "ult"), op).results[0]
            self.check(within, op, shift_out_of_range(width), [count], ExecutionError)

    def words(self, value: SSAValue, like: Operation) -> list[SSAValue]:
        """A value's 64-bit patterns (``report_words``), computed here."""
        ops, words = report_words(value)
        for word in ops:
            self.emit(word, like)
        return words


def check_form(
    ok: SSAValue, error: SSAValue, identifier: int, payload: Sequence[SSAValue], one_op: bool
) -> list[Operation]:
    """The ops of check ``identifier`` of ``ok`` reporting ``payload``
    through ``error``: one ``CheckOp`` (``one_op``), or the std form,
    ``true``, ``ok xor true`` and the ``scf.if`` around the report's call
    (module docstring).  Every lowering that checks builds its checks here,
    so that the two forms stay one check.  They are not placed, except by
    an ``implicit_builder`` the caller has open (the GPU arena's builders),
    which places each op as it is made."""
    if one_op:
        properties: dict[str, Attribute] = {"check": number_attr(identifier, i64)}
        return [CheckOp.create(operands=[ok, error, *payload], properties=properties)]
    true = arith_constant(1, i1)
    bad = binary(arith.XOrIOp, ok, true.results[0])
    # Checks that pass cost a comparison and a branch to a cold path
    # that does not come back: one call of the module's report.
    report = Block()
    with implicit_builder(report):
        words = [arith_constant(identifier, i64).results[0]]
        for value in payload:
            words += report_words(value)[1]
        if unused := PAYLOAD_SLOTS - (len(words) - 1):
            words += [arith_constant(0, i64).results[0]] * unused
        func_call(REPORT, [error, *words], [])
        scf_yield()
    return [true, bad, scf_if(bad.results[0], Region(report))]


@functools.cache
def _std_size(payload: tuple[Attribute, ...]) -> int:
    """The ops of the std form of a check whose payload has these types."""
    values = Block(arg_types=[i1, ERROR_SLOT, *payload]).args
    return sum(sum(1 for _ in op.walk()) for op in check_form(values[0], values[1], 0, values[2:], False))


def std_size(op: Operation) -> int:
    """How many ops ``op`` and the ops in it are, a ``CheckOp`` counted as
    its std form: what decides by the size of code (loop versioning's
    limit) decides alike on either form."""
    if op.__class__ is CheckOp:
        assert isinstance(op, CheckOp)
        return _std_size(tuple(value.type for value in op.payload))
    return 1 + sum(std_size(nested) for region in op.regions for block in region.blocks for nested in block.ops)


def report_words(value: SSAValue) -> tuple[list[Operation], list[SSAValue]]:
    """The std ops that make a value's 64-bit patterns, not yet placed (but
    by an open ``implicit_builder``), and the patterns: a complex number's parts, one word each, or the value's
    one (floats widened to f64, ints sign-extended).  Both forms of a check
    compute them so (``convert-std-to-llvm`` translates these ops in a
    ``CheckOp``'s report block)."""
    ops: list[Operation] = []
    if not isinstance(value.type, ComplexType):
        return ops, [_bits(value, ops)]
    words = []
    for part in (complexd.ReOp, complexd.ImOp):
        ops.append(part(value))
        words.append(_bits(ops[-1].results[0], ops))
    return ops, words


def _bits(value: SSAValue, ops: list[Operation]) -> SSAValue:
    """``value``'s 64-bit pattern, the ops that make it added to ``ops``."""
    type = value.type
    if isinstance(type, IntegerType) and type.width.data == 64:
        return value
    if isinstance(type, IndexType):
        ops.append(index_cast(value, i64))
    elif isinstance(type, IntegerType):
        ops.append(cast(arith.ExtUIOp if type.width.data == 1 else arith.ExtSIOp, value, i64))
    else:
        if not isinstance(type, Float64Type):
            ops.append(cast(arith.ExtFOp, value, f64))
            value = ops[-1].results[0]
        ops.append(cast(arith.BitcastOp, value, i64))
    return ops[-1].results[0]


def reported_check(op: Operation) -> tuple[int, SSAValue] | None:
    """The check id and the condition ``ok`` of a check in either form (a
    ``CheckOp``, or an ``scf.if`` that ``CheckedCode.check`` made: the id is
    its report's first word), or ``None`` for any other op: passes that
    move checks ask the module's check table what a check is about."""
    if op.__class__ is CheckOp:
        assert isinstance(op, CheckOp)
        return op.check.value.data, op.ok
    if not isinstance(op, scf.IfOp):
        return None
    condition = op.cond.owner
    if op.results or op.false_region.blocks or not isinstance(condition, arith.XOrIOp):
        return None
    true = condition.rhs.owner
    if not (isinstance(true, arith.ConstantOp) and true.value == IntegerAttr(1, i1)):
        return None
    call = next((c for c in op.true_region.walk() if isinstance(c, func.CallOp)), None)
    if call is None or call.callee.string_value() != REPORT:
        return None
    identifier = call.arguments[1].owner
    if not isinstance(identifier, arith.ConstantOp) or not isinstance(identifier.value, IntegerAttr):
        return None
    return identifier.value.value.data, condition.lhs


def define_fail(module: ModuleOp) -> None:
    """Give ``revmlir.report`` and ``revmlir.fail``, where ``module``
    declares them, their std bodies: the report stores the check's id and
    words in the error slot and calls ``revmlir.fail``, which calls the C
    library's ``abort``, so that std IR is complete for any pipeline
    (upstream's ``convert-to-llvm`` and ``mlir-runner`` among them): a failed
    check then ends the process, as ``cf.assert`` does.  revmlir's native
    code replaces the body of ``revmlir.fail`` with a jump back to the entry
    point, which raises the check's error instead
    (``revmlir.runtime.guard``); the GPU's replaces both
    (``revmlir.gpu.to_nvvm``)."""
    _define_report(module)
    declaration = SymbolTable.lookup_symbol(module, FAIL)
    if not isinstance(declaration, func.FuncOp) or not declaration.is_declaration:
        return
    function = func.FuncOp(FAIL, declaration.function_type, visibility="private")
    function.body.block.args[0].name_hint = "error"
    function.body.block.add_ops([llvm.CallOp(ABORT), func.ReturnOp()])
    module.body.block.insert_op_before(function, declaration)
    declaration.detach()
    declaration.erase()
    if SymbolTable.lookup_symbol(module, ABORT) is None:
        abort = llvm.FuncOp(ABORT, llvm.LLVMFunctionType([]), linkage=llvm.LinkageAttr("external"))
        module.body.block.insert_op_before(abort, module.body.block.first_op)


def _define_report(module: ModuleOp) -> None:
    """``revmlir.report``'s std body, if ``module`` declares it (and
    ``revmlir.fail``, which it calls)."""
    declaration = SymbolTable.lookup_symbol(module, REPORT)
    if not isinstance(declaration, func.FuncOp) or not declaration.is_declaration:
        return
    function = func.FuncOp(REPORT, (REPORT_INPUTS, []), visibility="private")
    error, *words = function.body.block.args
    error.name_hint = "error"
    for word, name in zip(words, ["check", *["word"] * PAYLOAD_SLOTS]):
        word.name_hint = name
    builder = Builder(InsertPoint.at_end(function.body.block))
    for slot, word in enumerate(words):
        index = builder.insert(arith.ConstantOp.from_int_and_width(slot, IndexType())).result
        builder.insert(memref.StoreOp.get(word, error, [index]))
    builder.insert(func.CallOp(FAIL, [error], []))
    builder.insert(func.ReturnOp())
    module.body.block.insert_op_before(function, declaration)
    declaration.detach()
    declaration.erase()
    if SymbolTable.lookup_symbol(module, FAIL) is None:
        module.body.block.insert_op_after(func.FuncOp.external(FAIL, [ERROR_SLOT], []), function)
