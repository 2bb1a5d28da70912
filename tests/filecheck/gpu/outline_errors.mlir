// RUN: rev-opt %s -p rev-lower-to-std,rev-gpu-outline --verify-diagnostics --split-input-file
// RUN: not rev-opt %s -p 'rev-lower-to-std,rev-gpu-outline{kernels=nosuch}' --split-input-file 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not rev-opt %s -p 'rev-lower-to-std,rev-gpu-outline{kernels=plain,plain}' --split-input-file 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not rev-opt %s -p 'rev-gpu-outline{kernels=plain}' --split-input-file 2>&1 | filecheck %s --check-prefix=UNLOWERED
// RUN: not rev-opt %s -p 'rev-lower-to-std,rev-gpu-outline{kernels=plain}' --split-input-file 2>&1 | filecheck %s --check-prefix=PLAIN

// What breaks the kernel rule (docs/gpu.md) is an error at the op.

// NAME: error: no function @nosuch to make a kernel of (module has: @plain)
// TWICE: error: kernel @plain is named twice (kernels: @plain, @plain)
// UNLOWERED: error: 'func.func' at {{.*}}outline_errors.mlir:[[# @LINE + 3]]:1: @plain is not a kernel function: it is not a lowered reversible function (its last argument must be the error slot memref<6xi64>)

// PLAIN: error: 'func.func' at {{.*}}outline_errors.mlir:[[# @LINE + 1]]:1: @plain is not a kernel function: its body has no top-level scf.parallel
func.func @plain(%y: memref<?xf64>) {
  func.return
}

// -----

func.func @two_loops(%y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  }
  // expected-error-re @+1 {{'scf.parallel' at {{.*}}: @two_loops is not a kernel function: it has 2 top-level parallel loops (one launch runs one)}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  }
  func.return
}

// -----

func.func @top_level_write(%y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %y, %c0 : memref<?xf64>
  // expected-error-re @+1 {{'memref.store' at {{.*}}: @top_level_write is not a kernel function: it writes an array outside its parallel loop, which every thread would do}}
  memref.store %z, %y[%c0] : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  }
  func.return
}

// -----

func.func @g(%y: memref<?xf64>) {
  func.return
}

func.func @top_level_call(%y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  // expected-error-re @+1 {{'func.call' at {{.*}}: @top_level_call is not a kernel function: it calls @g outside its parallel loop, which every thread would do}}
  func.call @g(%y) : (memref<?xf64>) -> ()
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  }
  func.return
}

// -----

func.func @changed_scalar(%y: memref<?xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  }
  %b = arith.addf %a, %a : f64
  // expected-error-re @+1 {{'func.return' at {{.*}}: @changed_scalar is not a kernel function: it returns a new value of its scalar argument %a (a kernel returns nothing)}}
  func.return %b : f64
}

// -----

func.func @returns_a_value(%y: memref<?xf64>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  }
  // expected-error-re @+1 {{'func.return' at {{.*}}: @returns_a_value is not a kernel function: it returns 1 value(s) and takes 0 scalar argument(s) (a kernel returns nothing, or its scalar arguments unchanged)}}
  func.return %n : index
}

// -----

func.func @two_dimensional(%y: memref<?x?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?x?xf64>
  // expected-error-re @+1 {{'scf.parallel' at {{.*}}: a kernel's parallel loop must be one-dimensional without reductions}}
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    scf.reduce
  }
  func.return
}

// -----

func.func @kernel(%y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  }
  func.return
}

func.func @caller(%y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    // expected-error-re @+1 {{'func.call' at {{.*}}: kernel @kernel is called from GPU code; a kernel is launched, not called (call a function it calls instead)}}
    func.call @kernel(%y) : (memref<?xf64>) -> ()
    scf.reduce
  }
  func.return
}
