// @g uncalls @f, which holds snapshots and so has no inverse, when %back
// holds.
rev.func @f(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  anc.drop %s, %x : !anc.stack<f64>, f64
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}
rev.func @g(%x: f64, %back: i1) {
  %y = rev.if (%x) : f64 pre {
  ^bb0(%a: f64):
    rev.cond %back
  } then {
  ^bb0(%b: f64):
    %c = rev.uncall @f(%b) : (f64) -> f64
    rev.yield %c : f64
  } else {
  ^bb0(%d: f64):
    %one = arith.constant 1.0 : f64
    %e = rev.add %d, %one : f64
    rev.yield %e : f64
  }
  rev.return %y, %back : f64, i1
}
