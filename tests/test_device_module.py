"""``device_module``: the functions of a module's one ``gpu.module``, with
its arrays in the thread's local memory; arrays outside it are not the
device's."""

from __future__ import annotations

import pytest
from xdsl.dialects import memref
from xdsl.utils.exceptions import PassFailedException

from revmlir.gpu.nvptx import device_module
from revmlir.ir_utils import nested_ops
from revmlir.parsing import parse_module

DEVICE = """
  "gpu.module"() <{sym_name = "device"}> ({
    func.func @device() {
      %a = memref.alloc() : memref<4xf64>
      memref.dealloc %a : memref<4xf64>
      func.return
    }
  }) : () -> ()
"""

HOST = """
  func.func @host() {
    %a = memref.alloc() : memref<4xf64>
    memref.dealloc %a : memref<4xf64>
    func.return
  }
"""


def test_only_the_gpu_modules_arrays_are_local() -> None:
    module = parse_module(f"builtin.module attributes {{gpu.container_module}} {{{HOST}{DEVICE}}}")
    device, _ = device_module(module)
    ops = [op.__class__ for op in nested_ops(device)]
    assert memref.AllocaOp in ops
    assert memref.AllocOp not in ops and memref.DeallocOp not in ops
    host = [op.__class__ for op in nested_ops(module)]
    assert memref.AllocOp in host and memref.DeallocOp in host and memref.AllocaOp not in host


@pytest.mark.parametrize("devices", [0, 2])
def test_one_gpu_module(devices: int) -> None:
    module = parse_module(f"builtin.module {{{HOST}{DEVICE * devices}}}".replace('"device"', '"d"'), verify=False)
    with pytest.raises(PassFailedException, match=f"expected one gpu.module to compile for the GPU, found {devices}"):
        device_module(module)
