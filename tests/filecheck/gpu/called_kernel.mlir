// RUN: rev-translate %s --emit=ptx | filecheck %s
// RUN: rev-translate %s --emit=ptx | filecheck %s --check-prefix=NOENTRY
// RUN: rev-opt %s -p 'rev-lower-to-std,rev-gpu-outline{all_functions=true}' | filecheck %s --check-prefix=STD

// A function with the kernel's form that a function calls is a device
// function of the whole module's PTX, its parallel loop run in order by the
// calling thread; one that nothing calls stays a kernel.
// CHECK-DAG:   .visible .func inc(
// CHECK-DAG:   .visible .func inc_$_inv(
// CHECK-DAG:   .visible .func twice(
// CHECK-DAG:   .visible .entry launched(

// Nowhere in the PTX is `inc` an entry.
// NOENTRY-NOT: .entry inc

// In the outlined module `inc` is a plain function of the `gpu.module`, its
// loop still the `scf.parallel` the calling thread runs, and the only
// `gpu.func` is `launched`.
// STD:         "gpu.module"() <{sym_name = "module_kernels"}> ({
// STD-NEXT:      func.func @inc(
// STD:             scf.parallel
// STD:           func.func @twice(
// STD-NEXT:        func.call @inc(
// STD-NEXT:        func.call @inc(
// STD:           "gpu.func"()
// STD-NOT:       "gpu.func"()
// STD:           }) {sym_name = "launched"}
// STD-NOT:       "gpu.func"()

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
