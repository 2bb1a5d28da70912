// RUN: rev-opt %s --verify-diagnostics --split-input-file

// Errors found by the ops' own verifiers (and by the parser of their custom
// forms), one per chunk, each reported at the line and column of the op in
// the whole file.

// rev.return must return every scalar argument...
rev.func @return_types(%x: f64, %n: i64) {
  // expected-error@+1 {{'rev.return' must return the final versions of every scalar argument of @return_types: expected (f64, i64), got (f64)}}
  rev.return %x : f64
}

// -----

// ...in order.
rev.func @return_order(%x: f64, %n: i64) {
  // expected-error@+1 {{'rev.return' must return the final versions of every scalar argument of @return_order: expected (f64, i64), got (i64, f64)}}
  rev.return %n, %x : i64, f64
}

// -----

// A rev.func returns exactly its scalar arguments: not more...
// expected-error@+1 {{'rev.func': @returns_more must return exactly its scalar arguments}}
"rev.func"() <{sym_name = "returns_more", function_type = (f64) -> (f64, f64)}> ({
^bb0(%x: f64):
  "rev.return"(%x, %x) : (f64, f64) -> ()
}) : () -> ()

// -----

// ...and no references.
// expected-error@+1 {{'rev.func': @returns_memref must return exactly its scalar arguments}}
"rev.func"() <{sym_name = "returns_memref", function_type = (memref<4xf64>) -> memref<4xf64>}> ({
^bb0(%m: memref<4xf64>):
  "rev.return"(%m) : (memref<4xf64>) -> ()
}) : () -> ()

// -----

// Arguments are scalars, memrefs or stacks.
// expected-error@+1 {{'rev.func': argument #0 of @bad_argument has type tensor<4xf64>; reversible functions take scalars, memrefs and stacks}}
rev.func @bad_argument(%t: tensor<4xf64>) {
  rev.return
}

// -----

// A state-carrying region takes the state types as block arguments...
rev.func @region_signature(%x: f64) {
  // expected-error@+1 {{'rev.inv' body region must take (f64), got (i64)}}
  %x1 = rev.inv (%x) : f64 {
  ^bb0(%a: i64):
    rev.yield %a : i64
  }
  rev.return %x1 : f64
}

// -----

// ...and yields them back.
rev.func @yield_types(%x: f64, %n: i64) {
  // expected-error@+1 {{'rev.inv' body region must yield (f64), got (i64)}}
  %x1 = rev.inv (%x) : f64 {
  ^bb0(%a: f64):
    rev.yield %n : i64
  }
  rev.return %x1, %n : f64, i64
}

// -----

// The branches of rev.if take the state too.
rev.func @branch_signature(%x: f64, %n: i64) {
  // expected-error@+1 {{'rev.if' else region must take (f64, i64), got (f64)}}
  %x1, %n1 = rev.if (%x, %n) : f64, i64 pre {
  ^bb0(%p: f64, %q: i64):
    %t = arith.constant true
    rev.cond %t
  } then {
  ^bb0(%a: f64, %b: i64):
    rev.yield %a, %b : f64, i64
  } else {
  ^bb0(%c: f64):
    rev.yield %c, %n : f64, i64
  }
  rev.return %x1, %n1 : f64, i64
}

// -----

