"""How many bytes a kernel's parameters take, against what PTX allows.

A kernel's parameters (the ABI of docs/gpu.md: an array is its data
pointer and one ``i64`` size per dimension, a scalar its value, a complex
number its two parts, then the error slot and the arena) live in the
kernel's parameter space, which PTX bounds: 4352 bytes, or 32764 from PTX
ISA 8.1 on (the PTX ISA, "Kernel parameters"; ptxas: "Entry function 'k'
uses too much parameter space (0x12d0 bytes, 0x1100 max)").  ptxas names
a PTX line, and ``rv.cuda`` met it only when a launch loaded the module;
this check refuses such a kernel at its function, before LLVM, with the
size and the limit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects import gpu
from xdsl.dialects.builtin import AnyFloat, ComplexType, IntegerType, MemRefType, ModuleOp
from xdsl.ir import Attribute
from xdsl.utils.exceptions import PassFailedException

from revmlir.errors import describe_op
from revmlir.ir_utils import nested_ops

PARAMETER_SPACE = 4352
"""The bytes of a kernel's parameters in PTX before ISA 8.1."""
LARGE_PARAMETER_SPACE = 32764
"""The bytes of a kernel's parameters from PTX ISA 8.1 on (sm_70 and newer,
CUDA 12.1's driver)."""
LARGE_PARAMETERS_PTX = (8, 1)
"""The first PTX ISA version with ``LARGE_PARAMETER_SPACE``."""


def parameter_space(ptx_version: tuple[int, int]) -> int:
    """The bytes a kernel's parameters may take in PTX of ``ptx_version``
    (what the PTX's ``.version`` says: LLVM's, per GPU)."""
    return LARGE_PARAMETER_SPACE if ptx_version >= LARGE_PARAMETERS_PTX else PARAMETER_SPACE


def _sizes(type: Attribute) -> Iterator[int]:
    """The bytes of each parameter ``type`` is passed as: an array its
    pointer and a size per dimension, a complex number its parts, a scalar
    its width in whole bytes (an ``i1`` a byte, as PTX has no smaller
    parameter)."""
    if isinstance(type, MemRefType):
        yield from [8] * (1 + type.get_num_dims())
    elif isinstance(type, ComplexType):
        part = list(_sizes(type.element_type))
        yield from part + part
    elif isinstance(type, IntegerType):
        yield max(1, type.width.data // 8)
    elif isinstance(type, AnyFloat):
        yield type.bitwidth // 8
    else:
        yield 8  # an index; any other type (which a launch refuses) as a pointer


def parameter_bytes(types: Sequence[Attribute]) -> int:
    """The bytes parameters of ``types`` take, each at the next offset
    aligned to its size (as the driver lays them out, and as
    ``revmlir.gpu.runtime.parameter_struct`` packs them)."""
    end = 0
    for type in types:
        for size in _sizes(type):
            end += -end % size + size
    return end


def check_parameter_space(module: ModuleOp, arch: str, ptx_version: tuple[int, int]) -> None:
    """Refuse, at its function, a kernel of ``module`` (a ``gpu.func``)
    whose parameters take more bytes than PTX of ``ptx_version`` allows."""
    limit = parameter_space(ptx_version)
    for op in nested_ops(module):
        if isinstance(op, gpu.FuncOp):
            size = parameter_bytes(op.function_type.inputs.data)
            if size > limit:
                version = ".".join(map(str, ptx_version))
                raise PassFailedException(
                    f"{describe_op(op)}: kernel @{op.sym_name.data} takes {size} bytes of parameters, over the "
                    f"{limit} a kernel takes on {arch} (PTX {version}): each array is 8 bytes and 8 per "
                    "dimension, each scalar its size; pass fewer arrays (stack them into one of a higher rank)"
                )
