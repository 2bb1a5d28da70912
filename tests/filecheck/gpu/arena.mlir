// RUN: rev-opt %s -p rev-lower-to-std,rev-gpu-outline | filecheck %s --check-prefix=STD
// RUN: rev-translate %s --emit=ptx | filecheck %s
// RUN: rev-translate %S/inputs/gpu_arena_only.mlir --emit=ptx | filecheck %s --check-prefix=ONLY

// An ancilla array of a run-time size in a kernel's loop comes from the
// thread's part of a per-thread arena: the kernel takes the arena's
// address and bytes per thread after the error slot, keeps its part's
// [top, base, end] in the thread's error context, bumps top by the array's
// bytes (rounded up to 16) after checking it fits, sets it back at the
// free, and at the start of every iteration. No device heap: no malloc, no
// free.

// The check names the op the program wrote, as the array's other checks do.
// STD:       rev.checks = [{{.*}}"ExecutionError|anc.array_alloc|{{.*}}arena.mlir:{{[0-9]+}}:5|scratch|i64,i64|needs {0} bytes of per-thread arena, has {1}
// STD:       func.func @scratch(%y: memref<?xf64>, %n: index, %err: memref<8xi64>, %arena: i64, %arena_bytes: i64, %blocks: index, %threads: index)
// STD:       "gpu.func"() <{function_type = (memref<?xf64>, index, memref<8xi64>, i64, i64) -> (), kernel}>
// STD-NEXT:  ^bb0(%y: memref<?xf64>, %n: index, %err: memref<8xi64>, %arena: i64, %arena_bytes: i64):
// STD:         %err_context = memref.alloca() : memref<5xi64>
// STD:         %[[OFFSET:.*]] = arith.muli %{{.*}}, %arena_bytes : i64
// STD-NEXT:    %arena_base = arith.addi %arena, %[[OFFSET]] : i64
// STD-NEXT:    %arena_end = arith.addi %arena_base, %arena_bytes : i64
// STD:         memref.store %arena_base, %err_context[%{{.*}}] : memref<5xi64>
// STD:         memref.store %arena_base, %err_context[%{{.*}}] : memref<5xi64>
// STD:         memref.store %arena_end, %err_context[%{{.*}}] : memref<5xi64>
// Every iteration starts with top where it was before the loop.
// STD:         %[[SAVED:.*]] = memref.load %err_context[%{{.*}}] : memref<5xi64>
// STD-NEXT:    scf.for %i =
// STD:           memref.store %[[SAVED]], %err_context[%{{.*}}] : memref<5xi64>
// The allocation: top from the context, the bytes rounded up, the new top
// checked against base and end, the bump, the array at the old top.
// STD:           %[[CONTEXT:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// STD-NEXT:      %[[TOPW:.*]] = llvm.getelementptr %[[CONTEXT]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// STD-NEXT:      %[[TOP:.*]] = llvm.load %[[TOPW]] : !llvm.ptr -> i64
// STD:           %[[ROUNDED:.*]] = arith.andi %{{.*}}, %{{.*}} : i64
// STD-NEXT:      %[[NEW:.*]] = arith.addi %[[TOP]], %[[ROUNDED]] : i64
// STD-NEXT:      %[[BASEW:.*]] = llvm.getelementptr %[[CONTEXT]][3] : (!llvm.ptr) -> !llvm.ptr, i64
// STD-NEXT:      %[[BASE:.*]] = llvm.load %[[BASEW]] : !llvm.ptr -> i64
// STD-NEXT:      %[[ENDW:.*]] = llvm.getelementptr %[[CONTEXT]][4] : (!llvm.ptr) -> !llvm.ptr, i64
// STD-NEXT:      %[[END:.*]] = llvm.load %[[ENDW]] : !llvm.ptr -> i64
// STD-NEXT:      %[[NEEDED:.*]] = arith.subi %[[NEW]], %[[BASE]] : i64
// STD-NEXT:      %[[HAS:.*]] = arith.subi %[[END]], %[[BASE]] : i64
// STD-NEXT:      %{{.*}} = arith.cmpi ule, %[[NEW]], %[[END]] : i64
// A failure reports as every check does: one call of revmlir.report with
// the check's id and the bytes needed and had.
// STD:           scf.if
// STD:             func.call @revmlir.report(%thread_err, %{{.*}}, %[[NEEDED]], %[[HAS]], %[[ZERO:.*]], %[[ZERO]]) : (memref<6xi64>, i64, i64, i64, i64, i64) -> ()
// STD:           %[[TOPW2:.*]] = llvm.getelementptr %[[CONTEXT]][2] : (!llvm.ptr) -> !llvm.ptr, i64
// STD-NEXT:      llvm.store %[[NEW]], %[[TOPW2]] : i64, !llvm.ptr
// STD-NEXT:      %{{.*}} = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, i64)>
// STD-NEXT:      %{{.*}} = llvm.inttoptr %[[TOP]] : i64 to !llvm.ptr
// STD:           %[[ARRAY:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(!llvm.ptr, i64)> to memref<?xf64>
// The free sets top back to the array's address if the array ends at top
// (it is the newest allocation).
// STD:           %[[AT:.*]] = "memref.extract_aligned_pointer_as_index"(%[[ARRAY]])
// STD-NEXT:      %[[ATW:.*]] = arith.index_cast %[[AT]] : index to i64
// STD:           %[[BYTES:.*]] = arith.andi %{{.*}}, %{{.*}} : i64
// STD-NEXT:      %[[ARRAY_END:.*]] = arith.addi %[[ATW]], %[[BYTES]] : i64
// STD:           %[[FREE_TOP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// STD-NEXT:      %[[NEWEST:.*]] = arith.cmpi eq, %[[ARRAY_END]], %[[FREE_TOP]] : i64
// STD-NEXT:      %[[BACK:.*]] = arith.select %[[NEWEST]], %[[ATW]], %[[FREE_TOP]] : i64
// STD-NEXT:      llvm.store %[[BACK]], %{{.*}} : i64, !llvm.ptr
// STD-NOT:       memref.alloc(
// STD-NOT:       memref.dealloc

