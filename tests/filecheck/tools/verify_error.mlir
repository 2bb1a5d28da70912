// RUN: not rev-opt %s 2>&1 | filecheck %s
// RUN: not rev-opt %s -p rev-invert 2>&1 | filecheck %s
// RUN: not rev-opt %s --disable-verify -p rev-verify 2>&1 | filecheck %s
// RUN: rev-opt %s --verify-diagnostics

// A program the verifier rejects: one located diagnostic naming the rule,
// and a non-zero exit, whether it is found while parsing or by rev-verify;
// no pass runs on it and nothing else is printed.  With
// --verify-diagnostics the diagnostic is the one the annotation expects, and
// the exit code is 0.

// CHECK-NOT: Traceback
// CHECK:     {{^.*}}verify_error.mlir:[[# @LINE + 5]]:3: error: [self-read] 'rev.sub' reads its own target %x{{.*$}}
// CHECK-NOT: {{.}}

rev.func @f(%x: f64) {
  %sq = arith.mulf %x, %x : f64
  %x1 = rev.sub %x, %sq : f64 // expected-error {{[self-read] 'rev.sub' reads its own target %x}}
  rev.return %x1 : f64
}
