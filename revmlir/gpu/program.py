"""``compile_kernels``: rev functions to PTX kernels, the whole pipeline.

    rev ──rev-invert──► rev-lower-to-std ──rev-gpu-local-arrays──►
        ──rev-gpu-outline──► gpu.module
        ──convert-gpu-to-nvvm──► nvvm ──(convert-std-to-llvm rules)──► LLVM
        ──libdevice linked, -O3 for nvptx64-nvidia-cuda──► PTX

What a launcher needs comes with the PTX: each kernel's ``.entry`` and its
rev function's argument types (the ABI of docs/gpu.md), and the module's
run-time checks, to raise the CPU's error for a check id a launch reports.

Both entry points (``compile_kernels``, ``module_ptx``) keep what they
compile in the disk cache (``revmlir.gpu.cache``): a process that compiles
what an earlier one did loads its program instead of lowering anything.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir
from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.ir import Attribute, TypeAttribute

from revmlir.collector import pausing, take_apart, take_apart_llvm_ir
from revmlir.dialects.rev import FuncOp
from revmlir.gpu import cache
from revmlir.gpu.local_arrays import RevGpuLocalArraysPass
from revmlir.gpu.nvptx import LIBDEVICE_PREFIX, TRIPLE, device_llvm_ir
from revmlir.gpu.orderings import check_orderings
from revmlir.gpu.outline import CONTAINER, check_distinct_kernels, check_kernel_names, outline, takes_arena
from revmlir.gpu.parameter_space import check_parameter_space
from revmlir.gpu.to_nvvm import ConvertGpuToNvvmPass
from revmlir.gpu.toolkit import DEFAULT_ARCH, ToolkitError, find_libdevice
from revmlir.gpu.trip_count import LoopBounds
from revmlir.ir_utils import clone
from revmlir.lowering.llvm_code import LLVMCode, global_reference, of_llvmlite
from revmlir.lowering.llvm_parse import parse_llvm, verify_llvm
from revmlir.lowering.native_types import check_native_types
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.parsing import make_context
from revmlir.passes.invert import derive_inverses, invert_reached
from revmlir.reachability import drop_functions_outside
from revmlir.runtime_checks import check_table_errors

ARCHITECTURES = (
    "sm_60",
    "sm_61",
    "sm_62",
    "sm_70",
    "sm_72",
    "sm_75",
    "sm_80",
    "sm_86",
    "sm_87",
    "sm_89",
    "sm_90",
    "sm_90a",
    "sm_100",
    "sm_100a",
    "sm_101",
    "sm_101a",
    "sm_103",
    "sm_103a",
    "sm_110",
    "sm_120",
    "sm_120a",
    "sm_121",
    "sm_121a",
)
"""The GPUs code can be compiled for: LLVM's NVPTX targets from sm_60 on,
the first with f64 atomic addition (shared accumulations use it)."""
_lock = threading.Lock()


@dataclass(frozen=True)
class KernelInfo:
    entry: str
    """The PTX ``.entry`` (the function's name, dots made ``_``)."""
    arguments: tuple[Attribute, ...]
    """The rev function's argument types; the entry's parameters are these
    expanded as native code expands them, then the error slot."""
    arena: bool = False
    """Whether the entry takes a per-thread arena after the error slot (its
    address, then bytes per thread): its device code allocates ancilla
    arrays of a dynamic size (``revmlir.gpu.arena``) or pushes on stacks
    (``revmlir.gpu.stacks``)."""
    bounds: LoopBounds | None = None
    """The kernel loop's bounds as expressions of the arguments, where
    they are such (``revmlir.gpu.trip_count``): a launch computes its trip
    count from them to shape its grid (``revmlir.gpu.launch_shape``)."""


@dataclass(frozen=True)
class GPUProgram:
    ptx: str
    kernels: dict[str, KernelInfo]
    check_table: ModuleOp
    """The module's ``rev.checks``, as ``LLVMModule.check_table``."""
    arch: str

    def encode(self) -> bytes:
        """The program as a cache entry holds it: JSON, with its IR
        attributes (the kernels' argument types, the check table's
        attributes) printed."""
        kernels = {
            name: {
                "entry": k.entry,
                "arguments": cache.print_ir(ArrayAttr(k.arguments)),
                "arena": k.arena,
                "bounds": None if k.bounds is None else k.bounds.encode(),
            }
            for name, k in self.kernels.items()
        }
        table = cache.print_ir(DictionaryAttr(dict(self.check_table.attributes)))
        return json.dumps({"ptx": self.ptx, "kernels": kernels, "check_table": table, "arch": self.arch}).encode()

    @staticmethod
    def decode(data: bytes, arch: str, names: Sequence[str]) -> GPUProgram:
        """The program ``encode`` gave ``data`` for, if it is one of the
        kernels ``names`` for ``arch``: what was asked, since a sealed
        entry proves who wrote it, not that it answers this compile.  Bytes
        that are not such a program raise what
        ``revmlir.gpu.cache.UNREADABLE`` lists: a field missing, one more or
        one of another kind, another architecture or other kernels, an
        argument that is not a type, an entry the PTX does not define, loop
        bounds that read what the kernel does not have
        (``LoopBounds.decode``), a check table ``check_table_errors``
        refuses; each a miss here, not a
        program that fails when it is launched (or runs on another GPU's
        code)."""
        fields = cache.record(json.loads(data), ("ptx", "kernels", "check_table", "arch"))
        if (held := cache.expect(fields["arch"], str)) != arch:
            raise ValueError(f"an entry holds a program for {held}, not {arch}")
        ptx = ptx_for(cache.expect(fields["ptx"], str), arch)
        if (kernels_held := cache.expect(fields["kernels"], dict)).keys() != set(names):
            raise ValueError(f"an entry holds the kernels {sorted(kernels_held)}, not {sorted(set(names))}")
        kernels = {}
        for name, k in kernels_held.items():
            k = cache.record(k, ("entry", "arguments", "arena", "bounds"))
            entry = cache.expect(k["entry"], str)
            if f".entry {entry}(" not in ptx:
                raise ValueError(f"the PTX defines no .entry {entry}")
            arguments = cache.expect(cache.parse_attribute(cache.expect(k["arguments"], str)), ArrayAttr)
            types = tuple(cache.expect(a, TypeAttribute) for a in arguments.data)
            bounds = None if k["bounds"] is None else LoopBounds.decode(k["bounds"], types)
            kernels[name] = KernelInfo(entry, types, cache.expect(k["arena"], bool), bounds)
        table = cache.expect(cache.parse_attribute(cache.expect(fields["check_table"], str)), DictionaryAttr)
        checks = ModuleOp([])
        checks.attributes.update(table.data)
        check_table_errors(checks)
        return GPUProgram(ptx, kernels, checks, arch)


@functools.cache
def _initialize() -> None:
    with _lock:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()


OLD_PTX_ARCHITECTURES = frozenset({"sm_60", "sm_61", "sm_62", "sm_70", "sm_72"})
"""GPUs whose default PTX version in LLVM (5.0 to 6.1) predates
``activemask`` (PTX 6.2), which shared accumulations use
(``revmlir.gpu.nvptx.warp_aggregated_red``): their PTX says 6.3 (CUDA
10.0's).  Asking for it on a newer GPU would make LLVM abort."""
MINIMUM_PTX = "+ptx63"


def check_architecture(arch: str) -> None:
    if arch not in ARCHITECTURES:
        raise ValueError(f"unknown GPU architecture '{arch}' (known: {', '.join(ARCHITECTURES)})")


def ptx_for(text: str, arch: str) -> str:
    """``text``, read from a cache entry, if it is PTX for ``arch`` (a known
    GPU, named by its ``.target``); else the ``ValueError`` of an entry that
    is not (``revmlir.gpu.cache.UNREADABLE``)."""
    check_architecture(arch)
    if not re.search(rf"^\.target {arch}\b", text, re.MULTILINE):
        raise ValueError(f"an entry holds no PTX for {arch}")
    return text


CODE_GENERATOR_LEVEL = 2
"""The highest optimisation level the NVPTX code generator is asked for
(LLVM's ``CodeGenOptLevel::Default``), whatever the pipeline's: at 3
(``Aggressive``) the emission of BA's kernel took a quarter longer (0.117
against 0.090 s of CPU) for PTX no better: on every example kernel as many
or fewer registers and instructions (``gmm_points``' adjoint 241 registers
instead of 243, ``batch_distances`` 535 instructions instead of 543), the
same frames and instructions per element (``benchmarks/ptx_path.py``).
The pipeline does not read it (its level is the pass builder's)."""


def target_machine(arch: str, opt_level: int) -> llvm.TargetMachine:
    """NVPTX's target machine for ``arch``, its code generator at
    ``opt_level`` or ``CODE_GENERATOR_LEVEL``, the lower."""
    check_architecture(arch)
    _initialize()
    features = MINIMUM_PTX if arch in OLD_PTX_ARCHITECTURES else ""
    level = min(opt_level, CODE_GENERATOR_LEVEL)
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, features=features, opt=level)


