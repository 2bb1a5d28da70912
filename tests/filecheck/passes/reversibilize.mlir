// RUN: rev-opt %s -p 'reversibilize{mode=tape}' | filecheck %s --check-prefix=TAPE
// RUN: rev-opt %s -p reversibilize | filecheck %s --check-prefix=BENNETT
// RUN: rev-opt %s -p reversibilize,rev-verify,rev-invert | filecheck %s --check-prefix=INVERT

// A loop that sums squares (carried in place: no save), overwrites each
// element (the old one is saved) and scales it (an in-place update).
func.func @sweep(%m: memref<?xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %x = memref.load %m[%i] : memref<?xf64>
    %sq = arith.mulf %x, %x : f64
    %acc1 = arith.addf %acc, %sq : f64
    %y = math.sin %x : f64
    memref.store %y, %m[%i] : memref<?xf64>
    %z = memref.load %m[%i] : memref<?xf64>
    %w = arith.addf %z, %a : f64
    memref.store %w, %m[%i] : memref<?xf64>
    scf.yield %acc1 : f64
  }
  func.return %r : f64
}

// %x is read (through %sq) after the store that overwrites it, so it is
// copied into an ancilla where it is loaded; the loop result is saved after
// it is added into the result slot. The store's take and put carry its name
// (rev.source_op), which their errors give on both engines; the take of the
// element updated in place stands for its load, and carries the load's name.
// TAPE:      rev.func @sweep(%m: memref<?xf64>, %a: f64, %result0: f64, %tape_f64: !anc.stack<f64>) {
// TAPE:        %zero_1 = anc.alloc %zero {nocheck} : f64
// TAPE-NEXT:   %r = rev.for %c0 to %n step %c1 : index (%zero_1) : f64 {
// TAPE-NEXT:   ^bb0(%i: index, %acc: f64):
// TAPE-NEXT:     %x = memref.load %m[%i] : memref<?xf64>
// TAPE-NEXT:     %x_1 = anc.alloc %x {nocheck} : f64
// TAPE-NEXT:     %sq = arith.mulf %x_1, %x_1 : f64
// TAPE-NEXT:     %y = math.sin %x_1 : f64
// TAPE-NEXT:     %y_1 = anc.alloc %y {nocheck} : f64
// TAPE-NEXT:     %0 = rev.take %m[%i] {rev.source_op = "memref.store"} : memref<?xf64>
// TAPE-NEXT:     anc.push %tape_f64, %0 : !anc.stack<f64>
// TAPE-NEXT:     rev.put %y_1, %m[%i] {rev.source_op = "memref.store"} : memref<?xf64>
// TAPE-NEXT:     %1 = rev.take %m[%i] {rev.source_op = "memref.load"} : memref<?xf64>
// TAPE-NEXT:     %2 = rev.add %1, %a : f64
// TAPE-NEXT:     rev.put %2, %m[%i] {rev.source_op = "memref.store"} : memref<?xf64>
// TAPE-NEXT:     %3 = rev.add %acc, %sq : f64
// TAPE-NEXT:     anc.push %tape_f64, %x_1 : !anc.stack<f64>
// TAPE-NEXT:     rev.yield %3 : f64
// TAPE-NEXT:   }
// TAPE-NEXT:   %4 = rev.add %result0, %r : f64
// TAPE-NEXT:   anc.push %tape_f64, %r : !anc.stack<f64>
// TAPE-NEXT:   rev.return %a, %4 : f64, f64
// TAPE-NEXT: }

// Bennett: compute with @sweep.tape on a private tape, add the result into
// %result0 and the final %m into %m_out, uncompute; the tape is empty again.
// The result comes back in a slot of -0.0, which adding keeps -0.0 of.
// BENNETT:      rev.func @sweep(%m: memref<?xf64>, %a: f64, %result0: f64, %m_out: memref<?xf64>) {
// BENNETT-NEXT:   %tape_f64 = anc.stack_alloc : !anc.stack<f64>
// BENNETT-NEXT:   %0, %1 = rev.routine (%a, %result0) : f64, f64 compute {
// BENNETT-NEXT:   ^bb0(%a_1: f64, %result0_1: f64):
// BENNETT-NEXT:     %2 = arith.constant -0.000000e+00 : f64
// BENNETT-NEXT:     %value0 = anc.alloc %2 {nocheck} : f64
// BENNETT-NEXT:     %3, %4 = rev.call @sweep.tape(%m, %a_1, %value0, %tape_f64)
// BENNETT-NEXT:     rev.yield %3, %result0_1, %4 : f64, f64, f64
// BENNETT-NEXT:   } do {
// BENNETT-NEXT:   ^bb0(%a_2: f64, %result0_2: f64, %value0_1: f64):
// BENNETT-NEXT:     %5 = rev.add %result0_2, %value0_1 : f64
// BENNETT:          rev.for
// BENNETT:            rev.take %m_out
// BENNETT-NEXT:       memref.load %m
// BENNETT:          rev.yield %a_2, %5, %value0_1 : f64, f64, f64
// BENNETT-NEXT:   }
// BENNETT-NEXT:   anc.stack_free %tape_f64 : !anc.stack<f64>
// BENNETT-NEXT:   rev.return %0, %1 : f64, f64
// BENNETT-NEXT: }
// BENNETT-NEXT: rev.func @sweep.tape(%m: memref<?xf64>, %a: f64, %result0: f64, %tape_f64: !anc.stack<f64>) {

// The inverse pops what the forward run pushed.
// INVERT:      rev.func @sweep.tape.inv(
// INVERT:        anc.pop %tape_f64
// INVERT:        rev.for reverse
// INVERT:          anc.pop %tape_f64
