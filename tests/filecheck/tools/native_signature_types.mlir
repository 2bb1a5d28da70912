// RUN: not rev-translate %s --emit=llvm 2>&1 | filecheck %s
// RUN: not rev-translate %s --emit=ptx 2>&1 | filecheck %s

// A func.func runs as it is written: its parameters and results are of the
// types LLVM has a form of. One that takes a type holding no number is
// refused at the function, as i128 is, before the verifier of xDSL's
// llvm.func (which has no location) sees it (tests/test_unsupported_types.py
// has the other types).

// CHECK-NOT: Traceback
// CHECK: error: 'func.func' at {{.*}}native_signature_types.mlir:[[# @LINE + 2]]:1: native code does not support type tensor<2xf64>; its func.func functions take and return numbers, complex numbers, vectors and arrays (a stack or rev's numbers only in a rev.func)
// CHECK-NOT: {{.}}
func.func @tensor(%t: tensor<2xf64>) -> f64 {
  %c = arith.constant 1.0 : f64
  func.return %c : f64
}
