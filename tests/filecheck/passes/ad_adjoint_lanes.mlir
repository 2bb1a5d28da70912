// RUN: rev-opt %s -p 'ad-adjoint{functions=sum lanes=2}' | filecheck %s
// RUN: rev-opt %s -p 'ad-adjoint{functions=sum lanes=2},ad-adjoint{functions=sum lanes=2}' | filecheck %s
// RUN: rev-opt %s -p 'ad-adjoint{functions=sum lanes=2}' | rev-opt -p rev-verify | filecheck %s
// RUN: not rev-opt %s -p 'ad-adjoint{functions=sum lanes=0}' 2>&1 | filecheck %s --check-prefix=ZERO

// Reverse mode's vector mode: `lanes=L` gives @f.adjL, which carries L
// gradients per value (L vector-Jacobian products in one backward run: the
// primal values are uncomputed once for all of them).  Its arguments are f's
// (holding f's outputs), then lane 0's gradients (as @f.adj takes them),
// lane 1's, and so on; its results f's inputs, then lane 0's input
// gradients, lane 1's.  Each instruction's gradient updates are emitted once
// per lane, all before its single inverse step; loops and calls carry every
// lane, and call the callee's adjoint with as many lanes.

rev.func @scale(%y: f64, %a: f64) {
  %t = arith.mulf %a, %a : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %a : f64, f64
}

rev.func @sum(%y: f64, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = rev.for %c0 to %n step %c1 : index (%y) : f64 {
  ^bb0(%i: index, %acc: f64):
    %e = rev.take %x[%i] : memref<?xf64>
    %s, %e2 = rev.call @scale(%acc, %e) : (f64, f64) -> (f64, f64)
    rev.put %e2, %x[%i] : memref<?xf64>
    rev.yield %s : f64
  }
  rev.return %r : f64
}


// CHECK-LABEL: rev.func @scale.adj2(%y: f64, %a: f64, %g_y: f64, %g_a: f64, %g_y_1: f64, %g_a_1: f64) {
// CHECK:         %{{.*}} = arith.mulf %g_y, %a : f64
// CHECK:         %g_a_2 = rev.add %g_a, %{{.*}} : f64
// CHECK:         %{{.*}} = arith.mulf %g_y_1, %a : f64
// CHECK:         %g_a_3 = rev.add %g_a_1, %{{.*}} : f64
// CHECK-NEXT:    %t = arith.mulf %a, %a : f64
// CHECK-NEXT:    %y_1 = rev.sub %y, %t : f64
// CHECK-NEXT:    rev.return %y_1, %a, %g_y, %g_a_2, %g_y_1, %g_a_3 : f64, f64, f64, f64, f64, f64
// CHECK-NOT:     rev.sub
// CHECK-LABEL: rev.func @sum.adj2(%y: f64, %x: memref<?xf64>, %g_y: f64, %g_x: memref<?xf64>, %g_y_1: f64, %g_x_1: memref<?xf64>) {
// CHECK:         %y_1, %[[G0:.*]], %[[G1:.*]] = rev.for reverse %{{.*}} to %n step %{{.*}} : index (%y, %g_y, %g_y_1) : f64, f64, f64 {
// CHECK-NEXT:    ^bb0(%i: index, %s: f64, %g_s: f64, %g_s_1: f64):
// CHECK-NEXT:      %e2 = rev.take %x[%i] : memref<?xf64>
// CHECK-NEXT:      %g_e2 = rev.take %g_x[%i] : memref<?xf64>
// CHECK-NEXT:      %g_e2_1 = rev.take %g_x_1[%i] : memref<?xf64>
// CHECK-NEXT:      %acc, %e, %g_acc, %g_e, %g_acc_1, %g_e_1 = rev.call @scale.adj2(%s, %e2, %g_s, %g_e2, %g_s_1, %g_e2_1)
// CHECK-NEXT:      rev.put %e, %x[%i] : memref<?xf64>
// CHECK-NEXT:      rev.put %g_e, %g_x[%i] : memref<?xf64>
// CHECK-NEXT:      rev.put %g_e_1, %g_x_1[%i] : memref<?xf64>
// CHECK-NEXT:      rev.yield %acc, %g_acc, %g_acc_1 : f64, f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    rev.return %y_1, %[[G0]], %[[G1]] : f64, f64, f64
// CHECK-NOT:   rev.func @sum.adj(

// ZERO: error: vector mode carries at least one derivative per value (lanes ≥ 1), not 0
