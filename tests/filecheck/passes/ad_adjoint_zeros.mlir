// RUN: rev-opt %s -p ad-adjoint | filecheck %s
// RUN: rev-opt %s -p 'ad-adjoint{loss=0}' | filecheck %s --check-prefix=LOSS
// RUN: rev-opt %s -p 'ad-adjoint{loss=0}' | rev-opt -p rev-verify | filecheck %s --check-prefix=VERIFIED
// RUN: not rev-opt %s -p 'ad-adjoint{loss=1}' 2>&1 | filecheck %s --check-prefix=NOTFLOAT
// RUN: not rev-opt %s -p 'ad-adjoint{loss=5}' 2>&1 | filecheck %s --check-prefix=RANGE

// The adjoint leaves out gradient updates it knows add zero (design decision
// 18).  An ancilla's gradient is zero where the adjoint re-allocates it, and
// the loop that uncomputed the ancilla runs after its last use: undoing it
// only recomputes the ancilla.

// out += sqrt(Σ x[i]²), the sum in an ancilla that is uncomputed.
rev.func @norm(%out: f64, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %len = memref.dim %x, %c0 : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %n = anc.alloc %zero : f64
  %n1 = rev.for %c0 to %len step %c1 : index (%n) : f64 {
  ^bb0(%i: index, %a: f64):
    %v = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %v, %v : f64
    %a1 = rev.add %a, %sq : f64
    rev.yield %a1 : f64
  }
  %r = math.sqrt %n1 : f64
  %out1 = rev.add %out, %r : f64
  %n2 = rev.for %c0 to %len step %c1 : index (%n1) : f64 {
  ^bb0(%i: index, %a: f64):
    %v = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %v, %v : f64
    %a1 = rev.sub %a, %sq : f64
    rev.yield %a1 : f64
  }
  anc.free %n2, %zero : f64
  rev.return %out1 : f64
}

// Undoing the uncomputation: the loop carries the (zero) gradient of n
// unchanged and touches no shadow.  Then ḡn gets ḡout / 2√n, and undoing the
// computation sends 2·x[i]·ḡn into ḡx.
// CHECK-LABEL: rev.func @norm.adj(%out: f64, %x: memref<?xf64>, %g_out: f64, %g_x: memref<?xf64>) {
// CHECK:         %g_n2 = anc.alloc %{{.*}} : f64
// CHECK:         %n1, %g_n1 = rev.for reverse %c0 to %len step %c1 : index (%n2, %g_n2) : f64, f64 {
// CHECK-NEXT:    ^bb0(%i: index, %a1: f64, %g_a1: f64):
// CHECK-NEXT:      %v = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:      %sq = arith.mulf %v, %v : f64
// CHECK-NEXT:      %a = rev.add %a1, %sq : f64
// CHECK-NEXT:      rev.yield %a, %g_a1 : f64, f64
// CHECK-NEXT:    }
// CHECK:         %g_n1_1 = rev.add %g_n1, %{{.*}} : f64
// CHECK:         rev.for reverse %c0 to %len step %c1 : index (%n1, %g_n1_1) : f64, f64 {
// CHECK:           rev.take %g_x
// CHECK:       rev.return

// t ← Σ x[i], then y += t·x[i] while t -= x[i] back to 0.  Undoing the second
// loop starts with ḡt = 0, but its body adds ḡy·x[i] to ḡt: a loop body must
// keep what it assumes zero, so the loop is built again without assuming ḡt
// zero, and the body sends -ḡt into ḡx[i].
rev.func @running(%y: f64, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %len = memref.dim %x, %c0 : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.for %c0 to %len step %c1 : index (%t) : f64 {
  ^bb0(%i: index, %a: f64):
    %v = memref.load %x[%i] : memref<?xf64>
    %a1 = rev.add %a, %v : f64
    rev.yield %a1 : f64
  }
  %y1, %t2 = rev.for %c0 to %len step %c1 : index (%y, %t1) : f64, f64 {
  ^bb0(%i: index, %b: f64, %a: f64):
    %v = memref.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %v : f64
    %b1 = rev.add %b, %p : f64
    %a1 = rev.sub %a, %v : f64
    rev.yield %b1, %a1 : f64, f64
  }
  anc.free %t2, %zero : f64
  rev.return %y1 : f64
}

// CHECK-LABEL: rev.func @running.adj(%y: f64, %x: memref<?xf64>, %g_y: f64, %g_x: memref<?xf64>) {
// CHECK:         %y_1, %t1, %g_y_1, %g_t1 = rev.for reverse %c0 to %len step %c1 : index (%y, %t2, %g_y, %g_t2) : f64, f64, f64, f64 {
// CHECK-NEXT:    ^bb0(%i: index, %b1: f64, %a1: f64, %g_b1: f64, %g_a1: f64):
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %g_a1 : f64
// CHECK-NEXT:      %[[E:.*]] = rev.take %g_x[%i] {nocheck} : memref<?xf64>
// CHECK-NEXT:      %{{.*}} = rev.add %[[E]], %[[NEG]] : f64
// CHECK:           %[[CONTRIBUTION:.*]] = arith.mulf %g_b1, %v : f64
// CHECK:           %g_a = rev.add %g_a1, %[[CONTRIBUTION]] : f64
// CHECK:           rev.yield %b, %a, %g_b1, %g_a : f64, f64, f64, f64

