"""The GPU path without a GPU: kernels run thread by thread on the CPU
against the CPU function, PTX for every example accepted by ptxas, the
pipeline's pieces (compile_kernels, the toolkit, rev-translate) and its
errors."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llvmlite import binding as llvm
from llvmlite import ir
from xdsl.dialects import gpu, scf
from xdsl.dialects.builtin import ModuleOp, f32, f64, i32
from xdsl.utils.exceptions import PassFailedException

import revmlir as rv
from gpu_emulation import EmulatedKernel, reference
from revmlir.errors import LLVMRejected, LocatedError
from revmlir.gpu import nvptx, program, toolkit
from revmlir.gpu.nvptx import device_rules
from revmlir.gpu.outline import ScalarGradient, entry_name, takes_arena
from revmlir.gpu.parameter_space import parameter_bytes
from revmlir.gpu.program import compile_kernels, module_ptx, ptx_from_llvm
from revmlir.gpu.runtime import parameter_struct, raise_gpu_error
from revmlir.gpu.toolkit import DEFAULT_ARCH, ToolkitError, emit_cubin, find_libdevice, find_ptxas
from revmlir.lowering.llvm_code import of_llvmlite
from revmlir.lowering.llvm_ir import llvm_ir
from revmlir.lowering.rev_to_std import RevLowerToStdPass
from revmlir.lowering.std_to_llvm import ModuleTranslation, translate_module
from revmlir.parsing import make_context, parse_module
from revmlir.passes.adjoint import AdAdjointPass
from revmlir.passes.invert import derive_inverses
from revmlir.runtime.native import NativeModule
from revmlir.tools.rev_translate import main as rev_translate
from test_loop_limits import SPREAD
from test_parallel_ad import KERNEL
from test_prange import gmm_args, gmm_like, variants

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.mlir"))
ELF_MAGIC = b"\x7fELF"

PARALLEL = "scf.parallel (%i) = ({lb}) to ({ub}) step ({step}) {{"
END = "    scf.reduce\n  }"

SHARED = f"""
func.func @twice(%v: f64) -> f64 {{
  %r = arith.addf %v, %v : f64
  func.return %r : f64
}}

func.func @histogram.adj(%g: memref<?xf64>, %x: memref<?xf64>, %a: f64) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %m = memref.dim %g, %c0 : memref<?xf64>
  {PARALLEL.format(lb="%c1", ub="%n", step="%c2")}
    %xi = memref.load %x[%i] : memref<?xf64>
    %t = func.call @twice(%xi) : (f64) -> f64
    %e = math.exp %t : f64
    %p = arith.mulf %e, %a : f64
    %j = arith.remui %i, %m : index
    %old = memref.atomic_rmw addf %p, %g[%j] : (f64, memref<?xf64>) -> f64
{END}
  func.return %a : f64
}}
"""


PARALLEL_AD_KERNEL = KERNEL.replace("MODE", "parallel")


def _module(text: str):
    return parse_module(text, "kernels.mlir")


def _copies(values):
    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


@pytest.mark.parametrize("blocks, threads", [(1, 1), (3, 4), (8, 32)])
@pytest.mark.parametrize("name", ["k", "k.inv"])
def test_parallel_rev_for_kernel_thread_by_thread_is_the_cpu_function(name: str, blocks: int, threads: int):
    """``y[i] += log(x[i]) sin(x[i]); g[i] += a x[idx[i]]`` as a parallel
    rev.for, and its inverse."""
    module = _module(PARALLEL_AD_KERNEL)
    rng = np.random.default_rng(0)
    n = 37
    args = [rng.uniform(0.1, 4.0, n), rng.normal(size=n), rng.integers(0, n, n), rng.normal(size=n), 0.7, n]
    cpu = NativeModule.compile(module)
    expected = (cpu.uncall if name == "k.inv" else cpu.call)("k", *_copies(args))
    sign = -1 if name == "k.inv" else 1
    np.testing.assert_allclose(expected[1], args[1] + sign * np.log(args[0]) * np.sin(args[0]), rtol=1e-14)
    got = _copies(args)
    slot = EmulatedKernel(module, name).launch(got, blocks, threads)
    assert not slot.any()
    for g, e in zip(got[:4], expected[:4], strict=True):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("blocks, threads", [(1, 1), (2, 3), (4, 16)])
def test_shared_accumulation_kernel_thread_by_thread_is_the_cpu_function(blocks: int, threads: int):
    """Odd elements from 1 (a lower bound and step the grid-stride loop
    must keep), accumulated into 5 shared cells through a device function."""
    module = _module(SHARED)
    rng = np.random.default_rng(1)
    x = rng.uniform(-1.0, 1.0, 41)
    g = np.zeros(5)
    expected = g.copy()
    reference(module, "histogram.adj")([expected, x, 0.5])
    closed_form = np.zeros(5)
    for i in range(1, 41, 2):
        closed_form[i % 5] += np.exp(2 * x[i]) * 0.5
    np.testing.assert_allclose(expected, closed_form, rtol=1e-14)
    got = g.copy()
    slot = EmulatedKernel(module, "histogram.adj").launch([got, x, 0.5], blocks, threads)
    assert not slot.any()
    np.testing.assert_allclose(got, expected, rtol=1e-14)


VERSIONED_LOOP = Path(__file__).parent / "filecheck" / "gpu" / "versioned_loop.mlir"


@pytest.mark.parametrize("short", [0, 3])
def test_a_versioned_kernel_thread_by_thread_is_the_cpu_function_in_range_or_not(short: int):
    """filecheck/gpu/versioned_loop.mlir's kernel (``y[i] += a·x[i]``, its
    PTX checked there): with ``x`` as long as ``y`` the unchecked loop runs;
    with ``x`` 3 elements short the checked one, which stops at the CPU's
    error with the first element out of range, having written what the
    CPU wrote (threads run in turn: elements 0–8 before the first failure)."""
    module = parse_module(VERSIONED_LOOP.read_text(), str(VERSIONED_LOOP))
    rng = np.random.default_rng(2)
    y, x = rng.normal(size=12), rng.normal(size=12 - short)
    expected, got = [y.copy(), x, 0.5], [y.copy(), x, 0.5]
    kernel = EmulatedKernel(module, "axpy")
    slot = kernel.launch(got, 2, 3)
    if not short:
        reference(module, "axpy")(expected)
        assert not slot.any()
    else:
        with pytest.raises(LocatedError) as cpu:
            reference(module, "axpy")(expected)
        with pytest.raises(type(cpu.value)) as gpu:
            raise_gpu_error(kernel.check_table, slot)
        assert str(gpu.value) == f"{cpu.value} (element 9)" and "out of bounds" in str(cpu.value)
    np.testing.assert_array_equal(got[0], expected[0])
    assert not np.array_equal(got[0], y)


@rv.reversible
def packed_triangles(y, x, n: int):
    """Per point ``p``, the strictly lower triangle of an ``n × n`` matrix
    packed column by column at ``x[6p:]``, added up by rows (GMM's reads
    of its factors): the inner loop's index is affine in ``j``."""
    for p in rv.prange(y.shape[0]):
        for i in range(n):
            for j in range(i + 1, n):
                y[p, j] += x[6 * p + i * (2 * n - i - 1) // 2 + j - i - 1]


@pytest.mark.parametrize("short", [0, 1])
def test_a_kernels_inner_loop_is_versioned_and_fails_where_the_cpu_fails(short: int):
    """A loop inside a kernel's parallel loop is versioned on its index
    checks as native code's innermost loops are: with ``x`` long enough the
    unchecked copy runs; one element short, the last point's last read
    fails, in the checked copy, with the CPU's error at that point, and
    every array holds what the CPU left in it."""
    y, x = np.zeros((7, 4)), np.arange(1.0, 43.0 - short)
    kernel = EmulatedKernel(*rv.cuda.kernel(packed_triangles).rev_module(y, x, 4))
    (device,) = [op for op in kernel.check_table.walk() if isinstance(op, gpu.FuncOp)]
    assert sum(isinstance(op, scf.ForOp) for op in device.walk()) == 4  # the grid's, i's and j's two versions
    expected, got = [y.copy(), x, 4], [y.copy(), x, 4]
    slot = kernel.launch(got, 2, 3)
    if not short:
        packed_triangles(*expected)
        assert not slot.any()
    else:
        with pytest.raises(LocatedError) as cpu:
            packed_triangles(*expected)
        with pytest.raises(type(cpu.value)) as device_error:
            raise_gpu_error(kernel.check_table, slot)
        assert str(device_error.value) == f"{cpu.value} (element 6)" and "index 41 is out of bounds" in str(cpu.value)
    np.testing.assert_array_equal(got[0], expected[0])


@rv.reversible
def truncated(y, x):
    for i in rv.prange(len(y)):
        y[i] += int(x[i])


@pytest.mark.parametrize("dtype, suffix", [(np.float64, "f64"), (np.float32, "f32")])
def test_a_kernels_float_to_integer_conversion_saturates_as_the_cpus(dtype: type, suffix: str):
    """``int(x)`` is ``llvm.fptosi.sat`` in a kernel as on the CPU: run
    thread by thread it gives the CPU's answers, NaN 0 and the ends of the
    range beyond it; the PTX does not leave NaN to ``cvt.rzi`` (which
    clamps the rest) but selects 0 where ``setp.nan`` holds."""
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.75, -2.75, 0.0], dtype=dtype)
    expected, got = [np.zeros(8, np.int64), x], [np.zeros(8, np.int64), x]
    truncated(*expected)
    assert expected[0].tolist() == [0, 2**63 - 1, -(2**63), 2**63 - 1, -(2**63), 2, -2, 0]
    slot = EmulatedKernel(*rv.cuda.kernel(truncated).rev_module(*got)).launch(got, 2, 3)
    assert not slot.any()
    np.testing.assert_array_equal(got[0], expected[0])
    ptx = rv.cuda.kernel(truncated).compile(*got).ptx
    assert f"cvt.rzi.s64.{suffix}" in ptx
    nan = re.search(rf"setp\.nan\.{suffix}\s+(%p\d+), (%\w+), \2;", ptx)
    assert nan is not None and re.search(rf"selp\.b64\s+%rd\d+, 0, %rd\d+, {re.escape(nan[1])};", ptx)


