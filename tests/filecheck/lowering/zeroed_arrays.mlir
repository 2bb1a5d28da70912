// RUN: rev-opt %s -p rev-lower-to-std,rev-host-safety | filecheck %s

rev.func @zeroed(%y: f64, %n: index, %m: index) {
  %a = anc.array_alloc(%n, %m) : memref<?x?xf64>
  anc.array_free %a(%n, %m) : memref<?x?xf64>
  rev.return %y, %n, %m : f64, index, index
}

// A new ancilla array on the heap is calloc's (rev.zeroed): the kernel's new
// pages are zero, and the loops that zeroed it, which touched every page,
// are gone. Their work still counts: the iterations of its loops (n of the
// outer, n*m of the inner: not the n*m elements alone, which are 0 for any
// n where m is 0) are added to the function's count of iterations in one
// step, and a poll after runs where that count passed a multiple of 2^16.
// The free's check of every element polls as any loop does.
// CHECK-LABEL: func.func @zeroed(
// CHECK:         %[[ITERATIONS:.*]] = memref.alloca() : memref<1xi64>
// CHECK:         %[[A:.*]] = memref.alloc(%n, %m) {rev.source_op = "anc.array_alloc", rev.zeroed, rev.allocation_check = {{.*}}}
// CHECK-NOT:     scf.for
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
// CHECK-NEXT:    scf.if %[[DUE]] {
// CHECK-NEXT:      func.call @revmlir.poll(
// CHECK:         scf.for
// CHECK-NEXT:      %[[AT2:.*]] = arith.constant 0 : index
// CHECK-NEXT:      memref.load %[[ITERATIONS]][%[[AT2]]]
// CHECK:           func.call @revmlir.poll(

rev.func @frame_or_heap(%y: f64, %n: index) {
  %a = anc.array_alloc(%n) : memref<?xf64>
  anc.array_free %a(%n) : memref<?xf64>
  rev.return %y, %n : f64, index
}

// Where the run decides between the frame and the heap, the heap's is
// calloc's and only the frame's is zeroed by the loop (bounded by its size,
// checked before), which polls nowhere inside, so that LLVM makes it a
// memset; the count and the poll after it are the heap's too.
// CHECK-LABEL: func.func @frame_or_heap(
// CHECK:         %[[ON_HEAP:.*]] = arith.cmpf ogt,
// CHECK-NEXT:    %[[ARRAY:.*]] = scf.if %[[ON_HEAP]] -> (memref<?xf64>) {
// CHECK-NEXT:      memref.alloc(%n) {rev.source_op = "anc.array_alloc", rev.zeroed, rev.allocation_check = {{.*}}}
// CHECK:         } else {
// CHECK-NEXT:      memref.alloca(%n) {rev.source_op = "anc.array_alloc"}
// CHECK:         %[[DUE:.*]] = arith.cmpi ugt,
// CHECK-NEXT:    scf.if %[[ON_HEAP]] {
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        memref.store %{{.*}}, %[[ARRAY]][%{{.*}}] : memref<?xf64>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.if %[[DUE]] {
// CHECK-NEXT:      func.call @revmlir.poll(

rev.func @in_the_frame(%y: f64) {
  %a = anc.array_alloc() : memref<4x2xf64>
  anc.array_free %a() : memref<4x2xf64>
  rev.return %y : f64
}

// An array always in the frame keeps its fill.
// CHECK-LABEL: func.func @in_the_frame(
// CHECK:         %[[FRAME:.*]] = memref.alloca() {rev.source_op = "anc.array_alloc"} : memref<4x2xf64>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK-NEXT:        memref.store %{{.*}}, %[[FRAME]][%{{.*}}, %{{.*}}] : memref<4x2xf64>

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
