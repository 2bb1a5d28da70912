// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-tangent

// What ad-tangent does not differentiate is a diagnostic naming the op and
// its location, never a traceback.

// A pure op without a rule in revmlir/ad/tangent_rules.py.
rev.func @norule(%y: f64, %x: f64) {
  // expected-error@+1 {{cannot be differentiated in forward mode: 'math.cbrt' has no tangent rule}}
  %t = math.cbrt %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
ad.tangent @norule

// -----

// ad.tangent and ad.hessian must name a rev.func of the module.
// expected-error@+1 {{'ad.tangent' names @nosuch, which is not a rev.func of the module}}
ad.tangent @nosuch

// -----

// expected-error@+1 {{'ad.hessian' names @nosuch, which is not a rev.func of the module}}
ad.hessian @nosuch
