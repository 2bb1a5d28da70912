// RUN: rev-opt %s -p ad-tangent | filecheck %s
// RUN: rev-opt %s -p ad-tangent,ad-tangent | filecheck %s
// RUN: rev-opt %s -p ad-tangent | rev-opt -p rev-verify | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s --check-prefix=ROUNDTRIP

// ad-tangent replaces each `ad.tangent @f` by `rev.func @f.tan`, inserted
// right after @f.  @f.tan takes f's arguments, then one tangent per argument
// that carries a derivative (floats by value, float memrefs as shadow tangent
// arrays); it returns f's results, then the tangents of its scalar results.
// Its body is f's body run forward, each instruction followed by its tangent
// update: `y += e` gives `ẏ += ė`, ė being the forward derivative of the
// expression e.  Running the pass twice changes nothing, and the result is a
// verified reversible function.

// ROUNDTRIP: ad.tangent @two
// ROUNDTRIP: ad.hessian @two

// y += a * b;  y -= a * a: the shared read `a * a` gives 2·a·ȧ.
rev.func @two(%y: f64, %a: f64, %b: f64) {
  %t = arith.mulf %a, %b : f64
  %y1 = rev.add %y, %t : f64
  %s = arith.mulf %a, %a : f64
  %y2 = rev.sub %y1, %s : f64
  rev.return %y2, %a, %b : f64, f64, f64
}
ad.tangent @two

// CHECK-NOT:   ad.tangent
// CHECK-LABEL: rev.func @two(%y: f64, %a: f64, %b: f64) {
// CHECK:         rev.return %y2, %a, %b : f64, f64, f64
// CHECK-NEXT:  }
// CHECK-NEXT:  rev.func @two.tan(%y: f64, %a: f64, %b: f64, %d_y: f64, %d_a: f64, %d_b: f64) {
// CHECK-NEXT:    %[[DA:.*]] = arith.mulf %d_a, %b : f64
// CHECK-NEXT:    %[[DB:.*]] = arith.mulf %d_b, %a : f64
// CHECK-NEXT:    %[[DT:.*]] = arith.addf %[[DA]], %[[DB]] : f64
// CHECK-NEXT:    %t = arith.mulf %a, %b : f64
// CHECK-NEXT:    %y1 = rev.add %y, %t : f64
// CHECK-NEXT:    %d_y1 = rev.add %d_y, %[[DT]] : f64
// CHECK-NEXT:    %[[S1:.*]] = arith.mulf %d_a, %a : f64
// CHECK-NEXT:    %[[S2:.*]] = arith.mulf %d_a, %a : f64
// CHECK-NEXT:    %[[DS:.*]] = arith.addf %[[S1]], %[[S2]] : f64
// CHECK-NEXT:    %s = arith.mulf %a, %a : f64
// CHECK-NEXT:    %y2 = rev.sub %y1, %s : f64
// CHECK-NEXT:    %d_y2 = rev.sub %d_y1, %[[DS]] : f64
// CHECK-NEXT:    rev.return %y2, %a, %b, %d_y2, %d_a, %d_b : f64, f64, f64, f64, f64, f64
// CHECK-NEXT:  }

// Arrays have shadow tangent arrays: a taken element's tangent is taken from
// the shadow (unchecked: the check on the value covers it), a loaded
// element's tangent is loaded from it.  An ancilla allocated with a value
// gets that value's tangent; freeing it frees its tangent (unchecked).  A
// rotation rotates the tangents and adds the angle's tangent; integers carry
// none.
rev.func @kinds(%y: f64, %a: f64, %m: memref<2xf64>, %n: i64) {
  %c0 = arith.constant 0 : index
  %e = rev.take %m[%c0] : memref<2xf64>
  %s = math.sin %a : f64
  %e1 = rev.add %e, %s : f64
  rev.put %e1, %m[%c0] : memref<2xf64>
  %c1 = arith.constant 1 : index
  %v = memref.load %m[%c1] : memref<2xf64>
  %t = anc.alloc %v : f64
  %y1 = rev.add %y, %t : f64
  %t1 = rev.sub %t, %v : f64
  %v2 = memref.load %m[%c0] : memref<2xf64>
  %zero = arith.constant 0.0 : f64
  anc.free %t1, %zero : f64
  %a1, %y2 = rev.rot %a, %y1, %v2 : f64
  %n1 = rev.inc %n : i64
  rev.return %y2, %a1, %n1 : f64, f64, i64
}
ad.tangent @kinds