// l += |x|² with |x| computed by a call into an ancilla and uncomputed by an
// uncall.  The ordinary adjoint cannot know the gradient of x at the start,
// so it differentiates the uncall, with an adjoint specialised for what it
// does know: the gradient of the ancilla (its argument 0) is zero there
// (@norm.inv.adj.zero_0).  Seeded at the loss (argument 0) only, every other
// output gradient is zero: the adjoint checks that ḡx is zero (freeing each
// element against 0.0 and putting back a zero ancilla), after which undoing
// the uncall moves only zeros and is the plain call of @norm; ḡx is still
// zero when the computing call is differentiated (@norm.adj.zero_1).
rev.func @square_norm(%l: f64, %k: i64, %x: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %n = anc.alloc %zero : f64
  %n1 = rev.call @norm(%n, %x) : (f64, memref<?xf64>) -> f64
  %sq = arith.mulf %n1, %n1 : f64
  %l1 = rev.add %l, %sq : f64
  %n2 = rev.uncall @norm(%n1, %x) : (f64, memref<?xf64>) -> f64
  anc.free %n2, %zero : f64
  rev.return %l1, %k : f64, i64
}
ad.adjoint @square_norm
ad.adjoint @running


// CHECK-LABEL: rev.func @square_norm.adj(%l: f64, %k: i64, %x: memref<?xf64>, %g_l: f64, %g_x: memref<?xf64>) {
// CHECK:         rev.call @norm.inv.adj.zero_0(
// CHECK:         rev.call @norm.adj(

// LOSS-LABEL: rev.func @square_norm.adj.loss0(%l: f64, %k: i64, %x: memref<?xf64>, %g_l: f64, %g_x: memref<?xf64>) {
// LOSS:         rev.for %{{.*}} to %{{.*}} step %{{.*}} : index () {
// LOSS-NEXT:    ^bb0(%[[I:.*]]: index):
// LOSS-NEXT:      %[[E:.*]] = rev.take %g_x[%[[I]]] {nocheck} : memref<?xf64>
// LOSS-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// LOSS-NEXT:      anc.free %[[E]], %[[Z]] : f64
// LOSS-NEXT:      %[[Z2:.*]] = arith.constant 0.000000e+00 : f64
// LOSS-NEXT:      %[[ZE:.*]] = anc.alloc %[[Z2]] : f64
// LOSS-NEXT:      rev.put %[[ZE]], %g_x[%[[I]]] : memref<?xf64>
// LOSS-NEXT:      rev.yield
// LOSS-NEXT:    }
// LOSS-NOT:     @norm.inv.adj
// LOSS:         %[[N1:.*]] = rev.call @norm(%{{.*}}, %x) : (f64, memref<?xf64>) -> f64
// LOSS-NOT:     @norm.inv.adj
// LOSS:         rev.call @norm.adj.zero_1(%[[N1]], %x, %{{.*}}, %g_x)
// LOSS:         rev.return %{{.*}}, %k, %g_l : f64, i64, f64
// Nothing calls the adjoint of the uncall: it is not generated.
// LOSS-NOT:   @norm.inv.adj

// A callee's specialised adjoint tells its caller what it leaves zero: the
// gradient of v stays zero through @positive.adj.zero_1 (v only decides a
// branch), so the loop body keeps ḡv zero and is built once, calling the
// specialisation.
rev.func @positive(%y: f64, %v: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %i = arith.constant 0 : index
  %y1 = rev.if (%y) : f64 pre {
  ^bb0(%a: f64):
    %e = memref.load %v[%i] : memref<?xf64>
    %c = arith.cmpf ogt, %e, %zero : f64
    rev.cond %c
  } then {
  ^bb0(%a: f64):
    %one = arith.constant 1.0 : f64
    %a1 = rev.add %a, %one : f64
    rev.yield %a1 : f64
  } else {
  ^bb0(%a: f64):
    rev.yield %a : f64
  }
  rev.return %y1 : f64
}
rev.func @count(%l: f64, %w: f64, %v: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %v, %c0 : memref<?xf64>
  %l1 = rev.for %c0 to %n step %c1 : index (%l) : f64 {
  ^bb0(%i: index, %a: f64):
    %a1 = rev.call @positive(%a, %v) : (f64, memref<?xf64>) -> f64
    %p = arith.mulf %w, %w : f64
    %a2 = rev.add %a1, %p : f64
    rev.yield %a2 : f64
  }
  rev.return %l1, %w : f64, f64
}
ad.adjoint @count

// LOSS-LABEL: rev.func @positive.adj.zero_1(%y: f64, %v: memref<?xf64>, %g_y: f64, %g_v: memref<?xf64>) {
// LOSS-NOT:     %g_v
// LOSS:         rev.return
// LOSS-LABEL: rev.func @count.adj.loss0(
// LOSS:         rev.for reverse %c0 to %n step %c1 : index (%l, %g_l, %g_w_1) : f64, f64, f64 {
// LOSS:           rev.call @positive.adj.zero_1(%{{.*}}, %v, %{{.*}}, %g_v)
// LOSS-NOT:   @positive.adj(

// VERIFIED: rev.func @square_norm.adj.loss0

// NOTFLOAT: error: 'rev.func' at {{.*}}ad_adjoint_zeros.mlir:{{[0-9]+}}:1: the loss of a seeded adjoint of @square_norm must be a float, complex, fixed-point or tropical scalar argument; argument #1 is not one
// RANGE: error: 'rev.func' at {{.*}}ad_adjoint_zeros.mlir:{{[0-9]+}}:1: the loss of a seeded adjoint of @{{square_norm|running}} must be a float, complex, fixed-point or tropical scalar argument; argument #5 is not one