@functools.cache
def ptx_version(arch: str) -> tuple[int, int]:
    """The PTX ISA version the PTX for ``arch`` declares (``.version``):
    LLVM's for the GPU (the first that has it: 7.8 for sm_90, 8.6 for
    sm_100), or ``MINIMUM_PTX``'s, read off an empty kernel once per GPU."""
    machine = target_machine(arch, 0)
    module = llvm.parse_assembly(f'target triple = "{TRIPLE}"\ndefine ptx_kernel void @k() {{ ret void }}')
    with _lock:  # not within another emission's options (``_emit_without_machine_sinking``)
        text = machine.emit_assembly(module)
    found = re.search(r"^\.version (\d+)\.(\d+)", text, re.MULTILINE)
    assert found is not None, "NVPTX writes a .version"
    return int(found[1]), int(found[2])


@functools.cache
def _libdevice_bitcode() -> bytes:
    path = find_libdevice()
    if path is None:
        raise ToolkitError(
            "libdevice.10.bc was not found (GPU math needs it): install a CUDA toolkit or the nvidia-nvvm wheel"
        )
    return path.read_bytes()


LIBDEVICE_PARTS = 8
"""How many parts of libdevice ``_libdevice_part`` keeps, one per set of
functions called and of those made pure (least recently used go first).
A part of a few functions takes about 0.15 MiB, one reaching nearly the whole library 7.4 MiB: 60 MiB at worst, where 64
parts could hold 470 MiB; a process compiles kernels of a few sets."""

