// RUN: rev-opt %s --verify-diagnostics --split-input-file

// One chunk per static reversibility rule (RULES in revmlir/verifier.py).
// Each diagnostic names the rule and points at the line and column of the op
// that breaks it, counted in the whole file.

// linearity: a state version consumed twice.
rev.func @consumed_twice(%x: f64, %y: f64) {
  %x1 = rev.neg %x : f64
  // expected-error-re@+1 {{[linearity] %x is consumed twice: by 'rev.neg' at {{.*}}invalid.mlir:9:3 and by 'rev.add'}}
  %x2 = rev.add %x, %y : f64
  rev.return %x2, %y : f64, f64
}

// -----

// linearity: a state version never consumed (here a function argument).
// expected-error@+1 {{'rev.func': [linearity] %x is never consumed}}
rev.func @never_consumed(%x: f64) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  rev.return %t : f64
}

// -----

// linearity: an ancilla that is not freed.
rev.func @ancilla_not_freed(%x: f64) {
  %zero = arith.constant 0.0 : f64
  // expected-error@+1 {{'anc.alloc': [linearity] the ancilla %t allocated here is not freed on every path}}
  %t = anc.alloc %zero : f64
  rev.return %x : f64
}

// -----

// linearity: an ancilla freed on one path (else) but not on the other (then).
rev.func @ancilla_not_freed_on_a_path(%x: f64) {
  %zero = arith.constant 0.0 : f64
  %x1 = rev.if (%x) : f64 pre {
  ^bb0(%p: f64):
    %gt = arith.cmpf ogt, %p, %zero : f64
    rev.cond %gt
  } then {
  ^bb0(%a: f64):
    // expected-error@+1 {{'anc.alloc': [linearity] the ancilla %u allocated here is not freed on every path}}
    %u = anc.alloc %zero : f64
    rev.yield %a : f64
  } else {
  ^bb0(%b: f64):
    %v = anc.alloc %zero : f64
    anc.free %v, %zero : f64
    rev.yield %b : f64
  }
  rev.return %x1 : f64
}

// -----

// linearity: updating a value that is not state (a constant).
rev.func @update_non_state(%x: f64) {
  %c = arith.constant 1.0 : f64
  // expected-error@+1 {{[linearity] 'rev.add' updates %c, which is not a state value; allocate an ancilla with anc.alloc}}
  %c1 = rev.add %c, %x : f64
  rev.return %x : f64
}

// -----

// capture: a region consumes state defined outside it.
rev.func @capture(%x: f64, %y: f64) {
  %y1 = rev.inv (%y) : f64 {
  ^bb0(%a: f64):
    // expected-error@+1 {{[capture] 'rev.neg' consumes %x, which is defined outside its region}}
    %x1 = rev.neg %x : f64
    rev.yield %a : f64
  }
  rev.return %x, %y1 : f64, f64
}

// -----

// stale-read: reading a version after it was consumed.
rev.func @stale_read(%x: f64, %y: f64) {
  %x1 = rev.neg %x : f64
  // expected-error-re@+1 {{[stale-read] 'rev.add' reads %x after 'rev.neg' at {{.*}}invalid.mlir:85:3 consumed it}}
  %y1 = rev.add %y, %x : f64
  rev.return %x1, %y1 : f64, f64
}

// -----

// stale-read: a region reading the outer version its own op consumes.
rev.func @stale_read_in_region(%x: f64) {
  // expected-error-re@+3 {{[stale-read] 'rev.add' reads %x inside 'rev.inv' at {{.*}}invalid.mlir:96:3, which consumes it}}
  %x1 = rev.inv (%x) : f64 {
  ^bb0(%a: f64):
    %a1 = rev.add %a, %x : f64
    rev.yield %a1 : f64
  }
  rev.return %x1 : f64
}

// -----

// self-read: x -= x*x reads the target.
rev.func @self_read(%x: f64) {
  %sq = arith.mulf %x, %x : f64
  // expected-error@+1 {{[self-read] 'rev.sub' reads its own target %x}}
  %x1 = rev.sub %x, %sq : f64
  rev.return %x1 : f64
}

// -----

// self-read: x -= x directly.
rev.func @self_read_direct(%x: f64) {
  // expected-error@+1 {{[self-read] 'rev.sub' reads its own target %x}}
  %x1 = rev.sub %x, %x : f64
  rev.return %x1 : f64
}

// -----

