// RUN: rev-opt %s -p canonicalize | filecheck %s

// The canonicalization patterns of the reversible ops (xDSL's canonicalize
// pass picks them up): an op immediately followed by its own inverse on the
// same values is the identity and both go; rev.inv of rev.inv folds.  Dead
// pure expressions are removed by canonicalize as usual.

// An instruction followed by its inverse on the same read values cancels.
// CHECK-LABEL: rev.func @add_sub(%y: f64, %a: f64) {
// CHECK-NEXT: %y3 = rev.neg %y : f64
// CHECK-NEXT: rev.return %y3, %a : f64, f64
// CHECK-NEXT: }
rev.func @add_sub(%y: f64, %a: f64) {
  %y1 = rev.add %y, %a : f64
  %y2 = rev.sub %y1, %a : f64
  %y3 = rev.neg %y2 : f64
  rev.return %y3, %a : f64, f64
}

// CHECK-LABEL: rev.func @instruction_pairs(%k: i64, %n: i64, %p: !rev.log<f64>, %l: !rev.log<f64>, %u: f64, %v: f64, %w: f64) {
// CHECK-NEXT: rev.return %k, %n, %p, %l, %u, %v, %w : i64, i64, !rev.log<f64>, !rev.log<f64>, f64, f64, f64
// CHECK-NEXT: }
rev.func @instruction_pairs(%k: i64, %n: i64, %p: !rev.log<f64>, %l: !rev.log<f64>, %u: f64, %v: f64, %w: f64) {
  %k1 = rev.inc %k : i64
  %k2 = rev.dec %k1 : i64
  %k3 = rev.xor %k2, %n : i64
  %k4 = rev.xor %k3, %n : i64
  %p1 = rev.mul %p, %l : !rev.log<f64>
  %p2 = rev.div %p1, %l : !rev.log<f64>
  %u1, %v1 = rev.rot %u, %v, %w : f64
  %u2, %v2 = rev.irot %u1, %v1, %w : f64
  rev.return %k4, %n, %p2, %l, %u2, %v2, %w : i64, i64, !rev.log<f64>, !rev.log<f64>, f64, f64, f64
}

// Cancellation cascades: once the inner pair is gone the next pair is
// adjacent.  Pure expressions between the two ops do not get in the way.
// CHECK-LABEL: rev.func @cascade(%y: f64, %z: f64, %a: f64, %b: f64) {
// CHECK-NEXT: rev.return %y, %z, %a, %b : f64, f64, f64, f64
// CHECK-NEXT: }
rev.func @cascade(%y: f64, %z: f64, %a: f64, %b: f64) {
  %t = arith.mulf %a, %b : f64
  %y1 = rev.add %y, %t : f64
  %y2 = rev.neg %y1 : f64
  %p, %q = rev.swap %y2, %z : f64
  %r, %s = rev.swap %p, %q : f64
  %y3 = rev.neg %r : f64
  %y4 = rev.sub %y3, %t : f64
  rev.return %y4, %s, %a, %b : f64, f64, f64, f64
}

// CHECK-LABEL: rev.func @alloc_free(%y: f64) {
// CHECK-NEXT: %y1 = rev.neg %y : f64
// CHECK-NEXT: rev.return %y1 : f64
// CHECK-NEXT: }
rev.func @alloc_free(%y: f64) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  anc.free %t, %zero : f64
  %y1 = rev.neg %y : f64
  rev.return %y1 : f64
}

// CHECK-LABEL: rev.func @push_pop(%y: f64, %s: !anc.stack<f64>) {
// CHECK-NEXT: %y2 = rev.neg %y : f64
// CHECK-NEXT: rev.return %y2 : f64
// CHECK-NEXT: }
rev.func @push_pop(%y: f64, %s: !anc.stack<f64>) {
  anc.push %s, %y : !anc.stack<f64>
  %y1 = anc.pop %s : !anc.stack<f64>
  %y2 = rev.neg %y1 : f64
  rev.return %y2 : f64
}

// CHECK-LABEL: rev.func @take_put(%m: memref<4xf64>, %i: index) {
// CHECK-NEXT: rev.return %i : index
// CHECK-NEXT: }
rev.func @take_put(%m: memref<4xf64>, %i: index) {
  %e = rev.take %m[%i] : memref<4xf64>
  rev.put %e, %m[%i] : memref<4xf64>
  rev.return %i : index
}

