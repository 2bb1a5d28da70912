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

// -----

// The adjoint of a callee takes the callee's name and `.adj`; a function
// of the module that is not a rev.func holding it is an error there (a
// rev.func of that name is taken for the adjoint, as an earlier run's is).
rev.func @negate(%a: f64) {
  %a1 = rev.neg %a : f64
  rev.return %a1 : f64
}
rev.func @calls(%a: f64) {
  %a1 = rev.call @negate(%a) : (f64) -> f64
  rev.return %a1 : f64
}
ad.adjoint @calls
// expected-error@+1 {{@negate.adj is the name of a function derived from @negate, which this run builds; rename this function}}
func.func @negate.adj(%x: f64) -> f64 {
  func.return %x : f64
}

// -----

// An uncall runs the module's @negate.inv, which the adjoint of the uncall
// differentiates; one that is not a rev.func of @negate's type is refused
// at the uncall, before the pass.
rev.func @negate(%a: f64) {
  %a1 = rev.neg %a : f64
  rev.return %a1 : f64
}
rev.func @uncalls(%a: f64) {
  // expected-error@+1 {{[call] 'rev.uncall' of @negate runs the module's @negate.inv, which must be a 'rev.func' of @negate's type (f64) -> f64, not a 'func.func' of type (f64) -> f64}}
  %a1 = rev.uncall @negate(%a) : (f64) -> f64
  rev.return %a1 : f64
}
ad.adjoint @uncalls
func.func @negate.inv(%x: f64) -> f64 {
  func.return %x : f64
}
