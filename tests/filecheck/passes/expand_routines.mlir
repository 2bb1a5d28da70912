// RUN: rev-opt %s -p rev-expand-routines | filecheck %s
// RUN: rev-opt %s -p rev-expand-routines,rev-verify | filecheck %s --check-prefix=NONE

// rev-expand-routines replaces each rev.routine by its compute region, its do
// region and the inverse of its compute region, inline.  The result passes
// the verifier and has no rev.routine left.
// NONE-NOT: rev.routine

// compute: t <- 0; t += x*x; t = -t.   do: y -= t; y += x.
// ~compute: t = -t; t -= x*x; t -> 0 (the product is recomputed).
rev.func @square_into(%y: f64, %x: f64) {
  %zero = arith.constant 0.0 : f64
  %y1, %x1 = rev.routine (%y, %x) : f64, f64 compute {
  ^bb0(%cy: f64, %cx: f64):
    %t = anc.alloc %zero : f64
    %sq = arith.mulf %cx, %cx : f64
    %t1 = rev.add %t, %sq : f64
    %t2 = rev.neg %t1 : f64
    rev.yield %cy, %cx, %t2 : f64, f64, f64
  } do {
  ^bb0(%dy: f64, %dx: f64, %dt: f64):
    %dy1 = rev.sub %dy, %dt : f64
    %dy2 = rev.add %dy1, %dx : f64
    rev.yield %dy2, %dx, %dt : f64, f64, f64
  }
  rev.return %y1, %x1 : f64, f64
}
// CHECK-LABEL: rev.func @square_into(%y: f64, %x: f64) {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
//                compute
// CHECK-NEXT:    %[[T:.*]] = anc.alloc %[[ZERO]] : f64
// CHECK-NEXT:    %[[SQ:.*]] = arith.mulf %x, %x : f64
// CHECK-NEXT:    %[[T1:.*]] = rev.add %[[T]], %[[SQ]] : f64
// CHECK-NEXT:    %[[T2:.*]] = rev.neg %[[T1]] : f64
//                do
// CHECK-NEXT:    %[[DY1:.*]] = rev.sub %y, %[[T2]] : f64
// CHECK-NEXT:    %[[DY2:.*]] = rev.add %[[DY1]], %x : f64
//                ~compute
// CHECK-NEXT:    %[[T1_INV:.*]] = rev.neg %[[T2]] : f64
// CHECK-NEXT:    %[[SQ_INV:.*]] = arith.mulf %x, %x : f64
// CHECK-NEXT:    %[[T_INV:.*]] = rev.sub %[[T1_INV]], %[[SQ_INV]] : f64
// CHECK-NEXT:    anc.free %[[T_INV]], %[[ZERO]] : f64
// CHECK-NEXT:    rev.return %[[DY2]], %x : f64, f64
// CHECK-NEXT:  }

// Nested routines expand from the inside out: a; b; body; ~b; ~a.
rev.func @nested(%y: f64, %x: f64) {
  %zero = arith.constant 0.0 : f64
  %y1, %x1 = rev.routine (%y, %x) : f64, f64 compute {
  ^bb0(%oy: f64, %ox: f64):
    %a = anc.alloc %zero : f64
    %a1 = rev.add %a, %ox : f64
    rev.yield %oy, %ox, %a1 : f64, f64, f64
  } do {
  ^bb0(%py: f64, %px: f64, %pa: f64):
    %py1, %pa1 = rev.routine (%py, %pa) : f64, f64 compute {
    ^bb0(%iy: f64, %ia: f64):
      %b = anc.alloc %zero : f64
      %b1 = rev.add %b, %ia : f64
      rev.yield %iy, %ia, %b1 : f64, f64, f64
    } do {
    ^bb0(%qy: f64, %qa: f64, %qb: f64):
      %qy1 = rev.add %qy, %qb : f64
      rev.yield %qy1, %qa, %qb : f64, f64, f64
    }
    rev.yield %py1, %px, %pa1 : f64, f64, f64
  }
  rev.return %y1, %x1 : f64, f64
}
// CHECK-LABEL: rev.func @nested(%y: f64, %x: f64) {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[A:.*]] = anc.alloc %[[ZERO]] : f64
// CHECK-NEXT:    %[[A1:.*]] = rev.add %[[A]], %x : f64
// CHECK-NEXT:    %[[B:.*]] = anc.alloc %[[ZERO]] : f64
// CHECK-NEXT:    %[[B1:.*]] = rev.add %[[B]], %[[A1]] : f64
// CHECK-NEXT:    %[[Y1:.*]] = rev.add %y, %[[B1]] : f64
// CHECK-NEXT:    %[[B_INV:.*]] = rev.sub %[[B1]], %[[A1]] : f64
// CHECK-NEXT:    anc.free %[[B_INV]], %[[ZERO]] : f64
// CHECK-NEXT:    %[[A_INV:.*]] = rev.sub %[[A1]], %x : f64
// CHECK-NEXT:    anc.free %[[A_INV]], %[[ZERO]] : f64
// CHECK-NEXT:    rev.return %[[Y1]], %x : f64, f64
// CHECK-NEXT:  }

// A routine inside a loop body expands there; memory reads in compute are
// reloaded for ~compute.
rev.func @in_loop(%m: memref<4xf64>, %s: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s1 = rev.for %c0 to %n step %c1 : index (%s) : f64 {
  ^bb0(%i: index, %ls: f64):
    %ls1 = rev.routine (%ls) : f64 compute {
    ^bb0(%cs: f64):
      %zero = arith.constant 0.0 : f64
      %t = anc.alloc %zero : f64
      %e = memref.load %m[%i] : memref<4xf64>
      %t1 = rev.add %t, %e : f64
      rev.yield %cs, %t1 : f64, f64
    } do {
    ^bb0(%ds: f64, %dt: f64):
      %ds1 = rev.add %ds, %dt : f64
      %ds2 = rev.neg %ds1 : f64
      rev.yield %ds2, %dt : f64, f64
    }
    rev.yield %ls1 : f64
  }
  rev.return %s1, %n : f64, index
}
// CHECK-LABEL: rev.func @in_loop(%m: memref<4xf64>, %s: f64, %n: index) {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[S1:.*]] = rev.for %[[C0]] to %n step %[[C1]] : index (%s) : f64 {
// CHECK-NEXT:    ^bb0(%i: index, %ls: f64):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %[[T:.*]] = anc.alloc %[[ZERO]] : f64
// CHECK-NEXT:      %[[E:.*]] = memref.load %m[%i] : memref<4xf64>
// CHECK-NEXT:      %[[T1:.*]] = rev.add %[[T]], %[[E]] : f64
// CHECK-NEXT:      %[[DS1:.*]] = rev.add %ls, %[[T1]] : f64
// CHECK-NEXT:      %[[DS2:.*]] = rev.neg %[[DS1]] : f64
// CHECK-NEXT:      %[[E_INV:.*]] = memref.load %m[%i] : memref<4xf64>
// CHECK-NEXT:      %[[T_INV:.*]] = rev.sub %[[T1]], %[[E_INV]] : f64
// CHECK-NEXT:      %[[ZERO_INV:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      anc.free %[[T_INV]], %[[ZERO_INV]] : f64
// CHECK-NEXT:      rev.yield %[[DS2]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    rev.return %[[S1]], %n : f64, index
// CHECK-NEXT:  }
