"""std-level IR as upstream MLIR writes it, through revmlir's
``convert-std-to-llvm``: functions of several blocks, every signature behind
upstream's C interface (``_mlir_ciface_<name>``, called here through ctypes
and from a C program), the arith/math/ub ops upstream emits (native code
and the interpreter agree, and match numpy), location aliases defined after
their use, and the host's data layout in the emitted LLVM IR."""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.utils.exceptions import ParseError, PassFailedException

from revmlir.errors import ExecutionError
from revmlir.interpreter import RevInterpreter
from revmlir.lowering.std_to_llvm import ConvertStdToLLVMPass
from revmlir.parsing import make_context, parse_module
from revmlir.runtime.jit import JITModule, jit
from revmlir.runtime.native import NativeModule, lower_to_llvm_ir
from test_aot import c_compiler


def compile_std(text: str) -> JITModule:
    module = parse_module(text, "std.mlir")
    ConvertStdToLLVMPass().apply(make_context(), module)
    return jit(str(convert_module(module, fallback_target_triple=None)))


def entry(machine_code: JITModule, name: str, result: object, *arguments: object):
    return ctypes.CFUNCTYPE(result, *arguments)(machine_code.address("_mlir_ciface_" + name))


class MemRef1D(ctypes.Structure):
    """Upstream's descriptor of a rank-1 memref (``CRunnerUtils.h``)."""

    _fields_ = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
        ("sizes", ctypes.c_int64 * 1),
        ("strides", ctypes.c_int64 * 1),
    ]


# ---------------------------------------------------------------------------
# Several blocks and every signature
# ---------------------------------------------------------------------------

SIGNATURES = """
func.func @seven() -> i64 {
  %c = arith.constant 7 : i64
  func.return %c : i64
}
// the Collatz steps of n and the largest value reached: a loop of blocks
func.func @collatz(%n: i64) -> (i64, i64) {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %two = arith.constant 2 : i64
  %three = arith.constant 3 : i64
  cf.br ^head(%n, %zero, %n : i64, i64, i64)
^head(%x: i64, %steps: i64, %top: i64):
  %done = arith.cmpi eq, %x, %one : i64
  cf.cond_br %done, ^exit, ^step
^step:
  %r = arith.remui %x, %two : i64
  %odd = arith.cmpi ne, %r, %zero : i64
  %next_steps = arith.addi %steps, %one : i64
  cf.cond_br %odd, ^up, ^down
^up:
  %t = arith.muli %x, %three : i64
  %u = arith.addi %t, %one : i64
  %higher = arith.maxui %top, %u : i64
  cf.br ^head(%u, %next_steps, %higher : i64, i64, i64)
^down:
  %h = arith.divui %x, %two : i64
  cf.br ^head(%h, %next_steps, %top : i64, i64, i64)
^exit:
  func.return %steps, %top : i64, i64
}
// a fresh array of n elements 0, 1, 2, ... and its sum
func.func @iota(%n: index) -> (memref<?xf64>, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %m = memref.alloc(%n) : memref<?xf64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %k = arith.index_cast %i : index to i64
    %v = arith.uitofp %k : i64 to f64
    memref.store %v, %m[%i] : memref<?xf64>
    %a = arith.addf %acc, %v : f64
    scf.yield %a : f64
  }
  func.return %m, %s : memref<?xf64>, f64
}
// scale an array the caller owns, in place, past an offset into its buffer
func.func @scale(%m: memref<?xf64>, %k: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %m[%i] : memref<?xf64>
    %w = arith.mulf %v, %k : f64
    memref.store %w, %m[%i] : memref<?xf64>
  }
  func.return
}
"""


@pytest.fixture(scope="module")
def signatures() -> JITModule:
    return compile_std(SIGNATURES)


def test_no_arguments(signatures):
    assert entry(signatures, "seven", ctypes.c_int64)() == 7


def collatz(n: int) -> tuple[int, int]:
    steps, top = 0, n
    while n != 1:
        n = 3 * n + 1 if n % 2 else n // 2
        top = max(top, n)
        steps += 1
    return steps, top


@pytest.mark.parametrize("n", [1, 6, 27, 97])
def test_several_results_from_several_blocks(signatures, n):
    class Pair(ctypes.Structure):
        _fields_ = [("steps", ctypes.c_int64), ("top", ctypes.c_int64)]

    result = Pair()
    entry(signatures, "collatz", None, ctypes.POINTER(Pair), ctypes.c_int64)(ctypes.byref(result), n)
    assert (result.steps, result.top) == collatz(n)


