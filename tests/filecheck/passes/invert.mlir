// RUN: rev-opt %s -p rev-invert | filecheck %s
// RUN: rev-opt %s -p 'rev-invert{functions=helper,loop}' | filecheck %s --check-prefix=ONLY
// RUN: rev-opt %s -p rev-invert,rev-invert | filecheck %s --check-prefix=TWICE

// rev-invert adds @f.inv right after each @f.  The inverse runs the body's
// instructions in reverse order, each replaced by its inverse; pure
// expressions are recomputed where the inverse needs them.  Value names are
// captured, since the printer may add suffixes to name hints.

// Straight-line code: add<->sub, alloc<->free, take<->put, push<->pop,
// call<->uncall, in reverse order.
rev.func @straight(%y: f64, %a: f64, %m: memref<4xf64>, %s: !anc.stack<f64>) {
  %zero = arith.constant 0.0 : f64
  %c1 = arith.constant 1 : index
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %a : f64
  %y1 = rev.sub %y, %t1 : f64
  %t2 = rev.sub %t1, %a : f64
  anc.free %t2, %zero : f64
  %e = rev.take %m[%c1] : memref<4xf64>
  %e1 = rev.add %e, %a : f64
  rev.put %e1, %m[%c1] : memref<4xf64>
  anc.push %s, %y1 : !anc.stack<f64>
  %y2 = anc.pop %s : !anc.stack<f64>
  %y3 = rev.call @helper(%y2) : (f64) -> f64
  %y4 = rev.uncall @helper(%y3) : (f64) -> f64
  rev.return %y4, %a : f64, f64
}
// The original is kept, unchanged.
// CHECK-LABEL: rev.func @straight(%y: f64, %a: f64, %m: memref<4xf64>, %s: !anc.stack<f64>) {
// CHECK:         rev.return %y4, %a : f64, f64
// CHECK-NEXT:  }

// CHECK-NEXT:  rev.func @straight.inv(%y: f64, %a: f64, %m: memref<4xf64>, %s: !anc.stack<f64>) {
// CHECK-NEXT:    %[[Y3:.*]] = rev.call @helper(%y) : (f64) -> f64
// CHECK-NEXT:    %[[Y2:.*]] = rev.uncall @helper(%[[Y3]]) : (f64) -> f64
// CHECK-NEXT:    anc.push %s, %[[Y2]] : !anc.stack<f64>
// CHECK-NEXT:    %[[Y1:.*]] = anc.pop %s : !anc.stack<f64>
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[E1:.*]] = rev.take %m[%[[C1]]] : memref<4xf64>
// CHECK-NEXT:    %[[E:.*]] = rev.sub %[[E1]], %a : f64
// CHECK-NEXT:    rev.put %[[E]], %m[%[[C1]]] : memref<4xf64>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[T2:.*]] = anc.alloc %[[ZERO]] : f64
// CHECK-NEXT:    %[[T1:.*]] = rev.add %[[T2]], %a : f64
// CHECK-NEXT:    %[[Y0:.*]] = rev.add %[[Y1]], %[[T1]] : f64
// CHECK-NEXT:    %[[T0:.*]] = rev.sub %[[T1]], %a : f64
// CHECK-NEXT:    anc.free %[[T0]], %[[ZERO]] : f64
// CHECK-NEXT:    rev.return %[[Y0]], %a : f64, f64
// CHECK-NEXT:  }

// Unary instructions are their own inverse (neg) or swap with their partner.
rev.func @helper(%x: f64) {
  %x1 = rev.neg %x : f64
  %two = arith.constant 2.0 : f64
  %x2 = rev.add %x1, %two : f64
  rev.return %x2 : f64
}
// CHECK-LABEL: rev.func @helper.inv(%x: f64) {
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:    %[[X1:.*]] = rev.sub %x, %[[TWO]] : f64
// CHECK-NEXT:    %[[X0:.*]] = rev.neg %[[X1]] : f64
// CHECK-NEXT:    rev.return %[[X0]] : f64
// CHECK-NEXT:  }

