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
  // CHECK: error: 'anc.stack_free' at {{.*}}anc_check_snapshots.mlir:[[# @LINE + 1]]:3: 1 snapshot(s) still held when the store is freed: every anc.snapshot needs its anc.drop
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}

// -----

rev.func @drop_first(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  // CHECK: error: 'anc.drop' at {{.*}}anc_check_snapshots.mlir:[[# @LINE + 1]]:3: no snapshot is held on this store here: every 'anc.drop' needs an anc.snapshot before it
  anc.drop %s, %x : !anc.stack<f64>, f64
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}

// -----

rev.func @escapes(%x: f64, %s: !anc.stack<f64>) {
  // CHECK: error: 'anc.snapshot' at {{.*}}anc_check_snapshots.mlir:[[# @LINE + 1]]:3: snapshots must be taken on a local stack (anc.stack_alloc): they cannot leave the function that takes them
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  rev.return %x : f64
}

// -----

rev.func @unchecked(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  // CHECK: error: 'anc.snapshot' at {{.*}}anc_check_snapshots.mlir:[[# @LINE + 1]]:3: the snapshot store must be freed once, checked, in the block that allocates it
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  anc.drop %s, %x : !anc.stack<f64>, f64
  anc.stack_free %s {nocheck} : !anc.stack<f64>
  rev.return %x : f64
}

// -----

rev.func @table(%x: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = rev.for %c0 to %c2 step %c1 : index (%x) : f64 {
  ^bb0(%k: index, %y: f64):
    // CHECK: error: 'ad.action' at {{.*}}anc_check_snapshots.mlir:[[# @LINE + 1]]:5: the action table is not a valid schedule
    %kind, %s = ad.action %k {actions = array<i64: 1, 0, 4, 0>}
    rev.yield %y : f64
  }
  rev.return %r : f64
}
