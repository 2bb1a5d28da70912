"""A run-time check's two forms (``revmlir.lowering.checked_code``): the
std form that ``rev-lower-to-std`` prints, and the one ``CheckOp`` of the
compilers' own pipelines (``lower_to_std(check_ops=True)``), which
``convert-std-to-llvm`` expands.  Through native code's whole pipeline
(loop versioning, the host's checks, aliasing) both report at the same
checks, except that the op form drops a check of a condition a check
before it in its scope checked, which cannot fail: the examples' affine,
power and unitary have two each.  Checks of four conditions give the same
LLVM IR, byte for byte, in either form.  And the op itself: its effect, and
what it verifies."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import ComplexType, IndexType, IntegerAttr, MemRefType, ModuleOp, f32, f64, i1, i32, i64
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.traits import MemoryEffectKind, has_effects
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import VerifyException

import revmlir as rv
import revmlir.runtime.native as native
import revmlir.runtime.std_form as std_form
from revmlir.errors import ExecutionError
from revmlir.gpu.load_order import loads_first
from revmlir.lowering.checked_code import CheckedCode, CheckOp, define_fail, reported_check, std_size
from revmlir.lowering.llvm_ir import llvm_ir
from revmlir.lowering.loop_versioning import MAX_BODY_OPS
from revmlir.lowering.rev_to_std import RevLowerToStdPass, lower_to_std
from revmlir.lowering.std_to_llvm import ModuleTranslation, translate_module
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime_checks import CHECKS_ATTR, ERROR_SLOT, REPORT, CheckTable
from safety_programs import read_a_row

EXAMPLES = sorted(p for p in (Path(__file__).parent.parent / "examples").glob("*.mlir") if p.stem != "multiplier")
"""The examples with run-time checks (the multiplier has none)."""


def _llvm_ir(module: ModuleOp) -> str:
    translate_module(module, ModuleTranslation(), entry_points=True)
    module.attributes.clear()
    return str(llvm_ir(module))


REUSED = (arith.ConstantOp, memref.DimOp, arith.CmpiOp)
"""The ops whose value the translation computes once per scope (a block and
the blocks that continue its code): a condition made of them, of the same
values in the same block, is one value in LLVM IR."""


def _condition(value: SSAValue) -> object:
    """What identifies ``value`` in LLVM IR: the value itself, an index's
    ``i64`` (the same LLVM value), or for an op of ``REUSED``, its block,
    kind, properties and operands."""
    op = value.owner
    if isinstance(op, arith.IndexCastOp) and {op.input.type, op.result.type} == {IndexType(), i64}:
        return _condition(op.input)
    if not isinstance(op, REUSED):
        return value
    return (op.parent_block(), op.name, tuple(op.properties.items()), tuple(map(_condition, op.operands)))


def _rechecked(work: ModuleOp) -> Counter[int]:
    """The ids of the checks in ``work``, in either form, of a condition that
    a check before them in their block checked: those the op form drops (an
    id more than once where the pipeline copied a check)."""
    checked: set[tuple[Block | None, object]] = set()
    rechecked = Counter[int]()
    for op in work.walk():
        if (check := reported_check(op)) is not None:
            key = (op.parent_block(), _condition(check[1]))
            if key in checked:
                rechecked[check[0]] += 1
            checked.add(key)
    return rechecked


def _native_code(module: ModuleOp, check_ops: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Counter[int]]:
    """Native code's LLVM IR of ``module`` (``lower_to_llvm_ir``, the whole
    pipeline), its checks lowered in the form ``check_ops`` says, and the
    checks of the std IR it translated that check again (``_rechecked``)."""
    rechecked = Counter[int]()

    def lowered(work: ModuleOp, tolerance: float, **pipeline: object) -> None:
        lower_to_std(work, tolerance, **{**pipeline, "check_ops": check_ops})  # type: ignore[arg-type]

    def translated(work: ModuleOp, *args: object, **kwargs: object) -> None:
        rechecked.update(_rechecked(work))
        translate_module(work, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(std_form, "lower_to_std", lowered)
        patch.setattr(native, "translate_module", translated)
        return native.lower_to_llvm_ir(module).llvm_ir, rechecked


_REPORTED = re.compile(rf'call ccc void @"{re.escape(REPORT)}"\(ptr [^,]+, i64 [^,]+, i64 (\d+)')


def _report_ids(text: str) -> Counter[int]:
    """The check ids of the report calls in LLVM IR: each call once."""
    return Counter(int(found) for found in _REPORTED.findall(text))


_INSTRUCTION = re.compile(r"= (\w+) |^\s+(store|call|br|ret)\b", re.MULTILINE)


def _instructions(text: str) -> Counter[str]:
    """How many instructions of each opcode LLVM IR has."""
    return Counter(value or void for value, void in _INSTRUCTION.findall(text))


def _same_native_code_but_rechecks(module: ModuleOp, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, Counter[int]]:
    """Native code's LLVM IR of ``module`` with ``CheckOp`` checks and with
    std ones, and the checks that check again (``_rechecked``): the std
    form reports at every check, the op form at all but those, and lacks
    only their code (the ``xor``, the branch, the report's call and the
    branch back; the payload's conversions to words)."""
    ops, rechecked = _native_code(module, True, monkeypatch)
    std, rechecked_std = _native_code(module, False, monkeypatch)
    assert rechecked == rechecked_std
    reported = _report_ids(std)
    assert reported.total() > 0
    assert rechecked <= reported
    assert _report_ids(ops) == reported - rechecked
    dropped, count = _instructions(std) - _instructions(ops), rechecked.total()
    assert not _instructions(ops) - _instructions(std)
    assert [dropped["xor"], dropped["call"], dropped["br"]] == [count, count, 2 * count]
    assert set(dropped) <= {"xor", "call", "br", "sext", "zext", "fpext", "bitcast", "extractvalue"}
    return ops, std, rechecked


def _reports(module: ModuleOp) -> int:
    return sum(1 for op in module.walk() if isinstance(op, func.CallOp) and op.callee.string_value() == REPORT)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_examples_checks_are_one_op_each_and_report_alike_natively(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_context()
    source = parse_module(path.read_text(), str(path), ctx)
    inverted = source.clone()
    RevInvertPass().apply(ctx, inverted)
    std, ops = inverted.clone(), inverted.clone()
    RevLowerToStdPass().apply(ctx, std)
    lower_to_std(ops, check_ops=True)
    ops.verify()
    checks = [op for op in ops.walk() if isinstance(op, CheckOp)]
    table = ops.attributes[CHECKS_ATTR]
    assert table == std.attributes[CHECKS_ATTR]
    assert len(checks) == len(table.data) == _reports(std) > 0  # type: ignore[attr-defined]
    assert _reports(ops) == 0
    assert [reported_check(op) is not None for op in std.walk() if isinstance(op, scf.IfOp)].count(True) == len(checks)
    assert sum(1 for _ in ops.walk()) < sum(1 for _ in std.walk()) == std_size(std) == std_size(ops)
    _same_native_code_but_rechecks(source, monkeypatch)


def test_a_row_read_twice_is_checked_against_the_rows_once_natively(monkeypatch: pytest.MonkeyPatch) -> None:
    """``read_a_row`` (``safety_programs.py``) reads ``m[i, 0]``, then
    ``m[i, 1]``: native code checks ``i`` against the rows at the first read
    of each direction only, and each column at its own read.
    ``test_native_safety.py`` runs it past the rows and the columns."""
    function = rv.reversible(backend="native")(read_a_row)
    module = parse_module(function.mlir(0.0, np.zeros((2, 2)), 2), "read_a_row.mlir")
    _, _, rechecked = _same_native_code_but_rechecks(module, monkeypatch)
    table = native.lower_to_llvm_ir(module).check_table.attributes[CHECKS_ATTR]
    entries = [entry.data.split("|") for entry in table.data]  # type: ignore[attr-defined]
    rows = {
        name: [id for id, entry in enumerate(entries, 1) if entry[3] == name and "axis 0" in entry[5]]
        for name in ("read_a_row", "~read_a_row")
    }
    assert all(len(checks) == 2 for checks in rows.values())
    assert sorted(rechecked.elements()) == sorted(second for _, second in rows.values())


def _loads(count: int) -> str:
    """A function whose loop sums ``count`` loads of ``x[i]``, each checked."""
    body = "\n".join(
        f"    %v{k} = memref.load %x[%i] : memref<?xf64>\n    %a{k + 1} = arith.addf %a{k}, %v{k} : f64"
        for k in range(count)
    )
    return f"""
func.func @f(%x: memref<?xf64>, %y: memref<?xf64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {{
    %a0 = arith.constant 0.0 : f64
{body}
    memref.store %a{count}, %y[%i] : memref<?xf64>
  }}
  return
}}
"""


LOADS_AT_LIMIT = 284
"""The most loads of ``_loads`` whose loop is at most ``MAX_BODY_OPS`` ops
in the std form (14 per load, 16 besides)."""


@pytest.mark.parametrize("count", [LOADS_AT_LIMIT, LOADS_AT_LIMIT + 1])
def test_a_loop_near_the_size_limit_is_versioned_alike_in_either_form(
    count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loop versioning's limit counts a ``CheckOp`` as its std form's ops:
    one op instead of nine would version loops larger than
    ``rev-version-loops`` on the printed form does."""
    module = parse_module(_loads(count), "loads.mlir")
    sizes = []
    for form in (False, True):
        work = module.clone()
        lower_to_std(work, check_ops=form)
        loop = next(op for op in work.walk() if isinstance(op, scf.ForOp))
        sizes.append(std_size(loop))
    assert sizes[0] == sizes[1]
    assert (sizes[0] <= MAX_BODY_OPS) == (count == LOADS_AT_LIMIT)
    ops, std, rechecked = _same_native_code_but_rechecks(module, monkeypatch)
    # a versioned loop loads each element in both versions
    for text in (ops, std):
        assert text.count("load double") == count * (2 if count == LOADS_AT_LIMIT else 1)
    # the checked loop checks i against x's size once, not at every load
    assert rechecked.total() == count - 1


def _checked(check_ops: bool) -> ModuleOp:
    """A function that checks four ``i1`` arguments, each check reporting
    values of other kinds: an index and an ``i64``, an ``i32``
    (sign-extended) and an ``i1`` (zero-extended), an ``f64`` and an
    ``f32`` (widened), and a complex number's two parts."""
    types = [IndexType(), i64, i32, i1, f64, f32, ComplexType(f64), i1, i1, i1, ERROR_SLOT]
    function = func.FuncOp("f", (types, []))
    block = function.body.block
    runtime: dict[str, func.FuncOp] = {}
    code = CheckedCode(function, CheckTable(), runtime, block.args[-1], Builder(InsertPoint.at_end(block)), check_ops)
    index, wide, narrow, flag, double, single, number, *others, _ = block.args
    conditions = [flag, *others]
    for condition, payload in zip(conditions, ([index, wide], [narrow, flag], [double, single], [number])):
        code.check(condition, function, "saw {0}", payload, ExecutionError)
    block.add_op(func.ReturnOp())
    module = ModuleOp([function, *runtime.values()])
    define_fail(module)
    return module


def test_every_kind_of_payload_reports_the_same_words_in_either_form() -> None:
    ops, std = _checked(True), _checked(False)
    assert sum(isinstance(op, CheckOp) for op in ops.walk()) == 4
    assert _reports(std) == 4 and _reports(ops) == 0
    text = _llvm_ir(ops)
    assert text == _llvm_ir(std)
    for conversion in ("sext i32", "zext i1", "fpext float", "bitcast double", "extractvalue {double, double}"):
        assert conversion in text


def _checked_again(check_ops: bool) -> ModuleOp:
    """A function that checks its ``i1`` argument, then again, then in an
    ``scf.if`` on it once more."""
    function = func.FuncOp("f", ([i1, IndexType(), ERROR_SLOT], []))
    block = function.body.block
    flag, index, error = block.args
    runtime: dict[str, func.FuncOp] = {}
    table = CheckTable()
    code = CheckedCode(function, table, runtime, error, Builder(InsertPoint.at_end(block)), check_ops)
    code.check(flag, function, "first {0}", [index], ExecutionError)
    code.check(flag, function, "again {0}", [index], ExecutionError)
    branch = scf.IfOp(flag, [], [scf.YieldOp()])
    block.add_ops([branch, func.ReturnOp()])
    inner = branch.true_region.block
    CheckedCode(function, table, runtime, error, Builder(InsertPoint.before(inner.ops.first)), check_ops).check(
        flag, function, "in a branch {0}", [index], ExecutionError
    )
    module = ModuleOp([function, *runtime.values()])
    define_fail(module)
    return module


def test_a_check_of_a_condition_checked_before_in_its_scope_is_dropped_from_the_op_form() -> None:
    """The second check cannot fail (the first's report does not return):
    the op form's LLVM IR calls the report for the first and for the one in
    the branch, a scope of its own, and the std form's for all three."""
    ops, std = _checked_again(True), _checked_again(False)
    assert sum(isinstance(op, CheckOp) for op in ops.walk()) == 3
    call = f'call ccc void @"{REPORT}"('
    assert _llvm_ir(ops).count(call) == 2
    assert _llvm_ir(std).count(call) == 3


def _check(payload: Sequence[Attribute], ok: Attribute = i1, error: Attribute = ERROR_SLOT) -> CheckOp:
    """A ``CheckOp`` of values of these types, in a function of its own."""
    function = func.FuncOp("f", ([ok, error, *payload], []))
    values = function.body.block.args
    check = CheckOp.create(operands=values, properties={"check": IntegerAttr(0, i64)})
    function.body.block.add_ops([check, func.ReturnOp()])
    return check


@pytest.mark.parametrize(
    "payload",
    [
        [IndexType()] * 5,
        [ComplexType(f64), ComplexType(f64), f64],
        [MemRefType(f64, [2])],
        [ERROR_SLOT],
    ],
    ids=["five words", "a complex number past the slots", "an array", "an error slot"],
)
def test_a_check_verifies_that_its_payload_fits_the_reports_words(payload: list[Attribute]) -> None:
    """The translation passes a check's words to ``revmlir.report`` as they
    come: more than its four, or a value that has no word, would be a call
    LLVM refuses without a location."""
    check = _check(payload)
    with pytest.raises(VerifyException, match=r"revmlir.check cannot report \(.*\): a payload is of"):
        check.verify()
    _check([IndexType(), i64, ComplexType(f64)]).verify()  # four words: the most it takes


@pytest.mark.parametrize(
    ("ok", "error"), [(i64, ERROR_SLOT), (i1, MemRefType(i64, [3]))], ids=["condition", "error slot"]
)
def test_a_check_verifies_its_condition_and_error_slot(ok: Attribute, error: Attribute) -> None:
    with pytest.raises(VerifyException):
        _check([], ok, error).verify()


def _check_then_load() -> tuple[ModuleOp, CheckOp, memref.LoadOp]:
    """``f(x, i, ok, error)``: a check of ``ok``, then a load of ``x[i]``
    whose value is stored back into ``x``."""
    array = MemRefType(f64, [4])
    function = func.FuncOp("f", ([array, IndexType(), i1, ERROR_SLOT], []))
    x, index, ok, error = function.body.block.args
    check = CheckOp.create(operands=[ok, error, index], properties={"check": IntegerAttr(0, i64)})
    load = memref.LoadOp.get(x, [index])
    store = memref.StoreOp.get(load.res, x, [index])
    function.body.block.add_ops([check, load, store, func.ReturnOp()])
    return ModuleOp([function]), check, load


def test_a_check_writes_so_no_load_passes_it_and_nothing_erases_it() -> None:
    """A check's failing path writes the error slot and leaves the run: an
    index is loaded only once it is known in range, and a check has no
    result for dead code elimination to find unused."""
    module, check, load = _check_then_load()
    assert has_effects(check, MemoryEffectKind.WRITE)
    block = check.parent_block()
    assert block is not None
    loads_first(block, block)
    for apply in (CanonicalizePass().apply, CommonSubexpressionElimination().apply, DeadCodeElimination().apply):
        apply(Context(), module)
    assert list(block.ops)[:2] == [check, load]
