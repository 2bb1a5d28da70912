// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s

// A record with a stack operand holds the stack's live part: the snapshot
// copies it into the store, and the restore copies it back onto the
// emptied stack, each in one memory copy (revmlir.stack.copy, a memmove)
// rather than a loop of element reads and writes; the restore neither
// fills the stack with zeros first nor checks twice that the store holds
// a record.
rev.func @frames(%pc: f64, %f: !anc.stack<f64>, %g: !anc.stack<f64>) {
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.snapshot %s, %pc, %f : !anc.stack<f64>, f64, !anc.stack<f64>
  anc.copy_push %f, %pc : !anc.stack<f64>
  %q = anc.restore %s, %pc, %g : !anc.stack<f64>, f64, !anc.stack<f64> -> (f64)
  %r = anc.alloc %q : f64
  anc.drop %s, %r, %g : !anc.stack<f64>, f64, !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  rev.return %r : f64
}

// One check of the store's records for each of the restore and the drop.
// CHECK:          "InvertibilityError|anc.restore|{{.*}}|no snapshot to restore",
// CHECK-SAME:     "ExecutionError|anc.restore|{{.*}}|cannot grow a stack of {0} elements: out of memory",
// CHECK-SAME:     "InvertibilityError|anc.drop|{{.*}}|no snapshot to drop",
// CHECK:      func.func @frames(
// CHECK-NOT:    scf.for
// CHECK:        func.call @revmlir.stack.fill.f64(%s,
// CHECK-NOT:    scf.for
// CHECK:        func.call @revmlir.stack.put.f64(%s, %{{.*}}, %pc)
// The copy's width is the buffer's stride, computed as the runtime
// computes it (the size LLVM lays an f64 slot out with, times one slot).
// CHECK:        %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:   %[[NEXT:.*]] = llvm.getelementptr %[[NULL]][1] : (!llvm.ptr) -> !llvm.ptr, f64
// CHECK-NEXT:   %[[BYTES:.*]] = llvm.ptrtoint %[[NEXT]] : !llvm.ptr to i64
// CHECK-NEXT:   %[[SLOTS:.*]] = arith.constant 1 : i64
// CHECK-NEXT:   %[[WIDTH:.*]] = arith.muli %[[BYTES]], %[[SLOTS]] : i64
// CHECK-NEXT:   func.call @revmlir.stack.copy(%s, %{{.*}}, %f, %{{.*}}, %{{.*}}, %[[WIDTH]])
// CHECK-NOT:    scf.for
// CHECK-NOT:    @revmlir.stack.fill.f64(%g
// CHECK:        func.call @revmlir.stack.copy(%g, %{{.*}}, %s, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT:    scf.for
// CHECK:      func.func private @revmlir.stack.copy(%target: memref<3xi64>, %at: i64, %source: memref<3xi64>, %first: i64, %count: i64, %width: i64) {
// CHECK-NOT:    scf.for
// CHECK:          llvm.call_intrinsic "llvm.memmove.p0.p0.i64"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i1) -> ()
// CHECK:      func.func private @revmlir.stack.fill.f64(
