"""``convert-gpu-to-nvvm``: the code of every ``gpu.module`` in NVIDIA's
terms.

- ``gpu.thread_id``/``block_id``/``block_dim``/``grid_dim`` read PTX's
  special registers (``nvvm.read.ptx.sreg.{tid,ctaid,ntid,nctaid}.*``, 32
  bits, widened to ``index``); ``gpu.barrier`` is ``nvvm.barrier0``.
- The device's ``revmlir.report`` reports a failed check to the host and
  ends the thread: the first failing thread of a launch wins a
  compare-and-swap of the shared slot's check id (0 → its own:
  ``llvm.cmpxchg``, which NVPTX selects as ``atom.cas``) and then
  stores its values and element there; every failing thread exits
  (``nvvm.exit``, which LLVM must take as possibly unwinding, so that it
  keeps the stores before a failed check: ``revmlir.gpu.nvptx``).  Where the shared slot is, and the element, it reads
  from the context whose address the thread's own slot holds in its last
  word (``revmlir.gpu.outline``).  Every check of device code reports
  through it, the arena's too (``revmlir.gpu.arena``); the device has no
  ``revmlir.fail``.

Bodies stay std-level: ``revmlir.gpu.nvptx`` translates them with
``convert-std-to-llvm``'s rules, as it does host code.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, llvm, memref, scf
from xdsl.dialects.builtin import DenseArrayBase, IndexType, ModuleOp, i1, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from revmlir.dialects import nvvm
from revmlir.dialects.upstream_forms import CmpXchgOp
from revmlir.ir_utils import nested_ops
from revmlir.runtime_checks import ELEMENT_WORD, JUMP_WORD, REPORT

_REGISTERS: dict[type[Operation], str] = {
    gpu.ThreadIdOp: "tid",
    gpu.BlockIdOp: "ctaid",
    gpu.BlockDimOp: "ntid",
    gpu.GridDimOp: "nctaid",
}

_DEVICE_OPS = frozenset({*_REGISTERS, gpu.BarrierOp})
"""The ops ``convert_op`` replaces."""


def convert_op(op: Operation) -> None:
    """Replace ``op`` by its ``nvvm`` form, if it has one."""
    if (register := _REGISTERS.get(type(op))) is not None:
        dimension = op.properties["dimension"]
        assert isinstance(dimension, gpu.DimensionAttr)
        read = nvvm.SPECIAL_REGISTERS[(register, dimension.data.value)]()
        cast = arith.IndexCastOp(read, IndexType())
        Rewriter.replace_op(op, [read, cast], [cast.result])
    elif isinstance(op, gpu.BarrierOp):
        Rewriter.replace_op(op, nvvm.Barrier0Op(), [])


def _in_device(op: Operation) -> bool:
    """Whether ``op`` is inside a ``gpu.module``: the pass converts device
    code only."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, gpu.ModuleOp):
        parent = parent.parent_op()
    return parent is not None


def define_device_report(function: func.FuncOp) -> None:
    """Give ``revmlir.report`` the device body of the module docstring, for
    its arguments: the check's words go to the shared slot directly, not
    through the thread's own."""
    block = Block(arg_types=function.function_type.inputs.data)
    own, check, *values = block.args
    own.name_hint, check.name_hint = "thread_err", "check"
    for value in values:
        value.name_hint = "word"
    ops: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    jump = add(memref.LoadOp.get(own, [add(arith.ConstantOp.from_int_and_width(JUMP_WORD, IndexType()))]))
    context = add(llvm.IntToPtrOp(jump))
    shared_address = add(llvm.LoadOp(context, i64))
    element = add(llvm.LoadOp(add(llvm.GEPOp(context, [1], i64)), i64))
    zero = add(arith.ConstantOp.from_int_and_width(0, i64))
    shared = add(llvm.IntToPtrOp(shared_address))
    swapped = add(CmpXchgOp(shared, zero, check))
    won = add(llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [1]), swapped, i1))
    report: list[Operation] = []
    for index, value in enumerate([*values, element], start=1):
        assert index < ELEMENT_WORD + 1
        address = llvm.GEPOp(shared, [index], i64)
        report += [address, llvm.StoreOp(value, address)]
    report.append(scf.YieldOp())
    ops += [scf.IfOp(won, [], Region(Block(report))), nvvm.ExitOp(), func.ReturnOp()]
    block.add_ops(ops)
    function.body.add_block(block)


@dataclass(frozen=True)
class ConvertGpuToNvvmPass(ModulePass):
    """GPU ops of every ``gpu.module`` become ``nvvm`` ops; its
    ``revmlir.report`` reports to the launch's shared error slot."""

    name = "convert-gpu-to-nvvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # one walk of the module, not a rewrite worklist: the ops to replace
        # are few and a kernel's callees many; nor a walk to find each
        # gpu.module and another of it, since a kernel's module is nearly
        # all its gpu.module (by exact class, as ``device_module`` finds it:
        # isinstance on xDSL's ops goes through ABCMeta)
        devices: list[gpu.ModuleOp] = []
        for inner in nested_ops(op):
            if inner.__class__ is gpu.ModuleOp:
                devices.append(inner)
            elif inner.__class__ in _DEVICE_OPS and _in_device(inner):
                convert_op(inner)
        for device in devices:
            for function in device.body.ops:
                if isinstance(function, func.FuncOp) and function.is_declaration and function.sym_name.data == REPORT:
                    define_device_report(function)
