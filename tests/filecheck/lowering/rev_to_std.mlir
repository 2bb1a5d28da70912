// RUN: rev-opt %s -p rev-lower-to-std | filecheck %s

// State becomes plain SSA values; every function gets the error slot. An
// element's index is checked against its axis (one unsigned compare), and a
// failed check calls the module's report with its id and values, which
// stores them in the slot and leaves the run.
// CHECK: builtin.module attributes {rev.checks = ["ExecutionError|rev.take|{{.*}}rev_to_std.mlir:[[# @LINE + 30]]:3|instructions|i64,i64|index {0} is out of bounds for axis 0 with size {1}", "InvertibilityError|anc.free|{{.*}}rev_to_std.mlir:[[# @LINE + 37]]:3|instructions|f64,f64|ancilla freed holding {0}, expected {1}"], rev.lowered}
// CHECK-LABEL: func.func @instructions(%y: f64, %a: f64, %m: memref<4xf64>, %i: index, %err: memref<6xi64>) -> (f64, f64, index)
// CHECK-NEXT:    %t = arith.mulf %a, %a : f64
// CHECK-NEXT:    %y1 = arith.addf %y, %t : f64
// CHECK-NEXT:    %y2 = arith.subf %y1, %a : f64
// CHECK-NEXT:    %[[AXIS:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[SIZE:.*]] = memref.dim %m, %[[AXIS]] : memref<4xf64>
// CHECK-NEXT:    %[[INSIDE:.*]] = arith.cmpi ult, %i, %[[SIZE]] : index
// CHECK-NEXT:    %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    %[[OUTSIDE:.*]] = arith.xori %[[INSIDE]], %[[TRUE]] : i1
// CHECK-NEXT:    scf.if %[[OUTSIDE]] {
// CHECK-NEXT:      %[[ID:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[INDEX:.*]] = arith.index_cast %i : index to i64
// CHECK-NEXT:      %[[EXTENT:.*]] = arith.index_cast %[[SIZE]] : index to i64
// CHECK-NEXT:      %[[UNUSED:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      func.call @revmlir.report(%err, %[[ID]], %[[INDEX]], %[[EXTENT]], %[[UNUSED]], %[[UNUSED]]) : (memref<6xi64>, i64, i64, i64, i64, i64) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    %e = memref.load %m[%i] : memref<4xf64>
// CHECK-NEXT:    %e1 = arith.addf %e, %y2 : f64
// CHECK-NEXT:    memref.store %e1, %m[%i] : memref<4xf64>
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %n1 = arith.addf %zero, %a : f64
// CHECK-NEXT:    %n2 = arith.subf %n1, %a : f64
// CHECK:         arith.cmpf ole
// CHECK:         scf.if
// CHECK:         func.return %y2, %a, %i : f64, f64, index
rev.func @instructions(%y: f64, %a: f64, %m: memref<4xf64>, %i: index) {
  %t = arith.mulf %a, %a : f64
  %y1 = rev.add %y, %t : f64
  %y2 = rev.sub %y1, %a : f64
  %e = rev.take %m[%i] : memref<4xf64>
  %e1 = rev.add %e, %y2 : f64
  rev.put %e1, %m[%i] : memref<4xf64>
  %zero = arith.constant 0.0 : f64
  %n = anc.alloc %zero : f64
  %n1 = rev.add %n, %a : f64
  %n2 = rev.sub %n1, %a : f64
  anc.free %n2, %zero : f64
  rev.return %y2, %a, %i : f64, f64, index
}

// Uncalled functions get a lowered inverse; the uncall becomes a call of it.
// CHECK-LABEL: func.func @caller(%x: f64, %y: f64, %err: memref<6xi64>) -> (f64, f64)
// CHECK-NEXT:    %{{.*}}, %{{.*}} = func.call @accumulate.inv(%x, %y, %err) {rev.source_op = "rev.uncall"} : (f64, f64, memref<6xi64>) -> (f64, f64)
rev.func @caller(%x: f64, %y: f64) {
  %x1, %y1 = rev.uncall @accumulate(%x, %y) : (f64, f64) -> (f64, f64)
  rev.return %x1, %y1 : f64, f64
}
rev.func @accumulate(%x: f64, %y: f64) {
  %x1 = rev.add %x, %y : f64
  rev.return %x1, %y : f64, f64
}
// CHECK-LABEL: func.func @accumulate.inv(%x: f64, %y: f64, %err: memref<6xi64>) -> (f64, f64)
// CHECK-NEXT:    %[[X:.*]] = arith.subf %x, %y : f64
// CHECK-NEXT:    func.return %[[X]], %y : f64, f64

// The module's report stores the check's words in the slot, in order, and
// leaves the run; std IR's revmlir.fail aborts (native code jumps back).
// CHECK-LABEL: func.func private @revmlir.report(%error: memref<6xi64>, %check: i64, %word: i64, %word_1: i64, %word_2: i64, %word_3: i64)
// CHECK-NEXT:    %[[W0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %check, %error[%[[W0]]] : memref<6xi64>
// CHECK-NEXT:    %[[W1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    memref.store %word, %error[%[[W1]]] : memref<6xi64>
// CHECK-NEXT:    %[[W2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    memref.store %word_1, %error[%[[W2]]] : memref<6xi64>
// CHECK-NEXT:    %[[W3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    memref.store %word_2, %error[%[[W3]]] : memref<6xi64>
// CHECK-NEXT:    %[[W4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    memref.store %word_3, %error[%[[W4]]] : memref<6xi64>
// CHECK-NEXT:    func.call @revmlir.fail(%error) : (memref<6xi64>) -> ()
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @revmlir.fail(%error: memref<6xi64>)
// CHECK-NEXT:    llvm.call @abort() : () -> ()
