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

// A trip count known only when the loop starts: the cursor gets it from the
// bounds, and the loop may run backwards.
rev.func @dynamic(%x: f64, %n: i64, %tape: !anc.stack<f64>) {
  %c0 = arith.constant 0 : i64
  %c2 = arith.constant 2 : i64
  %r = rev.for reverse %c0 to %n step %c2 : i64 (%x) : f64 attributes {checkpoint = #ad.schedule<bisection>} {
  ^bb0(%i: i64, %y: f64):
    %z = anc.alloc %y : f64
    anc.push %tape, %y : !anc.stack<f64>
    rev.yield %z : f64
  }
  rev.return %r, %n : f64, i64
}
ad.checkpoint @dynamic

// @f.ckpt has @f.adj's signature; it never holds the step body itself.
// CHECK:      rev.func @recurrence.ckpt(%x: f64, %a: f64, %tape: !anc.stack<f64>, %g_x: f64, %g_a: f64, %g_tape: !anc.stack<f64>) attributes {rev.forgetful} {
// CHECK-NEXT:   %frames = anc.stack_alloc : !anc.stack<index>
// CHECK-NEXT:   %snapshots = anc.stack_alloc : !anc.stack<f64>
// The step's tape and its gradient shadow, allocated once: every step
// leaves them empty.
// CHECK-NEXT:   %step_tape = anc.stack_alloc : !anc.stack<f64>
// CHECK-NEXT:   %step_tape_shadow = anc.stack_alloc : !anc.stack<f64>
// CHECK-NOT:    math.sin
// The schedule is a run-time cursor over the trip count (6): eight words,
// threaded through the loops, starting as zeros.
// CHECK:        %[[N:[0-9]+]] = arith.constant 6 : index
// CHECK:        %kind, %step, %{{.*}} = ad.next #ad.schedule<binomial, snapshots = 2> %frames, %[[N]] (
// The forward sweep: entries until the first reversal (kind 4) or the end
// (kind 5) — plain steps (the step's untaped copy) and snapshots.
// CHECK:        rev.while (%kind, %step, {{.*}}, %x) : index, index, index, index, index, index, index, index, index, f64 pre {
// CHECK:          arith.constant 4 : index
// CHECK:          arith.constant 5 : index
// CHECK:        } do {
// CHECK:          rev.call @recurrence.ckpt.step0.plain(%{{.*}}, %step_tape)
// CHECK-NOT:      anc.stack_free
// CHECK:          anc.snapshot %snapshots, %{{.*}} : !anc.stack<f64>, f64
// CHECK:          ad.next #ad.schedule<binomial, snapshots = 2> %frames
// CHECK:          rev.inc
// The last step runs taped (if there is one); the rest of @f runs; its tape
// gets zero gradients.
// CHECK:        rev.call @recurrence.ckpt.step0(
// CHECK:        anc.zero_pad %g_tape, %tape
// CHECK:        rev.call @recurrence.ckpt.step0.adj(
// The reverse sweep: the rest of the schedule, carrying x, its gradient and a's.
// CHECK:        ad.next #ad.schedule<binomial, snapshots = 2> %frames
// CHECK:        rev.while ({{.*}}) : index, index, index, index, index, index, index, index, index, f64, f64, f64 pre {
// CHECK:          anc.restore %snapshots
// CHECK:          anc.drop %snapshots
// CHECK:          anc.zero_pad %step_tape_shadow, %step_tape
// CHECK:          rev.call @recurrence.ckpt.step0.adj({{.*}}, %step_tape_shadow)
// CHECK-NOT:      anc.stack_free
// CHECK:          ad.next
// The cursor must have reached its end: kind 5 (END), phase 7, zeros.
// CHECK:        anc.free %{{.*}}, %{{.*}} : index
// CHECK:        anc.stack_free %frames : !anc.stack<index>
// CHECK:        anc.stack_free %snapshots : !anc.stack<f64>
// CHECK-NEXT:   anc.stack_free %step_tape : !anc.stack<f64>
// CHECK-NEXT:   anc.stack_free %step_tape_shadow : !anc.stack<f64>
// CHECK:      rev.func @recurrence.ckpt.step0(%i: index, %y: f64, %a: f64, %tape: !anc.stack<f64>) {
// CHECK:        math.sin %y
// CHECK:        rev.return %i, %{{.*}}, %a : index, f64, f64
// The untaped copy, which plain steps call: its push forgets the value.
// CHECK:      rev.func @recurrence.ckpt.step0.plain(%i: index, %y: f64, %a: f64, %tape: !anc.stack<f64>) {
// CHECK:        math.sin %y
// CHECK-NOT:    anc.push
// CHECK:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:   anc.free %y, %[[ZERO]] {nocheck, rev.forgetful} : f64
// CHECK-NEXT:   rev.return %i, %{{.*}}, %a : index, f64, f64
// CHECK:      rev.func @recurrence.ckpt.step0.adj(

// The cursor is a call of the run-time scheduler, defined in the module
// with the stack functions its frames use; a record's room is pushed at
// once, then written and read in place.
// STD:      func.func @recurrence.ckpt(
// STD:        func.call @revmlir.cursor.next(%frames, %{{.*}}) : (memref<3xi64>, index, index, index, index, index, index, index, index, index, index, index) -> (index, index, index, index, index, index, index, index)
// STD:        func.call @revmlir.stack.fill.f64(%snapshots
// STD:        func.call @revmlir.stack.put.f64(%snapshots
// STD:        func.call @revmlir.stack.get.f64(%snapshots
// STD:      func.func private @revmlir.cursor.next(%frames: memref<3xi64>,
// STD:        func.call @revmlir.stack.push.index(%frames
// STD:        func.call @revmlir.stack.pop.index(%frames

// CHECK:      rev.func @dynamic.ckpt(
// CHECK:        %[[LB:.*]] = arith.index_cast %c0 : i64 to index
// CHECK:        %[[UB:.*]] = arith.index_cast %n : i64 to index
// CHECK:        %[[STEP:.*]] = arith.index_cast %c2 : i64 to index
// The trip count, (ub - lb - 1) / step + 1 unsigned where lb < ub:
// CHECK:        %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[SPAN:.*]] = arith.subi %[[UB]], %[[LB]] : index
// CHECK-NEXT:   %[[DISTANCE:.*]] = arith.subi %[[SPAN]], %[[ONE]] : index
// CHECK-NEXT:   %[[QUOTIENT:.*]] = arith.divui %[[DISTANCE]], %[[STEP]] : index
// CHECK-NEXT:   %[[COUNT:.*]] = arith.addi %[[QUOTIENT]], %[[ONE]] : index
// CHECK-NEXT:   %[[RUNS:.*]] = arith.cmpi slt, %[[LB]], %[[UB]] : index
// CHECK-NEXT:   %[[NONE:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[TRIP:.*]] = arith.select %[[RUNS]], %[[COUNT]], %[[NONE]] : index
// CHECK:        ad.next #ad.schedule<bisection> %frames, %[[TRIP]] (
