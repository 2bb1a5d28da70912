// RUN: rev-opt %s | rev-opt | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s

// Every op of the rev dialect, in its custom form, survives printing and
// re-parsing (first RUN line) and the generic form (second RUN line).

// Scalar instructions on floats: add, sub, neg, swap, rot, irot.
// CHECK-LABEL: rev.func @instructions(%y: f64, %a: f64, %b: f64) {
// CHECK-NEXT: %t = arith.mulf %a, %b : f64
// CHECK-NEXT: %y1 = rev.add %y, %t : f64
// CHECK-NEXT: %y2 = rev.sub %y1, %a : f64
// CHECK-NEXT: %y3 = rev.neg %y2 : f64
// CHECK-NEXT: %p, %q = rev.swap %y3, %a : f64
// CHECK-NEXT: %r, %s = rev.rot %p, %q, %b : f64
// CHECK-NEXT: %u, %v = rev.irot %r, %s, %b : f64
// CHECK-NEXT: rev.return %u, %v, %b : f64, f64, f64
// CHECK-NEXT: }
rev.func @instructions(%y: f64, %a: f64, %b: f64) {
  %t = arith.mulf %a, %b : f64
  %y1 = rev.add %y, %t : f64
  %y2 = rev.sub %y1, %a : f64
  %y3 = rev.neg %y2 : f64
  %p, %q = rev.swap %y3, %a : f64
  %r, %s = rev.rot %p, %q, %b : f64
  %u, %v = rev.irot %r, %s, %b : f64
  rev.return %u, %v, %b : f64, f64, f64
}

// Integer instructions: inc, dec, xor (on i64 and on i1), add on index.
// CHECK-LABEL: rev.func @integers(%x: i64, %k: i64, %flag: i1, %n: index) {
// CHECK-NEXT: %x1 = rev.inc %x : i64
// CHECK-NEXT: %x2 = rev.dec %x1 : i64
// CHECK-NEXT: %k1 = rev.xor %k, %x2 : i64
// CHECK-NEXT: %true = arith.constant true
// CHECK-NEXT: %flag1 = rev.xor %flag, %true : i1
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %n1 = rev.add %n, %c1 : index
// CHECK-NEXT: rev.return %x2, %k1, %flag1, %n1 : i64, i64, i1, index
// CHECK-NEXT: }
rev.func @integers(%x: i64, %k: i64, %flag: i1, %n: index) {
  %x1 = rev.inc %x : i64
  %x2 = rev.dec %x1 : i64
  %k1 = rev.xor %k, %x2 : i64
  %true = arith.constant true
  %flag1 = rev.xor %flag, %true : i1
  %c1 = arith.constant 1 : index
  %n1 = rev.add %n, %c1 : index
  rev.return %x2, %k1, %flag1, %n1 : i64, i64, i1, index
}

// Log numbers: to_log, mul, div, from_log.
// CHECK-LABEL: rev.func @log_numbers(%p: !rev.log<f64>, %a: f64, %z: f64) {
// CHECK-NEXT: %la = rev.to_log %a : f64
// CHECK-NEXT: %p1 = rev.mul %p, %la : !rev.log<f64>
// CHECK-NEXT: %two = arith.constant 2.000000e+00 : f64
// CHECK-NEXT: %l2 = rev.to_log %two : f64
// CHECK-NEXT: %p2 = rev.div %p1, %l2 : !rev.log<f64>
// CHECK-NEXT: %real = rev.from_log %p2 : !rev.log<f64>
// CHECK-NEXT: %z1 = rev.add %z, %real : f64
// CHECK-NEXT: rev.return %p2, %a, %z1 : !rev.log<f64>, f64, f64
// CHECK-NEXT: }
rev.func @log_numbers(%p: !rev.log<f64>, %a: f64, %z: f64) {
  %la = rev.to_log %a : f64
  %p1 = rev.mul %p, %la : !rev.log<f64>
  %two = arith.constant 2.0 : f64
  %l2 = rev.to_log %two : f64
  %p2 = rev.div %p1, %l2 : !rev.log<f64>
  %real = rev.from_log %p2 : !rev.log<f64>
  %z1 = rev.add %z, %real : f64
  rev.return %p2, %a, %z1 : !rev.log<f64>, f64, f64
}

