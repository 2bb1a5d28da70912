// RUN: not rev-opt %s -p rev-lower-to-std,rev-gpu-outline,rev-gpu-outline 2>&1 | filecheck %s
// RUN: not rev-opt %s -p 'rev-lower-to-std,rev-gpu-outline{kernels=scale},rev-gpu-outline{kernels=scale}' 2>&1 | filecheck %s
// RUN: not rev-opt %s -p 'rev-lower-to-std,rev-gpu-outline{all_functions=true},rev-gpu-outline{all_functions=true}' 2>&1 | filecheck %s
// RUN: rev-opt %s -p rev-lower-to-std,rev-gpu-outline | not rev-opt - -p rev-gpu-outline 2>&1 | filecheck %s --check-prefix=PRINTED

// The pass runs once on a module: a second run, however its kernels are
// chosen, is refused at the gpu.module the first one made, which stands
// where the first function it holds comes from. Before, a second run gave
// xDSL's unlocated redefinition of @module_kernels, or refused a kernel's
// host function as no lowered function.
// CHECK-NOT: Traceback
// CHECK:     {{^}}{{.*}}outline_twice.mlir: error: 'gpu.module' at {{.*}}outline_twice.mlir:[[# @LINE + 4]]:1: rev-gpu-outline has run on this module already: @module_kernels holds its kernels (outline once, naming every kernel){{$}}
// CHECK-NOT: {{.}}
// PRINTED:   {{^}}stdin: error: 'gpu.module' at stdin:{{[0-9]+}}:3: rev-gpu-outline has run on this module already: @module_kernels holds its kernels (outline once, naming every kernel){{$}}

func.func @scale(%y: memref<?xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %old = memref.atomic_rmw addf %a, %y[%i] : (f64, memref<?xf64>) -> f64
    scf.reduce
  }
  func.return %a : f64
}
