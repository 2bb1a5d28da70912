"""llvmlite: LLVM IR text → optimised machine code in this process, or an
object file / assembly for ahead-of-time use."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from dataclasses import dataclass

import llvmlite.binding as llvm

_lock = threading.Lock()
_initialized = False


def _initialize() -> None:
    global _initialized
    with _lock:
        if _initialized:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        libm = ctypes.util.find_library("m")
        if libm is not None:
            llvm.load_library_permanently(libm)
        _initialized = True


def host_target_machine(opt_level: int = 3, reloc: str = "default") -> llvm.TargetMachine:
    _initialize()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=opt_level,
        reloc=reloc,
        codemodel="jitdefault" if reloc == "default" else "default",
    )


def optimize(text: str, machine: llvm.TargetMachine, opt_level: int) -> llvm.ModuleRef:
    """Parse and verify LLVM IR and run the standard -O<level> pipeline on it."""
    module = llvm.parse_assembly(text)
    module.verify()
    if opt_level > 0:
        options = llvm.create_pipeline_tuning_options(speed_level=opt_level)
        builder = llvm.create_pass_builder(machine, options)
        builder.getModulePassManager().run(module, builder)
    return module


@dataclass
class JITModule:
    """Machine code for one LLVM module, resident in this process."""

    engine: llvm.ExecutionEngine
    module: llvm.ModuleRef

    def address(self, symbol: str) -> int:
        address = self.engine.get_function_address(symbol)
        if not address:
            raise KeyError(f"no compiled function '{symbol}'")
        return address


def jit(text: str, opt_level: int = 3) -> JITModule:
    machine = host_target_machine(opt_level)
    module = optimize(text, machine, opt_level)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    return JITModule(engine, module)


def emit_object(text: str, opt_level: int = 3) -> bytes:
    """A relocatable object file (position-independent) for the host."""
    machine = host_target_machine(opt_level, reloc="pic")
    return machine.emit_object(optimize(text, machine, opt_level))


def emit_assembly(text: str, opt_level: int = 3) -> str:
    machine = host_target_machine(opt_level, reloc="pic")
    return machine.emit_assembly(optimize(text, machine, opt_level))
