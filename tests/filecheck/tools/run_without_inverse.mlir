// RUN: not rev-run %s -e f --args 2.0 --inverse 2>&1 | filecheck %s --check-prefix=NATIVE
// RUN: not rev-run %s -e f --args 2.0 --inverse --backend interpreter 2>&1 | filecheck %s --check-prefix=INTERPRETER
// RUN: not rev-run %S/inputs/uncall_without_inverse.mlir -e g --args 2.0 2>&1 | filecheck %s --check-prefix=UNCALL

// A function holding snapshots (anc.snapshot, anc.drop: checkpointed
// gradients) has no inverse.  The native compile builds only the inverses
// that exist (it compiled none of the module before), and running the
// function backwards is a user error (exit 1) at the first op without one,
// not an internal error, on either engine.  Native code refuses an uncall
// of such a function when it compiles the module, at the uncall.

// UNCALL-NOT: internal error
// UNCALL: uncall_without_inverse.mlir: error: cannot run natively: 'rev.uncall' at {{.*}}uncall_without_inverse.mlir:10:3 runs it backwards: @f has no inverse: {{.*}} at {{.*}}uncall_without_inverse.mlir:4:3)

// NATIVE-NOT: internal error
// NATIVE: run_without_inverse.mlir: error: @f has no inverse: it forgets state, {{.*}} at {{.*}}run_without_inverse.mlir:[[# @LINE + 7]]:3)

// INTERPRETER-NOT: internal error
// INTERPRETER: run_without_inverse.mlir: error: 'anc.drop' at {{.*}}run_without_inverse.mlir:[[# @LINE + 5]]:3 has no inverse

rev.func @f(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  anc.drop %s, %x : !anc.stack<f64>, f64
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}
