// RUN: rev-translate %s --emit=ptx | filecheck %s

// A function with the kernel's form that another function calls is a device
// function of the whole module's PTX, its parallel loop run in order by the
// calling thread; one that nothing calls stays a kernel.
// CHECK-NOT:   .entry inc(
// CHECK-DAG:   .visible .func inc(
// CHECK-DAG:   .visible .func inc_$_inv(
// CHECK-DAG:   .visible .func twice(
// CHECK-DAG:   .visible .entry launched(

rev.func @inc(%x: memref<4xi64>) {
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %st = arith.constant 1 : index
  rev.for parallel %lb to %ub step %st : index () {
  ^bb0(%i: index):
    %e = rev.take %x[%i] : memref<4xi64>
    %y = rev.inc %e : i64
    rev.put %y, %x[%i] : memref<4xi64>
    rev.yield
  }
  rev.return
}

rev.func @twice(%x: memref<4xi64>) {
  rev.call @inc(%x) : (memref<4xi64>) -> ()
  rev.call @inc(%x) : (memref<4xi64>) -> ()
  rev.return
}

rev.func @launched(%x: memref<4xi64>) {
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %st = arith.constant 1 : index
  rev.for parallel %lb to %ub step %st : index () {
  ^bb0(%i: index):
    %e = rev.take %x[%i] : memref<4xi64>
    %y = rev.dec %e : i64
    rev.put %y, %x[%i] : memref<4xi64>
    rev.yield
  }
  rev.return
}
