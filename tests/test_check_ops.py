"""A run-time check's two forms (``revmlir.lowering.checked_code``): the
std form that ``rev-lower-to-std`` prints, and the one ``CheckOp`` of the
compilers' own pipelines (``lower_to_std(check_ops=True)``), which
``convert-std-to-llvm`` expands.  Both must be the same LLVM IR, byte for
byte: what a check does, and the code LLVM makes of it, do not depend on
the form."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.builder import Builder
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ComplexType, IndexType, ModuleOp, f32, f64, i1, i32, i64
from xdsl.rewriter import InsertPoint

from revmlir.errors import ExecutionError
from revmlir.lowering.checked_code import CheckedCode, CheckOp, define_fail, reported_check
from revmlir.lowering.llvm_ir import llvm_ir
from revmlir.lowering.rev_to_std import RevLowerToStdPass, lower_to_std
from revmlir.lowering.std_to_llvm import ModuleTranslation, translate_module
from revmlir.parsing import make_context, parse_module
from revmlir.passes.invert import RevInvertPass
from revmlir.runtime_checks import CHECKS_ATTR, ERROR_SLOT, REPORT, CheckTable

EXAMPLES = sorted(p for p in (Path(__file__).parent.parent / "examples").glob("*.mlir") if p.stem != "multiplier")
"""The examples with run-time checks (the multiplier has none)."""


def _llvm_ir(module: ModuleOp) -> str:
    translate_module(module, ModuleTranslation(), entry_points=True)
    module.attributes.clear()
    return str(llvm_ir(module))


def _reports(module: ModuleOp) -> int:
    return sum(1 for op in module.walk() if isinstance(op, func.CallOp) and op.callee.string_value() == REPORT)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_examples_checks_are_one_op_each_and_the_same_llvm_ir(path: Path) -> None:
    ctx = make_context()
    source = parse_module(path.read_text(), str(path), ctx)
    RevInvertPass().apply(ctx, source)
    std, ops = source.clone(), source.clone()
    RevLowerToStdPass().apply(ctx, std)
    lower_to_std(ops, check_ops=True)
    ops.verify()
    checks = [op for op in ops.walk() if isinstance(op, CheckOp)]
    table = ops.attributes[CHECKS_ATTR]
    assert table == std.attributes[CHECKS_ATTR]
    assert len(checks) == len(table.data) == _reports(std) > 0  # type: ignore[attr-defined]
    assert _reports(ops) == 0
    assert [reported_check(op) is not None for op in std.walk() if isinstance(op, scf.IfOp)].count(True) == len(checks)
    assert sum(1 for _ in ops.walk()) < sum(1 for _ in std.walk())
    assert _llvm_ir(ops) == _llvm_ir(std)


def _checked(check_ops: bool) -> ModuleOp:
    """A function that checks its ``i1`` argument four times, each check
    reporting values of other kinds: an index and an ``i64``, an ``i32``
    (sign-extended) and the ``i1`` (zero-extended), an ``f64`` and an
    ``f32`` (widened), and a complex number's two parts."""
    types = [IndexType(), i64, i32, i1, f64, f32, ComplexType(f64), ERROR_SLOT]
    function = func.FuncOp("f", (types, []))
    block = function.body.block
    runtime: dict[str, func.FuncOp] = {}
    code = CheckedCode("f", CheckTable(), runtime, block.args[-1], Builder(InsertPoint.at_end(block)), check_ops)
    index, wide, narrow, flag, double, single, number, _ = block.args
    for payload in ([index, wide], [narrow, flag], [double, single], [number]):
        code.check(flag, function, "saw {0}", payload, ExecutionError)
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
