// RUN: rev-opt %s --split-input-file --verify-diagnostics -p 'make-resumable{functions=f policy=binomial snapshots=3}' | filecheck %s
// RUN: rev-opt %s --split-input-file --verify-diagnostics -p 'ad-checkpoint{functions=f policy=bisection base=2}' | filecheck %s --check-prefix=CKPT
// RUN: rev-opt %s --split-input-file --verify-diagnostics -p 'make-resumable{functions=f,f policy=binomial snapshots=3}' | filecheck %s
// RUN: rev-opt %s --split-input-file --verify-diagnostics -p 'ad-checkpoint{functions=f,f policy=bisection base=2}' | filecheck %s --check-prefix=CKPT

// A loop that calls a function: the function becomes one scf.while over a
// program point and the slots of the values live between its steps (the
// induction variable and the accumulator); the callee is inlined, so its
// loads and stores are part of a step of the loop body, and the schedule
// marks the machine loop.
func.func @g(%x: memref<4xf64>, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf64>
  %w = arith.mulf %v, %a : f64
  memref.store %w, %x[%c0] : memref<4xf64>
  func.return %w : f64
}
func.func @f(%x: memref<4xf64>, %l: index, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %l step %c1 iter_args(%acc = %zero) -> (f64) {
    %m = math.sin %acc : f64
    %r = func.call @g(%x, %a) : (memref<4xf64>, f64) -> f64
    %t = arith.addf %m, %r : f64
    scf.yield %t : f64
  }
  func.return %s : f64
}

// CHECK:      func.func @f(%x: memref<4xf64>, %l: index, %a: f64) -> f64 {
// CHECK-NOT:    scf.for
// CHECK:        %{{.*}}, %{{.*}}, %[[S:.*]] = scf.while (%pc = %{{.*}}, %i = %{{.*}}, %acc = %{{.*}}) : (index, index, f64) -> (index, index, f64) {
// CHECK:          %[[EXIT:.*]] = arith.constant 3 : index
// CHECK:          arith.cmpi ne, %pc, %[[EXIT]] : index
// CHECK:        } do {
// The entry step ends with the first loop test: the body (program point 1)
// with the initial values, or the return (2).
// CHECK:            %[[FIRST:.*]] = arith.cmpi slt, %c0, %l : index
// CHECK:            scf.if %[[FIRST]]
// CHECK:              scf.yield %{{.*}}, %c0, %zero : index, index, f64
// The body, the callee inlined, ends with the next test.
// CHECK:            %m = math.sin %acc_1 : f64
// CHECK:            %v = memref.load %x[%{{.*}}] : memref<4xf64>
// CHECK:            %w = arith.mulf %v, %a : f64
// CHECK:            memref.store %w, %x[%{{.*}}] : memref<4xf64>
// CHECK:            %t = arith.addf %m, %w : f64
// CHECK:            %[[NEXT:.*]] = arith.addi %i_1, %{{.*}} : index
// CHECK:            arith.cmpi slt, %[[NEXT]], %l : index
// CHECK:              scf.yield %{{.*}}, %[[NEXT]], %t : index, index, f64
// CHECK:        } attributes {checkpoint = #ad.schedule<binomial, snapshots = 3>}
// CHECK-NEXT:   func.return %[[S]] : f64

// ad-checkpoint with a policy does the same to the unmarked function, then
// reversibilizes it in tape mode and checkpoints the machine loop: its steps
// are counted first (two segments to a step with base=2), then reversed
// under bisection.
// CKPT:       rev.func @f(
// CKPT:         rev.while {{.*}} attributes {checkpoint = #ad.schedule<bisection>}
// CKPT:       rev.func @f.ckpt(
// CKPT:         anc.snapshot %snapshots
// CKPT:         rev.call @f.ckpt.step0.plain(
// CKPT:         ad.next #ad.schedule<bisection>
// CKPT:         rev.call @f.ckpt.step0.adj(
// A step runs up to two segments: an inner loop counts them.
// CKPT:       rev.func @f.ckpt.step0(
// CKPT:         %[[TWO:.*]] = arith.constant 2 : index
// CKPT:         arith.cmpi slt, %{{.*}}, %[[TWO]] : index
