// RUN: rev-opt %s --verify-diagnostics -p 'ad-checkpoint{functions=inner policy=bisection}' | filecheck %s --check-prefix=FIRST
// RUN: rev-opt %s --verify-diagnostics -p 'ad-checkpoint{functions=inner policy=bisection},ad-checkpoint{functions=outer policy=binomial snapshots=2}' -o %t
// RUN: filecheck %s --check-prefix=SECOND < %t
// RUN: rev-run %t -e outer.ckpt --args 0.7 0.9 0.0 [] [] 0.0 0.0 1.0 [] --backend native > %t.native
// RUN: rev-run %t -e outer.ckpt --args 0.7 0.9 0.0 [] [] 0.0 0.0 1.0 [] --backend interpreter > %t.interpreter
// RUN: diff %t.native %t.interpreter
// RUN: filecheck %s --check-prefix=GRAD < %t.native
// RUN: not rev-opt %s -p 'ad-checkpoint{functions=outer policy=bisection},ad-checkpoint{functions=outer policy=bisection}' 2>&1 | filecheck %s --check-prefix=TWICE

// ad-checkpoint with a policy converts only the functions it names, so a
// later run may name a caller of one of them: the caller, still ordinary,
// calls a private copy of the converted function as written, tagged with
// the function it copies, which the later run lays out in its machine.
func.func @inner(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %x : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %k = func.call @inner(%x, %m) : (f64, index) -> f64
    %s = math.sin %k : f64
    %t = arith.mulf %s, %x : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
func.func @outer(%x: f64, %a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%y = %x) -> (f64) {
    %k = func.call @inner(%y, %c2) : (f64, index) -> f64
    %c = math.cos %k : f64
    %d = arith.mulf %c, %a : f64
    %e = arith.addf %d, %y : f64
    scf.yield %e : f64
  }
  func.return %r : f64
}

// FIRST:      rev.func @inner(
// FIRST:      rev.func @inner.ckpt(
// FIRST:      func.func private @inner.ordinary(%x: f64, %n: index) -> f64 attributes {rev.ordinary_copy_of = "inner"} {
// FIRST-NOT:    anc.
// FIRST:          %k = func.call @inner.ordinary(%x, %m) : (f64, index) -> f64
// FIRST:      func.func @outer(%x: f64, %a: f64) -> f64 {
// FIRST:          %k = func.call @inner.ordinary(%y, %c2) : (f64, index) -> f64

// The copy is laid out in @outer's machine, then erased: nothing calls it.
// SECOND-NOT: @inner.ordinary
// SECOND:     rev.func @outer.ckpt(
// SECOND-NOT: @inner.ordinary

// The gradient of outer(0.7, 0.9) = y₃, y_{i+1} = cos(inner(y_i, 2))·a + y_i:
// central differences of the program in float64 give 0.0055182704 and
// 0.0100811199 (h = 1e-6).
// GRAD:      0.7 : f64
// GRAD-NEXT: 0.9 : f64
// GRAD-NEXT: 0.0 : f64
// GRAD-NEXT: [] : !anc.stack<f64>
// GRAD-NEXT: [] : !anc.stack<index>
// GRAD-NEXT: 0.005518270{{[0-9]*}} : f64
// GRAD-NEXT: 0.01008111989{{[0-9]*}} : f64

// TWICE: error: ad-checkpoint: 'rev.func' at {{.*}}ad_checkpoint_runs.mlir:29:1: @outer was checkpointed by an earlier run, whose gradient is @outer.ckpt; a function is checkpointed under one policy, once
