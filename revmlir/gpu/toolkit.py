"""The parts of NVIDIA's CUDA toolkit the GPU path uses: ``ptxas`` (PTX to
a cubin, and the test that PTX is valid) and ``libdevice.10.bc`` (math
functions as LLVM bitcode).  Either comes from a toolkit (``CUDA_HOME``,
``CUDA_PATH``, ``/usr/local/cuda*``) or from NVIDIA's wheels on PyPI
(``nvidia-cuda-nvcc``, ``nvidia-nvvm``)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


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


def emit_cubin(ptx: str, arch: str = "sm_90") -> bytes:
    """A cubin for ``arch`` from ``ptx``, by ptxas; its messages become the
    error where it rejects the PTX."""
    ptxas = find_ptxas()
    if ptxas is None:
        raise ToolkitError("ptxas was not found: install a CUDA toolkit or the nvidia-cuda-nvcc wheel")
    with tempfile.TemporaryDirectory() as folder:
        source, output = Path(folder) / "kernels.ptx", Path(folder) / "kernels.cubin"
        source.write_text(ptx)
        result = subprocess.run(
            [str(ptxas), f"-arch={arch}", str(source), "-o", str(output)], capture_output=True, text=True
        )
        if result.returncode != 0:
            raise ToolkitError(f"ptxas rejected the PTX: {result.stderr.strip()}")
        return output.read_bytes()
