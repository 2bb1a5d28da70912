"""The parts of NVIDIA's CUDA toolkit the GPU path uses: ``ptxas`` (PTX to
a cubin, the test that PTX is valid, and what a kernel costs in registers
and local memory) and ``libdevice.10.bc`` (math
functions as LLVM bitcode).  Either comes from a toolkit (``CUDA_HOME``,
``CUDA_PATH``, ``/usr/local/cuda*``) or from NVIDIA's wheels on PyPI
(``nvidia-cuda-nvcc``, ``nvidia-nvvm``)."""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ARCH = "sm_90"
"""The GPU code is compiled for where nothing names one (an H100's)."""


class ToolkitError(RuntimeError):
    """A part of the CUDA toolkit is missing or failed."""


def _roots() -> list[Path]:
    """Where to look, in order: the toolkit the environment names, the
    wheels (``nvidia/cu13/bin/ptxas``, ``nvidia/cu13/nvvm/libdevice/``),
    the newest toolkit installed."""
    roots = [Path(os.environ[v]) for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    for site in sys.path:
        roots += [Path(p) for p in sorted(glob.glob(os.path.join(site or ".", "nvidia", "*")), reverse=True)]
    roots += [Path(p) for p in sorted(glob.glob("/usr/local/cuda*"), reverse=True)]
    return roots


def find_ptxas() -> Path | None:
    """ptxas from the toolkit or the wheels, then from PATH."""
    for root in _roots():
        if (candidate := root / "bin" / "ptxas").is_file():
            return candidate
    found = shutil.which("ptxas")
    return Path(found) if found else None


def find_libdevice() -> Path | None:
    for root in _roots():
        if (candidate := root / "nvvm" / "libdevice" / "libdevice.10.bc").is_file():
            return candidate
    return None


@functools.cache
def libdevice_names() -> frozenset[str]:
    """The functions libdevice defines (``__nv_exp``, …), none where it
    is not found: nothing is linked then, so no name meets one.  LLVM is
    imported here, not with the module: ``rev-translate --emit=header``
    reads ``DEFAULT_ARCH`` and loads no LLVM."""
    import llvmlite.binding as llvm

    path = find_libdevice()
    if path is None:
        return frozenset()
    return frozenset(f.name for f in llvm.parse_bitcode(path.read_bytes()).functions if not f.is_declaration)


CUBIN_OPTIONS: tuple[str, ...] = ()
"""What ``emit_cubin`` passes ptxas besides the architecture and the files:
nothing, so its defaults (``-O3``).  Part of a cached cubin's key
(``revmlir.gpu.cache.cubin``)."""


def emit_cubin(ptx: str, arch: str = DEFAULT_ARCH) -> bytes:
    """A cubin for ``arch`` from ``ptx``, by ptxas; its messages become the
    error where it rejects the PTX."""
    return _ptxas(ptx, arch, list(CUBIN_OPTIONS))[0]


def ptxas_version(ptxas: Path) -> str | None:
    """What ``ptxas --version`` prints: its release and build, which name
    the assembler exactly (a digest of its 50 MB would cost as much CPU as
    assembling a small kernel); None where it does not run or says
    nothing."""
    try:
        result = subprocess.run([str(ptxas), "--version"], capture_output=True, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.decode("latin-1") if result.stdout.strip() else None


@dataclass(frozen=True)
class Usage:
    """What ptxas reports for one function (``ptxas -v``): a kernel's
    registers bound its occupancy; its stack frame is local memory (arrays
    not kept in registers, a call's parameters); spills are registers that
    did not fit."""

    registers: int | None
    """``None`` for a ``.func`` (ptxas counts registers per entry)."""
    stack_frame: int
    spill_stores: int
    spill_loads: int


USAGE_OPTIONS: tuple[str, ...] = ("-v", *CUBIN_OPTIONS)
"""What ``resource_usage`` passes ptxas: the cubin's options, reporting
what each function uses.  Part of a cached report's key
(``revmlir.gpu.cache.resource_usage``)."""


def resource_usage(ptx: str, arch: str = DEFAULT_ARCH) -> dict[str, Usage]:
    """The resources of every function of ``ptx`` (its PTX name), as ptxas
    assembling it for ``arch`` reports them."""
    _, report = _ptxas(ptx, arch, list(USAGE_OPTIONS))
    frames: dict[str, tuple[int, int, int]] = {}
    registers: dict[str, int] = {}
    function = entry = ""
    for line in report.splitlines():
        if found := re.search(r"Compiling entry function '([^']+)'", line):
            entry = found.group(1)
        elif found := re.search(r"Function properties for (\S+)", line):
            function = found.group(1)
        elif found := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line):
            frames[function] = (int(found.group(1)), int(found.group(2)), int(found.group(3)))
        elif found := re.search(r"Used (\d+) registers", line):
            registers[entry] = int(found.group(1))
    return {name: Usage(registers.get(name), *frame) for name, frame in frames.items()}


def _ptxas(ptx: str, arch: str, options: list[str]) -> tuple[bytes, str]:
    """The cubin and ptxas's messages."""
    ptxas = find_ptxas()
    if ptxas is None:
        raise ToolkitError("ptxas was not found: install a CUDA toolkit or the nvidia-cuda-nvcc wheel")
    with tempfile.TemporaryDirectory() as folder:
        source, output = Path(folder) / "kernels.ptx", Path(folder) / "kernels.cubin"
        source.write_text(ptx)
        try:
            result = subprocess.run(
                [str(ptxas), *options, f"-arch={arch}", str(source), "-o", str(output)], capture_output=True, text=True
            )
        except OSError as error:
            raise ToolkitError(f"{ptxas} could not be run: {error.strerror}") from error
        if result.returncode != 0:
            if f"Value '{arch}' is not defined" in result.stderr:
                raise ToolkitError(
                    f"{ptxas} cannot assemble for {arch}: its CUDA toolkit does not support that GPU (CUDA 13 "
                    "starts at sm_75 and names sm_101 sm_110); CUDA_HOME may name a toolkit that does"
                )
            if result.returncode < 0:
                # a crash leaves stderr empty: the signal is all there is to say
                said = result.stderr.strip()
                raise ToolkitError(
                    f"ptxas crashed ({_signal_name(-result.returncode)}) on the PTX for {arch}"
                    + (f": {said}" if said else "")
                )
            raise ToolkitError(f"ptxas rejected the PTX: {result.stderr.strip()}")
        return output.read_bytes(), result.stdout + result.stderr


def _signal_name(number: int) -> str:
    """``SIGSEGV`` for 11; the number where the platform names no such
    signal."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
