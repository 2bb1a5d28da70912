// RUN: rev-opt %s -p ad-adjoint | filecheck %s
// RUN: rev-opt %s -p ad-adjoint,ad-adjoint | filecheck %s

// ad-adjoint replaces each `ad.adjoint @f` by `rev.func @f.adj`, inserted right
// after @f.  @f.adj takes f's arguments (holding f's outputs), then one
// gradient per float scalar argument (the output adjoints); it returns f's
// inputs, then the input adjoints.  Its body is the inverse of f's body
// (NiLang's GVar semantics): each instruction is uncomputed while gradient
// flows from the values it wrote to the values it read.  Running the pass
// twice changes nothing (existing adjoints are kept).

// y += a * b;  y -= a * a.  Walking backwards: first `y -= a*a` is undone
// (`y += a*a`) and a's gradient receives -ḡy·a twice (the shared read of
// `a * a` gives 2·a, not a), then `y += a*b` is undone while a and b receive
// ḡy·b and ḡy·a.  The gradient of y passes through both instructions.
rev.func @two(%y: f64, %a: f64, %b: f64) {
  %t = arith.mulf %a, %b : f64
  %y1 = rev.add %y, %t : f64
  %s = arith.mulf %a, %a : f64
  %y2 = rev.sub %y1, %s : f64
  rev.return %y2, %a, %b : f64, f64, f64
}
ad.adjoint @two

// CHECK-NOT:   ad.adjoint
// CHECK-LABEL: rev.func @two(%y: f64, %a: f64, %b: f64) {
// CHECK:         rev.return %y2, %a, %b : f64, f64, f64
// CHECK-NEXT:  }
// CHECK-NEXT:  rev.func @two.adj(%y: f64, %a: f64, %b: f64, %g_y: f64, %g_a: f64, %g_b: f64) {
// CHECK-NEXT:    %[[NEG:.*]] = arith.negf %g_y : f64
// CHECK-NEXT:    %[[P1:.*]] = arith.mulf %[[NEG]], %a : f64
// CHECK-NEXT:    %[[P2:.*]] = arith.mulf %[[NEG]], %a : f64
// CHECK-NEXT:    %[[SUM:.*]] = arith.addf %[[P1]], %[[P2]] : f64
// CHECK-NEXT:    %[[GA1:.*]] = rev.add %g_a, %[[SUM]] : f64
// CHECK-NEXT:    %[[S:.*]] = arith.mulf %a, %a : f64
// CHECK-NEXT:    %[[Y1:.*]] = rev.add %y, %[[S]] : f64
// CHECK-NEXT:    %[[DA:.*]] = arith.mulf %g_y, %b : f64
// CHECK-NEXT:    %[[DB:.*]] = arith.mulf %g_y, %a : f64
// CHECK-NEXT:    %[[GA2:.*]] = rev.add %[[GA1]], %[[DA]] : f64
// CHECK-NEXT:    %[[GB:.*]] = rev.add %g_b, %[[DB]] : f64
// CHECK-NEXT:    %[[T:.*]] = arith.mulf %a, %b : f64
// CHECK-NEXT:    %[[Y0:.*]] = rev.sub %[[Y1]], %[[T]] : f64
// CHECK-NEXT:    rev.return %[[Y0]], %a, %b, %g_y, %[[GA2]], %[[GB]] : f64, f64, f64, f64, f64, f64
// CHECK-NEXT:  }

// An ancilla allocated with a non-constant value passes its gradient to that
// value before the ancilla is freed; its own gradient is then discarded
// (unchecked free).  Integers carry no gradient: `%n` has none.
rev.func @ancilla(%y: f64, %x: f64, %n: i64) {
  %two = arith.constant 2.0 : f64
  %e = arith.mulf %x, %two : f64
  %t = anc.alloc %e : f64
  %y1 = rev.add %y, %t : f64
  %zero = arith.constant 0.0 : f64
  %t1 = rev.sub %t, %e : f64
  anc.free %t1, %zero : f64
  rev.return %y1, %x, %n : f64, f64, i64
}
ad.adjoint @ancilla

// The gradient of t is zero where the adjoint re-allocates t (nothing after
// the free depends on t), so undoing `t -= e` only recomputes t: the update
// of ḡx it would make is known to add zero and is left out.  The zero
// gradient becomes an ancilla only where something is added to it.
// CHECK-LABEL: rev.func @ancilla.adj(%y: f64, %x: f64, %n: i64, %g_y: f64, %g_x: f64) {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[T1:.*]] = anc.alloc %[[ZERO]] : f64
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f64
//                  (undo t -= e: recompute t; ḡt is zero)
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:    %[[E:.*]] = arith.mulf %x, %[[TWO]] : f64
// CHECK-NEXT:    %[[T:.*]] = rev.add %[[T1]], %[[E]] : f64
//                  (undo y += t: ḡt += ḡy)
// CHECK-NEXT:    %[[GT1:.*]] = anc.alloc %[[Z]] : f64
// CHECK-NEXT:    %[[GT:.*]] = rev.add %[[GT1]], %g_y : f64
// CHECK-NEXT:    %[[Y0:.*]] = rev.sub %y, %[[T]] : f64
//                  (undo t ← e: ḡt flows into e = 2x, then t and ḡt end;
//                   ḡt is not zero, so @f.adj forgets it and has no inverse)
// CHECK-NEXT:    %[[D:.*]] = arith.mulf %[[GT]], %[[TWO]] : f64
// CHECK-NEXT:    %[[GX:.*]] = rev.add %g_x, %[[D]] : f64
// CHECK-NEXT:    anc.free %[[T]], %[[E]] : f64
// CHECK-NEXT:    %[[Z2:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    anc.free %[[GT]], %[[Z2]] {nocheck, rev.forgetful} : f64
// CHECK-NEXT:    rev.return %[[Y0]], %x, %n, %g_y, %[[GX]] : f64, f64, i64, f64, f64
// CHECK-NEXT:  }

// Calls use the callee's adjoint, generated on demand (here @neg_swap.adj,
// inserted after @neg_swap); rev.neg negates the gradient, rev.swap swaps
// gradients by renaming.
rev.func @neg_swap(%a: f64, %b: f64) {
  %a1 = rev.neg %a : f64
  %b1, %a2 = rev.swap %b, %a1 : f64
  rev.return %a2, %b1 : f64, f64
}
rev.func @caller(%a: f64, %b: f64) {
  %a1, %b1 = rev.call @neg_swap(%a, %b) : (f64, f64) -> (f64, f64)
  rev.return %a1, %b1 : f64, f64
}
ad.adjoint @caller

// CHECK-LABEL: rev.func @neg_swap.adj(%a: f64, %b: f64, %g_a: f64, %g_b: f64) {
// CHECK-NEXT:    %[[B:.*]], %[[A1:.*]] = rev.swap %b, %a : f64
// CHECK-NEXT:    %[[A0:.*]] = rev.neg %[[A1]] : f64
// CHECK-NEXT:    %[[GA:.*]] = rev.neg %g_b : f64
// CHECK-NEXT:    rev.return %[[A0]], %[[B]], %[[GA]], %g_a : f64, f64, f64, f64
// CHECK-NEXT:  }
// CHECK-LABEL: rev.func @caller.adj(%a: f64, %b: f64, %g_a: f64, %g_b: f64) {
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = rev.call @neg_swap.adj(%a, %b, %g_a, %g_b) : (f64, f64, f64, f64) -> (f64, f64, f64, f64)
