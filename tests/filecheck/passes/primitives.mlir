// RUN: rev-opt %s -p ad-adjoint,ad-tangent | filecheck %s --check-prefix=AD
// RUN: rev-opt %s -p ad-adjoint,ad-tangent,rev-lower-to-std | filecheck %s --check-prefix=STD
// RUN: rev-opt %s -p ad-adjoint,ad-tangent -o %t && rev-run %t -e log_beta.adj --args 0.052161890795489715 2.5 0.75 1.0 0.0 0.0 | filecheck %s --check-prefix=EXEC
// RUN: rev-translate %t --emit=llvm | filecheck %s --check-prefix=LLVM

// A user primitive: lgamma from the C library, with its adjoint rule
// (args..., gradient of the result) -> (gradient of each float argument) and
// its tangent rule (args..., tangent of each float argument) -> tangent,
// both ordinary code. The derivative passes call the rules, rev-lower-to-std
// calls the C symbol.

// The custom forms print as they are written (and the runs below parse the
// printed module again).
// AD: rev.extern @lgamma : (f64) -> f64 {symbol = "lgamma", adjoint = @lgamma_adj, tangent = @lgamma_tan}
// AD: %la = rev.apply @lgamma(%a) : (f64) -> f64
rev.extern @lgamma : (f64) -> f64 {symbol = "lgamma", adjoint = @lgamma_adj, tangent = @lgamma_tan}

// A stand-in for digamma, enough to see the rules called (the Python tests
// check the real derivative).
func.func @psi(%x: f64) -> f64 {
  %l = math.log %x : f64
  func.return %l : f64
}
func.func @lgamma_adj(%x: f64, %g: f64) -> f64 {
  %d = func.call @psi(%x) : (f64) -> f64
  %r = arith.mulf %g, %d : f64
  func.return %r : f64
}
func.func @lgamma_tan(%x: f64, %dx: f64) -> f64 {
  %d = func.call @psi(%x) : (f64) -> f64
  %r = arith.mulf %d, %dx : f64
  func.return %r : f64
}

rev.func @log_beta(%y: f64, %a: f64, %b: f64) {
  %la = rev.apply @lgamma(%a) : (f64) -> f64
  %lb = rev.apply @lgamma(%b) : (f64) -> f64
  %s = arith.addf %a, %b : f64
  %ls = rev.apply @lgamma(%s) : (f64) -> f64
  %t = arith.addf %la, %lb : f64
  %u = arith.subf %t, %ls : f64
  %y1 = rev.add %y, %u : f64
  rev.return %y1, %a, %b : f64, f64, f64
}
ad.adjoint @log_beta
ad.tangent @log_beta

// The adjoint calls the adjoint rule at each call, sends -g into a + b.
// AD-LABEL: rev.func @log_beta.adj(%y: f64, %a: f64, %b: f64, %g_y: f64, %g_a: f64, %g_b: f64) {
// AD:         rev.apply @lgamma_adj(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
// AD:         rev.apply @lgamma_adj(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
// AD:         rev.apply @lgamma_adj(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
// AD:         rev.sub %y, %{{.*}} : f64
// The tangent calls the tangent rule with the tangent of each argument.
// AD-LABEL: rev.func @log_beta.tan(%y: f64, %a: f64, %b: f64, %d_y: f64, %d_a: f64, %d_b: f64) {
// AD:         rev.apply @lgamma_tan(%a, %d_a) : (f64, f64) -> f64
// AD:         rev.apply @lgamma_tan(%b, %d_b) : (f64, f64) -> f64
// AD:         %[[DS:.*]] = arith.addf %d_a, %d_b : f64
// AD:         rev.apply @lgamma_tan(%s, %[[DS]]) : (f64, f64) -> f64

// The primitive becomes the external function of its symbol; a rule is
// ordinary code and takes the error slot.
// STD:       func.func private @lgamma(f64) -> f64
// STD-NOT:   rev.extern
// STD-LABEL: func.func @log_beta(%y: f64, %a: f64, %b: f64, %err: memref<6xi64>) -> (f64, f64, f64)
// STD:         %la = func.call @lgamma(%a) : (f64) -> f64
// STD-LABEL: func.func @log_beta.adj(
// STD:         func.call @lgamma_adj(%{{.*}}, %{{.*}}, %err) : (f64, f64, memref<6xi64>) -> f64

// Native code calls the C library's lgamma and the rules: the adjoint run
// from y = 0.5 + log B(2.5, 0.75) gives back y = 0.5 and the gradients
// log(a) - log(a + b) and log(b) - log(a + b) of the stand-in rule.
// EXEC:      0.50000000000000{{[0-9]*}} : f64
// EXEC-NEXT: 2.5 : f64
// EXEC-NEXT: 0.75 : f64
// EXEC-NEXT: 1.0 : f64
// EXEC-NEXT: -0.2623642644674{{[0-9]*}} : f64
// EXEC-NEXT: -1.4663370687934{{[0-9]*}} : f64

// Compiled ahead of time, the primitive stays an external function, which
// the linker resolves.
// LLVM: declare double @lgamma(double)
// LLVM: call double @lgamma(double
