// RUN: not rev-run %s -e f.inv --args 1.0 2.0 2>&1 | filecheck %s --check-prefix=WRITTEN
// RUN: not rev-run %s -e f.inv --args 1.0 2.0 --backend interpreter 2>&1 | filecheck %s --check-prefix=WRITTEN
// RUN: not rev-run %s -e f.inv --inverse --args 1.0 2.0 2>&1 | filecheck %s --check-prefix=BACKWARD
// RUN: not rev-run %s -e f.inv --inverse --args 1.0 2.0 --backend interpreter 2>&1 | filecheck %s --check-prefix=BACKWARD
// RUN: not rev-run %s -e r.inv --args 3.0 2>&1 | filecheck %s --check-prefix=UNCALL
// RUN: not rev-run %s -e r.inv --args 3.0 --backend interpreter 2>&1 | filecheck %s --check-prefix=UNCALL

// A function the user named @f.inv is @f.inv in errors on both engines; ~g
// names only an inverse the compile derived, here that of @f.inv run
// backwards (~f.inv). An uncall of @r where the module has @r.inv runs
// that function on both engines, so a recursion through it stops at the
// same call of the same function.

// WRITTEN:  inverse_names.mlir:[[# @LINE + 10]]:3: error: [invertibility] 'anc.free' in @f.inv: ancilla freed holding 4.0, expected 0.0
// BACKWARD: inverse_names.mlir:[[# @LINE + 5]]:3: error: [invertibility] 'anc.free' in @~f.inv: ancilla freed holding -4.0, expected 0.0
// UNCALL:   inverse_names.mlir:[[# @LINE + 18]]:3: error: 'rev.uncall' in @r.inv: calls nest too deeply: the recursion would exhaust the stack

rev.func @f.inv(%y: f64, %a: f64) {
  %z = arith.constant 0.0 : f64
  %x = anc.alloc %z : f64
  %x1 = rev.add %x, %a : f64
  %y1 = rev.add %y, %x1 : f64
  %x2 = rev.add %x1, %a : f64
  anc.free %x2, %z : f64
  rev.return %y1, %a : f64, f64
}

rev.func @r(%a: f64) {
  %a1 = rev.call @r(%a) : (f64) -> f64
  rev.return %a1 : f64
}

rev.func @r.inv(%a: f64) {
  %a1 = rev.uncall @r(%a) : (f64) -> f64
  rev.return %a1 : f64
}
