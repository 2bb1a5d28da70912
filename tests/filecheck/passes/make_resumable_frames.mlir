// RUN: rev-opt %s --verify-diagnostics -p 'make-resumable{functions=walk,ping}' | filecheck %s
// RUN: rev-opt %s --verify-diagnostics -p 'ad-checkpoint{functions=walk,ping policy=bisection}' -o %t
// RUN: rev-run %t -e walk.ckpt --args "[0.1,0.2,0.3,0.4]" 0 4 0.0 [] [] "[0.0,0.0,0.0,0.0]" 1.0 [] --backend native > %t.native
// RUN: rev-run %t -e walk.ckpt --args "[0.1,0.2,0.3,0.4]" 0 4 0.0 [] [] "[0.0,0.0,0.0,0.0]" 1.0 [] --backend interpreter > %t.interpreter
// RUN: rev-run %t -e ping.ckpt --args 0.8 5 0.0 [] [] 0.0 1.0 [] --backend native >> %t.native
// RUN: rev-run %t -e ping.ckpt --args 0.8 5 0.0 [] [] 0.0 1.0 [] --backend interpreter >> %t.interpreter
// RUN: diff %t.native %t.interpreter
// RUN: filecheck %s --check-prefix=GRAD < %t.native

// What a frame holds.  A call within a recursive cycle saves the caller's
// values that the code after it reads (liveness over the caller's
// structured control flow), then the point to return to: not a value dead
// after the call (%w, read only before it), not a constant (recomputed
// where it is read), not an integer parameter every call passes on
// unchanged (%len: its slot holds the same value in every activation), and
// not the point when the callee is called from one place only (@pong).

// @walk doubles x[i] and recurses to i + 1 while i + 1 < len, then mixes
// in sin of the deeper result, len - i and x[i]'s old value.
func.func @walk(%x: memref<4xf64>, %i: index, %len: index) -> f64 {
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %v = memref.load %x[%i] : memref<4xf64>
  %w = arith.mulf %v, %two : f64
  memref.store %w, %x[%i] : memref<4xf64>
  %j = arith.addi %i, %c1 : index
  %more = arith.cmpi slt, %j, %len : index
  %r = scf.if %more -> (f64) {
    %k = func.call @walk(%x, %j, %len) : (memref<4xf64>, index, index) -> f64
    %s = math.sin %k : f64
    %left = arith.subi %len, %i : index
    %n = arith.index_cast %left : index to i64
    %f = arith.sitofp %n : i64 to f64
    %t = arith.mulf %s, %f : f64
    %u = arith.addf %t, %v : f64
    scf.yield %u : f64
  } else {
    scf.yield %w : f64
  }
  func.return %r : f64
}

// The entry's call pushes the point to return to (6) alone; the recursive
// call saves i and %v (in a slot it shares with the result),
// then the point after the call (4); %len stays in its slot.
// CHECK:      func.func @walk(
// CHECK:        cf.assert
// CHECK-NEXT:   %[[TOP:.*]] = arith.constant 6 : index
// CHECK-NEXT:   anc.copy_push %frames_index, %[[TOP]] : !anc.stack<index>
// CHECK:        cf.assert
// CHECK-NEXT:   anc.copy_push %frames_index, %i_2 : !anc.stack<index>
// CHECK-NEXT:   anc.copy_push %frames_f64, %[[V:.*]] : !anc.stack<f64>
// CHECK-NEXT:   %[[AFTER:.*]] = arith.constant 4 : index
// CHECK-NEXT:   anc.copy_push %frames_index, %[[AFTER]] : !anc.stack<index>
// CHECK-NEXT:   %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:   scf.yield %{{.*}}, %{{.*}}, %j_1, %len_2, %[[V]], %j_1 : index, index, index, index, f64, index
// CHECK:        %[[OLD:.*]] = anc.pop %frames_f64 : !anc.stack<f64>
// CHECK-NEXT:   %[[I:.*]] = anc.pop %frames_index : !anc.stack<index>
// CHECK-NEXT:   %s = math.sin %{{.*}} : f64
// CHECK-NEXT:   %left = arith.subi %len_2, %[[I]] : index
// CHECK:        %u = arith.addf %t, %[[OLD]] : f64
// CHECK:      func.func @ping(

func.func @ping(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %k = func.call @pong(%x, %m) : (f64, index) -> f64
    %t = arith.mulf %k, %x : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
func.func @pong(%x: f64, %n: index) -> f64 {
  %k = func.call @ping(%x, %n) : (f64, index) -> f64
  %s = math.sin %k : f64
  func.return %s : f64
}

// @ping calls @pong, called from @ping alone: the frame holds x, read after
// the call, and no point; @pong's return goes to the one point after that
// call (7), a constant.  @ping, called from the entry and from @pong, pops
// the point its caller pushed.
// CHECK:        cf.assert
// CHECK-NEXT:   %[[TOP:.*]] = arith.constant 8 : index
// CHECK-NEXT:   anc.copy_push %frames_index, %[[TOP]] : !anc.stack<index>
// CHECK:        cf.assert
// CHECK-NEXT:   anc.copy_push %frames_f64, %x_2 : !anc.stack<f64>
// CHECK-NEXT:   %[[PONG:.*]] = arith.constant 5 : index
// CHECK-NEXT:   scf.yield %[[PONG]], %{{.*}}, %x_2, %m : index, index, f64, index
// CHECK:        cf.assert
// CHECK-NEXT:   %[[BACK:.*]] = arith.constant 6 : index
// CHECK-NEXT:   anc.copy_push %frames_index, %[[BACK]] : !anc.stack<index>
// CHECK:        %s = math.sin %x_2 : f64
// CHECK-NEXT:   arith.constant 1 : index
// CHECK-NEXT:   %[[SHALLOWER:.*]] = arith.subi %depth_1, %{{.*}} : index
// CHECK-NEXT:   %[[RETURN:.*]] = arith.constant 7 : index
// CHECK-NEXT:   scf.yield %[[RETURN]], %[[SHALLOWER]], %s, %n_2 : index, index, f64, index
// CHECK:        %[[X:.*]] = anc.pop %frames_f64 : !anc.stack<f64>
// CHECK-NEXT:   %t = arith.mulf %x_2, %[[X]] : f64

// The gradients of walk(x, 0, 4) at x = (0.1, 0.2, 0.3, 0.4) and of
// ping(0.8, 5): central differences of the programs in float64 give
// 1.0, -3.99933791, 1.95786965, 5.45624367 and 1.35378517 (h = 1e-6).
// GRAD:      [0.1, 0.2, 0.3, 0.4] : memref<4xf64>
// GRAD:      [1.0, -3.99933790{{[0-9]*}}, 1.95786964{{[0-9]*}}, 5.45624366{{[0-9]*}}] : memref<4xf64>
// GRAD:      0.8 : f64
// GRAD:      1.35378517{{[0-9]*}} : f64
