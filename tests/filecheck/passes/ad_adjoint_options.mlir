// RUN: rev-opt %s -p 'ad-adjoint{functions=outer}' | filecheck %s
// RUN: not rev-opt %s -p 'ad-adjoint{functions=nosuch}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: rev-opt %s -p 'ad-adjoint{functions=fact.inv}' | filecheck %s --check-prefix=INVERSE
// RUN: not rev-opt %s -p 'ad-adjoint{functions=nosuch.inv}' 2>&1 | filecheck %s --check-prefix=MISSING-INVERSE

// Without ad.adjoint ops, `functions=` names the functions to differentiate
// (an enzyme-wrap style by-name request).  Their callees are differentiated
// too, recursion included; @f.adj goes right after @f.  `rev.uncall @g` is
// differentiated through @g.inv, added when missing.

rev.func @fact(%y: f64, %x: f64, %n: i64) {
  %zero = arith.constant 0 : i64
  %y1, %x1, %n1 = rev.if (%y, %x, %n) : f64, f64, i64 pre {
  ^bb0(%a: f64, %b: f64, %k: i64):
    %c = arith.cmpi sgt, %k, %zero : i64
    rev.cond %c
  } then {
  ^bb0(%a: f64, %b: f64, %k: i64):
    %k1 = rev.dec %k : i64
    %a1, %b1, %k2 = rev.call @fact(%a, %b, %k1) : (f64, f64, i64) -> (f64, f64, i64)
    %k3 = rev.inc %k2 : i64
    %p = arith.mulf %b1, %b1 : f64
    %a2 = rev.add %a1, %p : f64
    rev.yield %a2, %b1, %k3 : f64, f64, i64
  } else {
  ^bb0(%a: f64, %b: f64, %k: i64):
    %a1 = rev.add %a, %b : f64
    rev.yield %a1, %b, %k : f64, f64, i64
  }
  rev.return %y1, %x1, %n1 : f64, f64, i64
}
// CHECK-LABEL: rev.func @fact(
// CHECK:         rev.call @fact(
// CHECK-NOT:   rev.func @fact.adj(

rev.func @outer(%y: f64, %x: f64) {
  %n = arith.constant 3 : i64
  %k = anc.alloc %n : i64
  %y1, %x1, %k1 = rev.uncall @fact(%y, %x, %k) : (f64, f64, i64) -> (f64, f64, i64)
  anc.free %k1, %n : i64
  rev.return %y1, %x1 : f64, f64
}
// @outer uncalls @fact, so it needs @fact.inv (added after @fact) and its
// adjoint; @fact.inv calls itself (as `rev.uncall @fact`), so @fact.inv.adj
// calls itself.  The recursive call sits in a branch: the adjoint rev.if
// carries the state and the gradients of its float members.
// CHECK-LABEL: rev.func @fact.inv(
// CHECK-LABEL: rev.func @fact.inv.adj(%y: f64, %x: f64, %n: i64, %g_y: f64, %g_x: f64) {
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = rev.if (%y, %x, %n, %g_y, %g_x) : f64, f64, i64, f64, f64 pre {
// CHECK:         rev.call @fact.inv.adj(
// CHECK-LABEL: rev.func @outer(
// CHECK-LABEL: rev.func @outer.adj(%y: f64, %x: f64, %g_y: f64, %g_x: f64) {
// CHECK:         rev.call @fact.inv.adj(%y, %x, %{{.*}}, %g_y, %g_x)

// MISSING: error: no rev.func named @nosuch in the module

// `functions=` names what a request op may: the inverse of a function,
// added as `ad.adjoint @fact.inv` adds it.
// INVERSE-LABEL: rev.func @fact(
// INVERSE-LABEL: rev.func @fact.inv(
// INVERSE-LABEL: rev.func @fact.inv.adj(
// INVERSE-NOT:   rev.func @outer.adj(
// MISSING-INVERSE: error: no rev.func named @nosuch.inv (nor @nosuch, whose inverse it names) in the module
