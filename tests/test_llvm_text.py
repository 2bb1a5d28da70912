"""LLVM IR text printed from ``llvm`` ops (``revmlir.lowering.llvm_text``):
device code compiles to the same PTX printed as converted by xDSL's
backend, and a module holding what the printer has no line for is
converted instead."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from llvmlite import binding, ir
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr, ModuleOp, UnitAttr, f32, f64, i64
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.utils.exceptions import PassFailedException

from revmlir.gpu import nvptx, program
from revmlir.lowering import llvm_text as printer
from revmlir.lowering.llvm_code import LLVMCode, global_reference
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

FLAGS = f"""
func.func @flags(%y: memref<?xi64>, %h: memref<?xi32>, %x: memref<?xf64>, %m: i64, %e: f64) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xi64>
  {PARALLEL.format(lb="%c0", ub="%n", step="%c1")}
    %v = memref.load %y[%i] : memref<?xi64>
    %w = memref.load %h[%i] : memref<?xi32>
    %d = memref.load %x[%i] : memref<?xf64>
    %one = llvm.mlir.constant(1 : i64) : i64
    %two = llvm.mlir.constant(2 : i64) : i64
    %three = llvm.mlir.constant(3 : i64) : i64
    %five = llvm.mlir.constant(5 : i64) : i64
    %add_nsw = llvm.add %v, %one overflow<nsw> : i64
    %r1 = llvm.icmp "sgt" %add_nsw, %v : i64
    %add_nuw = llvm.add %v, %two overflow<nuw> : i64
    %r2 = llvm.icmp "ugt" %add_nuw, %v : i64
    %sub_nsw = llvm.sub %v, %three overflow<nsw> : i64
    %r3 = llvm.icmp "slt" %sub_nsw, %v : i64
    %sub_nuw = llvm.sub %v, %five overflow<nuw> : i64
    %r4 = llvm.icmp "ult" %sub_nuw, %v : i64
    %mul_nsw = llvm.mul %v, %three overflow<nsw> : i64
    %q1 = llvm.sdiv %mul_nsw, %three : i64
    %mul_nuw = llvm.mul %v, %five overflow<nuw> : i64
    %q2 = llvm.udiv %mul_nuw, %five : i64
    %shl_nsw = llvm.shl %v, %two overflow<nsw> : i64
    %q3 = llvm.ashr %shl_nsw, %two : i64
    %shl_nuw = llvm.shl %v, %three overflow<nuw> : i64
    %q4 = llvm.lshr %shl_nuw, %three : i64
    %exact = llvm.udiv exact %v, %m : i64
    %q5 = llvm.mul %exact, %m : i64
    %disjoint = llvm.or disjoint %v, %m : i64
    %q6 = llvm.xor %disjoint, %m : i64
    %narrow = llvm.trunc %v overflow<nsw> : i64 to i32
    %nought = llvm.mlir.constant(0 : i32) : i32
    %r5 = llvm.icmp "slt" %narrow, %nought : i32
    %wide = llvm.zext nneg %w : i32 to i64
    %sign = llvm.mlir.constant(2147483648 : i64) : i64
    %q8 = llvm.and %wide, %sign : i64
    %zero = llvm.mlir.constant(0.0 : f64) : f64
    %f1 = llvm.fadd %d, %zero {{fastmathFlags = #llvm.fastmath<nsz>}} : f64
    %f2 = llvm.fsub %d, %e : f64
    %f3 = llvm.fneg %f2 {{fastmathFlags = #llvm.fastmath<nsz>}} : f64
    %f4 = llvm.fmul %f1, %f3 {{fastmathFlags = #llvm.fastmath<fast>}} : f64
    %g = arith.fptosi %f4 : f64 to i64
    %b1 = llvm.and %r1, %r2 : i1
    %b2 = llvm.and %r3, %r4 : i1
    %b3 = llvm.and %b1, %b2 : i1
    %b = llvm.and %b3, %r5 : i1
    %s1 = llvm.add %q1, %q2 : i64
    %s2 = llvm.add %q3, %q4 : i64
    %s3 = llvm.add %q5, %q6 : i64
    %s5 = llvm.add %s1, %s2 : i64
    %s6 = llvm.add %s3, %q8 : i64
    %s7 = llvm.add %s5, %s6 : i64
    %s = llvm.add %s7, %g : i64
    %t = llvm.select %b, %s, %m : i1, i64
    memref.store %t, %y[%i] : memref<?xi64>
{END}
  func.return
}}
"""
"""``llvm`` ops a user's kernel passes through, of each flag the printer
writes: each lets LLVM fold what reads it (``v +nsw 1 > v`` is true,
``(v *nuw 5) / 5`` is ``v``, a ``trunc nsw`` has its operand's sign,
``-(d - e)`` with ``nsz`` is ``e - d``, a ``zext nneg``'s sign bit is 0,
...), so that a flag printed otherwise than
converted, or not at all, gives other PTX."""


def _at_address(name: str, element: str, body: str) -> str:
    """A function whose parallel loop over ``%y`` (of ``element``s) runs
    ``body`` at each ``%i``, with ``%p`` the address ``%m`` it is given."""
    return f"""
func.func @{name}(%y: memref<?x{element}>, %m: i64) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?x{element}>
  {PARALLEL.format(lb="%c0", ub="%n", step="%c1")}
    %p = llvm.inttoptr %m : i64 to !llvm.ptr
{body}{END}
  func.return
}}
"""


ATOMICS = _at_address(
    "atomics",
    "f64",
    """    %a = llvm.load %p atomic acquire {alignment = 16 : i64} : !llvm.ptr -> f64
    %b = llvm.load %p atomic monotonic : !llvm.ptr -> i32
    %c = llvm.load %p atomic seq_cst : !llvm.ptr -> i16
    %d = llvm.load %p atomic unordered : !llvm.ptr -> !llvm.ptr
    "llvm.store"(%a, %p) <{ordering = 5 : i64}> : (f64, !llvm.ptr) -> ()
    "llvm.store"(%b, %p) <{ordering = 7 : i64, alignment = 8 : i64}> : (i32, !llvm.ptr) -> ()
    "llvm.store"(%c, %p) <{ordering = 2 : i64}> : (i16, !llvm.ptr) -> ()
    "llvm.store"(%d, %p) <{ordering = 1 : i64}> : (!llvm.ptr, !llvm.ptr) -> ()
    memref.store %a, %y[%i] : memref<?xf64>
""",
)
"""Atomic loads and stores of every ordering each takes, with and without
an alignment: LLVM writes each ordering's own PTX (``ld.acquire``,
``st.release``, a fence before a sequentially consistent access,
``ld.relaxed``), so an ordering printed otherwise than converted, or
dropped, gives other PTX."""

KERNELS: dict[str, Callable[[], tuple[str, list[str]]]] = {
    "every math op, f64": lambda: (_every_math_kernel("f64"), ["every_math"]),
    "every math op, f32": lambda: (_every_math_kernel("f32"), ["every_math"]),
    "warp-aggregated atomics": lambda: (WARP_ATOMICS.read_text(), ["k"]),
    "scalar parameters": lambda: (SCALARS, ["scalars"]),
    "integer arithmetic": lambda: (INTEGERS, ["integers"]),
    "a stack's snapshot in the arena": lambda: (SNAPSHOTS.read_text(), ["kernel"]),
    "GMM-like adjoint": _gmm_adjoint,
    "flags of hand-written llvm ops": lambda: (FLAGS, ["flags"]),
    "atomic loads and stores": lambda: (ATOMICS, ["atomics"]),
}
"""Kernels whose device code holds every kind of op the printer has a
line for: integer and float arithmetic with each flag (``FLAGS``), casts,
comparisons, selects, arrays on the stack, loads, stores (atomic ones too,
``ATOMICS``), addresses, null
pointers, aggregates, calls of device functions, intrinsics and libdevice,
inline assembly, compare-and-swap, branches with arguments (φ-nodes),
returns."""


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


CALL_FLAGS = """
llvm.func @ext(f64) -> f64
llvm.func @k(%p: !llvm.ptr, %d: f64) {
  %r = llvm.call @ext(%d) {fastmathFlags = #llvm.fastmath<nnan>} : (f64) -> f64
  %c = llvm.fcmp "uno" %r, %r : f64
  %z = llvm.zext %c : i1 to i8
  llvm.store %z, %p : i8, !llvm.ptr
  llvm.return
}
"""


def test_a_calls_fast_math_flags_give_the_ptx_of_the_converted():
    """No kernel a user writes calls with fast-math flags (a device function
    is called by ``func.call``), so the device module is written here: an
    ``nnan`` call's result is no NaN, so the comparison is false, stored as
    a constant."""

    def ptx(printed: bool) -> str:
        module = parse_module(CALL_FLAGS, "device.mlir")
        conventions = {"k": nvptx.KERNEL_CONVENTION}
        code = (
            printer.llvm_text(module, frozenset(), conventions)
            if printed
            else nvptx._converted(module, {"k"}, frozenset(), "")
        )
        assert code is not None
        return program.ptx_from_llvm(code, entries=["k"])

    printed = ptx(True)
    assert printed == ptx(False)
    assert re.search(r"st\.global\.b8\s+\[%rd\d+\], 0;", printed)


SWAP_READ_WHOLE = _at_address(
    "k",
    "i64",
    """    %v = memref.load %y[%i] : memref<?xi64>
    %r = llvm.cmpxchg %p, %v, %m acq_rel monotonic : !llvm.ptr, i64
    %s = llvm.insertvalue %v, %r[0] : !llvm.struct<(i64, i1)>
    %a = llvm.extractvalue %s[0] : !llvm.struct<(i64, i1)>
    memref.store %a, %y[%i] : memref<?xi64>
""",
)
"""A compare-and-swap whose result is read by other than ``llvm.extractvalue``."""


def test_a_swap_read_otherwise_is_refused_whichever_route_the_module_takes(monkeypatch: pytest.MonkeyPatch):
    """The printer could print it, the conversion could not: both refuse
    it alike (``llvm_ir.check_swap``), so that an op elsewhere in the
    module that the printer has no line for does not decide whether it
    compiles."""
    errors = []
    for printed in (True, False):
        with pytest.raises(PassFailedException) as error:
            _ptx(SWAP_READ_WHOLE, ["k"], printed, monkeypatch, arch="sm_90", opt_level=3, max_registers=None)
        errors.append(str(error.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith(
        "'llvm.cmpxchg' at kernels.mlir:9:5: its result is used by 'llvm.insertvalue' at kernels.mlir:10:5"
    )


def test_atomic_accesses_keep_their_orderings_in_ptx(monkeypatch: pytest.MonkeyPatch):
    """Each ordering reaches the PTX (a plain access would be ``ld.global.b64``),
    on either route (the test above)."""
    ptx = _ptx(ATOMICS, ["atomics"], True, monkeypatch, arch="sm_90", opt_level=3, max_registers=None)
    loads = re.findall(r"ld\.\w+\.sys\.global\.b\d+", ptx)
    stores = re.findall(r"st\.\w+\.sys\.global\.b\d+", ptx)
    assert loads[:4] == [
        f"ld.{o}.sys.global.b{b}" for o, b in [("acquire", 64), ("relaxed", 32), ("acquire", 16), ("relaxed", 64)]
    ]
    assert stores[:4] == [
        f"st.{o}.sys.global.b{b}" for o, b in [("release", 64), ("release", 32), ("relaxed", 16), ("relaxed", 64)]
    ]
    assert ptx.count("fence.sc.sys") == 4  # before the seq_cst load and store, in each of the loop's two copies


VOLATILE_STORE = ATOMICS.replace(
    '"llvm.store"(%c, %p) <{ordering = 2 : i64}>', '"llvm.store"(%c, %p) <{ordering = 0 : i64, volatile_}>'
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (VOLATILE_STORE, "'llvm.store' at kernels.mlir:14:5: a volatile store is not supported"),
        (
            ATOMICS.replace("atomic acquire", "atomic release"),
            "'llvm.load' at kernels.mlir:8:5: an atomic load cannot have the ordering release; "
            "it takes unordered, monotonic, acquire, seq_cst",
        ),
        (
            ATOMICS.replace("<{ordering = 5 : i64}>", "<{ordering = 4 : i64}>"),
            "'llvm.store' at kernels.mlir:12:5: an atomic store cannot have the ordering acquire; "
            "it takes unordered, monotonic, release, seq_cst",
        ),
        (
            ATOMICS.replace("<{ordering = 5 : i64}>", "<{ordering = 3 : i64}>"),
            "'llvm.store' at kernels.mlir:12:5: an atomic store cannot have the ordering 3",
        ),
        (
            ATOMICS.replace("-> i16", "-> i1").replace("(i16, !llvm.ptr)", "(i1, !llvm.ptr)"),
            "'llvm.load' at kernels.mlir:10:5: an atomic load of i1 is not supported",
        ),
        (
            ATOMICS.replace("atomic monotonic :", "atomic monotonic {alignment = 2 : i64} :"),
            "'llvm.load' at kernels.mlir:9:5: an atomic load of i32 aligned to 2 byte(s) is not supported",
        ),
    ],
    ids=["volatile", "release load", "acquire store", "no ordering", "i1", "under-aligned"],
)
def test_an_access_llvm_does_not_take_is_refused_alike_on_both_routes(
    text: str, message: str, monkeypatch: pytest.MonkeyPatch
):
    """What llvmlite cannot write (``volatile``) or LLVM's parser refuses
    unlocated (an ordering the access does not take, an atomic ``i1``) or
    makes a library call (an atomic access aligned below its size) is
    refused at the op, by the printer as by the conversion
    (``llvm_ir.atomic_access``)."""
    errors = []
    for printed in (True, False):
        with pytest.raises(PassFailedException) as error:
            _ptx(text, ["atomics"], printed, monkeypatch, arch="sm_90", opt_level=3, max_registers=None)
        errors.append(str(error.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith(message)


def test_an_ordered_access_is_refused_for_a_gpu_without_one(monkeypatch: pytest.MonkeyPatch):
    """sm_6x has no acquire or release access: LLVM's NVPTX back end
    aborted the process on one; it is refused at the op
    (``revmlir.gpu.orderings``), and monotonic ones still compile, beside
    a host function's acquire load (the kernels' compile drops what they
    never call; only device code is checked)."""
    with pytest.raises(PassFailedException) as error:
        _ptx(ATOMICS, ["atomics"], True, monkeypatch, arch="sm_60", opt_level=3, max_registers=None)
    assert str(error.value) == (
        "'llvm.load' at kernels.mlir:8:5: an atomic load ordered acquire needs sm_70 or newer; "
        "sm_60 has only unordered and monotonic ones"
    )
    weak = re.sub(r"atomic (acquire|seq_cst)", "atomic monotonic", ATOMICS)
    weak = re.sub(r"ordering = [57] ", "ordering = 2 ", weak)
    # a function no kernel calls is no device code: its acquire load is not the GPU's
    host = (
        "func.func @host(%m: i64) -> f64 {\n  %p = llvm.inttoptr %m : i64 to !llvm.ptr\n"
        "  %a = llvm.load %p atomic acquire : !llvm.ptr -> f64\n  func.return %a : f64\n}\n"
    )
    ptx = _ptx(weak + host, ["atomics"], True, monkeypatch, arch="sm_60", opt_level=3, max_registers=None)
    assert "ld.volatile" in ptx and ".acquire" not in ptx


def test_names_are_written_as_llvmlite_writes_them():
    """A quote and a backslash in a name are escaped as llvmlite escapes
    them, in the printed code and the metadata of ``ptx_from_llvm`` alike
    (``global_reference``)."""
    name = 'f"\\$'
    block = Block()
    block.add_op(llvm.ReturnOp())
    code = printer.llvm_text(
        ModuleOp([llvm.FuncOp(name, llvm.LLVMFunctionType([], llvm.LLVMVoidType()), body=Region(block))])
    )
    assert code is not None
    assert [f.name for f in binding.parse_assembly(code.text).functions] == [name]
    reference = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), []), name).get_reference()
    assert global_reference(name) == reference and reference in code.text


def _kernel(name: str) -> ir.Module:
    """A module of one kernel, ``name``, storing 1.0 through its pointer,
    by an internal function whose name PTX cannot hold."""
    module = ir.Module()
    pointer = ir.FunctionType(ir.VoidType(), [ir.PointerType()])
    store = ir.Function(module, pointer, 'store "1.0"')
    store.linkage = "internal"
    builder = ir.IRBuilder(store.append_basic_block("entry"))
    builder.store(ir.DoubleType()(1.0), store.args[0])
    builder.ret_void()
    kernel = ir.Function(module, pointer, name)
    kernel.calling_convention = nvptx.KERNEL_CONVENTION
    builder = ir.IRBuilder(kernel.append_basic_block("entry"))
    builder.call(store, kernel.args)
    builder.ret_void()
    return module


def test_a_register_bound_names_kernels_the_module_defines():
    """``max_registers`` without ``entries`` would bound nothing, and an
    entry the module does not define would fail as LLVM's parse of the
    metadata: each is a ``ValueError`` of its own."""
    with pytest.raises(ValueError, match=r"max_registers=40 bounds the kernels named by entries=, and it names none"):
        program.ptx_from_llvm(_kernel("k"), max_registers=40)
    with pytest.raises(ValueError, match=r"entries= names 'other', which the module does not define"):
        program.ptx_from_llvm(_kernel("k"), entries=["other"], max_registers=40)
    with pytest.raises(ValueError, match=r"max_registers=8 is outside 16\.\.255"):
        program.ptx_from_llvm(_kernel("k"), entries=["k"], max_registers=8)
    assert ".maxnreg 40" in program.ptx_from_llvm(_kernel("k"), entries=["k"], max_registers=40)


@pytest.mark.parametrize("name", ['k"1', "k\\1", "k@1", "ké", "k 1"])
def test_a_kernel_name_ptx_cannot_hold_is_refused_not_aborted_on(name: str):
    """LLVM's NVPTX back end renames an internal function's characters
    that PTX lacks (``_kernel``'s ``store "1.0"``) but aborts the process
    on a kernel's; the metadata names the kernel escaped, so LLVM parses
    it and the name is refused."""
    with pytest.raises(ValueError, match=re.escape(f"PTX cannot name {name!r}")):
        program.ptx_from_llvm(_kernel(name), entries=[name], max_registers=40)
