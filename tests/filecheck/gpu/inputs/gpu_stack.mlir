// Not a test: input of ../ptx_errors.mlir (a function with a stack).
rev.func @stacked(%y: f64, %s: !anc.stack<f64>) {
  anc.push %s, %y : !anc.stack<f64>
  %y1 = anc.pop %s : !anc.stack<f64>
  rev.return %y1 : f64
}
