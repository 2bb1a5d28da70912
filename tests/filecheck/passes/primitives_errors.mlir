// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-adjoint,ad-tangent,rev-lower-to-std

// A transform that needs what a primitive does not declare reports it at the
// call.

rev.extern @lgamma : (f64) -> f64 {symbol = "lgamma"}
rev.func @no_adjoint(%y: f64, %x: f64) {
  // expected-error@+1 {{cannot be differentiated: primitive @lgamma declares no adjoint rule}}
  %l = rev.apply @lgamma(%x) : (f64) -> f64
  %y1 = rev.add %y, %l : f64
  rev.return %y1, %x : f64, f64
}
ad.adjoint @no_adjoint

// -----

rev.extern @lgamma : (f64) -> f64 {symbol = "lgamma"}
rev.func @no_tangent(%y: f64, %x: f64) {
  // expected-error@+1 {{cannot be differentiated in forward mode: primitive @lgamma declares no tangent rule}}
  %l = rev.apply @lgamma(%x) : (f64) -> f64
  %y1 = rev.add %y, %l : f64
  rev.return %y1, %x : f64, f64
}
ad.tangent @no_tangent

// -----

// Ordinary code that derived code calls (a rule) is differentiated again
// through a tangent derived from its body, for straight-line code only: a
// loop in it is an error at the loop, naming the function.
func.func @sum3(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  // expected-error@+1 {{cannot be differentiated in forward mode: 'scf.for' has no tangent rule, in @sum3, ordinary code that a derivative calls (a rule of a primitive) and differentiates again}}
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %z) -> (f64) {
    %a1 = arith.addf %a, %x : f64
    scf.yield %a1 : f64
  }
  func.return %s : f64
}
rev.func @twice(%y: f64, %x: f64) {
  %l = rev.apply @sum3(%x) : (f64) -> f64
  %y1 = rev.add %y, %l : f64
  rev.return %y1, %x : f64, f64
}
ad.tangent @twice

// -----

// Without a C symbol a primitive runs on the interpreter only.
rev.extern @python_only : (f64) -> f64
rev.func @interpreted(%y: f64, %x: f64) {
  // expected-error@+1 {{calls primitive @python_only, which has no C symbol (it runs on the interpreter only)}}
  %l = rev.apply @python_only(%x) : (f64) -> f64
  %y1 = rev.add %y, %l : f64
  rev.return %y1, %x : f64, f64
}

// -----

// expected-error@+1 {{names the C symbol 'clash', which is also the name of a function of the module}}
rev.extern @p : (f64) -> f64 {symbol = "clash"}
rev.func @clash(%y: f64, %x: f64) {
  %l = rev.apply @p(%x) : (f64) -> f64
  %y1 = rev.add %y, %l : f64
  rev.return %y1, %x : f64, f64
}

// -----

// One C symbol has one type.
rev.extern @p : (f64) -> f64 {symbol = "lgamma"}
// expected-error@+1 {{names the C symbol 'lgamma' with type (f32) -> f32, another primitive with type (f64) -> f64}}
rev.extern @q : (f32) -> f32 {symbol = "lgamma"}

// -----

// An updating primitive without an inverse rule cannot be undone, which the
// adjoint needs; nor differentiated forward (array primitives have no
// tangent rules yet).
rev.extern @axpy : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 2>, adjoint = @axpy_adj}
func.func @axpy_adj(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>, %gx: memref<?xf64>, %gy: memref<?xf64>) -> f64 {
  %z = arith.constant 0.0 : f64
  func.return %z : f64
}
rev.func @no_inverse(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  // expected-error@+1 {{has no inverse: primitive @axpy updates arrays and declares no inverse rule}}
  rev.invoke @axpy(%a, %x, %y) {rev.forgetful} : (f64, memref<?xf64>, memref<?xf64>) -> ()
  rev.return %a : f64
}
ad.adjoint @no_inverse

// -----

rev.extern @axpy : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 2>, inverse = @axpy_inv}
func.func @axpy_inv(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  func.return
}
rev.func @forward(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  // expected-error@+1 {{cannot be differentiated in forward mode: primitive @axpy declares no tangent rule}}
  rev.invoke @axpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  rev.return %a : f64
}
ad.tangent @forward

// -----

rev.extern @axpy : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 2>, inverse = @axpy_inv}
func.func @axpy_inv(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  func.return
}
rev.func @interpreted(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  // expected-error@+1 {{calls primitive @axpy, which has no C symbol (it runs on the interpreter only)}}
  rev.invoke @axpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  rev.return %a : f64
}
