// RUN: rev-opt %s -p rev-lower-to-std,rev-gpu-outline | filecheck %s --check-prefix=STD
// RUN: rev-translate %s --emit=ptx | filecheck %s

// A stack's buffer on the GPU is a piece of the thread's per-thread arena:
// the kernel takes an arena; a push that finds the buffer full reserves
// what it needs in place while the buffer ends at top, else moves it to
// top with twice that, copying its words (the first push moves an empty
// buffer); the new top is checked against the arena's end; a free sets top
// back if the buffer ends there. No realloc, no free.

// STD:       rev.checks = [{{.*}}"ExecutionError|anc.push|{{.*}}stack.mlir:{{[0-9]+}}:5|tape|i64,i64|needs {0} bytes of per-thread arena, has {1} (a stack; launch with a larger arena=)"
// STD:       func.func @tape(%y: memref<?xf64>, %n: index, %err: memref<8xi64>, %arena: i64, %arena_bytes: i64, %blocks: index, %threads: index)
// The device has native code's pop, and no push or free.
// STD:       "gpu.module"() <{sym_name = "module_kernels"}>
// STD-NOT:   revmlir.stack.push
// STD-NOT:   revmlir.stack.free
// STD:         func.func private @revmlir.stack.pop.f64(%header: memref<3xi64>) -> f64
// STD-NOT:   revmlir.stack.push
// STD-NOT:   revmlir.stack.free
// STD:       "gpu.func"() <{function_type = (memref<?xf64>, index, memref<8xi64>, i64, i64) -> (), kernel}>
// STD:         scf.for %i =
// The push: 8 bytes more than the size's, the buffer full if that is more
// than it has reserved.
// STD:           %[[NEEDED:.*]] = arith.muli %{{.*}}, %{{.*}} : i64
// STD-NEXT:      %[[FULL:.*]] = arith.cmpi ugt, %[[NEEDED]], %[[RESERVED:.*]] : i64
// STD-NEXT:      scf.if %[[FULL]] {
// A buffer that does not end at top moves there, reserving twice.
// STD:             %[[TOP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// STD:             %[[DATA:.*]] = memref.load %[[HEADER:.*]][%{{.*}}] : memref<3xi64>
// STD-NEXT:        %[[ENDS:.*]] = arith.addi %[[DATA]], %[[RESERVED]] : i64
// STD-NEXT:        %[[MOVED:.*]] = arith.cmpi ne, %[[ENDS]], %[[TOP]] : i64
// STD-NEXT:        %[[START:.*]] = arith.select %[[MOVED]], %[[TOP]], %[[DATA]] : i64
// STD-NEXT:        %[[TWICE:.*]] = arith.addi %[[NEEDED]], %[[NEEDED]] : i64
// STD-NEXT:        %{{.*}} = arith.select %[[MOVED]], %[[TWICE]], %[[NEEDED]] : i64
// The new end, rounded up to 16 bytes, checked against the arena's end, is
// the new top.
// STD:             %[[BYTES:.*]] = arith.andi %{{.*}}, %{{.*}} : i64
// STD-NEXT:        %[[NEW_END:.*]] = arith.addi %[[START]], %[[BYTES]] : i64
// STD:             %{{.*}} = arith.cmpi ule, %[[NEW_END]], %{{.*}} : i64
// STD:               func.call @revmlir.report(%thread_err, {{.*}}) : (memref<6xi64>, i64, i64, i64, i64, i64) -> ()
// STD:             llvm.store %[[NEW_END]], %{{.*}} : i64, !llvm.ptr
// A moved buffer's words are copied.
// STD-NEXT:        scf.if %[[MOVED]] {
// STD:               %{{.*}} = arith.divui %[[RESERVED]], %{{.*}} : i64
// STD:               scf.for
// STD:                 %[[LOADED:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// STD-NEXT:            llvm.store %[[LOADED]], %{{.*}} : i64, !llvm.ptr
// STD:             memref.store %[[START]], %[[HEADER]][%{{.*}}] : memref<3xi64>
// STD-NEXT:        %{{.*}} = arith.constant 2 : index
// STD-NEXT:        memref.store %[[BYTES]], %[[HEADER]][%{{.*}}] : memref<3xi64>
// The value at the top, the size one more; the pop is native code's.
// STD:           llvm.store %{{.*}}, %{{.*}} : f64, !llvm.ptr
// STD:           func.call @revmlir.stack.pop.f64(%[[HEADER]])
// The free gives the buffer back if it ends at top, and zeroes the header.
// STD:           %[[BUFFER_END:.*]] = arith.addi %[[FREED:.*]], %{{.*}} : i64
// STD:           %[[FREE_TOP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// STD-NEXT:      %[[NEWEST:.*]] = arith.cmpi eq, %[[BUFFER_END]], %[[FREE_TOP]] : i64
// STD-NEXT:      %{{.*}} = arith.select %[[NEWEST]], %[[FREED]], %[[FREE_TOP]] : i64

// CHECK-LABEL: .visible .entry tape(
// CHECK-NOT:     realloc
// CHECK-NOT:     free
rev.func @tape(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %s = anc.stack_alloc : !anc.stack<f64>
    %two = arith.constant 2.0 : f64
    %x = anc.alloc %two : f64
    anc.push %s, %x : !anc.stack<f64>
    %x1 = anc.pop %s : !anc.stack<f64>
    anc.free %x1, %two : f64
    anc.stack_free %s : !anc.stack<f64>
    rev.yield
  }
  rev.return %n : index
}