_libdevice_lock = threading.Lock()
"""Held while a kept part of libdevice is looked up (parsed, on a miss) and
copied into a compile's module, so that two compiles never copy one part
at once, nor one copy a part while another builds it.  That is all it guards: llvmlite keeps every module
in LLVM's one global context, which is not thread-safe, and parsing, the
pipeline and the emission of compiles in other threads (native ones too)
run without a lock, as they did before parts were kept; compiling in
several threads at once is not made safe here."""


@functools.lru_cache(maxsize=LIBDEVICE_PARTS)
def _libdevice_part(called: frozenset[str], pure: frozenset[str]) -> llvm.ModuleRef:
    """libdevice's functions ``called`` and what they use, those of
    ``pure`` (the ones the code calls repeatedly) made pure (``_pure``);
    a compile links in a copy.  The part of no pure function is parsed
    from the bitcode once per set; one with pure functions is made from
    it (its text edited and parsed) once per pair of sets, and kept as
    another part.  Parsing the whole bitcode cost every compile
    0.035-0.06 s of CPU and copying it as much (BA's kernel calls 2 of its
    349 functions); the copy of a part takes under a millisecond, making
    BA's pure 3 ms, each compile before it was kept.  The functions not
    called become internal for the dead code elimination to drop, as
    those linked in do after the link: what is linked is what the whole
    library left after the same elimination.  One part serves every GPU:
    it is made before any pass that depends on the architecture, and
    NVPTX64's data layout is the same for all of them."""
    if pure:
        return _pure(_libdevice_part(called, frozenset()), pure)
    machine = target_machine(DEFAULT_ARCH, 3)
    part = llvm.parse_bitcode(_libdevice_bitcode())
    part.triple = TRIPLE
    part.data_layout = str(machine.target_data)
    for function in part.functions:
        if function.name.startswith(LIBDEVICE_PREFIX) and not function.is_declaration and function.name not in called:
            function.linkage = llvm.Linkage.internal
    _drop_unused(part, machine, 3)
    return part


