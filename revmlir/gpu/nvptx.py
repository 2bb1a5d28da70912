"""LLVM IR for NVPTX from a ``gpu.module`` after ``convert-gpu-to-nvvm``.

The bodies are translated by ``convert-std-to-llvm``'s rules, as host code
is, with the device's own for the ops that differ (the ``nvvm`` ops,
atomic additions as PTX ``red``/``atom``, aggregated over the warp), and
without what only a host has: no C entry points, no setjmp guard
(``revmlir.report`` reports and exits the thread instead,
``revmlir.gpu.to_nvvm``).

NVPTX selects no transcendental math: LLVM's ``exp``/``log``/``sin``/
``cos``/``pow``/``powi`` intrinsics would abort the process in instruction
selection, and libm's functions are unresolved for ptxas.  Both become calls
of libdevice's ``__nv_*`` functions (linked in by ``revmlir.gpu.program``).
Every call and intrinsic the device code is left with is checked against
what NVPTX and the device runtime provide, so that nothing reaches LLVM that
would abort there: the rest is a located error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from llvmlite import ir
from xdsl.dialects import complex as complexd
from xdsl.dialects import func, gpu, llvm, memref
from xdsl.dialects.builtin import (
    ComplexType,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnrealizedConversionCastOp,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from revmlir import fast_ops
from revmlir.collector import take_apart
from revmlir.dialects import nvvm
from revmlir.dialects.upstream_forms import KINDS, AtomicRMWOp
from revmlir.errors import describe_op
from revmlir.gpu.local_memory import check_local_memory
from revmlir.gpu.outline import entry_name
from revmlir.gpu.toolkit import libdevice_names
from revmlir.ir_utils import RuleTable, nested_ops
from revmlir.lowering.llvm_code import LLVMCode
from revmlir.lowering.llvm_ir import llvm_ir
from revmlir.lowering.llvm_text import llvm_text
from revmlir.lowering.printing import PRINT
from revmlir.lowering.std_to_llvm import (
    PTR,
    FunctionTranslation,
    ModuleTranslation,
    Rule,
    _element_address,
    llvm_type,
    translate_module,
)
from revmlir.lowering.unwinding_asm import may_unwind
from revmlir.naming import identifier, source_name
from revmlir.runtime_checks import REPORT

TRIPLE = "nvptx64-nvidia-cuda"
KERNEL_CONVENTION = "ptx_kernel"

LIBDEVICE_PREFIX = "__nv_"
"""libdevice names each of its functions ``__nv_<name>``."""
LIBDEVICE_INTRINSICS = ("exp", "exp2", "log", "log2", "log10", "sin", "cos", "pow")
"""LLVM math intrinsics NVPTX cannot select, which libdevice has as
``__nv_<name>`` (f64) and ``__nv_<name>f`` (f32)."""
LIBDEVICE_LIBM = frozenset(
    {
        "tan",
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
        "atan2",
        "hypot",
        "fmod",
    }
)
"""The libm functions native code calls (``convert-std-to-llvm``)."""
SELECTABLE_INTRINSICS = frozenset(
    {
        "sqrt",
        "fabs",
        "floor",
        "ceil",
        "trunc",
        "round",
        "roundeven",
        "copysign",
        "fma",
        "minnum",
        "maxnum",
        "minimum",
        "maximum",
        "minimumnum",
        "maximumnum",
        "fptosi.sat",
        "fptoui.sat",
        "ctpop",
        "trap",
        "smax",
        "smin",
        "umax",
        "umin",
        "abs",
        "memmove",
    }
)
"""LLVM intrinsics NVPTX selects (``llvm.<name>.<types>``); ``memmove``
(a stack's elements copied, ``revmlir.gpu.stacks``) it expands into a loop."""
NVVM_INTRINSICS = frozenset({*(op.INTRINSIC for op in nvvm.SPECIAL_REGISTERS.values()), nvvm.Barrier0Op.INTRINSIC})
"""The NVVM intrinsics device code calls: the ``nvvm`` ops', which every
GPU has.  Another, written as an ``llvm`` op, may need a newer GPU than
the target (``llvm.nvvm.redux.sync.add`` before sm_80), which LLVM would
abort the process selecting."""


BINARY_MATH = frozenset({"pow", "powi", "atan2", "hypot", "fmod"})
"""The math functions of two operands (the others take one)."""


def _math_callee(callee: str) -> bool:
    """Whether ``callee`` names a math function libdevice has, in some type."""
    if callee.startswith("llvm."):
        name = callee.split(".")[1]
        return name in LIBDEVICE_INTRINSICS or name == "powi"
    return callee in LIBDEVICE_LIBM or (callee.endswith("f") and callee[:-1] in LIBDEVICE_LIBM)


def libdevice_name(callee: str, operands: Sequence[Attribute], result: Attribute | None) -> str | None:
    """The libdevice function for a call of a math intrinsic or libm
    function with these types, if any.  libdevice's take and return f64
    (``__nv_exp``) or f32 (``__nv_expf``), and ``powi``'s exponent is an
    i32: a call of other types (``llvm.exp.i64``, ``hypot`` declared on
    f32) has none, where linking it to one would call it with the wrong
    types."""
    if not _math_callee(callee):
        return None
    if callee.startswith("llvm."):
        name = callee.split(".")[1]
        floats = operands[:1] if name == "powi" else operands
        if name == "powi" and list(operands[1:]) != [i32]:
            return None
        expected = result if isinstance(result, Float32Type | Float64Type) else None
    else:
        single = callee.endswith("f") and callee[:-1] in LIBDEVICE_LIBM
        name, floats = callee.removesuffix("f") if single else callee, operands
        expected = Float32Type() if single else Float64Type()
    arity = 2 if name in BINARY_MATH else 1
    if expected is None or result != expected or len(operands) != arity or any(t != expected for t in floats):
        return None
    return f"{LIBDEVICE_PREFIX}{name}{'f' if isinstance(expected, Float32Type) else ''}"


def _selectable(intrinsic: str) -> bool:
    if intrinsic in NVVM_INTRINSICS:
        return True
    name = intrinsic.removeprefix("llvm.")
    return any(name == base or name.startswith(base + ".") for base in SELECTABLE_INTRINSICS)


# ---------------------------------------------------------------------------
# Device rules
# ---------------------------------------------------------------------------

device_rules: RuleTable[Rule] = RuleTable()


@device_rules(llvm.InlineAsmOp)
def inline_assembly(t: FunctionTranslation, op: Operation) -> None:
    """A source's inline assembly is written for one target, and a module
    compiles for the host and the GPU alike: in GPU code it would reach
    ptxas, whose syntax error names no op (the assembly the device rules
    write themselves is not a source op)."""
    raise PassFailedException(
        f"{describe_op(op)}: GPU code cannot run inline assembly (it is written for one target; "
        "call a module function or an intrinsic instead)"
    )


@device_rules(memref.ExtractAlignedPointerAsIndexOp)
def pointer_as_index(t: FunctionTranslation, op: Operation) -> None:
    """The data pointer's address: a kernel keeps the shared error slot's
    and its context's in a thread's own slot (``revmlir.gpu.outline``).
    Only kernels use it, and an address is no value two engines agree on,
    so native code's table does not have it."""
    pointer = t.extract(t.get(op.operands[0]), 0, PTR, op)
    t.set(op.results[0], t.value(llvm.PtrToIntOp(pointer, i64), op))


@device_rules(UnrealizedConversionCastOp)
def array_at_address(t: FunctionTranslation, op: Operation) -> None:
    """An array the arena holds (``revmlir.gpu.arena``): its descriptor,
    built in the llvm dialect, is the array, as native code represents
    arrays."""
    if len(op.operands) != 1 or len(op.results) != 1 or llvm_type(op.results[0].type) != op.operands[0].type:
        raise PassFailedException(f"{describe_op(op)}: only an array's descriptor converts to the array")
    t.set(op.results[0], t.get(op.operands[0]))


@device_rules(*nvvm.SPECIAL_REGISTERS.values(), nvvm.Barrier0Op)
def _intrinsic(t: FunctionTranslation, op: Operation) -> None:
    name = op.INTRINSIC
    if op.results:
        t.set(op.results[0], t.intrinsic(name, [], op.results[0].type, op))
    else:
        t.emit(llvm.CallIntrinsicOp(name, [], []), op)


@device_rules(nvvm.ExitOp)
def _ptx(t: FunctionTranslation, op: Operation) -> None:
    """PTX's ``exit``, which may unwind to LLVM: the thread leaves for a
    host that reads the arrays, and LLVM must keep every store before it
    (``revmlir.lowering.unwinding_asm``)."""
    t.emit(may_unwind(llvm.InlineAsmOp(op.PTX, "", [], [], has_side_effects=True)), op)


def _ptx_atomic(kind: str, type: Attribute) -> tuple[str, str, int] | None:
    """The PTX type, inline-assembly register constraint and bits of an
    atomic addition of ``type``, if PTX has one."""
    if kind == "addf" and isinstance(type, Float64Type | Float32Type):
        return ("f64", "d", 64) if isinstance(type, Float64Type) else ("f32", "f", 32)
    if kind == "addi" and isinstance(type, IntegerType) and type.width.data in (32, 64):
        return ("u64", "l", 64) if type.width.data == 64 else ("u32", "r", 32)
    return None


WARP_LANES = 32
FULL_WARP = "0xffffffff"


def _shuffled(mode: str, lane: int, value: str, into: str, bits: int, guard: str) -> list[str]:
    """PTX that sets ``into`` to ``value`` of another lane of the warp
    (``shfl.sync`` moves 32 bits: a 64-bit value moves in two halves)."""
    if bits == 32:
        return [f"@{guard} shfl.sync.{mode}.b32 {into}, {value}, {lane}, 31, {FULL_WARP};"]
    return [
        f"mov.b64 {{lo, hi}}, {value};",
        f"@{guard} shfl.sync.{mode}.b32 lo, lo, {lane}, 31, {FULL_WARP};",
        f"@{guard} shfl.sync.{mode}.b32 hi, hi, {lane}, 31, {FULL_WARP};",
        f"mov.b64 {into}, {{lo, hi}};",
    ]


def warp_aggregated_red(ptx_type: str, bits: int) -> str:
    """PTX for ``[$0] += $1`` (address, value) from every thread: where
    the whole warp runs it (``activemask`` full) and every lane adds to
    the same address (lane 0's, shuffled to all, equal in all: a
    ``vote``), the 32 values are summed in a butterfly of shuffles and
    lane 0 alone adds the sum (one ``red`` instead of 32 queued on one
    address); otherwise each lane adds its own value, as ``red`` alone
    does.  Predicates, not branches (an inline-assembly block's labels
    would repeat where LLVM inlines or duplicates it): a predicated-off
    ``shfl.sync`` is no deadlock, since the predicate is the same in every
    lane of the warp.  Nothing relies on LLVM keeping the block where the
    warp is converged (inline assembly is not ``convergent`` to it): a copy
    that runs in part of a warp finds ``activemask`` not full."""
    lines = [
        "{",
        ".reg .pred full, same, equal, lead;",
        ".reg .b32 mask, lane, lo, hi;",
        ".reg .b64 first;",
        f".reg .{ptx_type} sum, other;",
        "activemask.b32 mask;",
        f"setp.eq.b32 full, mask, {FULL_WARP};",
        *_shuffled("idx", 0, "$0", "first", 64, "full"),
        "setp.eq.and.b64 equal, first, $0, full;",
        "mov.pred same, 0;",
        f"@full vote.sync.all.pred same, equal, {FULL_WARP};",
        f"mov.{ptx_type} sum, $1;",
    ]
    offset = WARP_LANES // 2
    while offset:
        lines += [*_shuffled("bfly", offset, "sum", "other", bits, "same"), f"@same add.{ptx_type} sum, sum, other;"]
        offset //= 2
    lines += [
        "mov.u32 lane, %laneid;",
        "setp.eq.and.u32 lead, lane, 0, same;",
        f"@lead red.add.{ptx_type} [$0], sum;",
        f"@!same red.add.{ptx_type} [$0], $1;",
        "}",
    ]
    return "\n".join(lines)


@device_rules(memref.AtomicRMWOp, AtomicRMWOp)
def _atomic_add(t: FunctionTranslation, op: Operation) -> None:
    """A shared accumulation ``m[j] += d``: PTX's ``red.add``, aggregated
    over the warp where every lane adds to one address
    (``warp_aggregated_red``, docs/gpu.md "Shared accumulations");
    ``atom.add`` of each lane where the old value is used; f64 on sm_60
    and later."""
    assert isinstance(op, memref.AtomicRMWOp)
    kind = op.kind.value.data
    found = _ptx_atomic(KINDS[kind] if 0 <= kind < len(KINDS) else "", op.value.type)
    if found is None:
        raise PassFailedException(
            f"{describe_op(op)}: only atomic additions of f64, f32, i64 and i32 (addf, addi) are supported in GPU code"
        )
    ptx_type, register, bits = found
    element = _element_address(t, op, t.get(op.memref), [t.get(i) for i in op.indices], op.value.type)
    address = t.value(llvm.PtrToIntOp(element), op)
    value = t.get(op.value)
    if op.result.uses:
        asm = llvm.InlineAsmOp(
            f"atom.add.{ptx_type} $0, [$1], $2;",
            f"={register},l,{register}",
            [address, value],
            [op.value.type],
            has_side_effects=True,
        )
        t.set(op.result, t.value(asm, op))
    else:
        asm = llvm.InlineAsmOp(
            warp_aggregated_red(ptx_type, bits), f"l,{register}", [address, value], [], has_side_effects=True
        )
        t.emit(asm, op)


# ---------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------


def device_module(module: ModuleOp) -> tuple[ModuleOp, dict[str, str]]:
    """The functions of ``module``'s ``gpu.module``, moved out of it, as a
    module of ``func.func``s, and its kernels (function name → entry
    name)."""
    # one walk finds the gpu.module and its arrays (a kernel's module is
    # nearly all its gpu.module); it tests the exact class of every op:
    # isinstance on xDSL's ops goes through ABCMeta
    found: list[gpu.ModuleOp] = []
    arrays: list[memref.AllocOp] = []
    for op in nested_ops(module):
        if op.__class__ is gpu.ModuleOp:
            found.append(op)
        elif op.__class__ is memref.AllocOp:
            arrays.append(op)
    if len(found) != 1:
        raise PassFailedException(f"expected one gpu.module to compile for the GPU, found {len(found)}")
    _device_memory([array for array in arrays if found[0].is_ancestor(array)])
    check_local_memory(found[0])
    kernels: dict[str, str] = {}
    functions: list[Operation] = []
    names = _ptx_names(found[0])
    for op in list(found[0].body.ops):
        if isinstance(op, gpu.FuncOp):
            name = op.sym_name.data
            kernels[name] = names[name]
            body = op.detach_region(op.body)
            returned = body.block.last_op
            assert isinstance(returned, gpu.ReturnOp)
            Rewriter.replace_op(returned, func.ReturnOp())
            _split_complex_parameters(body.block)
            function = func.FuncOp(kernels[name], (body.block.arg_types, ()), body)
            function.location = op.location
            functions.append(function)
        elif isinstance(op, func.FuncOp):
            op.detach()
            op.sym_name = StringAttr(names[op.sym_name.data])
            functions.append(op)
        else:
            raise PassFailedException(f"{describe_op(op)} cannot be compiled for the GPU")
    device = ModuleOp(functions)
    for call in nested_ops(device):
        if call.__class__ is func.CallOp and (renamed := names.get(call.callee.string_value())) is not None:
            call.callee = SymbolRefAttr(renamed)
    return device, kernels


def _ptx_names(module: gpu.ModuleOp) -> dict[str, str]:
    """The PTX name of each function of ``module`` (a kernel's ``.entry``,
    a device function's ``.func``), refusing two functions that would have
    the same one (a kernel's dots are ``_``, the ABI's ``k_adj``, so
    kernel ``@k.adj`` meets ``@k_adj``, which LLVM would make a duplicate
    symbol), one whose PTX name is that of another's parameter
    (``_PARAMETER_NAME``), and one named in libdevice's namespace, whose
    function of that name ``map_to_libdevice`` declares beside it: the
    GPU's counterpart of the C library names native code refuses
    (``revmlir.lowering.std_to_llvm.check_symbol_names``).  The namespace
    is the user's name's (``source_name``: ``@__nv_exp`` and its
    ``.inv``, not ``@__nv``'s ``.inv``, whose PTX name ``__nv_inv`` no
    library function has), and a PTX name that is one of libdevice's
    functions (kernel ``@__nv.exp`` is ``__nv_exp``)."""
    names: dict[str, str] = {}
    owners: dict[str, gpu.FuncOp | func.FuncOp] = {}
    for op in module.body.ops:
        if isinstance(op, gpu.FuncOp | func.FuncOp):
            name = op.sym_name.data
            names[name] = entry_name(name) if isinstance(op, gpu.FuncOp) else ptx_name(name)
            spelled = names[name]
            # libdevice's names are read (its bitcode parsed) only for a PTX name in its namespace
            if source_name(name).startswith(LIBDEVICE_PREFIX) or (
                spelled.startswith(LIBDEVICE_PREFIX) and spelled in libdevice_names()
            ):
                raise PassFailedException(
                    f"{describe_op(op)}: @{name} is named like a libdevice function (GPU code's math, "
                    f"whose functions are named '{LIBDEVICE_PREFIX}<name>'): rename it"
                )
            if (other := owners.setdefault(names[name], op)) is not op:
                raise PassFailedException(
                    f"{describe_op(op)}: @{name} and @{other.sym_name.data} both have the PTX name "
                    f"{names[name]}: rename one"
                )
    for spelled, op in owners.items():
        if (local := _PARAMETER_NAME.fullmatch(spelled)) and (other := owners.get(local[1])) is not None:
            raise PassFailedException(
                f"{describe_op(op)}: @{op.sym_name.data} has the PTX name {spelled}, which LLVM gives a "
                f"parameter of @{other.sym_name.data} (PTX name {local[1]}): rename one"
            )
    return names


_PARAMETER_NAME = re.compile(r"(.+)_param_[0-9]+")
"""The PTX names LLVM's NVPTX back end gives the parameters of function
``<group 1>`` in its ``.param`` list: a global symbol of one of them makes
ptxas die of a segmentation fault."""


def _split_complex_parameters(block: Block) -> None:
    """A kernel takes a complex number as its two parts (the ABI of
    docs/gpu.md): PTX has no aggregate scalars, and a launcher packs
    scalars one by one."""
    for arg in [a for a in block.args if isinstance(a.type, ComplexType)]:
        element = arg.type.element_type
        re = block.insert_arg(element, arg.index)
        im = block.insert_arg(element, arg.index)
        create = complexd.CreateOp(re, im, arg.type)
        block.insert_op_before(create, block.first_op)
        arg.replace_all_uses_with(create.results[0])
        block.erase_arg(arg)


def ptx_name(function: str) -> str:
    """A device function's name as PTX allows it (``[A-Za-z0-9_$]``, not
    starting with a digit): dots are ``_$_``, as LLVM's NVPTX back end would
    rename them, and every other character ``$<hex>$``
    (``revmlir.naming.identifier``); LLVM aborts the process on a name
    with any other character instead."""
    return identifier(function, "_$_")


def _device_memory(arrays: Sequence[memref.AllocOp]) -> None:
    """Memory as the GPU has it, for the ``memref.alloc``s of the
    ``gpu.module``: an array of a static size is the thread's local memory
    (an ``alloca``, however large: native code puts arrays past a page on
    the heap, which on a GPU is small and slow); one of a dynamic size
    comes from the thread's arena (``revmlir.gpu.arena``, done by
    ``rev-gpu-outline``), as do the buffers of stacks
    (``revmlir.gpu.stacks``)."""
    for op in arrays:
        assert not op.dynamic_sizes, "rev-gpu-outline carves arrays of a dynamic size from the arena"
        for use in list(op.memref.uses):
            if isinstance(use.operation, memref.DeallocOp):
                use.operation.detach()
                use.operation.erase()
        local = memref.AllocaOp.get(op.memref.type.element_type, shape=op.memref.type.get_shape())
        local.location = op.location
        Rewriter.replace_op(op, local)


def _calls(module: ModuleOp) -> Iterator[llvm.CallOp | llvm.CallIntrinsicOp]:
    for op in nested_ops(module):
        if op.__class__ in _CALL_CLASSES:
            yield op


_CALL_CLASSES = frozenset({llvm.CallOp, llvm.CallIntrinsicOp})


def _unsupported_call(callee: str, op: Operation) -> str:
    """A callee the device lacks, named as the source names it (device
    functions' dots are PTX's ``_$_`` by now), with what the device calls
    instead."""
    name = callee.replace("_$_", ".")
    if _math_callee(callee):
        types = ", ".join(str(a.type) for a in op.operands)
        returned = ", ".join(str(t) for t in op.result_types)
        return f"{name} on ({types}) -> ({returned}): libdevice's math takes and returns f64, or f32"
    if name == PRINT:
        return f"{name}: a print formats its values on the host (print in host code instead)"
    if name.startswith("llvm.nvvm."):
        return f"{name}: of NVVM's intrinsics, device code calls those of the nvvm ops only"
    return f"{name}: device code calls the module's functions and libdevice's math only"


def map_to_libdevice(module: ModuleOp) -> None:
    """Math intrinsics and libm calls become libdevice calls; any other call
    NVPTX or ptxas could not handle is a located error."""
    defined = {f.sym_name.data for f in module.ops if isinstance(f, llvm.FuncOp) and f.body.blocks}
    declared = {f.sym_name.data: f for f in module.ops if isinstance(f, llvm.FuncOp) and not f.body.blocks}
    needed: dict[str, llvm.LLVMFunctionType] = {}
    for op in list(_calls(module)):
        if isinstance(op, llvm.CallIntrinsicOp):
            callee = op.intrin.data
        else:
            assert op.callee is not None
            callee = op.callee.string_value()
            if callee in defined:
                continue
        result = op.results[0].type if op.results else None
        target = libdevice_name(callee, [a.type for a in op.operands], result)
        if target is None:
            if isinstance(op, llvm.CallIntrinsicOp) and _selectable(callee):
                continue
            raise PassFailedException(f"{describe_op(op)}: GPU code cannot call {_unsupported_call(callee, op)}")
        assert result is not None
        needed[target] = llvm.LLVMFunctionType([a.type for a in op.operands], result)
        Rewriter.replace_op(op, fast_ops.llvm_call(target, op.operands, result))
    for function in declared.values():
        function.detach()
        take_apart(function)
    for name, type in sorted(needed.items()):
        module.body.block.insert_op_before(
            llvm.FuncOp(name, type, linkage=llvm.LinkageAttr("external")), module.body.block.first_op
        )


def device_llvm_ir(module: ModuleOp, keep_functions: bool = False) -> tuple[LLVMCode | ir.Module, dict[str, str]]:
    """LLVM IR for the GPU from a module after ``convert-gpu-to-nvvm`` (its
    ``gpu.module`` is emptied, the functions moved out of it taken apart:
    ``module`` is the compile's own), and its kernels (function → entry).  Device
    functions are internal (inlined or dropped) unless ``keep_functions``.
    The IR is printed from the ``llvm`` ops (``revmlir.lowering.llvm_text``),
    or where they hold what the printer has no line for, converted by
    xDSL's backend to an llvmlite module."""
    device, kernels = device_module(module)
    private = {
        f.sym_name.data
        for f in device.ops
        if isinstance(f, func.FuncOp) and f.sym_visibility is not None and f.sym_visibility.data == "private"
    }
    translation = ModuleTranslation(overrides=device_rules, report=ptx_name(REPORT))
    translate_module(device, translation, entry_points=False, owned=True)
    map_to_libdevice(device)
    entries = set(kernels.values())
    internal = frozenset(
        f.sym_name.data
        for f in device.ops
        if isinstance(f, llvm.FuncOp)
        and f.body.blocks
        and f.sym_name.data not in entries
        and (not keep_functions or f.sym_name.data in private)
    )
    report = ptx_name(REPORT)
    printed = llvm_text(device, internal, dict.fromkeys(entries, KERNEL_CONVENTION), {report: REPORT_ATTRIBUTES})
    code = printed if printed is not None else _converted(device, entries, internal, report)
    take_apart(device)  # this function's own, dropped now that LLVM IR is made of it
    return code, kernels


def _converted(device: ModuleOp, entries: set[str], internal: frozenset[str], report: str) -> ir.Module:
    """``device`` converted by xDSL's backend, with what ``llvm_text`` would
    have printed of its functions: the kernels' calling convention, the
    internal linkage, the report's attributes."""
    converted = llvm_ir(device)
    converted.triple = TRIPLE
    for function in converted.functions:
        if function.name in entries:
            function.calling_convention = KERNEL_CONVENTION
        elif function.name in internal:
            function.linkage = "internal"
        if function.name == report and not function.is_declaration:
            for attribute in REPORT_ATTRIBUTES:
                function.attributes.add(attribute)
    return converted


REPORT_ATTRIBUTES = ("noinline", "cold", "noreturn")
"""The device's ``revmlir.report`` is called, not inlined: a kernel has
a check at nearly every array access, and the report inlined at each
made loops over small arrays too large for LLVM to unroll, so their
arrays stayed in local memory instead of registers (BA's Jacobian
blocks).  It never returns (the thread exits) and is cold, so LLVM lays
out the checks as the unlikely branches they are.  Not ``nounwind``, nor
inferred so: its ``exit`` may unwind (``_ptx``), as the CPU's report may
(``revmlir.runtime.guard.FAIL_ATTRIBUTES``)."""
