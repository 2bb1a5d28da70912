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

// A rule is ordinary code: differentiating its call again needs rules of
// its own (a Hessian of a primitive is not supported).
rev.extern @sq : (f64) -> f64 {tangent = @sq_tan}
func.func @sq_tan(%x: f64, %dx: f64) -> f64 {
  %t = arith.mulf %x, %dx : f64
  func.return %t : f64
}
rev.func @twice(%y: f64, %x: f64) {
  // expected-error@+1 {{cannot be differentiated in forward mode: @sq_tan is ordinary code, not a primitive with rules}}
  %l = rev.apply @sq_tan(%x, %x) : (f64, f64) -> f64
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
