// RUN: rev-opt %s --verify-diagnostics -p 'make-resumable{functions=f}' | filecheck %s
// RUN: rev-opt %s --verify-diagnostics -p 'ad-checkpoint{functions=f policy=bisection}' -o %t
// RUN: filecheck %s --check-prefix=CKPT < %t
// RUN: rev-run %t -e f.ckpt --args 0.5 3 1 0.0 [] [] 0.0 1.0 [] --backend native > %t.native
// RUN: rev-run %t -e f.ckpt --args 0.5 3 1 0.0 [] [] 0.0 1.0 [] --backend interpreter > %t.interpreter
// RUN: not rev-run %t -e f.ckpt --args 0.5 3 0 0.0 [] [] 0.0 1.0 [] --backend native 2>> %t.native
// RUN: not rev-run %t -e f.ckpt --args 0.5 3 0 0.0 [] [] 0.0 1.0 [] --backend interpreter 2>> %t.interpreter
// RUN: diff %t.native %t.interpreter
// RUN: filecheck %s --check-prefix=GRAD < %t.native

// A check in the code a machine lays out (here a callee's, as ordinary
// code's `range()` checks its run-time step) is carried into the step that
// runs it, as the machine's own checks are: it reads an i1 and changes no
// state, so it needs no slot of its own.  reversibilize keeps it as a check
// that runs forwards only, so a checkpointed gradient stops there, on both
// engines, wherever its schedule recomputes the step.
func.func @f(%x: f64, %n: index, %s: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f64) {
    %t = func.call @g(%acc, %s) : (f64, index) -> f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
func.func @g(%x: f64, %s: index) -> f64 {
  %c0 = arith.constant 0 : index
  %ok = arith.cmpi ne, %s, %c0 : index
  cf.assert %ok, "s must not be zero"
  %y = math.sin %x : f64
  func.return %y : f64
}

// CHECK:      func.func @f(
// CHECK:        scf.while
// CHECK:          %ok = arith.cmpi ne, %s, %c0{{.*}} : index
// CHECK-NEXT:     cf.assert %ok, "s must not be zero"
// CHECK-NEXT:     %y = math.sin %{{.*}} : f64
// CHECK:        } attributes {checkpoint = #ad.schedule<bisection>}

// CKPT:       rev.func @f.ckpt.step0.plain(
// CKPT:         rev.safe {
// CKPT-NEXT:      cf.assert %ok, "s must not be zero"
// CKPT-NEXT:    }

// The gradient of sin∘sin∘sin at 0.5 with s = 1 (the adjoint of x), and
// s = 0 stopping at the check.
// GRAD:       [] : !anc.stack<index>
// GRAD-NEXT:  0.697266435850241 : f64
// GRAD:       error: 'cf.assert' in @f: s must not be zero