// CHECK-LABEL: .visible .entry scratch(
// CHECK-NEXT:    .param .u64 .ptr .align 1 scratch_param_0,
// CHECK-NEXT:    .param .u64 scratch_param_1,
// CHECK-NEXT:    .param .u64 scratch_param_2,
// CHECK-NEXT:    .param .u64 .ptr .align 1 scratch_param_3,
// CHECK-NEXT:    .param .u64 scratch_param_4,
// CHECK-NEXT:    .param .u64 scratch_param_5,
// CHECK-NEXT:    .param .u64 scratch_param_6
// CHECK-NEXT:  )
// CHECK-DAG:     ld.param.b64 %[[ARENA:rd[0-9]+]], [scratch_param_5];
// CHECK-DAG:     ld.param.b64 %[[PER:rd[0-9]+]], [scratch_param_6];
// CHECK:         mad.lo.s64 %[[BASE:rd[0-9]+]], %[[PER]], %rd{{[0-9]+}}, %[[ARENA]];
// CHECK:         add.s64 %rd{{[0-9]+}}, %[[BASE]], %[[PER]];
// The rounding to 16 bytes (LLVM narrows the mask to 2^42 − 16 where the
// size check before it bounds the bytes).
// CHECK:         and.b64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, {{-16|4398046511088}};
// CHECK:         setp.le.u64
// CHECK-NOT:     malloc
// CHECK-NOT:     free

// A kernel whose only check is the arena's has the device's report too.
// ONLY:          .func revmlir_$_report(
// ONLY:          .entry only_arena(
// ONLY:          call.uni revmlir_$_report,
rev.func @scratch(%y: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  rev.for parallel %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %a = anc.array_alloc(%n) : memref<?xf64>
    anc.array_free %a(%n) : memref<?xf64>
    rev.yield
  }
  rev.return %n : index
}
