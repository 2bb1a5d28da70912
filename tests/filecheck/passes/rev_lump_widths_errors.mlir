// RUN: rev-opt %s --verify-diagnostics --split-input-file -p rev-lump-widths

// What cannot be lumped is a located error: a function that is not square,
// one whose data flow is not known statically, one that is singular by its
// structure, and one with a step that is singular for sure.

// Not square: two active inputs, one active output.
// expected-error @+1 {{not square: 2 active inputs (float scalars and array entries) but 1 active outputs}}
func.func @notsquare(%a: f64, %b: f64) -> f64 {
  %c = arith.mulf %a, %b : f64
  func.return %c : f64
}

// -----

// Not constant-width, and not lumpable statically: the trip count is an
// argument, so the loop cannot be unrolled.
func.func @dynamic_loop(%x: memref<2xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{the trip count is not a constant, so the loop cannot be unrolled}}
  scf.for %i = %c0 to %n step %c1 {
    %p = memref.load %x[%c0] : memref<2xf64>
    %q = memref.load %x[%c1] : memref<2xf64>
    %r = arith.addf %p, %q : f64
    memref.store %r, %x[%c1] : memref<2xf64>
  }
  func.return
}

// -----

// A branch on an active value is resolved only at a point (from Python).
func.func @branch(%a: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %positive = arith.cmpf ogt, %a, %zero : f64
  // expected-error @+1 {{branches on a value not known statically}}
  %r = scf.if %positive -> (f64) {
    %s = math.sin %a : f64
    scf.yield %s : f64
  } else {
    scf.yield %a : f64
  }
  func.return %r : f64
}

// -----

// A dynamic shape: the number of active inputs is not known.
// expected-error @+1 {{argument #0 has the dynamic shape memref<?xf64>: lumps need its size}}
func.func @dynamic_shape(%x: memref<?xf64>) {
  func.return
}

// -----

// Square, but two values carry the information of three: fewer than n
// values are live after the first op in every order, so J is singular.
// expected-error @+1 {{only 2 active values are live after 'arith.addf' at}}
func.func @narrow(%a: f64, %b: f64, %c: f64) -> (f64, f64, f64) {
  %s = arith.addf %a, %b : f64
  %y0 = arith.mulf %s, %c : f64
  %y1 = math.sin %s : f64
  %y2 = math.cos %c : f64
  func.return %y0, %y1, %y2 : f64, f64, f64
}

// -----

// An input that no output reads: a zero column.
// expected-error @+1 {{active input argument #1 does not reach an output: J has a zero column}}
func.func @unread(%a: f64, %b: f64) -> (f64, f64) {
  %y0 = math.sin %a : f64
  %y1 = math.cos %a : f64
  func.return %y0, %y1 : f64, f64
}

// -----

// A step singular for sure: y = 0·a.
// expected-error @+1 {{singular step: lump #0 of width 1 ('arith.mulf' at}}
func.func @zero_step(%a: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %y = arith.mulf %a, %zero : f64
  func.return %y : f64
}

// -----

// The same output twice: two equal rows.
// expected-error @+1 {{result #0 and result #1 are the same value: J has two equal rows}}
func.func @twice(%a: f64, %b: f64) -> (f64, f64) {
  %s = arith.addf %a, %b : f64
  func.return %s, %s : f64, f64
}

// -----

// An op the analysis has no partial derivative for.
func.func @norule(%a: f64) -> f64 {
  // expected-error @+1 {{has no partial-derivative rule for lumps}}
  %y = math.erf %a : f64
  func.return %y : f64
}

// -----

// Local arrays are not ordinary code the analysis evaluates.
func.func @local(%a: f64) -> f64 {
  // expected-error-re @+1 {{'memref.alloc' at {{.*}}: has no data-flow semantics for lumps}}
  %m = memref.alloc() : memref<1xf64>
  func.return %a : f64
}

// -----

// A loop that does not end is stopped.
func.func @forever(%a: f64) -> f64 {
  %true = arith.constant true
  // expected-error @+1 {{the evaluation runs more than 200000 loop iterations}}
  %r = scf.while (%x = %a) : (f64) -> f64 {
    scf.condition(%true) %x : f64
  } do {
  ^bb0(%y: f64):
    scf.yield %y : f64
  }
  func.return %r : f64
}

// -----

// Index arithmetic fails as it would at run time, at the op.
func.func @divide(%x: memref<2xf64>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{division by zero}}
  %i = arith.divsi %c0, %c0 : index
  %v = memref.load %x[%i] : memref<2xf64>
  memref.store %v, %x[%c0] : memref<2xf64>
  func.return
}

// -----

// An index that depends on an argument.
func.func @gather(%x: memref<2xf64>, %i: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{the index is not known statically, so the data flow is not}}
  %v = memref.load %x[%i] : memref<2xf64>
  memref.store %v, %x[%c0] : memref<2xf64>
  func.return
}

// -----

// Recursion without a base case.
// expected-error @+1 {{calls nest too deeply to lump}}
func.func @again(%a: f64) -> f64 {
  %y = func.call @again(%a) : (f64) -> f64
  func.return %y : f64
}
