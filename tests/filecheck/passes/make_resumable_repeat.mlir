// RUN: rev-opt %s --verify-diagnostics -p 'make-resumable{functions=f base=8}' | filecheck %s
// RUN: rev-opt %s --verify-diagnostics -p 'ad-checkpoint{functions=f policy=bisection base=8}' | filecheck %s --check-prefix=CKPT

// With base=8 an iteration of the machine runs up to eight segments, and a
// segment that jumps back to itself (the body of a loop with no loop or
// call inside) repeats in a loop of its own instead of going back through
// the dispatch: each repetition is still one counted segment.
func.func @f(%x: memref<?xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    %t = arith.addf %acc, %w : f64
    scf.yield %t : f64
  }
  %k = arith.constant 0.0 : f64
  %u = scf.while (%y = %s) : (f64) -> f64 {
    %c = arith.cmpf ogt, %y, %k : f64
    scf.condition(%c) %y : f64
  } do {
  ^bb0(%y1: f64):
    %h = arith.constant 0.5 : f64
    %m = arith.mulf %y1, %h : f64
    %d = arith.constant 1.0 : f64
    %e = arith.subf %m, %d : f64
    scf.yield %e : f64
  }
  func.return %u : f64
}

// The group: up to eight segments while the machine runs; what is left of
// the eight is the budget of a repeated segment.
// CHECK:      scf.while (%pc = %{{.*}}, %i = %{{.*}}, %acc = %{{.*}}) : (index, index, f64)
// CHECK:        } do {
// CHECK:          scf.while (%[[COUNT:.*]] = %{{.*}}, %{{.*}} = %pc_1, %{{.*}} = %i_1, %{{.*}} = %acc_1)
// CHECK:            %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK:            arith.cmpi slt, %{{.*}}, %[[EIGHT]] : index
// CHECK:          } do {
// CHECK:          ^bb0(%[[C:.*]]: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: f64):
// CHECK:            %[[LIMIT:.*]] = arith.constant 8 : index
// CHECK:            %[[BUDGET:.*]] = arith.subi %[[LIMIT]], %[[C]] : index
// The for body repeats while the for's own test holds and the budget lasts;
// it carries the slots only (no program point is chosen per iteration).
// CHECK:              %[[J:[0-9]+]], %{{.*}}, %[[IV:[0-9]+]], %{{.*}} = scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (index, index, index, f64) -> (index, index, index, f64) {
// CHECK-NEXT:           %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[BUDGET]] : index
// CHECK-NEXT:           %[[TEST:.*]] = arith.cmpi slt, %{{.*}}, %n : index
// CHECK-NEXT:           %[[GO:.*]] = arith.andi %[[IN]], %[[TEST]] : i1
// CHECK-NEXT:           scf.condition(%[[GO]])
// CHECK:              } do {
// CHECK:                %v = memref.load %x[%{{.*}}] : memref<?xf64>
// CHECK:                %t = arith.addf %{{.*}}, %w : f64
// CHECK-NOT:            arith.select
// CHECK:                scf.yield
// CHECK-NEXT:         }
// Each repetition counted; then the body again (the group is full) or the
// code after the loop.
// CHECK-NEXT:         arith.addi %[[C]], %[[J]] : index
// CHECK-NEXT:         %[[STAY:.*]] = arith.cmpi slt, %[[IV]], %n : index
// CHECK-NEXT:         scf.if %[[STAY]]
// The while body has no test of its own before it runs: the next program
// point is selected by its condition at the end of each repetition.
// CHECK:                scf.while
// CHECK-NEXT:             arith.cmpi slt, %{{.*}}, %[[BUDGET]] : index
// CHECK-NEXT:             %[[HERE:.*]] = arith.constant 3 : index
// CHECK-NEXT:             arith.cmpi eq, %{{.*}}, %[[HERE]] : index
// CHECK:                %e = arith.subf %m, %d : f64
// CHECK:                %[[AGAIN:.*]] = arith.cmpf ogt, %e, %{{.*}} : f64
// CHECK:                arith.select %[[AGAIN]], %{{.*}}, %{{.*}} : index
// CHECK:      } attributes {checkpoint = #ad.schedule<bisection>}

// In tape mode the repeated for body saves nothing per repetition: the
// induction variable, the accumulator and the count are updated in place.
// CKPT:       rev.func @f.ckpt.step0(
// CKPT:         rev.while
// CKPT:           rev.while
// CKPT:           } do {
// CKPT:             %v = memref.load
// CKPT-NOT:         anc.push
// CKPT:             rev.add
// CKPT-NOT:         anc.push
// CKPT:             rev.yield
