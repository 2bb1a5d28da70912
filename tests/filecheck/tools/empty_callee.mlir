// RUN: not rev-opt %s 2>&1 | filecheck %s
// RUN: not rev-run %s -e g --args 1.0 2>&1 | filecheck %s
// RUN: not rev-run %s -e g --args 1.0 --backend interpreter 2>&1 | filecheck %s
// RUN: not rev-translate %s --emit=llvm 2>&1 | filecheck %s

// A callee without a body is refused by its own verifier, at the callee,
// although its callers are verified first: their analyses of the module's
// functions leave out a function with no block (as a declaration), rather
// than reading a block it does not have.
// CHECK: empty_callee.mlir:[[# @LINE + 10]]:1: error: 'rev.func': Region 'body' at position 0 expected a single block, but got 0 blocks

rev.func @g(%y: f64) {
  %y1 = rev.call @h(%y) : (f64) -> f64
  rev.return %y1 : f64
}
rev.func @h(%y: f64) {
  %y1 = rev.uncall @k(%y) : (f64) -> f64
  rev.return %y1 : f64
}
"rev.func"() <{sym_name = "k", function_type = (f64) -> f64}> ({
}) : () -> ()
