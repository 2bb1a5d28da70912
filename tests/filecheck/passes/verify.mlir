// RUN: rev-opt %s --disable-verify -p rev-verify | filecheck %s
// RUN: rev-opt %s -p rev-verify | rev-opt --disable-verify -p rev-verify | filecheck %s

// rev-verify accepts programs that follow every rule and leaves them as they
// are (first RUN line: the pass alone does the checking, parsing does not
// verify; second: its output verifies again).  Each function below is close
// to a rule without breaking it.

// y += x*x reads x, not the target: fine (x -= x is not).
// CHECK-LABEL: rev.func @square(%y: f64, %x: f64) {
// CHECK-NEXT:    %sq = arith.mulf %x, %x : f64
// CHECK-NEXT:    %y1 = rev.add %y, %sq : f64
// CHECK-NEXT:    rev.return %y1, %x : f64, f64
// CHECK-NEXT:  }
rev.func @square(%y: f64, %x: f64) {
  %sq = arith.mulf %x, %x : f64
  %y1 = rev.add %y, %sq : f64
  rev.return %y1, %x : f64, f64
}

// A value may be read any number of times before the op that consumes it.
// CHECK-LABEL: rev.func @read_then_consume(%a: f64, %b: f64) {
// CHECK-NEXT:    %b1 = rev.add %b, %a : f64
// CHECK-NEXT:    %b2 = rev.sub %b1, %a : f64
// CHECK-NEXT:    %a1 = rev.neg %a : f64
// CHECK-NEXT:    rev.return %a1, %b2 : f64, f64
// CHECK-NEXT:  }
rev.func @read_then_consume(%a: f64, %b: f64) {
  %b1 = rev.add %b, %a : f64
  %b2 = rev.sub %b1, %a : f64
  %a1 = rev.neg %a : f64
  rev.return %a1, %b2 : f64, f64
}

// Regions read outer state (the pre condition, the branch, rev.safe) and
// consume only their own block arguments.
// CHECK-LABEL: rev.func @regions_read_outer_state(%x: f64, %y: f64) {
// CHECK:         rev.if (%y) : f64 pre {
// CHECK:         rev.safe {
// CHECK:         rev.return
rev.func @regions_read_outer_state(%x: f64, %y: f64) {
  %zero = arith.constant 0.0 : f64
  %y1 = rev.if (%y) : f64 pre {
  ^bb0(%p: f64):
    %gt = arith.cmpf ogt, %x, %zero : f64
    rev.cond %gt
  } then {
  ^bb0(%t: f64):
    %t1 = rev.add %t, %x : f64
    rev.yield %t1 : f64
  } else {
  ^bb0(%e: f64):
    rev.yield %e : f64
  }
  rev.safe {
    %sum = arith.addf %x, %y1 : f64
  }
  rev.return %x, %y1 : f64, f64
}

// Ancillas may leave through anc.free, anc.push or a yield; memory reads of
// other elements are fine while an element is borrowed.
// CHECK-LABEL: rev.func @ancillas_and_elements(%m: memref<4xf64>, %s: !anc.stack<f64>, %x: f64) {
// CHECK:         anc.free
// CHECK:         anc.push
// CHECK:         rev.put
// CHECK:         rev.put
// CHECK:         rev.return %x : f64
rev.func @ancillas_and_elements(%m: memref<4xf64>, %s: !anc.stack<f64>, %x: f64) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %x : f64
  %t2 = rev.sub %t1, %x : f64
  anc.free %t2, %zero : f64
  %u = anc.alloc %zero : f64
  %u1 = rev.add %u, %x : f64
  anc.push %s, %u1 : !anc.stack<f64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e0 = rev.take %m[%c0] : memref<4xf64>
  %e1 = rev.take %m[%c1] : memref<4xf64>
  %c2 = arith.constant 2 : index
  %w = memref.load %m[%c2] : memref<4xf64>
  %e1b = rev.add %e1, %w : f64
  rev.put %e1b, %m[%c1] : memref<4xf64>
  rev.put %e0, %m[%c0] : memref<4xf64>
  rev.return %x : f64
}

// Recursion and calls to functions defined further down.
// CHECK-LABEL: rev.func @recursive(%n: i64, %acc: i64) {
// CHECK:         rev.call @recursive(
// CHECK:         rev.uncall @later(
rev.func @recursive(%n: i64, %acc: i64) {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %n1, %acc1 = rev.if (%n, %acc) : i64, i64 pre {
  ^bb0(%pn: i64, %pa: i64):
    %gt = arith.cmpi sgt, %pn, %zero : i64
    rev.cond %gt
  } then {
  ^bb0(%tn: i64, %ta: i64):
    %ta1 = rev.add %ta, %tn : i64
    %tn1 = rev.dec %tn : i64
    %tn2, %ta2 = rev.call @recursive(%tn1, %ta1) : (i64, i64) -> (i64, i64)
    %tn3 = rev.inc %tn2 : i64
    rev.yield %tn3, %ta2 : i64, i64
  } else {
  ^bb0(%en: i64, %ea: i64):
    rev.yield %en, %ea : i64, i64
  }
  %acc2 = rev.uncall @later(%acc1) : (i64) -> i64
  rev.return %n1, %acc2 : i64, i64
}

// CHECK-LABEL: rev.func @later(%x: i64) {
rev.func @later(%x: i64) {
  %x1 = rev.inc %x : i64
  rev.return %x1 : i64
}
