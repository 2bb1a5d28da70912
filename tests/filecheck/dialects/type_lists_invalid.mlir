// RUN: rev-opt %s --verify-diagnostics --split-input-file

// A custom-form op given the wrong type list is told what its type list is
// and how the op is written, at the text it did not expect (xDSL read a
// block there and said only "in block definition").

rev.func @two_types(%y: ui8, %x: ui8) {
  // expected-error@+1 {{unexpected ',' after 'rev.add': its type list is ': <type of %target>', as in 'rev.add %target, %value : <type of %target>'}}
  %y1 = rev.add %y, %x : ui8, ui8
  rev.return %y1, %x : ui8, ui8
}

// -----

rev.func @arrow(%y: f64, %x: f64) {
  // expected-error@+1 {{unexpected '->' after 'rev.swap': its type list is ': <type of %lhs>', as in 'rev.swap %lhs, %rhs : <type of %lhs>'}}
  %y1, %x1 = rev.swap %y, %x : f64 -> f64
  rev.return %y1, %x1 : f64, f64
}

// -----

rev.func @function_type(%y: f64, %x: f64) {
  // expected-error@+1 {{Unexpected attribute (f64, f64) -> f64 (its type list is ': <type of %target>', as in 'rev.add %target, %value : <type of %target>')}}
  %y1 = rev.add %y, %x : (f64, f64) -> f64
  rev.return %y1, %x : f64, f64
}

// -----

rev.func @element_type(%m: memref<4xf64>, %i: index) {
  // expected-error@+1 {{unexpected ',' after 'rev.take': its type list is ': <type of %memref>', as in 'rev.take %memref[%indices] : <type of %memref>'}}
  %v = rev.take %m[%i] : memref<4xf64>, f64
  rev.put %v, %m[%i] : memref<4xf64>
  rev.return
}

// -----

rev.func @results(%y: f64) {
  // expected-error@+1 {{unexpected ',' after 'rev.call': its type list is ': (<types of %args>) -> <types of %res>', as in 'rev.call @callee(%args) : (<types of %args>) -> <types of %res>'}}
  %y1 = rev.call @results(%y) : (f64) -> f64, f64
  rev.return %y1 : f64
}

// -----

rev.func @stack(%y: f64) {
  %s = anc.stack_alloc : !anc.stack<f64>
  // expected-error@+1 {{unexpected ',' after 'anc.push': its type list is ': <type of %stack>', as in 'anc.push %stack, %value : <type of %stack>'}}
  anc.push %s, %y : !anc.stack<f64>, f64
  rev.return
}

// -----

rev.func @ancilla(%y: f64) {
  // expected-error@+1 {{unexpected ':' after 'anc.alloc': its type list is ': <type of %value>', as in 'anc.alloc %value : <type of %value>'}}
  %a = anc.alloc %y : f64 : f64
  rev.return %y : f64
}

// -----

rev.func @g(%y: f64) {
  rev.return %y : f64
}
// expected-error@+1 {{unexpected ':' after 'ad.adjoint': it is written 'ad.adjoint @function'}}
ad.adjoint @g : f64

// -----

// An optional part of the form is said to be optional, not bracketed.
rev.func @optional_part(%y: f64) {
  // expected-error@+1 {{unexpected '->' after 'rev.return': its type list is ': <types of %values>', as in 'rev.return %values : <types of %values>' ('%values : <types of %values>' may be left out)}}
  rev.return %y : f64 -> f64
}