PURE = "nounwind willreturn memory(none)"
"""What libdevice's math functions are: functions of their arguments
alone that return.  Besides their arguments they read only the library's
tables, which nothing writes (``sinf``'s ``@__cudart_i2opi_f`` is a
global, not a constant, but no function stores to it).  LLVM infers as
much of them, but only after they are inlined."""

_DEFINITION = re.compile(r"^(define [^@\n]*@(\S+)\(.*\) )#(\d+)( \{)$", re.MULTILINE)
_ATTRIBUTES = re.compile(r"^attributes #(\d+) = \{ (.*) \}$", re.MULTILINE)
_REPLACED = re.compile(r'("[^"]*")|(?<!\S)(?:alwaysinline|nounwind)(?!\S) ?')
"""A quoted string (kept whole), or a bare ``alwaysinline`` or
``nounwind`` (dropped) of an attribute group's text."""


def _may_be_pure(function: llvm.ValueRef) -> bool:
    """Whether ``PURE`` describes ``function``: libdevice gives all its
    functions the same attributes, whether they write through a pointer
    (``frexp``, ``sincos``) or not, and ``memory(none)`` would let LLVM
    drop such a function's stores.  Those device code calls
    (``libdevice_name``'s) take none; LLVM IR built otherwise may call
    one that does."""
    return not any(a.type.is_pointer for a in function.arguments)


def _pure(part: llvm.ModuleRef, functions: frozenset[str]) -> llvm.ModuleRef:
    """A copy of ``part`` with those of ``functions`` that may be
    (``_may_be_pure``) ``PURE`` instead of ``alwaysinline``.  libdevice
    makes every function ``alwaysinline``, and the always-inliner is the
    pipeline's first pass: BA's kernel calls ``sin`` and ``cos`` of the
    same angles several times in each of its four device functions (the
    rotation, the rotation's inverse and their adjoints), twenty calls in
    all, and all twenty copies (153 instructions each) were inlined before
    any pass could see that they compute the same, so its PTX computed
    them twenty times.  Pure, the calls of one argument within a function
    become one (EarlyCSE, GVN), and LLVM's inliner inlines those left: one
    ``sin`` and one ``cos`` in each of the four, eight in all.  Each of
    BA's four computes its angles itself, so its kernel keeps the eight
    calls even though the four are inlined into it first
    (``_inline_single_calls``).  The attributes are edited in the part's
    text: llvmlite adds function attributes but removes none."""
    marked = frozenset(f.name for f in part.functions if f.name in functions and _may_be_pure(f))
    text = str(part)
    groups = {int(n): body for n, body in _ATTRIBUTES.findall(text)}
    renumbered: dict[int, int] = {}
    rewritten: set[str] = set()
    fresh = max(groups, default=-1) + 1

    def made_pure(definition: re.Match[str]) -> str:
        nonlocal fresh
        name = definition[2].strip('"')
        if name not in marked:
            return definition[0]
        rewritten.add(name)
        group = int(definition[3])
        if group not in renumbered:
            renumbered[group] = fresh
            fresh += 1
        return f"{definition[1]}#{renumbered[group]}{definition[4]}"

    text = _DEFINITION.sub(made_pure, text)
    assert rewritten == marked, f"libdevice's definitions of {sorted(marked - rewritten)} are not as _DEFINITION reads"
    for old, new in renumbered.items():
        kept = _REPLACED.sub(lambda word: word[1] or "", groups[old])
        text += f"\nattributes #{new} = {{ {PURE} {kept} }}\n"
    return parse_llvm(text)


