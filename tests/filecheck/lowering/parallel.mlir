// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s
// RUN: rev-opt %s -p rev-lower-to-std | rev-opt | filecheck %s
// RUN: rev-opt %s -p rev-lower-to-std,convert-std-to-llvm | filecheck %s --check-prefix=LLVM

// A parallel rev.for lowers to scf.parallel without reductions (`reverse`
// is dropped: the order does not matter). A private element (first index the
// loop's index) is loaded and stored as in any loop; a shared accumulation
// (take, rev.add/rev.sub, put at another index) adds the sum of its signed
// updates with one memref.atomic_rmw, after the take's bounds check. Both ops
// print in upstream MLIR's form and parse back. On the CPU, scf.parallel is a
// sequential loop and the atomic add a load, add and store.

// CHECK-LABEL: func.func @gather(%x: memref<?xf64>, %y: memref<?xf64>, %g: memref<4xf64>, %idx: memref<?xindex>, %n: index, %err: memref<6xi64>) -> index {
// CHECK:         scf.parallel (%i) = (%c0) to (%n) step (%c1) {
// CHECK:           %xi = memref.load %x[%i] : memref<?xf64>
// CHECK:           %v = memref.load %y[%i] : memref<?xf64>
// CHECK:           %v2 = arith.addf %v, %p : f64
// CHECK-NEXT:      memref.store %v2, %y[%i] : memref<?xf64>
// CHECK:           %j = memref.load %idx[%i] : memref<?xindex>
// CHECK:           %[[SIZE:.*]] = memref.dim %g, %{{.*}} : memref<4xf64>
// CHECK-NEXT:      %{{.*}} = arith.cmpi ult, %j, %[[SIZE]] : index
// CHECK:           func.call @revmlir.report(%err,
// CHECK:           %[[DELTA:.*]] = arith.subf %xi, %l : f64
// CHECK-NEXT:      %{{.*}} = memref.atomic_rmw addf %[[DELTA]], %g[%j] : (f64, memref<4xf64>) -> f64
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %n : index

// LLVM-LABEL: llvm.func internal @gather(
// LLVM-NOT:     scf.parallel
// LLVM:         llvm.icmp "slt" %c0, %n : i64
// LLVM:         llvm.cond_br %{{.*}}, ^{{.*}}(%c0 : i64), ^{{.*}}
// LLVM-NEXT:  ^{{.*}}(%i: i64):
// LLVM:         %[[DELTA:.*]] = llvm.fsub %xi, %l : f64
// LLVM:         %[[OLD:.*]] = llvm.load %[[AT:.*]] : !llvm.ptr -> f64
// LLVM-NEXT:    %[[NEW:.*]] = llvm.fadd %[[OLD]], %[[DELTA]] : f64
// LLVM-NEXT:    llvm.store %[[NEW]], %[[AT]] : f64, !llvm.ptr
// LLVM-NOT:     memref.atomic_rmw
rev.func @gather(%x: memref<?xf64>, %y: memref<?xf64>, %g: memref<4xf64>, %idx: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel reverse %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %xi = memref.load %x[%i] : memref<?xf64>
    %v = rev.take %y[%i] : memref<?xf64>
    %l = math.log %xi : f64
    %s = math.sin %xi : f64
    %p = arith.mulf %l, %s : f64
    %v2 = rev.add %v, %p : f64
    rev.put %v2, %y[%i] : memref<?xf64>
    %j = memref.load %idx[%i] : memref<?xindex>
    %w = rev.take %g[%j] : memref<4xf64>
    %w2 = rev.add %w, %xi : f64
    %w3 = rev.sub %w2, %l : f64
    rev.put %w3, %g[%j] : memref<4xf64>
    rev.yield
  }
  rev.return %n : index
}

// Integer accumulations use addi; a lone subtraction adds the negation.
// CHECK-LABEL: func.func @histogram(
// CHECK:         %b = memref.load %bins[%i] : memref<?xindex>
// CHECK:         %[[NEG:.*]] = arith.subi %{{.*}}, %one : i64
// CHECK-NEXT:    %{{.*}} = memref.atomic_rmw addi %[[NEG]], %h[%b] : (i64, memref<8xi64>) -> i64
rev.func @histogram(%h: memref<8xi64>, %bins: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %b = memref.load %bins[%i] : memref<?xindex>
    %one = arith.constant 1 : i64
    %e = rev.take %h[%b] : memref<8xi64>
    %e1 = rev.sub %e, %one : i64
    rev.put %e1, %h[%b] : memref<8xi64>
    rev.yield
  }
  rev.return %n : index
}
