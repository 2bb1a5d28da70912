// RUN: not rev-opt %s -p rev-expand-routines 2>&1 | filecheck %s

// An expanded routine runs its compute backwards whatever the input, so a
// compute without an inverse (it holds a snapshot) is refused, at the
// routine, with the inverter's reason, on one line and without a traceback.

// CHECK-NOT: Traceback
// CHECK: expand_routines_without_inverse.mlir: error: 'rev.routine' at {{.*}}expand_routines_without_inverse.mlir:[[# @LINE + 4]]:3: its backward region has no inverse: 'anc.drop' at {{.*}}expand_routines_without_inverse.mlir:[[# @LINE + 10]]:5 has no inverse{{$}}
// CHECK-NOT: {{.}}

rev.func @hoard(%x: f64, %y: f64) {
  %x1, %y1 = rev.routine (%x, %y) : f64, f64 compute {
  ^bb0(%cx: f64, %cy: f64):
    %one = arith.constant 1.0 : f64
    %cy1 = rev.add %cy, %one : f64
    %s = anc.stack_alloc : !anc.stack<f64>
    anc.snapshot %s, %cx : !anc.stack<f64>, f64
    anc.drop %s, %cx : !anc.stack<f64>, f64
    anc.stack_free %s : !anc.stack<f64>
    rev.yield %cx, %cy1 : f64, f64
  } do {
  ^bb0(%dx: f64, %dy: f64):
    %dx1 = rev.add %dx, %dy : f64
    rev.yield %dx1, %dy : f64, f64
  }
  rev.return %x1, %y1 : f64, f64
}
