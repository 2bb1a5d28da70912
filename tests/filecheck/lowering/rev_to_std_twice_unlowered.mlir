// RUN: rev-opt %s -p rev-lower-to-std --verify-diagnostics

// A rev.func in a module the pass has lowered already (it carries
// rev.lowered) is refused at the function: a second run lowers nothing.
builtin.module attributes {rev.checks = [], rev.lowered} {
  func.func @lowered(%x: f64, %err: memref<6xi64>) -> f64 {
    func.return %x : f64
  }
  // expected-error-re @+1 {{'rev.func' at {{.*}}: the module has been lowered by rev-lower-to-std already (it carries rev.lowered), but not @added: lower every rev.func in one run}}
  rev.func @added(%x: f64) {
    %x1 = rev.neg %x : f64
    rev.return %x1 : f64
  }
}
