// RUN: rev-opt %s -p rev-strip-checks | filecheck %s --check-prefix=STRIP
// RUN: rev-opt %s -p rev-insert-checks | filecheck %s --check-prefix=INSERT
// RUN: rev-opt %s -p rev-strip-checks,rev-insert-checks | filecheck %s --check-prefix=INSERT
// RUN: rev-opt %s -p 'rev-strip-checks{functions=other}' | filecheck %s --check-prefix=ONLY

// Run-time reversibility checks are the absence of the `nocheck` attribute on
// the ops that have one: anc.free, rev.take, rev.if, rev.while,
// anc.copy_pop, anc.stack_free, and on the ops whose inverse has one
// (anc.alloc, rev.put, anc.stack_alloc, anc.copy_push: the attribute carries
// over when they are inverted).  rev-strip-checks marks all of them `nocheck`;
// rev-insert-checks removes it again, except where the verifier proved the
// check redundant (rev.take with constant indices).  No other op ever gets the
// attribute (the full bodies are checked line by line).

rev.func @checked(%x: f64, %n: i64, %m: memref<4xf64>, %i: index) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %x : f64
  %t2 = rev.sub %t1, %x : f64
  anc.free %t2, %zero : f64
  %e = rev.take %m[%i] {nocheck} : memref<4xf64>
  %e1 = rev.neg %e : f64
  rev.put %e1, %m[%i] : memref<4xf64>
  %c2 = arith.constant 2 : index
  %f = rev.take %m[%c2] : memref<4xf64>
  %f1 = rev.neg %f : f64
  rev.put %f1, %m[%c2] : memref<4xf64>
  %x1 = rev.if (%x) : f64 attributes {nocheck} pre {
  ^bb0(%a: f64):
    %gt = arith.cmpf ogt, %a, %zero : f64
    rev.cond %gt
  } then {
  ^bb0(%b: f64):
    %b1 = rev.neg %b : f64
    rev.yield %b1 : f64
  } else {
  ^bb0(%c: f64):
    rev.yield %c : f64
  }
  %izero = arith.constant 0 : i64
  %k0 = anc.alloc %izero : i64
  %k1 = rev.while (%k0) : i64 pre {
  ^bb0(%pk: i64):
    %lt = arith.cmpi slt, %pk, %n : i64
    rev.cond %lt
  } post {
  ^bb0(%qk: i64):
    %gtk = arith.cmpi sgt, %qk, %izero : i64
    rev.cond %gtk
  } do {
  ^bb0(%bk: i64):
    %bk1 = rev.inc %bk : i64
    rev.yield %bk1 : i64
  }
  %k2 = rev.sub %k1, %n : i64
  anc.free %k2, %izero {nocheck} : i64
  %s = anc.stack_alloc : !anc.stack<f64>
  anc.copy_push %s, %x1 : !anc.stack<f64>
  anc.copy_pop %s, %x1 : !anc.stack<f64>
  anc.stack_free %s : !anc.stack<f64>
  rev.return %x1, %n, %i : f64, i64, index
}

rev.func @other(%x: f64) {
  %zero = arith.constant 0.0 : f64
  %t = anc.alloc %zero : f64
  %t1 = rev.add %t, %x : f64
  %t2 = rev.sub %t1, %x : f64
  anc.free %t2, %zero : f64
  rev.return %x : f64
}