// rev.if swaps pre and post (without post, pre stays) and inverts both
// branches; rev.for toggles `reverse` and inverts its body.
rev.func @control(%x: f64, %y: f64, %n: index, %m: memref<8xf64>) {
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x1, %y1 = rev.if (%x, %y) : f64, f64 pre {
  ^bb0(%px: f64, %py: f64):
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
    %ey2 = rev.add %ey1, %two : f64
    rev.yield %ex, %ey2 : f64, f64
  } post {
  ^bb0(%qx: f64, %qy: f64):
    %lt = arith.cmpf olt, %qx, %zero : f64
    rev.cond %lt
  }
  %y2 = rev.if (%y1) : f64 pre {
  ^bb0(%p2: f64):
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
  %s1 = rev.for %c0 to %n step %c1 : index (%y2) : f64 {
  ^bb0(%i: index, %fs: f64):
    %l = memref.load %m[%i] : memref<8xf64>
    %fs1 = rev.add %fs, %l : f64
    %fs2 = rev.neg %fs1 : f64
    rev.yield %fs2 : f64
  }
  %s2 = rev.for reverse %c0 to %n step %c1 : index (%s1) : f64 {
  ^bb0(%j: index, %rs: f64):
    %rs1 = rev.neg %rs : f64
    %rs2 = rev.sub %rs1, %two : f64
    rev.yield %rs2 : f64
  }
  rev.return %x1, %s2, %n : f64, f64, index
}
// CHECK-LABEL: rev.func @control.inv(%x: f64, %y: f64, %n: index, %m: memref<8xf64>) {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
//                The last loop comes first, running forward now.
// CHECK-NEXT:    %[[S1:.*]] = rev.for %[[C0]] to %n step %[[C1]] : index (%y) : f64 {
// CHECK-NEXT:    ^bb0(%j: index, %[[RS2:.*]]: f64):
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:      %[[RS1:.*]] = rev.add %[[RS2]], %[[TWO]] : f64
// CHECK-NEXT:      %[[RS:.*]] = rev.neg %[[RS1]] : f64
// CHECK-NEXT:      rev.yield %[[RS]] : f64
// CHECK-NEXT:    }
//                The first loop comes second, reversed.
// CHECK-NEXT:    %[[Y2:.*]] = rev.for reverse %[[C0]] to %n step %[[C1]] : index (%[[S1]]) : f64 {
// CHECK-NEXT:    ^bb0(%i: index, %[[FS2:.*]]: f64):
// CHECK-NEXT:      %[[FS1:.*]] = rev.neg %[[FS2]] : f64
// CHECK-NEXT:      %[[L:.*]] = memref.load %m[%i] : memref<8xf64>
// CHECK-NEXT:      %[[FS:.*]] = rev.sub %[[FS1]], %[[L]] : f64
// CHECK-NEXT:      rev.yield %[[FS]] : f64
// CHECK-NEXT:    }
//                No post region: the same precondition decides both ways.
// CHECK-NEXT:    %[[Y1:.*]] = rev.if (%[[Y2]]) : f64 pre {
// CHECK-NEXT:    ^bb0(%p2: f64):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %[[NE:.*]] = arith.cmpf one, %x, %[[ZERO]] : f64
// CHECK-NEXT:      rev.cond %[[NE]]
// CHECK-NEXT:    } then {
// CHECK-NEXT:    ^bb0(%t4: f64):
// CHECK-NEXT:      %[[T3:.*]] = rev.neg %t4 : f64
// CHECK-NEXT:      %[[T2:.*]] = rev.sub %[[T3]], %x : f64
// CHECK-NEXT:      rev.yield %[[T2]] : f64
// CHECK-NEXT:    } else {
// CHECK-NEXT:    ^bb0(%e2: f64):
// CHECK-NEXT:      rev.yield %e2 : f64
// CHECK-NEXT:    }
//                With a post region: the old post is the new pre and back.
// CHECK-NEXT:    %[[X0:.*]], %[[Y0:.*]] = rev.if (%x, %[[Y1]]) : f64, f64 pre {
// CHECK-NEXT:    ^bb0(%qx: f64, %qy: f64):
// CHECK-NEXT:      %[[ZERO1:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpf olt, %qx, %[[ZERO1]] : f64
// CHECK-NEXT:      rev.cond %[[LT]]
// CHECK-NEXT:    } then {
// CHECK-NEXT:    ^bb0(%tx1: f64, %ty1: f64):
// CHECK-NEXT:      %[[TY:.*]] = rev.sub %ty1, %tx1 : f64
// CHECK-NEXT:      %[[TX:.*]] = rev.neg %tx1 : f64
// CHECK-NEXT:      rev.yield %[[TX]], %[[TY]] : f64, f64
// CHECK-NEXT:    } else {
// CHECK-NEXT:    ^bb0(%ex: f64, %ey2: f64):
// CHECK-NEXT:      %[[TWO1:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:      %[[EY1:.*]] = rev.sub %ey2, %[[TWO1]] : f64
// CHECK-NEXT:      %[[EY:.*]] = rev.add %[[EY1]], %ex : f64
// CHECK-NEXT:      rev.yield %ex, %[[EY]] : f64, f64
// CHECK-NEXT:    } post {
// CHECK-NEXT:    ^bb0(%px: f64, %py: f64):
// CHECK-NEXT:      %[[ZERO2:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %px, %[[ZERO2]] : f64
// CHECK-NEXT:      rev.cond %[[GT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    rev.return %[[X0]], %[[Y0]], %n : f64, f64, index
// CHECK-NEXT:  }

// rev.while swaps pre and post and inverts its body.
rev.func @loop(%n: i64, %acc: i64) {
  %zero = arith.constant 0 : i64
  %i0 = anc.alloc %zero : i64
  %i1, %acc1 = rev.while (%i0, %acc) : i64, i64 pre {
  ^bb0(%pi: i64, %pa: i64):
    %lt = arith.cmpi slt, %pi, %n : i64
    rev.cond %lt
  } post {
  ^bb0(%qi: i64, %qa: i64):
    %gt = arith.cmpi sgt, %qi, %zero : i64
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
// CHECK-LABEL: rev.func @loop.inv(%n: i64, %acc: i64) {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[I2:.*]] = anc.alloc %[[ZERO]] : i64
// CHECK-NEXT:    %[[I1:.*]] = rev.add %[[I2]], %n : i64
// CHECK-NEXT:    %[[I0:.*]], %[[ACC0:.*]] = rev.while (%[[I1]], %acc) : i64, i64 pre {
// CHECK-NEXT:    ^bb0(%qi: i64, %qa: i64):
// CHECK-NEXT:      %[[ZERO1:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpi sgt, %qi, %[[ZERO1]] : i64
// CHECK-NEXT:      rev.cond %[[GT]]
// CHECK-NEXT:    } post {
// CHECK-NEXT:    ^bb0(%pi: i64, %pa: i64):
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %pi, %n : i64
// CHECK-NEXT:      rev.cond %[[LT]]
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%bi1: i64, %ba1: i64):
// CHECK-NEXT:      %[[BI:.*]] = rev.dec %bi1 : i64
// CHECK-NEXT:      %[[BA:.*]] = rev.sub %ba1, %[[BI]] : i64
// CHECK-NEXT:      rev.yield %[[BI]], %[[BA]] : i64, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    anc.free %[[I0]], %[[ZERO]] : i64
// CHECK-NEXT:    rev.return %n, %[[ACC0]] : i64, i64
// CHECK-NEXT:  }

// rev.routine keeps its compute region and inverts its do region; rev.inv
// gets its body inverted; rev.safe flips forward<->inverse (both stays).
rev.func @wrappers(%x: f64, %y: f64) {
  %zero = arith.constant 0.0 : f64
  %x1, %y1 = rev.routine (%x, %y) : f64, f64 compute {
  ^bb0(%cx: f64, %cy: f64):
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
    %fwd = arith.addf %x2, %zero : f64
  }
  rev.safe inverse {
    %bwd = arith.subf %x2, %zero : f64
  }
  rev.safe both {
    %any = arith.mulf %x2, %zero : f64
  }
  rev.return %x2, %y2 : f64, f64
}
// CHECK-LABEL: rev.func @wrappers.inv(%x: f64, %y: f64) {
// CHECK-NEXT:    rev.safe both {
// CHECK-NEXT:      %[[Z0:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %{{.*}} = arith.mulf %x, %[[Z0]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    rev.safe {
// CHECK-NEXT:      %[[Z1:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %{{.*}} = arith.subf %x, %[[Z1]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    rev.safe inverse {
// CHECK-NEXT:      %[[Z2:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %{{.*}} = arith.addf %x, %[[Z2]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[X1:.*]], %[[Y1:.*]] = rev.inv (%x, %y) : f64, f64 {
// CHECK-NEXT:    ^bb0(%ix1: f64, %iy1: f64):
// CHECK-NEXT:      %[[IX:.*]] = rev.neg %ix1 : f64
// CHECK-NEXT:      %[[IY:.*]] = rev.sub %iy1, %[[IX]] : f64
// CHECK-NEXT:      rev.yield %[[IX]], %[[IY]] : f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[X0:.*]], %[[Y0:.*]] = rev.routine (%[[X1]], %[[Y1]]) : f64, f64 compute {
// CHECK-NEXT:    ^bb0(%cx: f64, %cy: f64):
// CHECK-NEXT:      %[[Z3:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %[[T:.*]] = anc.alloc %[[Z3]] : f64
// CHECK-NEXT:      %[[T1:.*]] = rev.add %[[T]], %cx : f64
// CHECK-NEXT:      rev.yield %cx, %cy, %[[T1]] : f64, f64, f64
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%dx: f64, %dy2: f64, %dt: f64):
// CHECK-NEXT:      %[[DY1:.*]] = rev.neg %dy2 : f64
// CHECK-NEXT:      %[[DY:.*]] = rev.sub %[[DY1]], %dt : f64
// CHECK-NEXT:      rev.yield %dx, %[[DY]], %dt : f64, f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    rev.return %[[X0]], %[[Y0]] : f64, f64
// CHECK-NEXT:  }

// The other instructions: inc<->dec, xor, mul<->div, rot<->irot, swap,
// unpack<->pack, stack_alloc<->stack_free, copy_push<->copy_pop.
rev.func @more(%k: i64, %n: i64, %p: !rev.log<f64>, %a: f64, %u: f64, %v: f64, %c: complex<f64>) {
  %k1 = rev.inc %k : i64
  %k2 = rev.xor %k1, %n : i64
  %k3 = rev.dec %k2 : i64
  %la = rev.to_log %a : f64
  %p1 = rev.mul %p, %la : !rev.log<f64>
  %p2 = rev.div %p1, %la : !rev.log<f64>
  %u1, %v1 = rev.rot %u, %v, %a : f64
  %u2, %v2 = rev.irot %u1, %v1, %a : f64
  %u3, %v3 = rev.swap %u2, %v2 : f64
  %re, %im = rev.unpack %c : complex<f64>
  %re1 = rev.add %re, %u3 : f64
  %c1 = rev.pack %re1, %im : complex<f64>
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.copy_push %s, %v3 : !anc.stack<f64>
  %v4 = rev.neg %v3 : f64
  %v5 = rev.neg %v4 : f64
  anc.copy_pop %s, %v5 : !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  rev.return %k3, %n, %p2, %a, %u3, %v5, %c1 : i64, i64, !rev.log<f64>, f64, f64, f64, complex<f64>
}
// CHECK-LABEL: rev.func @more.inv(%k: i64, %n: i64, %p: !rev.log<f64>, %a: f64, %u: f64, %v: f64, %c: complex<f64>) {
// CHECK-NEXT:    %[[S:.*]] = anc.stack_alloc : !anc.stack<f64>
// CHECK-NEXT:    anc.copy_push %[[S]], %v : !anc.stack<f64>
// CHECK-NEXT:    %[[V4:.*]] = rev.neg %v : f64
// CHECK-NEXT:    %[[V3:.*]] = rev.neg %[[V4]] : f64
// CHECK-NEXT:    anc.copy_pop %[[S]], %[[V3]] : !anc.stack<f64>
// CHECK-NEXT:    anc.stack_free %[[S]] : !anc.stack<f64>
// CHECK-NEXT:    %[[RE1:.*]], %[[IM:.*]] = rev.unpack %c : complex<f64>
// CHECK-NEXT:    %[[RE:.*]] = rev.sub %[[RE1]], %u : f64
// CHECK-NEXT:    %[[C0:.*]] = rev.pack %[[RE]], %[[IM]] : complex<f64>
// CHECK-NEXT:    %[[U2:.*]], %[[V2:.*]] = rev.swap %u, %[[V3]] : f64
// CHECK-NEXT:    %[[U1:.*]], %[[V1:.*]] = rev.rot %[[U2]], %[[V2]], %a : f64
// CHECK-NEXT:    %[[U0:.*]], %[[V0:.*]] = rev.irot %[[U1]], %[[V1]], %a : f64
// CHECK-NEXT:    %[[LA:.*]] = rev.to_log %a : f64
// CHECK-NEXT:    %[[P1:.*]] = rev.mul %p, %[[LA]] : !rev.log<f64>
// CHECK-NEXT:    %[[P0:.*]] = rev.div %[[P1]], %[[LA]] : !rev.log<f64>
// CHECK-NEXT:    %[[K2:.*]] = rev.inc %k : i64
// CHECK-NEXT:    %[[K1:.*]] = rev.xor %[[K2]], %n : i64
// CHECK-NEXT:    %[[K0:.*]] = rev.dec %[[K1]] : i64
// CHECK-NEXT:    rev.return %[[K0]], %n, %[[P0]], %a, %[[U0]], %[[V0]], %[[C0]] : i64, i64, !rev.log<f64>, f64, f64, f64, complex<f64>
// CHECK-NEXT:  }

// With functions=..., only the named functions get an inverse.
// ONLY-NOT:   rev.func @straight.inv
// ONLY-LABEL: rev.func @helper(%x: f64)
// ONLY:       rev.func @helper.inv(%x: f64)
// ONLY-NOT:   rev.func @control.inv
// ONLY-LABEL: rev.func @loop(%n: i64, %acc: i64)
// ONLY:       rev.func @loop.inv(%n: i64, %acc: i64)
// ONLY-NOT:   rev.func @wrappers.inv
// ONLY-NOT:   rev.func @more.inv

// Running it again adds nothing: @f.inv exists already, and the inverse of
// @f.inv is @f.
// TWICE-COUNT-12: rev.func @
// TWICE-NOT:      rev.func @
