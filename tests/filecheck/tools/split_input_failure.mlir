// RUN: not rev-opt %s --split-input-file 2>/dev/null | filecheck %s --check-prefix=OUT
// RUN: not rev-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=ERR
// RUN: rev-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=VERIFY

// One separator stands between each two chunks, so the pieces of the
// output are the chunks of the input. The failing chunk prints nothing and
// ends the run (docs/tools.md), so the output is the chunks before it, with
// no separator after the last of them; under --verify-diagnostics the
// expected failure's piece is empty and the run goes on, so two separators
// stand together around it.

// OUT:      rev.func @first
// OUT:      // {{-----}}
// OUT-NEXT: builtin.module {
// OUT-NEXT:   rev.func @second
// OUT-NOT:  // {{-----}}

// ERR:      @second
// ERR:      split_input_failure.mlir:[[# @LINE + 23]]:14: error: operand is used with type i64{{.*}}
// ERR-NOT:  {{.}}

// VERIFY:      rev.func @first
// VERIFY:      // {{-----}}
// VERIFY-NEXT: builtin.module {
// VERIFY-NEXT:   rev.func @second
// VERIFY:      // {{-----}}
// VERIFY-NEXT: // {{-----}}
// VERIFY-NEXT: builtin.module {
// VERIFY-NEXT:   rev.func @fourth
// VERIFY-NOT:  // {{-----}}

rev.func @first(%x: f64) {
  rev.return %x : f64
}
// -----
rev.func @second(%x: f64) {
  rev.return %x : f64
}
// -----
rev.func @third(%x: f64) {
  // expected-error @+1 {{operand is used with type i64}}
  rev.return %x : i64
}
// -----
rev.func @fourth(%x: f64) {
  rev.return %x : f64
}
