// RUN: not rev-run %s -e f --args 0.0 2.5 2>&1 | filecheck %s

// A primitive whose C function no loaded library defines cannot run
// natively: a user error (exit 1) naming the symbol, not an internal one.

// CHECK-NOT: internal error
// CHECK: {{^.*}}unresolved_symbol.mlir: error: cannot run natively: native code calls no_such_symbol_xyz, which no library loaded in this process defines
// CHECK-NOT: {{.}}

rev.extern @lgamma : (f64) -> f64 {symbol = "no_such_symbol_xyz"}
rev.func @f(%y: f64, %x: f64) {
  %l = rev.apply @lgamma(%x) : (f64) -> f64
  %y2 = rev.add %y, %l : f64
  rev.return %y2, %x : f64, f64
}
