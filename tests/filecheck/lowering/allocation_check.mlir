// RUN: rev-opt %s -p rev-lower-to-std,rev-host-safety | filecheck %s
// RUN: rev-opt %s -p rev-lower-to-std,rev-host-safety,convert-std-to-llvm | filecheck %s --check-prefix=LLVM

// Native code's heap allocations stop the run where malloc gives no memory:
// rev-host-safety registers a check for each memref.alloc, named for the op
// it allocates for (an ancilla array's anc.array_alloc, or the memref.alloc
// of ordinary code, which first gets the size checks rev-lower-to-std gives
// an ancilla array: a negative or huge size wraps malloc's byte count), and
// convert-std-to-llvm tests the pointer after the
// call, reporting the bytes asked for. An empty array asks one byte: C lets
// malloc(0) return null, which is no failure. An ancilla array on the heap
// is calloc's, zeroed (rev.zeroed): the same byte and the same check.

// CHECK: rev.checks = [{{.*}}"ExecutionError|anc.array_alloc|{{.*}}allocation_check.mlir:20:5|heap|i64|cannot allocate {0} bytes: out of memory", "ExecutionError|memref.alloc|{{.*}}allocation_check.mlir:28:3|scratch|i64|array size {0} is negative", "ExecutionError|memref.alloc|{{.*}}allocation_check.mlir:28:3|scratch|f64|array of {0} elements of 4 bytes is too large", "ExecutionError|memref.alloc|{{.*}}allocation_check.mlir:28:3|scratch|i64|cannot allocate {0} bytes: out of memory"]
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

func.func @scratch(%n: index) -> index {
  %m = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %m : memref<?xf32>
  func.return %n : index
}

// CHECK-LABEL: func.func @heap(
// CHECK:         %a = memref.alloc(%n) {rev.source_op = "anc.array_alloc", rev.zeroed, rev.allocation_check = 3 : i64} : memref<?x3xi64>
// CHECK-LABEL: func.func @scratch(
// CHECK:         %{{.*}} = arith.cmpi sge, %n, %{{.*}} : index
// CHECK:         scf.if
// CHECK-NEXT:      %{{.*}} = arith.constant 4 : i64
// CHECK:         }
// CHECK-NEXT:    %[[COUNT:.*]] = arith.index_cast %n : index to i64
// CHECK-NEXT:    %[[ELEMENTS:.*]] = arith.sitofp %[[COUNT]] : i64 to f64
// CHECK-NEXT:    %[[PRODUCT:.*]] = arith.mulf %{{.*}}, %[[ELEMENTS]] : f64
// CHECK-NEXT:    %[[LIMIT:.*]] = arith.constant 0x4250000000000000 : f64
// CHECK-NEXT:    %{{.*}} = arith.cmpf ole, %[[PRODUCT]], %[[LIMIT]] : f64
// CHECK:         scf.if
// CHECK-NEXT:      %{{.*}} = arith.constant 5 : i64
// CHECK:         %m = memref.alloc(%n) {rev.allocation_check = 6 : i64} : memref<?xf32>

// LLVM-LABEL: llvm.func internal @heap(
// LLVM:         %[[ASKED:.*]] = llvm.select %{{.*}}, %{{.*}}, %[[BYTES:.*]] : i1, i64
// LLVM-NEXT:    %[[POINTER:.*]] = llvm.call @calloc(%[[ASKED]], %{{.*}}) : (i64, i64) -> !llvm.ptr
// LLVM-NEXT:    %[[ADDRESS:.*]] = llvm.ptrtoint %[[POINTER]] : !llvm.ptr to i64
// LLVM-NEXT:    %[[NULL:.*]] = llvm.icmp "eq" %[[ADDRESS]], %{{.*}} : i64
// LLVM-NEXT:    llvm.cond_br %[[NULL]], ^[[REPORT:.*]], ^[[AFTER:.*]]
// LLVM-NEXT:  ^[[REPORT]]:
// LLVM-NEXT:    %[[ID:.*]] = llvm.mlir.constant(3) : i64
// LLVM-NEXT:    llvm.call @revmlir.report(%err_data, %err_size0, %[[ID]], %[[BYTES]], %{{.*}}, %{{.*}}, %{{.*}})
// LLVM-NEXT:    llvm.br ^[[AFTER]]
// LLVM-LABEL: llvm.func internal @scratch(
// LLVM:         llvm.call @malloc
// LLVM:         llvm.cond_br
// LLVM:         llvm.mlir.constant(6) : i64
// LLVM-NEXT:    llvm.call @revmlir.report(
