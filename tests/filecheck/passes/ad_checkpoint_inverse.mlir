// RUN: rev-opt %s -p ad-checkpoint | filecheck %s --check-prefixes=CHECK,DERIVED
// RUN: rev-opt %s -p 'rev-invert{functions=g},ad-checkpoint' | filecheck %s --check-prefixes=CHECK,WRITTEN

// A request naming @g.inv, which the module lacks, builds the inverse of @g
// first, as every ad pass does for a request naming an inverse, marked as
// derived (errors name it ~g); the gradient is the same as when an earlier
// pass built the inverse, which is the user's once printed. The
// checkpointed gradient runs that inverse's code, and keeps its mark.
// CHECK:      rev.func @g(
// DERIVED:    rev.func @g.inv(%x: f64, %tape: !anc.stack<f64>) attributes {rev.derived_inverse} {
// WRITTEN:    rev.func @g.inv(%x: f64, %tape: !anc.stack<f64>) {
// CHECK:        rev.for reverse {{.*}} attributes {checkpoint = #ad.schedule<binomial, snapshots = 2>}
// CHECK:        anc.pop %tape
// DERIVED:    rev.func @g.inv.ckpt(%x: f64, %tape: !anc.stack<f64>, %g_x: f64, %g_tape: !anc.stack<f64>) attributes {rev.derived_inverse, rev.forgetful} {
// WRITTEN:    rev.func @g.inv.ckpt(%x: f64, %tape: !anc.stack<f64>, %g_x: f64, %g_tape: !anc.stack<f64>) attributes {rev.forgetful} {
// CHECK:      rev.func @g.inv.ckpt.step0(
// CHECK:      rev.func @g.inv.ckpt.step0.adj(
// CHECK-NOT:  ad.checkpoint

rev.func @g(%x: f64, %tape: !anc.stack<f64>) {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %c1 = arith.constant 1 : index
  %r = rev.for %c0 to %c6 step %c1 : index (%x) : f64 attributes {checkpoint = #ad.schedule<binomial, snapshots = 2>} {
  ^bb0(%i: index, %y: f64):
    %s = math.sin %y : f64
    %n = arith.addf %y, %s : f64
    %z = anc.alloc %n : f64
    anc.push %tape, %y : !anc.stack<f64>
    rev.yield %z : f64
  }
  rev.return %r : f64
}
ad.checkpoint @g.inv

