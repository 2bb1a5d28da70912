// RUN: rev-opt %s -p ad-inverse-tangent | filecheck %s
// RUN: rev-opt %s -p ad-inverse-tangent,ad-inverse-tangent | filecheck %s
// RUN: rev-opt %s -p ad-inverse-tangent | rev-opt -p rev-verify | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s --check-prefix=ROUNDTRIP

// ad-inverse-tangent replaces each `ad.inverse_tangent @f` by
// `rev.func @f.itan`: J⁻¹·v (inverse forward mode), the tangent program of
// ~f.  It takes f's arguments holding f's OUTPUTS y, then one tangent ẏ per
// argument carrying a derivative (shadow tangent arrays for float memrefs),
// runs f backwards (the last step's inverse Jacobian first) and returns f's
// inputs x, then the scalar tangents ẋ, with J·ẋ = ẏ.  @f.inv is added when
// missing; the uncall of @step in ~shear calls @step.inv.tan.  Running the
// pass twice changes nothing.

// ROUNDTRIP: ad.inverse_tangent @shear

rev.func @step(%y: f64, %x: f64) {
  %s = math.sin %x : f64
  %y1 = rev.add %y, %s : f64
  rev.return %y1, %x : f64, f64
}

rev.func @shear(%y: f64, %x: f64, %v: memref<2xf64>) {
  %r:2 = rev.call @step(%y, %x) : (f64, f64) -> (f64, f64)
  %t = arith.mulf %r#0, %r#0 : f64
  %x1 = rev.add %r#1, %t : f64
  %c0 = arith.constant 0 : index
  %e = rev.take %v[%c0] : memref<2xf64>
  %e1 = rev.sub %e, %x1 : f64
  rev.put %e1, %v[%c0] : memref<2xf64>
  rev.return %r#0, %x1 : f64, f64
}
ad.inverse_tangent @shear

// CHECK-NOT:   ad.inverse_tangent
// CHECK-LABEL: rev.func @step.inv(%y: f64, %x: f64) attributes {rev.derived_inverse} {
// CHECK-LABEL: rev.func @step.inv.tan(%y: f64, %x: f64, %d_y: f64, %d_x: f64) {
// CHECK:         %[[COS:.*]] = math.cos %x : f64
// CHECK:         %[[DS:.*]] = arith.mulf %d_x, %[[COS]] : f64
// CHECK:         %d_y_1 = rev.sub %d_y, %[[DS]] : f64
// CHECK:         rev.return %y_1, %x, %d_y_1, %d_x : f64, f64, f64, f64
// CHECK-LABEL: rev.func @shear(
// CHECK-LABEL: rev.func @shear.inv(%y: f64, %x: f64, %v: memref<2xf64>) attributes {rev.derived_inverse} {
// The last step of @shear is undone first, its tangent with it.
// CHECK-LABEL: rev.func @shear.itan(%y: f64, %x: f64, %v: memref<2xf64>, %d_y: f64, %d_x: f64, %d_v: memref<2xf64>) {
// CHECK:         %e1 = rev.take %v[%c0] : memref<2xf64>
// CHECK:         %d_e1 = rev.take %d_v[%c0] {nocheck} : memref<2xf64>
// CHECK:         %e = rev.add %e1, %x : f64
// CHECK:         %d_e = rev.add %d_e1, %d_x : f64
// CHECK:         %r = rev.sub %x, %t : f64
// CHECK:         %d_r = rev.sub %d_x, %{{.*}} : f64
// CHECK:         rev.call @step.inv.tan(%y, %r, %d_y, %d_r)
// CHECK:         rev.return %y_1, %x_1, %d_y_1, %d_x_1 : f64, f64, f64, f64
// CHECK-NOT:   rev.func @shear.itan
