// RUN: rev-opt %s -p convert-std-to-llvm --verify-diagnostics --split-input-file

// Native code runs the std-level form a parallel rev.for lowers to: a
// one-dimensional scf.parallel without reductions, and atomic adds. Other
// forms are reported where they are.

func.func @two_dimensions(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error-re @+1 {{'scf.parallel' at {{.*}}: only one-dimensional scf.parallel loops without reductions can be lowered (a parallel rev.for lowers to one)}}
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    scf.reduce
  }
  func.return
}

// -----

func.func @maximum(%m: memref<4xi64>, %v: i64, %j: index) {
  // expected-error-re @+1 {{'memref.atomic_rmw' at {{.*}}: only atomic_rmw addf and addi can be lowered, not kind 4}}
  %old = memref.atomic_rmw maxs %v, %m[%j] : (i64, memref<4xi64>) -> i64
  func.return
}
