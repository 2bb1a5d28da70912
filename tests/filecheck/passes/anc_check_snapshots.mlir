// RUN: rev-opt %s --verify-diagnostics --split-input-file -p anc-check-snapshots | filecheck %s

// The legality check before lowering (rev-lower-to-std runs it too):
// snapshots stay in their function and every snapshot has its drop.

rev.func @balanced(%x: f64, %m: memref<4xf64>) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %x, %m : !anc.stack<f64>, f64, memref<4xf64>
  %y = anc.restore %s, %x, %m : !anc.stack<f64>, f64, memref<4xf64> -> (f64)
  %z = anc.alloc %y : f64
  anc.drop %s, %z, %m : !anc.stack<f64>, f64, memref<4xf64>
  anc.stack_free %s : !anc.stack<f64>
  rev.return %z : f64
}
// CHECK: rev.func @balanced

// -----

rev.func @unbalanced(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  // expected-error@+1 {{1 snapshot(s) still held when the store is freed: every anc.snapshot needs its anc.drop}}
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}

// -----

rev.func @drop_first(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  // expected-error@+1 {{no snapshot is held on this store here: every 'anc.drop' needs an anc.snapshot before it}}
  anc.drop %s, %x : !anc.stack<f64>, f64
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}

// -----

rev.func @escapes(%x: f64, %s: !anc.stack<f64>) {
  // expected-error@+1 {{snapshots must be kept on a local stack (anc.stack_alloc): they cannot leave the function that uses them}}
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  rev.return %x : f64
}

// -----

rev.func @unchecked(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  // expected-error@+1 {{the stack of snapshots must be freed once, checked, in the block that allocates it}}
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  anc.drop %s, %x : !anc.stack<f64>, f64
  anc.stack_free %s {nocheck} : !anc.stack<f64>
  rev.return %x : f64
}

// -----

// A cursor's frames are local too, and freed checked: a run that leaves a
// segment open is caught.
rev.func @frames(%n: index, %frames: !anc.stack<index>) {
  %z = arith.constant 0 : index
  %w0 = anc.alloc %z : index
  %w1 = anc.alloc %z : index
  %w2 = anc.alloc %z : index
  %w3 = anc.alloc %z : index
  %w4 = anc.alloc %z : index
  %w5 = anc.alloc %z : index
  %w6 = anc.alloc %z : index
  %w7 = anc.alloc %z : index
  // expected-error@+1 {{a cursor's frames must be kept on a local stack (anc.stack_alloc): they cannot leave the function that uses them}}
  %c:8 = ad.next #ad.schedule<bisection> %frames, %n (%w0, %w1, %w2, %w3, %w4, %w5, %w6, %w7)
  anc.free %c#0, %z {nocheck} : index
  anc.free %c#1, %z {nocheck} : index
  anc.free %c#2, %z {nocheck} : index
  anc.free %c#3, %z {nocheck} : index
  anc.free %c#4, %z {nocheck} : index
  anc.free %c#5, %z {nocheck} : index
  anc.free %c#6, %z {nocheck} : index
  anc.free %c#7, %z {nocheck} : index
  rev.return %n : index
}
