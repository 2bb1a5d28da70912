// RUN: rev-opt %s --verify-diagnostics --split-input-file -p ad-jacobian

// What ad-jacobian does not build is a diagnostic naming the function and
// its location, never a traceback.

// A complex argument: whole matrices are over f64 entries only.
// expected-error@+1 {{derivative matrices support f64, integer and boolean arguments and arrays of them, not complex<f64>}}
rev.func @cplx(%y: complex<f64>, %x: f64) {
  %re, %im = rev.unpack %y : complex<f64>
  %re1 = rev.add %re, %x : f64
  %y1 = rev.pack %re1, %im : complex<f64>
  rev.return %y1, %x : complex<f64>, f64
}
ad.jacobian @cplx

// -----

// Nothing to differentiate.
// expected-error@+1 {{has no float argument to differentiate}}
rev.func @ints(%n: i64) {
  %one = arith.constant 1 : i64
  %n1 = rev.add %n, %one : i64
  rev.return %n1 : i64
}
ad.jacobian @ints
