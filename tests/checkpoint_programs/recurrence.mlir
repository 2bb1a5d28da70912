// x ← x + a·sin(x), six times: the old x is overwritten, so each step
// pushes it on the tape (what reversibilize{mode=tape} would do).
rev.func @recurrence(%x: f64, %a: f64, %tape: !anc.stack<f64>) {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %c1 = arith.constant 1 : index
  %r = rev.for %c0 to %c6 step %c1 : index (%x) : f64 attributes {checkpoint = #ad.schedule<store_all>} {
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
