// RUN: not rev-run %s -e r --args 1.0 2>&1 | filecheck %s
// RUN: not rev-run %s -e r --args 1.0 --backend interpreter 2>&1 | filecheck %s

// A recursion through an uncall alternates @r and @~r: both engines stop
// it at the same call, the one past MAX_CALL_DEPTH calls that may recurse,
// so in the same function (they stopped in @r natively, where the stack
// ran out, and in @~r on the interpreter).
// CHECK: recursion_depth_uncall.mlir:11:3: error: 'rev.uncall' in @r: calls nest too deeply: the recursion would exhaust the stack

rev.func @r(%a: f64) {
  %a1 = rev.uncall @r(%a) : (f64) -> f64
  rev.return %a1 : f64
}
