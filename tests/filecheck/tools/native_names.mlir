// RUN: not rev-run %s -e α --args 1 2 2>&1 | filecheck %s --check-prefix=GREEK
// RUN: rev-run %s -e α --args 1 2 --backend interpreter 2>&1 | filecheck %s --check-prefix=RUNS
// RUN: not rev-translate %s --emit=obj -o %t.o 2>&1 | filecheck %s --check-prefix=GREEK

// Native code has no symbol for the empty name (LLVM's unnamed value) nor
// one it can look up for a name that is not ASCII: such a function is a
// located refusal of every native compile, not an internal error; the
// interpreter, which looks up no symbol, runs it.
// GREEK: native_names.mlir:14:1: @"α" cannot name native code, whose symbols are non-empty ASCII names: rename it
// GREEK-NOT: internal error
// RUNS: 3 : i64
// RUNS-NEXT: 2 : i64

rev.func @"α"(%y: i64, %x: i64) {
  %y1 = rev.add %y, %x : i64
  rev.return %y1, %x : i64, i64
}
