// RUN: rev-opt %s --verify-diagnostics --split-input-file

// The `parallel` rule (revmlir/parallel.py): what an iteration of a
// `rev.for parallel` may write and read. Each diagnostic points at the op of
// the body that breaks it.

// A write at an index that is not the loop's index, and not an accumulation.
rev.func @shared_write(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    // expected-error@+1 {{[parallel] 'rev.take' in a parallel loop writes an element of %y whose first index is not the loop's index: another iteration may write it too; only accumulations (rev.take, rev.add/rev.sub, rev.put) may share an element}}
    %v = rev.take %y[%c0] : memref<?xf64>
    %v1 = rev.neg %v : f64
    rev.put %v1, %y[%c0] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// The first index must be the induction variable itself, not an expression
// of it (i + 1 is iteration i + 1's element).
rev.func @shifted_index(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %k = arith.addi %i, %c1 : index
    // expected-error@+1 {{[parallel] 'rev.take' in a parallel loop writes an element of %y whose first index is not the loop's index}}
    %v = rev.take %y[%k] : memref<?xf64>
    %v1 = rev.neg %v : f64
    rev.put %v1, %y[%k] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// An exclusive or is an update, but not an accumulation.
rev.func @shared_xor(%y: memref<4xi64>, %x: memref<?xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xi64>
    // expected-error@+1 {{[parallel] 'rev.take' in a parallel loop writes an element of %y whose first index is not the loop's index}}
    %v = rev.take %y[%c0] : memref<4xi64>
    %v1 = rev.xor %v, %xi : i64
    rev.put %v1, %y[%c0] : memref<4xi64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// An array accumulated into is not read in the loop.
rev.func @read_accumulated(%g: memref<4xf64>, %y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    // expected-error@+1 {{[parallel] 'memref.load' in a parallel loop reads %g, which iterations accumulate into: its elements change while the loop runs}}
    %gi = memref.load %g[%c1] : memref<4xf64>
    %v = rev.take %y[%i] : memref<?xf64>
    %v1 = rev.add %v, %gi : f64
    rev.put %v1, %y[%i] : memref<?xf64>
    %yi = memref.load %y[%i] : memref<?xf64>
    %w = rev.take %g[%c0] : memref<4xf64>
    %w1 = rev.add %w, %yi : f64
    rev.put %w1, %g[%c0] : memref<4xf64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// Nor borrowed other than to accumulate, even at a private index.
rev.func @swap_accumulated(%g: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    // expected-error@+1 {{[parallel] 'rev.take' in a parallel loop borrows an element of %g, which iterations accumulate into: it is only accumulated into (rev.take, rev.add/rev.sub, rev.put) in the loop}}
    %v = rev.take %g[%i] : memref<?xf64>
    %v1 = rev.neg %v : f64
    rev.put %v1, %g[%i] : memref<?xf64>
    %w = rev.take %g[%c0] : memref<?xf64>
    %w1 = rev.add %w, %one : f64
    rev.put %w1, %g[%c0] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// A privately written array is read only at private elements.
rev.func @read_neighbour(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %k = arith.addi %i, %c1 : index
    // expected-error@+1 {{[parallel] 'memref.load' in a parallel loop reads an element of %y, which the loop writes, at an index other than the loop's: another iteration may be writing it}}
    %next = memref.load %y[%k] : memref<?xf64>
    %v = rev.take %y[%i] : memref<?xf64>
    %v1 = rev.add %v, %next : f64
    rev.put %v1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// A whole array passed to a callee that writes it.
rev.func @scale(%m: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %v = rev.take %m[%c0] : memref<?xf64>
  %v1 = rev.neg %v : f64
  rev.put %v1, %m[%c0] : memref<?xf64>
  rev.return
}

rev.func @call_writes(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    // expected-error@+1 {{[parallel] 'rev.call' in a parallel loop passes %y, which it writes, as a whole array: another iteration may write the same elements; pass the element instead}}
    rev.call @scale(%y) : (memref<?xf64>) -> ()
    rev.yield
  }
  rev.return %n : index
}

// -----

// A whole array the loop writes, passed to a callee that only reads it.
rev.func @first(%acc: f64, %m: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<?xf64>
  %acc1 = rev.add %acc, %v : f64
  rev.return %acc1 : f64
}

rev.func @call_reads_written(%y: memref<?xf64>, %z: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %v = rev.take %y[%i] : memref<?xf64>
    %v1 = rev.add %v, %one : f64
    rev.put %v1, %y[%i] : memref<?xf64>
    %w = rev.take %z[%i] : memref<?xf64>
    // expected-error@+1 {{[parallel] 'rev.call' in a parallel loop passes %y as a whole array while the loop writes it: a callee reading it would race with other iterations}}
    %w1 = rev.call @first(%w, %y) : (f64, memref<?xf64>) -> f64
    rev.put %w1, %z[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// Shared accumulations are atomic adds: not on complex elements.
rev.func @complex_accumulation(%g: memref<4xcomplex<f64>>, %x: memref<?xcomplex<f64>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xcomplex<f64>>
    // expected-error@+1 {{[parallel] 'rev.take' in a parallel loop accumulates into a shared element of %g of type memref<4xcomplex<f64>>: shared accumulations need float or integer elements}}
    %w = rev.take %g[%c0] : memref<4xcomplex<f64>>
    %w1 = rev.add %w, %xi : complex<f64>
    rev.put %w1, %g[%c0] : memref<4xcomplex<f64>>
    rev.yield
  }
  rev.return %n : index
}

// -----

// Accepted: a whole array passed to a callee that only accumulates into it,
// here through a second callee (as an adjoint passes a gradient array; reading
// its shape is not reading it), is a
// shared accumulation; the loop may accumulate into it directly too.
rev.func @add_at(%g: memref<?xf64>, %j: index, %v: f64) {
  %e = rev.take %g[%j] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %g[%j] : memref<?xf64>
  rev.return %j, %v : index, f64
}

rev.func @add_first(%g: memref<?xf64>, %v: f64) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %g, %c0 : memref<?xf64>
  %k = anc.alloc %c0 : index
  %k1, %v1 = rev.call @add_at(%g, %k, %v) : (memref<?xf64>, index, f64) -> (index, f64)
  anc.free %k1, %c0 : index
  rev.return %v1 : f64
}

rev.func @call_accumulates(%g: memref<?xf64>, %x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xf64>
    %v = anc.alloc %xi : f64
    %v1 = rev.call @add_first(%g, %v) : (memref<?xf64>, f64) -> f64
    anc.free %v1, %xi : f64
    %w = rev.take %g[%c1] : memref<?xf64>
    %w1 = rev.sub %w, %xi : f64
    rev.put %w1, %g[%c1] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// A callee that accumulates into an array but also reads it does not only
// accumulate: its reads would see other iterations' sums.
rev.func @add_and_read(%g: memref<?xf64>, %v: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = memref.load %g[%c1] : memref<?xf64>
  %e = rev.take %g[%c0] : memref<?xf64>
  %e1 = rev.add %e, %r : f64
  rev.put %e1, %g[%c0] : memref<?xf64>
  rev.return %v : f64
}

rev.func @call_accumulates_and_reads(%g: memref<?xf64>, %x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xf64>
    %v = anc.alloc %xi : f64
    // expected-error@+1 {{[parallel] 'rev.call' in a parallel loop passes %g, which it writes, as a whole array: another iteration may write the same elements; pass the element instead}}
    %v1 = rev.call @add_and_read(%g, %v) : (memref<?xf64>, f64) -> f64
    anc.free %v1, %xi : f64
    rev.yield
  }
  rev.return %n : index
}

// -----

// Nor does one that passes the array on to a callee writing it otherwise.
rev.func @negate_first(%g: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %e = rev.take %g[%c0] : memref<?xf64>
  %e1 = rev.neg %e : f64
  rev.put %e1, %g[%c0] : memref<?xf64>
  rev.return
}

rev.func @add_then_negate(%g: memref<?xf64>, %v: f64) {
  %c1 = arith.constant 1 : index
  %e = rev.take %g[%c1] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %g[%c1] : memref<?xf64>
  rev.call @negate_first(%g) : (memref<?xf64>) -> ()
  rev.return %v : f64
}

rev.func @call_writes_through_a_callee(%g: memref<?xf64>, %x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xf64>
    %v = anc.alloc %xi : f64
    // expected-error@+1 {{[parallel] 'rev.call' in a parallel loop passes %g, which it writes, as a whole array}}
    %v1 = rev.call @add_then_negate(%g, %v) : (memref<?xf64>, f64) -> f64
    anc.free %v1, %xi : f64
    rev.yield
  }
  rev.return %n : index
}

// -----

// An array a callee accumulates into is not read in the loop either.
rev.func @add_zeroth(%g: memref<?xf64>, %v: f64) {
  %c0 = arith.constant 0 : index
  %e = rev.take %g[%c0] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %g[%c0] : memref<?xf64>
  rev.return %v : f64
}

rev.func @read_call_accumulated(%g: memref<?xf64>, %y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %yi = rev.take %y[%i] : memref<?xf64>
    %yi1 = rev.call @add_zeroth(%g, %yi) : (memref<?xf64>, f64) -> f64
    // expected-error@+1 {{[parallel] 'memref.load' in a parallel loop reads %g, which iterations accumulate into: its elements change while the loop runs}}
    %g1 = memref.load %g[%c1] : memref<?xf64>
    %yi2 = rev.add %yi1, %g1 : f64
    rev.put %yi2, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// Nor passed to a callee that reads it.
rev.func @add_zeroth(%g: memref<?xf64>, %v: f64) {
  %c0 = arith.constant 0 : index
  %e = rev.take %g[%c0] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %g[%c0] : memref<?xf64>
  rev.return %v : f64
}

rev.func @second(%acc: f64, %m: memref<?xf64>) {
  %c1 = arith.constant 1 : index
  %v = memref.load %m[%c1] : memref<?xf64>
  %acc1 = rev.add %acc, %v : f64
  rev.return %acc1 : f64
}

rev.func @call_reads_call_accumulated(%g: memref<?xf64>, %y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %yi = rev.take %y[%i] : memref<?xf64>
    %yi1 = rev.call @add_zeroth(%g, %yi) : (memref<?xf64>, f64) -> f64
    // expected-error@+1 {{[parallel] 'rev.call' in a parallel loop passes %g as a whole array while the loop writes it: a callee reading it would race with other iterations}}
    %yi2 = rev.call @second(%yi1, %g) : (f64, memref<?xf64>) -> f64
    rev.put %yi2, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// A callee's accumulations into a shared array are atomic adds: not on
// complex elements.
rev.func @add_complex(%g: memref<4xcomplex<f64>>, %v: complex<f64>) {
  %c0 = arith.constant 0 : index
  %e = rev.take %g[%c0] : memref<4xcomplex<f64>>
  %e1 = rev.add %e, %v : complex<f64>
  rev.put %e1, %g[%c0] : memref<4xcomplex<f64>>
  rev.return %v : complex<f64>
}

rev.func @call_complex_accumulation(%g: memref<4xcomplex<f64>>, %x: memref<?xcomplex<f64>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xcomplex<f64>>
    %v = anc.alloc %xi : complex<f64>
    // expected-error@+1 {{[parallel] 'rev.call' in a parallel loop passes %g of type memref<4xcomplex<f64>> to a callee that accumulates into it: shared accumulations need float or integer elements}}
    %v1 = rev.call @add_complex(%g, %v) : (memref<4xcomplex<f64>>, complex<f64>) -> complex<f64>
    anc.free %v1, %xi : complex<f64>
    rev.yield
  }
  rev.return %n : index
}

// -----

// A borrow put back unchanged only reads its element, as the adjoint of a
// shared accumulation reads the shared gradient: iterations may share it,
// but not in an array the loop writes.
rev.func @read_borrow(%g: memref<4xf64>, %x: memref<?xf64>, %idx: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %j = memref.load %idx[%i] : memref<?xindex>
    %e = rev.take %g[%j] : memref<4xf64>
    %v = rev.take %x[%i] : memref<?xf64>
    %v1 = rev.add %v, %e : f64
    rev.put %v1, %x[%i] : memref<?xf64>
    rev.put %e, %g[%j] : memref<4xf64>
    rev.yield
  }
  rev.return %n : index
}

rev.func @read_borrow_of_a_written_array(%x: memref<?xf64>, %idx: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %j = memref.load %idx[%i] : memref<?xindex>
    // expected-error@+1 {{[parallel] 'rev.take' in a parallel loop reads an element of %x, which the loop writes, at an index other than the loop's: another iteration may be writing it}}
    %e = rev.take %x[%j] : memref<?xf64>
    rev.put %e, %x[%j] : memref<?xf64>
    %v = rev.take %x[%i] : memref<?xf64>
    %v1 = rev.neg %v : f64
    rev.put %v1, %x[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}
