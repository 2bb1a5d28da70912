// RUN: rev-opt %s | filecheck %s
// RUN: rev-opt %s -p 'rev-invert{in-place=true},rev-invert{in-place=true}' | filecheck %s
// RUN: rev-opt %s -p 'rev-invert{in-place=true}' | filecheck %s --check-prefix=ONCE
// RUN: rev-opt %s -p 'rev-invert{in-place=true functions=straight}' | filecheck %s --check-prefix=PARTIAL

// invert(invert(f)) is f: the same CHECK lines match the input (first RUN
// line) and the result of inverting every function in place twice (second RUN
// line).  Results are captured because the inverter's name hints may come
// back with suffixes; pure expressions sit right before their use so that
// recomputing them puts them back in the same place.

// One in-place inversion replaces the bodies and adds no @f.inv.  As @helper
// now means ~helper, calls of it are flipped so @straight computes ~straight.
// ONCE-NOT:    @{{[a-z_]+}}.inv
// ONCE-LABEL:  rev.func @straight(%y: f64, %a: f64, %b: f64, %m: memref<4xf64>, %s: !anc.stack<f64>) {
// ONCE-NEXT:     %[[Y3:.*]] = rev.uncall @helper(%y) : (f64) -> f64
// ONCE-NEXT:     %[[A1:.*]], %[[B1:.*]] = rev.swap %a, %b : f64
// ONCE-NEXT:     %[[Y2:.*]] = rev.call @helper(%[[Y3]]) : (f64) -> f64
// ONCE-NEXT:     anc.push %s, %[[Y2]] : !anc.stack<f64>
// ONCE-LABEL:  rev.func @helper(%x: f64) {
// ONCE-NEXT:     %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// ONCE-NEXT:     %[[X1:.*]] = rev.sub %x, %[[TWO]] : f64
// ONCE-NEXT:     %[[X0:.*]] = rev.neg %[[X1]] : f64
// ONCE-NEXT:     rev.return %[[X0]] : f64
// ONCE-NEXT:   }
// ONCE-NOT:    @{{[a-z_]+}}.inv

// Inverting only @straight in place: @helper keeps its meaning, so the
// inverse calls are the plain inverses (uncall <-> call).
// PARTIAL-LABEL: rev.func @straight(%y: f64, %a: f64, %b: f64, %m: memref<4xf64>, %s: !anc.stack<f64>) {
// PARTIAL-NEXT:    %[[Y3:.*]] = rev.call @helper(%y) : (f64) -> f64
// PARTIAL-NEXT:    %[[A1:.*]], %[[B1:.*]] = rev.swap %a, %b : f64
// PARTIAL-NEXT:    %[[Y2:.*]] = rev.uncall @helper(%[[Y3]]) : (f64) -> f64
// PARTIAL-LABEL: rev.func @helper(%x: f64) {
// PARTIAL-NEXT:    %[[X1:.*]] = rev.neg %x : f64
// PARTIAL-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// PARTIAL-NEXT:    %[[X2:.*]] = rev.add %[[X1]], %[[TWO]] : f64

