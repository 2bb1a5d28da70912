// RUN: rev-opt %s | rev-opt | filecheck %s

// llvm.cmpxchg, which xDSL's llvm dialect lacks, as upstream MLIR spells
// it: the GPU's report takes the launch's error slot with it.  It survives
// printing and re-parsing (its generic form is read in llvm_cmpxchg_invalid.mlir).
// CHECK:      %{{.*}} = llvm.cmpxchg %p, %old, %new monotonic monotonic : !llvm.ptr, i64
// CHECK-NEXT: %{{.*}} = llvm.cmpxchg %p, %a, %b acq_rel acquire : !llvm.ptr, i32
func.func @swap(%p: !llvm.ptr, %old: i64, %new: i64, %a: i32, %b: i32) -> i1 {
  %r = llvm.cmpxchg %p, %old, %new monotonic monotonic : !llvm.ptr, i64
  %s = llvm.cmpxchg %p, %a, %b acq_rel acquire : !llvm.ptr, i32
  %won = llvm.extractvalue %r[1] : !llvm.struct<(i64, i1)>
  func.return %won : i1
}
