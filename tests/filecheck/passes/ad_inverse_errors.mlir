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

// -----

// A function holding an op without an inverse (a checkpoint schedule's
// cursor, which only checkpointed gradients contain).
// CHECK: error: the inverse tangent of @cursor needs its inverse: 'ad.next' at {{.*}}ad_inverse_errors.mlir:[[# @LINE + 3]]:3 has no inverse
// ADJ: error: the inverse adjoint of @cursor needs its inverse: 'ad.next' at {{.*}}ad_inverse_errors.mlir:[[# @LINE + 2]]:3 has no inverse
rev.func @cursor(%frames: !anc.stack<index>, %n: index, %w0: index, %w1: index, %w2: index, %w3: index, %w4: index, %w5: index, %w6: index, %w7: index) {
  %c:8 = ad.next #ad.schedule<bisection> %frames, %n (%w0, %w1, %w2, %w3, %w4, %w5, %w6, %w7)
  rev.return %n, %c#0, %c#1, %c#2, %c#3, %c#4, %c#5, %c#6, %c#7 : index, index, index, index, index, index, index, index, index
}
ad.inverse_tangent @cursor
ad.inverse_adjoint @cursor
