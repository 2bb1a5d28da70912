// RUN: rev-opt %s -p ad-hessian -o %t && filecheck %s --input-file %t
// RUN: rev-run %t -e f.adj.tan --args 7.38905609893065 2.0 1.0 0.0 0.0 1.0 0.0 0.0 | filecheck %s --check-prefix=EXEC

// Forward over reverse through a primitive: the adjoint calls the adjoint
// rule @exp_adj, ordinary code, so the tangent of the adjoint differentiates
// that rule again. Its tangent @exp_adj.tan is derived from its body (and
// @half.tan from the function it calls): the rule's arguments and their
// tangents give its result and the result's tangent, as @f.tan does for a
// reversible function.

rev.extern @exp : (f64) -> f64 {symbol = "exp", adjoint = @exp_adj, tangent = @exp_tan}
func.func @half(%x: f64) -> f64 {
  %c = arith.constant 0.5 : f64
  %h = arith.mulf %c, %x : f64
  func.return %h : f64
}
// exp(x) = exp(x/2)^2, to go through a call
func.func @exp_adj(%x: f64, %g: f64) -> f64 {
  %h = func.call @half(%x) : (f64) -> f64
  %e = math.exp %h : f64
  %e2 = arith.mulf %e, %e : f64
  %r = arith.mulf %g, %e2 : f64
  func.return %r : f64
}
func.func @exp_tan(%x: f64, %dx: f64) -> f64 {
  %e = math.exp %x : f64
  %r = arith.mulf %e, %dx : f64
  func.return %r : f64
}

rev.func @f(%y: f64, %x: f64) {
  %e = rev.apply @exp(%x) : (f64) -> f64
  %y1 = rev.add %y, %e : f64
  rev.return %y1, %x : f64, f64
}
ad.hessian @f

// CHECK:       func.func @half.tan(%x: f64, %d_x: f64) -> (f64, f64) {
// CHECK:         func.return %{{.*}}, %{{.*}} : f64, f64
// CHECK:       func.func @exp_adj.tan(%x: f64, %g: f64, %d_x: f64, %d_g: f64) -> (f64, f64) {
// CHECK:         func.call @half.tan(%x, %d_x) : (f64, f64) -> (f64, f64)
// CHECK:         func.return
// CHECK-LABEL: rev.func @f.adj.tan(
// CHECK:         rev.apply @exp_adj.tan(%{{.*}}) : (f64, f64, f64, f64) -> (f64, f64)

// Arguments y = exp(2), x = 2 (the state after @f), seeds g_y = 1, g_x = 0,
// then their tangents (0, 1, 0, 0): the tangent of g_x is
// d2(exp x)/dx2 = exp(2), natively (exp from the C library).
// EXEC:      0.0 : f64
// EXEC-NEXT: 2.0 : f64
// EXEC-NEXT: 1.0 : f64
// EXEC-NEXT: 7.38905609893064{{.*}} : f64
// EXEC-NEXT: -7.38905609893065 : f64
// EXEC-NEXT: 1.0 : f64
// EXEC-NEXT: 0.0 : f64
// EXEC-NEXT: 7.38905609893064{{.*}} : f64
