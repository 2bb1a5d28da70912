// RUN: rev-opt %s --verify-diagnostics --split-input-file

// Declarations of user primitives and their calls are checked where they
// are written: each rule names a function of the module with the signature
// its kind demands, calls match the primitive's type.

// expected-error@+1 {{'rev.extern': the adjoint rule of @lgamma names @nosuch, which is not a rev.extern or a func.func with a body of the module}}
rev.extern @lgamma : (f64) -> f64 {symbol = "lgamma", adjoint = @nosuch}

// -----

// An adjoint rule of (f64, i64) -> f64 takes the arguments and the gradient,
// and returns the gradient of the float argument only.
// expected-error@+1 {{'rev.extern': the adjoint rule @adj of @scaled has type (f64, i64, f64) -> (f64, i64); a adjoint rule of (f64, i64) -> f64 must have type (f64, i64, f64) -> f64}}
rev.extern @scaled : (f64, i64) -> f64 {adjoint = @adj}
func.func @adj(%x: f64, %n: i64, %g: f64) -> (f64, i64) {
  func.return %g, %n : f64, i64
}

// -----

// A tangent rule takes one tangent per float argument.
// expected-error@+1 {{'rev.extern': the tangent rule @tan of @lgamma has type (f64) -> f64; a tangent rule of (f64) -> f64 must have type (f64, f64) -> f64}}
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
