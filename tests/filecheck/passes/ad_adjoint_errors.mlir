// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-adjoint | filecheck %s

// What ad-adjoint does not differentiate yet is a diagnostic naming the op
// and its location, never a traceback.

// Float arrays need shadow gradient arrays (not implemented yet).
rev.func @load(%y: f64, %m: memref<4xf64>) {
  %c0 = arith.constant 0 : index
  // CHECK: error: 'memref.load' at {{.*}}ad_adjoint_errors.mlir:[[# @LINE + 1]]:3 cannot be differentiated: reading elements of a float array is not differentiable yet (gradients of arrays need shadow arrays)
  %v = memref.load %m[%c0] : memref<4xf64>
  %y1 = rev.add %y, %v : f64
  rev.return %y1 : f64
}
ad.adjoint @load

// -----

rev.func @take(%x: f64, %m: memref<4xf64>) {
  %c0 = arith.constant 0 : index
  %e = rev.take %m[%c0] : memref<4xf64>
  %e1 = rev.add %e, %x : f64
  // CHECK: error: 'rev.put' at {{.*}}ad_adjoint_errors.mlir:[[# @LINE + 1]]:3 cannot be differentiated: elements of float arrays are not differentiable yet (their gradients need shadow arrays); integer arrays are fine
  rev.put %e1, %m[%c0] : memref<4xf64>
  rev.return %x : f64
}
ad.adjoint @take

// -----

// Complex numbers carry no gradient yet.
// CHECK: error: 'rev.func' at {{.*}}ad_adjoint_errors.mlir:[[# @LINE + 1]]:1 cannot be differentiated: argument #0 is complex; complex numbers carry no gradient yet
rev.func @cplx(%y: complex<f64>, %x: f64) {
  %re, %im = rev.unpack %y : complex<f64>
  %re1 = rev.add %re, %x : f64
  %y1 = rev.pack %re1, %im : complex<f64>
  rev.return %y1, %x : complex<f64>, f64
}
ad.adjoint @cplx

// -----

// Stacks of floats would need a gradient stack.
rev.func @stack(%y: f64, %s: !anc.stack<f64>) {
  anc.push %s, %y : !anc.stack<f64>
  // CHECK: error: 'anc.pop' at {{.*}}ad_adjoint_errors.mlir:[[# @LINE + 1]]:3 cannot be differentiated: stacks of floats are not differentiable yet (their gradients need a gradient stack); stacks of integers and booleans are fine
  %y1 = anc.pop %s : !anc.stack<f64>
  rev.return %y1 : f64
}
ad.adjoint @stack

// -----

// A pure op without a rule in revmlir/ad/derivatives.py.
rev.func @norule(%y: f64, %x: f64) {
  // CHECK: error: 'math.erf' at {{.*}}ad_adjoint_errors.mlir:[[# @LINE + 1]]:3 cannot be differentiated: 'math.erf' has no derivative rule
  %t = math.erf %x : f64
  %y1 = rev.add %y, %t : f64
  rev.return %y1, %x : f64, f64
}
ad.adjoint @norule

// -----

// ad.adjoint must name a rev.func of the module.
// CHECK: ad_adjoint_errors.mlir:[[# @LINE + 1]]:1: error: 'ad.adjoint' names @nosuch, which is not a rev.func of the module
ad.adjoint @nosuch
