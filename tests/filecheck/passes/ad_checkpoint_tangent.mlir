// RUN: rev-opt %s -p 'ad-checkpoint,ad-tangent{functions="recurrence.ckpt"},anc-check-snapshots' | filecheck %s

// Forward over a checkpointed gradient (Hessian-vector products): the
// tangent of @recurrence.ckpt keeps the state's tangents on a shadow of the
// snapshot store, record for record, and runs the same schedule (ad.next is
// copied once, not differentiated).  The shadow store is freed checked, so
// the legality check of snapshots, which lowering runs first, accepts it
// (docs/python.md runs such a tangent natively).
rev.func @recurrence(%x: f64, %a: f64, %tape: !anc.stack<f64>) {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %c1 = arith.constant 1 : index
  %r = rev.for %c0 to %c6 step %c1 : index (%x) : f64 attributes {checkpoint = #ad.schedule<binomial, snapshots = 2>} {
  ^bb0(%i: index, %y: f64):
    %s = math.sin %y : f64
    %d = arith.mulf %a, %s : f64
    %n = arith.addf %y, %d : f64
    %z = anc.alloc %n : f64
    anc.push %tape, %y : !anc.stack<f64>
    rev.yield %z : f64
  }
  rev.return %r, %a : f64, f64
}
ad.checkpoint @recurrence

// CHECK-LABEL: rev.func @recurrence.ckpt.tan(%x: f64, %a: f64, %tape: !anc.stack<f64>, %g_x: f64, %g_a: f64, %g_tape: !anc.stack<f64>, %d_x: f64, %d_a: f64, %d_tape: !anc.stack<f64>, %d_g_x: f64, %d_g_a: f64, %d_g_tape: !anc.stack<f64>)
// CHECK:         %snapshots = anc.stack_alloc : !anc.stack<f64>
// CHECK-NEXT:    %d_snapshots = anc.stack_alloc {nocheck} : !anc.stack<f64>
// CHECK:         ad.next #ad.schedule<binomial, snapshots = 2>
// CHECK-NOT:     ad.next
// CHECK:         anc.snapshot %snapshots, %{{.*}} : !anc.stack<f64>, f64
// CHECK-NEXT:    anc.snapshot %d_snapshots, %{{.*}} : !anc.stack<f64>, f64
// CHECK:         anc.restore %snapshots, %{{.*}} -> (f64)
// CHECK-NEXT:    anc.restore %d_snapshots, %{{.*}} -> (f64)
// CHECK:         anc.drop %snapshots, %{{.*}} : !anc.stack<f64>, f64
// CHECK-NEXT:    anc.drop %d_snapshots, %{{.*}} : !anc.stack<f64>, f64
// CHECK:         anc.zero_pad %g_tape, %tape : !anc.stack<f64>, !anc.stack<f64>
// CHECK-NEXT:    anc.zero_pad %d_g_tape, %d_tape : !anc.stack<f64>, !anc.stack<f64>
// CHECK:         anc.stack_free %snapshots : !anc.stack<f64>
// CHECK-NEXT:    anc.stack_free %d_snapshots : !anc.stack<f64>
// CHECK-NEXT:    anc.stack_free %step_tape : !anc.stack<f64>
// CHECK-NEXT:    anc.stack_free %d_step_tape : !anc.stack<f64>
// CHECK-NEXT:    anc.stack_free %step_tape_shadow : !anc.stack<f64>
// CHECK-NEXT:    anc.stack_free %d_step_tape_shadow : !anc.stack<f64>
// CHECK-NEXT:    rev.return