// CHECK-LABEL: rev.func @straight(%y: f64, %a: f64, %b: f64, %m: memref<4xf64>, %s: !anc.stack<f64>) {
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[T:.*]] = anc.alloc %[[ZERO]] : f64
// CHECK-NEXT: %[[T1:.*]] = rev.add %[[T]], %a : f64
// CHECK-NEXT: %[[AB:.*]] = arith.mulf %[[T1]], %b : f64
// CHECK-NEXT: %[[Y1:.*]] = rev.sub %y, %[[AB]] : f64
// CHECK-NEXT: %[[T2:.*]] = rev.sub %[[T1]], %a : f64
// CHECK-NEXT: anc.free %[[T2]], %[[ZERO]] : f64
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[E:.*]] = rev.take %m[%[[C1]]] : memref<4xf64>
// CHECK-NEXT: %[[E1:.*]] = rev.add %[[E]], %a : f64
// CHECK-NEXT: %[[E2:.*]] = rev.neg %[[E1]] : f64
// CHECK-NEXT: rev.put %[[E2]], %m[%[[C1]]] : memref<4xf64>
// CHECK-NEXT: anc.push %s, %[[Y1]] : !anc.stack<f64>
// CHECK-NEXT: %[[Y2:.*]] = anc.pop %s : !anc.stack<f64>
// CHECK-NEXT: %[[Y3:.*]] = rev.call @helper(%[[Y2]]) : (f64) -> f64
// CHECK-NEXT: %[[A1:.*]], %[[B1:.*]] = rev.swap %a, %b : f64
// CHECK-NEXT: %[[Y4:.*]] = rev.uncall @helper(%[[Y3]]) : (f64) -> f64
// CHECK-NEXT: rev.return %[[Y4]], %[[A1]], %[[B1]] : f64, f64, f64
// CHECK-NEXT: }
rev.func @straight(%y: f64, %a: f64, %b: f64, %m: memref<4xf64>, %s: !anc.stack<f64>) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %a : f64
  %ab = arith.mulf %t1, %b : f64
  %y1 = rev.sub %y, %ab : f64
  %t2 = rev.sub %t1, %a : f64
  anc.free %t2, %zero : f64
  %c1 = arith.constant 1 : index
  %e = rev.take %m[%c1] : memref<4xf64>
  %e1 = rev.add %e, %a : f64
  %e2 = rev.neg %e1 : f64
  rev.put %e2, %m[%c1] : memref<4xf64>
  anc.push %s, %y1 : !anc.stack<f64>
  %y2 = anc.pop %s : !anc.stack<f64>
  %y3 = rev.call @helper(%y2) : (f64) -> f64
  %a1, %b1 = rev.swap %a, %b : f64
  %y4 = rev.uncall @helper(%y3) : (f64) -> f64
  rev.return %y4, %a1, %b1 : f64, f64, f64
}

// CHECK-LABEL: rev.func @helper(%x: f64) {
// CHECK-NEXT: %[[X1:.*]] = rev.neg %x : f64
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT: %[[X2:.*]] = rev.add %[[X1]], %[[TWO]] : f64
// CHECK-NEXT: rev.return %[[X2]] : f64
// CHECK-NEXT: }
rev.func @helper(%x: f64) {
  %x1 = rev.neg %x : f64
  %two = arith.constant 2.0 : f64
  %x2 = rev.add %x1, %two : f64
  rev.return %x2 : f64
}

