// RUN: rev-opt %s -p convert-std-to-llvm,convert-std-to-llvm --verify-diagnostics

// The second run finds llvm functions with bodies and refuses the first of
// them; every op is checked before any is removed, so the declaration it
// calls is still there and the refusal is what is reported.
llvm.func @ext(f64) -> f64
// expected-error-re @+1 {{'llvm.func' at {{.*}} cannot be compiled to native code}}
func.func @f(%x: f64) -> f64 {
  %y = llvm.call @ext(%x) : (f64) -> f64
  func.return %y : f64
}
