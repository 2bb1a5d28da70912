// RUN: rev-opt %s -p 'ad-tangent{functions=sum lanes=2}' | filecheck %s
// RUN: rev-opt %s -p 'ad-tangent{functions=sum lanes=2},ad-tangent{functions=sum lanes=2}' | filecheck %s
// RUN: rev-opt %s -p 'ad-tangent{functions=sum lanes=2}' | rev-opt -p rev-verify | filecheck %s
// RUN: rev-opt %s -p 'ad-jacobian{functions=sum lanes=3}' | filecheck %s --check-prefix=JAC
// RUN: rev-opt %s -p 'ad-hessian{functions=scale lanes=2}' | filecheck %s --check-prefix=HESS
// RUN: not rev-opt %s -p 'ad-tangent{functions=sum lanes=0}' 2>&1 | filecheck %s --check-prefix=ZERO

// Vector mode: `lanes=L` gives @f.tanL, which carries L tangents per value
// (L directional derivatives in one run, sharing f's own computation).  Its
// arguments are f's, then lane 0's tangents (as @f.tan takes them), lane 1's,
// and so on; its results likewise.  Each instruction is copied once and its
// tangent update emitted once per lane; loops and calls carry every lane,
// and call the callee's tangent program with as many lanes.

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

// CHECK-LABEL: rev.func @scale.tan2(%y: f64, %a: f64, %d_y: f64, %d_a: f64, %d_y_1: f64, %d_a_1: f64) {
// CHECK:         %y1 = rev.add %y, %t : f64
// CHECK-NEXT:    %d_y1 = rev.add %d_y, %{{.*}} : f64
// CHECK:         %d_y1_1 = rev.add %d_y_1, %{{.*}} : f64
// CHECK-NEXT:    rev.return %y1, %a, %d_y1, %d_a, %d_y1_1, %d_a_1 : f64, f64, f64, f64, f64, f64
// CHECK-LABEL: rev.func @sum.tan2(%y: f64, %x: memref<?xf64>, %d_y: f64, %d_x: memref<?xf64>, %d_y_1: f64, %d_x_1: memref<?xf64>) {
// CHECK:         %r, %d_r, %d_r_1 = rev.for %{{.*}} to %n step %{{.*}} : index (%y, %d_y, %d_y_1) : f64, f64, f64 {
// CHECK-NEXT:    ^bb0(%i: index, %acc: f64, %d_acc: f64, %d_acc_1: f64):
// CHECK-NEXT:      %e = rev.take %x[%i] : memref<?xf64>
// CHECK-NEXT:      %d_e = rev.take %d_x[%i] {nocheck} : memref<?xf64>
// CHECK-NEXT:      %d_e_1 = rev.take %d_x_1[%i] {nocheck} : memref<?xf64>
// CHECK-NEXT:      %s, %e2, %d_s, %d_e2, %d_s_1, %d_e2_1 = rev.call @scale.tan2(%acc, %e, %d_acc, %d_e, %d_acc_1, %d_e_1)
// CHECK-NEXT:      rev.put %e2, %x[%i] : memref<?xf64>
// CHECK-NEXT:      rev.put %d_e2, %d_x[%i] {nocheck} : memref<?xf64>
// CHECK-NEXT:      rev.put %d_e2_1, %d_x_1[%i] {nocheck} : memref<?xf64>
// CHECK-NEXT:      rev.yield %s, %d_s, %d_s_1 : f64, f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    rev.return %r, %d_r, %d_r_1 : f64, f64, f64
// CHECK-NOT:   rev.func @sum.tan(

// The Jacobian runs @sum.tan3 once per three columns (one tangent workspace
// per array argument and lane); a lane past the last column recomputes the
// first column of its run, is not gathered, and has its slots zeroed
// unchecked and forgetful (they may hold an infinite tangent).
// JAC-LABEL: rev.func @sum.jacobian(%a0: f64, %a1: memref<?xf64>, %C: memref<?x?xf64>, %t0_a1: memref<?xf64>, %t1_a1: memref<?xf64>, %t2_a1: memref<?xf64>) {
// JAC:         rev.for %{{.*}} to %{{.*}} step %{{.*}}
// JAC:           rev.call @sum.tan3(
// JAC:           rev.if
// JAC:           rev.uncall @sum(
// JAC:           anc.free %spent{{.*}} {nocheck, rev.forgetful}

// HESS: rev.func @scale.tan2(
// HESS: rev.func @scale.adj(
// HESS: rev.func @scale.adj.tan2(%y: f64, %a: f64, %g_y: f64, %g_a: f64, %d_y: f64, %d_a: f64, %d_g_y: f64, %d_g_a: f64, %d_y_1: f64, %d_a_1: f64, %d_g_y_1: f64, %d_g_a_1: f64)

// ZERO: error: vector mode carries at least one derivative per value (lanes ≥ 1), not 0