// CHECK-LABEL: rev.func @control(%x: f64, %y: f64, %lb: index, %ub: index, %step: index, %m: memref<8xf64>) {
// CHECK-NEXT: %[[X1:.*]], %[[Y1:.*]] = rev.if (%x, %y) : f64, f64 pre {
// CHECK-NEXT: ^bb0(%px: f64, %py: f64):
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:   %[[GT:.*]] = arith.cmpf ogt, %px, %[[ZERO]] : f64
// CHECK-NEXT:   rev.cond %[[GT]]
// CHECK-NEXT: } then {
// CHECK-NEXT: ^bb0(%tx: f64, %ty: f64):
// CHECK-NEXT:   %[[TX1:.*]] = rev.neg %tx : f64
// CHECK-NEXT:   %[[TY1:.*]] = rev.add %ty, %[[TX1]] : f64
// CHECK-NEXT:   rev.yield %[[TX1]], %[[TY1]] : f64, f64
// CHECK-NEXT: } else {
// CHECK-NEXT: ^bb0(%ex: f64, %ey: f64):
// CHECK-NEXT:   %[[EY1:.*]] = rev.sub %ey, %ex : f64
// CHECK-NEXT:   %[[EY2:.*]] = rev.neg %[[EY1]] : f64
// CHECK-NEXT:   rev.yield %ex, %[[EY2]] : f64, f64
// CHECK-NEXT: } post {
// CHECK-NEXT: ^bb0(%qx: f64, %qy: f64):
// CHECK-NEXT:   %[[ZERO_1:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:   %[[LT:.*]] = arith.cmpf olt, %qx, %[[ZERO_1]] : f64
// CHECK-NEXT:   rev.cond %[[LT]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y2:.*]] = rev.if (%[[Y1]]) : f64 pre {
// CHECK-NEXT: ^bb0(%p2: f64):
// CHECK-NEXT:   %[[ZERO_2:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:   %[[NE:.*]] = arith.cmpf one, %[[X1]], %[[ZERO_2]] : f64
// CHECK-NEXT:   rev.cond %[[NE]]
// CHECK-NEXT: } then {
// CHECK-NEXT: ^bb0(%t2: f64):
// CHECK-NEXT:   %[[T3:.*]] = rev.add %t2, %[[X1]] : f64
// CHECK-NEXT:   %[[T4:.*]] = rev.neg %[[T3]] : f64
// CHECK-NEXT:   rev.yield %[[T4]] : f64
// CHECK-NEXT: } else {
// CHECK-NEXT: ^bb0(%e2: f64):
// CHECK-NEXT:   rev.yield %e2 : f64
// CHECK-NEXT: }
// CHECK-NEXT: %[[S1:.*]] = rev.for %lb to %ub step %step : index (%[[Y2]]) : f64 {
// CHECK-NEXT: ^bb0(%i: index, %fs: f64):
// CHECK-NEXT:   %[[FS1:.*]] = rev.neg %fs : f64
// CHECK-NEXT:   %[[L:.*]] = memref.load %m[%i] : memref<8xf64>
// CHECK-NEXT:   %[[FS2:.*]] = rev.add %[[FS1]], %[[L]] : f64
// CHECK-NEXT:   rev.yield %[[FS2]] : f64
// CHECK-NEXT: }
// CHECK-NEXT: %[[S2:.*]] = rev.for reverse %lb to %ub step %step : index (%[[S1]]) : f64 {
// CHECK-NEXT: ^bb0(%j: index, %rs: f64):
// CHECK-NEXT:   %[[RS1:.*]] = rev.neg %rs : f64
// CHECK-NEXT:   %[[RS2:.*]] = rev.sub %[[RS1]], %[[X1]] : f64
// CHECK-NEXT:   rev.yield %[[RS2]] : f64
// CHECK-NEXT: }
// CHECK-NEXT: rev.return %[[X1]], %[[S2]], %lb, %ub, %step : f64, f64, index, index, index
// CHECK-NEXT: }
rev.func @control(%x: f64, %y: f64, %lb: index, %ub: index, %step: index, %m: memref<8xf64>) {
  %x1, %y1 = rev.if (%x, %y) : f64, f64 pre {
  ^bb0(%px: f64, %py: f64):
    %zero = arith.constant 0.0 : f64
    %gt = arith.cmpf ogt, %px, %zero : f64
    rev.cond %gt
  } then {
  ^bb0(%tx: f64, %ty: f64):
    %tx1 = rev.neg %tx : f64
    %ty1 = rev.add %ty, %tx1 : f64
    rev.yield %tx1, %ty1 : f64, f64
  } else {
  ^bb0(%ex: f64, %ey: f64):
    %ey1 = rev.sub %ey, %ex : f64
    %ey2 = rev.neg %ey1 : f64
    rev.yield %ex, %ey2 : f64, f64
  } post {
  ^bb0(%qx: f64, %qy: f64):
    %zero = arith.constant 0.0 : f64
    %lt = arith.cmpf olt, %qx, %zero : f64
    rev.cond %lt
  }
  %y2 = rev.if (%y1) : f64 pre {
  ^bb0(%p2: f64):
    %zero = arith.constant 0.0 : f64
    %ne = arith.cmpf one, %x1, %zero : f64
    rev.cond %ne
  } then {
  ^bb0(%t2: f64):
    %t3 = rev.add %t2, %x1 : f64
    %t4 = rev.neg %t3 : f64
    rev.yield %t4 : f64
  } else {
  ^bb0(%e2: f64):
    rev.yield %e2 : f64
  }
  %s1 = rev.for %lb to %ub step %step : index (%y2) : f64 {
  ^bb0(%i: index, %fs: f64):
    %fs1 = rev.neg %fs : f64
    %l = memref.load %m[%i] : memref<8xf64>
    %fs2 = rev.add %fs1, %l : f64
    rev.yield %fs2 : f64
  }
  %s2 = rev.for reverse %lb to %ub step %step : index (%s1) : f64 {
  ^bb0(%j: index, %rs: f64):
    %rs1 = rev.neg %rs : f64
    %rs2 = rev.sub %rs1, %x1 : f64
    rev.yield %rs2 : f64
  }
  rev.return %x1, %s2, %lb, %ub, %step : f64, f64, index, index, index
}

