// RUN: rev-opt %s -p convert-std-to-llvm | filecheck %s

// An alloca whose sizes are constants (the Python frontend gives
// rv.zeros((1, 3)) a dynamic type) is allocated once, in the entry block,
// like a static one, so that a loop does not grow the frame and LLVM can
// keep its elements in registers; one past FRAME_ARRAY_BYTES (4 KiB) stays
// where it is, sized at run time: rev-lower-to-std allocates it only in the
// frame branch of its choice between frame and heap, which never runs for
// so large an array.

// CHECK-LABEL: llvm.func internal @small_in_a_loop(
// CHECK-NEXT:    %[[N:.*]] = llvm.mlir.constant(3) : i64
// CHECK-NEXT:    %{{.*}} = llvm.alloca %[[N]] x f64 {alignment = 32 : i64} : (i64) -> !llvm.ptr
// CHECK-NOT:     llvm.alloca
// CHECK:         llvm.return
func.func @small_in_a_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %three = arith.constant 3 : i64
  scf.for %i = %c0 to %n step %c1 {
    %rows = arith.index_cast %one : i64 to index
    %cols = arith.index_cast %three : i64 to index
    %a = memref.alloca(%rows, %cols) : memref<?x?xf64>
    %z = arith.constant 0.0 : f64
    memref.store %z, %a[%c0, %c1] : memref<?x?xf64>
  }
  func.return
}

// CHECK-LABEL: llvm.func internal @large(
// CHECK-NOT:     llvm.alloca
// CHECK:         llvm.cond_br
// CHECK:         %[[COUNT:.*]] = llvm.mul %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %{{.*}} = llvm.alloca %[[COUNT]] x f64 {alignment = 32 : i64} : (i64) -> !llvm.ptr
func.func @large(%small: i1) {
  %c513 = arith.constant 513 : index
  scf.if %small {
    %a = memref.alloca(%c513) : memref<?xf64>
    %c0 = arith.constant 0 : index
    %z = arith.constant 0.0 : f64
    memref.store %z, %a[%c0] : memref<?xf64>
  }
  func.return
}
