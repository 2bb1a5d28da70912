// RUN: rev-opt %s -p ad-adjoint | filecheck %s
// RUN: rev-opt %s -p ad-adjoint | rev-opt -p rev-verify | filecheck %s --check-prefix=VERIFIED

// Arrays and stacks of floats carry *shadows*: a memref (stack) of gradients
// of the same type, passed to @f.adj after the scalar gradients' positions in
// argument order and updated in place.  A borrowed element's gradient is
// borrowed from the shadow beside it (rev.put's adjoint takes both, rev.take's
// adjoint puts both back); an element read inside an expression adds its
// contribution to the shadow element; a stack's shadow receives the
// gradients of the values moved onto it.

// y[i] += x[i] * a
rev.func @axpy(%y: memref<?xf64>, %x: memref<?xf64>, %a: f64, %i: index) {
  %e = rev.take %y[%i] : memref<?xf64>
  %v = memref.load %x[%i] : memref<?xf64>
  %p = arith.mulf %v, %a : f64
  %e1 = rev.add %e, %p : f64
  rev.put %e1, %y[%i] : memref<?xf64>
  rev.return %a, %i : f64, index
}
ad.adjoint @axpy

// CHECK-LABEL: rev.func @axpy.adj(%y: memref<?xf64>, %x: memref<?xf64>, %a: f64, %i: index, %g_y: memref<?xf64>, %g_x: memref<?xf64>, %g_a: f64) {
// CHECK-NEXT:    %e1 = rev.take %y[%i] : memref<?xf64>
// CHECK-NEXT:    %g_e1 = rev.take %g_y[%i] : memref<?xf64>
// CHECK-NEXT:    %[[GV:.*]] = arith.mulf %g_e1, %a : f64
// CHECK-NEXT:    %v = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:    %[[GP:.*]] = arith.mulf %g_e1, %v : f64
// CHECK-NEXT:    %[[SX:.*]] = rev.take %g_x[%i] {nocheck} : memref<?xf64>
// CHECK-NEXT:    %[[SX1:.*]] = rev.add %[[SX]], %[[GV]] : f64
// CHECK-NEXT:    rev.put %[[SX1]], %g_x[%i] : memref<?xf64>
// CHECK-NEXT:    %g_a_1 = rev.add %g_a, %[[GP]] : f64
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %v, %a : f64
// CHECK-NEXT:    %[[E:.*]] = rev.sub %e1, %[[P]] : f64
// CHECK-NEXT:    rev.put %[[E]], %y[%i] : memref<?xf64>
// CHECK-NEXT:    rev.put %g_e1, %g_y[%i] : memref<?xf64>
// CHECK-NEXT:    rev.return %a, %i, %g_a_1 : f64, index, f64
// CHECK-NEXT:  }

// x is parked on a stack and taken back before y += x * x: its gradient takes
// the same trip on the shadow stack, which is born and released with the
// stack.
rev.func @park(%x: f64, %y: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.push %s, %x : !anc.stack<f64>
  %x1 = anc.pop %s : !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  %sq = arith.mulf %x1, %x1 : f64
  %y1 = rev.add %y, %sq : f64
  rev.return %x1, %y1 : f64, f64
}
ad.adjoint @park

// CHECK-LABEL: rev.func @park.adj(%x: f64, %y: f64, %g_x: f64, %g_y: f64) {
// CHECK:         %g_x1 = rev.add %g_x, %{{.*}} : f64
// CHECK:         %s = anc.stack_alloc : !anc.stack<f64>
// CHECK-NEXT:    %g_s = anc.stack_alloc : !anc.stack<f64>
// CHECK-NEXT:    anc.push %s, %x : !anc.stack<f64>
// CHECK-NEXT:    anc.push %g_s, %g_x1 : !anc.stack<f64>
// CHECK-NEXT:    %x_1 = anc.pop %s : !anc.stack<f64>
// CHECK-NEXT:    %g_x_1 = anc.pop %g_s : !anc.stack<f64>
// CHECK-NEXT:    anc.stack_free %s : !anc.stack<f64>
// CHECK-NEXT:    anc.stack_free %g_s : !anc.stack<f64>
// CHECK-NEXT:    rev.return %x_1, %y_1, %g_x_1, %g_y : f64, f64, f64, f64

// VERIFIED: rev.func @axpy.adj
// VERIFIED: rev.func @park.adj
