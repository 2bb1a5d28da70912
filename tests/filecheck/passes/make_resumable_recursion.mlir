// RUN: rev-opt %s --verify-diagnostics -p 'make-resumable{functions=f policy=binomial snapshots=3}' | filecheck %s
// RUN: rev-opt %s --verify-diagnostics -p 'make-resumable{functions=f policy=binomial snapshots=3},make-resumable{functions=dc policy=bisection}' | filecheck %s --check-prefix=TWICE
// RUN: rev-opt %s --verify-diagnostics -p 'make-resumable{functions=f policy=binomial snapshots=3},ad-checkpoint{functions=dc policy=bisection}' | filecheck %s --check-prefix=THEN-CKPT
// RUN: rev-opt %s --verify-diagnostics -p 'ad-checkpoint{functions=f policy=bisection},ad-checkpoint{functions=dc policy=bisection}' -o %t
// RUN: filecheck %s --check-prefix=CKPT < %t
// RUN: rev-run %t -e dc.ckpt --args "[0.1,0.2,0.3,0.4]" 0 4 0.0 [] [] "[0.0,0.0,0.0,0.0]" 1.0 [] --backend native > %t.native
// RUN: rev-run %t -e dc.ckpt --args "[0.1,0.2,0.3,0.4]" 0 4 0.0 [] [] "[0.0,0.0,0.0,0.0]" 1.0 [] --backend interpreter > %t.interpreter
// RUN: diff %t.native %t.interpreter
// RUN: filecheck %s --check-prefix=GRAD < %t.native

// ad-checkpoint with a policy converts only the functions it names and
// those they call, so one run per function works (CKPT, GRAD) as one run
// naming both does (make_resumable.mlir).

// Recursion: f(x, n) = x if n = 0 else sin(f(x, n - 1)) * x.  The function
// is laid out once in the machine; the recursive call pushes a frame (the
// caller's x, live across the call, and the point to return to) and jumps to
// the function's entry with n - 1 in n's slot; the return pops the point to
// go back to, and the segment after the call pops x again.
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

// The frame stacks are local: one of index (return points, integers), one
// of f64 (floats), freed, checked empty, when the machine stops.  The depth
// has a slot of its own.
// CHECK:      func.func @f(%x: f64, %n: index) -> f64 {
// CHECK-NEXT:   %frames_index = anc.stack_alloc : !anc.stack<index>
// CHECK-NEXT:   %frames_f64 = anc.stack_alloc : !anc.stack<f64>
// CHECK:        scf.while (%pc = %{{.*}}, %depth = %{{.*}}, %x_1 = %{{.*}}, %n_1 = %{{.*}}) : (index, index, f64, index) -> (index, index, f64, index) {
// CHECK:          %[[EXIT:.*]] = arith.constant 7 : index
// CHECK:          arith.cmpi ne, %pc, %[[EXIT]] : index
// The entry calls f from outside the cycle: one frame deeper (checked
// against the limit, at the call), a frame with only the point to return
// to (6), and the arguments moved into f's parameters.
// CHECK:            %[[DEEPER:.*]] = arith.addi %depth_1, %{{.*}} : index
// CHECK-NEXT:       %[[LIMIT:.*]] = arith.constant 1048576 : index
// CHECK-NEXT:       %[[ALLOWED:.*]] = arith.cmpi ule, %[[DEEPER]], %[[LIMIT]] : index
// CHECK-NEXT:       cf.assert %[[ALLOWED]], "calls nest too deeply: the recursion would exhaust the stack"
// CHECK-NEXT:       %[[TOP:.*]] = arith.constant 6 : index
// CHECK-NEXT:       anc.copy_push %frames_index, %[[TOP]] : !anc.stack<index>
// CHECK:            scf.yield %{{.*}}, %[[DEEPER]], %x, %n : index, index, f64, index
// A return pops the point it goes back to: the program point is dynamic.
// CHECK:            %[[BACK:.*]] = anc.pop %frames_index : !anc.stack<index>
// CHECK-NEXT:       %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:       %[[SHALLOWER:.*]] = arith.subi %depth_1, %{{.*}} : index
// CHECK-NEXT:       scf.yield %[[BACK]], %[[SHALLOWER]], %x_2, %n_2 : index, index, f64, index
// The recursive call: x saved, the point after the call (5) pushed, n - 1
// into n's slot, then the entry of f (1).
// CHECK:            %m = arith.subi %n_2, %{{.*}} : index
// CHECK:            cf.assert
// CHECK-NEXT:       anc.copy_push %frames_f64, %x_2 : !anc.stack<f64>
// CHECK-NEXT:       %[[AFTER:.*]] = arith.constant 5 : index
// CHECK-NEXT:       anc.copy_push %frames_index, %[[AFTER]] : !anc.stack<index>
// CHECK-NEXT:       %[[ENTRY:.*]] = arith.constant 1 : index
// CHECK-NEXT:       scf.yield %[[ENTRY]], %{{.*}}, %x_2, %m : index, index, f64, index
// After the call: x popped back, the callee's result read from its slot.
// CHECK:            %[[SAVED:.*]] = anc.pop %frames_f64 : !anc.stack<f64>
// CHECK-NEXT:       %s = math.sin %x_2 : f64
// CHECK-NEXT:       %t = arith.mulf %s, %[[SAVED]] : f64
// CHECK:        } attributes {checkpoint = #ad.schedule<binomial, snapshots = 3>}
// CHECK-NEXT:   anc.stack_free %frames_index : !anc.stack<index>
// CHECK-NEXT:   anc.stack_free %frames_f64 : !anc.stack<f64>

