// RUN: rev-opt %s -p rev-lower-to-std,rev-version-loops | filecheck %s

// rev-version-loops: a loop whose index checks are affine in its variable
// becomes a choice between a copy without those checks (both ends of the
// index range in bounds) and the checked loop as it was.

// CHECK-LABEL: func.func @axpy(
// The last index, n - 1, against the arrays' sizes, once before the loop:
// CHECK:         arith.cmpi sle, %n,
// CHECK:         scf.if %{{.*}} {
// CHECK-NEXT:      scf.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:        %v = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:        %e = memref.load %y[%i] : memref<?xf64>
// CHECK-NOT:         scf.if
// CHECK:             memref.store %e2, %y[%i] : memref<?xf64>
// CHECK:           } else {
// CHECK-NEXT:      scf.for %i_1 = %c0 to %n step %c1 {
// CHECK:             scf.if
// CHECK:             %v_1 = memref.load %x[%i_1] : memref<?xf64>
// CHECK:             scf.if
// CHECK:             %e_1 = memref.load %y[%i_1] : memref<?xf64>
rev.func @axpy(%y: memref<?xf64>, %x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<?xf64>
    %e = rev.take %y[%i] : memref<?xf64>
    %e2 = rev.add %e, %v : f64
    rev.put %e2, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}

// An index checked twice into the same axis (x[i] read twice) is compared
// once before the loop, at each end.
// CHECK-LABEL: func.func @square(
// CHECK:         %[[X:.*]] = memref.dim %x,
// CHECK-NEXT:    arith.constant 4611686018427387904
// CHECK-NEXT:    arith.cmpi ule, %[[X]],
// CHECK-NEXT:    arith.cmpi ult, %c0, %[[X]] : index
// CHECK-NEXT:    arith.cmpi ult, %{{.*}}, %[[X]] : index
// CHECK-NOT:     memref.dim %x
// CHECK:         scf.if
rev.func @square(%y: memref<?xf64>, %x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<?xf64>
    %w = memref.load %x[%i] : memref<?xf64>
    %s = arith.mulf %v, %w : f64
    %e = rev.take %y[%i] : memref<?xf64>
    %e2 = rev.add %e, %s : f64
    rev.put %e2, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}
