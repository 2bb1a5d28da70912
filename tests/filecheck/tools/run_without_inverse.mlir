// RUN: not rev-run %s -e f --args 2.0 --inverse 2>&1 | filecheck %s --check-prefix=INVERSE
// RUN: not rev-run %s -e f --args 2.0 --inverse --backend interpreter 2>&1 | filecheck %s --check-prefix=INVERSE
// RUN: rev-run %S/inputs/uncall_without_inverse.mlir -e g --args 2.0 0 2>&1 | filecheck %s --check-prefix=SKIPPED
// RUN: rev-run %S/inputs/uncall_without_inverse.mlir -e g --args 2.0 0 --backend interpreter 2>&1 | filecheck %s --check-prefix=SKIPPED
// RUN: not rev-run %S/inputs/uncall_without_inverse.mlir -e g --args 2.0 1 2>&1 | filecheck %s --check-prefix=UNCALL
// RUN: not rev-run %S/inputs/uncall_without_inverse.mlir -e g --args 2.0 1 --backend interpreter 2>&1 | filecheck %s --check-prefix=UNCALL

// A function holding snapshots (anc.snapshot, anc.drop: checkpointed
// gradients) has no inverse.  The native compile builds only the inverses
// that exist (it compiled none of the module before), and running the
// function backwards is a user error (exit 1) at the first op without one,
// the inverter's, not an internal error, alike on either engine.  A module
// that uncalls such a function runs natively as on the interpreter: every
// input that does not reach the uncall runs, one that does fails at the
// uncall with the inverter's reason.

// SKIPPED: 3.0 : f64
// SKIPPED-NEXT: False : i1

// UNCALL-NOT: internal error
// UNCALL: uncall_without_inverse.mlir:16:5: error: 'rev.uncall' in @g: 'anc.drop' at {{.*}}uncall_without_inverse.mlir:6:3 has no inverse{{$}}

// INVERSE-NOT: internal error
// INVERSE: run_without_inverse.mlir: error: 'anc.drop' at {{.*}}run_without_inverse.mlir:[[# @LINE + 5]]:3 has no inverse{{$}}

rev.func @f(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  anc.drop %s, %x : !anc.stack<f64>, f64
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}