// Checkpointed: a snapshot holds each frame stack's live part, last in its
// record; restores put it back; plain steps run the untaped copy, which
// keeps the frames' pushes and pops; the step's adjoint takes the frames'
// gradient stack, which lives across steps.
// CKPT:       rev.func @f.ckpt(
// CKPT:         anc.snapshot %snapshots, %{{.*}}, %frames_index : !anc.stack<index>, index, index, index, index, !anc.stack<index>
// CKPT-NEXT:    anc.snapshot %snapshots_1, %{{.*}}, %frames_f64 : !anc.stack<f64>, f64, !anc.stack<f64>
// CKPT:         rev.call @f.ckpt.step0.plain({{.*}}, %frames_index, %frames_f64, %step_tape, %step_tape_1)
// CKPT:         anc.restore %snapshots, {{.*}}, %frames_index_1 : !anc.stack<index>, index, index, index, index, !anc.stack<index> -> (index, index, index, index)
// CKPT:         anc.restore %snapshots_1, {{.*}}, %frames_f64_1 : !anc.stack<f64>, f64, !anc.stack<f64> -> (f64)
// CKPT:         rev.call @f.ckpt.step0.adj({{.*}}, %frames_index_1, %frames_f64_1, %step_tape, %step_tape_1, {{.*}}, %g_frames_f64, %step_tape_shadow)
// CKPT:       rev.func @f.ckpt.step0.plain(
// CKPT-NOT:   rev.func
// CKPT:         anc.copy_push %frames_f64
// CKPT-NOT:   rev.func
// CKPT:         anc.pop %frames_f64

// A second run makes @dc's machine beside @f's: it checks and lays out only
// @dc and what @dc calls, not the frames the first run wrote in @f.
// TWICE:      func.func @f(
// TWICE-NEXT:   anc.stack_alloc : !anc.stack<index>
// TWICE:      func.func @dc(
// TWICE-NEXT:   anc.stack_alloc : !anc.stack<index>
// TWICE-NEXT:   anc.stack_alloc : !anc.stack<f64>
// THEN-CKPT:  rev.func @dc.ckpt(

// Divide and conquer over an array: the sum of squares of x[lo:hi], each
// split adding half the sine of its left half's sum into x[mid] before its
// right half reads it.  Its frames hold integers (hi, the point to return
// to) and floats (the left half's sum, live across the second call); its
// snapshots hold the array, written, and the frames.
func.func @dc(%x: memref<4xf64>, %lo: index, %hi: index) -> f64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.subi %hi, %lo : index
  %leaf = arith.cmpi sle, %n, %c1 : index
  %r = scf.if %leaf -> (f64) {
    %v = memref.load %x[%lo] : memref<4xf64>
    %s = arith.mulf %v, %v : f64
    scf.yield %s : f64
  } else {
    %h = arith.divui %n, %c2 : index
    %mid = arith.addi %lo, %h : index
    %a = func.call @dc(%x, %lo, %mid) : (memref<4xf64>, index, index) -> f64
    %q = math.sin %a : f64
    %half = arith.constant 0.5 : f64
    %d = arith.mulf %q, %half : f64
    %v = memref.load %x[%mid] : memref<4xf64>
    %w = arith.addf %v, %d : f64
    memref.store %w, %x[%mid] : memref<4xf64>
    %b = func.call @dc(%x, %mid, %hi) : (memref<4xf64>, index, index) -> f64
    %s = arith.addf %a, %b : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// The gradient of dc(x, 0, 4) at x = (0.1, 0.2, 0.3, 0.4), the same natively
// and on the interpreter (the diff above), the array restored by the
// reversal: central differences of the program in float64 give 0.35480161986,
// 0.60360934623, 0.94571658027, 0.90607654207 (h = 1e-6);
// tests/test_resumable_recursion.py checks such gradients against store-all's.
// GRAD:      [0.1, 0.2, 0.3, 0.4] : memref<4xf64>
// GRAD-NEXT: 0 : index
// GRAD-NEXT: 4 : index
// GRAD-NEXT: 0.0 : f64
// GRAD-NEXT: [] : !anc.stack<f64>
// GRAD-NEXT: [] : !anc.stack<index>
// GRAD-NEXT: [0.3548016198{{[0-9]*}}, 0.6036093462{{[0-9]*}}, 0.9457165802{{[0-9]*}}, 0.9060765420{{[0-9]*}}] : memref<4xf64>
// GRAD-NEXT: 1.0 : f64
