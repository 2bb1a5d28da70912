// RUN: rev-opt %s --split-input-file --verify-diagnostics -p flatten-split-loops | filecheck %s
// RUN: rev-opt %s --split-input-file --verify-diagnostics -p flatten-split-loops,reversibilize{mode=tape},ad-checkpoint{functions=grid} | filecheck %s --check-prefix=CKPT

// An outer loop whose iterations run 1 or 2 inner iterations: marked
// checkpoint_split = "work", it becomes one loop of primitive steps (begin an
// outer iteration, one inner iteration, end it), carrying the outer index, the
// phase, the inner index and bounds, both loops' values and what the part
// before the inner loop computes for the rest (%w).
func.func @grid(%x: memref<4xf64>, %l: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = arith.constant 0.5 : f64
  %zero = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %l step %c1 iter_args(%acc = %zero) -> (f64) {
    %m = arith.remui %i, %c2 : index
    %m1 = arith.addi %m, %c1 : index
    %w = memref.load %x[%c0] : memref<4xf64>
    %r = scf.for %j = %c0 to %m1 step %c1 iter_args(%t = %acc) -> (f64) {
      %v = memref.load %x[%c1] : memref<4xf64>
      %p = arith.mulf %v, %h : f64
      %q = arith.addf %p, %w : f64
      memref.store %q, %x[%c1] : memref<4xf64>
      %t1 = arith.addf %t, %q : f64
      scf.yield %t1 : f64
    }
    %u = arith.mulf %r, %w : f64
    scf.yield %u : f64
  } {checkpoint = #ad.schedule<binomial, snapshots = 2>, checkpoint_split = "work"}
  func.return %s : f64
}

// CHECK:      func.func @grid(
// CHECK-NOT:    scf.for
// CHECK:        %{{.*}}, %s, %{{.*}}, %{{.*}} = scf.while (%i = %c0, %phase = %{{.*}}, %j = %{{.*}}, %j_end = %{{.*}}, %j_step = %{{.*}}, %acc = %zero, %t = %{{.*}}, %w = %{{.*}}) : (index, index, index, index, index, f64, f64, f64)
// CHECK:          arith.cmpi slt, %i, %l : index
// CHECK:        } do {
// The phase decides: begin an outer iteration (the inner loop's bounds and
// initial values, %w for later) ...
// CHECK:          scf.if %{{.*}} -> (index, index, index, index, index, f64, f64, f64) {
// CHECK:            %m1 = arith.addi %m, %c1 : index
// CHECK:            %w_{{.*}} = memref.load %x[%c0]
// CHECK:            scf.yield %i_1, %{{.*}}, %c0, %m1, %c1, %acc_1, %acc_1, %w_{{.*}} :
// ... one inner iteration while j < j_end ...
// CHECK:          } else {
// CHECK:            arith.cmpi slt, %j_1, %j_end_1 : index
// CHECK:              memref.store %q, %x[%c1]
// CHECK:              arith.addi %j_1, %j_step_1 : index
// ... or the end of the outer iteration.
// CHECK:            } else {
// CHECK:              %u = arith.mulf %t_1, %w_1 : f64
// CHECK:              arith.addi %i_1, %c1 : index
// CHECK:        } attributes {checkpoint = #ad.schedule<binomial, snapshots = 2>}
// CHECK-NOT:    checkpoint_split

// The flat loop is a checkpointed rev.while: its steps are counted first,
// then reversed under the schedule.
// CKPT:       rev.func @grid.ckpt(
// CKPT:         anc.snapshot %snapshots
// CKPT:         rev.call @grid.ckpt.step0.plain(
// CKPT:         rev.inc
// CKPT:         anc.restore %snapshots
// CKPT:         anc.drop %snapshots
// CKPT:         ad.next #ad.schedule<binomial, snapshots = 2> %frames, %trip

// -----

func.func @two(%x: memref<4xf64>, %l: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{a loop split at primitive steps must contain exactly one inner for loop at the top level of its body}}
  scf.for %i = %c0 to %l step %c1 {
    scf.for %j = %c0 to %l step %c1 {
    }
    scf.for %k = %c0 to %l step %c1 {
    }
  } {checkpoint = #ad.schedule<bisection>, checkpoint_split = "work"}
  func.return
}