// CHECK-LABEL: rev.func @kinds.tan(%y: f64, %a: f64, %m: memref<2xf64>, %n: i64, %d_y: f64, %d_a: f64, %d_m: memref<2xf64>) {
// CHECK:         %e = rev.take %m[%c0] : memref<2xf64>
// CHECK-NEXT:    %d_e = rev.take %d_m[%c0] {nocheck} : memref<2xf64>
// CHECK-NEXT:    %[[COS:.*]] = math.cos %a : f64
// CHECK-NEXT:    %[[DS:.*]] = arith.mulf %d_a, %[[COS]] : f64
// CHECK:         %d_e1 = rev.add %d_e, %[[DS]] : f64
// CHECK-NEXT:    rev.put %e1, %m[%c0] : memref<2xf64>
// CHECK-NEXT:    rev.put %d_e1, %d_m[%c0] {nocheck} : memref<2xf64>
// CHECK:         %[[DV:.*]] = memref.load %d_m[%c1] : memref<2xf64>
// CHECK:         %t = anc.alloc %v : f64
// CHECK-NEXT:    %d_t = anc.alloc %[[DV]] {nocheck} : f64
// CHECK:         %d_y1 = rev.add %d_y, %d_t : f64
// CHECK:         %d_t1 = rev.sub %d_t, %[[DV]] : f64
// CHECK:         anc.free %t1, %zero : f64
// CHECK-NEXT:    anc.free %d_t1, %{{.*}} {nocheck} : f64
// CHECK-NEXT:    %[[DTHETA:.*]] = memref.load %d_m[%c0] : memref<2xf64>
// CHECK-NEXT:    %v2 = memref.load %m[%c0] : memref<2xf64>
// CHECK-NEXT:    %a1, %y2 = rev.rot %a, %y1, %v2 : f64
// CHECK-NEXT:    %[[RA:.*]], %[[RB:.*]] = rev.rot %d_a, %d_y1, %v2 : f64
// CHECK-NEXT:    %[[BY_B:.*]] = arith.mulf %[[DTHETA]], %y2 : f64
// CHECK-NEXT:    %[[BY_A:.*]] = arith.mulf %[[DTHETA]], %a1 : f64
// CHECK-NEXT:    %d_a1 = rev.sub %[[RA]], %[[BY_B]] : f64
// CHECK-NEXT:    %d_y2 = rev.add %[[RB]], %[[BY_A]] : f64
// CHECK-NEXT:    %n1 = rev.inc %n : i64
// CHECK-NEXT:    rev.return %y2, %a1, %n1, %d_y2, %d_a1 : f64, f64, i64, f64, f64

// Loops carry the tangents of their state; calls call the callee's tangent,
// which is generated too (after the callee).
rev.func @loop(%y: f64, %x: f64) {
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %st = arith.constant 1 : index
  %y1 = rev.for %lb to %ub step %st : index (%y) : f64 {
  ^bb0(%i: index, %p: f64):
    %q = arith.mulf %x, %x : f64
    %p1 = rev.add %p, %q : f64
    rev.yield %p1 : f64
  }
  %y2, %x1 = rev.uncall @shift(%y1, %x) : (f64, f64) -> (f64, f64)
  rev.return %y2, %x1 : f64, f64
}
rev.func @shift(%z: f64, %w: f64) {
  %z1 = rev.add %z, %w : f64
  rev.return %z1, %w : f64, f64
}
ad.tangent @loop
ad.hessian @two

// CHECK-LABEL: rev.func @loop.tan(%y: f64, %x: f64, %d_y: f64, %d_x: f64) {
// CHECK:         %y1, %d_y1 = rev.for %lb to %ub step %st : index (%y, %d_y) : f64, f64 {
// CHECK-NEXT:    ^bb0(%i: index, %p: f64, %d_p: f64):
// CHECK:           %d_p1 = rev.add %d_p, %{{.*}} : f64
// CHECK-NEXT:      rev.yield %p1, %d_p1 : f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = rev.call @shift.inv.tan(%y1, %x, %d_y1, %d_x) : (f64, f64, f64, f64) -> (f64, f64, f64, f64)
// CHECK-LABEL: rev.func @shift(
// CHECK-LABEL: rev.func @shift.inv(
// CHECK-LABEL: rev.func @shift.inv.tan(%z: f64, %w: f64, %d_z: f64, %d_w: f64) {
// CHECK:         %d_z{{.*}} = rev.sub %d_z, %d_w : f64
