// RUN: not rev-run %s -e f --args 1 2>&1 | filecheck %s
// RUN: not rev-translate --emit=llvm %s 2>&1 | filecheck %s --check-prefix=TRANSLATE
// RUN: not rev-translate --emit=ptx %s 2>&1 | filecheck %s --check-prefix=TRANSLATE

// An atomic access aligned below its size is a call of __atomic_load in
// LLVM's code, which the JIT cannot resolve (the first call crashed the
// process): it is refused at the op on the host and the GPU alike. rev-run
// suggests no interpreter, which has no semantics for `llvm` ops either.
// CHECK-NOT: Traceback
// CHECK:     {{^.*}}run_atomic_alignment.mlir: error: cannot run natively: 'llvm.load' at {{.*}}run_atomic_alignment.mlir:[[# @LINE + 10]]:3: an atomic load of i64 aligned to 4 byte(s) is not supported: native code accesses it atomically aligned to at least its size, 8{{$}}
// CHECK-NOT: {{.}}

// TRANSLATE-NOT: Traceback
// TRANSLATE:     'llvm.load' at {{.*}}run_atomic_alignment.mlir:[[# @LINE + 6]]:3: an atomic load of i64 aligned to 4 byte(s) is not supported

func.func @peek(%x: i64) -> i64 {
  %one = arith.constant 1 : i64
  %p = llvm.alloca %one x i64 : (i64) -> !llvm.ptr
  llvm.store %x, %p : i64, !llvm.ptr
  %v = llvm.load %p atomic acquire {alignment = 4 : i64} : !llvm.ptr -> i64
  func.return %v : i64
}

// The entry names @peek, so the run reaches it.
rev.func @f(%y: i64) {
  "rev.return"(%y) {keeps = @peek} : (i64) -> ()
}
