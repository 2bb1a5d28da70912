"""llvmlite: LLVM IR text → optimised machine code in this process, or an
object file / assembly for ahead-of-time use."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import threading
from dataclasses import dataclass
from typing import Any

import llvmlite.binding as llvm

from revmlir.lowering.llvm_parse import parse_llvm, verify_llvm
from revmlir.lowering.printing import PRINT
from revmlir.runtime import cache
from revmlir.runtime.printing import print_address

_lock = threading.Lock()
_initialized = False


def _initialize() -> None:
    global _initialized
    with _lock:
        if _initialized:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        # Native code calls libm, and malloc/realloc/free for stacks; Python
        # allocates stack buffers with the same malloc (``c_function``).
        # Code generation may call the compiler runtime (``__powidf2``,
        # 128-bit division) for operations the target has no instruction for.
        for library in ("m", "c", "gcc_s"):
            if (path := ctypes.util.find_library(library)) is not None:
                llvm.load_library_permanently(path)
        # ``print`` in a rev.safe region calls back into Python to format.
        llvm.add_symbol(PRINT, print_address())
        _initialized = True


def c_function(name: str, result: Any, *arguments: Any) -> Any:
    """A C library function, resolved exactly as native code resolves it."""
    _initialize()
    address = llvm.address_of_symbol(name)
    if address is None:
        raise KeyError(f"the C library has no '{name}'")
    return ctypes.CFUNCTYPE(result, *arguments)(address)


def load_library(path: str) -> None:
    """Make the functions of the shared library at ``path`` callable from
    native code for the rest of the process; a ``RuntimeError`` saying why
    when it cannot be loaded."""
    _initialize()
    llvm.load_library_permanently(path)


def define_symbol(name: str, address: int) -> None:
    """Make native code calling the external function ``name`` call the
    machine code at ``address`` (for the rest of the process)."""
    _initialize()
    llvm.add_symbol(name, address)


def has_symbol(name: str) -> bool:
    """Whether native code calling the C function ``name`` would find it in
    this process."""
    _initialize()
    return llvm.address_of_symbol(name) is not None


@dataclass(frozen=True)
class HostTarget:
    """The host CPU as LLVM sees it; all of it is part of a cache key."""

    triple: str
    cpu: str
    features: str

    @classmethod
    def detect(cls) -> HostTarget:
        return _host_target()

    def machine(self, opt_level: int, reloc: str) -> llvm.TargetMachine:
        return llvm.Target.from_triple(self.triple).create_target_machine(
            cpu=self.cpu,
            features=self.features,
            opt=opt_level,
            reloc=reloc,
            codemodel="jitdefault" if reloc == "default" else "default",
        )


@functools.cache
def _host_target() -> HostTarget:
    _initialize()
    return HostTarget(llvm.get_default_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())


def host_target_machine(opt_level: int = 3, reloc: str = "default") -> llvm.TargetMachine:
    return HostTarget.detect().machine(opt_level, reloc)


class UnresolvedSymbolError(LookupError):
    """Machine code would call a function this process does not have."""


class TargetIntrinsicError(ValueError):
    """The module calls an intrinsic of a particular target (``llvm.nvvm.*``,
    ``llvm.x86.*``, …)."""


TARGET_INTRINSICS = (
    "aarch64",
    "amdgcn",
    "arm",
    "bpf",
    "dx",
    "hexagon",
    "loongarch",
    "mips",
    "nvvm",
    "ppc",
    "r600",
    "riscv",
    "s390",
    "spv",
    "ve",
    "wasm",
    "x86",
    "xcore",
)
"""The targets whose intrinsics LLVM names ``llvm.<target>.…``.  Selecting
instructions for one the host (or its CPU) lacks is an LLVM *fatal* error,
which ends the process instead of raising; revmlir's native code calls
none, but IR brought from upstream may."""


def optimize(text: str, machine: llvm.TargetMachine, opt_level: int) -> llvm.ModuleRef:
    """Parse and verify LLVM IR and run the standard -O<level> pipeline on
    it, for ``machine``'s triple and data layout (the translation from the
    llvm dialect leaves both empty: optimised without them, LLVM would lay
    out types by its defaults instead of the target's, and an emitted
    module would not say what it was compiled for)."""
    module = parse_llvm(text)
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    verify_llvm(module)
    _check_intrinsics(module)
    if opt_level > 0:
        options = llvm.create_pipeline_tuning_options(speed_level=opt_level)
        builder = llvm.create_pass_builder(machine, options)
        builder.getModulePassManager().run(module, builder)
    return module


def _check_intrinsics(module: llvm.ModuleRef) -> None:
    """No target-specific intrinsic reaches code generation (see
    ``TARGET_INTRINSICS``)."""
    for function in module.functions:
        parts = function.name.split(".")
        if function.is_declaration and parts[0] == "llvm" and len(parts) > 2 and parts[1] in TARGET_INTRINSICS:
            raise TargetIntrinsicError(
                f"native code cannot call @{function.name}, an intrinsic of the {parts[1]} target: "
                "LLVM would end the process compiling it for the host (use the target-independent "
                "op, or compile for that target)"
            )


def _check_externals(module: llvm.ModuleRef, engine: Engine | None) -> None:
    """Every external function the module calls resolves in this process,
    or in ``engine``, which it joins.
    MCJIT binds an unresolved one to address 0, so its first call (and any
    call through the same stub) would crash the process instead of failing
    here."""
    _initialize()
    missing = sorted(
        f.name
        for f in module.functions
        if f.is_declaration
        and not f.name.startswith("llvm.")
        and llvm.address_of_symbol(f.name) is None
        and (engine is None or not engine.address(f.name))
    )
    if missing:
        raise UnresolvedSymbolError(
            f"native code calls {', '.join(missing)}, which no library loaded in this process defines"
        )


class Engine:
    """One MCJIT engine: the machine code of the objects loaded into it,
    which call each other's functions (MCJIT resolves an object's
    undefined symbols against the engine's other objects first).

    The engine compiles nothing itself: ``jit`` generates each object with
    the target machine and loads it, as it loads one from the disk cache.
    Code generation so runs with no Python code inside it: MCJIT's own
    compile tells its object through a ctypes callback, where a Ctrl-C
    pressed during code generation is raised (at the first Python code to
    run) and ctypes prints and drops it, so that the call went on as if it
    had not been pressed.  The object MCJIT would generate is the
    machine's, byte for byte."""

    def __init__(self, machine: llvm.TargetMachine, opt_level: int):
        """An engine with no code yet, for ``machine`` (created for
        ``opt_level``)."""
        # MCJIT is created with a module, which would be compiled at the
        # first load: removed, a load only links its object
        empty = llvm.parse_assembly("")
        self.mcjit = llvm.create_mcjit_compiler(empty, machine)
        self.mcjit.remove_module(empty)
        self.opt_level = opt_level
        """The code generator's level of every object loaded: the level of
        their cache keys."""
        self._lock = threading.Lock()
        """Held while an object is linked and while a symbol is looked up:
        MCJIT is not thread-safe, and a lookup must not see an object
        added but not finalized."""
        self._texts: set[bytes] = set()
        """The digests of the texts whose objects were, or may have been,
        added (``load``)."""
        self._linked: set[bytes] = set()
        """The digests of the texts whose loads completed: their objects
        are linked."""

    def load(self, text: str, data: bytes) -> None:
        """Link ``data``, the object of ``text`` generated for the engine's
        machine (by ``jit`` or from the disk cache), into it.
        A Ctrl-C is raised at the first Python code after a C call, where
        the object may have been added already: the load is finalized
        anyway (but for an engine's first, whose engine is dropped), so the
        engine never holds an object half linked, and the
        text is recorded before, so that the next ``jit`` of it finds the
        object (``has``) instead of refusing its definitions as repeated."""
        data_ref = llvm.ObjectFileRef.from_data(data)
        digest = _digest(text)
        with self._lock:
            first = not self._texts
            self._texts.add(digest)
            try:
                self.mcjit.add_object_file(data_ref)
            except BaseException:
                # MCJIT given no object yet crashes the process when it is
                # finalized; an engine whose first load fails is dropped
                # (``jit`` returns none), so nothing runs what it may hold
                if not first:
                    self._finalize()
                raise
            self._finalize()
            self._linked.add(digest)

    def _finalize(self) -> None:
        """Finalize the objects added, however many Ctrl-Cs arrive (each is
        raised before or after the C call, which finalizing again keeps
        whole); the first is raised again once finalizing has run."""
        interrupted: KeyboardInterrupt | None = None
        while True:
            try:
                self.mcjit.finalize_object()
            except KeyboardInterrupt as error:
                interrupted = interrupted or error
                continue
            break
        if interrupted is not None:
            raise interrupted

    def has(self, text: str, module: llvm.ModuleRef) -> bool:
        """Whether the object of ``text`` (parsed as ``module``) is linked
        into the engine already: its load completed, or a load of it was
        begun (and interrupted) and the functions it defines for other
        modules resolve, which they do only once it is linked.  Of a begun
        load of an object that defines none, nothing tells: it is not had,
        and loading it again defines nothing a lookup could find twice."""
        digest = _digest(text)
        if digest in self._linked:
            return True
        exported = _exported(module)
        return digest in self._texts and bool(exported) and all(self.address(name) for name in exported)

    def address(self, symbol: str) -> int:
        """Where the function ``symbol`` of one of the engine's objects is, or 0."""
        with self._lock:
            return self.mcjit.get_function_address(symbol)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _exported(module: llvm.ModuleRef) -> list[str]:
    """The functions ``module`` defines for other modules to call (external
    linkage)."""
    return [f.name for f in module.functions if not f.is_declaration and f.linkage == llvm.Linkage.external]


