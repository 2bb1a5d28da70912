// RUN: rev-translate -O0 --emit=llvm %s | filecheck %s

// A static memref.alloca past the lowering's frame arrays is made at the
// function's entry after its check and cast back to its type (decision
// 152).  The aliasing analysis follows the cast to the alloca it views
// (revmlir.semantics.reference_origin), so the cast is fresh memory, not a
// reference of unknown origin that may be any argument: the arrays keep
// their noalias parameters, as with an alloca of the lowering's own size.
// CHECK-LABEL: define internal void @hoisted(ptr noalias %{{[^,]*}}, i64 %{{[^,]*}}, ptr noalias %{{[^,]*}}, i64
// CHECK-LABEL: define internal void @in_the_frame(ptr noalias %{{[^,]*}}, i64 %{{[^,]*}}, ptr noalias %{{[^,]*}}, i64

func.func @hoisted(%y: memref<?xf64>, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  %t = memref.alloca() : memref<1024xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    memref.store %v, %t[%c0] : memref<1024xf64>
    %w = memref.load %t[%c0] : memref<1024xf64>
    %s = arith.addf %w, %w : f64
    memref.store %s, %y[%i] : memref<?xf64>
  }
  func.return
}

func.func @in_the_frame(%y: memref<?xf64>, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf64>
  %t = memref.alloca() : memref<16xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    memref.store %v, %t[%c0] : memref<16xf64>
    %w = memref.load %t[%c0] : memref<16xf64>
    %s = arith.addf %w, %w : f64
    memref.store %s, %y[%i] : memref<?xf64>
  }
  func.return
}
