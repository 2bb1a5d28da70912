// RUN: rev-opt %s --verify-diagnostics --split-input-file -p reversibilize
// RUN: not rev-opt %s --split-input-file -p 'reversibilize{mode=fast}' 2>&1 | filecheck %s --check-prefix=MODE

// MODE: error: reversibilize: mode must be one of tape, bennett, not 'fast'

// What reversibilize does not translate is a diagnostic naming the op and
// its location, never a traceback.

func.func @local(%x: f64) -> f64 {
  // expected-error@+1 {{cannot be reversibilized: local arrays are not supported; pass the array as an argument}}
  %m = memref.alloc() : memref<4xf64>
  func.return %x : f64
}

// -----

// expected-error@+1 {{cannot be reversibilized: its body has several blocks; only structured control flow (scf) is supported}}
func.func @branchy(%x: i1) {
  cf.br ^bb1
^bb1:
  func.return
}

// -----

func.func private @external(f64) -> f64
func.func @caller(%x: f64) -> f64 {
  // expected-error@+1 {{cannot be reversibilized: @external is not a function defined in the module}}
  %y = func.call @external(%x) : (f64) -> f64
  func.return %y : f64
}

// -----

func.func @shift(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{cannot be reversibilized: its condition must forward the loop-carried values unchanged}}
  %r = scf.while (%a = %x) : (f64) -> f64 {
    %b = arith.negf %a : f64
    %t = arith.constant true
    scf.condition(%t) %b : f64
  } do {
  ^bb0(%b: f64):
    scf.yield %b : f64
  }
  func.return %r : f64
}

// -----

// expected-error@+1 {{cannot be reversibilized: argument #0 has type tensor<2xf64>; only integers, floats, indices and memrefs of them are supported}}
func.func @tensor(%t: tensor<2xf64>) {
  func.return
}

// -----

func.func @printing(%x: f64) {
  // expected-error@+1 {{cannot be reversibilized: only func, scf (for, if, while), arith, math, memref.load/store/dim, cf.assert and calls of pure primitives (rev.apply) are supported}}
  printf.print_format "{}", %x : f64
  func.return
}

// -----

// A primitive that updates arrays is a reversible instruction: ordinary code
// cannot call it.
rev.extern @scale : (f64, memref<?xf64>) -> () {symbol = "scale", updates = array<i64: 1>}

func.func @updates(%a: f64, %m: memref<?xf64>) {
  // expected-error@+1 {{cannot be reversibilized: @scale updates arrays; ordinary code calls only primitives that return a value, and @rv.reversible functions the others}}
  rev.invoke @scale(%a, %m) {rev.forgetful} : (f64, memref<?xf64>) -> ()
  func.return
}

// -----

// A pure primitive reads its arrays where the reversible form recomputes
// it: an array the function writes could have changed by then.
rev.extern @total : (memref<?xf64>) -> f64 {symbol = "total"}

func.func @reads_written(%m: memref<?xf64>, %x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  memref.store %x, %m[%c0] : memref<?xf64>
  // expected-error@+1 {{cannot be reversibilized: @total reads an array the function writes; a primitive may only read arrays the function does not change}}
  %t = rev.apply @total(%m) : (memref<?xf64>) -> f64
  func.return %t : f64
}
