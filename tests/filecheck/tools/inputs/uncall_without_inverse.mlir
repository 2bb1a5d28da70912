// @g uncalls @f, which holds snapshots and so has no inverse.
rev.func @f(%x: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %x : !anc.stack<f64>, f64
  anc.drop %s, %x : !anc.stack<f64>, f64
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x : f64
}
rev.func @g(%x: f64) {
  %y = rev.uncall @f(%x) : (f64) -> f64
  rev.return %y : f64
}
