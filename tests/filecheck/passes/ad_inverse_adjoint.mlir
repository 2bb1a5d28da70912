// RUN: rev-opt %s -p ad-inverse-adjoint | filecheck %s
// RUN: rev-opt %s -p ad-inverse-adjoint,ad-inverse-adjoint | filecheck %s
// RUN: rev-opt %s -p ad-inverse-adjoint | rev-opt -p rev-verify | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s --check-prefix=ROUNDTRIP
// RUN: rev-opt %s -p ad-adjoint | filecheck %s --check-prefix=ADJ

// ad-inverse-adjoint replaces each `ad.inverse_adjoint @f` by
// `rev.func @f.iadj`: J⁻ᵀ·w (inverse reverse mode), the adjoint of ~f.  It
// takes f's INPUTS x, then one cotangent x̄ per argument carrying a
// derivative (shadow arrays for float memrefs), runs f FORWARD (the first
// step's inverse transposed Jacobian first, alongside the step) and returns
// f's outputs y, then the scalar cotangents ȳ, with Jᵀ·ȳ = x̄.  The call of
// @step in f is an uncall in ~f, so its adjoint is @step.inv.adj.

// ROUNDTRIP: ad.inverse_adjoint @shear
// ROUNDTRIP: ad.adjoint @shear.inv

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
ad.inverse_adjoint @shear

// An ad request may also name the inverse of a function, which the pass adds:
// ad-adjoint gives @shear.inv.adj (the same program as @shear.iadj).
ad.adjoint @shear.inv

// CHECK-NOT:   ad.inverse_adjoint
// CHECK-LABEL: rev.func @step.inv.adj(%y: f64, %x: f64, %g_y: f64, %g_x: f64) {
// CHECK:         %[[NEG:.*]] = arith.negf %g_y : f64
// CHECK:         %[[COS:.*]] = math.cos %x : f64
// CHECK:         %[[D:.*]] = arith.mulf %[[NEG]], %[[COS]] : f64
// CHECK:         %g_x_1 = rev.add %g_x, %[[D]] : f64
// CHECK:         %y_1 = rev.add %y, %s : f64
// CHECK:         rev.return %y_1, %x, %g_y, %g_x_1 : f64, f64, f64, f64
// CHECK-LABEL: rev.func @shear(
// CHECK-LABEL: rev.func @shear.inv(
// The first step of @shear runs first, its cotangent update with it.
// CHECK-LABEL: rev.func @shear.iadj(%y: f64, %x: f64, %v: memref<2xf64>, %g_y: f64, %g_x: f64, %g_v: memref<2xf64>) {
// CHECK-NEXT:    %y_1, %r, %g_y_1, %g_r = rev.call @step.inv.adj(%y, %x, %g_y, %g_x)
// CHECK:         %x_1 = rev.add %r, %t : f64
// CHECK:         %g_e = rev.take %g_v[%c0] : memref<2xf64>
// CHECK:         %g_x_1 = rev.add %g_r, %g_e : f64
// CHECK:         %e1 = rev.sub %e, %x_1 : f64
// CHECK:         rev.return %y_1, %x_1, %g_y_2, %g_x_1 : f64, f64, f64, f64
// CHECK-NOT:   rev.func @shear.iadj

// ADJ:         rev.func @shear.inv(%y: f64, %x: f64, %v: memref<2xf64>) attributes {rev.derived_inverse} {
// ADJ:         rev.func @shear.inv.adj(%y: f64, %x: f64, %v: memref<2xf64>, %g_y: f64, %g_x: f64, %g_v: memref<2xf64>) {
// ADJ-NEXT:      rev.call @step.inv.adj(%y, %x, %g_y, %g_x)
