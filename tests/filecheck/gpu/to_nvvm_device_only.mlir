// RUN: rev-opt %s -p convert-gpu-to-nvvm | filecheck %s

// Only the code of a gpu.module is the device's: a thread id outside one
// stays as it is, one inside reads PTX's special register.
// CHECK-LABEL: func.func @host() -> index {
// CHECK-NEXT:    %{{.*}} = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-LABEL: "gpu.module"()
// CHECK:         %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT:    %{{.*}} = arith.index_cast %[[TID]] : i32 to index
// CHECK-NOT:     gpu.thread_id

builtin.module attributes {gpu.container_module} {
  func.func @host() -> index {
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    func.return %t : index
  }
  "gpu.module"() <{sym_name = "device"}> ({
    func.func @device() -> index {
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      func.return %t : index
    }
  }) : () -> ()
}
