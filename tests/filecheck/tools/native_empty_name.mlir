// RUN: not rev-run %s -e "" --args 1 2 2>&1 | filecheck %s
// RUN: not rev-translate %s --emit=llvm 2>&1 | filecheck %s

// The empty name, as native_names.mlir.
// CHECK: native_empty_name.mlir:8:1: @"" cannot name native code, whose symbols are non-empty ASCII names: rename it
// CHECK-NOT: internal error

rev.func @""(%y: i64, %x: i64) {
  %y1 = rev.add %y, %x : i64
  rev.return %y1, %x : i64, i64
}
