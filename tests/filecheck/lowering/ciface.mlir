// RUN: rev-opt %s -p convert-std-to-llvm | filecheck %s
// RUN: rev-opt %s -p convert-std-to-llvm -t llvm | filecheck %s --check-prefix=IR

// Every public function gets upstream MLIR's C interface, _mlir_ciface_<name>:
// a memref argument is a pointer to upstream's descriptor {allocated,
// aligned, offset, sizes, strides}; the data is aligned + offset.
// CHECK-LABEL: llvm.func @_mlir_ciface_sum(%{{.*}}: !llvm.ptr, %{{.*}}: f64) -> f64
// CHECK-NEXT:    %[[D:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>
// CHECK-NEXT:    %[[ALIGNED:.*]] = llvm.extractvalue %[[D]][1]
// CHECK-NEXT:    %[[OFFSET:.*]] = llvm.extractvalue %[[D]][2]
// CHECK-NEXT:    %[[DATA:.*]] = llvm.getelementptr inbounds %[[ALIGNED]][%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT:    %[[ROWS:.*]] = llvm.extractvalue %[[D]][3, 0]
// CHECK-NEXT:    %[[COLS:.*]] = llvm.extractvalue %[[D]][3, 1]
// CHECK-NEXT:    %[[R:.*]] = llvm.call @sum(%[[DATA]], %[[ROWS]], %[[COLS]], %{{.*}}) : (!llvm.ptr, i64, i64, f64) -> f64
// CHECK-NEXT:    llvm.return %[[R]] : f64
// revmlir's own entry point, where the results are the scalar arguments':
// CHECK-LABEL: llvm.func @sum_ciface(%{{.*}}: !llvm.ptr)
func.func @sum(%m: memref<?x?xf64>, %x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %e = memref.load %m[%c0, %c0] : memref<?x?xf64>
  %s = arith.addf %e, %x : f64
  func.return %s : f64
}

// Several results (or a memref or complex result) are a struct stored
// through a pointer passed first; a memref result is given row-major
// strides and offset 0.  No revmlir entry point: the results are not the
// scalar arguments'.
// CHECK-LABEL: llvm.func internal @make() -> !llvm.struct<(!llvm.struct<(!llvm.ptr, i64)>, i64)>
// CHECK-LABEL: llvm.func @_mlir_ciface_make(
// CHECK-SAME:    %[[RESULT:.*]]: !llvm.ptr)
// CHECK:         llvm.call @make() : () -> !llvm.struct<(!llvm.struct<(!llvm.ptr, i64)>, i64)>
// CHECK:         llvm.insertvalue %{{.*}}[4, 0] : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>
// CHECK:         llvm.store %{{.*}}, %[[RESULT]] : !llvm.struct<(!llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>, i64)>, !llvm.ptr
// CHECK-NEXT:    llvm.return
// CHECK-NOT:   @make_ciface
// IR: define void @"_mlir_ciface_make"(ptr
func.func @make() -> (memref<?xf64>, i64) {
  %n = arith.constant 4 : index
  %m = memref.alloc(%n) : memref<?xf64>
  %k = arith.constant 4 : i64
  func.return %m, %k : memref<?xf64>, i64
}

// A private function has no entry point.
// CHECK-NOT:   @_mlir_ciface_helper
func.func private @helper() {
  func.return
}