// memory-read: an element loaded before a write to the memref, used after it.
rev.func @memory_read(%m: memref<4xf64>, %x: f64) {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xf64>
  %e = rev.take %m[%c0] : memref<4xf64>
  %e1 = rev.neg %e : f64
  rev.put %e1, %m[%c0] : memref<4xf64>
  // expected-error-re@+1 {{[memory-read] 'rev.add' uses an element of %m loaded before 'rev.put' at {{.*}}invalid.mlir:131:3 wrote %m}}
  %x1 = rev.add %x, %v : f64
  rev.return %x1 : f64
}

// -----

// alias: the same element (equal constant indices) taken twice.
rev.func @alias_take_twice(%m: memref<4xf64>) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : index
  %a = rev.take %m[%c1] : memref<4xf64>
  // expected-error-re@+1 {{[alias] element of %m taken again while borrowed by 'rev.take' at {{.*}}invalid.mlir:143:3}}
  %b = rev.take %m[%one] : memref<4xf64>
  rev.put %b, %m[%one] : memref<4xf64>
  rev.put %a, %m[%c1] : memref<4xf64>
  rev.return
}

// -----

// alias: a borrowed element read with memref.load.
rev.func @alias_read_borrowed(%m: memref<4xf64>, %x: f64) {
  %c2 = arith.constant 2 : index
  %e = rev.take %m[%c2] : memref<4xf64>
  // expected-error-re@+1 {{'memref.load': [alias] reads an element of %m borrowed by 'rev.take' at {{.*}}invalid.mlir:156:3}}
  %v = memref.load %m[%c2] : memref<4xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %m[%c2] : memref<4xf64>
  rev.return %x : f64
}

// -----

// alias: an array passed to a call while one of its elements is borrowed:
// the callee meets the element borrowed (g(x, x[0]) in Python).
rev.func @bump_and_add(%p: memref<?xf64>, %s: f64) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %e = rev.take %p[%c0] : memref<?xf64>
  %e1 = rev.add %e, %one : f64
  rev.put %e1, %p[%c0] : memref<?xf64>
  %v = memref.load %p[%c0] : memref<?xf64>
  %s1 = rev.add %s, %v : f64
  rev.return %s1 : f64
}
rev.func @pass_beside_its_element(%x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %e = rev.take %x[%c0] : memref<?xf64>
  // expected-error-re@+1 {{'rev.call': [alias] passes %x to @bump_and_add while 'rev.take' at {{.*}}invalid.mlir:{{[0-9]+}}:3 borrows one of its elements; the arguments of a call must not alias: pass a copy of the element}}
  %e1 = rev.call @bump_and_add(%x, %e) : (memref<?xf64>, f64) -> f64
  rev.put %e1, %x[%c0] : memref<?xf64>
  rev.return
}

// -----

// borrow: rev.put without a rev.take.
rev.func @put_without_take(%m: memref<4xf64>, %x: f64) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  // expected-error@+1 {{[borrow] 'rev.put' gives back an element of %m that was not taken with the same indices in this block}}
  rev.put %t, %m[%c0] : memref<4xf64>
  rev.return %x : f64
}

// -----

// borrow: rev.put with other index values than its rev.take.
rev.func @put_other_indices(%m: memref<4xf64>, %i: index, %j: index) {
  %e = rev.take %m[%i] : memref<4xf64>
  // expected-error@+1 {{[borrow] 'rev.put' gives back an element of %m that was not taken with the same indices in this block}}
  rev.put %e, %m[%j] : memref<4xf64>
  rev.return %i, %j : index, index
}

// -----

// borrow: rev.take without a rev.put (the element is freed instead).
rev.func @take_without_put(%m: memref<4xf64>, %x: f64) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  // expected-error@+1 {{'rev.take': [borrow] the element taken here is never put back with rev.put}}
  %e = rev.take %m[%c0] : memref<4xf64>
  anc.free %e, %zero : f64
  rev.return %x : f64
}

// -----

// irreversible-op: memref.store in a rev.func.
rev.func @irreversible_op(%m: memref<4xf64>, %x: f64) {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{[irreversible-op] 'memref.store' is not reversible}}
  memref.store %x, %m[%c0] : memref<4xf64>
  rev.return %x : f64
}

// -----

