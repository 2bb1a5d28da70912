// RUN: rev-opt %s | rev-opt | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s
// RUN: rev-opt %s -p rev-invert | filecheck %s --check-prefix=INV
// RUN: rev-opt %s -p 'rev-invert,rev-invert' | filecheck %s --check-prefix=TWICE

// A parallel loop: `parallel` is a unit property of rev.for, printed before
// `reverse`; it survives the custom and the generic form. Its inverse is
// parallel too (and `reverse` is toggled as for any rev.for).

// CHECK-LABEL: rev.func @axpy(%y: memref<?xf64>, %x: memref<?xf64>, %a: f64, %n: index) {
// CHECK:       rev.for parallel %c0 to %n step %c1 : index () {
// CHECK-NEXT:  ^bb0(%i: index):
// CHECK-NEXT:    %xi = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:    %t = arith.mulf %a, %xi : f64
// CHECK-NEXT:    %yi = rev.take %y[%i] : memref<?xf64>
// CHECK-NEXT:    %yi1 = rev.add %yi, %t : f64
// CHECK-NEXT:    rev.put %yi1, %y[%i] : memref<?xf64>
// CHECK-NEXT:    rev.yield
// CHECK-NEXT:  }
// CHECK:       rev.for parallel reverse %c0 to %n step %c1 : index () {
// INV-LABEL:   rev.func @axpy.inv(
// INV:         rev.for parallel %{{.*}} to %n step %{{.*}} : index () {
// INV:           rev.sub %{{.*}}, %xi
// INV:         rev.for parallel reverse %{{.*}} to %n step %{{.*}} : index () {
// INV:           rev.sub %{{.*}}, %t
// TWICE-LABEL: rev.func @axpy(
// TWICE:       rev.for parallel %{{.*}} to %n step %{{.*}} : index () {
// TWICE:         rev.add
// TWICE:       rev.for parallel reverse
rev.func @axpy(%y: memref<?xf64>, %x: memref<?xf64>, %a: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xf64>
    %t = arith.mulf %a, %xi : f64
    %yi = rev.take %y[%i] : memref<?xf64>
    %yi1 = rev.add %yi, %t : f64
    rev.put %yi1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.for parallel reverse %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xf64>
    %yi = rev.take %y[%i] : memref<?xf64>
    %yi1 = rev.add %yi, %xi : f64
    rev.put %yi1, %y[%i] : memref<?xf64>
    rev.yield
  }
  rev.return %a, %n : f64, index
}
