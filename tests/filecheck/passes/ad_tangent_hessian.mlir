// RUN: rev-opt %s -p ad-hessian | filecheck %s
// RUN: rev-opt %s -p 'ad-hessian{functions=cube}' | filecheck %s
// RUN: rev-opt %s -p ad-hessian,ad-hessian | rev-opt -p rev-verify | filecheck %s

// ad-hessian (forward over reverse) replaces `ad.hessian @f` by @f.tan,
// @f.adj and @f.adj.tan, the tangent of the adjoint.  Run @f.tan on x and v
// to get f's outputs and their tangents, then @f.adj.tan on those with the
// loss's unit gradient seed and zero seed tangents: the tangents of the
// input gradients are H·v.

// y += x³ (through an ancilla x²):  ∂y/∂x = 3x², H = 6x.
rev.func @cube(%y: f64, %x: f64) {
  %zero = arith.constant 0.0 : f64
  %sq = arith.mulf %x, %x : f64
  %t = anc.alloc %sq : f64
  %c = arith.mulf %t, %x : f64
  %y1 = rev.add %y, %c : f64
  %t1 = rev.sub %t, %sq : f64
  anc.free %t1, %zero : f64
  rev.return %y1, %x : f64, f64
}
ad.hessian @cube

// CHECK-NOT:   ad.hessian
// CHECK-LABEL: rev.func @cube(
// CHECK-LABEL: rev.func @cube.tan(%y: f64, %x: f64, %d_y: f64, %d_x: f64) {
// CHECK-LABEL: rev.func @cube.adj(%y: f64, %x: f64, %g_y: f64, %g_x: f64) {
// The tangent of the adjoint carries tangents of values and of gradients:
// the adjoint's `ḡx += ḡy·x·…` becomes `d_ḡx += d_ḡy·… + ḡy·(d_x …)`.
// CHECK-LABEL: rev.func @cube.adj.tan(%y: f64, %x: f64, %g_y: f64, %g_x: f64, %d_y: f64, %d_x: f64, %d_g_y: f64, %d_g_x: f64) {
// CHECK:         %d_g_x{{.*}} = rev.add %d_g_x, %{{.*}} : f64
// CHECK:         rev.return %{{.*}}, %x, %g_y, %{{.*}}, %{{.*}}, %d_x, %d_g_y, %{{.*}} : f64, f64, f64, f64, f64, f64, f64, f64
// CHECK-NEXT:  }
