// RUN: rev-opt %s -p rev-host-safety | filecheck %s

// std code as rev-lower-to-std leaves it (an error slot, no bounds checks;
// the pass adds the allocations' checks):
// a fill of zeros is the heap allocation's calloc only where it is the
// first thing done to the new array. Each function here writes the array
// before its fill, so the fill stays and the allocation is malloc's.

// A store before the fill, in the same block.
// CHECK-LABEL: func.func @stored_first(
// CHECK:         memref.alloc(%n) {rev.allocation_check = {{[0-9]+}} : i64} : memref<?xf64>
// CHECK-NEXT:    memref.store %x
// CHECK:         scf.for
// CHECK-NEXT:      memref.store %zero
func.func @stored_first(%n: index, %x: f64, %err: memref<6xi64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %a = memref.alloc(%n) : memref<?xf64>
  memref.store %x, %a[%c0] : memref<?xf64>
  %m = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %m step %c1 {
    memref.store %zero, %a[%i] : memref<?xf64>
  }
  %r = memref.load %a[%c0] : memref<?xf64>
  memref.dealloc %a : memref<?xf64>
  func.return %r : f64
}

// A fill in a loop zeroes again what the loop's last iteration stored.
// CHECK-LABEL: func.func @filled_in_a_loop(
// CHECK:         memref.alloc(%n) {rev.allocation_check = {{[0-9]+}} : i64} : memref<?xf64>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK-NEXT:        memref.store %zero
// CHECK:           memref.store %x
func.func @filled_in_a_loop(%n: index, %k: index, %x: f64, %err: memref<6xi64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %a = memref.alloc(%n) : memref<?xf64>
  scf.for %j = %c0 to %k step %c1 {
    %m = memref.dim %a, %c0 : memref<?xf64>
    scf.for %i = %c0 to %m step %c1 {
      memref.store %zero, %a[%i] : memref<?xf64>
    }
    memref.store %x, %a[%c0] : memref<?xf64>
  }
  %r = memref.load %a[%c0] : memref<?xf64>
  memref.dealloc %a : memref<?xf64>
  func.return %r : f64
}

// The frame-or-heap choice's heap branch stores into its allocation before
// yielding it: the fill stays whole, not only the frame's.
// CHECK-LABEL: func.func @stored_in_the_branch(
// CHECK:         %[[A:.*]] = scf.if %c -> (memref<?xf64>) {
// CHECK:           memref.alloc(%n) {rev.allocation_check = {{[0-9]+}} : i64} : memref<?xf64>
// CHECK-NEXT:      memref.store %x
// CHECK:         } else {
// CHECK:           memref.alloca(%n) : memref<?xf64>
// CHECK-NOT:     scf.if %c
// CHECK:         scf.for
// CHECK-NEXT:      memref.store %zero, %[[A]]
func.func @stored_in_the_branch(%c: i1, %n: index, %x: f64, %err: memref<6xi64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %a = scf.if %c -> (memref<?xf64>) {
    %h = memref.alloc(%n) : memref<?xf64>
    memref.store %x, %h[%c0] : memref<?xf64>
    scf.yield %h : memref<?xf64>
  } else {
    %f = memref.alloca(%n) : memref<?xf64>
    scf.yield %f : memref<?xf64>
  }
  %m = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %m step %c1 {
    memref.store %zero, %a[%i] : memref<?xf64>
  }
  %r = memref.load %a[%c0] : memref<?xf64>
  func.return %r : f64
}

// The heap's allocation is made and written before the choice, which yields
// it: the fill stays whole.
// CHECK-LABEL: func.func @allocated_before_the_choice(
// CHECK:         memref.alloc(%n) {rev.allocation_check = {{[0-9]+}} : i64} : memref<?xf64>
// CHECK-NEXT:    memref.store %x
// CHECK:         %[[A:.*]] = scf.if %c -> (memref<?xf64>) {
// CHECK-NOT:     scf.if %c
// CHECK:         scf.for
// CHECK-NEXT:      memref.store %zero, %[[A]]
func.func @allocated_before_the_choice(%c: i1, %n: index, %x: f64, %err: memref<6xi64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %h = memref.alloc(%n) : memref<?xf64>
  memref.store %x, %h[%c0] : memref<?xf64>
  %a = scf.if %c -> (memref<?xf64>) {
    scf.yield %h : memref<?xf64>
  } else {
    %f = memref.alloca(%n) : memref<?xf64>
    scf.yield %f : memref<?xf64>
  }
  %m = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %m step %c1 {
    memref.store %zero, %a[%i] : memref<?xf64>
  }
  %r = memref.load %a[%c0] : memref<?xf64>
  func.return %r : f64
}

// The control: a heap allocation yielded as soon as it is made is calloc's,
// and the fill runs only where the choice took the frame.
// CHECK-LABEL: func.func @fresh_in_the_branch(
// CHECK:         %[[A:.*]] = scf.if %c -> (memref<?xf64>) {
// CHECK:           memref.alloc(%n) {rev.zeroed, rev.allocation_check = {{[0-9]+}} : i64} : memref<?xf64>
// CHECK:         scf.if %c {
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        memref.store %zero, %[[A]]
func.func @fresh_in_the_branch(%c: i1, %n: index, %x: f64, %err: memref<6xi64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %a = scf.if %c -> (memref<?xf64>) {
    %h = memref.alloc(%n) : memref<?xf64>
    scf.yield %h : memref<?xf64>
  } else {
    %f = memref.alloca(%n) : memref<?xf64>
    scf.yield %f : memref<?xf64>
  }
  %m = memref.dim %a, %c0 : memref<?xf64>
  scf.for %i = %c0 to %m step %c1 {
    memref.store %zero, %a[%i] : memref<?xf64>
  }
  %r = memref.load %a[%c0] : memref<?xf64>
  func.return %r : f64
}
