// RUN: rev-opt %s -p ad-checkpoint | filecheck %s
// RUN: rev-opt %s -p ad-checkpoint,anc-check-snapshots,rev-lower-to-std | filecheck %s --check-prefix=STD

// x ← x + a·sin(x), six steps, each pushing the x it overwrites: the
// gradient under binomial checkpointing with two snapshots.
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

// @f.ckpt has @f.adj's signature; it never holds the step body itself.
// CHECK:      rev.func @recurrence.ckpt(%x: f64, %a: f64, %tape: !anc.stack<f64>, %g_x: f64, %g_a: f64, %g_tape: !anc.stack<f64>) attributes {rev.forgetful} {
// CHECK-NEXT:   %snapshots = anc.stack_alloc : !anc.stack<f64>
// CHECK-NOT:    math.sin
// The forward sweep: table entries [0, 7) — plain steps on forgotten tapes and snapshots.
// CHECK:        rev.for %{{.*}} to %{{.*}} step %{{.*}} : index (%x) : f64 {
// CHECK:          ad.action %{{.*}} {actions = array<i64: 1, 0, 0, 0, 0, 1, 0, 2, 1, 3, 0, 3, 0, 4, 4, 5,
// CHECK:          rev.call @recurrence.ckpt.step0(
// CHECK:          anc.stack_free %{{.*}} {nocheck} : !anc.stack<f64>
// CHECK:          anc.snapshot %snapshots, %{{.*}} : !anc.stack<f64>, f64
// The last step runs taped; the rest of @f runs; its tape gets zero gradients.
// CHECK:        rev.call @recurrence.ckpt.step0(
// CHECK:        anc.zero_pad %g_tape, %tape
// CHECK:        rev.call @recurrence.ckpt.step0.adj(
// The reverse sweep: the rest of the table, carrying x, its gradient and a's.
// CHECK:        rev.for %{{.*}} to %{{.*}} step %{{.*}} : index (%{{.*}}, %{{.*}}, %g_a_1) : f64, f64, f64 {
// CHECK:          anc.restore %snapshots
// CHECK:          anc.drop %snapshots
// CHECK:          anc.zero_pad
// CHECK:          rev.call @recurrence.ckpt.step0.adj(
// CHECK:          anc.stack_free
// CHECK-NOT:      nocheck
// CHECK:        anc.stack_free %snapshots : !anc.stack<f64>
// CHECK:      rev.func @recurrence.ckpt.step0(%i: index, %y: f64, %a: f64, %tape: !anc.stack<f64>) {
// CHECK:        math.sin %y
// CHECK:        rev.return %i, %{{.*}}, %a : index, f64, f64
// CHECK:      rev.func @recurrence.ckpt.step0.adj(

// The table becomes a frame array filled on entry; records are pushed and popped.
// STD:      func.func @recurrence.ckpt(
// STD:        memref.alloca() : memref<50xi64>
// STD:        func.call @revmlir.stack.push.f64(%snapshots
// STD:        func.call @revmlir.stack.pop.f64(%snapshots