def test_memref_result(signatures):
    class Result(ctypes.Structure):
        _fields_ = [("array", MemRef1D), ("sum", ctypes.c_double)]

    result = Result()
    entry(signatures, "iota", None, ctypes.POINTER(Result), ctypes.c_int64)(ctypes.byref(result), 5)
    array = result.array
    assert array.allocated == array.aligned and array.offset == 0
    assert (array.sizes[0], array.strides[0]) == (5, 1)
    values = np.ctypeslib.as_array(ctypes.cast(array.aligned, ctypes.POINTER(ctypes.c_double)), (5,))
    assert values.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert result.sum == 10.0
    ctypes.CDLL(None).free(ctypes.c_void_p(array.allocated))


def test_memref_argument_with_an_offset(signatures):
    buffer = np.arange(6, dtype=np.float64)
    address = buffer.ctypes.data
    descriptor = MemRef1D(address, address, 2, (3,), (1,))  # elements 2, 3, 4
    entry(signatures, "scale", None, ctypes.POINTER(MemRef1D), ctypes.c_double)(ctypes.byref(descriptor), 10.0)
    assert buffer.tolist() == [0.0, 1.0, 20.0, 30.0, 40.0, 5.0]


C_PROGRAM = r"""
#include <stdint.h>
#include <stdio.h>
typedef struct { double *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } memref1;
typedef struct { double *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } memref2;
typedef struct { int64_t out, n; } rrfib_results;
/* upstream's C interface, as mlir-translate's objects have it */
void _mlir_ciface_rrfib(rrfib_results *, int64_t out, int64_t n, memref1 *err);
void _mlir_ciface_i_affine(memref1 *y, memref2 *W, memref1 *b, memref1 *x, memref1 *err);
int main(void) {
    int64_t slot[6] = {0};  /* the error slot: memref<6xi64>, zeroed */
    memref1 err = {(double *)slot, (double *)slot, 0, {6}, {1}};
    rrfib_results r;
    _mlir_ciface_rrfib(&r, 0, 20, &err);
    printf("%lld %lld %lld\n", (long long)r.out, (long long)r.n, (long long)slot[0]);
    /* y lives at offset 1 of its buffer */
    double ys[3] = {-1, 1, 2}, Ws[4] = {1, 2, 3, 4}, bs[2] = {10, 20}, xs[2] = {5, 6};
    memref1 y = {ys, ys, 1, {2}, {1}}, b = {bs, bs, 0, {2}, {1}}, x = {xs, xs, 0, {2}, {1}};
    memref2 W = {Ws, Ws, 0, {2, 2}, {2, 1}};
    _mlir_ciface_i_affine(&y, &W, &b, &x, &err);
    printf("%g %g %g %lld\n", ys[0], ys[1], ys[2], (long long)slot[0]);
    return 0;
}
"""


