// |y| with a record of the sign (docs/dialects.md, rev.if): the postcondition
// `wasneg` decides the branch backwards. `wasneg` must be false on entry.
rev.func @abs(%y: f64, %wasneg: i1) {
  %zero = arith.constant 0.000000e+00 : f64
  %true = arith.constant true
  %y1, %w1 = rev.if (%y, %wasneg) : f64, i1 pre {
  ^bb0(%a: f64, %w: i1):
    %lt = arith.cmpf olt, %a, %zero : f64
    rev.cond %lt
  } then {
  ^bb0(%a: f64, %w: i1):
    %a1 = rev.neg %a : f64
    %w2 = rev.xor %w, %true : i1
    rev.yield %a1, %w2 : f64, i1
  } else {
  ^bb0(%a: f64, %w: i1):
    rev.yield %a, %w : f64, i1
  } post {
  ^bb0(%a: f64, %w: i1):
    rev.cond %w
  }
  rev.return %y1, %w1 : f64, i1
}
