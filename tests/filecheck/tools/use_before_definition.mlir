// RUN: rev-opt %s -p rev-verify --verify-diagnostics --split-input-file
// RUN: rev-opt %s -p rev-lower-to-std,convert-std-to-llvm --verify-diagnostics --split-input-file

// A value used before its definition is a located diagnostic in every form.

// An operand of a region op named like its region's block argument: the
// region defines it, so it does not exist where the op uses it (xDSL's parser
// kept a placeholder there, which ended in a traceback).
rev.func @own_argument(%n: index) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'rev.for' uses %i, which is defined inside its own region (line 13); an op can only use values defined before it}}
  rev.for %i to %n step %c1 : index () {
  ^bb0(%i: index):
    rev.yield
  }
  rev.return %n : index
}

// -----

// The same with an op's result in the region.
rev.func @own_result(%n: index) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'rev.for' uses %x, which is defined inside its own region (line 26); an op can only use values defined before it}}
  rev.for %c1 to %x step %c1 : index () {
    %x = arith.constant 1 : index
    rev.yield
  }
  rev.return %n : index
}

// -----

// The generic form parses the regions before it resolves the operands.
rev.func @generic(%n: index) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{use of undefined value %i; %i is defined at line 39, in a region that does not contain this use}}
  "rev.for"(%c1, %i, %c1) ({
  ^bb0(%i: index):
    rev.yield
  }) : (index, index, index) -> ()
  rev.return %n : index
}

// -----

// A value of a sibling region.
rev.func @sibling(%n: index, %c: i1) {
  scf.if %c {
    %b = arith.constant 1 : index
  } else {
    // expected-error @+1 {{use of undefined value %b; %b is defined at line 50, in a region that does not contain this use}}
    %d = arith.addi %b, %n : index
  }
  rev.return %n : index
}

// -----

// An op using a value that a later op of its block defines.
rev.func @later(%n: index) {
  // expected-error-re @+1 {{[dominance] 'arith.addi' uses %b before 'arith.constant' at {{.*}} defines it; define a value before its uses}}
  %a = arith.addi %b, %n : index
  %b = arith.constant 1 : index
  rev.return %a : index
}

// -----

// An op using its own result.
rev.func @itself(%n: index) {
  // expected-error-re @+1 {{[dominance] 'arith.addi' uses %a, a result of itself}}
  %a = arith.addi %a, %n : index
  rev.return %a : index
}

// -----

// A value of a nested region used after it.
rev.func @nested(%n: index, %c: i1) {
  scf.if %c {
    %b = arith.constant 1 : index
  }
  // expected-error @+1 {{use of undefined value %b; %b is defined at line 82, in a region that does not contain this use}}
  %a = arith.addi %b, %n : index
  rev.return %a : index
}