def test_object_links_with_c_written_against_mlirs_c_interface(served, tmp_path: Path):
    examples = Path(__file__).parent.parent / "examples"
    objects = []
    for name in ("fibonacci", "affine"):
        obj = tmp_path / f"{name}.o"
        result = served("rev-translate", str(examples / f"{name}.mlir"), "--emit=obj", "-o", str(obj))
        assert result.returncode == 0, result.stderr
        objects.append(str(obj))
    (tmp_path / "main.c").write_text(C_PROGRAM)
    exe = tmp_path / "main"
    build = subprocess.run(
        [*c_compiler(), "-O2", str(tmp_path / "main.c"), *objects, "-o", str(exe), "-lm"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    # fib(21) as the example computes it; y += W x + b = (1 + 17 + 10, 2 + 39 + 20)
    assert run.stdout.splitlines() == ["10946 20 0", "-1 28 61 0"]


# ---------------------------------------------------------------------------
# The ops upstream emits: native code, the interpreter and numpy agree
# ---------------------------------------------------------------------------

OPS = """
rev.func @f(%r1: i64, %r2: i64, %r3: i64, %r4: i64, %r5: f64, %r6: i32, %r7: f64, %r8: i64,
            %a: i64, %b: i64, %x: f64) {
  %mx = arith.maxui %a, %b : i64
  %mn = arith.minui %a, %b : i64
  %cd = arith.ceildivui %a, %b : i64
  %pc = math.ctpop %a : i64
  %uf = arith.uitofp %a : i64 to f64
  %fu = arith.fptoui %x : f64 to i32
  %p = ub.poison : f64
  %t = arith.cmpf true, %x, %x : f64
  %f = arith.cmpf false, %x, %x : f64
  %tf = arith.xori %t, %f : i1
  %one = arith.extui %tf : i1 to i64
  %s1 = rev.add %r1, %mx : i64
  %s2 = rev.add %r2, %mn : i64
  %s3 = rev.add %r3, %cd : i64
  %s4 = rev.add %r4, %pc : i64
  %s5 = rev.add %r5, %uf : f64
  %s6 = rev.add %r6, %fu : i32
  %s7 = rev.add %r7, %p : f64
  %s8 = rev.add %r8, %one : i64
  rev.return %s1, %s2, %s3, %s4, %s5, %s6, %s7, %s8, %a, %b, %x
      : i64, i64, i64, i64, f64, i32, f64, i64, i64, i64, f64
}
"""


def signed(value: int, bits: int) -> int:
    return (
        int(np.array(value, dtype=np.uint64).astype(np.int64)) if bits == 64 else value - (value >> (bits - 1) << bits)
    )


def closed_forms(a: int, b: int, x: float) -> tuple:
    """numpy's unsigned arithmetic, and saturating fptoui as in LLVM."""
    ua, ub = np.uint64(a & (2**64 - 1)), np.uint64(b & (2**64 - 1))
    ceil = 0 if ua == 0 else int((ua - np.uint64(1)) // ub) + 1
    fu = 0 if np.isnan(x) else int(min(max(x, 0.0), 2.0**32 - 1))
    return (
        signed(int(max(ua, ub)), 64),
        signed(int(min(ua, ub)), 64),
        signed(ceil, 64),
        bin(int(ua)).count("1"),
        float(ua),
        signed(fu, 32),
        0.0,
        1,
    )


@pytest.mark.parametrize(
    "a, b, x",
    [
        (7, 3, 2.5),
        (-1, 2, -3.0),
        (0, 5, float("nan")),
        (-(2**63), -1, 1e20),
        (2**63 - 1, 7, 4294967295.9),
        (12345, -3, float("inf")),
        ((1 << 53) + 1, 1, 0.99),
    ],
)
def test_upstream_ops_agree_with_the_interpreter_and_numpy(a, b, x):
    module = parse_module(OPS, "ops.mlir")
    args = (0, 0, 0, 0, 0.0, 0, 0.0, 0, a, b, x)
    interpreted = RevInterpreter(module).call("f", *args)[:8]
    assert NativeModule.compile(module).call("f", *args)[:8] == interpreted
    assert interpreted == closed_forms(a, b, x)


def test_an_op_neither_engine_knows_is_named_where_it_is():
    module = parse_module(
        "rev.func @f(%r: i64, %a: i64) {\n  %c = math.ctlz %a : i64\n"
        "  %s = rev.add %r, %c : i64\n  rev.return %s, %a : i64, i64\n}\n",
        "ctlz.mlir",
    )
    with pytest.raises(ExecutionError, match=r"^ctlz.mlir:2:3: 'math.ctlz' in @f: the interpreter has no semantics"):
        RevInterpreter(module).call("f", 0, 5)
    with pytest.raises(Exception, match=r"^'math.ctlz' at ctlz.mlir:2:3 cannot be compiled to native code"):
        NativeModule.compile(module)


def test_a_poison_array_is_a_located_diagnostic():
    module = parse_module(
        "func.func @g() -> memref<?xf64> {\n  %m = ub.poison : memref<?xf64>\n  func.return %m : memref<?xf64>\n}\n",
        "poison.mlir",
    )
    with pytest.raises(Exception, match=r"'ub.poison' at poison.mlir:2:3: a poison memref<\?xf64>"):
        ConvertStdToLLVMPass().apply(make_context(), module)


@pytest.mark.parametrize("parameters", ["", "%n: index"])
def test_an_allocation_check_without_an_error_slot_is_a_located_error(parameters: str):
    """``rev.allocation_check`` is ``rev-host-safety``'s, in a function with
    an error slot; written by hand elsewhere it has nothing to report
    through."""
    size = "%n" if parameters else ""
    module = parse_module(
        f"func.func @f({parameters}) {{\n  %m = memref.alloc({size}) {{rev.allocation_check = 1 : i64}} : "
        f"memref<{'?' if parameters else '4'}xf64>\n  func.return\n}}\n",
        "alloc.mlir",
    )
    with pytest.raises(
        PassFailedException,
        match=r"^'memref.alloc' at alloc.mlir:2:3: an allocation check needs the function's error slot$",
    ):
        ConvertStdToLLVMPass().apply(make_context(), module)


DECLARED = """llvm.func @ext(f64) -> f64
func.func @f(%x: f64) -> f64 {
  %y = llvm.call @ext(%x) : (f64) -> f64
  func.return %y : f64
}
"""


def test_the_functions_the_pass_replaces_stay_readable_to_a_caller_holding_them():
    """The pass's module is its caller's, who may hold its functions: they
    are detached, as xDSL's rewriters leave what they erase, not taken
    apart as a compile's own copy is."""
    module = parse_module(DECLARED, "declared.mlir")
    declaration, function = list(module.ops)
    ConvertStdToLLVMPass().apply(make_context(), module)
    assert function.parent is None and declaration.parent is None
    assert function.sym_name.data == "f"
    assert "llvm.call @ext(%x) : (f64) -> f64" in str(function)
    assert str(declaration) == "llvm.func @ext(f64) -> f64"


def test_a_failing_pass_leaves_the_module_whole():
    """Every op is checked before any function is removed: a second run
    refuses the first llvm function with a body, and the declaration its
    code calls is still there for the diagnostic's verification."""
    module = parse_module(DECLARED, "declared.mlir")
    ConvertStdToLLVMPass().apply(make_context(), module)
    with pytest.raises(PassFailedException, match=r"^'llvm.func' at declared.mlir:2:1 cannot be compiled to native"):
        ConvertStdToLLVMPass().apply(make_context(), module)
    module.verify()
    assert [str(op) for op in module.ops][0] == "llvm.func @ext(f64) -> f64"


# ---------------------------------------------------------------------------
# Location aliases and the data layout
# ---------------------------------------------------------------------------

DEBUG_INFO = """#loc1 = loc("source.mlir":1:1)
module {
  func.func @f(%x: i64) -> i64 {
    %c = arith.constant 1 : i64 loc(#loc3)
    %y = arith.addi %x, %c : i64 loc(#loc4)
    return %y : i64 loc(#loc2)
  } loc(#loc1)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("source.mlir":9:5)
#loc3 = loc("source.mlir":7:10)
#loc4 = loc(callsite(#loc3 at #loc2))
"""


def test_location_aliases_defined_after_use():
    module = parse_module(DEBUG_INFO, "debug.mlir")
    ops = {op.name: op for op in module.walk()}
    returned = ops["func.return"].location
    assert isinstance(returned, FileLineColLoc)
    assert (returned.filename.data, returned.line.data, returned.column.data) == ("source.mlir", 9, 5)
    assert "callsite" in str(ops["arith.addi"].location)
    assert compile_std(DEBUG_INFO).address("_mlir_ciface_f")


def test_an_undefined_location_alias_is_a_parse_error_where_it_is_used():
    """#loc4 uses the missing #loc2, so it stays undefined too: the first
    use of either is reported, at its line in the file."""
    text = DEBUG_INFO.replace('#loc2 = loc("source.mlir":9:5)\n', "")
    with pytest.raises(ParseError, match="undefined symbol alias '#loc4'") as error:
        parse_module(text, "debug.mlir")
    assert str(error.value).startswith("debug.mlir:5:")


def test_emitted_llvm_ir_has_the_hosts_data_layout_and_triple(served):
    examples = Path(__file__).parent.parent / "examples"
    result = served("rev-translate", str(examples / "multiplier.mlir"), "--emit=llvm")
    assert result.returncode == 0, result.stderr
    layout = [line for line in result.stdout.splitlines() if line.startswith("target datalayout")]
    triple = [line for line in result.stdout.splitlines() if line.startswith("target triple")]
    assert layout and layout[0] != 'target datalayout = ""'
    assert triple and triple[0] != 'target triple = ""'


def test_a_failed_assertion_is_a_located_error_not_a_trap():
    """Std code compiled by revmlir gets an error slot: its ``cf.assert``
    becomes a check that leaves the run with the assertion's message (a
    trap would end the Python process)."""
    module = parse_module(
        "func.func @g(%x: f64) -> f64 {\n  %zero = arith.constant 0.0 : f64\n"
        "  %positive = arith.cmpf ogt, %x, %zero : f64\n"
        '  cf.assert %positive, "x must be positive {0}"\n  func.return %x : f64\n}\n',
        "assert.mlir",
    )
    native = NativeModule.compile(module)
    (g,) = [op for op in native.module.ops if isinstance(op, func.FuncOp)]
    caller = native.std_caller(g)
    assert caller([2.0]) == (2.0,)
    with pytest.raises(ExecutionError) as error:
        caller([-2.0])
    assert str(error.value) == "assert.mlir:4:3: 'cf.assert' in @g: x must be positive {0}"


def test_a_compare_and_swap_in_std_code_runs_natively():
    """``llvm.cmpxchg`` in a ``func.func`` is LLVM's instruction on the host
    as on the GPU (xDSL's backend has none): a slot holding ``init`` is
    swapped to ``new`` only where it held ``cmp``; the results are the old
    value, whether it swapped and the slot's value after."""
    module = parse_module(
        "func.func @swap(%init: i64, %cmp: i64, %new: i64) -> (i64, i64, i64) {\n"
        "  %one = arith.constant 1 : i64\n  %p = llvm.alloca %one x i64 : (i64) -> !llvm.ptr\n"
        "  llvm.store %init, %p : i64, !llvm.ptr\n"
        "  %r = llvm.cmpxchg %p, %cmp, %new acq_rel monotonic : !llvm.ptr, i64\n"
        "  %old = llvm.extractvalue %r[0] : !llvm.struct<(i64, i1)>\n"
        "  %won = llvm.extractvalue %r[1] : !llvm.struct<(i64, i1)>\n"
        "  %w = arith.extui %won : i1 to i64\n  %v = llvm.load %p : !llvm.ptr -> i64\n"
        "  func.return %old, %w, %v : i64, i64, i64\n}\n"
    )
    native = NativeModule.compile(module)
    assert " = cmpxchg " in native.llvm_ir and "revmlir.cmpxchg" not in native.llvm_ir
    (swap,) = [op for op in native.module.ops if isinstance(op, func.FuncOp)]
    caller = native.std_caller(swap)
    assert caller([3, 3, 4]) == (3, 1, 4)
    assert caller([5, 3, 9]) == (5, 0, 5)
    assert caller([-(2**63), -(2**63), 2**63 - 1]) == (-(2**63), 1, 2**63 - 1)


def test_atomic_loads_and_stores_in_std_code_run_natively_as_atomics():
    """An atomic ``llvm.load`` and ``llvm.store`` are LLVM's atomic
    instructions in native code (xDSL's backend wrote them plain), and run."""
    module = parse_module(
        "func.func @exchange(%x: f64, %n: i64) -> (f64, i64) {\n"
        "  %one = arith.constant 1 : i64\n  %p = llvm.alloca %one x f64 : (i64) -> !llvm.ptr\n"
        "  %q = llvm.alloca %one x i64 : (i64) -> !llvm.ptr\n"
        '  "llvm.store"(%x, %p) <{ordering = 5 : i64}> : (f64, !llvm.ptr) -> ()\n'
        '  "llvm.store"(%n, %q) <{ordering = 7 : i64, alignment = 8 : i64}> : (i64, !llvm.ptr) -> ()\n'
        "  %v = llvm.load %p atomic acquire : !llvm.ptr -> f64\n"
        "  %m = llvm.load %q atomic seq_cst : !llvm.ptr -> i64\n"
        "  func.return %v, %m : f64, i64\n}\n"
    )
    native = NativeModule.compile(module)
    for access in ("store atomic double", "release, align 8", "seq_cst, align 8", "load atomic double", "acquire"):
        assert access in native.llvm_ir
    (exchange,) = [op for op in native.module.ops if isinstance(op, func.FuncOp)]
    assert native.std_caller(exchange)([2.5, -7]) == (2.5, -7)


def test_an_atomic_access_aligned_below_its_size_is_refused_at_the_op():
    """LLVM makes an atomic access aligned below its size a call of
    ``__atomic_load``, which MCJIT bound to address 0: the first call
    crashed the process.  It is refused at the op instead."""
    module = parse_module(
        "func.func @peek(%x: i64) -> i64 {\n"
        "  %one = arith.constant 1 : i64\n  %p = llvm.alloca %one x i64 : (i64) -> !llvm.ptr\n"
        "  llvm.store %x, %p : i64, !llvm.ptr\n"
        "  %v = llvm.load %p atomic acquire {alignment = 4 : i64} : !llvm.ptr -> i64\n"
        "  func.return %v : i64\n}\n",
        "align.mlir",
    )
    with pytest.raises(PassFailedException) as error:
        NativeModule.compile(module, opt_level=0)
    assert str(error.value) == (
        "'llvm.load' at align.mlir:5:3: an atomic load of i64 aligned to 4 byte(s) is not supported: "
        "native code accesses it atomically aligned to at least its size, 8"
    )


@pytest.mark.parametrize(
    ("use", "user"),
    [
        ("  llvm.store %r, %p : !llvm.struct<(i64, i1)>, !llvm.ptr\n", "llvm.store"),
        ("  llvm.call @keep(%r) : (!llvm.struct<(i64, i1)>) -> ()\n", "llvm.call"),
        ("  cf.br ^next(%r : !llvm.struct<(i64, i1)>)\n^next(%q: !llvm.struct<(i64, i1)>):\n", "llvm.br"),
    ],
    ids=["store", "call", "branch"],
)
def test_a_compare_and_swap_read_other_than_by_extractvalue_is_refused_at_the_op(use: str, user: str):
    """Only ``llvm.extractvalue`` reads a ``llvm.cmpxchg`` in LLVM IR (the
    instruction replaces a call there, and llvmlite keeps a store's, a
    call's or a branch's operands where it would not be renewed): another
    use is a located error, not LLVM's "use of undefined value"."""
    module = parse_module(
        "llvm.func @keep(!llvm.struct<(i64, i1)>)\n"
        "func.func @swap(%p: !llvm.ptr, %cmp: i64, %new: i64) {\n"
        "  %r = llvm.cmpxchg %p, %cmp, %new acq_rel monotonic : !llvm.ptr, i64\n"
        f"{use}  func.return\n}}\n",
        "uses.mlir",
    )
    with pytest.raises(PassFailedException) as error:
        lower_to_llvm_ir(module)
    assert str(error.value) == (
        f"'llvm.cmpxchg' at uses.mlir:3:3: its result is used by '{user}' at uses.mlir:4:3; "
        "native code reads a compare-and-swap only with 'llvm.extractvalue'"
    )


def test_a_dimension_past_the_rank_is_a_located_error_on_both_engines():
    """A fuzz finding: ``memref.dim`` at a constant past the rank was an
    internal TypeError in the lowering."""
    text = (
        "rev.func @f(%y: index, %x: memref<?xf64>) {\n  %c64 = arith.constant 64 : index\n"
        "  %n = memref.dim %x, %c64 : memref<?xf64>\n  %y1 = rev.add %y, %n : index\n"
        "  rev.return %y1 : index\n}\n"
    )
    with pytest.raises(PassFailedException, match=r"'memref.dim' at dim.mlir:3:3: dimension 64 is out of range"):
        NativeModule.compile(parse_module(text, "dim.mlir"))
    with pytest.raises(ExecutionError, match=r"^dim.mlir:3:3: 'memref.dim' in @f: dimension 64 is out of range"):
        RevInterpreter(parse_module(text, "dim.mlir")).call("f", 0, np.zeros(2))


def test_a_std_function_with_its_own_results_compiles_with_checks():
    """A fuzz finding: a std function whose results are not its scalar
    arguments (here several, of other types) has no revmlir entry point to
    guard, and compiling it raised a KeyError."""
    path = Path(__file__).parent / "filecheck" / "lowering" / "upstream_ops.mlir"
    ir = lower_to_llvm_ir(parse_module(path.read_text(), str(path))).llvm_ir
    assert "_mlir_ciface_ops" in ir and '@"ops_ciface"' not in ir


def test_a_cast_that_fixes_a_run_time_extent_is_refused_natively():
    """Index checks read the cast's static extent: a 2-element array cast
    to ``memref<4xf64>`` read past its end, where native code had no
    translation of the cast before (and so refused it)."""
    module = parse_module(
        "func.func @f(%a: memref<?xf64>) -> f64 {\n  %c3 = arith.constant 3 : index\n"
        '  %s = "memref.cast"(%a) : (memref<?xf64>) -> memref<4xf64>\n'
        "  %v = memref.load %s[%c3] : memref<4xf64>\n  func.return %v : f64\n}\n",
        "cast.mlir",
    )
    with pytest.raises(Exception, match=r"^'memref.cast' at cast.mlir:3:3: a cast that fixes a run-time extent"):
        NativeModule.compile(module)
