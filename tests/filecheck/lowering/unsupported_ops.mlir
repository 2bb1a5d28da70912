// RUN: rev-opt %s -p convert-std-to-llvm --verify-diagnostics --split-input-file | filecheck %s

// An op with no translation is reported where it is, by name.
// CHECK: 'cf.switch' at {{.*}}unsupported_ops.mlir:[[# @LINE + 3]]:3 cannot be compiled to native code
func.func @f(%x: i32) {
  %c = arith.constant 0 : i32
  cf.switch %x : i32, [default: ^bb1]
^bb1:
  func.return
}

// -----

// CHECK: 'ub.poison' at {{.*}}unsupported_ops.mlir:[[# @LINE + 2]]:3: a poison memref<?xf64> cannot be compiled to native code
func.func @g() -> memref<?xf64> {
  %m = ub.poison : memref<?xf64>
  func.return %m : memref<?xf64>
}

// -----

// Native code addresses a memref as contiguous row-major data.
// CHECK: 'memref.load' at {{.*}}unsupported_ops.mlir:[[# @LINE + 3]]:3: memref<?xf64, strided<[2]>> is not row-major contiguous, which native code requires of every memref
func.func @h(%m: memref<?xf64, strided<[2]>>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<?xf64, strided<[2]>>
  func.return %v : f64
}
