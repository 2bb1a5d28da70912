// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-adjoint | filecheck %s

// What ad-adjoint does not differentiate yet is a diagnostic naming the op
// and its location, never a traceback.

// A pure op without a rule in revmlir/ad/derivatives.py.
rev.func @norule(%y: f64, %x: f64) {
  // CHECK: error: 'math.cbrt' at {{.*}}ad_adjoint_errors.mlir:[[# @LINE + 1]]:3 cannot be differentiated: 'math.cbrt' has no derivative rule
  %t = math.cbrt %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
ad.adjoint @norule

// -----

// ad.adjoint must name a rev.func of the module.
// CHECK: ad_adjoint_errors.mlir:[[# @LINE + 1]]:1: error: 'ad.adjoint' names @nosuch, which is not a rev.func of the module
ad.adjoint @nosuch