// CHECK-LABEL: rev.func @loop(%n: i64, %acc: i64) {
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[I0:.*]] = anc.alloc %[[ZERO]] : i64
// CHECK-NEXT: %[[I1:.*]], %[[ACC1:.*]] = rev.while (%[[I0]], %acc) : i64, i64 pre {
// CHECK-NEXT: ^bb0(%pi: i64, %pa: i64):
// CHECK-NEXT:   %[[LT:.*]] = arith.cmpi slt, %pi, %n : i64
// CHECK-NEXT:   rev.cond %[[LT]]
// CHECK-NEXT: } post {
// CHECK-NEXT: ^bb0(%qi: i64, %qa: i64):
// CHECK-NEXT:   %[[ZERO1:.*]] = arith.constant 0 : i64
// CHECK-NEXT:   %[[GT:.*]] = arith.cmpi sgt, %qi, %[[ZERO1]] : i64
// CHECK-NEXT:   rev.cond %[[GT]]
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%bi: i64, %ba: i64):
// CHECK-NEXT:   %[[BA1:.*]] = rev.add %ba, %bi : i64
// CHECK-NEXT:   %[[BI1:.*]] = rev.inc %bi : i64
// CHECK-NEXT:   rev.yield %[[BI1]], %[[BA1]] : i64, i64
// CHECK-NEXT: }
// CHECK-NEXT: %[[I2:.*]] = rev.sub %[[I1]], %n : i64
// CHECK-NEXT: anc.free %[[I2]], %[[ZERO]] : i64
// CHECK-NEXT: rev.return %n, %[[ACC1]] : i64, i64
// CHECK-NEXT: }
rev.func @loop(%n: i64, %acc: i64) {
  %zero = arith.constant 0 : i64
  %i0 = anc.alloc %zero : i64
  %i1, %acc1 = rev.while (%i0, %acc) : i64, i64 pre {
  ^bb0(%pi: i64, %pa: i64):
    %lt = arith.cmpi slt, %pi, %n : i64
    rev.cond %lt
  } post {
  ^bb0(%qi: i64, %qa: i64):
    %zero1 = arith.constant 0 : i64
    %gt = arith.cmpi sgt, %qi, %zero1 : i64
    rev.cond %gt
  } do {
  ^bb0(%bi: i64, %ba: i64):
    %ba1 = rev.add %ba, %bi : i64
    %bi1 = rev.inc %bi : i64
    rev.yield %bi1, %ba1 : i64, i64
  }
  %i2 = rev.sub %i1, %n : i64
  anc.free %i2, %zero : i64
  rev.return %n, %acc1 : i64, i64
}