// condition: a rev op inside a pre region.
rev.func @condition(%x: f64) {
  %zero = arith.constant 0.0 : f64
  %x1 = rev.if (%x) : f64 pre {
  ^bb0(%p: f64):
    // expected-error@+1 {{[condition] 'rev.neg' cannot appear in a condition}}
    %p1 = rev.neg %p : f64
    %gt = arith.cmpf ogt, %p1, %zero : f64
    rev.cond %gt
  } then {
  ^bb0(%a: f64):
    rev.yield %a : f64
  } else {
  ^bb0(%b: f64):
    rev.yield %b : f64
  }
  rev.return %x1 : f64
}

// -----

// condition: a rev op inside a while post region.
rev.func @condition_while(%n: i64) {
  %zero = arith.constant 0 : i64
  %n1 = rev.while (%n) : i64 pre {
  ^bb0(%p: i64):
    %gt = arith.cmpi sgt, %p, %zero : i64
    rev.cond %gt
  } post {
  ^bb0(%q: i64):
    // expected-error@+1 {{[condition] 'rev.inc' cannot appear in a condition}}
    %q1 = rev.inc %q : i64
    %lt = arith.cmpi slt, %q1, %zero : i64
    rev.cond %lt
  } do {
  ^bb0(%b: i64):
    %b1 = rev.dec %b : i64
    rev.yield %b1 : i64
  }
  rev.return %n1 : i64
}

// -----

// safe: a rev op inside rev.safe.
rev.func @safe(%x: f64) {
  rev.safe {
    %zero = arith.constant 0.0 : f64
    // expected-error@+1 {{[safe] 'anc.alloc' changes reversible state inside rev.safe}}
    %t = anc.alloc %zero : f64
    anc.free %t, %zero : f64
  }
  rev.return %x : f64
}

// -----

// safe: a count into an array that reversible code reads is no counter.
rev.func @count_into_state(%x: f64, %c: memref<1xf64>) {
  %i = arith.constant 0 : index
  %v = memref.load %c[%i] : memref<1xf64>
  %x1 = rev.add %x, %v : f64
  rev.safe {
    %one = arith.constant 1.0 : f64
    %old = memref.load %c[%i] : memref<1xf64>
    %new = arith.addf %old, %one : f64
    // expected-error@+1 {{[safe] 'memref.store' writes %c, which the reversible program owns; rev.safe may only write memory it allocates, or a counter}}
    memref.store %new, %c[%i] : memref<1xf64>
  }
  rev.return %x1 : f64
}

// -----

// safe: a callee's counter gets only a counter of the caller.
rev.func @counts(%c: memref<1xf64>) {
  rev.safe {
    %i = arith.constant 0 : index
    %one = arith.constant 1.0 : f64
    %old = memref.load %c[%i] : memref<1xf64>
    %new = arith.addf %old, %one : f64
    memref.store %new, %c[%i] : memref<1xf64>
  }
  rev.return
}
rev.func @passes_state(%x: f64, %c: memref<1xf64>) {
  %i = arith.constant 0 : index
  %v = memref.load %c[%i] : memref<1xf64>
  %x1 = rev.add %x, %v : f64
  // expected-error@+1 {{[safe] 'rev.call' passes %c to @counts, which counts into it in rev.safe}}
  rev.call @counts(%c) : (memref<1xf64>) -> ()
  rev.return %x1 : f64
}

// -----

// call: an unknown callee.
rev.func @unknown_callee(%x: f64) {
  // expected-error@+1 {{[call] 'rev.call' refers to unknown function @nowhere}}
  %x1 = rev.call @nowhere(%x) : (f64) -> f64
  rev.return %x1 : f64
}

// -----

// call: argument types that do not match the callee.
rev.func @wrong_arg_types(%x: f64) {
  // expected-error@+1 {{[call] 'rev.call' passes (f64) to @takes_i64, which takes (i64)}}
  %x1 = rev.call @takes_i64(%x) : (f64) -> f64
  rev.return %x1 : f64
}
rev.func @takes_i64(%n: i64) {
  rev.return %n : i64
}

// -----

// call: the callee is not a rev.func.
func.func @not_reversible(%x: f64) -> f64 {
  func.return %x : f64
}
rev.func @uncalls_a_func_func(%x: f64) {
  // expected-error@+1 {{[call] 'rev.uncall' target @not_reversible is a 'func.func', not a 'rev.func'}}
  %x1 = rev.uncall @not_reversible(%x) : (f64) -> f64
  rev.return %x1 : f64
}

// -----

