"""The C math library's functions, as native code calls them.

Native code computes ``exp``, ``sin``, ``tanh``, ``pow`` … with calls into the
process's C math library (LLVM's math intrinsics become those calls on the
CPU; constant folding uses the same library).  numpy's ufuncs are other
implementations (vectorised ones on many CPUs) that differ from it by an ulp
or more on some inputs, and ``a*b + c`` rounds twice where ``fma`` rounds
once.  The interpreter calls these functions instead, so that both engines
compute every float bit for bit alike, and a check that fails on one fails
with the same values on the other.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _library() -> ctypes.CDLL:
    """The math library native code resolves against: the symbols already
    loaded in this process (CPython links it), else ``libm`` by name."""
    for name in (None, ctypes.util.find_library("m")):
        library = ctypes.CDLL(name)
        if hasattr(library, "tanh"):
            return library
    raise OSError("the C math library cannot be loaded")


def function(name: str, arity: int = 1, single: bool = False) -> Callable[..., float]:
    """The C function ``double name(double…)`` of ``arity`` arguments, or
    (``single``) its single-precision ``float namef(float…)``, which native
    code calls on f32 values."""
    found = getattr(_library(), name + "f" if single else name)
    number = ctypes.c_float if single else ctypes.c_double
    found.restype = number
    found.argtypes = [number] * arity
    return found