// Every checked op is marked nocheck, nothing else.
// STRIP-LABEL: rev.func @checked(%x: f64, %n: i64, %m: memref<4xf64>, %i: index) {
// STRIP-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// STRIP-NEXT: %[[T:.*]] = anc.alloc %[[ZERO]] {nocheck} : f64
// STRIP-NEXT: %[[T1:.*]] = rev.add %[[T]], %x : f64
// STRIP-NEXT: %[[T2:.*]] = rev.sub %[[T1]], %x : f64
// STRIP-NEXT: anc.free %[[T2]], %[[ZERO]] {nocheck} : f64
// STRIP-NEXT: %[[E:.*]] = rev.take %m[%i] {nocheck} : memref<4xf64>
// STRIP-NEXT: %[[E1:.*]] = rev.neg %[[E]] : f64
// STRIP-NEXT: rev.put %[[E1]], %m[%i] {nocheck} : memref<4xf64>
// STRIP-NEXT: %[[C2:.*]] = arith.constant 2 : index
// STRIP-NEXT: %[[F:.*]] = rev.take %m[%[[C2]]] {nocheck} : memref<4xf64>
// STRIP-NEXT: %[[F1:.*]] = rev.neg %[[F]] : f64
// STRIP-NEXT: rev.put %[[F1]], %m[%[[C2]]] {nocheck} : memref<4xf64>
// STRIP-NEXT: %[[X1:.*]] = rev.if (%x) : f64 attributes {nocheck} pre {
// STRIP-NEXT: ^bb0(%a: f64):
// STRIP-NEXT:   %[[GT:.*]] = arith.cmpf ogt, %a, %[[ZERO]] : f64
// STRIP-NEXT:   rev.cond %[[GT]]
// STRIP-NEXT: } then {
// STRIP-NEXT: ^bb0(%b: f64):
// STRIP-NEXT:   %[[B1:.*]] = rev.neg %b : f64
// STRIP-NEXT:   rev.yield %[[B1]] : f64
// STRIP-NEXT: } else {
// STRIP-NEXT: ^bb0(%c: f64):
// STRIP-NEXT:   rev.yield %c : f64
// STRIP-NEXT: }
// STRIP-NEXT: %[[IZERO:.*]] = arith.constant 0 : i64
// STRIP-NEXT: %[[K0:.*]] = anc.alloc %[[IZERO]] {nocheck} : i64
// STRIP-NEXT: %[[K1:.*]] = rev.while (%[[K0]]) : i64 attributes {nocheck} pre {
// STRIP-NEXT: ^bb0(%pk: i64):
// STRIP-NEXT:   %[[LT:.*]] = arith.cmpi slt, %pk, %n : i64
// STRIP-NEXT:   rev.cond %[[LT]]
// STRIP-NEXT: } post {
// STRIP-NEXT: ^bb0(%qk: i64):
// STRIP-NEXT:   %[[GTK:.*]] = arith.cmpi sgt, %qk, %[[IZERO]] : i64
// STRIP-NEXT:   rev.cond %[[GTK]]
// STRIP-NEXT: } do {
// STRIP-NEXT: ^bb0(%bk: i64):
// STRIP-NEXT:   %[[BK1:.*]] = rev.inc %bk : i64
// STRIP-NEXT:   rev.yield %[[BK1]] : i64
// STRIP-NEXT: }
// STRIP-NEXT: %[[K2:.*]] = rev.sub %[[K1]], %n : i64
// STRIP-NEXT: anc.free %[[K2]], %[[IZERO]] {nocheck} : i64
// STRIP-NEXT: %[[S:.*]] = anc.stack_alloc {nocheck} : !anc.stack<f64>
// STRIP-NEXT: anc.copy_push %[[S]], %[[X1]] {nocheck} : !anc.stack<f64>
// STRIP-NEXT: anc.copy_pop %[[S]], %[[X1]] {nocheck} : !anc.stack<f64>
// STRIP-NEXT: anc.stack_free %[[S]] {nocheck} : !anc.stack<f64>
// STRIP-NEXT: rev.return %[[X1]], %n, %i : f64, i64, index
// STRIP-NEXT: }
// STRIP-LABEL: rev.func @other(%x: f64) {
// STRIP-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// STRIP-NEXT: %[[T:.*]] = anc.alloc %[[ZERO]] {nocheck} : f64
// STRIP-NEXT: %[[T1:.*]] = rev.add %[[T]], %x : f64
// STRIP-NEXT: %[[T2:.*]] = rev.sub %[[T1]], %x : f64
// STRIP-NEXT: anc.free %[[T2]], %[[ZERO]] {nocheck} : f64
// STRIP-NEXT: rev.return %x : f64
// STRIP-NEXT: }