// call: an uncall runs the module's @f.inv, which takes other arguments.
rev.func @f(%y: f64, %a: f64) {
  %y1 = rev.add %y, %a : f64
  rev.return %y1, %a : f64, f64
}
rev.func @f.inv(%y: f64) {
  rev.return %y : f64
}
rev.func @uncalls_f(%y: f64, %a: f64) {
  // expected-error@+1 {{[call] 'rev.uncall' of @f runs the module's @f.inv, which must be a 'rev.func' of @f's type (f64, f64) -> (f64, f64), not a 'rev.func' of type (f64) -> f64}}
  %y1, %a1 = rev.uncall @f(%y, %a) : (f64, f64) -> (f64, f64)
  rev.return %y1, %a1 : f64, f64
}

// -----

// call: an uncall runs the module's @f.inv, which is not a rev.func.
rev.func @f(%y: f64, %a: f64) {
  %y1 = rev.add %y, %a : f64
  rev.return %y1, %a : f64, f64
}
func.func @f.inv(%y: f64, %a: f64) -> (f64, f64) {
  func.return %y, %a : f64, f64
}
rev.func @uncalls_f(%y: f64, %a: f64) {
  // expected-error@+1 {{[call] 'rev.uncall' of @f runs the module's @f.inv, which must be a 'rev.func' of @f's type (f64, f64) -> (f64, f64), not a 'func.func' of type (f64, f64) -> (f64, f64)}}
  %y1, %a1 = rev.uncall @f(%y, %a) : (f64, f64) -> (f64, f64)
  rev.return %y1, %a1 : f64, f64
}

// -----

