// RUN: rev-opt %s -p rev-lower-to-std,rev-host-safety | filecheck %s

rev.func @zeroed(%y: f64, %n: index, %m: index) {
  %a = anc.array_alloc(%n, %m) : memref<?x?xf64>
  anc.array_free %a(%n, %m) : memref<?x?xf64>
  rev.return %y, %n, %m : f64, index, index
}

// The loops that zero a new ancilla array, bounded by its sizes (checked
// before), poll nowhere inside, which lets LLVM make them a memset: the
// iterations of its loops (n of the outer, n*m of the inner: not the n*m
// elements alone, which are 0 for any n where m is 0) are added to the
// function's count of iterations in one step before them, and a poll after
// them runs where that count passed a multiple of 2^16. The free's check
// of every element polls as any loop does.
// CHECK-LABEL: func.func @zeroed(
// CHECK:         %[[ITERATIONS:.*]] = memref.alloca() : memref<1xi64>
// CHECK:         %[[A:.*]] = memref.alloc(
// CHECK:         %[[ELEMENTS:.*]] = arith.muli %[[ROWS:.*]], %{{.*}} : index
// CHECK-NEXT:    %[[LOOPS:.*]] = arith.addi %[[ROWS]], %[[ELEMENTS]] : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.index_cast %[[LOOPS]] : index to i64
// CHECK-NEXT:    %[[AT:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[BEFORE:.*]] = memref.load %[[ITERATIONS]][%[[AT]]]
// CHECK-NEXT:    %[[AFTER:.*]] = arith.addi %[[BEFORE]], %[[STEP]] : i64
// CHECK-NEXT:    memref.store %[[AFTER]], %[[ITERATIONS]][%[[AT]]]
// CHECK-NEXT:    %[[CHANGED:.*]] = arith.xori %[[BEFORE]], %[[AFTER]] : i64
// CHECK-NEXT:    %[[SPAN:.*]] = arith.constant 65535 : i64
// CHECK-NEXT:    %[[DUE:.*]] = arith.cmpi ugt, %[[CHANGED]], %[[SPAN]] : i64
// CHECK-NEXT:    scf.for
// CHECK-NOT:       revmlir.poll
// CHECK-NOT:       %[[ITERATIONS]]
// CHECK:           scf.for
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.if %[[DUE]] {
// CHECK-NEXT:      func.call @revmlir.poll(
// CHECK:         scf.for
// CHECK-NEXT:      %[[AT2:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.load %[[ITERATIONS]][%[[AT2]]]
// CHECK:           func.call @revmlir.poll(

// An attribute written on a loop switches nothing off: a loop that is no
// fill of a new array polls, whatever it is marked.
func.func @spin(%n: index, %x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f64) {
    %b = arith.addf %a, %x : f64
    scf.yield %b : f64
  } {rev.unpolled}
  func.return %r : f64
}

rev.func @main(%y: f64, %n: index, %x: f64) {
  %l = rev.apply @spin(%n, %x) : (index, f64) -> f64
  %y2 = rev.add %y, %l : f64
  rev.return %y2, %n, %x : f64, index, f64
}

// CHECK-LABEL: func.func @spin(
// CHECK:         scf.for
// CHECK:           arith.addi
// CHECK:           scf.if
// CHECK-NEXT:        func.call @revmlir.poll(

// A loop of the form of a fill but over an array the function did not
// allocate: fill_argument.mlir (here, the lowering's bounds check on the
// store would keep it from the form whatever the array).