@functools.cache
def data_layout() -> str:
    """NVPTX64's data layout, the same for every GPU.  LLVM gives loads
    and stores without an alignment the ABI alignment of the layout in
    force when it parses them, so the text says it."""
    return str(target_machine(DEFAULT_ARCH, 3).target_data)


def ptx_from_llvm(
    module: ir.Module | LLVMCode,
    arch: str = DEFAULT_ARCH,
    opt_level: int = 3,
    entries: Sequence[str] = (),
    max_registers: int | None = None,
) -> str:
    """PTX for device LLVM IR (an llvmlite module, or text: ``LLVMCode``):
    libdevice linked in where the code calls it (its ``__nvvm_reflect``
    queries fold in the pipeline, flush-to-zero off), the internal
    functions called at one place inlined first (``_inline_single_calls``),
    then optimised and assembled for ``arch``; ``max_registers`` bounds the
    registers of the kernels ``entries`` (``_metadata``), functions the
    module defines."""
    layout = data_layout()
    if isinstance(module, ir.Module):
        module.data_layout = layout  # llvmlite's text says it too
        module = of_llvmlite(module)
    _check_entries(module, entries, max_registers)
    machine = target_machine(arch, opt_level)
    text = f'target datalayout = "{layout}"\n{module.text}{_metadata(module.metadata, entries, max_registers)}'
    parsed = parse_llvm(text)
    _check_symbols(parsed)
    parsed.triple = TRIPLE
    # verified before libdevice is linked in: the verifier then reads the
    # code compiled, not libdevice's few hundred functions as well (BA's
    # kernel: 0.03-0.045 s of CPU instead of 0.005)
    verify_llvm(parsed)
    for name in _inline_single_calls(module):
        parsed.get_function(name).add_function_attribute("alwaysinline")
    called = frozenset(f.name for f in parsed.functions if f.is_declaration and f.name.startswith(LIBDEVICE_PREFIX))
    if called:
        with _libdevice_lock:
            parsed.link_in(_libdevice_part(called, _called_repeatedly(module, called)), preserve=True)
        for function in parsed.functions:
            if function.name.startswith(LIBDEVICE_PREFIX) and not function.is_declaration:
                function.linkage = llvm.Linkage.internal
    # what nothing reaches goes before the pipeline instead of after it:
    # -O3 spent a fifth of its time (BA's kernel: 0.14 of 0.71 s) on the
    # library's functions the code did not call when the whole library
    # was linked in (now it is the part's, and the module's own)
    _drop_unused(parsed, machine, opt_level)
    builder = _pass_builder(machine, opt_level)
    builder.getModulePassManager().run(parsed, builder)
    return _emit_without_machine_sinking(machine, parsed)


def _check_entries(code: LLVMCode, entries: Sequence[str], max_registers: int | None) -> None:
    """A ``ValueError`` for a bound on registers without a kernel to bound,
    or a kernel ``code`` does not define: each would otherwise pass
    silently, or fail as LLVM's parse of the metadata naming it."""
    check_max_registers(max_registers)
    if max_registers is not None and not entries:
        raise ValueError(f"max_registers={max_registers} bounds the kernels named by entries=, and it names none")
    for entry in entries:
        if entry not in code.functions:
            raise ValueError(f"entries= names {entry!r}, which the module does not define")


_PTX_SYMBOL = re.compile(r"[\w$.]*", re.ASCII)
"""The names LLVM's NVPTX back end writes in PTX as they are.  It renames
the other characters of a symbol of ``_RENAMED`` linkage (``_$_``), and
aborts the process on another symbol's (``Symbol name with unsupported
characters``)."""

_RENAMED = frozenset({llvm.Linkage.internal, llvm.Linkage.private})


def _check_symbols(module: llvm.ModuleRef) -> None:
    """A ``ValueError`` for a function or variable of ``module`` whose name
    LLVM would abort on rather than write in PTX."""
    for value in (*module.functions, *module.global_variables):
        if value.linkage not in _RENAMED and not _PTX_SYMBOL.fullmatch(value.name):
            raise ValueError(
                f"PTX cannot name {value.name!r}: a kernel's, an external function's or variable's name "
                "has letters, digits, '_', '$' and '.' only"
            )


