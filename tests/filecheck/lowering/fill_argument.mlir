// RUN: rev-opt %s -p rev-host-safety | filecheck %s

// std code as rev-lower-to-std leaves it (an error slot, no bounds check on
// the store), so that the two loops differ only in their array: a fill of
// an array the function allocates (its size checked there) polls only
// after it, one of an argument array, whose size nothing checked, polls as
// any loop does.  They store ones: a fill of zeros into a heap array is
// calloc's instead (zeroed_arrays.mlir).
// CHECK-LABEL: func.func @fill_argument(
// CHECK:         scf.for
// CHECK:           arith.addi
// CHECK:           scf.if
// CHECK-NEXT:        func.call @revmlir.poll(
// CHECK:           memref.store %one
func.func @fill_argument(%a: memref<?xf64>, %err: memref<6xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %n = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %one, %a[%i] : memref<?xf64>
  }
  func.return
}

// CHECK-LABEL: func.func @fill_allocated(
// CHECK:         scf.for
// CHECK-NEXT:      memref.store %one
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      func.call @revmlir.poll(
func.func @fill_allocated(%n: index, %err: memref<6xi64>) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %a = memref.alloc(%n) : memref<?xf64>
  %m = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %m step %c1 {
    memref.store %one, %a[%i] : memref<?xf64>
  }
  func.return %a : memref<?xf64>
}
