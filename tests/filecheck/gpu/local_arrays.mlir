// RUN: rev-opt %s -p rev-lower-to-std,rev-gpu-local-arrays,rev-gpu-outline | filecheck %s --check-prefix=STD
// RUN: rev-translate %s --emit=ptx | filecheck %s

// An ancilla array a loop allocates goes to the heap in native code and so,
// on the device, to the per-thread arena (global memory). One whose sizes
// are constants (the Python frontend writes rv.zeros((1, 11))'s sizes as
// i64 constants cast to index) and whose bytes are at most 4 KiB is the
// thread's own instead: a memref.alloca, allocated once in the kernel's
// entry block, which LLVM keeps in registers. A larger one stays in the
// arena.

// STD-LABEL: "gpu.func"() <{function_type = (memref<?xf64>, index, memref<8xi64>) -> (), kernel}>
// STD:         scf.for %i =
// STD:           %a = memref.alloca(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// STD-NOT:       memref.dealloc
// STD-NOT:       llvm.load
// STD:           gpu.return
// STD-LABEL: "gpu.func"() <{function_type = (memref<?xf64>, index, memref<8xi64>, i64, i64) -> (), kernel}>
// STD:         scf.for %i =
// STD:           %[[TOP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// STD:           builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(!llvm.ptr, i64)> to memref<?xf64>

// The small kernel takes no arena (arrays, n, error slot) and keeps nothing
// in local memory: the array's zeroing and its check at the free fold away
// in registers.
// CHECK-LABEL: .visible .entry small(
// CHECK-NEXT:    .param .u64 .ptr .align 1 small_param_0,
// CHECK-NEXT:    .param .u64 small_param_1,
// CHECK-NEXT:    .param .u64 small_param_2,
// CHECK-NEXT:    .param .u64 .ptr .align 1 small_param_3,
// CHECK-NEXT:    .param .u64 small_param_4
// CHECK-NEXT:  )
// CHECK-NOT:     .local
// CHECK-NOT:     malloc
// CHECK-LABEL: .visible .entry wide(
// CHECK-NEXT:    .param .u64 .ptr .align 1 wide_param_0,
// CHECK-NEXT:    .param .u64 wide_param_1,
// CHECK-NEXT:    .param .u64 wide_param_2,
// CHECK-NEXT:    .param .u64 .ptr .align 1 wide_param_3,
// CHECK-NEXT:    .param .u64 wide_param_4,
// CHECK-NEXT:    .param .u64 wide_param_5,
// CHECK-NEXT:    .param .u64 wide_param_6
// CHECK-NEXT:  )

rev.func @small(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %eleven = arith.constant 11 : i64
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %rows = arith.index_cast %one : i64 to index
    %cols = arith.index_cast %eleven : i64 to index
    %a = anc.array_alloc(%rows, %cols) : memref<?x?xf64>
    anc.array_free %a(%rows, %cols) : memref<?x?xf64>
    rev.yield
  }
  rev.return %n : index
}

// 513 f64 are 4104 bytes: past the limit, so in the arena.
rev.func @wide(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c513 = arith.constant 513 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %a = anc.array_alloc(%c513) : memref<?xf64>
    anc.array_free %a(%c513) : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}