// CHECK-LABEL: rev.func @call_uncall(%y: f64, %m: memref<4xf64>) {
// CHECK-NEXT: rev.return %y : f64
// CHECK-NEXT: }
rev.func @call_uncall(%y: f64, %m: memref<4xf64>) {
  %y1 = rev.call @g(%y, %m) : (f64, memref<4xf64>) -> f64
  %y2 = rev.uncall @g(%y1, %m) : (f64, memref<4xf64>) -> f64
  %y3 = rev.uncall @g(%y2, %m) : (f64, memref<4xf64>) -> f64
  %y4 = rev.call @g(%y3, %m) : (f64, memref<4xf64>) -> f64
  rev.return %y4 : f64
}

// CHECK-LABEL: rev.func @unpack_pack(%c: complex<f64>) {
// CHECK-NEXT: rev.return %c : complex<f64>
// CHECK-NEXT: }
rev.func @unpack_pack(%c: complex<f64>) {
  %re, %im = rev.unpack %c : complex<f64>
  %c1 = rev.pack %re, %im : complex<f64>
  rev.return %c1 : complex<f64>
}

// rev.inv of rev.inv is the inner region, inline.
// CHECK-LABEL: rev.func @inv_inv(%x: f64, %y: f64) {
// CHECK-NEXT: %d1 = rev.add %y, %x : f64
// CHECK-NEXT: %c1 = rev.neg %x : f64
// CHECK-NEXT: rev.return %c1, %d1 : f64, f64
// CHECK-NEXT: }
rev.func @inv_inv(%x: f64, %y: f64) {
  %x1, %y1 = rev.inv (%x, %y) : f64, f64 {
  ^bb0(%a: f64, %b: f64):
    %a1, %b1 = rev.inv (%a, %b) : f64, f64 {
    ^bb0(%c: f64, %d: f64):
      %d1 = rev.add %d, %c : f64
      %c1 = rev.neg %c : f64
      rev.yield %c1, %d1 : f64, f64
    }
    rev.yield %a1, %b1 : f64, f64
  }
  rev.return %x1, %y1 : f64, f64
}

// Nothing here cancels: different read values, an op in between, an ancilla
// freed with a different value (the run-time check must stay), another
// stack, another memref argument, another function, uncall followed by uncall.
// CHECK-LABEL: rev.func @no_cancel(%y: f64, %a: f64, %b: f64, %m: memref<4xf64>, %s1: !anc.stack<f64>, %s2: !anc.stack<f64>, %m2: memref<4xf64>) {
// CHECK-NEXT: %y1 = rev.add %y, %a : f64
// CHECK-NEXT: %y2 = rev.sub %y1, %b : f64
// CHECK-NEXT: %y3 = rev.add %y2, %a : f64
// CHECK-NEXT: %y4 = rev.neg %y3 : f64
// CHECK-NEXT: %y5 = rev.sub %y4, %a : f64
// CHECK-NEXT: %zero = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %one = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %t = anc.alloc %zero : f64
// CHECK-NEXT: anc.free %t, %one : f64
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %e = rev.take %m[%c0] : memref<4xf64>
// CHECK-NEXT: %e1 = rev.neg %e : f64
// CHECK-NEXT: rev.put %e1, %m[%c0] : memref<4xf64>
// CHECK-NEXT: anc.push %s1, %y5 : !anc.stack<f64>
// CHECK-NEXT: %y6 = anc.pop %s2 : !anc.stack<f64>
// CHECK-NEXT: %y7 = rev.call @g(%y6, %m) : (f64, memref<4xf64>) -> f64
// CHECK-NEXT: %y8 = rev.uncall @g(%y7, %m2) : (f64, memref<4xf64>) -> f64
// CHECK-NEXT: %y9 = rev.uncall @h(%y8) : (f64) -> f64
// CHECK-NEXT: %y10 = rev.uncall @h(%y9) : (f64) -> f64
// CHECK-NEXT: %y11 = rev.call @g(%y10, %m) : (f64, memref<4xf64>) -> f64
// CHECK-NEXT: rev.return %y11, %a, %b : f64, f64, f64
// CHECK-NEXT: }
rev.func @no_cancel(%y: f64, %a: f64, %b: f64, %m: memref<4xf64>, %s1: !anc.stack<f64>, %s2: !anc.stack<f64>, %m2: memref<4xf64>) {
  %y1 = rev.add %y, %a : f64
  %y2 = rev.sub %y1, %b : f64
  %y3 = rev.add %y2, %a : f64
  %y4 = rev.neg %y3 : f64
  %y5 = rev.sub %y4, %a : f64
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %t = anc.alloc %zero : f64
  anc.free %t, %one : f64
  %c0 = arith.constant 0 : index
  %e = rev.take %m[%c0] : memref<4xf64>
  %e1 = rev.neg %e : f64
  rev.put %e1, %m[%c0] : memref<4xf64>
  anc.push %s1, %y5 : !anc.stack<f64>
  %y6 = anc.pop %s2 : !anc.stack<f64>
  %y7 = rev.call @g(%y6, %m) : (f64, memref<4xf64>) -> f64
  %y8 = rev.uncall @g(%y7, %m2) : (f64, memref<4xf64>) -> f64
  %y9 = rev.uncall @h(%y8) : (f64) -> f64
  %y10 = rev.uncall @h(%y9) : (f64) -> f64
  %y11 = rev.call @g(%y10, %m) : (f64, memref<4xf64>) -> f64
  rev.return %y11, %a, %b : f64, f64, f64
}

