// RUN: rev-opt %s | rev-opt | filecheck %s
// RUN: rev-translate --emit=llvm %s | filecheck %s --check-prefix=HOST

// llvm.cmpxchg, which xDSL's llvm dialect lacks, as upstream MLIR spells
// it: the GPU's report takes the launch's error slot with it.  It survives
// printing and re-parsing (its generic form is read in llvm_cmpxchg_invalid.mlir).
// CHECK:      %{{.*}} = llvm.cmpxchg %p, %old, %new monotonic monotonic : !llvm.ptr, i64
// CHECK-NEXT: %{{.*}} = llvm.cmpxchg %p, %a, %b acq_rel acquire : !llvm.ptr, i32
// Host code has it as LLVM's instruction, as GPU code does: xDSL's backend,
// which has no cmpxchg, converts it as a call that the instruction
// replaces (revmlir/lowering/llvm_ir.py); no stand-in is left.
// HOST-NOT:   revmlir.cmpxchg
// (only the entry points of an object for C are its symbols: @swap is inlined into its own)
// HOST:       define i1 @_mlir_ciface_swap(
// HOST:       cmpxchg ptr %{{.*}}, i64 %{{.*}}, i64 %{{.*}} monotonic monotonic
// HOST-NEXT:  cmpxchg ptr %{{.*}}, i32 %{{.*}}, i32 %{{.*}} acq_rel acquire
// HOST-NOT:   revmlir.cmpxchg
func.func @swap(%p: !llvm.ptr, %old: i64, %new: i64, %a: i32, %b: i32) -> i1 {
  %r = llvm.cmpxchg %p, %old, %new monotonic monotonic : !llvm.ptr, i64
  %s = llvm.cmpxchg %p, %a, %b acq_rel acquire : !llvm.ptr, i32
  %won = llvm.extractvalue %r[1] : !llvm.struct<(i64, i1)>
  func.return %won : i1
}
