// RUN: rev-opt %s --verify-diagnostics -p ad-checkpoint

// @f.ckpt is built from @f.ckpt.step<j>, the outlined step of each
// checkpointed loop j, its untaped copy @f.ckpt.step<j>.plain and its
// adjoint @f.ckpt.step<j>.adj. A function of the module with one of those
// names is refused, at that function, before any gradient is built.

rev.func @f(%x: f64, %tape: !anc.stack<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = rev.for %c0 to %c3 step %c1 : index (%x) : f64 attributes {checkpoint = #ad.schedule<bisection>} {
  ^bb0(%i: index, %y: f64):
    %s = math.sin %y : f64
    %z = anc.alloc %s : f64
    anc.push %tape, %y : !anc.stack<f64>
    rev.yield %z : f64
  }
  rev.return %r : f64
}
ad.checkpoint @f

// expected-error@+1 {{@f.ckpt.step0.plain is the name of the untaped copy of the outlined step of @f's checkpointed loop #0, which this run builds; rename this function}}
rev.func @f.ckpt.step0.plain(%x: f64) {
  rev.return %x : f64
}