def _metadata(first: int, entries: Sequence[str], max_registers: int | None) -> str:
    """The module's metadata, numbered from ``first``: libdevice's
    flush-to-zero off (``nvvm-reflect-ftz``), and with ``max_registers``
    PTX's ``.maxnreg`` on each kernel of ``entries``: ptxas keeps the
    kernel within ``max_registers`` per thread (spilling what does not
    fit), so that more threads fit on a multiprocessor.  A kernel whose
    iterations are latency-bound (BA's blocks: 230 registers, one block of
    256 threads per multiprocessor) may run faster with more of them.
    LLVM adds the operands of each definition of a named node to it, so
    the text's own ``!llvm.module.flags`` stay."""
    lines = [f"!llvm.module.flags = !{{!{first}}}", f'!{first} = !{{i32 4, !"nvvm-reflect-ftz", i32 0}}']
    if max_registers is not None:
        for number, entry in enumerate(entries, first + 1):
            lines += [
                f"!nvvm.annotations = !{{!{number}}}",
                f'!{number} = !{{ptr {global_reference(entry)}, !"maxnreg", i32 {max_registers}}}',
            ]
    return "\n" + "\n".join(lines) + "\n"


def _called_repeatedly(code: LLVMCode, called: frozenset[str]) -> frozenset[str]:
    """Those of ``called`` some function of ``code`` calls at two places
    or more.  Only calls within one function are merged: a function called
    once in each of several keeps ``alwaysinline``, as does one called at
    a single place, since nothing can merge their calls, and the inliner's
    own order laid out ``complex_log``'s adjoint with 72 registers instead
    of 62 when every called function was pure."""
    repeated: set[str] = set()
    for function in code.functions.values():
        repeated.update(name for name, count in function.calls.items() if count > 1 and name in called)
    return frozenset(repeated)


def _inline_single_calls(code: LLVMCode) -> frozenset[str]:
    """The internal functions of ``code`` called at one place, which the
    compile makes ``alwaysinline`` where LLVM's inliner may inline them
    (``FunctionCalls.inlinable``; made ``alwaysinline`` too, GMM's
    ``logsumexp``, an array of ``k`` elements, took its points kernel from
    130 registers to 168).
    The inliner would inline them anyway (the last call of an internal
    function earns a bonus far above any threshold), but it works bottom-up
    and simplifies each function before inlining it: a kernel's device
    functions, nested four deep in BA's, were optimised once alone and
    again in every caller they were inlined into.  The always-inliner, the
    pipeline's first pass, puts them into the kernel before anything is
    optimised, so their code goes through the pipeline once: BA's kernel's
    ``-O3`` took 0.29-0.37 s instead of 0.50-0.61 s (docs/design.md decision
    130, *Measured*), for PTX with the same instructions up to their order
    and register names; GMM's points kernel took 2 registers more.  A
    function called at several places is left to the inliner's costs.  The
    places are counted in the module as translated, after ``rev-gpu-outline``
    versioned its loops: a function called in a versioned loop is called in
    both copies, at two places (GMM's ``main_term`` and its inverse, in
    ``point_logsumexp``'s loop over the components, and their adjoints);
    counted as one, they made GMM's compile slower and its adjoint kernel
    use 2 registers more (decision 138)."""
    calls: Counter[str] = Counter()
    for function in code.functions.values():
        calls.update(function.calls)
    return frozenset(
        name
        for name, function in code.functions.items()
        if name in code.internal and calls[name] == 1 and name not in code.noinline and function.inlinable
    )


def _drop_unused(module: llvm.ModuleRef, machine: llvm.TargetMachine, opt_level: int) -> None:
    """LLVM's global dead code elimination on ``module``: the internal
    functions and variables nothing reaches."""
    unused = llvm.create_new_module_pass_manager()
    unused.add_global_dead_code_eliminate_pass()
    unused.run(module, _pass_builder(machine, opt_level))