// CHECK-LABEL: rev.func @wrappers(%x: f64, %y: f64, %angle: f64, %c: complex<f64>, %flag: i1) {
// CHECK-NEXT: %[[RE:.*]], %[[IM:.*]] = rev.unpack %c : complex<f64>
// CHECK-NEXT: %[[RE1:.*]], %[[IM1:.*]] = rev.irot %[[RE]], %[[IM]], %angle : f64
// CHECK-NEXT: %[[C1:.*]] = rev.pack %[[RE1]], %[[IM1]] : complex<f64>
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[IGNORED:.*]] = rev.xor %flag, %[[TRUE]] : i1
// CHECK-NEXT: %[[X1:.*]], %[[Y1:.*]] = rev.routine (%x, %y) : f64, f64 compute {
// CHECK-NEXT: ^bb0(%cx: f64, %cy: f64):
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:   %[[T:.*]] = anc.alloc %[[ZERO]] : f64
// CHECK-NEXT:   %[[T1:.*]] = rev.add %[[T]], %cx : f64
// CHECK-NEXT:   rev.yield %cx, %cy, %[[T1]] : f64, f64, f64
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%dx: f64, %dy: f64, %dt: f64):
// CHECK-NEXT:   %[[DY1:.*]] = rev.add %dy, %dt : f64
// CHECK-NEXT:   %[[DY2:.*]] = rev.neg %[[DY1]] : f64
// CHECK-NEXT:   rev.yield %dx, %[[DY2]], %dt : f64, f64, f64
// CHECK-NEXT: }
// CHECK-NEXT: %[[X2:.*]], %[[Y2:.*]] = rev.inv (%[[X1]], %[[Y1]]) : f64, f64 {
// CHECK-NEXT: ^bb0(%ix: f64, %iy: f64):
// CHECK-NEXT:   %[[IY1:.*]] = rev.add %iy, %ix : f64
// CHECK-NEXT:   %[[IX1:.*]] = rev.neg %ix : f64
// CHECK-NEXT:   rev.yield %[[IX1]], %[[IY1]] : f64, f64
// CHECK-NEXT: }
// CHECK-NEXT: rev.safe {
// CHECK-NEXT:   %[[FWD:.*]] = arith.addf %[[X2]], %[[Y2]] : f64
// CHECK-NEXT: }
// CHECK-NEXT: rev.safe inverse {
// CHECK-NEXT:   %[[BWD:.*]] = arith.subf %[[X2]], %[[Y2]] : f64
// CHECK-NEXT: }
// CHECK-NEXT: rev.safe both {
// CHECK-NEXT:   %[[ANY:.*]] = arith.mulf %[[X2]], %[[Y2]] : f64
// CHECK-NEXT: }
// CHECK-NEXT: %[[X3:.*]], %[[Y3:.*]] = rev.rot %[[X2]], %[[Y2]], %angle : f64
// CHECK-NEXT: rev.return %[[X3]], %[[Y3]], %angle, %[[C1]], %[[IGNORED]] : f64, f64, f64, complex<f64>, i1
// CHECK-NEXT: }
rev.func @wrappers(%x: f64, %y: f64, %angle: f64, %c: complex<f64>, %flag: i1) {
  %re, %im = rev.unpack %c : complex<f64>
  %re1, %im1 = rev.irot %re, %im, %angle : f64
  %c1 = rev.pack %re1, %im1 : complex<f64>
  %true = arith.constant true
  %ignored = rev.xor %flag, %true : i1
  %x1, %y1 = rev.routine (%x, %y) : f64, f64 compute {
  ^bb0(%cx: f64, %cy: f64):
    %zero = arith.constant 0.0 : f64
    %t = anc.alloc %zero : f64
    %t1 = rev.add %t, %cx : f64
    rev.yield %cx, %cy, %t1 : f64, f64, f64
  } do {
  ^bb0(%dx: f64, %dy: f64, %dt: f64):
    %dy1 = rev.add %dy, %dt : f64
    %dy2 = rev.neg %dy1 : f64
    rev.yield %dx, %dy2, %dt : f64, f64, f64
  }
  %x2, %y2 = rev.inv (%x1, %y1) : f64, f64 {
  ^bb0(%ix: f64, %iy: f64):
    %iy1 = rev.add %iy, %ix : f64
    %ix1 = rev.neg %ix : f64
    rev.yield %ix1, %iy1 : f64, f64
  }
  rev.safe {
    %fwd = arith.addf %x2, %y2 : f64
  }
  rev.safe inverse {
    %bwd = arith.subf %x2, %y2 : f64
  }
  rev.safe both {
    %any = arith.mulf %x2, %y2 : f64
  }
  %x3, %y3 = rev.rot %x2, %y2, %angle : f64
  rev.return %x3, %y3, %angle, %c1, %ignored : f64, f64, f64, complex<f64>, i1
}
