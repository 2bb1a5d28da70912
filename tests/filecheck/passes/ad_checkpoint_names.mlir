// RUN: not rev-opt %s -p 'ad-checkpoint{functions=g policy=bisection}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not rev-opt %s -p 'ad-checkpoint{functions=k policy=bisection}' 2>&1 | filecheck %s --check-prefix=TAKEN
// RUN: not rev-opt %s -p 'ad-checkpoint{functions=m policy=bisection}' 2>&1 | filecheck %s --check-prefix=STEP
// RUN: not rev-opt %s -p 'ad-checkpoint{functions=p_adj policy=bisection}' 2>&1 | filecheck %s --check-prefix=RULE
// RUN: not rev-opt %s -p 'ad-checkpoint{functions=twice policy=bisection}' 2>&1 | filecheck %s --check-prefix=CALLED

// A function named like a gradient, @g.ckpt, with no @g: @g is not an
// ordinary function, whatever else the module holds.
// MISSING: error: ad-checkpoint: policy= checkpoints an ordinary func.func, and @g is not one (mark a loop of a rev.func with a schedule instead)
func.func @g.ckpt(%x: f64) -> f64 {
  func.return %x : f64
}

// @k's checkpointed gradient would take the name of a function of the
// module: an error at that function, not a run that builds no gradient.
// TAKEN: error: ad-checkpoint: 'func.func' at {{.*}}ad_checkpoint_names.mlir:[[# @LINE + 4]]:1: @k.ckpt is the name of @k's checkpointed gradient, which this run builds; rename this function
func.func @k(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @k.ckpt(%x: f64) -> f64 {
  func.return %x : f64
}

// @m's machine is one checkpointed loop, whose step's adjoint is
// @m.ckpt.step0.adj: taken, refused at the function that has the name
// before @m is rewritten.
// STEP: error: ad-checkpoint: 'rev.func' at {{.*}}ad_checkpoint_names.mlir:[[# @LINE + 4]]:1: @m.ckpt.step0.adj is the name of the adjoint of the outlined step of @m's checkpointed loop #0, which this run builds; rename this function
func.func @m(%x: f64) -> f64 {
  func.return %x : f64
}
rev.func @m.ckpt.step0.adj(%x: f64) {
  rev.return %x : f64
}

// @p_adj is the adjoint rule of the primitive @p, and @twice a function
// it calls: the derivative passes call both as the ordinary code they
// are, so neither is made resumable and reversibilized (refused at the
// function, before the module changes).
// RULE: error: ad-checkpoint: 'func.func' at {{.*}}ad_checkpoint_names.mlir:[[# @LINE + 3]]:1: @p_adj is a primitive's rule (rev.extern) or called by one, which the derivative passes call as the ordinary code it is: policy= cannot rewrite it
// CALLED: error: ad-checkpoint: 'func.func' at {{.*}}ad_checkpoint_names.mlir:[[# @LINE + 12]]:1: @twice is a primitive's rule (rev.extern) or called by one, which the derivative passes call as the ordinary code it is: policy= cannot rewrite it
rev.extern @p : (f64) -> f64 {symbol = "sin", adjoint = @p_adj}
func.func @p_adj(%x: f64, %g: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%y = %g) -> (f64) {
    %d = func.call @twice(%y, %x) : (f64, f64) -> f64
    scf.yield %d : f64
  }
  func.return %r : f64
}
func.func @twice(%y: f64, %x: f64) -> f64 {
  %d = arith.mulf %y, %x : f64
  %e = arith.addf %d, %d : f64
  func.return %e : f64
}