// Complex parts: unpack, pack.
// CHECK-LABEL: rev.func @complex_parts(%c: complex<f64>, %w: f64) {
// CHECK-NEXT: %re, %im = rev.unpack %c : complex<f64>
// CHECK-NEXT: %re1 = rev.add %re, %w : f64
// CHECK-NEXT: %im1 = rev.neg %im : f64
// CHECK-NEXT: %c1 = rev.pack %re1, %im1 : complex<f64>
// CHECK-NEXT: rev.return %c1, %w : complex<f64>, f64
// CHECK-NEXT: }
rev.func @complex_parts(%c: complex<f64>, %w: f64) {
  %re, %im = rev.unpack %c : complex<f64>
  %re1 = rev.add %re, %w : f64
  %im1 = rev.neg %im : f64
  %c1 = rev.pack %re1, %im1 : complex<f64>
  rev.return %c1, %w : complex<f64>, f64
}

// Memref elements: take, put (one and two indices, nocheck on take).
// CHECK-LABEL: rev.func @elements(%m: memref<4xf64>, %g: memref<2x3xf64>, %i: index, %v: f64) {
// CHECK-NEXT: %e = rev.take %m[%i] : memref<4xf64>
// CHECK-NEXT: %e1 = rev.add %e, %v : f64
// CHECK-NEXT: %e2 = rev.neg %e1 : f64
// CHECK-NEXT: rev.put %e2, %m[%i] : memref<4xf64>
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %f = rev.take %g[%c0, %c2] {nocheck} : memref<2x3xf64>
// CHECK-NEXT: %ld = memref.load %m[%c0] : memref<4xf64>
// CHECK-NEXT: %f1 = rev.sub %f, %ld : f64
// CHECK-NEXT: rev.put %f1, %g[%c0, %c2] : memref<2x3xf64>
// CHECK-NEXT: rev.return %i, %v : index, f64
// CHECK-NEXT: }
rev.func @elements(%m: memref<4xf64>, %g: memref<2x3xf64>, %i: index, %v: f64) {
  %e = rev.take %m[%i] : memref<4xf64>
  %e1 = rev.add %e, %v : f64
  %e2 = rev.neg %e1 : f64
  rev.put %e2, %m[%i] : memref<4xf64>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %f = rev.take %g[%c0, %c2] {nocheck} : memref<2x3xf64>
  %ld = memref.load %m[%c0] : memref<4xf64>
  %f1 = rev.sub %f, %ld : f64
  rev.put %f1, %g[%c0, %c2] : memref<2x3xf64>
  rev.return %i, %v : index, f64
}