def _pass_builder(machine: llvm.TargetMachine, opt_level: int) -> llvm.PassBuilder:
    """A pass builder for one run of a pass manager: llvmlite registers
    each run's instrumentation, which lives as long as the run, with the
    builder, so a second run on the same builder would call the first's
    after it is gone."""
    return llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=max(opt_level, 1)))


def _emit_without_machine_sinking(machine: llvm.TargetMachine, module: llvm.ModuleRef) -> str:
    """PTX for ``module``, with the back end's machine sinking off.  Every
    array access of a kernel is checked, and a check's failure path reads
    nothing; machine sinking then moves each load past the next checks and
    the math before its use, so an iteration's loads went out one after the
    other (``y[i]`` only once ``log(x[i])`` was done) instead of together,
    and values stayed live longer (BA's kernel: 254 registers, 230
    without).  The switch is LLVM's process-wide ``-disable-machine-sink``,
    set for this emission only (native code compiled in another thread
    meanwhile would be emitted without sinking too: slower, never wrong)."""
    with _lock:
        llvm.set_option("", "-disable-machine-sink=true")
        try:
            return machine.emit_assembly(module)
        finally:
            llvm.set_option("", "-disable-machine-sink=false")


def lower_kernels(
    module: ModuleOp, names: Sequence[str] | None, all_functions: bool = False, owned: bool = False
) -> tuple[ModuleOp, dict[str, tuple[Attribute, ...]], dict[str, LoopBounds | None]]:
    """A verified rev module, inverted and lowered, with ``names`` (default:
    every function with a top-level parallel loop; with ``all_functions``,
    those that no function calls and that keep the kernel rule) outlined and
    converted to nvvm; the argument types of each rev function (inverses included); and
    each kernel's loop bounds, where its arguments determine them.
    With ``names``, the functions they never call are dropped first.
    Its ``gpu.module`` is what is compiled: the device functions are moved
    there, so the host functions that called them no longer verify.  Number
    types the device code cannot take are refused first, at their op, as
    for native code (``check_native_types``).  A copy of ``module`` is
    lowered, unless it is ``owned``: the caller gives it up (a module made
    for this compile alone), and it is lowered in place."""
    check_native_types(module)
    ctx = make_context()
    work = module if owned else clone(module)
    # only the kernels are entry points: what they never call (BA's
    # uncalled inverses, a tenth of its lowered ops) is neither built nor
    # lowered
    reached = invert_reached(work, names) if names is not None and not all_functions else None
    if names is None or reached is None or not reached.issuperset(names):
        # every inverse, as native code's BACKWARD and BOTH compiles build
        # them; a kernel that names no function is refused with them all
        derive_inverses(ctx, work)
    functions = [f.sym_name.data for f in work.ops if isinstance(f, FuncOp | func.FuncOp)]
    if names is not None:
        # before unreached functions go: the message lists what the module has
        check_kernel_names(names, functions)
    if reached is not None:
        drop_functions_outside(work, reached)
    arguments = {
        f.sym_name.data: tuple(f.function_type.inputs.data) for f in work.ops if isinstance(f, FuncOp | func.FuncOp)
    }
    lower_to_std(work, check_ops=True, owned=True)
    RevGpuLocalArraysPass().apply(ctx, work)
    bounds = outline(work, list(names) if names is not None else None, all_functions, keep_host=False, check_ops=True)
    ConvertGpuToNvvmPass().apply(ctx, work)
    return work, arguments, bounds


REGISTER_LIMITS = (16, 255)
"""The registers per thread ``max_registers`` may name: ptxas's floor and
the most a thread of any supported GPU has."""


def check_max_registers(max_registers: object) -> None:
    """A ``TypeError`` or ``ValueError`` unless ``max_registers`` is None or
    a register count within ``REGISTER_LIMITS``."""
    if max_registers is None:
        return
    if isinstance(max_registers, bool) or not isinstance(max_registers, int):
        raise TypeError(f"max_registers= must be a number of registers per thread, got {max_registers!r}")
    low, high = REGISTER_LIMITS
    if not low <= max_registers <= high:
        raise ValueError(f"max_registers={max_registers} is outside {low}..{high}")


