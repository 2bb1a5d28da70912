// RUN: rev-opt %s --verify-diagnostics --split-input-file

// Declarations of user primitives and their calls are checked where they
// are written: each rule names a function of the module with the signature
// its kind demands, calls match the primitive's type.

// expected-error@+1 {{'rev.extern': the adjoint rule of @lgamma names @nosuch, which is not a rev.extern or a func.func with a body of the module}}
rev.extern @lgamma : (f64) -> f64 {symbol = "lgamma", adjoint = @nosuch}

// -----

// An adjoint rule of (f64, i64) -> f64 takes the arguments and the gradient,
// and returns the gradient of the float argument only.
// expected-error@+1 {{'rev.extern': the adjoint rule @adj of @scaled has type (f64, i64, f64) -> (f64, i64); for a primitive of type (f64, i64) -> f64 it must have type (f64, i64, f64) -> f64}}
rev.extern @scaled : (f64, i64) -> f64 {adjoint = @adj}
func.func @adj(%x: f64, %n: i64, %g: f64) -> (f64, i64) {
  func.return %g, %n : f64, i64
}

// -----

// A tangent rule takes one tangent per float argument.
// expected-error@+1 {{'rev.extern': the tangent rule @tan of @lgamma has type (f64) -> f64; for a primitive of type (f64) -> f64 it must have type (f64, f64) -> f64}}
rev.extern @lgamma : (f64) -> f64 {symbol = "lgamma", tangent = @tan}
func.func @tan(%x: f64) -> f64 {
  func.return %x : f64
}

// -----

// expected-error@+1 {{'rev.extern': argument #0 of primitive @sum has type memref<2x2xf64>; primitives take scalars and vectors (memref<?xT>)}}
rev.extern @sum : (memref<2x2xf64>) -> f64

// -----

// expected-error@+1 {{'rev.extern': primitive @two must return one scalar}}
rev.extern @two : (f64) -> (f64, f64)

// -----

rev.func @unknown(%y: f64, %x: f64) {
  // expected-error@+1 {{'rev.apply' calls @nosuch, which is not a rev.extern or a func.func of scalars and vectors of the module}}
  %l = rev.apply @nosuch(%x) : (f64) -> f64
  %y1 = rev.add %y, %l : f64
  rev.return %y1, %x : f64, f64
}

// -----

rev.extern @lgamma : (f64) -> f64 {symbol = "lgamma"}
rev.func @mistyped(%y: f64, %n: i64) {
  // expected-error@+1 {{'rev.apply' calls @lgamma of type (f64) -> f64 as (i64) -> f64}}
  %l = rev.apply @lgamma(%n) : (i64) -> f64
  %y1 = rev.add %y, %l : f64
  rev.return %y1, %n : f64, i64
}

// -----

// Calls of pure primitives are expressions: the inverse recomputes them, so
// only a primitive that updates arrays has an inverse rule.
// expected-error@+1 {{'rev.extern': primitive @exp declares an inverse rule, which only a primitive that updates arrays and returns nothing has}}
rev.extern @exp : (f64) -> f64 {symbol = "exp", inverse = @log}

// -----

// Array primitives: what they update must be arrays, and a pure one returns
// one scalar.
// expected-error@+1 {{'rev.extern': primitive @axpy updates argument #0, which is not one of its arrays}}
rev.extern @axpy : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 0>}

// -----

// expected-error@+1 {{'rev.extern': primitive @axpy must return one scalar, or update arrays (updates = array<i64: …>)}}
rev.extern @axpy : (f64, memref<?xf64>, memref<?xf64>) -> ()

// -----

// expected-error@+1 {{'rev.extern': primitive @dot passes arrays as 'fortran'; known are 'pointer_length', 'blas', 'blas32'}}
rev.extern @dot : (memref<?xf64>, memref<?xf64>) -> f64 {arrays = "fortran"}

// -----