// Checks are back everywhere except on the rev.take with a constant index,
// which gets nocheck even though the input had none there.
// INSERT-LABEL: rev.func @checked(%x: f64, %n: i64, %m: memref<4xf64>, %i: index) {
// INSERT-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// INSERT-NEXT: %[[T:.*]] = anc.alloc %[[ZERO]] : f64
// INSERT-NEXT: %[[T1:.*]] = rev.add %[[T]], %x : f64
// INSERT-NEXT: %[[T2:.*]] = rev.sub %[[T1]], %x : f64
// INSERT-NEXT: anc.free %[[T2]], %[[ZERO]] : f64
// INSERT-NEXT: %[[E:.*]] = rev.take %m[%i] : memref<4xf64>
// INSERT-NEXT: %[[E1:.*]] = rev.neg %[[E]] : f64
// INSERT-NEXT: rev.put %[[E1]], %m[%i] : memref<4xf64>
// INSERT-NEXT: %[[C2:.*]] = arith.constant 2 : index
// INSERT-NEXT: %[[F:.*]] = rev.take %m[%[[C2]]] {nocheck} : memref<4xf64>
// INSERT-NEXT: %[[F1:.*]] = rev.neg %[[F]] : f64
// INSERT-NEXT: rev.put %[[F1]], %m[%[[C2]]] : memref<4xf64>
// INSERT-NEXT: %[[X1:.*]] = rev.if (%x) : f64 pre {
// INSERT-NEXT: ^bb0(%a: f64):
// INSERT-NEXT:   %[[GT:.*]] = arith.cmpf ogt, %a, %[[ZERO]] : f64
// INSERT-NEXT:   rev.cond %[[GT]]
// INSERT-NEXT: } then {
// INSERT-NEXT: ^bb0(%b: f64):
// INSERT-NEXT:   %[[B1:.*]] = rev.neg %b : f64
// INSERT-NEXT:   rev.yield %[[B1]] : f64
// INSERT-NEXT: } else {
// INSERT-NEXT: ^bb0(%c: f64):
// INSERT-NEXT:   rev.yield %c : f64
// INSERT-NEXT: }
// INSERT-NEXT: %[[IZERO:.*]] = arith.constant 0 : i64
// INSERT-NEXT: %[[K0:.*]] = anc.alloc %[[IZERO]] : i64
// INSERT-NEXT: %[[K1:.*]] = rev.while (%[[K0]]) : i64 pre {
// INSERT-NEXT: ^bb0(%pk: i64):
// INSERT-NEXT:   %[[LT:.*]] = arith.cmpi slt, %pk, %n : i64
// INSERT-NEXT:   rev.cond %[[LT]]
// INSERT-NEXT: } post {
// INSERT-NEXT: ^bb0(%qk: i64):
// INSERT-NEXT:   %[[GTK:.*]] = arith.cmpi sgt, %qk, %[[IZERO]] : i64
// INSERT-NEXT:   rev.cond %[[GTK]]
// INSERT-NEXT: } do {
// INSERT-NEXT: ^bb0(%bk: i64):
// INSERT-NEXT:   %[[BK1:.*]] = rev.inc %bk : i64
// INSERT-NEXT:   rev.yield %[[BK1]] : i64
// INSERT-NEXT: }
// INSERT-NEXT: %[[K2:.*]] = rev.sub %[[K1]], %n : i64
// INSERT-NEXT: anc.free %[[K2]], %[[IZERO]] : i64
// INSERT-NEXT: %[[S:.*]] = anc.stack_alloc : !anc.stack<f64>
// INSERT-NEXT: anc.copy_push %[[S]], %[[X1]] : !anc.stack<f64>
// INSERT-NEXT: anc.copy_pop %[[S]], %[[X1]] : !anc.stack<f64>
// INSERT-NEXT: anc.stack_free %[[S]] : !anc.stack<f64>
// INSERT-NEXT: rev.return %[[X1]], %n, %i : f64, i64, index
// INSERT-NEXT: }
// INSERT-LABEL: rev.func @other(%x: f64) {
// INSERT-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// INSERT-NEXT: %[[T:.*]] = anc.alloc %[[ZERO]] : f64
// INSERT-NEXT: %[[T1:.*]] = rev.add %[[T]], %x : f64
// INSERT-NEXT: %[[T2:.*]] = rev.sub %[[T1]], %x : f64
// INSERT-NEXT: anc.free %[[T2]], %[[ZERO]] : f64
// INSERT-NEXT: rev.return %x : f64
// INSERT-NEXT: }

// With functions=other only @other changes.
// ONLY-LABEL: rev.func @checked(%x: f64, %n: i64, %m: memref<4xf64>, %i: index) {
// ONLY:         anc.free %{{.*}}, %zero : f64
// ONLY:         rev.take %m[%i] {nocheck} : memref<4xf64>
// ONLY:         rev.take %m[%{{.*}}] : memref<4xf64>
// ONLY:         rev.if (%x) : f64 attributes {nocheck} pre {
// ONLY:         rev.while (%{{.*}}) : i64 pre {
// ONLY:         anc.free %{{.*}}, %izero {nocheck} : i64
// ONLY:         anc.copy_pop %{{.*}}, %{{.*}} : !anc.stack<f64>
// ONLY-NEXT:    anc.stack_free %{{.*}} : !anc.stack<f64>
// ONLY-LABEL: rev.func @other(%x: f64) {
// ONLY:         anc.free %{{.*}}, %zero {nocheck} : f64
