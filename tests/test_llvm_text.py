"""LLVM IR text printed from ``llvm`` ops (``revmlir.lowering.llvm_text``):
device code compiles to the same PTX printed as converted by xDSL's
backend, and a module holding what the printer has no line for is
converted instead."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from llvmlite import binding
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr, ModuleOp, UnitAttr, f32, f64, i64
from xdsl.ir import Attribute, Block, Operation, Region

from revmlir.gpu import nvptx, program
from revmlir.lowering import llvm_text as printer
from revmlir.lowering.llvm_code import LLVMCode
from revmlir.parsing import make_context, parse_module
from revmlir.passes.adjoint import AdAdjointPass
from test_gpu import END, PARALLEL, SCALARS, _every_math_kernel
from test_gpu_stacks import SNAPSHOTS
from test_prange import gmm_args, gmm_like, variants

WARP_ATOMICS = Path(__file__).parent / "filecheck" / "gpu" / "warp_atomics.mlir"


def _gmm_adjoint() -> tuple[str, list[str]]:
    text = variants(gmm_like, "native")["parallel"].specialization_for(*gmm_args(points=5)).text()
    module = parse_module(text, "gmm.mlir")
    AdAdjointPass(functions=("gmm_like",)).apply(make_context(), module)
    return str(module), ["gmm_like", "gmm_like.adj"]


INTEGERS = f"""
func.func @integers(%y: memref<?xi64>, %x: memref<?xf64>, %k: i64, %m: i32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xi64>
  {PARALLEL.format(lb="%c0", ub="%n", step="%c1")}
    %v = memref.load %y[%i] : memref<?xi64>
    %a = arith.ori %v, %k : i64
    %b = arith.shli %a, %k : i64
    %c = arith.shrui %b, %k : i64
    %d = arith.shrsi %c, %k : i64
    %e = arith.divsi %d, %k : i64
    %f = arith.remsi %e, %k : i64
    %g = arith.remui %f, %k : i64
    %h = arith.trunci %g : i64 to i32
    %j = arith.addi %h, %m : i32
    %l = arith.extui %j : i32 to i64
    %w = memref.load %x[%i] : memref<?xf64>
    %s = arith.fptosi %w : f64 to i64
    %t = arith.xori %l, %s : i64
    memref.store %t, %y[%i] : memref<?xi64>
{END}
  func.return
}}
"""
"""Integer arithmetic the other kernels do not have (``or``, shifts,
signed division and remainder, truncation, ``zext``)."""

KERNELS: dict[str, Callable[[], tuple[str, list[str]]]] = {
    "every math op, f64": lambda: (_every_math_kernel("f64"), ["every_math"]),
    "every math op, f32": lambda: (_every_math_kernel("f32"), ["every_math"]),
    "warp-aggregated atomics": lambda: (WARP_ATOMICS.read_text(), ["k"]),
    "scalar parameters": lambda: (SCALARS, ["scalars"]),
    "integer arithmetic": lambda: (INTEGERS, ["integers"]),
    "a stack's snapshot in the arena": lambda: (SNAPSHOTS.read_text(), ["kernel"]),
    "GMM-like adjoint": _gmm_adjoint,
}
"""Kernels whose device code holds every kind of op the printer has a
line for: integer and float arithmetic with flags, casts, comparisons,
selects, arrays on the stack, loads, stores, addresses, null pointers,
aggregates, calls
of device functions, intrinsics and libdevice, inline assembly,
compare-and-swap, branches with arguments (φ-nodes), returns."""


def _ptx(text: str, names: list[str], printed: bool, monkeypatch: pytest.MonkeyPatch, **options: object) -> str:
    """The kernels' PTX, their LLVM IR printed (and checked to be) or
    converted by xDSL's backend."""
    routes: list[bool] = []

    def traced(*args: object) -> LLVMCode | None:
        code = printer.llvm_text(*args) if printed else None  # type: ignore[arg-type]
        routes.append(code is not None)
        return code

    monkeypatch.setattr(nvptx, "llvm_text", traced)
    module = parse_module(text, "kernels.mlir")
    ptx = program._compile_kernels(module, names, owned=True, **options).ptx  # type: ignore[arg-type]
    assert routes == [printed]
    return ptx


@pytest.mark.parametrize("kernel", KERNELS)
def test_printed_device_code_compiles_to_the_ptx_of_the_converted(kernel: str, monkeypatch: pytest.MonkeyPatch):
    text, names = KERNELS[kernel]()
    options = {"arch": "sm_90", "opt_level": 3, "max_registers": None}
    printed = _ptx(text, names, True, monkeypatch, **options)
    assert printed == _ptx(text, names, False, monkeypatch, **options)


