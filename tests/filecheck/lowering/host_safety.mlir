// RUN: rev-opt %s -p rev-lower-to-std,rev-host-safety | filecheck %s

// A call within a cycle of the call graph checks the stack first, at the
// call's location, and the first such call of a block polls for Ctrl-C
// before (a recursion without loops runs as long as a loop); a loop body
// polls for Ctrl-C first. The check names the op the interpreter runs, the
// rev.call, not the func.call it is lowered to.
// CHECK: rev.checks = [{{.*}}"ExecutionError|rev.call|{{.*}}host_safety.mlir:21:5|down||calls nest too deeply: the recursion would exhaust the stack"]
rev.func @down(%y: f64, %n: i64) {
  %y_1, %n_1 = rev.if (%y, %n) : f64, i64 pre {
  ^bb0(%y_2: f64, %n_2: i64):
    %0 = arith.constant 0 : i64
    %1 = arith.cmpi sgt, %n_2, %0 : i64
    rev.cond %1
  } then {
  ^bb0(%y_3: f64, %n_3: i64):
    %2 = arith.constant 1.000000e+00 : f64
    %y_4 = rev.add %y_3, %2 : f64
    %3 = arith.constant 1 : i64
    %n_4 = rev.sub %n_3, %3 : i64
    %y_5, %n_5 = rev.call @down(%y_4, %n_4) : (f64, i64) -> (f64, i64)
    %4 = arith.constant 1 : i64
    %n_6 = rev.add %n_5, %4 : i64
    rev.yield %y_5, %n_6 : f64, i64
  } else {
  ^bb0(%y_6: f64, %n_7: i64):
    rev.yield %y_6, %n_7 : f64, i64
  }
  rev.return %y_1, %n_1 : f64, i64
}

// The record's address is looked up once, on entry.
// CHECK-LABEL: func.func @down(
// CHECK-NOT:     revmlir.interrupt_count
// CHECK:         %[[RECORD:.*]] = func.call @revmlir.record(%err) : (memref<6xi64>) -> i64
// CHECK-NOT:     revmlir.interrupt_count
// CHECK:         scf.if
// CHECK:         %[[COUNT:.*]] = func.call @revmlir.interrupt_count(%err) : (memref<6xi64>) -> i64
// CHECK-NEXT:    %[[SEEN:.*]] = func.call @revmlir.interrupts_seen(%err) : (memref<6xi64>) -> i64
// CHECK-NEXT:    func.call @revmlir.poll(%err, %[[COUNT]], %[[SEEN]]) : (memref<6xi64>, i64, i64) -> ()
// CHECK-NEXT:    %[[OK:.*]] = func.call @revmlir.stack_ok(%err, %[[RECORD]]) : (memref<6xi64>, i64) -> i1
// CHECK:         scf.if
// CHECK:           func.call @revmlir.report(%err,
// CHECK:         func.call @down(
// CHECK-NEXT:    func.call @revmlir.call_returned(%err, %[[RECORD]]) : (memref<6xi64>, i64) -> ()

rev.func @spin(%y: f64, %n: index) {
  %0 = arith.constant 0 : index
  %1 = arith.constant 1 : index
  %y_1 = rev.for %0 to %n step %1 : index (%y) : f64 {
  ^bb0(%i: index, %y_2: f64):
    %5 = arith.constant 1.000000e+00 : f64
    %y_3 = rev.add %y_2, %5 : f64
    rev.yield %y_3 : f64
  }
  rev.return %y_1, %n : f64, index
}

// CHECK-LABEL: func.func @spin(
// The function's count of for-loop iterations, a word of its frame:
// CHECK-NEXT:    %[[ITERATIONS:.*]] = memref.alloca() : memref<1xi64>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[WORD:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %[[ZERO]], %[[ITERATIONS]][%[[WORD]]] : memref<1xi64>
// CHECK-NEXT:    %[[COUNT:.*]] = func.call @revmlir.interrupt_count(%err) : (memref<6xi64>) -> i64
// CHECK-NEXT:    %[[SEEN:.*]] = func.call @revmlir.interrupts_seen(%err) : (memref<6xi64>) -> i64
// CHECK-NOT:     revmlir.stack_ok
// A for loop adds one to the count and polls where it reaches a multiple
// of 2^16.
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NEXT:      %[[AT:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[BEFORE:.*]] = memref.load %[[ITERATIONS]][%[[AT]]] : memref<1xi64>
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[AFTER:.*]] = arith.addi %[[BEFORE]], %[[ONE]] : i64
// CHECK-NEXT:      memref.store %[[AFTER]], %[[ITERATIONS]][%[[AT]]] : memref<1xi64>
// CHECK-NEXT:      %[[MASK:.*]] = arith.constant 65535 : i64
// CHECK-NEXT:      %[[LOW:.*]] = arith.andi %[[AFTER]], %[[MASK]] : i64
// CHECK-NEXT:      %[[NONE:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[DUE:.*]] = arith.cmpi eq, %[[LOW]], %[[NONE]] : i64
// CHECK-NEXT:      scf.if %[[DUE]] {
// CHECK-NEXT:        func.call @revmlir.poll(%err, %[[COUNT]], %[[SEEN]]) : (memref<6xi64>, i64, i64) -> ()
// CHECK-NEXT:      }
// CHECK-NEXT:      arith.constant
// CHECK-NEXT:      arith.addf

