// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-inverse-tangent
// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-inverse-adjoint

// What the inverse modes cannot build is a diagnostic naming the op or the
// function and its location, never a traceback. Both passes report the
// same failures, naming their own mode.

// A pure op without a derivative rule, found in the inverse program.
rev.func @norule(%y: f64, %x: f64) {
  // expected-error-re @+1 {{cannot be differentiated{{( in forward mode)?}}: 'math.cbrt' has no {{tangent|derivative}} rule}}
  %t = math.cbrt %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
ad.inverse_tangent @norule
ad.inverse_adjoint @norule

// -----

// The requests must name a rev.func of the module, or the inverse of one.
// expected-error @+1 {{'ad.inverse_tangent' names @nosuch, which is not a rev.func of the module nor the inverse of one}}
ad.inverse_tangent @nosuch

// -----

// expected-error @+1 {{'ad.inverse_adjoint' names @nosuch.inv, which is not a rev.func of the module nor the inverse of one}}
ad.inverse_adjoint @nosuch.inv

// -----

// A function that forgets state (a checkpointed gradient) has no inverse.
// expected-error-re @+1 {{forgets state (rev.forgetful): it has no inverse, so no inverse {{tangent|adjoint}}}}
rev.func @forgets(%y: f64) attributes {rev.forgetful} {
  rev.return %y : f64
}
ad.inverse_tangent @forgets
ad.inverse_adjoint @forgets

// -----

// A function holding an op without an inverse (a checkpoint schedule's
// cursor, which only checkpointed gradients contain).
rev.func @cursor(%frames: !anc.stack<index>, %n: index, %w0: index, %w1: index, %w2: index, %w3: index, %w4: index, %w5: index, %w6: index, %w7: index) {
  // expected-error-re @+1 {{the inverse {{tangent|adjoint}} of @cursor needs its inverse: 'ad.next' at {{.*}} has no inverse}}
  %c:8 = ad.next #ad.schedule<bisection> %frames, %n (%w0, %w1, %w2, %w3, %w4, %w5, %w6, %w7)
  rev.return %n, %c#0, %c#1, %c#2, %c#3, %c#4, %c#5, %c#6, %c#7 : index, index, index, index, index, index, index, index, index
}
ad.inverse_tangent @cursor
ad.inverse_adjoint @cursor
