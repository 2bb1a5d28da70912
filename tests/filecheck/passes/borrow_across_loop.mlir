// RUN: rev-opt %s -p rev-invert | filecheck %s --check-prefix=INV
// RUN: rev-opt %s -p 'ad-tangent{functions=f}' | filecheck %s --check-prefix=TAN
// RUN: rev-opt %s -p 'ad-adjoint{functions=f}' | filecheck %s --check-prefix=ADJ
// RUN: rev-opt %s -p 'ad-hessian{functions=f}' | rev-opt -p rev-verify | filecheck %s --check-prefix=HESS

// A borrow that spans a loop whose body reads the same index (as a
// gradient program gets where @f's last update and the adjoint's first
// undo of it are merged): the derived code recomputes the index inside the
// loop's body, and the rev.put after the loop must still use the index
// value of its rev.take, which the verifier compares by identity.
rev.func @f(%y: f64, %x: f64, %ya: memref<?xf64>, %xa: memref<?xf64>) {
  %c1 = arith.constant 1 : i64
  %i1 = arith.index_cast %c1 : i64 to index
  %e = rev.take %ya[%i1] : memref<?xf64>
  %lo = arith.constant 0 : index
  %hi = arith.constant 2 : index
  %y1 = rev.for %lo to %hi step %i1 : index (%y) : f64 {
  ^bb0(%i: index, %yb: f64):
    %l = memref.load %xa[%i1] : memref<?xf64>
    %p = arith.mulf %l, %x : f64
    %yb1 = rev.add %yb, %p : f64
    rev.yield %yb1 : f64
  }
  %e1 = rev.add %e, %x : f64
  rev.put %e1, %ya[%i1] : memref<?xf64>
  rev.return %y1, %x : f64, f64
}

// INV-LABEL: rev.func @f.inv(
// INV:         %[[I:.*]] = arith.index_cast
// INV-NEXT:    rev.take %ya[%[[I]]]
// INV:         rev.for reverse
// INV:           %[[J:.*]] = arith.index_cast
// INV-NEXT:      memref.load %xa[%[[J]]]
// INV:         rev.put %{{.*}}, %ya[%[[I]]]
// INV-NEXT:    rev.return

// TAN-LABEL: rev.func @f.tan(
// TAN:         %[[I:.*]] = arith.index_cast
// TAN-NEXT:    rev.take %ya[%[[I]]]
// TAN-NEXT:    rev.take %d_ya[%[[I]]]
// TAN:         rev.for
// TAN:           arith.index_cast
// TAN:         rev.put %{{.*}}, %ya[%[[I]]]
// TAN-NEXT:    rev.put %{{.*}}, %d_ya[%[[I]]]
// TAN-NEXT:    rev.return

// ADJ-LABEL: rev.func @f.adj(
// ADJ:         %[[I:.*]] = arith.index_cast
// ADJ-NEXT:    rev.take %ya[%[[I]]]
// ADJ-NEXT:    rev.take %g_ya[%[[I]]]
// ADJ:         rev.for reverse
// ADJ:           arith.index_cast
// ADJ:         rev.put %{{.*}}, %ya[%[[I]]]
// ADJ-NEXT:    rev.put %{{.*}}, %g_ya[%[[I]]]
// ADJ-NEXT:    rev.return

// The tangent of the adjoint, built from copies of the adjoint: it verifies.
// HESS: rev.func @f.adj.tan(
