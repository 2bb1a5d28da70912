// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s
// RUN: rev-opt %s -p rev-lower-to-std,convert-std-to-llvm | filecheck %s --check-prefix=LLVM

// An ancilla array of run-time size is checked first (not negative, at most
// 2^40 bytes, counted in f64), then lives in the function's frame
// (memref.alloca, released when the function returns) when it turns out to
// take at most 4 KiB, else on the heap (memref.alloc, and a dealloc at its
// free; named the anc.array_alloc it is for, which a check added after the
// lowering, native code's allocation check, names); one a loop allocates
// always goes to the heap.  It is zeroed element
// by element; a checked free tests every element against zero and reports
// the first one that is not, with its indices.

// CHECK-LABEL: func.func @frame(%y: f64, %n: index, %err: memref<6xi64>) -> (f64, index) {
// CHECK:         %{{.*}} = arith.cmpi sge, %n, %{{.*}} : index
// CHECK:         func.call @revmlir.report(%err, {{.*}}) : (memref<6xi64>, i64, i64, i64, i64, i64) -> ()
// CHECK:         %[[ELEMENTS:.*]] = arith.mulf
// CHECK:         %{{.*}} = arith.cmpf ole, %[[ELEMENTS]], %{{.*}} : f64
// CHECK:         func.call @revmlir.report(%err, {{.*}}) : (memref<6xi64>, i64, i64, i64, i64, i64) -> ()
// CHECK:         %[[LIMIT:.*]] = arith.constant 5.120000e+02 : f64
// CHECK-NEXT:    %[[HEAP:.*]] = arith.cmpf ogt, %[[ELEMENTS]], %[[LIMIT]] : f64
// CHECK-NEXT:    %a = scf.if %[[HEAP]] -> (memref<?xf64>) {
// CHECK-NEXT:      %{{.*}} = memref.alloc(%n) {rev.source_op = "anc.array_alloc"} : memref<?xf64>
// CHECK:         } else {
// CHECK-NEXT:      %{{.*}} = memref.alloca(%n) {rev.source_op = "anc.array_alloc"} : memref<?xf64>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.store %[[ZERO]], %a[%[[I]]] : memref<?xf64>
// CHECK-NEXT:    }
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[E:.*]] = memref.load %a[%[[J]]] : memref<?xf64>
// CHECK-NEXT:      %[[SIZE:.*]] = math.absf %[[E]] : f64
// CHECK-NEXT:      %[[TOL:.*]] = arith.constant 1.000000e-08 : f64
// CHECK-NEXT:      %{{.*}} = arith.cmpf ole, %[[SIZE]], %[[TOL]] : f64
// CHECK:           scf.if
// CHECK:         scf.if %[[HEAP]] {
// CHECK-NEXT:      memref.dealloc %a : memref<?xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %n : f64, index
rev.func @frame(%y: f64, %n: index) {
  %a = anc.array_alloc(%n) : memref<?xf64>
  anc.array_free %a(%n) : memref<?xf64>
  rev.return %y, %n : f64, index
}

// CHECK-LABEL: func.func @heap(%y: f64, %n: index, %err: memref<6xi64>) -> (f64, index) {
// CHECK:         scf.for %i = %c0 to %n step %c1 {
// CHECK:           %a = memref.alloc(%n) {rev.source_op = "anc.array_alloc"} : memref<?x3xi64>
// CHECK:           memref.store
// Unchecked: released without looking at it.
// CHECK-NOT:       memref.load
// CHECK:           memref.dealloc %a : memref<?x3xi64>
// CHECK-NEXT:    }
rev.func @heap(%y: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %a = anc.array_alloc(%n) : memref<?x3xi64>
    anc.array_free %a(%n) {nocheck} : memref<?x3xi64>
    rev.yield
  }
  rev.return %y, %n : f64, index
}

// LLVM-DAG:  llvm.func @malloc(i64) -> !llvm.ptr
// LLVM-DAG:  llvm.func @free(!llvm.ptr)
// LLVM-LABEL: llvm.func internal @frame(
// LLVM:        llvm.call @malloc
// LLVM:        llvm.alloca %{{.*}} x f64
// LLVM:        llvm.call @free
// LLVM-LABEL: llvm.func internal @heap(
// LLVM:        llvm.call @malloc
// LLVM:        llvm.call @free
