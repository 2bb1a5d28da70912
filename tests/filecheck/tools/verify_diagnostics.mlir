// RUN: rev-opt %s --verify-diagnostics --split-input-file
// RUN: not rev-opt %S/inputs/wrong_expectations.mlir --verify-diagnostics --split-input-file -o %t 2>&1 | filecheck %s --check-prefix=WRONG

// --verify-diagnostics checks the expected-* annotations as mlir-opt does:
// every diagnostic must be expected, on its line, and every expectation met.

rev.func @same_line(%x: f64) {
  %sq = arith.mulf %x, %x : f64
  %x1 = rev.sub %x, %sq : f64 // expected-error {{[self-read] 'rev.sub' reads its own target %x}}
  rev.return %x1 : f64
}

// -----

rev.func @below(%x: f64) {
  %sq = arith.mulf %x, %x : f64
  // expected-error-re@below {{{{\[[a-z-]+\]}} 'rev.sub' reads}}
  %x1 = rev.sub %x, %sq : f64
  rev.return %x1 : f64
}

// -----

rev.func @above(%x: f64) {
  %sq = arith.mulf %x, %x : f64
  %x1 = rev.sub %x, %sq : f64
  // expected-error@above {{reads its own target}}
  rev.return %x1 : f64
}

// A wrong expectation fails the run: the diagnostic produced is unexpected,
// the one expected was not produced, each at its line, in every chunk.

// WRONG-NOT: Traceback
// WRONG:     wrong_expectations.mlir:7:3: error: unexpected error: [self-read] 'rev.sub' reads its own target %x
// WRONG-NEXT: wrong_expectations.mlir:6:6: error: expected error "[stale-read]" was not produced
// WRONG-NEXT: wrong_expectations.mlir:16:3: error: unexpected error: [self-read]
// WRONG-NEXT: wrong_expectations.mlir:15:6: error: expected error "[self-read]" was not produced
// WRONG-NEXT: wrong_expectations.mlir:22:4: error: expected error "never reported" was not produced
// WRONG-NOT: {{.}}