// A condition region ends with rev.cond.
rev.func @pre_without_cond(%x: f64) {
  // expected-error@+1 {{'rev.if' pre condition must end with 'rev.cond'}}
  %x1 = rev.if (%x) : f64 pre {
  ^bb0(%p: f64):
    rev.yield %p : f64
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

// rev.for bodies take the induction variable, then the state.
rev.func @for_signature(%x: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{'rev.for' body region must take (index, f64), got (f64)}}
  %x1 = rev.for %c0 to %n step %c1 : index (%x) : f64 {
  ^bb0(%a: f64):
    rev.yield %a : f64
  }
  rev.return %x1, %n : f64, index
}

// -----

// A routine's compute region yields the state, then what it computes.
rev.func @routine_yield(%x: f64) {
  // expected-error@+1 {{'rev.routine' compute region must yield the state followed by the values it computes}}
  %x1 = rev.routine (%x) : f64 compute {
  ^bb0(%a: f64):
    rev.yield
  } do {
  ^bb0(%b: f64):
    rev.yield %b : f64
  }
  rev.return %x1 : f64
}

// -----

// rev.take needs one index per dimension.
rev.func @take_rank(%m: memref<4x4xf64>, %i: index) {
  // expected-error@+1 {{'rev.take' expects 2 indices for memref<4x4xf64>, got 1}}
  %e = rev.take %m[%i] : memref<4x4xf64>
  rev.put %e, %m[%i] : memref<4x4xf64>
  rev.return %i : index
}

// -----

// A call returns the types of its scalar arguments.
rev.func @call_results(%x: f64, %m: memref<4xf64>) {
  // expected-error@+1 {{'rev.call' must return the types of its scalar arguments (f64)}}
  %x1, %y = "rev.call"(%x, %m) <{callee = @call_results}> : (f64, memref<4xf64>) -> (f64, f64)
  rev.return %x1 : f64
}

// -----

// rev.safe modes are forward, inverse and both.
rev.func @safe_mode(%x: f64) {
  // expected-error@+1 {{'rev.safe' mode must be one of forward, inverse, both, got 'sideways'}}
  "rev.safe"() <{when = "sideways"}> ({
    %y = arith.addf %x, %x : f64
  }) : () -> ()
  rev.return %x : f64
}

// -----

// rev.return outside a rev.func.
func.func @not_a_rev_func(%x: f64) -> f64 {
  // expected-error@+1 {{'rev.return' must be inside a 'rev.func'}}
  "rev.return"(%x) : (f64) -> ()
}

// -----

// Operand types are checked while parsing the custom form.
rev.func @type_mismatch(%x: f64, %n: i64) {
  // expected-error@+1 {{operand is used with type f64, but has been previously used or defined with type i64}}
  %x1 = rev.add %x, %n : f64
  rev.return %x1, %n : f64, i64
}

// -----

rev.func @log_type(%x: f64) {
  // expected-error@+1 {{f64 should be of base attribute rev.log}}
  %y = rev.from_log %x : f64
  rev.return %x : f64
}

// -----

// anc.array_alloc takes one size per dynamic dimension...
rev.func @array_sizes(%n: index) {
  // expected-error@+1 {{'anc.array_alloc' takes one size per dynamic dimension of memref<?x?xf64>: 2, got 1}}
  %a = anc.array_alloc(%n) : memref<?x?xf64>
  anc.array_free %a(%n) : memref<?x?xf64>
  rev.return %n : index
}

// -----

// ...and holds integers or floats.
rev.func @array_of_complex(%n: index) {
  // expected-error@+1 {{'anc.array_alloc': ancilla arrays hold integers or floats, not complex<f64>}}
  %a = anc.array_alloc(%n) : memref<?xcomplex<f64>>
  anc.array_free %a(%n) : memref<?xcomplex<f64>>
  rev.return %n : index
}

// -----

// A parallel loop's iterations are independent: it carries no state...
rev.func @parallel_state(%s: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{'rev.for parallel' carries no state: its iterations are independent}}
  %s1 = rev.for parallel %c0 to %n step %c1 : index (%s) : f64 {
  ^bb0(%i: index, %t: f64):
    rev.yield %t : f64
  }
  rev.return %s1, %n : f64, index
}

// -----

// ...and runs over index, as scf.parallel does.
rev.func @parallel_i64(%n: i64) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  // expected-error@+1 {{'rev.for parallel' runs over index, not i64}}
  rev.for parallel %c0 to %n step %c1 : i64 () {
  ^bb0(%i: i64):
    rev.yield
  }
  rev.return %n : i64
}

// -----

func.func @atomic_kind(%m: memref<4xf64>, %v: f64, %j: index) {
  // expected-error@+1 {{unknown atomic_rmw kind 'addx' (one of addf, addi, assign, maximumf, maxs, maxu, minimumf, mins, minu, mulf, muli, ori, andi, maxnumf, minnumf)}}
  %old = memref.atomic_rmw addx %v, %m[%j] : (f64, memref<4xf64>) -> f64
  func.return
}

// -----

// A snapshot record holds a stack's live part last: its length, stored on
// top, sizes the record.
rev.func @record_stack_first(%x: f64, %s: !anc.stack<f64>) attributes {rev.forgetful} {
  %store = anc.stack_alloc : !anc.stack<f64>
  // expected-error@+1 {{'anc.snapshot' holds a stack only as its last value}}
  anc.snapshot %store, %s, %x : !anc.stack<f64>, !anc.stack<f64>, f64
  anc.stack_free %store : !anc.stack<f64>
  rev.return %x : f64
}

// -----

// A stack whose elements cannot hold its length exactly is not recorded.
rev.func @record_stack_narrow(%s: !anc.stack<i1>) attributes {rev.forgetful} {
  %store = anc.stack_alloc : !anc.stack<i1>
  // expected-error@+1 {{'anc.snapshot' cannot hold a stack of i1: its length is stored as an element, so the element type is index, i64 or f64}}
  anc.snapshot %store, %s : !anc.stack<i1>, !anc.stack<i1>
  anc.stack_free %store : !anc.stack<i1>
  rev.return
}

// -----

// An operand or result that fails the op's type constraint: the message
// says why, which xDSL puts on the line after "does not verify:".
rev.func @add_mistyped(%y: f64) {
  %c = arith.constant 1 : i64
  // expected-error@+1 {{'rev.add': operand 'value' at position 1 does not verify: attribute f64 expected from variable 'T', but got i64}}
  %y1 = "rev.add"(%y, %c) : (f64, i64) -> f64
  rev.return %y1 : f64
}

// -----

rev.func @neg_mistyped(%y: f64) {
  // expected-error@+1 {{'rev.neg': result 'result' at position 0 does not verify: attribute f64 expected from variable 'T', but got i64}}
  %y1 = "rev.neg"(%y) : (f64) -> i64
  rev.return %y1 : i64
}

// -----

// An array of arrays is no argument any engine takes.
// expected-error@+1 {{'rev.func': argument #0 of @array_of_arrays has type memref<2xmemref<2xf64>>; a reversible function's arrays hold scalars (no engine takes an array of arrays)}}
rev.func @array_of_arrays(%m: memref<2xmemref<2xf64>>, %x: f64) {
  rev.return %x : f64
}