// rev.if with a postcondition, and without one (with nocheck).
// CHECK-LABEL: rev.func @conditionals(%x: f64, %y: f64) {
// CHECK-NEXT: %zero = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %x1, %y1 = rev.if (%x, %y) : f64, f64 pre {
// CHECK-NEXT: ^bb0(%px: f64, %py: f64):
// CHECK-NEXT:   %gt = arith.cmpf ogt, %px, %zero : f64
// CHECK-NEXT:   rev.cond %gt
// CHECK-NEXT: } then {
// CHECK-NEXT: ^bb0(%tx: f64, %ty: f64):
// CHECK-NEXT:   %tx1 = rev.neg %tx : f64
// CHECK-NEXT:   %ty1 = rev.add %ty, %tx1 : f64
// CHECK-NEXT:   rev.yield %tx1, %ty1 : f64, f64
// CHECK-NEXT: } else {
// CHECK-NEXT: ^bb0(%ex: f64, %ey: f64):
// CHECK-NEXT:   %ey1 = rev.sub %ey, %ex : f64
// CHECK-NEXT:   rev.yield %ex, %ey1 : f64, f64
// CHECK-NEXT: } post {
// CHECK-NEXT: ^bb0(%qx: f64, %qy: f64):
// CHECK-NEXT:   %lt = arith.cmpf olt, %qx, %zero : f64
// CHECK-NEXT:   rev.cond %lt
// CHECK-NEXT: }
// CHECK-NEXT: %y2 = rev.if (%y1) : f64 attributes {nocheck} pre {
// CHECK-NEXT: ^bb0(%p2: f64):
// CHECK-NEXT:   %ne = arith.cmpf one, %x1, %zero : f64
// CHECK-NEXT:   rev.cond %ne
// CHECK-NEXT: } then {
// CHECK-NEXT: ^bb0(%t2: f64):
// CHECK-NEXT:   %t3 = rev.add %t2, %x1 : f64
// CHECK-NEXT:   rev.yield %t3 : f64
// CHECK-NEXT: } else {
// CHECK-NEXT: ^bb0(%e2: f64):
// CHECK-NEXT:   rev.yield %e2 : f64
// CHECK-NEXT: }
// CHECK-NEXT: rev.return %x1, %y2 : f64, f64
// CHECK-NEXT: }
rev.func @conditionals(%x: f64, %y: f64) {
  %zero = arith.constant 0.0 : f64
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
    rev.yield %ex, %ey1 : f64, f64
  } post {
  ^bb0(%qx: f64, %qy: f64):
    %lt = arith.cmpf olt, %qx, %zero : f64
    rev.cond %lt
  }
  %y2 = rev.if (%y1) : f64 attributes {nocheck} pre {
  ^bb0(%p2: f64):
    %ne = arith.cmpf one, %x1, %zero : f64
    rev.cond %ne
  } then {
  ^bb0(%t2: f64):
    %t3 = rev.add %t2, %x1 : f64
    rev.yield %t3 : f64
  } else {
  ^bb0(%e2: f64):
    rev.yield %e2 : f64
  }
  rev.return %x1, %y2 : f64, f64
}