def test_gmm_kernels_forward_inverse_and_adjoint_thread_by_thread_are_the_cpu_functions():
    """The GMM-like per-point function written with rv.prange: its kernel,
    its inverse's and its adjoint's (the parameters' gradients are shared
    accumulations) give the CPU's results, and ptxas accepts all three."""
    args = gmm_args(points=23)
    text = variants(gmm_like, "native")["parallel"].specialization_for(*args).text()
    module = _module(text)
    AdAdjointPass(functions=("gmm_like",)).apply(make_context(), module)
    names = ["gmm_like", "gmm_like.inv", "gmm_like.adj"]
    program = compile_kernels(module, names)
    assert [program.kernels[n].entry for n in names] == ["gmm_like", "gmm_like_inv", "gmm_like_adj"]
    assert emit_cubin(program.ptx, program.arch)[:4] == ELF_MAGIC
    cpu = NativeModule.compile(module)
    rng = np.random.default_rng(2)
    gradients = [rng.normal(size=a.shape) for a in args]
    runs = (
        ("gmm_like", cpu.call, args),
        ("gmm_like.inv", cpu.uncall, args),
        ("gmm_like.adj", cpu.call, args + gradients),
    )
    for name, run, inputs in runs:
        expected = run(name.removesuffix(".inv"), *[a.copy() for a in inputs])
        got = [a.copy() for a in inputs]
        slot = EmulatedKernel(module, name).launch(got, 3, 4)
        assert not slot.any()
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def test_an_owned_module_is_lowered_in_place_and_an_adjoint_kernel_copies_its_module_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``compile_kernels`` lowers a copy of the module it is given, which
    stays as it was, unless the caller gives the module up (``owned``): the
    same PTX without a copy.  ``rv.cuda``'s adjoint kernels own the module
    their adjoints are generated into, so the specialisation's module is
    copied once per compile, not twice."""
    monkeypatch.setenv("REVMLIR_CACHE", "0")  # every compile lowers
    copies: list[ModuleOp] = []
    create = ModuleOp.create.__func__

    def counted(kind: type[ModuleOp], **parts: Any) -> ModuleOp:
        copies.append(create(kind, **parts))
        return copies[-1]

    # every copy of a module, xDSL's clone and ir_utils.clone alike, is built by ModuleOp.create
    monkeypatch.setattr(ModuleOp, "create", classmethod(counted))
    module = _module(SHARED)
    names = ["histogram.adj"]
    printed = str(module)
    copied = compile_kernels(module, names).ptx
    assert len(copies) == 1 and str(module) == printed
    copies.clear()
    assert compile_kernels(module, names, owned=True).ptx == copied
    assert copies == []

    @rv.reversible
    def doubled(y, x):
        for i in rv.prange(x.shape[0]):
            y[i] += 2.0 * x[i]

    adjoint = rv.cuda.kernel(rv.adjoint(doubled))
    args = (np.zeros(3), np.ones(3), np.ones(3), np.zeros(3))
    doubled.specialization_for(*args[:2])  # the specialisation is made before the compile
    copies.clear()
    assert ".entry doubled_adj(" in adjoint.compile(*args).ptx
    assert len(copies) == 1


def test_compile_kernels_gives_entries_arguments_and_the_cpu_check_table():
    module = _module(PARALLEL_AD_KERNEL + SHARED)
    program = compile_kernels(module, ["k", "k.inv", "histogram.adj"])
    assert {name: info.entry for name, info in program.kernels.items()} == {
        "k": "k",
        "k.inv": "k_inv",
        "histogram.adj": "histogram_adj",
    }
    assert [str(t) for t in program.kernels["k.inv"].arguments] == [
        "memref<?xf64>",
        "memref<?xf64>",
        "memref<?xindex>",
        "memref<?xf64>",
        "f64",
        "index",
    ]
    assert [str(t) for t in program.kernels["histogram.adj"].arguments] == ["memref<?xf64>", "memref<?xf64>", "f64"]
    for entry in ("k", "k_inv", "histogram_adj"):
        assert f".visible .entry {entry}(" in program.ptx
    assert "red.add.f64" in program.ptx and "__nv_" not in program.ptx
    # check ids are the CPU's: the table native code's lowering makes
    cpu = module.clone()
    derive_inverses(make_context(), cpu)
    RevLowerToStdPass().apply(make_context(), cpu)
    assert program.check_table.attributes["rev.checks"] == cpu.attributes["rev.checks"]
    assert emit_cubin(program.ptx, program.arch)[:4] == ELF_MAGIC


def test_compile_kernels_rejects_what_is_not_a_kernel():
    with pytest.raises(PassFailedException, match="@twice is not a kernel function: its body has no top-level"):
        compile_kernels(_module(SHARED), ["twice"])
    with pytest.raises(ValueError, match="unknown GPU architecture 'sm_35'"):
        compile_kernels(_module(SHARED), ["histogram.adj"], arch="sm_35")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_compiles_to_ptx_that_ptxas_accepts(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """``rev-translate --emit=ptx`` of every example: every function and
    inverse a .func; ptxas (the toolkit's or the nvidia-cuda-nvcc wheel's)
    assembles it, and ``--emit=cubin`` writes the same."""
    assert rev_translate([str(example), "--emit=ptx"]) == 0
    ptx = capsys.readouterr().out
    assert ".visible .func" in ptx and "__nv_" not in ptx
    assert emit_cubin(ptx)[:4] == ELF_MAGIC
    cubin = tmp_path / "out.cubin"
    assert rev_translate([str(example), "--emit=cubin", "-o", str(cubin)]) == 0
    assert cubin.read_bytes()[:4] == ELF_MAGIC


def test_rev_translate_emit_ptx_writes_the_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    source = tmp_path / "kernels.mlir"
    source.write_text(SHARED)
    assert rev_translate([str(source), "--emit=ptx", "--gpu-arch=sm_80"]) == 0
    out = capsys.readouterr().out
    assert ".target sm_80" in out and ".visible .entry histogram_adj(" in out and "twice(" in out


STD_KERNEL = f"""
func.func @scale(%y: memref<?xf64>, %a: f64) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  {PARALLEL.format(lb="%c0", ub="%n", step="%c1")}
    %v = memref.load %y[%i] : memref<?xf64>
    %w = arith.mulf %v, %a : f64
    memref.store %w, %y[%i] : memref<?xf64>
{END}
  func.return
}}
"""


def test_a_std_kernel_that_returns_nothing_takes_its_scalars_on_the_gpu():
    """A std function need not return its scalars as lowered reversible
    code does: one that returns nothing is a kernel (rev-translate said
    "zip() argument 2 is shorter than argument 1")."""
    module = _module(STD_KERNEL)
    y = np.arange(1.0, 8.0)
    slot = EmulatedKernel(module, "scale").launch([y, 2.5], 2, 2)
    assert not slot.any()
    np.testing.assert_array_equal(y, np.arange(1.0, 8.0) * 2.5)
    ptx = compile_kernels(module, ["scale"]).ptx
    assert ".visible .entry scale(" in ptx and emit_cubin(ptx)[:4] == ELF_MAGIC


def _many_parameters(arrays: int, *scalars: str) -> ModuleOp:
    """``ODD_KERNELS``'s ``@k`` (an array, a size, the error slot: 40 bytes
    of parameters) taking ``arrays`` more arrays it never reads, of 16 bytes
    each, and scalars of the types ``scalars``, which it returns."""
    extra = "".join(f", %a{j}: memref<?xf64>" for j in range(arrays))
    names = [f"%s{j}" for j in range(len(scalars))]
    typed = "".join(f", {n}: {t}" for n, t in zip(names, scalars))
    text = ODD_KERNELS.replace("NAME", "k").replace("%n: index)", f"%n: index{extra}{typed})")
    returned = f"rev.return {', '.join(['%n', *names])} : {', '.join(['index', *scalars])}"
    return _module(text.replace("rev.return %n : index", returned))


def test_kernel_parameters_past_ptxs_parameter_space_are_refused_at_the_kernel(monkeypatch: pytest.MonkeyPatch):
    """PTX before ISA 8.1 gives a kernel's parameters 4352 bytes (sm_90's PTX
    is 7.8): a kernel at the limit compiles and assembles; one with a bool
    more (a byte, then 7 of padding before the error slot's pointer) is
    refused at its function, before LLVM, where ptxas (shown here with the
    check off) refuses it naming a PTX line, counting the same bytes.
    sm_100's PTX (8.6) gives 32764."""
    at_limit = compile_kernels(_many_parameters(269, "f64"), ["k"], arch="sm_90").ptx  # 40 + 269·16 + 8
    assert emit_cubin(at_limit, "sm_90")[:4] == ELF_MAGIC
    with pytest.raises(
        PassFailedException,
        match=r"^'gpu.func' at kernels.mlir:2:1: kernel @k takes 4360 bytes of parameters, over the 4352 a kernel "
        r"takes on sm_90 \(PTX 7.8\): each array is 8 bytes and 8 per dimension, each scalar its size",
    ):
        compile_kernels(_many_parameters(269, "f64", "i1"), ["k"], arch="sm_90")
    assert program.ptx_version("sm_90") == (7, 8) and program.ptx_version("sm_100") == (8, 6)
    assert compile_kernels(_many_parameters(300, "f64"), ["k"], arch="sm_100").kernels["k"].entry == "k"
    monkeypatch.setattr(program, "check_parameter_space", lambda *_: None)
    unchecked = program._compile_kernels(_many_parameters(269, "f64", "i1"), ["k"], "sm_90", 3, None, False)
    with pytest.raises(ToolkitError, match=r"uses too much parameter space \(0x1108 bytes, 0x1100 max\)"):
        emit_cubin(unchecked.ptx, "sm_90")


@rv.reversible
def mixed_parameters(y, x, a, b, n, m, c, d, flag):
    for i in rv.prange(len(y)):
        y[i] += x[i, 0] * a + b * n + m
        if flag:
            y[i] += c.real + d.imag


@rv.reversible
def arena_parameters(y, n):
    for i in rv.prange(len(y)):
        t = rv.zeros(n)
        t[0] += 1.0
        y[i] += t[0]
        t[0] -= 1.0
        rv.free(t)


@pytest.mark.parametrize(
    "function, args",
    [
        (
            mixed_parameters,
            (np.zeros(3), np.ones((3, 2)), 2.0, np.float32(1.5), 3, np.int32(2), 1 + 2j, np.complex64(1j), True),
        ),
        (arena_parameters, (np.zeros(3), 4)),
    ],
)
def test_the_parameter_space_counted_is_what_a_launch_packs(function: Any, args: tuple[Any, ...]):
    """The bytes the compile counts of a kernel's parameters (its
    ``gpu.func``'s types) are the size of the buffer the runtime packs
    for a launch (``parameter_struct``, from the function's types), which
    the driver checks against the kernel's own (``_check_parameters``)."""
    module, name = rv.cuda.kernel(function).rev_module(*args)
    work, arguments, _ = program.lower_kernels(module, [name])
    kernels = [op for op in work.walk() if isinstance(op, gpu.FuncOp)]
    assert len(kernels) == 1
    counted = parameter_bytes(kernels[0].function_type.inputs.data)
    packed = parameter_struct(arguments[name], takes_arena(kernels[0])).size
    assert counted == packed and counted > 40


def test_ptxas_killed_by_a_signal_is_an_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A ptxas that crashes writes nothing to stderr (it said "ptxas
    rejected the PTX: " and no more): the error names the signal."""
    ptxas = tmp_path / "ptxas"
    ptxas.write_text("#!/bin/sh\nkill -SEGV $$\n")
    ptxas.chmod(0o755)
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: ptxas)
    with pytest.raises(ToolkitError, match=r"^ptxas crashed \(SIGSEGV\) on the PTX for sm_90$"):
        emit_cubin(".version 8.0\n.target sm_90\n.address_size 64\n", "sm_90")


def test_ptxas_rejection_is_an_error_with_its_message():
    with pytest.raises(ToolkitError, match="ptxas rejected the PTX: .*syntax error"):
        emit_cubin(".version 7.8\n.target sm_90\n.address_size 64\nnot ptx at all\n")


def test_one_descriptor_viewed_as_two_element_types_has_an_address_of_each_stride():
    """A descriptor cast to arrays of two element types (``array_at_address``
    takes any cast of a descriptor of the matching LLVM type): the element
    ``i`` of each is its own ``getelementptr``, 8 bytes apart in one and 4 in
    the other, not the first access's address again."""
    module = parse_module(
        """
func.func @f(%d: !llvm.struct<(!llvm.ptr, i64)>, %i: index, %v: i32) -> f64 {
  %x = builtin.unrealized_conversion_cast %d : !llvm.struct<(!llvm.ptr, i64)> to memref<?xf64>
  %y = builtin.unrealized_conversion_cast %d : !llvm.struct<(!llvm.ptr, i64)> to memref<?xi32>
  %a = memref.load %x[%i] : memref<?xf64>
  memref.store %v, %y[%i] : memref<?xi32>
  func.return %a : f64
}
""",
        "views.mlir",
    )
    translate_module(module, ModuleTranslation(overrides=device_rules), entry_points=False)
    text = str(llvm_ir(module))
    geps = re.findall(r'(%"[^"]+") = getelementptr inbounds (\w+), (ptr %"[^"]+", i64 %"[^"]+")', text)
    addresses = {type: (name, operands) for name, type, operands in geps}
    assert len(geps) == 2 and addresses["double"][1] == addresses["i32"][1]  # of one pointer and index
    assert f"load double, ptr {addresses['double'][0]}" in text
    assert re.search(rf'store i32 %"[^"]+", ptr {re.escape(addresses["i32"][0])}', text)


def test_device_llvm_ir_that_llvm_would_not_verify_is_refused_before_libdevice_is_linked():
    """The verifier reads the compiled code alone, before libdevice comes
    in: a use its definition does not dominate (which parsing accepts) is
    LLVM's verification error (``LLVMRejected``, naming the function), not
    a crash in the pipeline."""
    module = ir.Module()
    double = ir.DoubleType()
    exp = ir.Function(module, ir.FunctionType(double, [double]), "__nv_exp")
    kernel = ir.Function(module, ir.FunctionType(double, [double]), "kernel")
    entry, later = kernel.append_basic_block("entry"), kernel.append_basic_block("later")
    value = ir.IRBuilder(later).call(exp, [kernel.args[0]])
    ir.IRBuilder(entry).ret(value)
    ir.IRBuilder(later).ret(value)
    with pytest.raises(LLVMRejected, match="^LLVM refuses the code of @kernel: Instruction does not dominate all uses"):
        ptx_from_llvm(module)


def _math_module(*names: str) -> ir.Module:
    """LLVM IR of a device function applying libdevice's ``names`` in turn."""
    module = ir.Module()
    double = ir.DoubleType()
    function = ir.Function(module, ir.FunctionType(double, [double]), "math")
    builder = ir.IRBuilder(function.append_basic_block("entry"))
    value = function.args[0]
    for name in names:
        callee = module.globals.get(name) or ir.Function(module, ir.FunctionType(double, [double]), name)
        value = builder.call(callee, [value])
    builder.ret(value)
    return module


def test_libdevice_is_parsed_once_per_set_of_functions_called_and_made_pure(monkeypatch: pytest.MonkeyPatch):
    """A compile links in a copy of the part of libdevice its code calls,
    those it calls repeatedly made pure, whatever the GPU: the bitcode is
    parsed once per set of functions called (a part with pure functions
    is made from the set's), and the PTX is what linking the whole library
    for that GPU gave; a compile calling another set parses it again."""
    parses: list[bytes] = []
    parse_bitcode = program.llvm.parse_bitcode
    monkeypatch.setattr(program.llvm, "parse_bitcode", lambda data: parses.append(data) or parse_bitcode(data))
    made_pure: list[frozenset[str]] = []
    pure = program._pure
    monkeypatch.setattr(program, "_pure", lambda part, functions: made_pure.append(functions) or pure(part, functions))
    program._libdevice_part.cache_clear()
    first = ptx_from_llvm(_math_module("__nv_sin", "__nv_exp"))
    again = ptx_from_llvm(_math_module("__nv_exp", "__nv_sin"))
    old_gpu = ptx_from_llvm(_math_module("__nv_sin", "__nv_exp"), "sm_60")
    assert len(parses) == 1
    repeated = ptx_from_llvm(_math_module("__nv_sin", "__nv_exp", "__nv_sin"))
    assert repeated == ptx_from_llvm(_math_module("__nv_sin", "__nv_exp", "__nv_sin"))
    assert len(parses) == 1 and made_pure == [{"__nv_sin"}]
    other = ptx_from_llvm(_math_module("__nv_log"))
    assert len(parses) == 2
    part = program._libdevice_part(frozenset({"__nv_sin", "__nv_exp"}), frozenset())
    defined = {f.name for f in part.functions if not f.is_declaration}
    assert {"__nv_sin", "__nv_exp"} <= defined and "__nv_log" not in defined and len(defined) < 20

    def whole(called: frozenset[str], pure: frozenset[str]) -> llvm.ModuleRef:
        library = parse_bitcode(program._libdevice_bitcode())
        library.triple = program.TRIPLE
        library.data_layout = str(program.target_machine(arch, 3).target_data)
        return program._pure(library, pure)

    monkeypatch.setattr(program, "_libdevice_part", whole)
    arch = DEFAULT_ARCH
    assert first == ptx_from_llvm(_math_module("__nv_sin", "__nv_exp"))
    assert again == ptx_from_llvm(_math_module("__nv_exp", "__nv_sin"))
    assert other == ptx_from_llvm(_math_module("__nv_log"))
    arch = "sm_60"
    assert old_gpu == ptx_from_llvm(_math_module("__nv_sin", "__nv_exp"), arch)
    arch = DEFAULT_ARCH
    assert repeated == ptx_from_llvm(_math_module("__nv_sin", "__nv_exp", "__nv_sin"))
    assert first != other and "sin" not in other
    assert ".target sm_60" in old_gpu and old_gpu.replace("sm_60", "sm_90") != first


def _attributes(part: llvm.ModuleRef) -> dict[str, bytes]:
    return {f.name: b" ".join(f.attributes) for f in part.functions}


def test_math_called_twice_in_a_function_is_computed_once_per_argument():
    """libdevice's functions are ``alwaysinline``; one a function calls at
    several places is pure instead, so that LLVM merges calls of one
    argument (BA's kernel: ``tests/test_gpu_examples.py``), and is still
    inlined: one slow argument reduction of ``sin`` instead of two.  One
    called at a single place keeps libdevice's attributes."""
    module = ir.Module()
    signature = ir.FunctionType(ir.DoubleType(), [ir.DoubleType()])
    sin, math = ir.Function(module, signature, "__nv_sin"), ir.Function(module, signature, "math")
    builder = ir.IRBuilder(math.append_basic_block("entry"))
    builder.ret(builder.fmul(builder.call(sin, math.args), builder.call(sin, math.args)))
    ptx = ptx_from_llvm(module)
    assert "__nv_sin" not in ptx  # inlined
    assert ptx.count("call.uni (retval0), __internal_trig_reduction_slowpathd") == 1
    part = program._libdevice_part(frozenset({"__nv_sin", "__nv_cos"}), frozenset({"__nv_sin"}))
    attributes = _attributes(part)
    assert b"alwaysinline" not in attributes["__nv_sin"] and b"memory(none)" in attributes["__nv_sin"]
    assert b"alwaysinline" in attributes["__nv_cos"] and b"memory(none)" not in attributes["__nv_cos"]


def test_math_called_once_in_each_of_two_functions_is_not_repeated():
    """Calls are merged within a function, not across functions: ``cos``
    called once in each of two keeps ``alwaysinline``.  Only the functions
    called from libdevice are counted."""
    module = _math_module("__nv_sin", "__nv_sin", "__nv_cos")
    double = ir.DoubleType()
    other = ir.Function(module, ir.FunctionType(double, [double]), "other")
    builder = ir.IRBuilder(other.append_basic_block("entry"))
    builder.ret(builder.call(module.get_global("__nv_cos"), other.args))
    code = of_llvmlite(module)
    assert program._called_repeatedly(code, frozenset({"__nv_sin", "__nv_cos"})) == {"__nv_sin"}
    assert program._called_repeatedly(code, frozenset({"__nv_cos"})) == set()


def _device_function(module: ir.Module, name: str, size: int | None, linkage: str = "internal") -> ir.Function:
    """A device function ``name(x, n)`` of ``linkage`` with an array of
    ``size`` doubles on the stack (of the run-time size ``n`` for None),
    allocated in its entry block, or in a second block for ``late``."""
    double, index = ir.DoubleType(), ir.IntType(64)
    callee = ir.Function(module, ir.FunctionType(double, [double, index]), name)
    callee.linkage = linkage
    body = ir.IRBuilder(callee.append_basic_block("entry"))
    if name == "late":
        body.branch(callee.append_basic_block("late"))
        body.position_at_end(callee.blocks[-1])
    count = callee.args[1] if size is None else index(size)
    slot = body.alloca(double, count)
    body.store(callee.args[0], body.gep(slot, [body.sub(count, index(1))]))
    body.ret(body.fmul(body.load(body.gep(slot, [index(0)])), callee.args[0]))
    if name == "report":
        callee.attributes.add("noinline")
    return callee


def _caller(module: ir.Module, name: str, callees: list[ir.Function]) -> None:
    """``name(x, n)``, calling each of ``callees`` in turn on its result."""
    double, index = ir.DoubleType(), ir.IntType(64)
    caller = ir.Function(module, ir.FunctionType(double, [double, index]), name)
    builder = ir.IRBuilder(caller.append_basic_block("entry"))
    total = caller.args[0]
    for callee in callees:
        total = builder.call(callee, [total, caller.args[1]])
    builder.ret(total)


def _callers_of(sizes: dict[str, int | None], linkage: str = "internal") -> ir.Module:
    """A kernel calling one device function per entry of ``sizes``
    (``_device_function``), of ``linkage``; ``twice`` called at two places
    of the kernel, ``shared`` once by the kernel and once by another
    function, ``report`` marked ``noinline``, ``late``'s array allocated
    outside its entry block."""
    module = ir.Module()
    callees = {name: _device_function(module, name, size, linkage) for name, size in sizes.items()}
    _caller(module, "kernel", [c for name, c in callees.items() for _ in range(2 if name == "twice" else 1)])
    if "shared" in callees:
        _caller(module, "other", [callees["shared"]])
    return module


def test_functions_called_once_are_inlined_before_the_pipeline():
    """An internal function called at one place of the module is
    ``alwaysinline``, so that the pipeline optimises its code once, in its
    caller, rather than alone and again after the inliner's bottom-up walk.
    Not one called twice by a function, nor once by each of two, one marked
    ``noinline``, an external one, nor one with an ``alloca`` LLVM's
    inliner may refuse: of a run-time size (GMM's arena arrays), which
    stays a ``.func`` of the PTX, or of a constant size outside the entry
    block."""
    sizes = {"once": 4, "twice": 4, "shared": 4, "report": 4, "dynamic": None, "late": 4}
    assert program._inline_single_calls(of_llvmlite(_callers_of(sizes))) == {"once"}
    assert not program._inline_single_calls(of_llvmlite(_callers_of({"once": 4}, linkage="external")))
    ptx = ptx_from_llvm(_callers_of({"once": 4, "late": 4, "dynamic": None}))
    assert ".func  (.param .b64 func_retval0) dynamic(" in ptx and "once" not in ptx


WRITING = {"__nv_frexp": (ir.DoubleType(), [ir.IntType(32)]), "__nv_sincos": (ir.VoidType(), [ir.DoubleType()] * 2)}
"""libdevice functions that write through pointers: their result type and
the types they write."""


@pytest.mark.parametrize("name", WRITING)
def test_math_writing_through_a_pointer_called_twice_keeps_its_stores(name: str):
    """libdevice gives every function the same attributes, those that write
    through a pointer too: called twice, ``frexp`` or ``sincos`` stays
    ``alwaysinline`` (``memory(none)`` let LLVM delete its stores: the
    function's PTX was ``ret;``)."""
    result, written = WRITING[name]
    module = ir.Module()
    double = ir.DoubleType()
    callee = ir.Function(module, ir.FunctionType(result, [double, *(w.as_pointer() for w in written)]), name)
    kernel = ir.Function(module, ir.FunctionType(written[0], [double, double]), "kernel")
    builder = ir.IRBuilder(kernel.append_basic_block("entry"))
    slots = [builder.alloca(written[0]) for _ in kernel.args]
    for argument, slot in zip(kernel.args, slots):
        builder.call(callee, [argument, *[slot] * len(written)])
    first, second = (builder.load(slot) for slot in slots)
    builder.ret(builder.fadd(first, second) if written[0] == double else builder.add(first, second))
    assert program._called_repeatedly(of_llvmlite(module), frozenset({name})) == {name}
    assert "st.param.b" in ptx_from_llvm(module).split("kernel(")[1]  # it returns what was written
    attributes = _attributes(program._libdevice_part(frozenset({name}), frozenset({name})))
    assert b"alwaysinline" in attributes[name] and b"memory(none)" not in attributes[name]


def _library(definition: str, attributes: str) -> llvm.ModuleRef:
    """A module of one definition written as libdevice's, of the
    attribute group ``#0``."""
    return llvm.parse_assembly(f"{definition}\nattributes #0 = {{ {attributes} }}\n")


def test_every_libdevice_function_device_code_calls_takes_no_pointer():
    """What ``_may_be_pure`` relies on: every function ``libdevice_name``
    gives (the intrinsics', libm's and ``powi``, f64 and f32) is
    libdevice's and takes no pointer, so that a repeated call of any may
    be made pure."""
    given = set()
    for float_type in (f64, f32):
        for name in (*nvptx.LIBDEVICE_INTRINSICS, "powi"):
            arity = 2 if name in nvptx.BINARY_MATH else 1
            operands = [float_type, i32] if name == "powi" else [float_type] * arity
            given.add(nvptx.libdevice_name(f"llvm.{name}.{float_type}", operands, float_type))
        for name in nvptx.LIBDEVICE_LIBM:
            callee = name if float_type == f64 else f"{name}f"
            given.add(nvptx.libdevice_name(callee, [float_type] * (2 if name in nvptx.BINARY_MATH else 1), float_type))
    library = llvm.parse_bitcode(program._libdevice_bitcode())
    functions = {f.name: f for f in library.functions if not f.is_declaration}
    assert None not in given and len(given) == 2 * (len(nvptx.LIBDEVICE_INTRINSICS) + 1 + len(nvptx.LIBDEVICE_LIBM))
    assert all(name in functions and program._may_be_pure(functions[name]) for name in given)
    assert not program._may_be_pure(functions["__nv_sincos"])


def test_pure_strips_only_bare_words_and_skips_pointer_parameters():
    """Making a function pure drops the words ``alwaysinline`` and
    ``nounwind`` of its attributes, not the same words in a quoted
    string; a function with a pointer parameter is not made pure though
    named."""
    strings = '"note"="nounwind alwaysinline"'
    library = _library("define double @__nv_sin(double %x) #0 { ret double %x }", f"alwaysinline nounwind {strings}")
    sin = _attributes(program._pure(library, frozenset({"__nv_sin"})))["__nv_sin"]
    assert b"alwaysinline" not in sin.replace(strings.encode(), b"") and strings.encode() in sin
    assert b"memory(none)" in sin
    stores = "define double @__nv_sin(double %x, ptr %p) #0 { store double %x, ptr %p\n ret double %x }"
    sin = _attributes(program._pure(_library(stores, "alwaysinline nounwind"), frozenset({"__nv_sin"})))["__nv_sin"]
    assert b"alwaysinline" in sin and b"memory(none)" not in sin


def test_pure_refuses_a_definition_it_cannot_read():
    """A definition written otherwise than libdevice's (another toolkit's
    with a section) is an internal error, not left ``alwaysinline``."""
    library = _library('define double @__nv_sin(double %x) #0 section "math" { ret double %x }', "alwaysinline")
    with pytest.raises(AssertionError, match="__nv_sin"):
        program._pure(library, frozenset({"__nv_sin"}))


@pytest.mark.parametrize("opt_level, generator", [(3, 2), (2, 2), (1, 1)])
def test_the_code_generator_runs_at_most_at_level_2(monkeypatch: pytest.MonkeyPatch, opt_level: int, generator: int):
    """LLVM's pipeline runs at the compile's level and NVPTX's code
    generator at that level or 2, the lower (``CODE_GENERATOR_LEVEL``: at
    3 it emitted no better PTX, more slowly)."""
    machines: list[int] = []
    pipelines: list[int] = []
    create_machine = llvm.Target.create_target_machine
    tuning = program.llvm.create_pipeline_tuning_options

    def machine(self: llvm.Target, *args: object, opt: int = 2, **options: object) -> llvm.TargetMachine:
        machines.append(opt)
        return create_machine(self, *args, opt=opt, **options)  # type: ignore[arg-type]

    def pipeline(speed_level: int = 2) -> llvm.PipelineTuningOptions:
        pipelines.append(speed_level)
        return tuning(speed_level=speed_level)

    monkeypatch.setattr(llvm.Target, "create_target_machine", machine)
    monkeypatch.setattr(program.llvm, "create_pipeline_tuning_options", pipeline)
    assert "func_retval0) math(" in ptx_from_llvm(_math_module(), opt_level=opt_level)
    assert machines and set(machines) == {generator}
    assert pipelines and set(pipelines) == {opt_level}


def test_a_gpu_the_toolkit_does_not_support_is_named_as_such(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """CUDA 13's ptxas knows no GPU before sm_75: its refusal of the
    architecture is not a rejection of the PTX (it said "ptxas rejected
    the PTX: ptxas fatal : Value 'sm_60' is not defined for option
    'gpu-name'")."""
    ptxas = tmp_path / "ptxas"
    ptxas.write_text(
        "#!/bin/sh\necho \"ptxas fatal   : Value 'sm_60' is not defined for option 'gpu-name'\" >&2\nexit 255\n"
    )
    ptxas.chmod(0o755)
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: ptxas)
    with pytest.raises(
        ToolkitError, match=r"ptxas cannot assemble for sm_60: its CUDA toolkit does not support that GPU"
    ):
        emit_cubin(".version 6.3\n.target sm_60\n.address_size 64\n", "sm_60")


def test_the_toolkit_is_found_and_a_missing_part_is_a_clear_error(monkeypatch: pytest.MonkeyPatch):
    assert find_ptxas() is not None and find_libdevice() is not None
    monkeypatch.setattr(toolkit, "find_ptxas", lambda: None)
    with pytest.raises(ToolkitError, match="ptxas was not found: install a CUDA toolkit or the nvidia-cuda-nvcc"):
        toolkit.emit_cubin("")


def test_the_wheels_layout_is_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    root = tmp_path / "nvidia" / "cu13"
    (root / "bin").mkdir(parents=True)
    (root / "nvvm" / "libdevice").mkdir(parents=True)
    (root / "bin" / "ptxas").write_text("")
    (root / "nvvm" / "libdevice" / "libdevice.10.bc").write_bytes(b"")
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr("sys.path", [str(tmp_path)])
    assert find_ptxas() == root / "bin" / "ptxas"
    assert find_libdevice() == root / "nvvm" / "libdevice" / "libdevice.10.bc"


UNARY_MATH = (
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "absf",
    "floor",
    "ceil",
    "trunc",
    "round",
    "roundeven",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "cbrt",
    "expm1",
    "log1p",
)
COMPLEX_MATH = ("log", "exp", "sqrt", "sin", "cos", "tan", "tanh", "expm1", "log1p", "rsqrt", "sign")


def _chain(name: str, first: str, ops: tuple[str, ...], dialect: str, type: str) -> list[str]:
    """``%<name>1 = <dialect>.<op 1> <first>``, then each op on the last
    result; the last result is ``%<name><len(ops)>``."""
    values = [first, *(f"%{name}{k}" for k in range(1, len(ops) + 1))]
    return [f"{values[k + 1]} = {dialect}.{op} {values[k]} : {type}" for k, op in enumerate(ops)]


def _every_math_kernel(element: str) -> str:
    complex_type = f"complex<{element}>"
    lines = [
        f"%v0 = memref.load %x[%i] : memref<?x{element}>",
        *_chain("v", "%v0", UNARY_MATH, "math", element),
        f"%p = math.powf %v0, %v{len(UNARY_MATH)} : {element}",
        f"%q = math.atan2 %p, %v0 : {element}",
        f"%r = math.fpowi %q, %k : {element}, i32",
        f"%s = math.fma %r, %p, %q : {element}",
        f"%t = math.copysign %s, %r : {element}",
        f"%z = complex.create %t, %v0 : {complex_type}",
        *_chain("z", "%z", COMPLEX_MATH, "complex", complex_type),
        f"%w = complex.pow %z{len(COMPLEX_MATH)}, %z : {complex_type}",
        f"%a = complex.abs %w : {complex_type}",
        f"%b = complex.angle %w : {complex_type}",
        f"%c = arith.addf %a, %b : {element}",
        f"memref.store %c, %y[%i] : memref<?x{element}>",
    ]
    body = "\n    ".join(lines)
    return f"""
func.func @every_math(%y: memref<?x{element}>, %x: memref<?x{element}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant 3 : i32
  %n = memref.dim %y, %c0 : memref<?x{element}>
  {PARALLEL.format(lb="%c0", ub="%n", step="%c1")}
    {body}
{END}
  func.return
}}
"""


@pytest.mark.parametrize("element", ["f64", "f32"])
def test_every_math_op_reaches_libdevice_and_ptxas_accepts_it(element: str):
    """NVPTX selects none of the transcendental functions (LLVM would abort
    the process): each must become a libdevice call, inlined."""
    program = compile_kernels(_module(_every_math_kernel(element)), ["every_math"])
    assert "__nv_" not in program.ptx and ".extern" not in program.ptx
    assert emit_cubin(program.ptx, program.arch)[:4] == ELF_MAGIC


WARP_ATOMICS = Path(__file__).parent / "filecheck" / "gpu" / "warp_atomics.mlir"


@pytest.mark.parametrize("arch", ["sm_60", "sm_75", "sm_90", "sm_120"])
def test_warp_aggregated_accumulations_of_every_kind_assemble(arch: str):
    """Shared additions of f64, f32, i64 and i32 aggregated over the warp
    (filecheck/gpu/warp_atomics.mlir checks their PTX) assemble with
    ptxas.  GPUs before sm_75 get PTX 6.3 (LLVM's default for them
    predates ``activemask``), the version sm_75's PTX has, which ptxas
    checks there: the ptxas of CUDA 13 assembles no older GPU."""
    program = compile_kernels(parse_module(WARP_ATOMICS.read_text(), str(WARP_ATOMICS)), ["k"], arch=arch)
    # the loop and its checked copy (versioned on its index checks)
    assert program.ptx.count("activemask.b32") == 2 * 4 and program.ptx.count("atom.add.f64") == 2 * 1
    if arch == "sm_60":
        assert ".version 6.3\n" in program.ptx
    else:
        assert emit_cubin(program.ptx, arch)[:4] == ELF_MAGIC


def test_an_adjoint_with_a_scalar_gradient_is_not_a_kernel():
    """Its gradient of an outer scalar is a sum over the iterations that
    comes back as a scalar result, which a kernel cannot return.  Named as
    a kernel it is an error; in the whole module's PTX it is a device
    function, not an error for the module (which the issue's trial met)."""
    module = _module(PARALLEL_AD_KERNEL)
    AdAdjointPass(functions=("k",)).apply(make_context(), module)
    assert ".entry k_inv(" in compile_kernels(module, ["k", "k.inv"]).ptx
    with pytest.raises(
        ScalarGradient, match="@k.adj is not a kernel function yet: it returns the gradient of its scalar argument 'a'"
    ):
        compile_kernels(module, ["k.adj"])
    ptx = module_ptx(module)
    assert re.search(r"\.visible \.func .*k_\$_adj\(", ptx) and "_adj(" not in ptx.replace("k_$_adj(", "")
    assert ".visible .entry k(" in ptx and ".visible .entry k_inv(" in ptx
    assert emit_cubin(ptx)[:4] == ELF_MAGIC


SCALARS = f"""
func.func @scalars(%y: memref<?xf64>, %c: complex<f64>, %b: i1, %k: i8, %j: i32, %s: f32) -> (complex<f64>, i1, i8, i32, f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  {PARALLEL.format(lb="%c0", ub="%n", step="%c1")}
    %re = complex.re %c : complex<f64>
    %im = complex.im %c : complex<f64>
    %wide = arith.extf %s : f32 to f64
    %picked = arith.select %b, %re, %wide : f64
    %kj = arith.extsi %k : i8 to i32
    %sum = arith.addi %kj, %j : i32
    %f = arith.sitofp %sum : i32 to f64
    %t = arith.addf %picked, %f : f64
    %u = arith.mulf %t, %im : f64
    memref.store %u, %y[%i] : memref<?xf64>
{END}
  func.return %c, %b, %k, %j, %s : complex<f64>, i1, i8, i32, f32
}}
"""


def test_scalar_parameters_are_their_llvm_types_and_a_complex_number_its_two_parts():
    ptx = compile_kernels(_module(SCALARS), ["scalars"]).ptx
    entry = ptx[ptx.index(".visible .entry scalars(") : ptx.index(")", ptx.index(".visible .entry scalars("))]
    kinds = [line.split()[1] for line in entry.splitlines()[1:]]
    # y (pointer, size), c (re, im), b, k, j, s, then the error slot (pointer, size)
    assert kinds == [".u64", ".u64", ".f64", ".f64", ".u8", ".u8", ".u32", ".f32", ".u64", ".u64"]
    assert emit_cubin(ptx)[:4] == ELF_MAGIC


LARGE_ANCILLA = """
rev.func @scratch(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %a = anc.array_alloc() : memref<1000xf64>
    %v = memref.load %y[%i] : memref<?xf64>
    %t = rev.take %a[%i] : memref<1000xf64>
    %t1 = rev.add %t, %v : f64
    %t2 = rev.sub %t1, %v : f64
    rev.put %t2, %a[%i] : memref<1000xf64>
    anc.array_free %a() : memref<1000xf64>
    rev.yield
  }
  rev.return %n : index
}
"""


def test_a_large_static_ancilla_array_is_local_memory_not_the_heap():
    """Native code puts an 8000-byte ancilla array on the heap; a thread
    keeps it in its local memory, with 32 bytes beside it for the context
    that the out-of-line failure report reads (64 when the report read the
    check's words from the thread's error slot too)."""
    ptx = compile_kernels(_module(LARGE_ANCILLA), ["scratch"]).ptx
    assert re.search(r"\.local \.align 32 \.b8 \t__local_depot\d+\[8032\];", ptx)
    assert "malloc" not in ptx and "free" not in ptx
    assert emit_cubin(ptx)[:4] == ELF_MAGIC


def test_static_arrays_past_a_threads_local_memory_are_a_located_error():
    """CUDA gives a thread 512 KiB of local memory; ptxas accepts a larger
    frame and every launch fails.  An 800 KB ancilla array is refused at
    its allocation; so is a kernel whose own arrays fit but, with those of
    the device function it calls, do not (the callee alone fits)."""
    with pytest.raises(PassFailedException, match=r"kernels.mlir:7:5: @scratch needs 800064 bytes of local memory"):
        compile_kernels(_module(LARGE_ANCILLA.replace("1000xf64", "100000xf64")), ["scratch"])
    chain = f"""
func.func @half(%v: f64) -> f64 {{
  %c0 = arith.constant 0 : index
  %b = memref.alloca() : memref<40000xf64>
  memref.store %v, %b[%c0] : memref<40000xf64>
  %r = memref.load %b[%c0] : memref<40000xf64>
  func.return %r : f64
}}

func.func @both(%y: memref<?xf64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  %own = memref.alloca() : memref<40000xf64>
  {PARALLEL.format(lb="%c0", ub="%n", step="%c1")}
    %v = memref.load %y[%i] : memref<?xf64>
    %w = func.call @half(%v) : (f64) -> f64
    memref.store %w, %y[%i] : memref<?xf64>
{END}
  func.return
}}
"""
    with pytest.raises(
        PassFailedException,
        match=r"kernels.mlir:\d+:3: @both needs 640\d\d\d bytes .*takes 320000\), more than the 524288",
    ):
        compile_kernels(_module(chain), ["both"])


UNLOWERABLE = {
    "unranked": (
        "func.func @f(%x: memref<*xf64>) {\n  func.return\n}\n",
        r"'func.func' at kernels.mlir:1:1: native code does not support type memref<\*xf64>; its arrays have a rank",
    ),
    "fixed array": (
        "func.func @f(%x: memref<?x!rev.fixed<64, 43>>) {\n  func.return\n}\n",
        r"'func.func' at kernels.mlir:1:1: .* type memref<\?x!rev.fixed<64, 43>>; its arrays hold integers, floats",
    ),
    "fabs.i32": (
        'func.func @f(%x: i32) -> i32 {\n  %a = llvm.call_intrinsic "llvm.fabs.i32"(%x) : (i32) -> i32\n'
        "  func.return %a : i32\n}\n",
        r"'llvm.call_intrinsic' at kernels.mlir:2:3: LLVM refuses llvm.fabs.i32 on \(i32\) -> i32: Intrinsic has",
    ),
    "smax.f64": (
        'func.func @f(%x: f64) -> f64 {\n  %a = llvm.call_intrinsic "llvm.smax.f64"(%x, %x) : (f64, f64) -> f64\n'
        "  func.return %a : f64\n}\n",
        r"'llvm.call_intrinsic' at kernels.mlir:2:3: LLVM refuses llvm.smax.f64 on \(double, double\) -> double: ",
    ),
}


@pytest.mark.parametrize("emit", ["llvm", "ptx"])
@pytest.mark.parametrize("case", UNLOWERABLE)
def test_what_llvm_cannot_take_is_a_located_error_on_the_cpu_and_the_gpu(
    case: str, emit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """Each was LLVM's error without a location ("LLVM function argument #0
    has incompatible type", "Type not supported", "Intrinsic has incorrect
    return type!")."""
    source, message = UNLOWERABLE[case]
    path = tmp_path / "kernels.mlir"
    path.write_text(source)
    assert rev_translate([str(path), f"--emit={emit}"]) == 1
    assert re.search(message, capsys.readouterr().err.replace(f"{tmp_path}/", ""))


def test_a_well_typed_intrinsic_compiles_and_inline_assembly_is_host_code_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """An intrinsic LLVM takes passes the check (``ctlz``'s flag must be a
    constant, an ``immarg``: the check passes constants); inline assembly, written
    for one target, is refused in GPU code at its op (ptxas's syntax error
    named none) and kept in host code."""
    path = tmp_path / "kernels.mlir"
    path.write_text(
        "func.func @f(%x: f64, %y: i32) -> (f64, i32) {\n"
        '  %a = llvm.call_intrinsic "llvm.fabs.f64"(%x) : (f64) -> f64\n'
        "  %false = arith.constant false\n"
        '  %z = llvm.call_intrinsic "llvm.ctlz.i32"(%y, %false) : (i32, i1) -> i32\n'
        '  %b = llvm.inline_asm has_side_effects "mov $0, $1;", "=r,r" %z : (i32) -> i32\n'
        "  func.return %a, %b : f64, i32\n}\n"
    )
    assert rev_translate([str(path), "--emit=llvm"]) == 0
    out = capsys.readouterr().out
    assert "llvm.fabs.f64" in out and "llvm.ctlz.i32" in out
    assert rev_translate([str(path), "--emit=ptx"]) == 1
    error = capsys.readouterr().err.replace(f"{tmp_path}/", "")
    assert "'llvm.inline_asm' at kernels.mlir:5:3: GPU code cannot run inline assembly" in error


def test_an_array_in_a_versioned_kernel_loop_takes_its_bytes_once():
    """A 480,000-byte ``memref.alloca`` in the parallel loop was cloned into
    both versions of the grid-stride loop (``__local_depot[960032]``, past a
    thread's 512 KiB); the versions now share it."""
    source = f"""
func.func @scratch(%y: memref<?xf64>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  {PARALLEL.format(lb="%c0", ub="%n", step="%c1")}
    %buf = memref.alloca() : memref<60000xf64>
    %m = arith.constant 60000 : index
    %j = arith.remui %i, %m : index
    %k = arith.addi %i, %c1 : index
    %l = arith.remui %k, %m : index
    %v = memref.load %y[%i] : memref<?xf64>
    memref.store %v, %buf[%j] : memref<60000xf64>
    %u = memref.load %buf[%l] : memref<60000xf64>
    memref.store %u, %y[%i] : memref<?xf64>
{END}
  func.return
}}
"""
    ptx = compile_kernels(_module(source), ["scratch"]).ptx
    assert re.search(r"__local_depot\d+\[480032\];", ptx)
    assert emit_cubin(ptx)[:4] == ELF_MAGIC


TOP, BOTTOM = 2**63 - 1, -(2**63)


@pytest.mark.parametrize(
    "lb, ub, step",
    [
        (TOP - 10, TOP, 4),  # i + stride passes 2^63 - 1
        (BOTTOM, TOP, 2**62),  # four iterations; lb + thread·step wraps into the range for threads 4 to 7
        (BOTTOM, TOP, TOP),  # the stride passes 2^64
        (BOTTOM, TOP, 2**60 + 3),
        (TOP - 1, TOP, 1),
        (5, -5, 1),
    ],
)
def test_a_grid_stride_loop_at_the_limits_of_index_runs_each_iteration_once(lb: int, ub: int, step: int):
    """Every thread of a grid takes the iterations ``range(lb, ub, step)``
    that are its own, exactly once, where the first index of a thread
    without one, or the grid's stride, does not fit 64 bits: the count and
    the sum of the indices are the CPU function's and Python's."""
    module = _module(SPREAD)
    indices = range(lb, ub, step)
    expected = [len(indices), (sum(indices) + 2**63) % 2**64 - 2**63]
    cpu = np.zeros(2, dtype=np.int64)
    NativeModule.compile(module).call("spread", cpu, lb, ub, step)
    assert cpu.tolist() == expected
    kernel = EmulatedKernel(module, "spread")
    for blocks, threads in ((1, 1), (2, 3), (3, 8)):
        got = np.zeros(2, dtype=np.int64)
        slot = kernel.launch([got, lb, ub, step], blocks, threads)
        assert not slot.any()
        assert got.tolist() == expected, (blocks, threads)


ODD_KERNELS = """
rev.func @NAME(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %v = rev.take %y[%i] : memref<?xf64>
    %one = arith.constant 1.0 : f64
    %v1 = rev.add %v, %one : f64
    rev.put %v1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}
"""


def test_a_kernel_named_outside_ptx_characters_is_launched_by_its_name():
    """The program keeps the user's name for a kernel whose ``.entry`` PTX
    spells otherwise (docs/gpu.md, the ABI); ptxas takes the spelling."""
    program = compile_kernels(_module(ODD_KERNELS.replace("NAME", '"k-1"')), ["k-1", "k-1.inv"])
    assert [program.kernels[n].entry for n in ("k-1", "k-1.inv")] == ["k$2d$1", "k$2d$1_inv"]
    assert ".visible .entry k$2d$1(" in program.ptx
    assert emit_cubin(program.ptx)[:4] == ELF_MAGIC


PTX_SYMBOL = re.compile(r"[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+")
"""PTX's identifier (the PTX ISA, "Identifiers"), of which ``_`` alone is
not one and ``WARP_SZ`` is predefined."""


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(min_size=0, max_size=6), st.text(min_size=0, max_size=6))
def test_every_name_is_spelled_as_a_ptx_symbol_and_apart_from_every_other(a: str, b: str):
    for name in (a, b, "_", "WARP_SZ", "."):
        spelled = nvptx.ptx_name(name)
        assert PTX_SYMBOL.fullmatch(spelled) and spelled not in ("_", "WARP_SZ"), (name, spelled)
        assert PTX_SYMBOL.fullmatch(entry_name(name)) and entry_name(name) not in ("_", "WARP_SZ"), name
    assert (nvptx.ptx_name(a) == nvptx.ptx_name(b)) == (a == b)


PTX_RESERVED_SAMPLE = [
    *["_", "WARP_SZ", ".", "param0", "param1", "param12"],
    *["__", "_1", "$", "9x", "%tid", "tid", "ret", "add", "exit", "entry", "param", "paramx", "retval0"],
]
"""Kernel names PTX reserves or spells otherwise (``_``, ``WARP_SZ``, the
``param<N>`` of LLVM's call sequences, which every kernel has for its
reports; a lone dot is ``_`` as a kernel), beside names it takes as they
are (instruction and directive names are not reserved)."""


def test_kernels_named_as_ptx_reserves_have_entries_ptxas_takes():
    text = "".join(ODD_KERNELS.replace("NAME", f'"{name}"') for name in PTX_RESERVED_SAMPLE)
    program = compile_kernels(_module(text), PTX_RESERVED_SAMPLE)
    entries = [program.kernels[name].entry for name in PTX_RESERVED_SAMPLE]
    assert entries[:6] == ["$5f$", "$57$ARP_SZ", "$2e$", "$70$aram0", "$70$aram1", "$70$aram12"]
    assert len(set(entries)) == len(entries)
    for entry in entries:
        assert f".visible .entry {entry}(" in program.ptx
    assert emit_cubin(program.ptx)[:4] == ELF_MAGIC


@rv.reversible
def __nv_sin(acc, v):
    acc += math.sin(v)


@rv.reversible
def calls_nv_sin(y, x):
    for i in rv.prange(len(y)):
        __nv_sin(y[i], x[i])


@pytest.mark.parametrize("names", [["k", "k_param_0"], ["k_param_12", "k"]])
def test_a_kernel_named_as_another_kernels_parameter_is_refused(names):
    """LLVM names kernel ``@k``'s parameters ``k_param_<N>`` in the PTX: a
    kernel of one of those names makes ptxas die of a segmentation fault
    (whichever comes first), so it is refused, naming both."""
    module = _module("".join(ODD_KERNELS.replace("NAME", name) for name in names))
    line = 2 + 14 * (1 - names.index("k"))
    with pytest.raises(
        PassFailedException,
        match=rf"kernels.mlir:{line}:1: @k_param_\d+ has the PTX name k_param_\d+, which LLVM gives a "
        r"parameter of @k \(PTX name k\): rename one",
    ):
        compile_kernels(module, names)


def test_a_function_named_like_libdevice_is_refused_at_it():
    """libdevice names its functions ``__nv_<name>``: a device function or
    a kernel so named would meet the one GPU code calls for its math (LLVM's
    "invalid redefinition", unlocated), as ``@exp`` would a C library
    function on the CPU. The CPU has no libdevice, and runs it."""
    assert calls_nv_sin(np.zeros(2), np.ones(2))[0].tolist() == [math.sin(1.0)] * 2
    with pytest.raises(
        rv.NativeCompilationError,
        match=r"the kernel of calls_nv_sin cannot be compiled: 'func.func' at .*test_gpu\.py:\d+:1: "
        r"@__nv_sin is named like a libdevice function \(GPU code's math, whose functions are named '__nv_<name>'\)",
    ):
        rv.cuda.kernel(calls_nv_sin).compile(np.zeros(2), np.ones(2))
    with pytest.raises(PassFailedException, match=r"kernels.mlir:2:1: @__nv_exp is named like a libdevice function"):
        compile_kernels(_module(ODD_KERNELS.replace("NAME", "__nv_exp")), ["__nv_exp"])


@rv.reversible
def __nv(y, x):
    for i in rv.prange(len(y)):
        y[i] += x[i] * 2.0


def test_a_name_outside_libdevices_namespace_compiles_run_backwards_and_differentiated():
    """``@__nv`` is no libdevice name, nor are ``@__nv.inv`` and
    ``@__nv.adj``, though their entries (``__nv_inv``, ``__nv_adj``) start
    as libdevice's do: ``~f`` and ``rv.adjoint(f)`` compile as ``f``
    does.  A kernel whose dots make one of libdevice's names is refused."""
    y, x = np.zeros(2), np.ones(2)
    for function, args, entry in [
        (__nv, (y, x), "__nv"),
        (~__nv, (y, x), "__nv_inv"),
        (rv.adjoint(__nv), (y, x, y, x), "__nv_adj"),
    ]:
        assert f".visible .entry {entry}(" in rv.cuda.kernel(function).compile(*args).ptx
    with pytest.raises(PassFailedException, match=r"kernels.mlir:2:1: @__nv.exp is named like a libdevice function"):
        compile_kernels(_module(ODD_KERNELS.replace("NAME", '"__nv.exp"')), ["__nv.exp"])


def test_a_kernel_named_twice_is_refused_before_anything_is_built():
    """Named twice, a kernel would be outlined twice (xDSL's "Cannot replace
    an operation without a parent", an ``IndexError`` from
    ``compile_kernels``): the list is refused, naming the kernel, as a
    kernel the module lacks is."""
    with pytest.raises(PassFailedException, match=r"^kernel @k is named twice \(kernels: @k, @k\.inv, @k\)$"):
        compile_kernels(_module(ODD_KERNELS.replace("NAME", "k")), ["k", "k.inv", "k"])


def test_two_kernels_with_one_entry_name_are_refused():
    module = _module(ODD_KERNELS.replace("NAME", '"k.a"') + ODD_KERNELS.replace("NAME", "k_a"))
    with pytest.raises(PassFailedException, match=r"kernels.mlir:16:1: @k_a and @k.a both have the PTX name k_a"):
        compile_kernels(module, ["k.a", "k_a"])