@dataclass
class JITModule:
    """Machine code for one LLVM module, resident in this process: an object
    of ``engine``, whose other objects it may call and be called by."""

    engine: Engine

    def address(self, symbol: str) -> int:
        address = self.engine.address(symbol)
        if not address:
            raise KeyError(f"no compiled function '{symbol}'")
        return address


def _cached(text: str, kind: str, opt_level: int, target: HostTarget) -> tuple[str | None, bytes | None]:
    """The cache key of compiling ``text`` into ``kind`` and the object
    stored under it, if any; no key (and nothing to store) when the cache
    is off or cannot be used, which is found before the key is taken.  The
    directory is not made here: ``cache.store`` makes it for an entry, so
    a compile that fails, or has no key, leaves none behind."""
    with cache.opened(create=False) as directory:
        if directory is None and not cache.absent():
            return None, None
        name = cache.key(text, kind, opt_level, target.triple, target.cpu, target.features)
        return name, directory.load(name) if name is not None and directory is not None else None


def jit(text: str, opt_level: int = 3, beside: JITModule | None = None) -> JITModule:
    """Machine code for ``text``, from the disk cache when it has it (see
    ``revmlir.runtime.cache``): the object generated is stored there, and a
    cached object is loaded without optimising anything.
    ``beside``: machine code whose engine this module joins, so that its
    declarations of functions that machine code defines call them; a
    ``ValueError`` where that engine compiles at another ``opt_level`` (the
    object would be stored under a key that does not describe it) or where
    this module defines a function the engine already has (MCJIT would
    keep both, and a lookup of the name would find this module's).

    Nothing joins the engine before its object is whole, so a compile that
    raises (``KeyboardInterrupt`` included) leaves the engine as it was, and
    the next compile of the module is the first; the cache stores an entry
    whole or not at all (``cache.store``)."""
    target = HostTarget.detect()
    machine = target.machine(opt_level, "default")
    key, cached = _cached(text, "jit", opt_level, target)
    engine = None if beside is None else beside.engine
    if engine is not None and engine.opt_level != opt_level:
        raise ValueError(f"machine code of -O{opt_level} cannot join an engine compiling at -O{engine.opt_level}")
    if cached is None or engine is not None:
        # a cached object joining an engine is checked against its text:
        # parsing is cheap beside optimising
        module = optimize(text, machine, opt_level) if cached is None else parse_llvm(text)
        if engine is not None and engine.has(text, module):
            # a load of this text that a Ctrl-C interrupted completed
            return JITModule(engine)
        _check_externals(module, engine)
        if engine is not None:
            _check_definitions(module, engine)
        if cached is None:
            cached = machine.emit_object(module)
            if key is not None:
                cache.store(key, cached)
    if engine is None:
        engine = Engine(machine, opt_level)
    engine.load(text, cached)
    return JITModule(engine)


def _check_definitions(module: llvm.ModuleRef, engine: Engine) -> None:
    """None of the functions ``module`` defines for other modules to call
    (external linkage) is one ``engine`` already has."""
    repeated = sorted(name for name in _exported(module) if engine.address(name))
    if repeated:
        raise ValueError(
            f"the module defines {', '.join('@' + name for name in repeated)}, which the engine it joins defines already"
        )


def emit_object(text: str, opt_level: int = 3) -> bytes:
    """A relocatable object file (position-independent) for the host."""
    target = HostTarget.detect()
    name, cached = _cached(text, "object", opt_level, target)
    if cached is not None:
        return cached
    machine = target.machine(opt_level, "pic")
    data = machine.emit_object(optimize(text, machine, opt_level))
    if name is not None:
        cache.store(name, data)
    return data


def emit_assembly(text: str, opt_level: int = 3) -> str:
    machine = host_target_machine(opt_level, reloc="pic")
    return machine.emit_assembly(optimize(text, machine, opt_level))
