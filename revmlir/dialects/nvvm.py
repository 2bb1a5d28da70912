"""The ``nvvm`` dialect: NVIDIA GPU intrinsics, named as upstream MLIR's
NVVM dialect names them, so that IR printed after ``convert-gpu-to-nvvm``
stays readable by ``mlir-opt``.

Only what revmlir's kernels use is defined: the special registers that
locate a thread in the grid (``nvvm.read.ptx.sreg.{tid,ntid,ctaid,nctaid}.{x,y,z}``,
32-bit as in PTX), the block-wide barrier ``nvvm.barrier0`` and
``nvvm.exit``, which ends the calling thread (a failed run-time check,
``revmlir.gpu.to_nvvm``).  Each op knows the LLVM it becomes
(``INTRINSIC`` or ``PTX``): ``revmlir.gpu.nvptx`` reads it, and no other
place lists the intrinsics.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import i32
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, result_def


class SpecialRegisterOp(IRDLOperation):
    """Reads one of PTX's special registers (an ``i32``)."""

    INTRINSIC: ClassVar[str]
    """The LLVM intrinsic that reads the register."""

    res = result_def(i32)

    assembly_format = "attr-dict `:` type($res)"

    def __init__(self) -> None:
        super().__init__(result_types=[i32])


def _special_register(register: str, dimension: str) -> type[SpecialRegisterOp]:
    name = f"read.ptx.sreg.{register}.{dimension}"
    cls = type(
        f"Read{register.capitalize()}{dimension.upper()}Op",
        (SpecialRegisterOp,),
        {
            "name": f"nvvm.{name}",
            "INTRINSIC": f"llvm.nvvm.{name}",
            "__annotations__": {"INTRINSIC": ClassVar[str]},
            "__module__": __name__,
        },
    )
    return irdl_op_definition(cls)


REGISTERS = ("tid", "ntid", "ctaid", "nctaid")
"""Thread index in its block, block size, block index, grid size."""
DIMENSIONS = ("x", "y", "z")
SPECIAL_REGISTERS: dict[tuple[str, str], type[SpecialRegisterOp]] = {
    (register, dimension): _special_register(register, dimension) for register in REGISTERS for dimension in DIMENSIONS
}


@irdl_op_definition
class Barrier0Op(IRDLOperation):
    """Waits until every thread of the block arrives (``__syncthreads``)."""

    name = "nvvm.barrier0"
    INTRINSIC: ClassVar[str] = "llvm.nvvm.barrier0"

    assembly_format = "attr-dict"


@irdl_op_definition
class ExitOp(IRDLOperation):
    """Ends the calling thread; LLVM has no intrinsic for it, so it is the
    PTX instruction itself."""

    name = "nvvm.exit"
    PTX: ClassVar[str] = "exit;"

    assembly_format = "attr-dict"


NVVM = Dialect("nvvm", [*SPECIAL_REGISTERS.values(), Barrier0Op, ExitOp], [])
