// RUN: rev-opt %s -p reversibilize | filecheck %s

// Ordinary code calling a pure primitive: the call stays a rev.apply, an
// expression of the reversible form, and the primitive's rule (and what it
// calls) stays an ordinary func.func, which the derivative passes call.
rev.extern @lgamma : (f64) -> f64 {symbol = "lgamma", adjoint = @lgamma_adjoint}

func.func @digamma(%x: f64) -> f64 {
  %r = math.log %x : f64
  func.return %r : f64
}

func.func @lgamma_adjoint(%x: f64, %g: f64) -> f64 {
  %d = func.call @digamma(%x) : (f64) -> f64
  %r = arith.mulf %g, %d : f64
  func.return %r : f64
}

func.func @f(%a: f64) -> f64 {
  %y = rev.apply @lgamma(%a) : (f64) -> f64
  %r = arith.mulf %y, %a : f64
  func.return %r : f64
}

// CHECK-DAG:  func.func @digamma(%x: f64) -> f64 {
// CHECK-DAG:  func.func @lgamma_adjoint(%x: f64, %g: f64) -> f64 {
// CHECK-DAG:  rev.func @f(%a: f64, %result0: f64) {
// CHECK:      rev.func @f.tape(%a: f64, %result0: f64) {
// CHECK-NEXT:   %y = rev.apply @lgamma(%a) : (f64) -> f64
// CHECK-NEXT:   %r = arith.mulf %y, %a : f64
// CHECK-NEXT:   %{{.*}} = rev.add %result0, %r : f64
