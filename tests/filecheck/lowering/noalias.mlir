// RUN: rev-opt %s -p rev-lower-to-std,convert-std-to-llvm -t llvm | filecheck %s

// An array parameter is noalias unless a call may bind it to memory another
// parameter reaches, and one of the two is written.  Each array is passed as
// its pointer then its size; the last pair is the error slot.

// @twice passes %s twice: @accumulate writes both, so neither is noalias;
// %x is only ever passed once.
// CHECK-LABEL: define void @"accumulate"(ptr noalias %".1", i64 %".2", ptr %".3", i64 %".4", ptr %".5", i64 %".6", ptr noalias %".7", i64 %".8")
rev.func @accumulate(%x: memref<?xf64>, %a: memref<?xf64>, %b: memref<?xf64>) {
  %zero = arith.constant 0 : index
  %v = rev.take %x[%zero] : memref<?xf64>
  %e = rev.take %a[%zero] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %a[%zero] : memref<?xf64>
  %f = rev.take %b[%zero] : memref<?xf64>
  %f1 = rev.add %f, %v : f64
  rev.put %f1, %b[%zero] : memref<?xf64>
  rev.put %v, %x[%zero] : memref<?xf64>
  rev.return
}

// CHECK-LABEL: define void @"twice"(ptr noalias %".1", i64 %".2", ptr noalias %".3", i64 %".4", ptr noalias %".5", i64 %".6")
rev.func @twice(%x: memref<?xf64>, %s: memref<?xf64>) {
  rev.call @accumulate(%x, %s, %s) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// An array only read may be passed twice and stay noalias: nothing is
// written through either pointer.
// CHECK-LABEL: define i64 @"dim_sum"(i64 %".1", ptr noalias %".2", i64 %".3", ptr noalias %".4", i64 %".5", ptr noalias %".6", i64 %".7")
rev.func @dim_sum(%y: index, %u: memref<?xf64>, %v: memref<?xf64>) {
  %zero = arith.constant 0 : index
  %m = memref.dim %u, %zero : memref<?xf64>
  %n = memref.dim %v, %zero : memref<?xf64>
  %k = arith.addi %m, %n : index
  %y1 = rev.add %y, %k : index
  rev.return %y1 : index
}

rev.func @dim_twice(%y: index, %u: memref<?xf64>) {
  %y1 = rev.call @dim_sum(%y, %u, %u) : (index, memref<?xf64>, memref<?xf64>) -> index
  rev.return %y1 : index
}

// Aliasing passes down the call graph and writes up it: @outer binds @middle's
// two parameters to one array, @middle hands them on to @inner, which
// accumulates into both (the one way a callee may write an array passed to it
// twice: rule `call`).
// CHECK-LABEL: define void @"inner"(ptr %".1", i64 %".2", ptr %".3", i64 %".4", ptr noalias %".5", i64 %".6")
rev.func @inner(%p: memref<?xf64>, %q: memref<?xf64>) {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %v = arith.constant 2.0 : f64
  %e = rev.take %q[%one] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %q[%one] : memref<?xf64>
  %f = rev.take %p[%zero] : memref<?xf64>
  %f1 = rev.add %f, %v : f64
  rev.put %f1, %p[%zero] : memref<?xf64>
  rev.return
}

// CHECK-LABEL: define void @"middle"(ptr %".1", i64 %".2", ptr %".3", i64 %".4", ptr noalias %".5", i64 %".6")
rev.func @middle(%p: memref<?xf64>, %q: memref<?xf64>) {
  rev.call @inner(%p, %q) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// CHECK-LABEL: define void @"outer"(ptr noalias %".1", i64 %".2", ptr noalias %".3", i64 %".4")
rev.func @outer(%w: memref<?xf64>) {
  rev.call @middle(%w, %w) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// An array whose origin the analysis does not follow (here the result of an
// scf.if) may be any parameter under another name: no parameter is noalias
// (nor the error slot that rev-lower-to-std gives a func.func it brings).
// CHECK-LABEL: define {i1, double} @"pick"(i1 %".1", ptr %".2", i64 %".3", ptr %".4", i64 %".5", double %".6", ptr %".7", i64 %".8")
func.func @pick(%c: i1, %a: memref<?xf64>, %b: memref<?xf64>, %x: f64) -> (i1, f64) {
  %m = scf.if %c -> (memref<?xf64>) {
    scf.yield %a : memref<?xf64>
  } else {
    scf.yield %b : memref<?xf64>
  }
  %zero = arith.constant 0 : index
  memref.store %x, %m[%zero] : memref<?xf64>
  func.return %c, %x : i1, f64
}
