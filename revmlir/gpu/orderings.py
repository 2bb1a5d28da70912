"""The atomic orderings a GPU's loads and stores can have.

PTX has acquire and release accesses (``ld.acquire``, ``st.release``) from
sm_70 on; before, LLVM's NVPTX back end writes an unordered or monotonic
access as a ``volatile`` one and aborts the process on any stronger
ordering (``report_fatal_error``: "PTX does not support "atomic" for
orderings different than "NotAtomic" or "Monotonic" for sm_60 or older").
A hand-written ``llvm.load`` or ``llvm.store`` ordered so is therefore
refused at the op for those GPUs, before LLVM sees it.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from revmlir.errors import describe_op
from revmlir.ir_utils import nested_ops
from revmlir.lowering.llvm_ir import atomic_access

UNORDERED_ARCHITECTURES = frozenset({"sm_60", "sm_61", "sm_62"})
"""The GPUs whose atomic loads and stores are at most monotonic."""

WEAK_ORDERINGS = ("unordered", "monotonic")
"""The orderings every GPU's loads and stores take."""


def check_orderings(module: ModuleOp, arch: str) -> None:
    """Refuses an atomic access of ``module`` ordered past ``monotonic``
    where ``arch`` has no such access (nothing is walked for a GPU that has
    every ordering)."""
    if arch not in UNORDERED_ARCHITECTURES:
        return
    for op in nested_ops(module):
        if isinstance(op, llvm.LoadOp | llvm.StoreOp):
            access = atomic_access(op)
            if access is not None and access[0] not in WEAK_ORDERINGS:
                kind = "load" if isinstance(op, llvm.LoadOp) else "store"
                raise PassFailedException(
                    f"{describe_op(op)}: an atomic {kind} ordered {access[0]} needs sm_70 or newer; "
                    f"{arch} has only {' and '.join(WEAK_ORDERINGS)} ones"
                )
