// RUN: rev-opt --pass-pipeline='builtin.module(rev-verify, rev-invert)' - < %s | filecheck %s
// RUN: rev-opt %s --rev-verify --rev-invert | filecheck %s
// RUN: rev-opt %s -p rev-invert --mlir-print-ir-before-all --mlir-print-ir-after-all -o %t 2>&1 | filecheck %s --check-prefix=DUMP
// RUN: rev-opt %s --rev-invert=in_place=true --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC

// mlir-opt's spellings: an anchored pipeline read from stdin, pass flags,
// IR dumps around each pass on stderr, the generic form.

rev.func @twice(%x: i64) {
  %x1 = rev.inc %x : i64
  %x2 = rev.inc %x1 : i64
  rev.return %x2 : i64
}

// CHECK-LABEL: rev.func @twice(%x: i64)
// CHECK:         rev.inc
// CHECK-LABEL: rev.func @twice.inv(%x: i64)
// CHECK:         rev.dec

// DUMP:      // -----// IR Dump Before RevInvertPass (rev-invert) //----- //
// DUMP-NEXT: builtin.module {
// DUMP-NOT:  @twice.inv
// DUMP:      // -----// IR Dump After RevInvertPass (rev-invert) //----- //
// DUMP-NEXT: builtin.module {
// DUMP:        rev.func @twice.inv

// GENERIC:     "rev.func"() <{sym_name = "twice"
// GENERIC:       "rev.dec"
