// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-inverse-tangent | filecheck %s
// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-inverse-adjoint | filecheck %s --check-prefix=ADJ

// What the inverse modes cannot build is a diagnostic naming the op or the
// function and its location, never a traceback.

// A pure op without a derivative rule, found in the inverse program.
rev.func @norule(%y: f64, %x: f64) {
  // CHECK: error: 'math.cbrt' at {{.*}}ad_inverse_errors.mlir:[[# @LINE + 2]]:3 cannot be differentiated in forward mode: 'math.cbrt' has no tangent rule
  // ADJ: error: 'math.cbrt' at {{.*}}ad_inverse_errors.mlir:[[# @LINE + 1]]:3 cannot be differentiated: 'math.cbrt' has no derivative rule
  %t = math.cbrt %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
ad.inverse_tangent @norule
ad.inverse_adjoint @norule

// -----

// The requests must name a rev.func of the module, or the inverse of one.
// CHECK: ad_inverse_errors.mlir:[[# @LINE + 2]]:1: error: 'ad.inverse_tangent' names @nosuch, which is not a rev.func of the module nor the inverse of one
// ADJ: ad_inverse_errors.mlir:[[# @LINE + 1]]:1: error: 'ad.inverse_tangent' names @nosuch, which is not a rev.func of the module nor the inverse of one
ad.inverse_tangent @nosuch

// -----

// CHECK: ad_inverse_errors.mlir:[[# @LINE + 2]]:1: error: 'ad.inverse_adjoint' names @nosuch.inv, which is not a rev.func of the module nor the inverse of one
// ADJ: ad_inverse_errors.mlir:[[# @LINE + 1]]:1: error: 'ad.inverse_adjoint' names @nosuch.inv, which is not a rev.func of the module nor the inverse of one
ad.inverse_adjoint @nosuch.inv

// -----

// A function that forgets state (a checkpointed gradient) has no inverse.
// CHECK: error: 'rev.func' at {{.*}}ad_inverse_errors.mlir:[[# @LINE + 2]]:1 forgets state (rev.forgetful): it has no inverse, so no inverse tangent
// ADJ: error: 'rev.func' at {{.*}}ad_inverse_errors.mlir:[[# @LINE + 1]]:1 forgets state (rev.forgetful): it has no inverse, so no inverse adjoint
rev.func @forgets(%y: f64) attributes {rev.forgetful} {
  rev.return %y : f64
}
ad.inverse_tangent @forgets
ad.inverse_adjoint @forgets
