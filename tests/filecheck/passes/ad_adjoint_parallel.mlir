// RUN: rev-opt %s -p 'ad-adjoint{functions=k}' | filecheck %s
// RUN: rev-opt %s -p 'ad-adjoint{functions=k},rev-lower-to-std' | filecheck %s --check-prefix=STD

// The adjoint of a parallel loop is parallel (and reversed, as any rev.for's).
// The private write y[i] += p reads its gradient privately; the shared read
// x[j] becomes a shared accumulation into g_x; the outer scalar %a, whose
// gradient every iteration adds to, gets a one-element array swapped in
// before the loop and out after it (it is freed holding an exact zero).

// CHECK-LABEL: rev.func @k.adj(
// CHECK:         %g_a_sum = anc.array_alloc() : memref<1xf64>
// CHECK-NEXT:    %[[EMPTY:.*]] = rev.take %g_a_sum[%[[C0:.*]]] : memref<1xf64>
// CHECK-NEXT:    %[[IN:.*]], %[[ZERO:.*]] = rev.swap %[[EMPTY]], %g_a : f64
// CHECK-NEXT:    rev.put %[[IN]], %g_a_sum[%[[C0]]] : memref<1xf64>
// CHECK-NEXT:    rev.for parallel reverse %c0 to %n step %c1 : index () {
// CHECK-NEXT:    ^bb0(%i: index):
// CHECK-NEXT:      %[[SUM:.*]] = rev.take %g_a_sum[%[[C0]]] : memref<1xf64>
// CHECK:           %j = memref.load %idx[%i] : memref<?xindex>
// CHECK:           %[[GX:.*]] = rev.take %g_x[%j] {nocheck} : memref<?xf64>
// CHECK-NEXT:      %{{.*}} = rev.add %[[GX]], %{{.*}} : f64
// CHECK-NEXT:      rev.put %{{.*}}, %g_x[%j] : memref<?xf64>
// CHECK-NEXT:      %[[SUM1:.*]] = rev.add %[[SUM]], %{{.*}} : f64
// CHECK:           %g_v1 = rev.take %g_y[%i] : memref<?xf64>
// CHECK:           rev.put %[[SUM1]], %g_a_sum[%[[C0]]] : memref<1xf64>
// CHECK-NEXT:      rev.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[TOTAL:.*]] = rev.take %g_a_sum[%[[C0]]] : memref<1xf64>
// CHECK-NEXT:    %[[OUT:.*]], %g_a_3 = rev.swap %[[TOTAL]], %[[ZERO]] : f64
// CHECK-NEXT:    rev.put %[[OUT]], %g_a_sum[%[[C0]]] : memref<1xf64>
// CHECK-NEXT:    anc.array_free %g_a_sum() : memref<1xf64>
// CHECK-NEXT:    rev.return %a, %n, %g_a_3 : f64, index, f64

// Lowered, the shared sum and the gathered gradient are atomic adds; the
// private gradient is loaded and stored.
// STD-LABEL: func.func @k.adj(
// STD:         scf.parallel (%i) = (%c0) to (%n) step (%c1) {
// STD-DAG:       memref.atomic_rmw addf %{{.*}}, %g_x[%j] : (f64, memref<?xf64>) -> f64
// STD-DAG:       memref.atomic_rmw addf %{{.*}}, %g_a_sum[%{{.*}}] : (f64, memref<1xf64>) -> f64
// STD-DAG:       %g_v1 = memref.load %g_y[%i] : memref<?xf64>
// STD:           scf.reduce
rev.func @k(%x: memref<?xf64>, %y: memref<?xf64>, %idx: memref<?xindex>, %g: memref<?xf64>, %a: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xf64>
    %l = math.log %xi : f64
    %s = math.sin %xi : f64
    %p = arith.mulf %l, %s : f64
    %v = rev.take %y[%i] : memref<?xf64>
    %v1 = rev.add %v, %p : f64
    rev.put %v1, %y[%i] : memref<?xf64>
    %j = memref.load %idx[%i] : memref<?xindex>
    %xj = memref.load %x[%j] : memref<?xf64>
    %q = arith.mulf %xj, %a : f64
    %w = rev.take %g[%i] : memref<?xf64>
    %w1 = rev.add %w, %q : f64
    rev.put %w1, %g[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %a, %n : f64, index
}
