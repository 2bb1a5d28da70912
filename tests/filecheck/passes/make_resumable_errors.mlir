// RUN: rev-opt %s --verify-diagnostics --split-input-file -p 'make-resumable{functions=f}'
// RUN: not rev-opt %s --split-input-file -p 'make-resumable{functions=f policy=revolve}' 2>&1 | filecheck %s --check-prefix=POLICY
// RUN: not rev-opt %s --split-input-file -p 'make-resumable{functions=f policy=binomial}' 2>&1 | filecheck %s --check-prefix=BUDGET
// RUN: not rev-opt %s --split-input-file -p 'make-resumable{functions=f base=0}' 2>&1 | filecheck %s --check-prefix=BASE
// RUN: not rev-opt %s --split-input-file -p 'make-resumable' 2>&1 | filecheck %s --check-prefix=NAMES
// RUN: not rev-opt %s --split-input-file -p 'ad-checkpoint{functions=h policy=bisection}' 2>&1 | filecheck %s --check-prefix=REV
// RUN: not rev-opt %s --split-input-file -p 'make-resumable{functions=f base=9223372036854775808}' 2>&1 | filecheck %s --check-prefix=BASE
// RUN: not rev-opt %s --split-input-file -p 'make-resumable{functions=f policy=binomial snapshots=9223372036854775808}' 2>&1 | filecheck %s --check-prefix=WORD
// RUN: not rev-opt %s --split-input-file -p 'ad-checkpoint{policy=bisection}' 2>&1 | filecheck %s --check-prefix=UNNAMED

// POLICY: make-resumable: unknown checkpoint scheme 'revolve'; expected one of store_all, bisection, binomial
// BUDGET: make-resumable: 'snapshots = n' (n >= 1) is required by binomial and only by binomial
// BASE: make-resumable: base must be at least 1 and at most 9223372036854775807, not {{0|9223372036854775808}}
// WORD: make-resumable: snapshots = 9223372036854775808 is beyond the cursor's 64-bit words (at most 9223372036854775807)
// UNNAMED: ad-checkpoint: policy= checkpoints the functions it names, e.g. ad-checkpoint{functions=f policy=bisection}
// NAMES: make-resumable: name the functions to rewrite, e.g. make-resumable{functions=f}
// REV: ad-checkpoint: 'rev.func' at {{.*}}make_resumable_errors.mlir:{{[0-9]+}}:1: policy= checkpoints an ordinary func.func, and @h is not one (mark a loop of a rev.func with a schedule instead)

// A function of a recursive cycle is laid out once, so its array
// parameters are the same arrays at every call: a recursive call that
// passes another array is rejected where it is made.
func.func @f(%x: memref<4xf64>, %y: memref<4xf64>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (index) {
    scf.yield %c0 : index
  } else {
    %m = arith.subi %n, %c1 : index
    // expected-error@+1 {{a resumable function cannot pass another array as argument #0 of @f: a function of a recursive cycle is laid out once, so each array parameter is one array at every call}}
    %k = func.call @f(%y, %x, %m) : (memref<4xf64>, memref<4xf64>, index) -> index
    scf.yield %k : index
  }
  func.return %r : index
}
rev.func @h(%x: f64) {
  rev.return %x : f64
}

// -----

// The same through mutual recursion, at the call that passes the other array.
func.func @g(%x: memref<4xf64>, %y: memref<4xf64>, %n: index) -> index {
  // expected-error@+1 {{cannot pass another array as argument #1 of @f}}
  %k = func.call @f(%x, %x, %n) : (memref<4xf64>, memref<4xf64>, index) -> index
  func.return %k : index
}
func.func @f(%x: memref<4xf64>, %y: memref<4xf64>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (index) {
    scf.yield %c0 : index
  } else {
    %k = func.call @g(%x, %y, %n) : (memref<4xf64>, memref<4xf64>, index) -> index
    scf.yield %k : index
  }
  func.return %r : index
}

// -----

// A name that is not an ordinary function with a body.
// expected-error@+1 {{@f is not a function defined in the module: only func.func functions with a body can be made resumable}}
func.func private @f(%n: index) -> index

// -----

// Frame stacks are make-resumable's own, written for the calls of a
// recursion: hand-written ones in its input are refused where they are.
func.func @f(%x: f64) -> f64 {
  // expected-error@+1 {{cannot be made resumable: frame stacks are what make-resumable writes for the calls of a recursion, and the ordinary code it lays out has none (write the recursion as calls)}}
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.copy_push %s, %x : !anc.stack<f64>
  %y = anc.pop %s : !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  func.return %y : f64
}