@pytest.mark.parametrize("opt_level, max_registers", [(0, None), (3, 64)])
def test_printed_code_unoptimised_or_with_a_register_bound_is_the_converted(
    opt_level: int, max_registers: int | None, monkeypatch: pytest.MonkeyPatch
):
    """At ``-O0`` each instruction reaches the PTX as printed; the bound on
    registers is metadata after the functions (``.maxnreg``)."""
    text, names = KERNELS["every math op, f64"]()
    options = {"arch": "sm_60", "opt_level": opt_level, "max_registers": max_registers}
    printed = _ptx(text, names, True, monkeypatch, **options)
    assert printed == _ptx(text, names, False, monkeypatch, **options)
    assert (".maxnreg 64" in printed) == (max_registers is not None)


def _function(*ops: Operation, parameters: list[DictionaryAttr] | None = None) -> ModuleOp:
    """A module of one function, ``f``, of ``ops``: of one pointer
    parameter with ``parameters``' attributes, if given."""
    types = [llvm.LLVMPointerType()] if parameters is not None else []
    block = Block(arg_types=types)
    block.add_ops([*ops, llvm.ReturnOp()])
    function = llvm.FuncOp("f", llvm.LLVMFunctionType(types, llvm.LLVMVoidType()), body=Region(block))
    if parameters is not None:
        function.arg_attrs = ArrayAttr(parameters)
    return ModuleOp([function])


def test_a_module_with_what_the_printer_has_no_line_for_is_not_printed():
    """An op, a comparison, a parameter attribute without a line, a
    variadic function or an intrinsic called with two signatures leaves
    the module to xDSL's backend rather than printing other code."""
    assert printer.llvm_text(_function()) is not None
    assert printer.llvm_text(_function(llvm.UnreachableOp())) is None
    variadic = llvm.FuncOp("printf", llvm.LLVMFunctionType([llvm.LLVMPointerType()], i64, is_variadic=True))
    assert printer.llvm_text(ModuleOp([variadic])) is None
    noalias = printer.llvm_text(_function(parameters=[DictionaryAttr({"llvm.noalias": UnitAttr()})]))
    assert noalias is not None and 'define void @"f"(ptr noalias %v0) {' in noalias.text
    assert printer.llvm_text(_function(parameters=[DictionaryAttr({"llvm.nonnull": UnitAttr()})])) is None
    one = llvm.ConstantOp(FloatAttr(1.0, f64), f64)
    assert printer.llvm_text(_function(one, llvm.FCmpOp(one.result, one.result, "_true"))) is None

    def absolute(*types: Attribute) -> list[Operation]:
        constants = [llvm.ConstantOp(FloatAttr(0.5, t), t) for t in types]
        return [*constants, *(llvm.CallIntrinsicOp("llvm.fabs", [c.result], [c.result.type]) for c in constants)]

    assert printer.llvm_text(_function(*absolute(f64, f64))) is not None
    assert printer.llvm_text(_function(*absolute(f64, f32))) is None  # one intrinsic, two signatures


def test_printed_text_gives_block_arguments_as_phi_nodes_and_the_functions_calls():
    """A loop's block argument is a φ-node of the values each branch
    passes; constants are inline; LLVM parses and verifies the text."""
    entry, header, body, done = Block(), Block(arg_types=[i64]), Block(), Block()
    zero, ten, one = (llvm.ConstantOp(IntegerAttr(n, i64), i64) for n in (0, 10, 1))
    entry.add_ops([zero, ten, one, llvm.BrOp(header, zero.result)])
    below = llvm.ICmpOp(header.args[0], ten.result, IntegerAttr(2, i64))  # slt
    header.add_ops([below, llvm.CondBrOp(below.res, body, [], done, [])])
    step = llvm.AddOp(header.args[0], one.result)
    body.add_ops([step, llvm.BrOp(header, step.res)])
    done.add_op(llvm.ReturnOp())
    signature = llvm.LLVMFunctionType([], llvm.LLVMVoidType())
    module = ModuleOp([llvm.FuncOp("loop", signature, body=Region([entry, header, body, done]))])
    code = printer.llvm_text(module, frozenset({"loop"}), {"loop": "ptx_kernel"}, {"loop": ["noinline"]})
    assert code is not None
    assert 'define internal ptx_kernel void @"loop"() noinline {' in code.text
    assert "= phi i64 [0, %b0], [%v2, %b2]" in code.text and "icmp slt i64 %v0, 10" in code.text
    assert code.internal == {"loop"} and code.noinline == {"loop"} and code.functions["loop"].inlinable
    binding.parse_assembly(code.text).verify()
