// Annotations that do not match what rev-opt reports: each chunk must fail
// --verify-diagnostics (tools/verify_diagnostics.mlir checks the messages).

rev.func @wrong_text(%x: f64) {
  %sq = arith.mulf %x, %x : f64
  // expected-error@+1 {{[stale-read]}}
  %x1 = rev.sub %x, %sq : f64
  rev.return %x1 : f64
}

// -----

rev.func @wrong_line(%x: f64) {
  %sq = arith.mulf %x, %x : f64
  // expected-error@+2 {{[self-read]}}
  %x1 = rev.sub %x, %sq : f64
  rev.return %x1 : f64
}

// -----

// expected-error@+1 {{never reported}}
rev.func @fine(%x: f64) {
  rev.return %x : f64
}
