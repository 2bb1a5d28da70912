// RUN: rev-opt %s -p convert-std-to-llvm --verify-diagnostics

// A reversible function reaching convert-std-to-llvm is refused with the
// pass that lowers it to std.
// expected-error-re @+1 {{'rev.func' at {{.*}} cannot be compiled to native code; run rev-lower-to-std first}}
rev.func @f(%y: f64, %x: f64) {
  %y1 = rev.add %y, %x : f64
  rev.return %y1, %x : f64, f64
}
