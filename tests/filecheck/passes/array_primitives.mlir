// RUN: rev-opt %s -p ad-adjoint -o %t && filecheck %s --check-prefix=AD --input-file %t
// RUN: rev-opt %t -p rev-lower-to-std | filecheck %s --check-prefix=STD
// RUN: rev-translate %t --emit=llvm | filecheck %s --check-prefix=LLVM

// Array primitives: a CBLAS ddot (pure, an expression) and daxpy (y += a*x,
// which updates its third argument in place: a reversible instruction whose
// inverse rule calls daxpy with -a). Both pass arrays as BLAS does (the
// length n first, each array as a pointer and the stride 1, 32-bit integers
// here); @vsum passes its array as a pointer and its length. The adjoint
// rules are ordinary code that updates the gradient arrays in place.

// The custom forms print as they are written (and the runs below parse the
// printed module again).
// AD: rev.extern @ddot : (memref<?xf64>, memref<?xf64>) -> f64 {symbol = "cblas_ddot", arrays = "blas32", adjoint = @ddot_adj}
// AD: rev.extern @daxpy : (f64, memref<?xf64>, memref<?xf64>) -> () {symbol = "cblas_daxpy", arrays = "blas32", updates = array<i64: 2>, inverse = @daxpy_inv, adjoint = @daxpy_adj}
rev.extern @ddot : (memref<?xf64>, memref<?xf64>) -> f64 {symbol = "cblas_ddot", arrays = "blas32", adjoint = @ddot_adj}
rev.extern @daxpy : (f64, memref<?xf64>, memref<?xf64>) -> () {symbol = "cblas_daxpy", arrays = "blas32", updates = array<i64: 2>, inverse = @daxpy_inv, adjoint = @daxpy_adj}
rev.extern @vsum : (memref<?xf64>) -> f64 {symbol = "vsum", adjoint = @vsum_adj}

func.func @daxpy_inv(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  %m = arith.negf %a : f64
  rev.invoke @daxpy(%m, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  func.return
}
// (x, y, gradient of the result, shadows of x and y) -> ()
func.func @ddot_adj(%x: memref<?xf64>, %y: memref<?xf64>, %g: f64, %gx: memref<?xf64>, %gy: memref<?xf64>) {
  rev.invoke @daxpy(%g, %y, %gx) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  rev.invoke @daxpy(%g, %x, %gy) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  func.return
}
// (x, gradient of the result, shadow of x) -> (): a loop of element updates
func.func @vsum_adj(%x: memref<?xf64>, %g: f64, %gx: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %gx, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %e = memref.load %gx[%i] : memref<?xf64>
    %e1 = arith.addf %e, %g : f64
    memref.store %e1, %gx[%i] : memref<?xf64>
  }
  func.return
}
// (a, x, y, shadows of x and y) -> gradient of a
func.func @daxpy_adj(%a: f64, %x: memref<?xf64>, %y: memref<?xf64>, %gx: memref<?xf64>, %gy: memref<?xf64>) -> f64 {
  rev.invoke @daxpy(%a, %gy, %gx) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  %d = rev.apply @ddot(%x, %gy) : (memref<?xf64>, memref<?xf64>) -> f64
  func.return %d : f64
}

// AD-LABEL: rev.func @f(
// AD:         rev.invoke @daxpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
// AD:         %d = rev.apply @ddot(%x, %y) : (memref<?xf64>, memref<?xf64>) -> f64
rev.func @f(%s: f64, %a: f64, %x: memref<?xf64>, %y: memref<?xf64>) {
  rev.invoke @daxpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
  %d = rev.apply @ddot(%x, %y) : (memref<?xf64>, memref<?xf64>) -> f64
  %t = rev.apply @vsum(%y) : (memref<?xf64>) -> f64
  %u = arith.addf %d, %t : f64
  %s1 = rev.add %s, %u : f64
  rev.return %s1, %a : f64, f64
}
ad.adjoint @f

// The adjoint invokes the rules of ddot and vsum on the shadows, undoes the
// update (the inverse of an invoke runs the inverse rule: {backward}), then
// invokes daxpy's rule, whose result
// (the gradient of a) flows into a's gradient; the rules' calls forget what
// they overwrite and have no inverse.
// AD-LABEL: rev.func @f.adj(%s: f64, %a: f64, %x: memref<?xf64>, %y: memref<?xf64>, %g_s: f64, %g_a: f64, %g_x: memref<?xf64>, %g_y: memref<?xf64>) {
// AD-DAG:     rev.invoke @ddot_adj(%x, %y, %g_s, %g_x, %g_y) {rev.forgetful} : (memref<?xf64>, memref<?xf64>, f64, memref<?xf64>, memref<?xf64>) -> ()
// AD-DAG:     rev.invoke @vsum_adj(%y, %g_s, %g_y) {rev.forgetful} : (memref<?xf64>, f64, memref<?xf64>) -> ()
// AD:         rev.invoke @daxpy(%a, %x, %y) {backward} : (f64, memref<?xf64>, memref<?xf64>) -> ()
// AD:         %[[GA:.*]] = rev.invoke @daxpy_adj(%a, %x, %y, %g_x, %g_y) {rev.forgetful} : (f64, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> f64
// AD:         rev.add %g_a, %[[GA]] : f64
// AD:         anc.free %[[GA]], %{{.*}} {nocheck, rev.forgetful} : f64

// Each primitive becomes the external function of its symbol, marked with
// how it takes arrays; BLAS's arrays are checked to have one length; the
// backward invoke calls the inverse rule, which takes the error slot.
// STD-DAG:   func.func private @cblas_ddot(memref<?xf64>, memref<?xf64>) -> f64 attributes {rev.arrays = "blas32"}
// STD-DAG:   func.func private @cblas_daxpy(f64, memref<?xf64>, memref<?xf64>) -> () attributes {rev.arrays = "blas32"}
// STD-DAG:   func.func private @vsum(memref<?xf64>) -> f64 attributes {rev.arrays = "pointer_length"}
// STD-LABEL: func.func @f(
// STD:         %[[N:.*]] = memref.dim %x, %{{.*}} : memref<?xf64>
// STD:         %[[M:.*]] = memref.dim %y, %{{.*}} : memref<?xf64>
// STD:         arith.cmpi eq, %[[N]], %[[M]] : index
// STD:         func.call @cblas_daxpy(%a, %x, %y) : (f64, memref<?xf64>, memref<?xf64>) -> ()
// STD-LABEL: func.func @f.adj(
// STD:         func.call @ddot_adj(%x, %y, %g_s, %g_x, %g_y, %err)
// STD:         func.call @daxpy_inv(%a, %x, %y, %err)

// The C functions take BLAS's (n, ..., pointer, stride) and (pointer, length).
// LLVM-DAG: declare void @cblas_daxpy(i32, double, ptr, i32, ptr, i32)
// LLVM-DAG: declare double @cblas_ddot(i32, ptr, i32, ptr, i32)
// LLVM-DAG: declare double @vsum(ptr, i64)
