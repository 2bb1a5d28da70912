// RUN: rev-opt %s | rev-opt | filecheck %s
// RUN: rev-opt %s --print-op-generic | rev-opt | filecheck %s
// RUN: rev-opt %s -p rev-invert | filecheck %s --check-prefix=INV
// RUN: rev-opt %s -p 'ad-adjoint{functions=squares}' | filecheck %s --check-prefix=ADJ
// RUN: rev-opt %s -p 'ad-tangent{functions=squares}' | filecheck %s --check-prefix=TAN

// Ancilla arrays (NiLang's zeros): anc.array_alloc makes an array of zeros
// with one size per dynamic dimension, anc.array_free gives it back holding
// zeros, restating the sizes for its inverse.

// CHECK-LABEL: rev.func @squares(%y: f64, %x: memref<?xf64>) {
// CHECK:         %s = anc.array_alloc(%n) : memref<?x2xf64>
// CHECK:         anc.array_free %s(%n) : memref<?x2xf64>
// CHECK:         %t = anc.array_alloc(%n, %n) {nocheck} : memref<?x?xi64>
// CHECK-NEXT:    anc.array_free %t(%n, %n) {nocheck} : memref<?x?xi64>
rev.func @squares(%y: f64, %x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %s = anc.array_alloc(%n) : memref<?x2xf64>
  rev.for %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %e = rev.take %s[%i, %c1] : memref<?x2xf64>
    %v = memref.load %x[%i] : memref<?xf64>
    %e1 = rev.add %e, %v : f64
    rev.put %e1, %s[%i, %c1] : memref<?x2xf64>
    rev.yield
  }
  %y1 = rev.for %c0 to %n step %c1 : index (%y) : f64 {
  ^bb0(%i: index, %a: f64):
    %e = memref.load %s[%i, %c1] : memref<?x2xf64>
    %p = arith.mulf %e, %e : f64
    %a1 = rev.add %a, %p : f64
    rev.yield %a1 : f64
  }
  rev.for %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    %e = rev.take %s[%i, %c1] : memref<?x2xf64>
    %v = memref.load %x[%i] : memref<?xf64>
    %e1 = rev.sub %e, %v : f64
    rev.put %e1, %s[%i, %c1] : memref<?x2xf64>
    rev.yield
  }
  anc.array_free %s(%n) : memref<?x2xf64>
  %t = anc.array_alloc(%n, %n) {nocheck} : memref<?x?xi64>
  anc.array_free %t(%n, %n) {nocheck} : memref<?x?xi64>
  rev.return %y1 : f64
}

// The inverse frees where the function allocates and allocates where it
// frees, with the same sizes and attributes.
// INV-LABEL: rev.func @squares.inv(%y: f64, %x: memref<?xf64>) {
// INV:         %t = anc.array_alloc(%n, %n) {nocheck} : memref<?x?xi64>
// INV-NEXT:    anc.array_free %t(%n, %n) {nocheck} : memref<?x?xi64>
// INV:         %s = anc.array_alloc(%n) : memref<?x2xf64>
// INV:         anc.array_free %s(%n) : memref<?x2xf64>

// An array of floats has a shadow array of gradients, born zero where the
// adjoint allocates the array again (its forward free) and released,
// unchecked, where it frees it (its forward allocation); integer arrays have
// none.  The shadow starts zero, so undoing the uncomputing loop moves no
// gradient (its elements' gradients go back as they came).
// ADJ-LABEL: rev.func @squares.adj(%y: f64, %x: memref<?xf64>, %g_y: f64, %g_x: memref<?xf64>) {
// ADJ:         %s = anc.array_alloc(%n) : memref<?x2xf64>
// ADJ-NEXT:    %g_s = anc.array_alloc(%n) : memref<?x2xf64>
// ADJ:         rev.for reverse
// ADJ:           %g_e1 = rev.take %g_s
// ADJ-NOT:       %g_x
// ADJ:           rev.put %g_e1, %g_s
// ADJ-NEXT:      rev.yield
// ADJ-NEXT:    }
// ADJ:         rev.take %g_s{{.*}} {nocheck}
// ADJ:         anc.array_free %s(%n) : memref<?x2xf64>
// ADJ-NEXT:    anc.array_free %g_s(%n) {nocheck} : memref<?x2xf64>

// The tangent array is born and released with the array, unchecked.
// TAN-LABEL: rev.func @squares.tan(%y: f64, %x: memref<?xf64>, %d_y: f64, %d_x: memref<?xf64>) {
// TAN:         %s = anc.array_alloc(%n) : memref<?x2xf64>
// TAN-NEXT:    %d_s = anc.array_alloc(%n) {nocheck} : memref<?x2xf64>
// TAN:         anc.array_free %s(%n) : memref<?x2xf64>
// TAN-NEXT:    anc.array_free %d_s(%n) {nocheck} : memref<?x2xf64>