rev.func @nest(%y: f64, %n: index, %m: i16) {
  %0 = arith.constant 0 : index
  %1 = arith.constant 1 : index
  %y_1 = rev.for %0 to %n step %1 : index (%y) : f64 {
  ^bb0(%i: index, %y_2: f64):
    %z = arith.constant 0 : i16
    %o = arith.constant 1 : i16
    %y_3 = rev.for %z to %m step %o : i16 (%y_2) : f64 {
    ^bb1(%j: i16, %y_4: f64):
      %5 = arith.constant 1.000000e+00 : f64
      %y_5 = rev.add %y_4, %5 : f64
      rev.yield %y_5 : f64
    }
    rev.yield %y_3 : f64
  }
  rev.return %y_1, %n, %m : f64, index, i16
}

// Loops of any type count into the one count: a nest of loops too short to
// reach 2^16 iterations each (and an i16 loop, which cannot) polls once
// per 2^16 iterations of all of them.
// CHECK-LABEL: func.func @nest(
// CHECK-NEXT:    %[[ITERATIONS:.*]] = memref.alloca() : memref<1xi64>
// CHECK:         scf.for %i = %{{.*}} to %n step %{{.*}} iter_args
// CHECK-NEXT:      %[[AT:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %{{.*}} = memref.load %[[ITERATIONS]][%[[AT]]] : memref<1xi64>
// CHECK:           func.call @revmlir.poll(
// CHECK:           scf.for %j = %z to %m step %o iter_args(%{{.*}}) -> (f64) : i16 {
// CHECK-NEXT:        %[[AT2:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %{{.*}} = memref.load %[[ITERATIONS]][%[[AT2]]] : memref<1xi64>
// CHECK:             func.call @revmlir.poll(
// CHECK:             arith.addf

rev.func @short(%y: f64) {
  %0 = arith.constant 0 : index
  %1 = arith.constant 1 : index
  %c64 = arith.constant 64 : i64
  %64 = arith.index_cast %c64 : i64 to index
  %y_1 = rev.for %0 to %64 step %1 : index (%y) : f64 {
  ^bb0(%i: index, %y_2: f64):
    %5 = arith.constant 1.000000e+00 : f64
    %y_3 = rev.add %y_2, %5 : f64
    rev.yield %y_3 : f64
  }
  rev.return %y_1 : f64
}

// A for loop of at most 64 iterations of straight code (constant bounds of
// index or i64, also an i64 constant cast to index as the Python frontend
// writes range(64); no loop, branch or call inside) ends soon whatever it
// does: it neither counts nor polls, and a function with no other loop
// asks for no interrupt count.
// CHECK-LABEL: func.func @short(
// CHECK-NOT:     revmlir.interrupt_count
// CHECK-NOT:     memref.alloca
// CHECK:         scf.for
// CHECK-NOT:       revmlir.poll
// CHECK:           arith.addf
// CHECK:         func.return

rev.func @around_short(%y: f64, %n: index, %m: i16) {
  %0 = arith.constant 0 : index
  %1 = arith.constant 1 : index
  %65 = arith.constant 65 : index
  %y_1 = rev.for %0 to %n step %1 : index (%y) : f64 {
  ^bb0(%i: index, %y_2: f64):
    %y_3 = rev.for %0 to %65 step %1 : index (%y_2) : f64 {
    ^bb1(%j: index, %y_4: f64):
      %z = arith.constant 0 : i16
      %o = arith.constant 1 : i16
      %e = arith.constant 2 : i16
      %y_5 = rev.for %z to %e step %o : i16 (%y_4) : f64 {
      ^bb2(%k: i16, %y_6: f64):
        %5 = arith.constant 1.000000e+00 : f64
        %y_7 = rev.add %y_6, %5 : f64
        rev.yield %y_7 : f64
      }
      rev.yield %y_5 : f64
    }
    rev.yield %y_3 : f64
  }
  rev.return %y_1, %n, %m : f64, index, i16
}

// A loop of 65 iterations counts and polls, as does a loop around a short
// one; an i16 loop of constant bounds counts and polls too (the rule reads
// constants of index and i64 only).
// CHECK-LABEL: func.func @around_short(
// CHECK:         scf.for %i = {{.*}} iter_args
// CHECK:           func.call @revmlir.poll(
// CHECK:           scf.for %j = {{.*}} iter_args
// CHECK:             func.call @revmlir.poll(
// CHECK:             scf.for %k = {{.*}} : i16 {
// CHECK:               func.call @revmlir.poll(
// CHECK:               arith.addf

// The checks' functions do nothing in std IR.
// CHECK-LABEL: func.func private @revmlir.interrupt_count(%error: memref<6xi64>) -> i64 {
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : i64
// CHECK-LABEL: func.func private @revmlir.interrupts_seen(%error: memref<6xi64>) -> i64 {
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : i64
// CHECK-LABEL: func.func private @revmlir.poll(%error: memref<6xi64>, %{{.*}}: i64, %{{.*}}: i64) {
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @revmlir.record(%error: memref<6xi64>) -> i64 {
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : i64
// CHECK-LABEL: func.func private @revmlir.stack_ok(%error: memref<6xi64>, %{{.*}}: i64) -> i1 {
// CHECK-NEXT:    %{{.*}} = arith.constant true
