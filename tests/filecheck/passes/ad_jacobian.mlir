// RUN: rev-opt %s -p ad-jacobian | filecheck %s
// RUN: rev-opt %s -p ad-jacobian | rev-opt -p rev-verify | filecheck %s --check-prefix=VERIFIED
// RUN: rev-opt %s -p 'ad-jacobian{lanes=2},rev-invert' | filecheck %s --check-prefix=INVERT

// With lanes, the Jacobian discards an idle lane's slots by unchecked frees,
// marked forgetful: rev-invert leaves the function out, as an adjoint.
// INVERT:      rev.func @scale.inv(
// INVERT:      rev.func @scale.jacobian(
// INVERT-NOT:  rev.func @scale.jacobian.inv(

// ad-jacobian adds @f.tan and @f.jacobian: a loop over the unit directions
// (as many as f64 entries: one per scalar, the elements of each array),
// each column a call of @f.tan on the direction, whose tangents are moved
// (swapped) into the zero row j of %C (the transpose of the Jacobian: a
// column is written contiguously), leaving them zero, and an uncall of @f,
// which restores the arguments; the direction is an ancilla for a scalar
// and a `+= 1` on the tangent workspace for an array element.

rev.func @scale(%y: memref<?xf64>, %a: f64, %n: i64) {
  %c0 = arith.constant 0 : index
  %e = rev.take %y[%c0] : memref<?xf64>
  %p = arith.mulf %a, %a : f64
  %e1 = rev.add %e, %p : f64
  rev.put %e1, %y[%c0] : memref<?xf64>
  rev.return %a, %n : f64, i64
}
ad.jacobian @scale

// CHECK-NOT:   ad.jacobian
// CHECK:       rev.func @scale.tan(
// CHECK:       rev.func @scale.jacobian(%a0: memref<?xf64>, %a1: f64, %a2: i64, %C: memref<?x?xf64>, %t_a0: memref<?xf64>) {
// CHECK:         rev.for
// CHECK:           rev.if
// CHECK:           anc.alloc
// CHECK:           rev.call @scale.tan(%a0, %{{.*}}, %{{.*}}, %t_a0, %{{.*}})
// CHECK:           rev.swap
// CHECK:           rev.uncall @scale(%a0, %{{.*}}, %{{.*}})
// CHECK:           anc.free

// VERIFIED: rev.func @scale.jacobian
