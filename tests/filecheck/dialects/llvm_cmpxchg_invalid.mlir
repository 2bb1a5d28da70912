// RUN: rev-opt %s --split-input-file --verify-diagnostics > /dev/null

// llvm.cmpxchg's orderings are LLVM's, and a failure stores nothing.
func.func @unordered(%p: !llvm.ptr, %old: i64, %new: i64) {
  // expected-error@+1 {{'llvm.cmpxchg' orders by one of monotonic, acquire, release, acq_rel, seq_cst}}
  %r = llvm.cmpxchg %p, %old, %new relaxed monotonic : !llvm.ptr, i64
  func.return
}

// -----

func.func @failing_release(%p: !llvm.ptr, %old: i64, %new: i64) {
  // expected-error@+1 {{'llvm.cmpxchg' cannot fail with release ordering: it stores nothing then}}
  %r = llvm.cmpxchg %p, %old, %new seq_cst release : !llvm.ptr, i64
  func.return
}

// -----

func.func @mixed(%p: !llvm.ptr, %old: i32, %new: i64) {
  // expected-error@+1 {{'llvm.cmpxchg' compares i32 but stores i64}}
  %r = "llvm.cmpxchg"(%p, %old, %new) <{success_ordering = "monotonic", failure_ordering = "monotonic"}> : (!llvm.ptr, i32, i64) -> !llvm.struct<(i64, i1)>
  func.return
}

// -----

func.func @result(%p: !llvm.ptr, %old: i64, %new: i64) {
  // expected-error@+1 {{'llvm.cmpxchg' gives !llvm.struct<(i64, i1)>, not !llvm.struct<(i64, i64)>}}
  %r = "llvm.cmpxchg"(%p, %old, %new) <{success_ordering = "monotonic", failure_ordering = "monotonic"}> : (!llvm.ptr, i64, i64) -> !llvm.struct<(i64, i64)>
  func.return
}

// -----

func.func @two(%p: !llvm.ptr, %new: i64) {
  // expected-error@+1 {{'llvm.cmpxchg' takes an address, the value compared and the value stored}}
  %r = llvm.cmpxchg %p, %new monotonic monotonic : !llvm.ptr, i64
  func.return
}