// CHECK-LABEL: rev.func @g(%y: f64, %m: memref<4xf64>) {
// CHECK-NEXT: %y1 = rev.neg %y : f64
// CHECK-NEXT: rev.return %y1 : f64
// CHECK-NEXT: }
rev.func @g(%y: f64, %m: memref<4xf64>) {
  %y1 = rev.neg %y : f64
  rev.return %y1 : f64
}

// CHECK-LABEL: rev.func @h(%y: f64) {
// CHECK-NEXT: %y1 = rev.neg %y : f64
// CHECK-NEXT: rev.return %y1 : f64
// CHECK-NEXT: }
rev.func @h(%y: f64) {
  %y1 = rev.neg %y : f64
  rev.return %y1 : f64
}

// A pair cancels across ops independent of it: they neither read what the
// pair produces nor touch its arrays and stacks.  Here the uncall of @k on
// %m, then bookkeeping on %w and %z, then the call of @k on %m again (as
// where @f's final uncomputation meets its undoing at the start of a
// loss-seeded @f.adj).  The second pair has an update of %m between its
// halves: it stays.
// CHECK-LABEL: rev.func @across(%y: f64, %z: f64, %m: memref<4xf64>, %w: memref<4xf64>, %i: index) {
// CHECK-NEXT:    %e = rev.take %w[%i] : memref<4xf64>
// CHECK-NEXT:    %e1 = rev.add %e, %z : f64
// CHECK-NEXT:    rev.put %e1, %w[%i] : memref<4xf64>
// CHECK-NEXT:    %z1 = rev.neg %z : f64
// CHECK-NEXT:    %y3 = rev.uncall @k(%y, %m) : (f64, memref<4xf64>) -> f64
// CHECK-NEXT:    %f = rev.take %m[%i] : memref<4xf64>
// CHECK-NEXT:    %f1 = rev.add %f, %z1 : f64
// CHECK-NEXT:    rev.put %f1, %m[%i] : memref<4xf64>
// CHECK-NEXT:    %y4 = rev.call @k(%y3, %m) : (f64, memref<4xf64>) -> f64
// CHECK-NEXT:    rev.return %y4, %z1, %i : f64, f64, index
// CHECK-NEXT:  }
rev.func @across(%y: f64, %z: f64, %m: memref<4xf64>, %w: memref<4xf64>, %i: index) {
  %y1 = rev.uncall @k(%y, %m) : (f64, memref<4xf64>) -> f64
  %e = rev.take %w[%i] : memref<4xf64>
  %e1 = rev.add %e, %z : f64
  rev.put %e1, %w[%i] : memref<4xf64>
  %z1 = rev.neg %z : f64
  %y2 = rev.call @k(%y1, %m) : (f64, memref<4xf64>) -> f64
  %y3 = rev.uncall @k(%y2, %m) : (f64, memref<4xf64>) -> f64
  %f = rev.take %m[%i] : memref<4xf64>
  %f1 = rev.add %f, %z1 : f64
  rev.put %f1, %m[%i] : memref<4xf64>
  %y4 = rev.call @k(%y3, %m) : (f64, memref<4xf64>) -> f64
  rev.return %y4, %z1, %i : f64, f64, index
}

rev.func @k(%y: f64, %m: memref<4xf64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xf64>
  %y1 = rev.add %y, %v : f64
  rev.return %y1 : f64
}
