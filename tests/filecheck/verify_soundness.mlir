// RUN: rev-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Programs that passed the verifier and then went wrong later: used values
// out of order (the inverter reordered them silently, the engines failed
// with internal errors or recursed without end) or wrote an element whose
// index reads the element (the inverse then restored another element).
// Rules `dominance` and `index-read` reject them, located at the op.

// dominance: a use before its definition.
rev.func @use_before_definition(%y: f64, %a: f64) {
  // expected-error-re @+1 {{[dominance] 'rev.add' uses %t before 'arith.mulf' at {{.*}}verify_soundness.mlir:{{[0-9]+}}:3 defines it}}
  %y1 = rev.add %y, %t : f64
  %t = arith.mulf %a, %a : f64
  rev.return %y1, %a : f64, f64
}

// -----

// dominance: an expression that uses its own result.
rev.func @self_use(%y: f64, %a: f64) {
  // expected-error @+1 {{[dominance] 'arith.mulf' uses %p, a result of itself}}
  %p = arith.mulf %p, %a : f64
  %y1 = rev.add %y, %p : f64
  rev.return %y1, %a : f64, f64
}

// -----

// dominance: a region op whose own body reads its result.
rev.func @result_inside_own_region(%y: f64, %a: f64) {
  %y1 = rev.inv (%y) : f64 {
  ^bb0(%p: f64):
    // expected-error @+1 {{[dominance] 'rev.add' uses %y1, a result of the 'rev.inv' around it}}
    %p1 = rev.add %p, %y1 : f64
    rev.yield %p1 : f64
  }
  rev.return %y1, %a : f64, f64
}

// -----

// index-read: x[x[0]] += 1 (when x[0] = 0 the inverse would subtract from x[1]).
rev.func @index_reads_written_array(%x: memref<3xi64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<3xi64>
  %i = arith.index_cast %v : i64 to index
  %e = rev.take %x[%i] : memref<3xi64>
  %one = arith.constant 1 : i64
  %e1 = rev.add %e, %one : i64
  // expected-error-re @+1 {{[index-read] 'rev.put' computes its indices from 'memref.load' at {{.*}}verify_soundness.mlir:{{[0-9]+}}:3, which may read the element of %x it writes}}
  rev.put %e1, %x[%i] : memref<3xi64>
  rev.return
}

// -----

// index-read: x[x[0] % 2] ^= 1, the index computed through arithmetic, in a loop body.
rev.func @index_through_arithmetic(%x: memref<3xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for %c0 to %n step %c1 : index () {
  ^bb0(%k: index):
    %v = memref.load %x[%c0] : memref<3xi64>
    %two = arith.constant 2 : i64
    %r = arith.remsi %v, %two : i64
    %i = arith.index_cast %r : i64 to index
    %e = rev.take %x[%i] : memref<3xi64>
    %one = arith.constant 1 : i64
    %e1 = rev.xor %e, %one : i64
    // expected-error @+1 {{[index-read] 'rev.put' computes its indices from 'memref.load'}}
    rev.put %e1, %x[%i] : memref<3xi64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// Accepted: the index reads another array, or an element of the same array
// that a constant index proves distinct from the one written.
// CHECK-LABEL: rev.func @index_from_elsewhere
rev.func @index_from_elsewhere(%x: memref<3xi64>, %p: memref<2xi64>, %m: memref<2x3xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %v = memref.load %p[%c0] : memref<2xi64>
  %i = arith.index_cast %v : i64 to index
  %e = rev.take %x[%i] : memref<3xi64>
  %e1 = rev.add %e, %one : i64
  rev.put %e1, %x[%i] : memref<3xi64>
  %w = memref.load %m[%c1, %c0] : memref<2x3xi64>
  %j = arith.index_cast %w : i64 to index
  %f = rev.take %m[%c0, %j] : memref<2x3xi64>
  %f1 = rev.add %f, %one : i64
  rev.put %f1, %m[%c0, %j] : memref<2x3xi64>
  rev.return
}

// -----

// A function ends with rev.return (rev.yield was accepted, then native code
// failed inside LLVM).
// expected-error @+1 {{'rev.func': @ends_with_yield must end with 'rev.return', not 'rev.yield'}}
rev.func @ends_with_yield(%y: f64) {
  rev.yield %y : f64
}
