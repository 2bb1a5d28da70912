"""The std form native code is translated from: a rev module's functions
of one direction lowered to std (``rev-lower-to-std``), their loops
versioned and ``rev-host-safety``'s checks added, with the check table
whose ids a failed run leaves in its error slot.

Apart from ``revmlir.runtime.native``, which analyses and translates it,
so that ``rev-translate --emit=header`` writes the table of an object's
checks without loading LLVM or NumPy: the ids a C caller gets are the
places in the table this lowering makes.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Sequence

from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp as StdFuncOp

from revmlir.call_graph import recursive_functions
from revmlir.dialects.rev import FuncOp
from revmlir.ir_utils import clone
from revmlir.lowering.host_safety import HostSafetyPass
from revmlir.lowering.loop_versioning import version_loops
from revmlir.lowering.rev_to_std import lower_to_std
from revmlir.naming import inverse_name
from revmlir.parsing import make_context
from revmlir.passes.invert import derive_inverses
from revmlir.reachability import drop_unreached_functions
from revmlir.runtime_checks import CHECKS_ATTR, DEFAULT_TOLERANCE


class Direction(enum.Enum):
    """Which functions of a module one compile builds.  A call runs one
    direction, and a function and its inverse are about the same code, so a
    compile of one direction is about half the work of both."""

    FORWARD = "forward"
    """Every function, and the inverses its uncalls run."""
    BACKWARD = "backward"
    """The inverse of every function that has one, and the functions (or
    inverses) that these call or uncall."""
    BOTH = "both"
    """Every function and every inverse: a library for C callers
    (``rev-translate``), which may call either."""


def lower_for_native(
    module: ModuleOp,
    tolerance: float,
    direction: Direction,
    numbered_after: Sequence[str] = (),
    exported: Collection[str] = (),
    version_exported: bool = True,
) -> tuple[ModuleOp, frozenset[str]]:
    """A copy of ``module`` whose functions of ``direction`` are lowered as
    native code takes them, its checks numbered after the entries
    ``numbered_after`` (a module whose machine code it joins); unless
    ``version_exported``, the loops of the functions ``_unversioned``
    finds among ``exported`` (that module's) are left as they are.  The
    copy, and the functions left unversioned."""
    work = clone(module)
    context = make_context()
    if direction is Direction.BOTH:
        derive_inverses(context, work)
    elif direction is Direction.BACKWARD:
        # the inverses are the entry points: what they never call is not lowered
        functions = [f.sym_name.data for f in work.ops if isinstance(f, FuncOp)]
        derive_inverses(context, work)
        inverted = {f.sym_name.data for f in work.ops if isinstance(f, FuncOp)}
        drop_unreached_functions(work, [inverse_name(n) for n in functions if inverse_name(n) in inverted])
    lower_to_std(work, tolerance, check_ops=True, numbered_after=numbered_after, owned=True)
    unversioned = frozenset() if version_exported else _unversioned(work, exported)
    version_loops(work, unversioned)
    HostSafetyPass().apply(context, work)
    return work, unversioned


def object_checks(module: ModuleOp) -> list[str]:
    """The check table of ``module``'s object for C (``rev-translate``:
    both directions, the default tolerance): check ``i`` is entry
    ``i - 1``, ``error|op|location|function|payload kinds|message``."""
    work, _ = lower_for_native(module, DEFAULT_TOLERANCE, Direction.BOTH)
    table = work.attributes.get(CHECKS_ATTR)
    return [entry.data for entry in table.data if isinstance(entry, StringAttr)] if isinstance(table, ArrayAttr) else []


def _unversioned(work: ModuleOp, exported: Collection[str]) -> frozenset[str]:
    """The functions of ``work`` (std form) whose loops need not be
    versioned: those a module compiled beside it exports, which this one
    borrows unless it copies them (``_borrow``), and which make no call in
    a cycle of calls.  A borrowed function loses its body, and versioning
    it would change nothing else: it duplicates innermost loops, whose
    copies write the same arrays, pass the same arrays to the same
    callees, poll at the same kind of loop heads and register no check,
    so the analyses (written arrays, aliasing, polling) find what they
    find in the unversioned body; only ``rev-host-safety``'s check before
    a recursive call would be registered once per copy, shifting the ids
    of the checks after it, hence the exclusion.  Versioning was most of
    the work a rest did for the functions it borrows (GMM's objective:
    0.12 s of 0.54 s)."""
    functions = [f for f in work.ops if isinstance(f, StdFuncOp) and f.sym_name.data in exported]
    if not functions:
        return frozenset()  # a first compile: nothing to borrow, no call graph to find
    # a function makes a call in a cycle exactly when it is in one
    recursive = recursive_functions(f for f in work.ops if isinstance(f, StdFuncOp) and f.body.blocks)
    return frozenset(f.sym_name.data for f in functions if f.sym_name.data not in recursive)
