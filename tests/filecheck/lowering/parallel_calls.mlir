// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s

// A parallel loop may pass a whole array to a callee that only accumulates
// into it (here through a second callee, or run backwards): the iterations
// then accumulate into it at once, so the lowering makes every accumulation
// that the argument reaches atomic, in @twice, @add_at and the inverse
// @add_at.inv that the uncall runs. An array allocated
// inside the body is private to an iteration: passed to @local, it keeps
// plain loads and stores there.

// CHECK-LABEL: func.func @add_at(%g: memref<?xf64>, %j: index, %v: f64, %err: memref<6xi64>) -> (index, f64) {
// CHECK-NOT:     memref.load %g
// CHECK:         %{{.*}} = memref.atomic_rmw addf %v, %g[%j] : (f64, memref<?xf64>) -> f64
// CHECK-NEXT:    func.return %j, %v : index, f64
rev.func @add_at(%g: memref<?xf64>, %j: index, %v: f64) {
  %e = rev.take %g[%j] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %g[%j] : memref<?xf64>
  rev.return %j, %v : index, f64
}

// CHECK-LABEL: func.func @twice(%g: memref<?xf64>, %j: index, %v: f64, %err: memref<6xi64>) -> (index, f64) {
// CHECK:         func.call @add_at(%g, %j, %v, %err)
// CHECK:         func.call @add_at(%g,
// CHECK:         %{{.*}} = memref.atomic_rmw addf %{{.*}}, %g[%c0] : (f64, memref<?xf64>) -> f64
rev.func @twice(%g: memref<?xf64>, %j: index, %v: f64) {
  %j1, %v1 = rev.call @add_at(%g, %j, %v) : (memref<?xf64>, index, f64) -> (index, f64)
  %j2, %v2 = rev.call @add_at(%g, %j1, %v1) : (memref<?xf64>, index, f64) -> (index, f64)
  %c0 = arith.constant 0 : index
  %e = rev.take %g[%c0] : memref<?xf64>
  %e1 = rev.sub %e, %v2 : f64
  rev.put %e1, %g[%c0] : memref<?xf64>
  rev.return %j2, %v2 : index, f64
}

// CHECK-LABEL: func.func @local(%h: memref<4xf64>, %v: f64, %err: memref<6xi64>) -> f64 {
// CHECK:         %[[OLD:.*]] = memref.load %h[%c1] : memref<4xf64>
// CHECK:         %[[NEW:.*]] = arith.addf %[[OLD]], %v : f64
// CHECK-NEXT:    memref.store %[[NEW]], %h[%c1] : memref<4xf64>
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         func.return %v : f64
rev.func @local(%h: memref<4xf64>, %v: f64) {
  %c1 = arith.constant 1 : index
  %e = rev.take %h[%c1] : memref<4xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %h[%c1] : memref<4xf64>
  rev.return %v : f64
}

// CHECK-LABEL: func.func @k(
// CHECK:         scf.parallel (%i) = (%c0) to (%n) step (%c1) {
// CHECK:           func.call @twice(%g, %j, %xi, %err)
// CHECK:           func.call @add_at.inv(%g, %cj0, %cv0, %err)
// CHECK:           func.call @local(%buf, %cv1, %err)
// CHECK-NOT:       memref.atomic_rmw
// CHECK:           scf.reduce

// The uncall runs @add_at.inv, added after the module's functions: it
// subtracts, atomically too.
// CHECK-LABEL: func.func @add_at.inv(%g: memref<?xf64>, %j: index, %v: f64, %err: memref<6xi64>) -> (index, f64) attributes {rev.derived_inverse} {
// CHECK:         %[[NEG:.*]] = arith.negf %v : f64
// CHECK-NEXT:    %{{.*}} = memref.atomic_rmw addf %[[NEG]], %g[%j] : (f64, memref<?xf64>) -> f64
rev.func @k(%g: memref<?xf64>, %x: memref<?xf64>, %idx: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %j = memref.load %idx[%i] : memref<?xindex>
    %xi = memref.load %x[%i] : memref<?xf64>
    %cj = anc.alloc %j : index
    %cv = anc.alloc %xi : f64
    %cj0, %cv0 = rev.call @twice(%g, %cj, %cv) : (memref<?xf64>, index, f64) -> (index, f64)
    %cj1, %cv1 = rev.uncall @add_at(%g, %cj0, %cv0) : (memref<?xf64>, index, f64) -> (index, f64)
    %buf = anc.array_alloc() : memref<4xf64>
    %cv2 = rev.call @local(%buf, %cv1) : (memref<4xf64>, f64) -> f64
    %cv3 = rev.uncall @local(%buf, %cv2) : (memref<4xf64>, f64) -> f64
    anc.array_free %buf() : memref<4xf64>
    anc.free %cv3, %xi : f64
    anc.free %cj1, %j : index
    rev.yield
  }
  rev.return %n : index
}