// call: one array passed for two parameters of a callee that writes one: @add
// would read q[0] after adding to p[0], the same element.
rev.func @add(%p: memref<?xf64>, %q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %q[%c0] : memref<?xf64>
  %e = rev.take %p[%c0] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %p[%c0] : memref<?xf64>
  rev.return
}
rev.func @add_to_itself(%x: memref<?xf64>) {
  // expected-error@+1 {{[call] 'rev.call' passes %x to @add twice (arguments #0 and #1), and @add writes argument #0; the arguments of a call must not alias: pass a copy of one of them}}
  rev.call @add(%x, %x) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// -----

// call: the same through an uncall, and through a view of the array.
rev.func @add(%p: memref<?xf64>, %q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %q[%c0] : memref<?xf64>
  %e = rev.take %p[%c0] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %p[%c0] : memref<?xf64>
  rev.return
}
rev.func @subtract_from_a_view(%x: memref<2xf64>) {
  %y = "memref.cast"(%x) : (memref<2xf64>) -> memref<?xf64>
  %z = "memref.cast"(%x) : (memref<2xf64>) -> memref<?xf64>
  // expected-error@+1 {{[call] 'rev.uncall' passes %y and %z, views of one array, to @add (arguments #0 and #1), and @add writes argument #0}}
  rev.uncall @add(%y, %z) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// -----

// call: a callee that writes one parameter by a swap with a state value.
rev.func @swap_in(%p: memref<?xf64>, %q: memref<?xf64>, %v: f64) {
  %c0 = arith.constant 0 : index
  %e = rev.take %p[%c0] : memref<?xf64>
  %e1, %v1 = rev.swap %e, %v : f64
  rev.put %e1, %p[%c0] : memref<?xf64>
  rev.return %v1 : f64
}
rev.func @swap_into_itself(%x: memref<?xf64>, %v: f64) {
  // expected-error@+1 {{[call] 'rev.call' passes %x to @swap_in twice (arguments #0 and #1), and @swap_in writes argument #0}}
  %v1 = rev.call @swap_in(%x, %x, %v) : (memref<?xf64>, memref<?xf64>, f64) -> f64
  rev.return %v1 : f64
}

// -----

// call: a callee that negates an element of its second parameter.
rev.func @negate(%p: memref<?xf64>, %q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %e = rev.take %q[%c0] : memref<?xf64>
  %e1 = rev.neg %e : f64
  rev.put %e1, %q[%c0] : memref<?xf64>
  rev.return
}
rev.func @negate_itself(%x: memref<?xf64>) {
  // expected-error@+1 {{[call] 'rev.call' passes %x to @negate twice (arguments #0 and #1), and @negate writes argument #1}}
  rev.call @negate(%x, %x) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// -----

// call: a callee that puts a new value where an element was.
rev.func @replace(%p: memref<?xf64>, %q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %e = rev.take %p[%c0] : memref<?xf64>
  anc.free %e, %zero : f64
  %t = anc.alloc %one : f64
  rev.put %t, %p[%c0] : memref<?xf64>
  rev.return
}
rev.func @replace_in_itself(%x: memref<?xf64>) {
  // expected-error@+1 {{[call] 'rev.call' passes %x to @replace twice (arguments #0 and #1), and @replace writes argument #0}}
  rev.call @replace(%x, %x) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// -----

// call: the alias reaches the writer through a middle function, which
// passes both of its parameters on.
rev.func @add(%p: memref<?xf64>, %q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %q[%c0] : memref<?xf64>
  %e = rev.take %p[%c0] : memref<?xf64>
  %e1 = rev.add %e, %v : f64
  rev.put %e1, %p[%c0] : memref<?xf64>
  rev.return
}
rev.func @middle(%p: memref<?xf64>, %q: memref<?xf64>) {
  rev.call @add(%p, %q) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}
rev.func @add_to_itself_in_the_middle(%x: memref<?xf64>) {
  // expected-error@+1 {{[call] 'rev.call' passes %x to @middle twice (arguments #0 and #1), and @middle writes argument #0}}
  rev.call @middle(%x, %x) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// -----

// call: a callee that only accumulates into both parameters, but holds p[0]
// borrowed while it takes q[0]: on one array native code would load the
// element twice and store it twice, losing one update.
rev.func @interleave(%p: memref<?xf64>, %q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %e = rev.take %p[%c0] : memref<?xf64>
  %f = rev.take %q[%c0] : memref<?xf64>
  %e1 = rev.add %e, %one : f64
  %f1 = rev.add %f, %two : f64
  rev.put %f1, %q[%c0] : memref<?xf64>
  rev.put %e1, %p[%c0] : memref<?xf64>
  rev.return
}
rev.func @interleave_itself(%x: memref<?xf64>) {
  // expected-error-re@+1 {{[call] 'rev.call' passes %x to @interleave twice (arguments #0 and #1), and @interleave accumulates into both, but 'rev.take' at {{.*}}invalid.mlir:{{[0-9]+}}:3 holds its element across more than its own update (another borrow or a call is open before its rev.put)}}
  rev.call @interleave(%x, %x) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// -----

// call: the same, the other borrow being a call's, in a function the
// aliased call reaches through a middle one.
rev.func @bump(%q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f64
  %f = rev.take %q[%c0] : memref<?xf64>
  %f1 = rev.add %f, %two : f64
  rev.put %f1, %q[%c0] : memref<?xf64>
  rev.return
}
rev.func @around_a_call(%p: memref<?xf64>, %q: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %e = rev.take %p[%c0] : memref<?xf64>
  rev.call @bump(%q) : (memref<?xf64>) -> ()
  %e1 = rev.add %e, %one : f64
  rev.put %e1, %p[%c0] : memref<?xf64>
  rev.return
}
rev.func @through(%p: memref<?xf64>, %q: memref<?xf64>) {
  rev.call @around_a_call(%p, %q) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}
rev.func @around_a_call_itself(%x: memref<?xf64>) {
  // expected-error-re@+1 {{[call] 'rev.call' passes %x to @through twice (arguments #0 and #1), and @through accumulates into both, but 'rev.take' at {{.*}}invalid.mlir:{{[0-9]+}}:3 holds its element across}}
  rev.call @through(%x, %x) : (memref<?xf64>, memref<?xf64>) -> ()
  rev.return
}

// -----

// array: an ancilla array must be freed, once, in the block that allocates it.
rev.func @array_never_freed(%y: f64, %n: index) {
  // expected-error@+1 {{'anc.array_alloc': [array] the ancilla array %a allocated here must be freed once, in the block that allocates it (anc.array_free); it is freed 0 time(s)}}
  %a = anc.array_alloc(%n) : memref<?xf64>
  rev.return %y, %n : f64, index
}

// -----

// array: freed in a loop it was not allocated in (each iteration would free it).
rev.func @array_freed_in_a_loop(%y: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{'anc.array_alloc': [array] the ancilla array %a allocated here must be freed once, in the block that allocates it (anc.array_free); it is freed 1 time(s) elsewhere}}
  %a = anc.array_alloc(%n) : memref<?xf64>
  rev.for %c0 to %n step %c1 : index () {
  ^bb0(%i: index):
    anc.array_free %a(%n) : memref<?xf64>
    rev.yield
  }
  rev.return %y, %n : f64, index
}
