// Ordinary functions with recursion, checkpointed with no annotation
// (make-resumable's frame stacks; tests/test_resumable_recursion.py).

// Recursion of data-dependent depth: halve x until it is below 1, then
// unwind, each level mixing in sin; ⌈log₂ x⌉ + 1 levels.
func.func @halve(%x: f64, %a: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %small = arith.cmpf olt, %x, %one : f64
  %r = scf.if %small -> (f64) {
    %s = arith.mulf %x, %a : f64
    scf.yield %s : f64
  } else {
    %h = arith.mulf %x, %half : f64
    %k = func.call @halve(%h, %a) : (f64, f64) -> f64
    %s = math.sin %k : f64
    %t = arith.addf %s, %x : f64
    %u = arith.mulf %t, %a : f64
    scf.yield %u : f64
  }
  func.return %r : f64
}

// Mutual recursion on an i32 counter (n even), with a loop inside.
func.func @even(%n: i32, %x: f64) -> f64 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.cmpi eq, %n, %c0 : i32
  %r = scf.if %zero -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %c1 : i32
    %k = func.call @odd(%m, %x) : (i32, f64) -> f64
    %lb = arith.constant 0 : index
    %ub = arith.constant 3 : index
    %st = arith.constant 1 : index
    %tenth = arith.constant 0.1 : f64
    %acc = scf.for %i = %lb to %ub step %st iter_args(%a = %k) -> (f64) {
      %c = math.cos %a : f64
      %d = arith.mulf %c, %tenth : f64
      %b = arith.addf %a, %d : f64
      scf.yield %b : f64
    }
    scf.yield %acc : f64
  }
  func.return %r : f64
}
func.func @odd(%n: i32, %x: f64) -> f64 {
  %c1 = arith.constant 1 : i32
  %m = arith.subi %n, %c1 : i32
  %k = func.call @even(%m, %x) : (i32, f64) -> f64
  %s = math.sin %x : f64
  %y = arith.mulf %k, %s : f64
  func.return %y : f64
}
func.func @mutual(%n: i32, %x: f64) -> f64 {
  %r = func.call @even(%n, %x) : (i32, f64) -> f64
  func.return %r : f64
}

// Divide and conquer over an array: the sum of squares of x[lo:hi], where
// each split first adds half the sine of its left half's sum into x[mid],
// which its right half then reads.
func.func @dc(%x: memref<8xf64>, %lo: index, %hi: index) -> f64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.subi %hi, %lo : index
  %leaf = arith.cmpi sle, %n, %c1 : index
  %r = scf.if %leaf -> (f64) {
    %v = memref.load %x[%lo] : memref<8xf64>
    %s = arith.mulf %v, %v : f64
    scf.yield %s : f64
  } else {
    %h = arith.divui %n, %c2 : index
    %mid = arith.addi %lo, %h : index
    %a = func.call @dc(%x, %lo, %mid) : (memref<8xf64>, index, index) -> f64
    %q = math.sin %a : f64
    %half = arith.constant 0.5 : f64
    %d = arith.mulf %q, %half : f64
    %v = memref.load %x[%mid] : memref<8xf64>
    %w = arith.addf %v, %d : f64
    memref.store %w, %x[%mid] : memref<8xf64>
    %b = func.call @dc(%x, %mid, %hi) : (memref<8xf64>, index, index) -> f64
    %s = arith.addf %a, %b : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// A recursive function of depth n called from a loop of l iterations: the
// run grows with l, the frames with n only.
func.func @nest(%y: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %y : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %k = func.call @nest(%y, %m) : (f64, index) -> f64
    %s = math.sin %k : f64
    %half = arith.constant 0.5 : f64
    %t = arith.mulf %y, %half : f64
    %u = arith.addf %s, %t : f64
    scf.yield %u : f64
  }
  func.return %r : f64
}
func.func @looped(%x: f64, %n: index, %l: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = scf.for %i = %c0 to %l step %c1 iter_args(%acc = %x) -> (f64) {
    %r = func.call @nest(%acc, %n) : (f64, index) -> f64
    %tenth = arith.constant 0.1 : f64
    %d = arith.mulf %x, %tenth : f64
    %t = arith.addf %r, %d : f64
    scf.yield %t : f64
  }
  func.return %s : f64
}
