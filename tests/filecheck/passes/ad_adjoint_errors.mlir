// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-adjoint

// What ad-adjoint does not differentiate yet is a diagnostic naming the op
// and its location, never a traceback.

// A pure op without a rule in revmlir/ad/derivatives.py.
rev.func @norule(%y: f64, %x: f64) {
  // expected-error@+1 {{cannot be differentiated: 'math.cbrt' has no derivative rule}}
  %t = math.cbrt %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
ad.adjoint @norule

// -----

// ad.adjoint must name a rev.func of the module.
// expected-error@+1 {{'ad.adjoint' names @nosuch, which is not a rev.func of the module}}
ad.adjoint @nosuch
