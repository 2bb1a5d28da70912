// RUN: not rev-run %s -e r --args 1.0 2>&1 | filecheck %s
// RUN: not rev-run %s -e r --args 1.0 --backend interpreter 2>&1 | filecheck %s

// A recursion too deep stops with the same message on both engines, which
// names the op the user wrote: native code checks the stack before the
// func.call the rev.call is lowered to, and reports the rev.call.
// CHECK: recursion_depth.mlir:10:3: error: 'rev.call' in @r: calls nest too deeply: the recursion would exhaust the stack

rev.func @r(%a: f64) {
  %a1 = rev.call @r(%a) : (f64) -> f64
  rev.return %a1 : f64
}
