// RUN: rev-opt %s --verify-diagnostics -p 'make-resumable{functions=f,g}' | filecheck %s

// Several functions made resumable at once, one calling the other's
// recursion: each machine lays out its callees as the input has them, so
// @g lays out @f from its source whether @f's own machine, with its frames,
// was made before or after (in the names' order).  The machines compute
// what the functions as written do in either order
// (tests/test_resumable_recursion.py).
func.func @f(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %k = func.call @f(%x, %m) : (f64, index) -> f64
    %s = math.sin %k : f64
    %t = arith.mulf %s, %x : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
func.func @g(%x: f64, %n: index) -> f64 {
  %k = func.call @f(%x, %n) : (f64, index) -> f64
  %t = arith.mulf %k, %x : f64
  func.return %t : f64
}

// Each machine has frame stacks of its own, and no call is left.
// CHECK:      func.func @f(%x: f64, %n: index) -> f64 {
// CHECK-NEXT:   %frames_index = anc.stack_alloc : !anc.stack<index>
// CHECK:        scf.while
// CHECK-NOT:    func.call
// CHECK:      func.func @g(%x: f64, %n: index) -> f64 {
// CHECK-NEXT:   %frames_index = anc.stack_alloc : !anc.stack<index>
// CHECK-NOT:    func.call
// CHECK:        scf.while
// CHECK-NOT:    func.call
// CHECK:        anc.stack_free %frames_index
