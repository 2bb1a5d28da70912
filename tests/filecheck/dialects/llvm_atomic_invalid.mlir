// RUN: not rev-translate --emit=llvm %s 2>&1 | filecheck %s
// RUN: not rev-translate --emit=ptx %s 2>&1 | filecheck %s

// What native code cannot write is refused at the op on the host and the
// GPU alike, not dropped (a volatile store ran as a plain one) nor left to
// an unlocated LLVM parse error.
// CHECK-NOT: Traceback
// CHECK:     {{^.*}}llvm_atomic_invalid.mlir: error: 'llvm.store' at {{.*}}llvm_atomic_invalid.mlir:[[# @LINE + 5]]:3: a volatile store is not supported: native code cannot mark an access volatile
// CHECK-NOT: {{.}}

func.func @poke(%p: !llvm.ptr, %x: i64) {
  %v = llvm.load %p atomic acquire : !llvm.ptr -> i64
  llvm.store volatile %x, %p : i64, !llvm.ptr
  func.return
}
