// RUN: rev-translate %s --emit=ptx | filecheck %s

// A compile moves the kernels' callees into their gpu.module: a function
// of the program named as that module (@module_kernels) does not stay
// beside it, so the name is the program's to use (rev-gpu-outline, which
// keeps the host's copy, refuses it: outline_module_name.mlir).
// CHECK: .func {{.*}}module_kernels
// CHECK: .entry scale(

rev.func @module_kernels(%e: i64) {
  %y = rev.inc %e : i64
  rev.return %y : i64
}

rev.func @scale(%x: memref<4xi64>) {
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %st = arith.constant 1 : index
  rev.for parallel %lb to %ub step %st : index () {
  ^bb0(%i: index):
    %e = rev.take %x[%i] : memref<4xi64>
    %y = rev.call @module_kernels(%e) : (i64) -> i64
    rev.put %y, %x[%i] : memref<4xi64>
    rev.yield
  }
  rev.return
}