// The tangent rule of an array primitive takes a tangent array per float array.
// expected-error@+1 {{'rev.extern': the tangent rule @dot_tan of @dot has type (memref<?xf64>, memref<?xf64>) -> f64; for a primitive of type (memref<?xf64>, memref<?xf64>) -> f64 it must have type (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> f64}}
rev.extern @dot : (memref<?xf64>, memref<?xf64>) -> f64 {tangent = @dot_tan}
func.func @dot_tan(%x: memref<?xf64>, %y: memref<?xf64>) -> f64 {
  %z = arith.constant 0.0 : f64
  func.return %z : f64
}

// -----

// The inverse rule has the primitive's own signature.
// expected-error@+1 {{'rev.extern': the inverse rule @inv of @axpy has type (f64, memref<?xf64>) -> (); for a primitive of type (f64, memref<?xf64>, memref<?xf64>) -> () it must have type (f64, memref<?xf64>, memref<?xf64>) -> ()}}
rev.extern @axpy : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 2>, inverse = @inv}
func.func @inv(%a: f64, %y: memref<?xf64>) {
  func.return
}

// -----

// The adjoint rule of an array primitive takes the shadows of its float
// arrays after the gradient of its result.
// expected-error@+1 {{'rev.extern': the adjoint rule @adj of @dot has type (memref<?xf64>, memref<?xf64>, f64) -> (); for a primitive of type (memref<?xf64>, memref<?xf64>) -> f64 it must have type (memref<?xf64>, memref<?xf64>, f64, memref<?xf64>, memref<?xf64>) -> ()}}
rev.extern @dot : (memref<?xf64>, memref<?xf64>) -> f64 {adjoint = @adj}
func.func @adj(%x: memref<?xf64>, %y: memref<?xf64>, %g: f64) {
  func.return
}

// -----

// A primitive that updates arrays is invoked, a pure one applied.
rev.extern @axpy : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 2>}
rev.func @applied(%s: f64, %a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  // expected-error@+1 {{'rev.apply' calls @axpy, which updates arrays: invoke it (rev.invoke)}}
  rev.apply @axpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  rev.return %s, %a : f64, f64
}

// -----

rev.extern @dot : (memref<?xf64>, memref<?xf64>) -> f64
rev.func @invoked(%x: memref<?xf64>, %y: memref<?xf64>) {
  // expected-error@+1 {{'rev.invoke' calls @dot, which updates no array: apply it (rev.apply)}}
  %d = rev.invoke @dot(%x, %y) : (memref<?xf64>, memref<?xf64>) -> f64
  rev.return
}

// -----

// Without an inverse rule, an invoke has no inverse and says so.
rev.extern @axpy : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 2>}
rev.func @silent(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  // expected-error@+1 {{'rev.invoke' calls @axpy, which declares no inverse rule: the call has no inverse and must say so (rev.forgetful)}}
  rev.invoke @axpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  rev.return %a : f64
}

// -----

// An updated array shares memory with no other argument.
rev.extern @axpy : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 2>, inverse = @inv}
func.func @inv(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  func.return
}
rev.func @aliased(%a: f64, %x: memref<?xf64>) {
  // expected-error@+1 {{'rev.invoke' passes the array it updates as argument #2 of @axpy twice: an updated array may share memory with no other argument}}
  rev.invoke @axpy(%a, %x, %x) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  rev.return %a : f64
}

// -----

// An invoke with fewer arguments than the array it says it updates is
// refused at the invoke, also where a function verified before it (a
// parallel loop calling it) asks which arrays its callee writes.
rev.extern @p : (f64, memref<?xf64>, memref<?xf64>) -> () {updates = array<i64: 2>, inverse = @p}
rev.func @loop(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    rev.call @short(%y) : (memref<?xf64>) -> ()
    rev.yield
  }
  rev.return %n : index
}
rev.func @short(%y: memref<?xf64>) {
  %z = arith.constant 1.0 : f64
  // expected-error@+1 {{'rev.invoke' calls @p of type (f64, memref<?xf64>, memref<?xf64>) -> () as (f64, memref<?xf64>) -> ()}}
  rev.invoke @p(%z, %y) : (f64, memref<?xf64>) -> ()
  rev.return
}