// rev.while with pre and post conditions.
// CHECK-LABEL: rev.func @while_loop(%n: i64, %acc: i64) {
// CHECK-NEXT: %zero = arith.constant 0 : i64
// CHECK-NEXT: %i0 = anc.alloc %zero : i64
// CHECK-NEXT: %i1, %acc1 = rev.while (%i0, %acc) : i64, i64 pre {
// CHECK-NEXT: ^bb0(%pi: i64, %pa: i64):
// CHECK-NEXT:   %lt = arith.cmpi slt, %pi, %n : i64
// CHECK-NEXT:   rev.cond %lt
// CHECK-NEXT: } post {
// CHECK-NEXT: ^bb0(%qi: i64, %qa: i64):
// CHECK-NEXT:   %gt = arith.cmpi sgt, %qi, %zero : i64
// CHECK-NEXT:   rev.cond %gt
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%bi: i64, %ba: i64):
// CHECK-NEXT:   %ba1 = rev.add %ba, %bi : i64
// CHECK-NEXT:   %bi1 = rev.inc %bi : i64
// CHECK-NEXT:   rev.yield %bi1, %ba1 : i64, i64
// CHECK-NEXT: }
// CHECK-NEXT: %i2 = rev.sub %i1, %n : i64
// CHECK-NEXT: anc.free %i2, %zero : i64
// CHECK-NEXT: rev.return %n, %acc1 : i64, i64
// CHECK-NEXT: }
rev.func @while_loop(%n: i64, %acc: i64) {
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

// rev.for forward, with `reverse`, and with no state.
// CHECK-LABEL: rev.func @for_loops(%m: memref<8xf64>, %s: f64, %n: index) {
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %s1 = rev.for %c0 to %n step %c1 : index (%s) : f64 {
// CHECK-NEXT: ^bb0(%i: index, %fs: f64):
// CHECK-NEXT:   %x = memref.load %m[%i] : memref<8xf64>
// CHECK-NEXT:   %fs1 = rev.add %fs, %x : f64
// CHECK-NEXT:   %fs2 = rev.neg %fs1 : f64
// CHECK-NEXT:   rev.yield %fs2 : f64
// CHECK-NEXT: }
// CHECK-NEXT: %s2 = rev.for reverse %c0 to %n step %c1 : index (%s1) : f64 {
// CHECK-NEXT: ^bb0(%j: index, %rs: f64):
// CHECK-NEXT:   %rs1 = rev.neg %rs : f64
// CHECK-NEXT:   %y = memref.load %m[%j] : memref<8xf64>
// CHECK-NEXT:   %rs2 = rev.sub %rs1, %y : f64
// CHECK-NEXT:   rev.yield %rs2 : f64
// CHECK-NEXT: }
// CHECK-NEXT: rev.for %c0 to %n step %c1 : index () {
// CHECK-NEXT: ^bb0(%k: index):
// CHECK-NEXT:   %e = rev.take %m[%k] : memref<8xf64>
// CHECK-NEXT:   %e1 = rev.neg %e : f64
// CHECK-NEXT:   rev.put %e1, %m[%k] : memref<8xf64>
// CHECK-NEXT:   rev.yield
// CHECK-NEXT: }
// CHECK-NEXT: rev.return %s2, %n : f64, index
// CHECK-NEXT: }
rev.func @for_loops(%m: memref<8xf64>, %s: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s1 = rev.for %c0 to %n step %c1 : index (%s) : f64 {
  ^bb0(%i: index, %fs: f64):
    %x = memref.load %m[%i] : memref<8xf64>
    %fs1 = rev.add %fs, %x : f64
    %fs2 = rev.neg %fs1 : f64
    rev.yield %fs2 : f64
  }
  %s2 = rev.for reverse %c0 to %n step %c1 : index (%s1) : f64 {
  ^bb0(%j: index, %rs: f64):
    %rs1 = rev.neg %rs : f64
    %y = memref.load %m[%j] : memref<8xf64>
    %rs2 = rev.sub %rs1, %y : f64
    rev.yield %rs2 : f64
  }
  rev.for %c0 to %n step %c1 : index () {
  ^bb0(%k: index):
    %e = rev.take %m[%k] : memref<8xf64>
    %e1 = rev.neg %e : f64
    rev.put %e1, %m[%k] : memref<8xf64>
    rev.yield
  }
  rev.return %s2, %n : f64, index
}

// rev.routine (compute, do) and rev.inv.
// CHECK-LABEL: rev.func @routine_and_inv(%x: f64, %y: f64) {
// CHECK-NEXT: %zero = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %x1, %y1 = rev.routine (%x, %y) : f64, f64 compute {
// CHECK-NEXT: ^bb0(%cx: f64, %cy: f64):
// CHECK-NEXT:   %t = anc.alloc %zero : f64
// CHECK-NEXT:   %t1 = rev.add %t, %cx : f64
// CHECK-NEXT:   rev.yield %cx, %cy, %t1 : f64, f64, f64
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%dx: f64, %dy: f64, %dt: f64):
// CHECK-NEXT:   %dy1 = rev.add %dy, %dt : f64
// CHECK-NEXT:   %dy2 = rev.neg %dy1 : f64
// CHECK-NEXT:   rev.yield %dx, %dy2, %dt : f64, f64, f64
// CHECK-NEXT: }
// CHECK-NEXT: %x2, %y2 = rev.inv (%x1, %y1) : f64, f64 {
// CHECK-NEXT: ^bb0(%ix: f64, %iy: f64):
// CHECK-NEXT:   %iy1 = rev.add %iy, %ix : f64
// CHECK-NEXT:   %ix1 = rev.neg %ix : f64
// CHECK-NEXT:   rev.yield %ix1, %iy1 : f64, f64
// CHECK-NEXT: }
// CHECK-NEXT: rev.return %x2, %y2 : f64, f64
// CHECK-NEXT: }
rev.func @routine_and_inv(%x: f64, %y: f64) {
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
  rev.return %x2, %y2 : f64, f64
}

// rev.safe in its three modes, one with extra attributes.
// CHECK-LABEL: rev.func @safe_modes(%x: f64) {
// CHECK-NEXT: %one = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: rev.safe {
// CHECK-NEXT:   %fwd = arith.addf %x, %one : f64
// CHECK-NEXT: }
// CHECK-NEXT: rev.safe inverse {
// CHECK-NEXT:   %bwd = arith.subf %x, %one : f64
// CHECK-NEXT: }
// CHECK-NEXT: rev.safe both attributes {note = "trace"} {
// CHECK-NEXT:   %any = arith.mulf %x, %one : f64
// CHECK-NEXT: }
// CHECK-NEXT: %x1 = rev.add %x, %one : f64
// CHECK-NEXT: rev.return %x1 : f64
// CHECK-NEXT: }
rev.func @safe_modes(%x: f64) {
  %one = arith.constant 1.0 : f64
  rev.safe {
    %fwd = arith.addf %x, %one : f64
  }
  rev.safe inverse {
    %bwd = arith.subf %x, %one : f64
  }
  rev.safe both attributes {note = "trace"} {
    %any = arith.mulf %x, %one : f64
  }
  %x1 = rev.add %x, %one : f64
  rev.return %x1 : f64
}

// rev.call and rev.uncall, with scalars and references (memref, stack).
// CHECK-LABEL: rev.func @callee(%y: f64, %m: memref<4xf64>, %st: !anc.stack<f64>) {
// CHECK-NEXT: %y1 = rev.neg %y : f64
// CHECK-NEXT: rev.return %y1 : f64
// CHECK-NEXT: }
rev.func @callee(%y: f64, %m: memref<4xf64>, %st: !anc.stack<f64>) {
  %y1 = rev.neg %y : f64
  rev.return %y1 : f64
}

// CHECK-LABEL: rev.func @calls(%y: f64, %m: memref<4xf64>, %st: !anc.stack<f64>) {
// CHECK-NEXT: %y1 = rev.call @callee(%y, %m, %st) : (f64, memref<4xf64>, !anc.stack<f64>) -> f64
// CHECK-NEXT: %y2 = rev.uncall @callee(%y1, %m, %st) : (f64, memref<4xf64>, !anc.stack<f64>) -> f64
// CHECK-NEXT: rev.call @no_scalars(%m) : (memref<4xf64>) -> ()
// CHECK-NEXT: rev.return %y2 : f64
// CHECK-NEXT: }
rev.func @calls(%y: f64, %m: memref<4xf64>, %st: !anc.stack<f64>) {
  %y1 = rev.call @callee(%y, %m, %st) : (f64, memref<4xf64>, !anc.stack<f64>) -> f64
  %y2 = rev.uncall @callee(%y1, %m, %st) : (f64, memref<4xf64>, !anc.stack<f64>) -> f64
  rev.call @no_scalars(%m) : (memref<4xf64>) -> ()
  rev.return %y2 : f64
}

// A function with only references returns nothing; `attributes {nocheck}`
// on a function and on ops.
// CHECK-LABEL: rev.func @no_scalars(%m: memref<4xf64>) attributes {nocheck} {
// CHECK-NEXT: %c3 = arith.constant 3 : index
// CHECK-NEXT: %e = rev.take %m[%c3] {nocheck} : memref<4xf64>
// CHECK-NEXT: %e1 = rev.neg %e : f64
// CHECK-NEXT: rev.put %e1, %m[%c3] {nocheck} : memref<4xf64>
// CHECK-NEXT: rev.return
// CHECK-NEXT: }
rev.func @no_scalars(%m: memref<4xf64>) attributes {nocheck} {
  %c3 = arith.constant 3 : index
  %e = rev.take %m[%c3] {nocheck} : memref<4xf64>
  %e1 = rev.neg %e : f64
  rev.put %e1, %m[%c3] {nocheck} : memref<4xf64>
  rev.return
}
