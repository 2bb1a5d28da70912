// RUN: rev-translate -O0 --emit=llvm %s | filecheck %s --check-prefix=HOST
// RUN: rev-translate -O0 --emit=ptx %s | filecheck %s --check-prefix=PTX
// RUN: not rev-translate --emit=ptx --gpu-arch=sm_60 %s 2>&1 | filecheck %s --check-prefix=SM60

// An atomic llvm.load or llvm.store keeps its ordering in native and GPU
// code alike (xDSL's backend wrote it as a plain access); one without an
// alignment has its type's size, which LLVM writes on every atomic access
// (revmlir/lowering/llvm_ir.py, atomic_access).
// HOST-LABEL: define internal double @exchange(
// HOST:       load atomic double, ptr %{{.*}} acquire, align 8
// HOST-NEXT:  load atomic i32, ptr %{{.*}} monotonic, align 16
// HOST-NEXT:  store atomic double %{{.*}}, ptr %{{.*}} release, align 8
// HOST-NEXT:  store atomic i32 %{{.*}}, ptr %{{.*}} seq_cst, align 4
// HOST-NEXT:  store i32 %{{.*}}, ptr %{{.*}}, align 4

// PTX-LABEL: .func  (.param .b64 func_retval0) exchange(
// PTX:       ld.acquire.sys.b64
// PTX:       ld.relaxed.sys.b32
// PTX:       st.release.sys.b64
// PTX:       fence.sc.sys;
// PTX-NEXT:  st.release.sys.b32
// PTX:       st.b32

// sm_6x has no ordered access, and LLVM's NVPTX back end aborted the
// process on one: it is refused at the op.
// SM60-NOT: LLVM ERROR
// SM60:     {{^.*}}llvm_atomic.mlir: error: 'llvm.load' at {{.*}}llvm_atomic.mlir:[[# @LINE + 4]]:3: an atomic load ordered acquire needs sm_70 or newer; sm_60 has only unordered and monotonic ones
// SM60-NOT: {{.}}

func.func @exchange(%p: !llvm.ptr) -> f64 {
  %v = llvm.load %p atomic acquire : !llvm.ptr -> f64
  %w = llvm.load %p atomic monotonic {alignment = 16 : i64} : !llvm.ptr -> i32
  "llvm.store"(%v, %p) <{ordering = 5 : i64}> : (f64, !llvm.ptr) -> ()
  "llvm.store"(%w, %p) <{ordering = 7 : i64}> : (i32, !llvm.ptr) -> ()
  llvm.store %w, %p : i32, !llvm.ptr
  func.return %v : f64
}
