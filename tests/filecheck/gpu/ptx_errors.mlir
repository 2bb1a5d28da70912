// RUN: not rev-translate %s --emit=ptx 2>&1 | filecheck %s
// RUN: not rev-translate %S/inputs/gpu_atomic_max.mlir --emit=ptx 2>&1 | filecheck %s --check-prefix=ATOMIC
// RUN: not rev-opt %S/inputs/gpu_stack.mlir -p 'rev-gpu-outline{all-functions=true}' 2>&1 | filecheck %s --check-prefix=STACK
// RUN: not rev-translate %s --emit=ptx --gpu-arch=sm_50 2>&1 | filecheck %s --check-prefix=ARCH
// RUN: not rev-translate %s --emit=cubin 2>&1 | filecheck %s --check-prefix=CUBIN
// RUN: not rev-translate %S/inputs/gpu_nvvm_intrinsic.mlir --emit=ptx --gpu-arch=sm_75 2>&1 | filecheck %s --check-prefix=NVVM
// RUN: not rev-translate %S/inputs/gpu_libm_types.mlir --emit=ptx 2>&1 | filecheck %s --check-prefix=LIBM
// RUN: not rev-translate %S/inputs/gpu_reserved_name.mlir --emit=ptx 2>&1 | filecheck %s --check-prefix=RESERVED
// RUN: not rev-translate %S/inputs/gpu_reserved_name.mlir --emit=llvm 2>&1 | filecheck %s --check-prefix=RESERVED

// What NVPTX or the device cannot run is an error at the op, before LLVM
// sees it (LLVM would abort the process).

// RESERVED-NOT: SSAValue
// RESERVED: error: 'rev.func' at {{.*}}gpu_reserved_name.mlir:3:1: @revmlir.report has a name reserved for revmlir's runtime functions (names starting with 'revmlir.'): rename it
// CHECK: error: 'llvm.call' at {{.*}}ptx_errors.mlir:[[# @LINE + 9]]:3: GPU code cannot call mystery: device code calls the module's functions and libdevice's math only
// ATOMIC: error: 'memref.atomic_rmw' at {{.*}}gpu_atomic_max.mlir:8:5: only atomic additions of f64, f32, i64 and i32 (addf, addi) are supported in GPU code
// STACK: error: 'func.call' at {{.*}}gpu_stack.mlir:5:3: @pushes allocates from the per-thread arena in GPU code but takes no error slot memref<6xi64>, through which device code reaches the arena (only lowered reversible functions have one)
// ARCH: rev-translate: error: --gpu-arch: unknown GPU architecture 'sm_50' (known: sm_60,
// CUBIN: error: --emit=cubin needs -o FILE
// NVVM: error: 'llvm.call_intrinsic' at {{.*}}gpu_nvvm_intrinsic.mlir:10:5: GPU code cannot call llvm.nvvm.redux.sync.add: of NVVM's intrinsics, device code calls those of the nvvm ops only
// LIBM: error: 'llvm.call' at {{.*}}gpu_libm_types.mlir:10:5: GPU code cannot call hypot on (f32, f32) -> (f32): libdevice's math takes and returns f64, or f32
func.func private @mystery(f64) -> f64
func.func @calls_unknown(%x: f64) -> f64 {
  %y = func.call @mystery(%x) : (f64) -> f64
  func.return %x : f64
}
