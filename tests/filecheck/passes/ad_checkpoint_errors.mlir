// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-checkpoint

// Loops ad-checkpoint cannot checkpoint yet are diagnostics at the loop.

// A checkpointed loop inside another loop.
rev.func @nested(%x: f64, %tape: !anc.stack<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = rev.for %c0 to %c3 step %c1 : index (%x) : f64 {
  ^bb0(%i: index, %y: f64):
    // expected-error@+1 {{only rev.for and rev.while loops at the top level of a function can be checkpointed}}
    %s = rev.for %c0 to %c3 step %c1 : index (%y) : f64 attributes {checkpoint = #ad.schedule<store_all>} {
    ^bb1(%j: index, %v: f64):
      %z = anc.alloc %v : f64
      anc.push %tape, %v : !anc.stack<f64>
      rev.yield %z : f64
    }
    rev.yield %s : f64
  }
  rev.return %r : f64
}
ad.checkpoint @nested

// -----

// A mark that is no schedule: the name of a scheme, not the attribute.
rev.func @named(%x: f64, %tape: !anc.stack<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  // expected-error@+1 {{'checkpoint' must be a schedule (#ad.schedule<store_all>, <bisection> or <binomial, snapshots = n>), not "binomial"}}
  %r = rev.for %c0 to %c3 step %c1 : index (%x) : f64 attributes {checkpoint = "binomial"} {
  ^bb0(%i: index, %y: f64):
    %z = anc.alloc %y : f64
    anc.push %tape, %y : !anc.stack<f64>
    rev.yield %z : f64
  }
  rev.return %r : f64
}
ad.checkpoint @named

// -----

// A schedule that needs a budget gets one.
// expected-error@+1 {{'snapshots = n' (n >= 1) is required by binomial and only by binomial}}
"test.op"() {checkpoint = #ad.schedule<binomial>} : () -> ()

// -----

// A stack the function allocates and the loop pushes on is state, like a
// frame stack of a resumable function: its snapshots store its length as
// an element, which i1 cannot hold.
rev.func @flags(%x: f64, %a: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %flags = anc.stack_alloc : !anc.stack<i1>
  // expected-error@+1 {{a checkpointed loop cannot snapshot a stack of i1}}
  %r = rev.for %c0 to %c3 step %c1 : index (%x) : f64 attributes {checkpoint = #ad.schedule<store_all>} {
  ^bb0(%i: index, %y: f64):
    %t = arith.constant true
    anc.copy_push %flags, %t : !anc.stack<i1>
    %s = math.sin %a : f64
    %z = rev.add %y, %s : f64
    rev.yield %z : f64
  }
  rev.return %r, %a : f64, f64
}
ad.checkpoint @flags
