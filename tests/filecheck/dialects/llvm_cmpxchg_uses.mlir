// RUN: not rev-translate --emit=llvm %s 2>&1 | filecheck %s

// Native code reads llvm.cmpxchg's result only with llvm.extractvalue
// (revmlir/lowering/llvm_ir.py makes the instruction stand for a call in
// those alone); any other use is refused at the op, not an unlocated LLVM
// parse error about a value the translation removed.
// CHECK-NOT: Traceback
// CHECK:     {{^.*}}llvm_cmpxchg_uses.mlir: error: 'llvm.cmpxchg' at {{.*}}llvm_cmpxchg_uses.mlir:[[# @LINE + 6]]:3: its result is used by 'llvm.insertvalue' at {{.*}}llvm_cmpxchg_uses.mlir:[[# @LINE + 8]]:3; native code reads a compare-and-swap only with 'llvm.extractvalue'
// CHECK-NOT: {{.}}

!swap = !llvm.struct<(i64, i1)>
!pair = !llvm.struct<(!llvm.struct<(i64, i1)>, i64)>
func.func @kept(%p: !llvm.ptr, %old: i64, %new: i64) -> i1 {
  %r = llvm.cmpxchg %p, %old, %new monotonic monotonic : !llvm.ptr, i64
  %u = llvm.mlir.undef : !pair
  %s = llvm.insertvalue %r, %u[0] : !pair
  %won = llvm.extractvalue %r[1] : !swap
  func.return %won : i1
}
