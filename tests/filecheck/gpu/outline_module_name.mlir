// RUN: rev-opt %s -p rev-lower-to-std,rev-gpu-outline --verify-diagnostics

// A function named as the kernels' gpu.module would be redefined by it:
// refused at the function, not by xDSL's unlocated redefinition.
// expected-error-re @+1 {{'func.func' at {{.*}}: @module_kernels is the name rev-gpu-outline gives the kernels' gpu.module: rename it}}
func.func @module_kernels(%x: f64) -> f64 {
  func.return %x : f64
}

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
