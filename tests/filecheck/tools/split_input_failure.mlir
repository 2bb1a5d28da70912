// RUN: not rev-opt %s --split-input-file 2>/dev/null | filecheck %s --check-prefix=OUT
// RUN: not rev-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=ERR
// RUN: rev-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=VERIFY

// Separators stand only between printed chunks. The failing chunk prints
// nothing and ends the run (docs/tools.md), so the output is the chunks
// before it, with no separator after the last of them; under
// --verify-diagnostics the expected failure prints nothing and the run goes
// on, with one separator between the chunks around it.

// OUT:      rev.func @first
// OUT:      // {{-----}}
// OUT-NEXT: builtin.module {
// OUT-NEXT:   rev.func @second
// OUT-NOT:  // {{-----}}

// ERR:      @second
// ERR:      split_input_failure.mlir:[[# @LINE + 22]]:14: error: operand is used with type i64{{.*}}
// ERR-NOT:  {{.}}

// VERIFY:      rev.func @first
// VERIFY:      // {{-----}}
// VERIFY-NEXT: builtin.module {
// VERIFY-NEXT:   rev.func @second
// VERIFY:      // {{-----}}
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