@pausing
def compile_kernels(
    module: ModuleOp,
    names: Sequence[str],
    arch: str = DEFAULT_ARCH,
    opt_level: int = 3,
    max_registers: int | None = None,
    owned: bool = False,
) -> GPUProgram:
    """PTX kernels of the rev functions ``names`` of a verified module (the
    inverse of ``f`` is ``f.inv``; derived functions must be in the module,
    after the ad passes; ``module`` itself is left as it is, a copy is
    lowered, unless it is ``owned``: a module the caller made for this
    compile and gives up is lowered in place, and taken apart).  Std
    functions (``func.func``) of the module, which ``rev-lower-to-std``
    checks as it does rev code, may be kernels too.  ``max_registers``: a bound on each kernel's registers per thread
    (``_metadata``).  From the disk cache when an earlier compile
    stored the same (``revmlir.gpu.cache``)."""
    check_architecture(arch)
    check_max_registers(max_registers)
    names = list(names)
    check_distinct_kernels(names)
    return cache.cached(
        module,
        "kernels",
        (names, arch, opt_level, max_registers),
        lambda: _compile_kernels(module, names, arch, opt_level, max_registers, owned),
        GPUProgram.encode,
        lambda data: GPUProgram.decode(data, arch, names),
    )


def _compile_kernels(
    module: ModuleOp, names: Sequence[str], arch: str, opt_level: int, max_registers: int | None, owned: bool
) -> GPUProgram:
    work, arguments, bounds = lower_kernels(module, names, owned=owned)
    for name, found in bounds.items():  # a launch checks its arguments against the types, not the bounds
        if found is not None and (reads := found.unreadable(arguments[name])) is not None:
            raise AssertionError(f"the loop bounds of kernel @{name} read {reads}")
    checks = ModuleOp([])
    checks.attributes.update({k: v for k, v in work.attributes.items() if k != CONTAINER})
    arenas = {
        k.sym_name.data: takes_arena(k)
        for device in work.ops
        if isinstance(device, gpu.ModuleOp)
        for k in device.body.ops
        if isinstance(k, gpu.FuncOp)
    }
    check_orderings(work, arch)
    check_parameter_space(work, arch, ptx_version(arch))
    code, entries = device_llvm_ir(work)
    kernels = {name: KernelInfo(entries[name], arguments[name], arenas[name], bounds[name]) for name in names}
    ptx = _ptx(work, code, arch, opt_level, [k.entry for k in kernels.values()], max_registers)
    return GPUProgram(ptx, kernels, checks, arch)


@pausing
def module_ptx(module: ModuleOp, arch: str = DEFAULT_ARCH, opt_level: int = 3) -> str:
    """PTX for a whole verified rev module (``rev-translate --emit=ptx``):
    every function and inverse a ``.func``, every kernel function that no
    function calls an ``.entry`` (decision 141).  From the disk cache when an earlier compile stored the same
    (``revmlir.gpu.cache``)."""
    check_architecture(arch)
    return cache.cached(
        module,
        "ptx",
        (arch, opt_level),
        lambda: _module_ptx(module, arch, opt_level),
        str.encode,
        lambda data: ptx_for(data.decode(), arch),
    )


def _module_ptx(module: ModuleOp, arch: str, opt_level: int) -> str:
    work, _, _ = lower_kernels(module, None, all_functions=True)
    check_orderings(work, arch)
    check_parameter_space(work, arch, ptx_version(arch))
    code, _ = device_llvm_ir(work, keep_functions=True)
    return _ptx(work, code, arch, opt_level)


def _ptx(
    work: ModuleOp,
    code: LLVMCode | ir.Module,
    arch: str,
    opt_level: int,
    entries: Sequence[str] = (),
    max_registers: int | None = None,
) -> str:
    """PTX for ``code``, made from the lowered ``work``: both are
    the compile's own and dropped after it, so they are taken apart here
    rather than left to the collector (``revmlir.collector``)."""
    take_apart(work)
    ptx = ptx_from_llvm(code, arch, opt_level, entries, max_registers)
    if isinstance(code, ir.Module):
        take_apart_llvm_ir(code)
    return ptx
