// RUN: rev-opt %s -p 'ad-adjoint{functions=k}' | filecheck %s
// RUN: rev-opt %s -p 'ad-adjoint{functions=k},rev-lower-to-std' | filecheck %s --check-prefix=STD

// A call inside a parallel loop that reads a shared array whole: y[i] +=
// Σ_j sin(x[j]) x[i] through @dot_row. Its adjoint passes the whole gradient
// array %g_x to @dot_row.adj, which only accumulates into it: the parallel
// rule admits that (the callee's accumulations are shared accumulations),
// and the lowering makes the callee's accumulations into %g_x atomic, since
// every iteration runs them at once. @dot_row itself, which writes no array,
// and the private gradient %g_y stay plain loads and stores.

// CHECK-LABEL: rev.func @k.adj(%y: memref<?xf64>, %x: memref<?xf64>, %n: index, %g_y: memref<?xf64>, %g_x: memref<?xf64>) {
// CHECK:         rev.for parallel reverse %c0 to %n step %c1 : index () {
// CHECK:           %g_v2 = rev.take %g_y[%i] : memref<?xf64>
// CHECK-NEXT:      %v, %ci, %g_v = rev.call @dot_row.adj(%v2, %x, %ci2, %g_v2, %g_x) : (f64, memref<?xf64>, index, f64, memref<?xf64>) -> (f64, index, f64)

// STD-LABEL: func.func @dot_row(
// STD-NOT:     memref.atomic_rmw
// STD-LABEL: func.func @dot_row.adj(
// STD:         scf.for
// STD:           memref.atomic_rmw addf %{{.*}}, %g_x[%i] : (f64, memref<?xf64>) -> f64
// STD:           memref.atomic_rmw addf %{{.*}}, %g_x[%j] : (f64, memref<?xf64>) -> f64
// STD-LABEL: func.func @k.adj(
// STD:         scf.parallel (%i) = (%c0) to (%n) step (%c1) {
// STD:           %g_v2 = memref.load %g_y[%i] : memref<?xf64>
// STD-NEXT:      %{{.*}} = func.call @dot_row.adj(%v2, %x, %i, %g_v2, %g_x, %err)
// STD-NEXT:      memref.store %v, %y[%i] : memref<?xf64>
// STD-NEXT:      memref.store %g_v, %g_y[%i] : memref<?xf64>
// STD-NOT:     memref.atomic_rmw
// STD:         func.return
rev.func @dot_row(%acc: f64, %x: memref<?xf64>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %xi = memref.load %x[%i] : memref<?xf64>
  %acc2 = rev.for %c0 to %n step %c1 : index (%acc) : f64 {
  ^bb0(%j: index, %a: f64):
    %xj = memref.load %x[%j] : memref<?xf64>
    %s = math.sin %xj : f64
    %p = arith.mulf %s, %xi : f64
    %a2 = rev.add %a, %p : f64
    rev.yield %a2 : f64
  }
  rev.return %acc2, %i : f64, index
}

rev.func @k(%y: memref<?xf64>, %x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %ci = anc.alloc %i : index
    %v = rev.take %y[%i] : memref<?xf64>
    %v2, %ci2 = rev.call @dot_row(%v, %x, %ci) : (f64, memref<?xf64>, index) -> (f64, index)
    rev.put %v2, %y[%i] : memref<?xf64>
    anc.free %ci2, %i : index
    rev.yield
  }
  rev.return %n : index
}
