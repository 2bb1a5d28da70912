"""The CBLAS that numpy brings, for primitives that call BLAS
(``rv.primitive(blas="ddot")``, docs/python.md "User primitives").

numpy's wheels bundle OpenBLAS built for SciPy (``scipy_openblas``), which
exports CBLAS under prefixed names with 64-bit integers
(``scipy_cblas_ddot64_``); a numpy built against a system library links a
plain CBLAS (``cblas_ddot``, 32-bit integers).  numpy loads its library
privately, so native code cannot see its symbols until the library file is
loaded again for the process; ``numpy_blas`` finds the file next to numpy's
own extension modules and the names it exports.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from revmlir.runtime.jit import load_library

_NAMINGS = (
    ("scipy_cblas_{}64_", "blas"),
    ("cblas_{}64_", "blas"),
    ("cblas_{}", "blas32"),
)
"""How a CBLAS may name ``ddot``, with the array convention of its integers
(``revmlir.dialects.primitives.ARRAY_CONVENTIONS``)."""

_PROBE = "ddot"


@dataclass(frozen=True)
class Blas:
    """A CBLAS loaded into the process: its file, how it names a routine,
    and how it takes arrays and lengths."""

    library: str
    naming: str
    arrays: str

    def symbol(self, routine: str) -> str:
        """The C symbol of a BLAS ``routine`` (``ddot``, ``daxpy``…)."""
        return self.naming.format(routine)


class BlasNotFound(RuntimeError):
    """numpy brings no CBLAS this process can call."""


def _candidates() -> list[Path]:
    """The shared libraries numpy's wheels bundle (``numpy.libs`` on Linux
    and Windows, ``numpy/.dylibs`` on macOS), then those its extension
    modules are, which a numpy linked against a system BLAS loads."""
    package = Path(np.__file__).parent
    bundled = [
        path
        for folder in (package.parent / "numpy.libs", package / ".dylibs")
        if folder.is_dir()
        for path in sorted(folder.iterdir())
        if "blas" in path.name.lower()
    ]
    return bundled + sorted((package / "_core").glob("_multiarray_umath*"))


@functools.cache
def numpy_blas() -> Blas:
    """numpy's CBLAS, loaded for native code; ``BlasNotFound`` saying where
    it looked when there is none."""
    looked: list[str] = []
    for path in _candidates():
        looked.append(str(path))
        try:
            library = ctypes.CDLL(str(path))
        except OSError:
            continue
        for naming, arrays in _NAMINGS:
            if hasattr(library, naming.format(_PROBE)):
                load_library(str(path))
                return Blas(str(path), naming, arrays)
    names = ", ".join(naming.format(_PROBE) for naming, _ in _NAMINGS)
    raise BlasNotFound(
        f"numpy brings no CBLAS: none of {names} is exported by "
        + (", ".join(looked) if looked else "any library next to numpy")
    )
