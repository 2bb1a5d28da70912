// RUN: rev-opt %s -p rev-lower-to-std,rev-host-safety | filecheck %s
// RUN: rev-opt %s -p rev-lower-to-std,rev-host-safety,convert-std-to-llvm | filecheck %s --check-prefix=LLVM

// Native code's heap allocations stop the run where malloc gives no memory:
// rev-host-safety registers a check for each memref.alloc, named for the op
// it allocates for (an ancilla array's anc.array_alloc, or the memref.alloc
// of ordinary code), and convert-std-to-llvm tests the pointer after the
// call, reporting the bytes asked for.

// CHECK: rev.checks = [{{.*}}"ExecutionError|anc.array_alloc|{{.*}}allocation_check.mlir:16:5|heap|i64|cannot allocate {0} bytes: out of memory", "ExecutionError|memref.alloc|{{.*}}allocation_check.mlir:24:3|scratch|i64|cannot allocate {0} bytes: out of memory"]
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
// CHECK:         %a = memref.alloc(%n) {rev.source_op = "anc.array_alloc", rev.allocation_check = 3 : i64} : memref<?x3xi64>
// CHECK-LABEL: func.func @scratch(
// CHECK:         %m = memref.alloc(%n) {rev.allocation_check = 4 : i64} : memref<?xf32>

// LLVM-LABEL: llvm.func internal @heap(
// LLVM:         %[[POINTER:.*]] = llvm.call @malloc(%[[BYTES:.*]]) : (i64) -> !llvm.ptr
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
// LLVM:         llvm.mlir.constant(4) : i64
// LLVM-NEXT:    llvm.call @revmlir.report(
